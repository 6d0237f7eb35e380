"""The model catalog: which served model is which architecture (hybrid GDN or not, MTP layers).

A model is identified only by matching a catalog entry's pattern against its repo id or path;
anything else is unknown, and rules that need the architecture treat it as unknown.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources


@dataclass(frozen=True)
class ModelInfo:
    id: str
    family: str
    arch: str
    hybrid: bool
    mtp_layers: int | None


@cache
def _catalog() -> tuple[tuple[re.Pattern[str], ModelInfo], ...]:
    data = json.loads(resources.files("mtplint.data").joinpath("models.json").read_text(encoding="utf-8"))
    entries = []
    for entry in data["models"]:
        info = ModelInfo(entry["id"], entry["family"], entry["arch"], entry["hybrid"], entry["mtp_layers"])
        for pattern in entry["patterns"]:
            entries.append((re.compile(pattern, re.IGNORECASE), info))
    return tuple(entries)


def find_model(name: str | None) -> ModelInfo | None:
    """The catalog entry for a repo id or path (first matching entry wins), or ``None``."""
    if not name:
        return None
    for pattern, info in _catalog():
        if pattern.search(name):
            return info
    return None
