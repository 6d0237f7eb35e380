"""Where MTP turns from a gain into a loss as the batch grows (MTP301).

The model (research/catalog.md §3.1 and §3.3, Leviathan et al. 2023 + a roofline):

* Decode is memory-bound while the tokens in one forward step stay below the GPU's knee
  ``n* = FLOPS x b_w / (2 x BW)``: the ridge point (dense BF16 FLOPS / bandwidth, catalog §1.1) for BF16
  weights and for FP8 weights on FP8 tensor cores, ``ridge x b/2`` otherwise (4-bit weight-only: /4,
  FP8 weight-only on Ampere: /2, GGUF Q4_K_M: /3.3).
* A speculative step verifies ``k + 1`` tokens per sequence, so at batch B it runs ``B (k+1)`` tokens.
  Once that passes n*, verification costs grow linearly and the gain disappears: the **crossover batch**
  is ``B* = floor(n* / (k + 1))`` (catalog §3.3 "heuristic crossover").
* **Gain at batch 1** (memory-bound) = ``E(alpha, k) / (verify + k c)`` with ``E = (1 - alpha^(k+1)) /
  (1 - alpha)`` tokens per step (Leviathan Eq. 1), ``c`` the MTP step's cost relative to a target step
  (catalog §3.1 table) and ``verify`` the cost of verifying ``k+1`` tokens relative to one plain step:
  1 for dense models; for MoE ``(1 - s) + s U(k+1)/U(1)`` where ``U(n) = E_count (1 - (1 - top_k/E_count)^n)``
  distinct experts are read and ``s`` is the routed experts' share of the active bytes (catalog §3.1
  "MoE penalty", uniform routing assumed).

Checked against the published points (tests/test_tuner_crossover.py):

* RTX 3090, Qwen3.6-35B-A3B Q4, k=2 -> B* = 6: llama.cpp measured +0.4% at concurrency 4 and -74% at 8.
* Consumer GPUs with 4-bit weights: B* between 4 and 9 for k = 1..3 on an RTX 3090 (seed: 4-8).
* H200, DeepSeek-V3 FP8, k=3 -> B* = 51: SGLang measured 1.5x at batch 32 (still a gain).
* Qwen3.6-35B-A3B, k=1, alpha 0.94: +27.6% at batch 1 (seed: +27.5% TPOT on an RTX 3090).

Error: the crossover is good to about a factor of 2 (kernel efficiency, long contexts move it out,
small-active MoE moves it in at low batch); the gain at batch 1 to +-15 points, dominated by the
acceptance alpha, which depends on the workload (defaults: the catalog's figure, else 0.8).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mtplint.models import find_model
from mtplint.tuner.sizes import ModelSizes, WeightFormat, model_sizes, weight_format

if TYPE_CHECKING:
    from mtplint.hardware import Gpu
    from mtplint.pipeline import LaunchReport

#: acceptance per position when the catalog has no figure for the model (catalog §3.1 worked values)
DEFAULT_ACCEPTANCE = 0.8
#: draft cost when unknown: Leviathan et al. report c < 0.05 for their drafts
DEFAULT_DRAFT_COST = 0.05


@dataclass(frozen=True)
class Crossover:
    gpu: Gpu
    draft_tokens: int
    weights: WeightFormat
    #: tokens per forward step where decode stops being memory-bound
    knee_tokens: float
    #: largest batch at which MTP still pays
    batch: int
    #: expected decode speed-up at batch 1 (1.25 = +25%)
    gain_at_one: float
    acceptance: float
    acceptance_known: bool


def knee_tokens(gpu: Gpu, weights: WeightFormat) -> float:
    """n*: tokens per step at which decode turns compute-bound for these weights on this GPU."""
    ridge = gpu.bf16_tflops * 1e12 / (gpu.bandwidth_gbs * 1e9)
    if weights.fp8 and gpu.fp8:
        return ridge
    return ridge * min(weights.bytes_per_param, 2.0) / 2


def verify_cost(sizes: ModelSizes | None, k: int) -> float:
    """Cost of verifying k+1 tokens relative to one plain decode step at batch 1."""
    if sizes is None or sizes.experts is None:
        return 1.0
    experts = sizes.experts

    def union(tokens: int) -> float:
        return experts.count * (1 - (1 - experts.top_k / experts.count) ** tokens)

    return (1 - experts.routed_share) + experts.routed_share * union(k + 1) / union(1)


def gain_at_batch_one(sizes: ModelSizes | None, k: int) -> tuple[float, float, bool]:
    """(speed-up, alpha used, whether alpha came from the catalog)."""
    known = sizes is not None and sizes.acceptance is not None
    alpha = sizes.acceptance if sizes is not None and sizes.acceptance is not None else DEFAULT_ACCEPTANCE
    cost = sizes.draft_cost if sizes is not None and sizes.draft_cost is not None else DEFAULT_DRAFT_COST
    tokens = (1 - alpha ** (k + 1)) / (1 - alpha)
    return tokens / (verify_cost(sizes, k) + k * cost), alpha, known


def crossover(gpu: Gpu, model: ModelSizes | None, k: int, weights: WeightFormat | None = None) -> Crossover:
    """The crossover batch and the batch-1 gain for ``k`` draft tokens (see the module docstring)."""
    form = weights or weight_format(None, None, model)
    knee = knee_tokens(gpu, form)
    gain, alpha, known = gain_at_batch_one(model, k)
    return Crossover(gpu=gpu, draft_tokens=k, weights=form, knee_tokens=knee,
                     batch=max(1, math.floor(knee / (k + 1))), gain_at_one=gain, acceptance=alpha, acceptance_known=known)


def crossover_for_report(report: LaunchReport) -> Crossover | None:
    """The crossover for one launch running MTP, or None without a GPU identity or a resolved k."""
    gpu = report.hardware.gpu
    if gpu is None:
        return None

    def value(name: str) -> Any:
        setting = report.effective.get(name)
        return None if setting is None or setting.unresolved else setting.value

    if value("spec_method") != "mtp":
        return None
    k = value("spec_tokens")
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        return None
    model_name = value("model")
    info = find_model(model_name) if isinstance(model_name, str) else None
    sizes = model_sizes(info.id if info else None)
    return crossover(gpu, sizes, k, weight_format(model_name if isinstance(model_name, str) else None,
                                                    value("quantization"), sizes))
