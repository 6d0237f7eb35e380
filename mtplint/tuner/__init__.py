"""The hardware-aware model behind MTP201 / MTP301 and the tuner (`mtplint recommend`, `mtplint crossover`).

* :mod:`mtplint.tuner.sizes`: the model sizes the estimates need (``models.json`` ``sizes``) and the
  weight / KV formats a launch runs with (bytes per parameter, bytes per KV element).
* :mod:`mtplint.tuner.memory`: :func:`estimate_memory` -- resident memory with speculation, term by
  term, against the budget (GPU memory x utilisation x TP).
* :mod:`mtplint.tuner.batching`: :func:`crossover` -- the batch sizes where MTP turns from a gain into
  a loss for a GPU, model and k (the first crossing and every losing range), and the expected gain at
  batch 1; :func:`speedup` -- one point of that curve. Both take catalog objects or names.

* :mod:`mtplint.tuner.advisor`: :func:`recommend` -- enable MTP or not, k, the expected gain and
  the serve command for a GPU, model, engine, use case and objective; :func:`quick_crossover` -- the
  crossover per k for the checkpoint ``recommend`` would serve on a GPU. Both run the original
  tuner's documented usage (``forge.mtp``: ``gpu_id=``, ``Objective.MINIMIZE_LATENCY``, ...).
* :mod:`mtplint.tuner.commands`: the serve commands (:func:`vllm_mtp_command`,
  :func:`sglang_mtp_command`, :func:`llama_mtp_command`), which lint clean.

The rules call only these entry points, so a later, exact model can replace the arithmetic without
touching the rules.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from mtplint.tuner.advisor import Objective, Recommendation, UseCase, quick_crossover, recommend
    from mtplint.tuner.batching import Crossover, crossover, crossover_for_report, speedup
    from mtplint.tuner.commands import ServeCommand, llama_mtp_command, sglang_mtp_command, vllm_mtp_command
    from mtplint.tuner.memory import MemoryEstimate, estimate_memory
    from mtplint.tuner.sizes import ModelSizes, WeightFormat, model_sizes

#: exported name -> the module defining it, imported on first use: the rules load the memory model
#: for every launch, and must not pay for the recommender and its command builders
_EXPORTS = {
    "Objective": "advisor", "Recommendation": "advisor", "UseCase": "advisor", "recommend": "advisor",
    "quick_crossover": "advisor",
    "Crossover": "batching", "crossover": "batching", "crossover_for_report": "batching", "speedup": "batching",
    "ServeCommand": "commands", "llama_mtp_command": "commands", "sglang_mtp_command": "commands",
    "vllm_mtp_command": "commands", "MemoryEstimate": "memory", "estimate_memory": "memory",
    "ModelSizes": "sizes", "WeightFormat": "sizes", "model_sizes": "sizes",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mtplint.tuner' has no attribute {name!r}")
    return getattr(__import__(f"mtplint.tuner.{module}", fromlist=(name,)), name)


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
    "quick_crossover",
    "recommend",
    "sglang_mtp_command",
    "speedup",
    "vllm_mtp_command",
]
