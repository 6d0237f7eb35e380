"""GPUs and models a user adds in configuration (``[[tool.mtplint.gpus]]`` / ``[[tool.mtplint.models]]``).

The entries are plain data, already validated against the item schemas of the shipped catalogs
(``schemas/gpus.schema.json#/$defs/gpu``, ``schemas/models.schema.json#/$defs/model``) by
:mod:`mtplint.config`. :func:`register_user_catalog` is a plain function of that data so a worker
process can call it with the same lists the parent registered. A user entry with a shipped id
replaces the shipped one; a user model's patterns are tried before every shipped pattern.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_gpus: tuple[dict[str, Any], ...] = ()
_models: tuple[dict[str, Any], ...] = ()


def register_user_catalog(gpus: Sequence[dict[str, Any]], models: Sequence[dict[str, Any]]) -> None:
    """Make ``gpus`` / ``models`` (configuration entries) part of the catalogs; replaces any earlier
    registration (``([], [])`` clears it). The catalog caches are dropped so every lookup sees them."""
    global _gpus, _models
    if tuple(gpus) == _gpus and tuple(models) == _models:
        return  # the same entries again (a run switching between configurations): the caches stay true
    if gpus or models:
        import copy  # only where there is something to copy: most runs register nothing

        _gpus = tuple(copy.deepcopy(dict(entry)) for entry in gpus)
        _models = tuple(copy.deepcopy(dict(entry)) for entry in models)
    else:
        _gpus, _models = (), ()
    # those modules read this one when they build their caches; one not loaded yet has no cache to
    # drop (and loading it here would cost every run its start-up: the tuner's tables)
    hardware = sys.modules.get("mtplint.hardware")
    if hardware is not None:
        hardware.catalog.cache_clear()
        hardware.find_gpu.cache_clear()
    model_catalog = sys.modules.get("mtplint.models")
    if model_catalog is not None:
        model_catalog.catalog_entries.cache_clear()
        model_catalog._catalog.cache_clear()
    sizes = sys.modules.get("mtplint.tuner.sizes")
    if sizes is not None:
        sizes._sizes.cache_clear()


def user_gpus() -> tuple[dict[str, Any], ...]:
    return _gpus


def user_models() -> tuple[dict[str, Any], ...]:
    return _models


def registered() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The registered entries, as :func:`register_user_catalog` takes them (to hand to a worker)."""
    import copy

    return [copy.deepcopy(entry) for entry in _gpus], [copy.deepcopy(entry) for entry in _models]


def merged(user: Sequence[dict[str, Any]], shipped: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """User entries first, then the shipped ones whose id no user entry took."""
    taken = {entry["id"] for entry in user}
    return (*user, *(entry for entry in shipped if entry["id"] not in taken))
