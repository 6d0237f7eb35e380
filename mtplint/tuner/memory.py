"""Resident GPU memory of a launch with speculative decoding, term by term (MTP201).

The model (all terms in GiB, summed over the tensor-parallel group):

* **budget** = GPU memory as ``nvidia-smi`` reports it (MiB, ECC taken out; ``mtplint/data/gpus.json``)
  x the engine's memory fraction (vLLM ``--gpu-memory-utilization``, SGLang ``--mem-fraction-static``;
  llama.cpp has none: 1.0) x TP size (llama.cpp: the GPU count it splits layers over).
* **weights** = parameters x bytes per parameter of the served format (:mod:`mtplint.tuner.sizes`).
* **MTP head** = MTP parameters x the same bytes per parameter (vLLM's drafter copies the target's
  quantisation when unset: vLLM 0.33.0 ``SpeculativeConfig.__post_init__``).
* **draft KV** = N sequences x C tokens x the MTP layer's KV bytes per token (vLLM registers the
  drafter's attention in the same pool; SGLang gives the draft pool the target's token capacity).
* **lookahead slots** = N x k x (main + MTP KV bytes per token): vLLM reserves ``num_lookahead_tokens
  = k`` slots per request (vLLM 0.33.0 ``vllm/config/vllm.py``).
* **recurrent state** (GDN hybrids only) = N x copies x state per sequence, copies = 1 + k on vLLM
  (``MambaSpec`` keeps ``num_speculative_blocks = k`` extra pages per request, vLLM 0.33.0
  ``vllm/v1/kv_cache_interface.py``), 1 + draft tokens on SGLang (per-draft-token SSM snapshots,
  ``python/sglang/srt/mem_cache/memory_pool.py``) plus 2 ping-pong
  slots with an ``extra_buffer`` strategy, 1 + n_max on llama.cpp (``n_rs_seq`` rollback snapshots).
* **CUDA graphs** = captured batch sizes x 2 MiB, SGLang's own reserve heuristic
  (``cuda_graph_max_bs * 2`` MiB, SGLang v0.5.9 ``server_args.py``); vLLM captures up to ``min(max_num_seqs*(1+k)*2, 512)``,
  SGLang up to ``--cuda-graph-max-bs`` (by GPU memory) capped at the request pool; llama.cpp: 0.

N is the maximum concurrency; C the *reference context* ``min(context per sequence, 4096)`` -- a
chat turn, not the worst case, so the draft KV term is what a loaded server actually holds.

What must stay free: the main model's KV cache needs room for one reference-context turn of every
sequence (at least 5% of the budget), plus 1 GiB for activations and the CUDA context. The launch is **tight** when ``budget - resident`` is below that.

Error: weights, KV and recurrent terms are exact arithmetic on config shapes (each model's
``config.json`` on Hugging Face, recorded in ``mtplint/data/models.json``), within
+-10% for quantised formats (bits per weight of a preset vary by tensor); CUDA graphs +-50%; the
activation reserve is flat (0.5-3 GiB in practice, growing with ``max_num_batched_tokens``). Overall
about +-1.5 GiB on a 24 GiB card, +-4 GiB on 80 GiB. Not modelled: vision encoders (Qwen3.5/3.6 are
VLMs; ``--language-model-only`` frees them), vLLM align-mode checkpoints, SGLang's VLM fraction
adjustment, the ``use_replayssm`` state saving.
"""

from __future__ import annotations

from mtplint.records import FrozenRecord, Record
from mtplint.tuner.sizes import (
    GIB,
    MIB,
    ModelSizes,
    WeightFormat,
    kv_bytes_per_element,
    model_sizes,
    weight_format,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

    from mtplint.hardware import Gpu
    from mtplint.pipeline import LaunchReport

#: tokens per sequence the draft KV / main KV floor is computed for
REFERENCE_CONTEXT = 4096
#: share of the budget the main KV cache needs at least, when one chat turn per sequence needs less
KV_FLOOR_SHARE = 0.05
#: activations, sampler buffers and the CUDA context
ACTIVATIONS_GIB = 1.0
#: per captured batch size (SGLang's reserve formula: ``cuda_graph_max_bs * 2`` MiB)
GRAPH_MIB_PER_SIZE = 2.0
#: vLLM's cap on the default CUDA-graph capture size, ``min(max_num_seqs x (1+k) x 2, cap)``
#: (``vllm/config/vllm.py``); 1024 on datacenter Blackwell
CAPTURE_CAP = 512
DATACENTER_BLACKWELL = ("b200",)
#: spec methods whose draft weights the catalog knows (the model's own MTP head, or none for ngram)
ESTIMATED_METHODS = ("mtp", "ngram")

TERM_LABELS = {
    "weights": "weights",
    "mtp_weights": "MTP head",
    "draft_kv": "draft KV",
    "lookahead": "lookahead slots",
    "recurrent": "recurrent state",
    "cuda_graphs": "CUDA graphs",
}


class MemoryInputs(FrozenRecord):
    """Everything a memory estimate depends on, as resolved from the launch or the tuner's options."""

    __slots__ = ("engine", "gpu", "sizes", "weights", "method", "draft_tokens", "max_sequences", "kv_bytes",
                 "fraction", "tensor_parallel", "context_per_sequence", "recurrent_copies", "graph_sizes",
                 "smallest")
    engine: Final[str]
    gpu: Final[Gpu]
    sizes: Final[ModelSizes]
    weights: Final[WeightFormat]
    method: Final[str]
    draft_tokens: Final[int]
    max_sequences: Final[int]
    kv_bytes: Final[float]
    fraction: Final[float]
    tensor_parallel: Final[int]
    context_per_sequence: Final[int]
    recurrent_copies: Final[int]
    graph_sizes: Final[int]
    #: ``max_sequences`` is the smallest concurrency the engine runs (one sequence), not a cap the
    #: launch sets: its cap is a default that only bounds admission (vLLM's ``max_num_seqs``)
    smallest: Final[bool]

    def __init__(self, engine: str, gpu: Gpu, sizes: ModelSizes, weights: WeightFormat, method: str,
                 draft_tokens: int, max_sequences: int, kv_bytes: float, fraction: float, tensor_parallel: int,
                 context_per_sequence: int, recurrent_copies: int, graph_sizes: int, smallest: bool = False) -> None:
        self.engine = engine
        self.gpu = gpu
        self.sizes = sizes
        self.weights = weights
        self.method = method
        self.draft_tokens = draft_tokens
        self.max_sequences = max_sequences
        self.kv_bytes = kv_bytes
        self.fraction = fraction
        self.tensor_parallel = tensor_parallel
        self.context_per_sequence = context_per_sequence
        self.recurrent_copies = recurrent_copies
        self.graph_sizes = graph_sizes
        self.smallest = smallest


class MemoryEstimate(Record):
    """GPU memory by term (weights, KV cache, activations, ...) against the budget the engine gets."""

    __slots__ = ("inputs", "terms", "budget")
    inputs: MemoryInputs
    #: term name (see TERM_LABELS) -> GiB
    terms: dict[str, float]
    budget: float

    def __init__(self, inputs: MemoryInputs, terms: dict[str, float] | None = None, budget: float = 0.0) -> None:
        self.inputs = inputs
        self.terms = terms if terms is not None else {}
        self.budget = budget

    @property
    def resident(self) -> float:
        return sum(self.terms.values())

    @property
    def left(self) -> float:
        """What is left for the main KV cache and activations."""
        return self.budget - self.resident

    @property
    def needed(self) -> float:
        """GiB that must stay free: a reference-context turn of main KV for every sequence admitted (at
        least :data:`KV_FLOOR_SHARE` of the budget), plus activations."""
        turns = self.inputs.max_sequences * self.main_kv_per_sequence
        return max(turns, self.budget * KV_FLOOR_SHARE) + ACTIVATIONS_GIB

    @property
    def tight(self) -> bool:
        return self.left < self.needed

    @property
    def main_kv_per_sequence(self) -> float:
        """GiB of main-model KV one sequence needs at the reference context."""
        tokens = min(self.inputs.context_per_sequence, REFERENCE_CONTEXT)
        return tokens * self.inputs.sizes.kv_bytes_per_token * self.inputs.kv_bytes / 2 / GIB

    def budget_text(self) -> str:
        i = self.inputs
        gpus = f" x {i.tensor_parallel} GPUs" if i.tensor_parallel > 1 else ""
        return f"{i.gpu.memory_mib} MiB ({i.gpu.id}) x {i.fraction:g}{gpus}"

    def terms_text(self) -> str:
        parts = []
        for name, gib in self.terms.items():
            label = TERM_LABELS[name]
            if name == "recurrent":
                i = self.inputs
                label += f" ({i.max_sequences} seqs x {i.recurrent_copies} copies x {i.sizes.recurrent_state_mib:g} MiB)"
            elif name == "weights":
                label += f" ({self.inputs.weights.label})"
            parts.append(f"{label} {gib:.1f}")
        return " + ".join(parts)


def estimate(inputs: MemoryInputs) -> MemoryEstimate:
    """The estimate for fully resolved inputs (see the module docstring for the model)."""
    sizes, k, n = inputs.sizes, inputs.draft_tokens, inputs.max_sequences
    kv_scale = inputs.kv_bytes / 2  # sizes are per token at BF16
    context = min(inputs.context_per_sequence, REFERENCE_CONTEXT)
    result = MemoryEstimate(inputs)
    result.budget = inputs.gpu.memory_mib * MIB * inputs.fraction * inputs.tensor_parallel / GIB
    result.terms["weights"] = sizes.params_b * 1e9 * inputs.weights.bytes_per_param / GIB
    if inputs.method == "mtp":
        result.terms["mtp_weights"] = sizes.mtp_params_b * 1e9 * inputs.weights.bytes_per_param / GIB
        result.terms["draft_kv"] = n * context * sizes.mtp_kv_bytes_per_token * kv_scale / GIB
    per_token = sizes.kv_bytes_per_token + (sizes.mtp_kv_bytes_per_token if inputs.method == "mtp" else 0)
    result.terms["lookahead"] = n * k * per_token * kv_scale / GIB
    if sizes.hybrid:
        result.terms["recurrent"] = n * inputs.recurrent_copies * sizes.recurrent_state_mib * MIB / GIB
    result.terms["cuda_graphs"] = inputs.graph_sizes * GRAPH_MIB_PER_SIZE * MIB / GIB
    return result


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _sglang_graph_max_bs(gpu: Gpu, tensor_parallel: int) -> int:
    """``--cuda-graph-max-bs`` default by GPU memory (SGLang v0.5.9 ``server_args.py`` L934-999)."""
    gib = gpu.memory_mib / 1024
    small_tp = tensor_parallel < 4
    if gib < 20:
        return 8
    if gib < 35:
        return 24 if small_tp else 80
    if gib < 60:
        return 32 if small_tp else 160
    if gib < 160:
        return 256 if small_tp else 512
    return 512


def estimate_memory(report: LaunchReport) -> MemoryEstimate | None:
    """The estimate for one launch, or None when something it needs is unknown: the GPU, the model's
    sizes (catalog), a draft whose size the catalog lacks (EAGLE, separate draft models), or an
    unresolved setting (k, concurrency, KV dtype, fraction, TP)."""
    gpu = report.hardware.gpu
    engine = report.launch.engine
    if gpu is None or engine not in ("vllm", "sglang", "llama.cpp"):
        return None
    effective = report.effective

    def value(name: str) -> Any:
        setting = effective.get(name)
        return None if setting is None or setting.unresolved else setting.value

    method = value("spec_method")
    if method not in ESTIMATED_METHODS:
        return None
    model_name = value("model")
    info = report.catalogs.find_model(model_name) if isinstance(model_name, str) else None
    sizes = model_sizes(info.id if info else None, report.catalogs)
    k, n = _int(value("spec_tokens")), _int(value("max_concurrency"))
    concurrency = effective.get("max_concurrency")
    # vLLM's max_num_seqs default (256/1024) is only a cap: the scheduler admits as many sequences as the
    # KV/state blocks left after profiling hold, so nothing that large is ever resident. The estimate is then
    # made at the smallest concurrency the engine runs, one sequence: a launch tight even there cannot start.
    # The CUDA graphs are still captured for the default cap.
    smallest = engine == "vllm" and (concurrency is None or concurrency.origin == "default")
    cap = n
    if smallest:
        n = 1
    kv_bytes = kv_bytes_per_element(value("kv_cache_dtype"))
    if sizes is None or k is None or n is None or kv_bytes is None:
        return None
    if engine == "llama.cpp":
        fraction: Any = 1.0
        tensor_parallel: int | None = report.hardware.count or 1
        ctx = _int(value("max_model_len"))
        context = (ctx // n) if ctx else (sizes.max_context or REFERENCE_CONTEXT)
    else:
        fraction = value("memory_fraction")
        tensor_parallel = _int(value("tensor_parallel"))
        context = _int(value("max_model_len")) or sizes.max_context or REFERENCE_CONTEXT
    if not isinstance(fraction, (int, float)) or not 0 < fraction <= 1 or tensor_parallel is None:
        return None

    graphs_on = value("cuda_graphs") is not False
    if engine == "vllm":
        copies = 1 + k
        graph_sizes = min((cap or n) * (1 + k) * 2, CAPTURE_CAP) if graphs_on else 0
    elif engine == "sglang":
        draft_tokens = _int(value("spec_draft_tokens")) or k + 1
        extra_buffer = str(value("mamba_strategy") or "").startswith("extra_buffer")
        copies = 1 + draft_tokens + (2 if extra_buffer else 0)
        options = report.parsed.options
        max_bs = options.get("cuda_graph_max_bs") or options.get("cuda_graph_max_bs_decode")
        cap = _int(max_bs.value) if max_bs is not None and not max_bs.unresolved else None
        graph_sizes = min(cap or _sglang_graph_max_bs(gpu, tensor_parallel), n) if graphs_on else 0
    else:
        copies = 1 + k
        graph_sizes = 0
    form = weight_format(model_name, value("quantization"), sizes)
    return estimate(MemoryInputs(
        engine=engine, gpu=gpu, sizes=sizes, weights=form, method=method, draft_tokens=k, max_sequences=n,
        kv_bytes=kv_bytes, fraction=float(fraction), tensor_parallel=tensor_parallel,
        context_per_sequence=max(context, 1), recurrent_copies=copies, graph_sizes=graph_sizes, smallest=smallest,
    ))
