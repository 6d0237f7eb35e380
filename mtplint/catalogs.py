"""The GPU and model catalogs a configuration sees: the shipped ones with its own entries on top.

A :class:`Catalogs` is part of a run's settings (:attr:`mtplint.pipeline.Options.catalogs`, built
by :mod:`mtplint.config` from ``[[tool.mtplint.gpus]]`` / ``[[tool.mtplint.models]]``) and reaches
every launch it governs (:attr:`mtplint.pipeline.LaunchReport.catalogs`), so files governed by
different configurations are looked up in their own catalogs within one run. :data:`SHIPPED` is the
catalogs of a run without configured entries.

The entries are plain data, validated against the item schemas of the shipped catalogs
(``schemas/gpus.schema.json#/$defs/gpu``, ``schemas/models.schema.json#/$defs/model``) by
:mod:`mtplint.config`. A configured entry with a shipped id replaces the shipped one; a configured
model's patterns are tried before every shipped pattern. Lookups are remembered per instance: a tree
names the same few GPUs and models many times.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mtplint.hardware import Gpu, find_gpu_in, gpu_from_entry, shipped_gpu_entries, split_gpu_spec
from mtplint.models import ModelInfo, ModelPattern, model_patterns, search_patterns, shipped_model_entries

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    Derived = TypeVar("Derived")
    Found = TypeVar("Found")

#: names remembered at most per catalogs (a tree of distinct names must not grow a memo without bound)
_MEMO_LIMIT = 4096


class Catalogs:
    """The GPUs and models one configuration adds, and the lookups in the catalogs they make."""

    __slots__ = ("gpu_entries", "model_entries_added", "_gpus", "_found_gpus", "_models", "_patterns",
                 "_found_models", "_derived")

    def __init__(self, gpus: Sequence[dict[str, Any]] = (), models: Sequence[dict[str, Any]] = ()) -> None:
        #: the configuration's ``gpus`` and ``models`` entries, copied (the caller's lists may change)
        self.gpu_entries: tuple[dict[str, Any], ...] = ()
        self.model_entries_added: tuple[dict[str, Any], ...] = ()
        if gpus or models:
            import copy  # noqa: PLC0415 - only a configuration that adds GPUs or models

            self.gpu_entries = tuple(copy.deepcopy(dict(entry)) for entry in gpus)
            self.model_entries_added = tuple(copy.deepcopy(dict(entry)) for entry in models)
        self._gpus: tuple[Gpu, ...] | None = None
        self._found_gpus: dict[str, Gpu | None] = {}
        self._models: tuple[dict[str, Any], ...] | None = None
        self._patterns: tuple[ModelPattern, ...] | None = None
        self._found_models: dict[str, ModelInfo | None] = {}
        self._derived: dict[str, Any] = {}

    def __reduce__(self) -> tuple[Callable[..., Catalogs], tuple[Any, ...]]:
        # a worker process is sent the entries; it builds its own lookups
        return catalogs_of, (self.gpu_entries, self.model_entries_added)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Catalogs) and self.gpu_entries == other.gpu_entries
                and self.model_entries_added == other.model_entries_added)

    def __hash__(self) -> int:
        return hash((len(self.gpu_entries), len(self.model_entries_added)))

    def __repr__(self) -> str:
        return f"Catalogs({len(self.gpu_entries)} configured GPUs, {len(self.model_entries_added)} configured models)"

    # --- GPUs ----------------------------------------------------------------------------------

    def gpus(self) -> tuple[Gpu, ...]:
        """Configured GPUs first (one with a shipped id replaces it), then the shipped ones."""
        if self._gpus is None:
            user_ids = {entry["id"] for entry in self.gpu_entries}
            self._gpus = tuple(gpu_from_entry(entry, user=entry["id"] in user_ids)
                               for entry in merged(self.gpu_entries, shipped_gpu_entries()))
        return self._gpus

    def find_gpu(self, name: str) -> Gpu | None:
        """The GPU an id (``rtx-4090``), a k8s label value (``NVIDIA-GeForce-RTX-4090``) or an
        nvidia-smi / torch name stands for (:func:`mtplint.hardware.find_gpu_in`)."""
        if name in self._found_gpus:
            return self._found_gpus[name]
        return _remember(self._found_gpus, name, find_gpu_in(self.gpus(), name))

    def close_gpu_ids(self, name: str) -> list[str]:
        """The ids closest to a GPU name the catalog does not know (at most three), for its error."""
        import difflib  # noqa: PLC0415 - an error's "did you mean" only

        return difflib.get_close_matches(name.lower(), [gpu.id for gpu in self.gpus()], n=3, cutoff=0.4)

    def parse_gpu_spec(self, spec: str) -> tuple[Gpu | None, int | None, str]:
        """``rtx-4090x2`` / ``h100-sxm`` / ``NVIDIA-H200`` -> (gpu, count, name as written)."""
        name, count = split_gpu_spec(spec)
        return self.find_gpu(name), count, name

    # --- models --------------------------------------------------------------------------------

    def model_entries(self) -> tuple[dict[str, Any], ...]:
        """The model entries in match order: configured models first (one with a shipped id
        replaces it), then ``mtplint/data/models.json``."""
        if self._models is None:
            self._models = merged(self.model_entries_added, shipped_model_entries())
        return self._models

    def model_patterns(self) -> tuple[ModelPattern, ...]:
        """Each pattern of the model entries, in match order, with the model it identifies."""
        if self._patterns is None:
            user_ids = {entry["id"] for entry in self.model_entries_added}
            self._patterns = model_patterns(self.model_entries(), user_ids)
        return self._patterns

    def model_ids(self) -> list[str]:
        return sorted({info.id for _, info, _ in self.model_patterns()})

    def find_model(self, name: str | None) -> ModelInfo | None:
        """The catalog entry for a repo id or path (first matching entry wins), or ``None``."""
        if not name:
            return None
        if name in self._found_models:
            return self._found_models[name]
        return _remember(self._found_models, name, search_patterns(self.model_patterns(), name))

    def derived(self, key: str, build: Callable[[Catalogs], Derived]) -> Derived:
        """What a later stage derives from these catalogs (the tuner's model sizes), built once."""
        if key not in self._derived:
            self._derived[key] = build(self)
        value: Derived = self._derived[key]
        return value


def _remember(memo: dict[str, Found], name: str, found: Found) -> Found:
    """``found`` remembered in ``memo`` as the answer for ``name``; a full memo starts again."""
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    memo[name] = found
    return found


def merged(user: Sequence[dict[str, Any]], shipped: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """User entries first, then the shipped ones whose id no user entry took."""
    taken = {entry["id"] for entry in user}
    return (*user, *(entry for entry in shipped if entry["id"] not in taken))


#: the catalogs of a run whose configuration adds no GPU or model
SHIPPED = Catalogs()


def catalogs_of(gpus: Sequence[dict[str, Any]], models: Sequence[dict[str, Any]]) -> Catalogs:
    """The catalogs with ``gpus`` and ``models`` added: :data:`SHIPPED` (and its remembered
    lookups) when there are none, as for most configurations."""
    return Catalogs(gpus, models) if gpus or models else SHIPPED
