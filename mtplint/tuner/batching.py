"""Where MTP turns from a gain into a loss as the batch grows (MTP301, ``mtplint crossover``).

The model (Leviathan, Kalman, Matias 2023, arXiv:2211.17192, plus a roofline), per decode step:

* **Speed-up at batch B** with ``k`` draft tokens::

      speedup(B) = E(alpha, k) x T(B, B) / (T(B (k+1), B) + drafting(B))

  ``E = 1 + a1 + a1 a2 + ... + a1...ak`` tokens per step (Leviathan Eq. 1 with a per-position
  acceptance: ``a1 = alpha``, the catalog's first-draft-token acceptance, each later position
  :data:`ACCEPTANCE_DECAY` times the one before); ``T(n, B)`` the time of one target forward pass over ``n`` tokens of ``B``
  sequences; the verify pass carries ``B (k+1)`` tokens -- or ``B x verify_tokens`` when drafts form a
  tree (SGLang's ``--speculative-num-draft-tokens`` with top-k > 1). The same ratio is the gain in per-user
  decode speed (TPOT) and in aggregate throughput at that batch.
* **Step time** ``T(n, B)``: the weight bytes read, ``W(n)``, over the GPU's bandwidth, against
  ``2 x P_active x n`` FLOPs over its dense BF16 rate (FP8 rate for FP8 weights on FP8 tensor cores),
  each scaled by how close the engine's kernels get (:data:`KERNELS`):

  - vLLM / SGLang (CUDA graphs, tensor-core GEMMs that overlap loads and maths): the roofline
    ``max(memory, compute)`` plus a fixed tensor-parallel cost (two all-reduces per layer);
  - llama.cpp (quantised mat-vec / MMQ kernels): ``memory + compute`` -- batched decode in
    llama-server scales about linearly with the batch, so the two do not overlap.

  ``W(n)`` is the active weights for dense models. For MoE models verifying ``n`` tokens reads the
  union of the experts they route to, ``U(n) = E_count (1 - (1 - top_k/E_count)^n)`` (the expected
  number of distinct experts under uniform routing): ``W(n) = b (P_shared + P_routed x U(n) / top_k)``, capped by the
  experts that exist.
  Hybrid (Gated DeltaNet) models write ``k`` extra copies of their recurrent state when verifying
  (vLLM's ``MambaSpec`` keeps ``num_speculative_blocks`` extra state blocks per request,
  ``vllm/v1/kv_cache_interface.py``).
* **Drafting**: vLLM and SGLang run the MTP head ``k`` times over the whole batch,
  ``k x c x T(B, B)`` with ``c`` the draft step's cost relative to a target step (Leviathan et al.'s
  ``c``; per model in ``mtplint/data/models.json`` ``sizes.draft_cost``).
  llama-server drafts slot by slot (its MTP path wants ``n_parallel = 1``), so drafting
  costs ``B x k x c x T(1, 1)``.
* The **crossover** is where the curve falls below 1, and every command, rule and the recommender
  report it the same way: ``batch`` is the largest batch up to which MTP pays at *every* batch from 1
  (the first crossing, less one), and ``losses`` the ranges of batches, followed up to
  :data:`MAX_BATCH`, where the speed-up is below 1 (:func:`describe_losses` words them). On a monotone
  curve that is one range, ``batch + 1`` on; where the curve crosses 1 more than once (MoE models)
  there are several, and a concurrency past a dip can be a gain again. ``knee_tokens`` is the
  number of tokens per step where the weights stop hiding the maths, ``n* = FLOPS_eff x b / (2 BW_eff)``.

What is left out, on purpose: per-sequence traffic common to both passes -- the KV-cache read and the
recurrent state every step reads and writes. It dilutes the verify pass's extra cost, so leaving it out
makes the crossover *conservative* (earlier), which matches the losses measured at high concurrency
that a roofline alone misses (https://blog.vllm.ai/2024/10/17/spec-decode.html: 1.4x slower at high
QPS; SemiAnalysis InferenceX, GLM-5.1: 28% more throughput without MTP at high concurrency). Long
contexts move the crossover out (the 27B on an RTX 3090 gains 2.37x only at 32-64k,
https://github.com/thc1006/qwen3.6-speculative-decoding-rtx3090). Also not modelled: prefill
interleaved with decode (chunked prefill takes the same token budget); kernel launch overheads
besides TP communication; non-uniform expert routing.

On MoE models the curve can dip below 1x at a few sequences and recover at large batches (the
union of experts read saturates). ``batch`` is then the end of the first winning stretch, and
``losses`` names the dip and anything after it: a server whose concurrency swings through the dip
loses there, and one that runs past it gains again (MTP301 reports a launch only when its
concurrency falls in a losing range).

Checked against the published points (tests/test_tuner_crossover.py), with these errors: the
speed-up to +-25% of the measured factor (dominated by alpha, which depends on the workload: defaults
are the catalog's figure, else 0.8), the crossover batch to a factor of about 2. The points: RTX 3090 /
llama.cpp / Qwen3.6-35B-A3B Q4, k=2: +22.7% at 1 stream, +0.4% at 4, a loss at 8 (model: +22%, -11%,
-16%); RTX 4090 / llama.cpp / Qwen3.6-27B Q4, k=3: 1.85x at 1 stream; 8x H200 / SGLang / DeepSeek-V3
FP8, k=3: 1.8x at batch 1 and 1.5x at 32 (model: 1.7x, 1.87x -- the model's curve rises from batch 8 on, as
the union of experts read saturates, where the measurement falls: both points are within the error, the
trend is not); H100 / SGLang / Llama-3.1-8B EAGLE-3 (a tree: 8 tokens verified per sequence), acceptance
fitted to the 2.36x at batch 1: 1.38x at batch 64 (model: 1.15x); the seed's 4-8 crossover for 4-bit
Qwen3.6-27B on an RTX 3090 / 4090 (model, llama.cpp, k=1: 6 / 8).

**k = 3 against NVIDIA aiconfigurator** (Qwen3.5-27B BF16 on an H100, vLLM): this model gives 1.71x /
2.16x / 2.39x at batch 1 for k = 1 / 2 / 3 (crossover ~193 / ~167 / ~143), aiconfigurator 1.60x and ~50
at k = 3 while k = 1 agrees within 25%. What public measurements say about the difference:

* The catalog has no sizes or acceptance for Qwen3.5-27B (``models.json`` entry ``qwen3.5`` is the whole
  family), so its curve is the default one: acceptance 0.8 (an assumption, flagged in ``recommend``'s
  notes) and the dense shape. With Qwen3.6-27B's catalogued sizes and acceptance (0.72; same
  ``qwen3_5`` architecture) the figures are 1.62x / 1.94x / 2.07x, crossover ~183 / ~152 / ~126.
* Acceptance at k = 3 is *not* what is overestimated. The model's tokens per step at k = 3 are 2.75
  (alpha 0.8) or 2.46 (alpha 0.72). vLLM's own metrics for the Qwen3.5/3.6-27B MTP head report more: mean
  acceptance length 1.9 / 2.4 / 2.8 at k = 1 / 2 / 3 greedy (vLLM 0.26, Qwen3.6-27B AWQ,
  github.com/kyuz0/amd-strix-halo-vllm-toolboxes/issues/53); per-position acceptance 0.92, 0.84, 0.65 for
  the first three draft positions (vLLM 0.20.1, Qwen3.6-27B, github.com/noonghunna/club-3090/issues/105,
  i.e. ~3.4 tokens per step at k = 3) and 0.96, 0.86, 0.82 (vLLM nightly,
  github.com/noonghunna/qwen36-27b-single-3090/issues/1). aiconfigurator's 1.60x at k = 3 with k = 1 in
  agreement is what ~1.9 tokens per step give -- the k = 1 acceptance length -- which these
  measurements contradict for this model family.
* What the model leaves out is a per-step cost of speculation beyond the draft's weights (scheduling,
  rejection sampling, the draft pass's launches): measured wall-clock gains at k = 3-4 sit below what the
  acceptance lengths alone give -- 1.48x at 2.8 tokens per step on a bandwidth-poor iGPU (the Strix Halo
  issue above), +84% at k = 4 and +52% at k = 2 on an RTX PRO 6000 with NVFP4 weights (vLLM 0.27.1,
  github.com/sudoingX/qwen38-mtp/pull/11, the successor model with the same architecture). The share of
  that cost falls as the weight read grows, so a BF16 27B on an H100 (~20 ms of weight reads per step) is
  closer to the acceptance bound than those setups; no public H100 measurement of this model at k = 3 was
  found. The batch-1 gain at k = 3 is therefore an upper bound, within the stated +-25% of the published
  points but likely on its high side for fast GPUs with small weights, and the crossover batch is
  within the stated factor of ~2. k = 1-2 is what ``recommend`` chooses whenever k = 3 is not clearly
  better, and MTP302 keeps k <= 3.

Why the DeepSeek trend is not fixed (checked; each candidate term from the catalog moves batch 32 *up*):
with TP8 and no DP attention each GPU keeps the whole MLA latent cache (576 elements per token per layer:
``kv_lora_rank`` 512 + ``qk_rope_head_dim`` 64 in DeepSeek-V3's ``config.json``) and 16 of the 128 query heads, so the attention of a verify pass over 4 tokens does about
121 FLOP per KV byte (BF16) -- under the H200's ridge with these efficiencies (~155) -- and reads the cache
once, like the plain step: the read dilutes the verify cost (batch 32 goes to 1.94x at 4k context, 2.10x at
16k), and it would also move the BF16 27B on an H100 at k = 1, 2 past 256 concurrent sequences (the seed's "disabled"
verdict). The MoE GEMMs stay memory-bound too (~4 tokens per expert at batch 32 even in 64-row tiles:
~128 FLOP/byte against an FP8 ridge of ~310), and the MTP layer's own expert union makes drafting cheaper
at batch, not dearer. What remains is the uniform-routing union itself: the plain step already reads 64% of
the experts at batch 32 and all of them by batch 128, so the MoE penalty fades and the curve climbs towards
E / (1 + k c) until the maths binds (~2800 tokens per step). A fixed per-step cost (SGLang PR #3582: 77 tok/s
at batch 1 with MTP on 8x H200, ~20 ms a step against ~1.2 ms of weight reads) flattens the dip but not
the climb. The 1.5x at batch 32 is therefore within the stated error but not explained by this model.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from functools import lru_cache
from itertools import islice

from mtplint.catalogs import SHIPPED, Catalogs
from mtplint.hardware import Gpu
from mtplint.records import FrozenRecord
from mtplint.tuner.sizes import ModelSizes, WeightFormat, model_sizes, weight_format

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

    from mtplint.models import ModelInfo
    from mtplint.pipeline import LaunchReport

#: acceptance per position when the catalog has no figure for the model: a round figure below the
#: 85-90% DeepSeek-V3 reports for its MTP head (arXiv:2412.19437 §5.4.3)
DEFAULT_ACCEPTANCE = 0.8
#: draft cost when unknown: Leviathan et al. report c < 0.05 for their drafts
DEFAULT_DRAFT_COST = 0.05
#: the largest batch the curve is followed to
MAX_BATCH = 1024
#: each later draft position is accepted this much less often than the one before: an MTP head is one
#: layer run k times on its own output (vLLM warns that k > 1 "may result in lower acceptance rate",
#: ``vllm/config/speculative.py``). The value is an assumption (D); with it the published speed-ups below are reproduced
#: within the stated error.
ACCEPTANCE_DECAY = 0.9
MIB = 1024**2


def tokens_per_step(acceptance: float, k: int) -> float:
    """Expected tokens a verify step emits: 1 + a1 + a1 a2 + ..., with a_i = acceptance x decay^(i-1)."""
    total, reach = 1.0, 1.0
    for position in range(k):
        reach *= min(1.0, acceptance * ACCEPTANCE_DECAY**position)
        total += reach
    return total


class Kernels(FrozenRecord):
    """How close an engine's decode kernels get to the GPU's peaks, and how it drafts."""

    __slots__ = ("engine", "bandwidth", "compute", "compute_quantised", "overlapped", "drafts_per_sequence",
                 "all_reduce_s")
    engine: Final[str]
    #: share of the datasheet bandwidth a decode step reaches
    bandwidth: Final[float]
    #: share of the dense BF16 (or FP8) tensor rate the GEMMs reach, full-precision weights
    compute: Final[float]
    #: the same for weight-only quantised formats (dequantisation inside the GEMM)
    compute_quantised: Final[float]
    #: memory and maths overlap (roofline ``max``) rather than add up
    overlapped: Final[bool]
    #: drafts one sequence at a time rather than the whole batch at once
    drafts_per_sequence: Final[bool]
    #: seconds of one all-reduce between tensor-parallel GPUs (two per layer)
    all_reduce_s: Final[float]

    def __init__(self, engine: str, bandwidth: float, compute: float, compute_quantised: float, overlapped: bool,
                 drafts_per_sequence: bool, all_reduce_s: float = 15e-6) -> None:
        self.engine = engine
        self.bandwidth = bandwidth
        self.compute = compute
        self.compute_quantised = compute_quantised
        self.overlapped = overlapped
        self.drafts_per_sequence = drafts_per_sequence
        self.all_reduce_s = all_reduce_s


#: Efficiencies (D, see the notes): vLLM/SGLang reach ~80% of HBM/GDDR bandwidth in decode and ~60%
#: of the dense tensor rate in decode-shaped GEMMs (Marlin-style 4-bit kernels ~40%). llama.cpp's
#: CUDA backend: llama-batched-bench on an RTX 3090 / 4090 (8B Q4_0) shows the step time growing by
#: ~10% / ~6% per extra sequence, i.e. ~27% of the BF16 rate spent per token on top of the weight read.
KERNELS: dict[str, Kernels] = {
    "vllm": Kernels("vllm", bandwidth=0.8, compute=0.6, compute_quantised=0.4, overlapped=True,
                    drafts_per_sequence=False),
    "sglang": Kernels("sglang", bandwidth=0.8, compute=0.6, compute_quantised=0.4, overlapped=True,
                      drafts_per_sequence=False),
    "llama.cpp": Kernels("llama.cpp", bandwidth=0.75, compute=0.27, compute_quantised=0.27, overlapped=False,
                         drafts_per_sequence=True),
    "mlx": Kernels("mlx", bandwidth=0.75, compute=0.3, compute_quantised=0.3, overlapped=False,
                   drafts_per_sequence=False),
}


def kernels_for(engine: str | None, weights: WeightFormat | None = None) -> Kernels:
    """The engine's kernels; without an engine, GGUF weights mean llama.cpp and anything else vLLM."""
    if engine is None:
        engine = "llama.cpp" if weights is not None and weights.label.startswith("GGUF") else "vllm"
    return KERNELS.get(engine, KERNELS["vllm"])


class Crossover(FrozenRecord):
    """Where MTP stops paying as the batch grows, for one GPU, engine, weight format and depth."""

    __slots__ = ("gpu", "draft_tokens", "weights", "engine", "knee_tokens", "batch", "gain_at_one", "acceptance",
                 "acceptance_known", "tensor_parallel", "verify_tokens", "curve", "model", "losses")
    gpu: Final[Gpu]
    draft_tokens: Final[int]
    weights: Final[WeightFormat]
    engine: Final[str]
    #: tokens per forward step where decode stops being memory-bound (with the engine's efficiencies)
    knee_tokens: Final[float]
    #: largest batch at which MTP still pays (0: not even at batch 1)
    batch: Final[int]
    #: expected decode speed-up at batch 1 (1.25 = +25%)
    gain_at_one: Final[float]
    acceptance: Final[float]
    acceptance_known: Final[bool]
    tensor_parallel: Final[int]
    #: tokens verified per sequence when not ``draft_tokens + 1`` (tree drafting)
    verify_tokens: Final[int | None]
    #: speed-up at batch 1, 2, ...: from :func:`crossover`, up to twice the crossover (at least 16
    #: points) and past the last change of sign; from :func:`crossover_below`, up to the end of the
    #: losing range holding the concurrency asked about
    curve: Final[tuple[float, ...]]
    model: Final[ModelSizes | None]
    #: the batch ranges (first, last; both included) where the speed-up is below 1, in order, over
    #: batch 1 .. :data:`MAX_BATCH` (:func:`crossover_below`: up to the end of the range holding the
    #: concurrency asked about); a last range ending at :data:`MAX_BATCH` goes on as far as the curve
    #: was followed
    losses: Final[tuple[tuple[int, int], ...]]

    def __init__(self, gpu: Gpu, draft_tokens: int, weights: WeightFormat, engine: str, knee_tokens: float,
                 batch: int, gain_at_one: float, acceptance: float, acceptance_known: bool,
                 tensor_parallel: int = 1, verify_tokens: int | None = None, curve: tuple[float, ...] = (),
                 model: ModelSizes | None = None, losses: tuple[tuple[int, int], ...] = ()) -> None:
        self.gpu = gpu
        self.draft_tokens = draft_tokens
        self.weights = weights
        self.engine = engine
        self.knee_tokens = knee_tokens
        self.batch = batch
        self.gain_at_one = gain_at_one
        self.acceptance = acceptance
        self.acceptance_known = acceptance_known
        self.tensor_parallel = tensor_parallel
        self.verify_tokens = verify_tokens
        self.curve = curve
        self.model = model
        self.losses = losses

    @property
    def spec_tokens(self) -> int:
        """``draft_tokens`` under the name of the tuner's original usage (``forge.mtp``)."""
        return self.draft_tokens

    @property
    def crossover_batch_size(self) -> int:
        """``batch``: MTP pays at every batch from 1 up to this one (``losses`` has the rest)."""
        return self.batch

    def loses_at(self, batch: int) -> bool:
        """Whether MTP is slower than plain decoding at ``batch`` concurrent sequences (past
        :data:`MAX_BATCH`: whether the last range runs to the end of the followed curve)."""
        position = min(batch, MAX_BATCH)
        return any(first <= position <= last for first, last in self.losses)

    def losing_range(self, batch: int) -> tuple[int, int] | None:
        """The losing range holding ``batch``, or None when MTP pays there."""
        position = min(batch, MAX_BATCH)
        return next(((first, last) for first, last in self.losses if first <= position <= last), None)

    def speedup_at(self, batch: int) -> float:
        """The speed-up at ``batch`` (recomputed past the stored curve)."""
        if 1 <= batch <= len(self.curve):
            return self.curve[batch - 1]
        return _Model(self.gpu, self.model, self.weights, kernels_for(self.engine), self.tensor_parallel,
                      self.acceptance).speedup(self.draft_tokens, batch, self.verify_tokens)


def knee_tokens(gpu: Gpu, weights: WeightFormat, engine: str | None = None) -> float:
    """n*: tokens per step at which decode turns compute-bound for these weights on this GPU."""
    kernels = kernels_for(engine, weights)
    flops = _flops(gpu, weights, kernels)
    return flops * weights.bytes_per_param / (2 * gpu.bandwidth_gbs * 1e9 * kernels.bandwidth)


def _flops(gpu: Gpu, weights: WeightFormat, kernels: Kernels) -> float:
    """Usable FLOP/s for these weights: FP8 weights on FP8 tensor cores run at the FP8 rate."""
    fp8_rate = getattr(gpu, "fp8_tflops", None) or gpu.bf16_tflops * 2
    if weights.fp8 and gpu.fp8:
        return fp8_rate * 1e12 * kernels.compute
    quantised = weights.bytes_per_param < 2 and not weights.fp8
    return gpu.bf16_tflops * 1e12 * (kernels.compute_quantised if quantised else kernels.compute)


class _Model:
    """Step times for one GPU, model, weight format and engine (see the module docstring)."""

    def __init__(self, gpu: Gpu, sizes: ModelSizes | None, weights: WeightFormat, kernels: Kernels,
                 tensor_parallel: int, acceptance: float) -> None:
        self.gpu, self.weights, self.kernels = gpu, weights, kernels
        self.tensor_parallel = max(1, tensor_parallel)
        self.acceptance = acceptance
        # a model the catalog cannot size is taken as a dense 8B: the curve's shape depends on the
        # ratio of the terms, which for dense models is set by the GPU and the weight format alone
        self.active = (sizes.active_params_b if sizes else 8.0) * 1e9
        self.total = (sizes.params_b if sizes else 8.0) * 1e9
        self.experts = sizes.experts if sizes else None
        self.state = (sizes.recurrent_state_mib if sizes else 0.0) * MIB
        self.layers = getattr(sizes, "layers", None) or 48
        self.draft_cost = sizes.draft_cost if sizes and sizes.draft_cost is not None else DEFAULT_DRAFT_COST
        self.bandwidth = gpu.bandwidth_gbs * 1e9 * kernels.bandwidth * self.tensor_parallel
        self.flops = _flops(gpu, weights, kernels) * self.tensor_parallel

    def weight_bytes(self, tokens: int) -> float:
        b = self.weights.bytes_per_param
        if self.experts is None:
            return self.active * b
        e = self.experts
        routed_active = self.active * e.routed_share
        shared = self.active - routed_active
        distinct = e.count * (1 - (1 - e.top_k / e.count) ** tokens)
        routed = min(routed_active * distinct / e.top_k, self.total - shared)
        return (shared + routed) * b

    def step(self, tokens: int, sequences: int, draft_tokens: int = 0) -> float:
        """Seconds for one target forward pass over ``tokens`` tokens of ``sequences`` sequences."""
        # only the extra state copies a verify pass writes: the read and write every step does anyway
        # is per-sequence traffic common to both passes, left out like the KV read (see the docstring)
        state = sequences * self.state * draft_tokens
        memory = (self.weight_bytes(tokens) + state) / self.bandwidth
        compute = 2 * self.active * tokens / self.flops
        busy = max(memory, compute) if self.kernels.overlapped else memory + compute
        comms = 2 * self.layers * self.kernels.all_reduce_s if self.tensor_parallel > 1 else 0.0
        return busy + comms

    def tokens_per_step(self, k: int) -> float:
        return tokens_per_step(self.acceptance, k)

    def speedups(self, k: int, verify_tokens: int | None = None) -> Iterator[float]:
        """``speedup(k, batch, verify_tokens)`` for batch 1, 2, ... :data:`MAX_BATCH`, to the same
        bits: :meth:`step` and :meth:`weight_bytes` written out in the loop (the same sums in the same
        order), with what does not depend on the batch worked out once. A curve takes up to a
        thousand points and a tree's launches need a few hundred curves: calls were most of that.

        The whole numbers (the batch, k, the expert counts) enter as floats and ``max``/``min`` of
        two values as conditionals: an int meets a float in Python as its exact double, and
        ``max(a, b)`` is ``b if b > a else a`` (``min``: ``b if b < a else a``), so every operation
        is the one :meth:`step` does on the same doubles, without the mixed-type dispatch and the
        argument parsing of the built-ins at each point (most of a point's cost)."""
        bytes_per_param = self.weights.bytes_per_param
        active, state, bandwidth, flops = self.active, self.state, self.bandwidth, self.flops
        overlapped = self.kernels.overlapped
        comms = 2 * self.layers * self.kernels.all_reduce_s if self.tensor_parallel > 1 else 0.0
        twice_active = 2 * active
        experts = self.experts
        dense_bytes = active * bytes_per_param
        count = top_k = 0.0
        routed_active = shared = unrouted = cap = 0.0
        if experts is not None:
            count, top_k = float(experts.count), float(experts.top_k)
            routed_active = active * experts.routed_share
            shared = active - routed_active
            unrouted = 1 - experts.top_k / experts.count
            cap = self.total - shared

        emitted = self.tokens_per_step(k)
        draft_tokens = float(k)
        verified = float(verify_tokens or k + 1)
        draft_cost = self.draft_cost
        per_sequence = self.kernels.drafts_per_sequence
        single = self.step(1, 1) if per_sequence else 0.0
        batch_draft = k * draft_cost
        # a plain step keeps no draft state; a dense model reads the same weights at every batch
        plain_memory = dense_bytes / bandwidth
        verify_weights = dense_bytes
        for batch in map(float, range(1, MAX_BATCH + 1)):
            tokens = batch * verified
            if experts is not None:
                routed = routed_active * (count * (1.0 - unrouted ** batch)) / top_k
                plain_memory = (shared + (cap if cap < routed else routed)) * bytes_per_param / bandwidth
                routed = routed_active * (count * (1.0 - unrouted ** tokens)) / top_k
                verify_weights = (shared + (cap if cap < routed else routed)) * bytes_per_param
            compute = twice_active * batch / flops
            plain = ((compute if compute > plain_memory else plain_memory) if overlapped
                     else plain_memory + compute) + comms
            memory = (verify_weights + batch * state * draft_tokens) / bandwidth
            compute = twice_active * tokens / flops
            verify = ((compute if compute > memory else memory) if overlapped else memory + compute) + comms
            drafting = batch * draft_tokens * draft_cost * single if per_sequence else batch_draft * plain
            yield emitted * plain / (verify + drafting)

    def speedup(self, k: int, batch: int, verify_tokens: int | None = None) -> float:
        plain = self.step(batch, batch)
        verify = self.step(batch * (verify_tokens or k + 1), batch, k)
        if self.kernels.drafts_per_sequence:
            drafting = batch * k * self.draft_cost * self.step(1, 1)
        else:
            drafting = k * self.draft_cost * plain
        return self.tokens_per_step(k) * plain / (verify + drafting)


def _acceptance(sizes: ModelSizes | None, acceptance: float | None) -> tuple[float, bool]:
    if acceptance is not None:
        return acceptance, True
    if sizes is not None and sizes.acceptance is not None:
        return sizes.acceptance, True
    return DEFAULT_ACCEPTANCE, False


def resolve_gpu(gpu: str | Gpu, catalogs: Catalogs = SHIPPED) -> tuple[Gpu, int | None]:
    """A GPU of ``catalogs`` and the count written after it (``rtx-4090x2``); ValueError names close
    matches."""
    if isinstance(gpu, Gpu):
        return gpu, None
    found, count, name = catalogs.parse_gpu_spec(gpu)
    if found is None:
        names = sorted({g.id for g in catalogs.gpus()})
        close = catalogs.close_gpu_ids(name)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"unknown GPU {gpu!r}{hint} (known: {', '.join(names)})")
    return found, count


def resolve_model(model: str, catalogs: Catalogs = SHIPPED) -> ModelInfo:
    """The entry of ``catalogs`` for a repo id or path; ValueError names close catalog entries."""
    info = catalogs.find_model(model)
    if info is None:
        import difflib  # noqa: PLC0415 - an error's hint only: the rules load this module on every run

        ids = catalogs.model_ids()
        base = model.rsplit("/", 1)[-1].lower()
        close = difflib.get_close_matches(base, ids, n=3, cutoff=0.4)
        hint = f"; close catalog entries: {', '.join(close)}" if close else ""
        raise ValueError(f"unknown model {model!r}: no entry of mtplint's model catalog matches it{hint} "
                         f"(catalogued: {', '.join(ids)})")
    return info


def _named(gpu: Gpu | str, model: ModelSizes | str | None, weights: WeightFormat | None,
           tensor_parallel: int, catalogs: Catalogs) -> tuple[Gpu, ModelSizes | None, WeightFormat | None, int]:
    """GPU and model given by name (``"rtx-3090"``, ``"rtx-4090x2"``, ``"Qwen/Qwen3.6-27B-FP8"``) as
    catalog objects; a model name also gives the weight format (unless ``weights`` is given) and a
    GPU count the tensor-parallel size (unless ``tensor_parallel`` is more than 1)."""
    count = None
    if isinstance(gpu, str):
        gpu, count = resolve_gpu(gpu, catalogs)
    if isinstance(model, str):
        name = model
        model = model_sizes(resolve_model(name, catalogs).id, catalogs)
        weights = weights or weight_format(name, None, model)
    return gpu, model, weights, tensor_parallel if tensor_parallel > 1 else count or 1


def speedup(gpu: Gpu | str, model: ModelSizes | str | None, k: int, batch: int, weights: WeightFormat | None = None,
            *, engine: str | None = None, acceptance: float | None = None, tensor_parallel: int = 1,
            verify_tokens: int | None = None, catalogs: Catalogs = SHIPPED) -> float:
    """Expected decode speed-up of MTP with ``k`` draft tokens at ``batch`` concurrent sequences.

    ``gpu`` and ``model`` are catalog objects or names (see :func:`crossover`); ``verify_tokens``:
    tokens verified per sequence when the drafts form a tree (default ``k + 1``)."""
    if isinstance(gpu, str) or isinstance(model, str):
        gpu, model, weights, tensor_parallel = _named(gpu, model, weights, tensor_parallel, catalogs)
    form = weights or weight_format(None, None, model)
    alpha, _ = _acceptance(model, acceptance)
    return _Model(gpu, model, form, kernels_for(engine, form), tensor_parallel, alpha).speedup(
        k, max(1, batch), verify_tokens)


def crossover(gpu: Gpu | str, model: ModelSizes | str | None, k: int, weights: WeightFormat | None = None, *,
              engine: str | None = None, acceptance: float | None = None, tensor_parallel: int = 1,
              verify_tokens: int | None = None, catalogs: Catalogs = SHIPPED) -> Crossover:
    """The crossover batch, the losing ranges, the batch-1 gain and the speed-up curve for ``k``
    draft tokens (``verify_tokens`` per sequence when the drafts form a tree, default ``k + 1``).

    ``gpu`` is a catalog :class:`~mtplint.hardware.Gpu` or its name (``"rtx-3090"``; ``"h100-sxmx4"``
    also sets the tensor-parallel size); ``model`` the catalog's :class:`ModelSizes`, a model name
    (``"Qwen/Qwen3.6-27B-FP8"``: the weight format comes from it unless ``weights`` is given) or None
    (a dense 8B). Raises ValueError for a name the catalogs do not know."""
    if isinstance(gpu, str) or isinstance(model, str):
        gpu, model, weights, tensor_parallel = _named(gpu, model, weights, tensor_parallel, catalogs)
    return _crossover(gpu, model, k, weights, engine=engine, acceptance=acceptance, tensor_parallel=tensor_parallel,
                      verify_tokens=verify_tokens)


# a pure function of immutable inputs; a tree's launches share a few GPU/model/k combinations
@lru_cache(maxsize=1024)
def _crossover(gpu: Gpu, model: ModelSizes | None, k: int, weights: WeightFormat | None = None, *,
               engine: str | None = None, acceptance: float | None = None, tensor_parallel: int = 1,
               verify_tokens: int | None = None) -> Crossover:
    form = weights or weight_format(None, None, model)
    alpha, known = _acceptance(model, acceptance)
    kernels = kernels_for(engine, form)
    curve_model = _Model(gpu, model, form, kernels, tensor_parallel, alpha)
    # the whole curve: a dip below 1 can be followed by a gain again further out (MoE models)
    points = list(curve_model.speedups(k, verify_tokens))
    losses = losing_ranges(points)
    batch = losses[0][0] - 1 if losses else len(points)
    # what is stored for display and JSON: up to twice the first crossing (at least 16 points), and
    # past the last change of sign
    shown = max(16, 2 * batch + 1, losses[-1][0] + 1 if losses else 0)
    return Crossover(gpu=gpu, draft_tokens=k, weights=form, engine=kernels.engine,
                     knee_tokens=knee_tokens(gpu, form, kernels.engine), batch=batch, gain_at_one=points[0],
                     acceptance=alpha, acceptance_known=known, tensor_parallel=max(1, tensor_parallel),
                     verify_tokens=verify_tokens, curve=tuple(points[:shown]), model=model, losses=losses)


def losing_ranges(points: Sequence[float]) -> tuple[tuple[int, int], ...]:
    """The ranges of batches (1-based, both ends included) whose speed-up in ``points`` (batch 1
    first) is below 1."""
    ranges: list[tuple[int, int]] = []
    start: int | None = None
    for batch, gain in enumerate(points, start=1):
        if not gain >= 1:
            if start is None:
                start = batch
        elif start is not None:
            ranges.append((start, batch - 1))
            start = None
    if start is not None:
        ranges.append((start, len(points)))
    return tuple(ranges)


def losses_cell(result: Crossover) -> str:
    """The losing ranges in a table cell: ``"6+"``, ``"3-12,997+"``, ``"none"`` (none up to :data:`MAX_BATCH`)."""
    if not result.losses:
        return "none"
    return ",".join(f"{first}+" if last >= MAX_BATCH else str(first) if first == last else f"{first}-{last}"
                     for first, last in result.losses)


def losses_json(result: Crossover) -> list[list[int | None]]:
    """The losing ranges for JSON: ``[first, last]``, ``last`` null when the range runs on to the end
    of the followed curve."""
    return [[first, None if last >= MAX_BATCH else last] for first, last in result.losses]


def describe_losses(result: Crossover) -> str:
    """Where MTP loses, in words: ``"MTP loses from batch 6 on"``, ``"MTP loses at batch 5-12 and
    from 700 on"``, ``"MTP pays at every batch up to 1024"``."""
    if not result.losses:
        return f"MTP pays at every batch up to {MAX_BATCH}"
    parts = []
    for index, (first, last) in enumerate(result.losses):
        noun = "batch " if index == 0 else ""
        if last >= MAX_BATCH:
            parts.append(f"from {noun}{first} on")
        elif first == last:
            parts.append(f"at {noun}{first}")
        else:
            parts.append(f"at {noun}{first}-{last}")
    return "MTP loses " + " and ".join(parts)


def _report_curve(report: LaunchReport) -> tuple[Gpu, ModelSizes | None, int, WeightFormat, str, int, int | None] | None:
    """What the curve of one launch running MTP depends on: GPU, model, k, weight format, engine,
    tensor parallelism and tokens verified per sequence; None without a GPU identity or a resolved k."""
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
    info = report.catalogs.find_model(model_name) if isinstance(model_name, str) else None
    sizes = model_sizes(info.id if info else None, report.catalogs)
    tp = value("tensor_parallel")
    # SGLang with top-k > 1 drafts a tree: it verifies --speculative-num-draft-tokens per sequence, not k + 1
    topk, width = value("spec_topk"), value("spec_draft_tokens")
    tree = (isinstance(topk, int) and topk > 1 and isinstance(width, int) and not isinstance(width, bool)
            and width > k + 1)
    return (gpu, sizes, k, weight_format(model_name if isinstance(model_name, str) else None, value("quantization"), sizes),
            report.launch.engine, tp if isinstance(tp, int) and tp > 0 else 1, width if tree else None)


def crossover_for_report(report: LaunchReport) -> Crossover | None:
    """The crossover for one launch running MTP, or None without a GPU identity or a resolved k."""
    found = _report_curve(report)
    if found is None:
        return None
    gpu, sizes, k, form, engine, tp, verify = found
    return crossover(gpu, sizes, k, form, engine=engine, tensor_parallel=tp, verify_tokens=verify)


class _Gains:
    """One curve's speed-ups from batch 1, worked out only as far as someone has asked. The points
    are kept as C doubles (the same values, a quarter of the memory of a list of floats): a run
    over a large tree fills the cache of curves, each up to :data:`MAX_BATCH` points long."""

    __slots__ = ("points", "rest")

    def __init__(self, rest: Iterator[float]) -> None:
        self.points: array[float] = array("d")
        self.rest = rest

    def upto(self, limit: int) -> array[float]:
        """The points for batch 1 .. ``limit`` (at most :data:`MAX_BATCH`) worked out."""
        points = self.points
        if len(points) < limit:
            # the generator's points taken in one call, not one ``next`` a point
            points.extend(islice(self.rest, limit - len(points)))
        return points

    def through_loss(self, batch: int) -> array[float]:
        """The points up to ``batch`` and on to the end of the losing range holding it (or further)."""
        points = self.upto(batch)
        if points[-1] >= 1:
            return points
        # the generator stops at MAX_BATCH; a point that is no loss ends the range
        for point in self.rest:
            points.append(point)
            if point >= 1:
                break
        return points


# keyed on immutable inputs like crossover(); a curve only grows, and each point is what it always is.
# Only the curves followed for a loss are asked for (a paying concurrency is decided by its own point,
# see _crossover_below): most run to MAX_BATCH, some 9 KB each with their model and generator, so 128
# of them hold some 1.1 MB. The benchmark's deploy 10k tree asks 211 times for 130 distinct curves
@lru_cache(maxsize=128)
def _gains(gpu: Gpu, model: ModelSizes | None, k: int, weights: WeightFormat, engine: str, tensor_parallel: int,
           verify_tokens: int | None) -> _Gains:
    alpha, _ = _acceptance(model, None)
    curve_model = _Model(gpu, model, weights, kernels_for(engine, weights), tensor_parallel, alpha)
    return _Gains(curve_model.speedups(k, verify_tokens))


def crossover_below(report: LaunchReport, concurrency: int) -> Crossover | None:
    """:func:`crossover_for_report` when MTP loses *at* ``concurrency`` sequences -- the
    concurrency falls in one of its losing ranges -- else None (also without a GPU identity or a
    resolved k): what MTP301 asks. The curve is worked out up to the concurrency and, when it loses
    there, to the end of that losing range, not as far as :func:`crossover` follows it; ``losses``
    covers that stretch. ``batch`` (the first crossing) and ``gain_at_one`` are those of the full
    curve, and so is :meth:`Crossover.speedup_at` (past the points worked out it computes the point,
    to the same bits)."""
    found = _report_curve(report)
    if found is None:
        return None
    gpu, sizes, k, form, engine, tp, verify = found
    return _crossover_below(gpu, sizes, k, form, engine, tp, verify, concurrency)


def _crossover_below(gpu: Gpu, sizes: ModelSizes | None, k: int, form: WeightFormat, engine: str, tp: int,
                     verify: int | None, concurrency: int) -> Crossover | None:
    if concurrency < 1:
        return None
    position = min(concurrency, MAX_BATCH)
    alpha, known = _acceptance(sizes, None)
    kernels = kernels_for(engine, form)
    # where MTP pays at the concurrency (most launches), that point alone decides: _Model.speedup of
    # that batch is the curve's point to the same bits (the curve is that function written out),
    # and the cache of curves keeps those followed for a loss
    if _Model(gpu, sizes, form, kernels, tp, alpha).speedup(k, position, verify) >= 1:
        return None
    gains = _gains(gpu, sizes, k, form, engine, tp, verify)
    # the cached curve may run further than this launch asked: it is cut at the end of the loss
    points = gains.through_loss(position)
    end = next((batch for batch in range(position, len(points)) if points[batch] >= 1), len(points))
    points = points[:end]
    losses = losing_ranges(points)
    return Crossover(gpu=gpu, draft_tokens=k, weights=form, engine=kernels.engine,
                     knee_tokens=knee_tokens(gpu, form, kernels.engine), batch=losses[0][0] - 1,
                     gain_at_one=points[0], acceptance=alpha, acceptance_known=known, tensor_parallel=max(1, tp),
                     verify_tokens=verify, curve=tuple(points), model=sizes, losses=losses)


__all__ = ["KERNELS", "MAX_BATCH", "Crossover", "Kernels", "crossover", "crossover_below", "crossover_for_report",
           "describe_losses", "knee_tokens", "losing_ranges", "losses_cell", "losses_json", "speedup"]
