"""Stage 4 of the pipeline: effective settings, the cross-engine view rules read.

A :class:`Setting` is what a server will run with for one concern (``spec_method``,
``prefix_caching``, ...), where that value came from and which token set it. Engines fill these in
(:meth:`mtplint.engines.Engine.effective`); the names are the same for every engine.
"""

from __future__ import annotations

from mtplint.records import Record
from mtplint.source import Span

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: how a setting got its value
ORIGINS = ("explicit", "config-file", "env", "default", "inferred")

#: the normalised keys, with what they mean (documented in ``mtplint inspect --help`` and the README)
KEYS: dict[str, str] = {
    "model": "model weights served (repo id or path)",
    "spec_method": "speculative method, normalised: mtp, eagle, eagle3, draft_model, ngram, dflash, ... (None: off)",
    "spec_tokens": "draft tokens per step k (vLLM num_speculative_tokens, SGLang num_steps, llama.cpp n_max)",
    "spec_model": "draft model, when one is given",
    "spec_topk": "SGLang --speculative-eagle-topk",
    "spec_draft_tokens": "SGLang --speculative-num-draft-tokens",
    "prefix_caching": "prefix (radix) cache on",
    "chunked_prefill": "vLLM chunked prefill on",
    "kv_cache_dtype": "KV cache dtype",
    "memory_fraction": "fraction of GPU memory the engine may use",
    "max_concurrency": "maximum concurrent sequences (vLLM max_num_seqs, SGLang max_running_requests, llama.cpp -np)",
    "tensor_parallel": "tensor-parallel size",
    "cuda_graphs": "CUDA graphs for decode on",
    "quantization": "weight quantization",
    "max_model_len": "context length",
    "spec_v2": "SGLang spec V2 worker / overlap scheduling with speculation",
    "mamba_strategy": "SGLang mamba radix-cache strategy",
    "gpu": "GPU model and count",
}


class Setting(Record):
    __slots__ = ("value", "origin", "span", "unresolved", "extra")
    value: Any
    origin: str
    span: Span | None
    unresolved: tuple[str, ...]
    extra: dict[str, Any]

    def __init__(self, value: Any, origin: str, span: Span | None = None, unresolved: tuple[str, ...] = (),
                 extra: dict[str, Any] | None = None) -> None:
        self.value = value
        self.origin = origin
        self.span = span
        self.unresolved = unresolved
        self.extra = extra if extra is not None else {}

    def to_json(self, launch_file: str | None = None) -> dict[str, Any]:
        data: dict[str, Any] = {"value": self.value, "origin": self.origin}
        data.update(self.extra)
        if self.unresolved:
            data["unresolved"] = list(self.unresolved)
        if self.span is not None:
            if launch_file is not None and self.span.file != launch_file:
                data["file"] = self.span.file
            data["line"] = self.span.line
            data["column"] = self.span.column
        return data


def turboquant_kv(kv_cache_dtype: object) -> bool:
    """Whether a KV-cache dtype is one of vLLM's TurboQuant presets: the ``turboquant_*`` values of
    ``CacheDType`` (``vllm/config/cache.py``), which loop with any speculative method (MTP101)."""
    return isinstance(kv_cache_dtype, str) and kv_cache_dtype.lower().startswith("turboquant_")


def default_ranges(setting: Setting) -> list[tuple[str, Any]]:
    """A version-dependent default's value per range of versions, as the engine model recorded it
    (``[{"versions": "0.5.4..0.5.9", "value": false}, ...]`` or ``{"before b9235": 16, ...}``)."""
    recorded = setting.extra.get("version_dependent")
    if isinstance(recorded, list):
        return [(str(entry["versions"]), entry["value"]) for entry in recorded if isinstance(entry, dict)]
    if isinstance(recorded, dict):
        return [(str(versions), value) for versions, value in recorded.items()]
    reason = setting.extra.get("reason")
    return [(str(reason), setting.value)] if reason else []


def explicit_origin(origin: str) -> bool:
    return origin in ("explicit", "config-file", "env")


def unknown(setting: Setting, origin: str, span: Span | None, because: tuple[str, ...]) -> Setting:
    """``setting`` (a default or a value inferred from defaults) made unknown: something mtplint
    cannot read may set it (an unread ``--config`` file, an unread ``--env-file``). The value is
    ``None`` and marked unresolved, naming what may set it; the engine's default is kept under
    ``default``, for the reader, not as the answer."""
    extra = {**setting.extra, "default": setting.value}
    return Setting(None, origin, span, because, extra)


def open_to_config(settings: dict[str, Setting], unread: list[tuple[str, Span | None]],
                   keep: tuple[str, ...] = ()) -> dict[str, Setting]:
    """The effective settings of a launch whose ``--config`` file was not read (``unread``: how it
    is written and its span). A config file can set any option the command line does not: every
    default and every value inferred from defaults is then unknown -- the command line's own
    settings stay, since the engines apply the command line over the file. ``keep``: settings no
    config file can set (the GPU; a setting the engine reads only from the environment)."""
    if not unread:
        return settings
    because = tuple(written for written, _ in unread)
    span = unread[0][1]
    return {name: unknown(setting, "config-file", span, because)
            if setting.origin in ("default", "inferred") and not setting.unresolved and name not in ("gpu", *keep)
            else setting
            for name, setting in settings.items()}
