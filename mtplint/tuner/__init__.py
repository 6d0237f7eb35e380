"""Estimates behind the hardware-aware rules (MTP201, MTP301) and, later, the tuner.

* :mod:`mtplint.tuner.sizes`: the model sizes the estimates need (``models.json`` ``sizes``) and the
  weight / KV formats a launch runs with (bytes per parameter, bytes per KV element).
* :mod:`mtplint.tuner.memory`: :func:`estimate_memory` -- resident memory with speculation, term by
  term, against the budget (GPU memory x utilisation x TP).
* :mod:`mtplint.tuner.crossover`: :func:`crossover` -- the batch size where MTP turns from a gain into
  a loss for a GPU, model and k, and the expected gain at batch 1.

The rules call only these entry points, so a later, exact model can replace the arithmetic without
touching the rules.
"""

from __future__ import annotations

from mtplint.tuner.crossover import Crossover, crossover, crossover_for_report
from mtplint.tuner.memory import MemoryEstimate, estimate_memory
from mtplint.tuner.sizes import ModelSizes, WeightFormat, model_sizes

__all__ = [
    "Crossover",
    "MemoryEstimate",
    "ModelSizes",
    "WeightFormat",
    "crossover",
    "crossover_for_report",
    "estimate_memory",
    "model_sizes",
]
