"""The model catalog: which served model is which architecture (hybrid GDN or not, MTP layers).

A model is identified only by matching a catalog entry's pattern against its repo id or path;
anything else is unknown, and rules that need the architecture treat it as unknown.
"""

from __future__ import annotations

import json
import re
from functools import cache

from mtplint.records import FrozenRecord
from mtplint.shipped import package_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final


class ModelInfo(FrozenRecord):
    """A catalogued model family: architecture, hybrid attention, MTP layers."""

    __slots__ = ("id", "family", "arch", "hybrid", "mtp_layers", "mtp_config_key", "mtp_less_variants", "user",
                 "checkpoints")
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

    def __init__(self, id: str, family: str, arch: str, hybrid: bool, mtp_layers: int | None,
                 mtp_config_key: str | None = None, mtp_less_variants: tuple[str, ...] = (), user: bool = False,
                 checkpoints: tuple[tuple[str, str], ...] = ()) -> None:
        self.id = id
        self.family = family
        self.arch = arch
        self.hybrid = hybrid
        self.mtp_layers = mtp_layers
        self.mtp_config_key = mtp_config_key
        self.mtp_less_variants = mtp_less_variants
        self.user = user
        self.checkpoints = checkpoints

    def checkpoint(self, form: str) -> str | None:
        return dict(self.checkpoints).get(form)


@cache
def catalog_entries() -> tuple[dict[str, Any], ...]:
    """The model entries in match order: configured models first (one with a shipped id replaces
    it), then ``mtplint/data/models.json``."""
    from mtplint.user_catalog import merged, user_models

    data = json.loads(package_path("data", "models.json").read_text(encoding="utf-8"))
    return merged(user_models(), data["models"])


@cache
def _catalog() -> tuple[tuple[str, ModelInfo], ...]:
    """Each pattern (compiled when a lookup first reaches it: most names match one of the first
    entries, and compiling them all costs a pre-commit run ~0.5 ms) and the model it identifies."""
    from mtplint.user_catalog import user_models

    user_ids = {entry["id"] for entry in user_models()}
    entries = []
    for entry in catalog_entries():
        mtp = entry.get("mtp") or {}
        info = ModelInfo(entry["id"], entry["family"], entry["arch"], entry["hybrid"], entry["mtp_layers"],
                         mtp_config_key=mtp.get("config_key"), mtp_less_variants=tuple(entry.get("mtp_less_variants", ())),
                         user=entry["id"] in user_ids,
                         checkpoints=tuple(sorted((entry.get("checkpoints") or {}).items())))
        for pattern in entry["patterns"]:
            entries.append((pattern, info))
    return tuple(entries)


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


#: names already looked up, for the catalog they were looked up in (a tree names the same few
#: models many times; configured models replace the catalog, and with it these answers)
_found: tuple[object, dict[str, ModelInfo | None]] = ((), {})
#: names remembered at most (a tree of distinct names must not grow the memo without bound)
_FOUND_LIMIT = 4096


def find_model(name: str | None) -> ModelInfo | None:
    """The catalog entry for a repo id or path (first matching entry wins), or ``None``."""
    global _found
    if not name:
        return None
    entries = _catalog()
    catalog, answers = _found
    if catalog is not entries or len(answers) >= _FOUND_LIMIT:
        answers = {}
        _found = (entries, answers)  # holds the catalog: a new one cannot take its identity
    if name in answers:
        return answers[name]
    found = next((info for pattern, info in entries if _compiled(pattern).search(name)), None)
    answers[name] = found
    return found
