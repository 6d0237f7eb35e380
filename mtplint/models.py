"""The model catalog: which served model is which architecture (hybrid GDN or not, MTP layers).

A model is identified only by matching a catalog entry's pattern against its repo id or path;
anything else is unknown, and rules that need the architecture treat it as unknown.
"""

from __future__ import annotations

import json
import re
from functools import cache

from mtplint.records import FrozenRecord
from mtplint.shipped import read_package_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Container, Iterable
    from typing import Any, Final

    from mtplint.user_patterns import Searcher


class ModelInfo(FrozenRecord):
    """A catalogued model family: architecture, hybrid attention, MTP layers."""

    __slots__ = ("id", "family", "arch", "hybrid", "mtp_layers", "mtp_config_key", "mtp_less_variants", "user",
                 "checkpoints", "first_release")
    id: Final[str]
    family: Final[str]
    arch: Final[str]
    hybrid: Final[bool]
    mtp_layers: Final[int | None]
    #: the config.json key engines read the MTP depth from (``text_config.mtp_num_hidden_layers``,
    #: ``num_nextn_predict_layers``); None when there is none (Qwen3-Next) or not known
    mtp_config_key: Final[str | None]
    #: ids of catalog entries for repacks of this model that drop the MTP weights
    mtp_less_variants: Final[tuple[str, ...]]
    #: added in configuration (``[[tool.mtplint.models]]``)
    user: Final[bool]
    #: published checkpoints in other formats (``fp8``, ``gguf``): Hugging Face repos
    checkpoints: Final[tuple[tuple[str, str], ...]]
    #: (engine, first release serving the architecture, source of that fact, "mtp" when the release
    #: is the first to draft with the model's MTP head, else "")
    first_release: Final[tuple[tuple[str, str, str, str], ...]]

    def __init__(self, id: str, family: str, arch: str, hybrid: bool, mtp_layers: int | None,
                 mtp_config_key: str | None = None, mtp_less_variants: tuple[str, ...] = (), user: bool = False,
                 checkpoints: tuple[tuple[str, str], ...] = (),
                 first_release: tuple[tuple[str, str, str, str], ...] = ()) -> None:
        self.id = id
        self.family = family
        self.arch = arch
        self.hybrid = hybrid
        self.mtp_layers = mtp_layers
        self.mtp_config_key = mtp_config_key
        self.mtp_less_variants = mtp_less_variants
        self.user = user
        self.checkpoints = checkpoints
        self.first_release = first_release

    def checkpoint(self, form: str) -> str | None:
        return dict(self.checkpoints).get(form)


@cache
def shipped_model_entries() -> tuple[dict[str, Any], ...]:
    """The entries of ``mtplint/data/models.json``, in match order; a run's catalog puts its
    configuration's first (:class:`mtplint.catalogs.Catalogs`)."""
    data = json.loads(read_package_text("data", "models.json"))
    return tuple(data["models"])


#: characters that stand for themselves in a pattern, outside a set or a group
_LITERAL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-/_:@ '\"=,;<>!%&~`")
#: characters that stand for themselves after a backslash
_ESCAPED_LITERAL = frozenset(".-/_ +*?()[]{}|^$\\#&~")
#: classes and anchors after a backslash: no text of their own
_ESCAPED_CLASSES = frozenset("dDwWsSbBAZ")


def required_text(pattern: str) -> str:
    """Text (in lower case) that every match of ``pattern`` contains, or "" when that cannot be
    told simply: the longest run of literal characters outside any group, set or alternation.

    A lookup skips a pattern whose text an ASCII name does not contain, without compiling it. It
    errs on the side of "": an alternation at the top level, inline flags (``(?x)`` changes what
    a space means), anything unusual after a backslash all give ""."""
    runs: list[str] = []
    run: list[str] = []
    depth = 0
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            escaped = pattern[index + 1:index + 2]
            if escaped in _ESCAPED_LITERAL:
                if depth == 0:
                    run.append(escaped)
            elif escaped in _ESCAPED_CLASSES:
                runs.append("".join(run))
                run = []
            else:  # a code (\x41, \u00e9, \N{...}), a back-reference, a dangling backslash
                return ""
            index += 2
            continue
        if char in "?*{":  # the character or group before may be absent
            if run:
                run.pop()
            runs.append("".join(run))
            run = []
            if char == "{":
                close = pattern.find("}", index)
                index = close if close >= 0 else len(pattern)
        elif char == "(":
            if pattern.startswith("(?", index) and pattern[index + 2:index + 3] not in (":", "!", "=", "<", "P"):
                return ""  # inline flags
            runs.append("".join(run))
            run = []
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "[":
            runs.append("".join(run))
            run = []
            index = _set_end(pattern, index)
        elif char == "|" and depth == 0:
            return ""
        elif char in _LITERAL and depth == 0:
            run.append(char)
        elif depth == 0:  # ., ^, $, +, and anything else: the run ends
            runs.append("".join(run))
            run = []
        index += 1
    runs.append("".join(run))
    required = max(runs, key=len)
    # a non-ASCII letter may match an ASCII one by case folding (the long s matches "s")
    return required.lower() if required.isascii() else ""


def _set_end(pattern: str, start: int) -> int:
    """The index of the ``]`` that closes the set opened at ``start``."""
    index = start + 1
    if pattern.startswith("^", index):
        index += 1
    if pattern.startswith("]", index):
        index += 1
    while index < len(pattern) and pattern[index] != "]":
        index += 2 if pattern[index] == "\\" else 1
    return index


#: a pattern of the model catalog, the model it identifies, and the text every match of it contains
ModelPattern = tuple[str, ModelInfo, str]


def model_patterns(entries: Iterable[dict[str, Any]], user_ids: Container[str]) -> tuple[ModelPattern, ...]:
    """Each pattern of ``entries`` (in match order), the model it identifies, and the text every
    match of it contains (:func:`required_text`); ``user_ids``: the entries added in configuration.
    The patterns are compiled when a lookup first reaches them: most names match one of the first
    entries, and compiling them all would cost every pre-commit run."""
    patterns = []
    for entry in entries:
        mtp = entry.get("mtp") or {}
        info = ModelInfo(entry["id"], entry["family"], entry["arch"], entry["hybrid"], entry["mtp_layers"],
                         mtp_config_key=mtp.get("config_key"), mtp_less_variants=tuple(entry.get("mtp_less_variants", ())),
                         user=entry["id"] in user_ids,
                         checkpoints=tuple(sorted((entry.get("checkpoints") or {}).items())),
                         first_release=tuple((engine, first["version"], first["source"], first.get("applies_to", ""))
                                             for engine, first in sorted((entry.get("first_release") or {}).items())))
        for pattern in entry["patterns"]:
            patterns.append((pattern, info, required_text(pattern)))
    return tuple(patterns)


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _searcher(pattern: str, info: ModelInfo) -> re.Pattern[str] | Searcher:
    """A configured model's pattern is matched with RE2 (:mod:`mtplint.user_patterns`: no
    backtracking on a hostile pattern), a built-in one with ``re``."""
    if info.user:
        from mtplint.user_patterns import compile_user_pattern  # noqa: PLC0415 - RE2: only for configured model patterns

        return compile_user_pattern(pattern)
    return _compiled(pattern)


def search_patterns(patterns: Iterable[ModelPattern], name: str) -> ModelInfo | None:
    """The model of the first pattern that matches the repo id or path ``name``, or ``None``."""
    # an ASCII name (nearly all) skips, uncompiled, each pattern whose required text it lacks
    lowered = name.lower() if name.isascii() else None
    return next((info for pattern, info, required in patterns
                 if (lowered is None or required in lowered) and _searcher(pattern, info).search(name)), None)
