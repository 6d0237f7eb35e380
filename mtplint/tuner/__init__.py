"""Estimates behind the hardware-aware rules (MTP201, MTP301) and, later, the tuner.

* :mod:`mtplint.tuner.sizes`: the model sizes the estimates need (``models.json`` ``sizes``) and the
  weight / KV formats a launch runs with (bytes per parameter, bytes per KV element).
* :mod:`mtplint.tuner.memory`: :func:`estimate_memory` -- resident memory with speculation, term by
  term, against the budget (GPU memory x utilisation x TP).
* :mod:`mtplint.tuner.crossover`: :func:`crossover` -- the batch size where MTP turns from a gain into
  a loss for a GPU, model and k, and the expected gain at batch 1.

* :mod:`mtplint.tuner.recommend`: :func:`recommend` -- enable MTP or not, k, the expected gain and
  the serve command for a GPU, model, engine, use case and objective.
* :mod:`mtplint.tuner.commands`: the serve commands (:func:`vllm_mtp_command`,
  :func:`sglang_mtp_command`, :func:`llama_mtp_command`), which lint clean.

The rules call only these entry points, so a later, exact model can replace the arithmetic without
touching the rules.
"""

from __future__ import annotations

from mtplint.tuner.commands import ServeCommand, llama_mtp_command, sglang_mtp_command, vllm_mtp_command
from mtplint.tuner.crossover import Crossover, crossover, crossover_for_report
from mtplint.tuner.memory import MemoryEstimate, estimate_memory
from mtplint.tuner.recommend import Objective, Recommendation, UseCase, recommend
from mtplint.tuner.sizes import ModelSizes, WeightFormat, model_sizes

__all__ = [
    "Crossover",
    "MemoryEstimate",
    "ModelSizes",
    "Objective",
    "Recommendation",
    "ServeCommand",
    "UseCase",
    "WeightFormat",
    "crossover",
    "crossover_for_report",
    "estimate_memory",
    "llama_mtp_command",
    "model_sizes",
    "recommend",
    "sglang_mtp_command",
    "vllm_mtp_command",
]
