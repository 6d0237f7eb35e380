"""Helpers shared by the MTP4xx/MTP5xx predicates (deprecated, removed and invalid arguments).

Not a rule itself (no ``rules/MTP5XX.yaml``): the vLLM ``SpeculativeConfig`` key table, token and
span lookups, closest-name suggestions and the engine flag sets used for them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache, lru_cache

from mtplint.checks import RuleContext
from mtplint.engines import CliError, OptionValue
from mtplint.shipped import read_package_text
from mtplint.source import Span
from mtplint.versions import compare, version_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ENGINE_LABELS = {"vllm": "vLLM", "sglang": "SGLang", "llama.cpp": "llama.cpp", "vllm-mlx": "vllm-mlx", "mlx-lm": "mlx-lm"}


# --- vLLM SpeculativeConfig per release (data/vllm/speculative/keys.json, tools/gen_vllm_spec_keys.py) ---

class SpecRelease:
    """What one vLLM release accepts in ``--speculative-config`` (keys, methods, unknown-key behaviour).

    ``methods``: values the ``method`` type accepts (None: a plain ``str`` (0.8.x), nothing refused by
    type); ``mtp_aliases``: method names normalised to ``mtp`` with a deprecation warning;
    ``unknown_keys``: what an unknown key does: type-error (0.8.x), ignored (0.11-0.15), refused
    (0.16+). A plain class (read-only by convention): this module loads on every vLLM check, and
    dataclass() costs start-up time."""

    __slots__ = ("internal", "keys", "methods", "mtp_aliases", "unknown_keys", "version")

    def __init__(self, version: str, keys: frozenset[str], internal: frozenset[str], methods: frozenset[str] | None,
                 mtp_aliases: frozenset[str], unknown_keys: str) -> None:
        self.version = version
        self.keys = keys
        self.internal = internal
        self.methods = methods
        self.mtp_aliases = mtp_aliases
        self.unknown_keys = unknown_keys


@cache
def spec_releases() -> tuple[SpecRelease, ...]:
    data = json.loads(read_package_text("engines", "data", "vllm", "speculative", "keys.json"))["releases"]
    releases = [
        SpecRelease(version, frozenset(entry["keys"]), frozenset(entry["internal"]),
                    frozenset(entry["methods"]) if entry["methods"] is not None else None,
                    frozenset(entry["mtp_aliases"]), entry["unknown_keys"])
        for version, entry in data.items()
    ]
    return tuple(sorted(releases, key=lambda release: version_key(release.version)))


@lru_cache(maxsize=256)  # several rules ask for every vLLM launch's version; a tree has a few dozen
def spec_release(version: str) -> SpecRelease:
    """The table of ``version``, or of the nearest older release read (the oldest for anything older)."""
    releases = spec_releases()
    chosen = releases[0]
    for release in releases:
        if compare(release.version, version) <= 0:
            chosen = release
    return chosen


def key_history(key: str, field: str = "keys") -> tuple[str | None, str | None]:
    """(first release read that has ``key``, first later release read without it) for keys or methods."""
    first: str | None = None
    gone: str | None = None
    for release in spec_releases():
        members: frozenset[str] | None = getattr(release, field)
        if members is None:
            continue
        if key in members:
            if first is None:
                first = release.version
            gone = None
        elif first is not None and gone is None:
            gone = release.version
    return first, gone


def speculative_config(ctx: RuleContext) -> tuple[OptionValue, dict[str, Any]] | None:
    """The resolved ``speculative_config`` dict and its option (keys with ``-`` read as ``_``, as vLLM does)."""
    option = ctx.option("speculative_config")
    if option is None or option.unresolved or not isinstance(option.value, dict):
        return None
    return option, {str(key): value for key, value in option.value.items()}


def text_span(ctx: RuleContext, span: Span | None, needle: str) -> Span | None:
    """The span of ``needle`` inside the token at ``span`` when the file holds the token's text
    verbatim (a JSON value in quotes); else ``span`` itself."""
    if span is None:
        return None
    source = ctx.report.launch.source
    if span.file != source.display:
        return span
    text = source.text[span.start:span.end]
    found = text.find(needle)
    if found < 0:
        return span
    return source.span(span.start + found, span.start + found + len(needle))


def json_key_span(ctx: RuleContext, option: OptionValue, key: str) -> Span | None:
    """Where a top-level key of a JSON option was written: its own word (dotted keys, YAML) or the
    quoted key inside the JSON text."""
    from mtplint.engines.vllm import JsonOptionValue  # noqa: PLC0415 - engine lookup: vLLM's type, asked for every engine

    if isinstance(option, JsonOptionValue) and option.key_spans.get(key) is not None:
        return option.key_spans[key]
    for candidate in (key, key.replace("_", "-")):
        for quote in ('"', "'"):
            span = text_span(ctx, option.span, f"{quote}{candidate}{quote}")
            if span is not None and span != option.span:
                return span
    return option.span


def json_value_span(ctx: RuleContext, option: OptionValue, key: str, value: str) -> Span | None:
    """Where a string value of a top-level key was written (falls back to the key's span)."""
    from mtplint.engines.vllm import JsonOptionValue  # noqa: PLC0415 - engine lookup: vLLM's type, asked for every engine

    if isinstance(option, JsonOptionValue) and option.key_spans.get(key) is not None:
        return text_span(ctx, option.key_spans[key], value)
    key_at = json_key_span(ctx, option, key)
    if key_at is None or option.span is None or key_at == option.span:
        return text_span(ctx, option.span, f'"{value}"') or key_at
    source = ctx.report.launch.source
    text = source.text[key_at.end:option.span.end]
    found = text.find(value)
    if found < 0:
        return key_at
    start = key_at.end + found
    quoted = start > 0 and source.text[start - 1] in "\"'"
    if quoted:
        start -= 1
    return source.span(start, start + len(value) + (2 if quoted else 0))


# --- suggestions ----------------------------------------------------------------------------------

def closest(name: str, candidates: Iterable[str], cutoff: float = 0.6) -> list[str]:
    """Close names (difflib), best first; an exact match after ``_`` -> ``-`` comes first."""
    return list(_closest(name, tuple(sorted(set(candidates))), cutoff))


@lru_cache(maxsize=256)  # a tree repeats its mistakes (one copied launch), and difflib is slow over a flag table
def _closest(name: str, pool: tuple[str, ...], cutoff: float) -> tuple[str, ...]:
    import difflib  # noqa: PLC0415 - a did-you-mean only: most runs name no unknown flag

    exact = tuple(c for c in pool if c != name and c.replace("_", "-") == name.replace("_", "-"))
    if exact:
        return exact
    close = difflib.get_close_matches(name, pool, n=3, cutoff=cutoff)
    if not close:
        return ()
    # keep the runners-up only when they are about as close as the best (one clear match: one name)
    best = difflib.SequenceMatcher(None, name, close[0]).ratio()
    return tuple(c for c in close if difflib.SequenceMatcher(None, name, c).ratio() >= best - 0.05)


def suggestion(name: str, candidates: Iterable[str], quote: str = "`") -> str:
    found = closest(name, candidates)
    if not found:
        return ""
    if len(found) == 1:
        return f"did you mean {quote}{found[0]}{quote}?"
    return "did you mean " + " or ".join(f"{quote}{c}{quote}" for c in found) + "?"


# --- versions -------------------------------------------------------------------------------------

def version_label(ctx: RuleContext) -> str:
    """``SGLang 0.5.20`` or ``vLLM 0.33.0 (assumed: the version is not pinned)``."""
    version = ctx.report.version
    label = f"{ENGINE_LABELS.get(ctx.engine, ctx.engine)} {version.version}"
    if version.known:
        return label
    return f"{label} (assumed: the newest version still possible; pin the version to check against yours)"


# --- errors and tokens ----------------------------------------------------------------------------

def errors_of(ctx: RuleContext, *kinds: str) -> list[CliError]:
    return [error for error in ctx.errors if error.kind in kinds]


def flag_name(text: str | None) -> str:
    """``--foo=1`` -> ``--foo``."""
    return (text or "").split("=", 1)[0]


def engine_flags(ctx: RuleContext) -> list[str]:
    """Every option string the engine's parser knows for the version in play (for suggestions)."""
    version = ctx.report.version.version
    try:
        if ctx.engine == "vllm":
            from mtplint.engines.vllm import load_table as load_vllm  # noqa: PLC0415 - engine lookup: the launch's engine only

            return list(load_vllm(version).by_option)
        if ctx.engine == "sglang":
            from mtplint.engines import sglang  # noqa: PLC0415 - engine lookup: the launch's engine only

            return list(sglang.load_table(version).index)
        if ctx.engine == "llama.cpp":
            from mtplint.llama_options import build_number, option_lookup  # noqa: PLC0415 - engine lookup: the launch's engine only

            return list(option_lookup(build_number(version)).by_name)
        if ctx.engine in ("vllm-mlx", "mlx-lm"):
            from mtplint.engines import mlx  # noqa: PLC0415 - engine lookup: the launch's engine only

            return [flag for argument in mlx._table(ctx.engine)["arguments"] for flag in argument["flags"]]
    except (AttributeError, KeyError, ValueError, OSError):
        return []
    return []
