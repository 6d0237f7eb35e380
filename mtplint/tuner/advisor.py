"""``recommend``: should this deployment run MTP, with how many draft tokens, and how to launch it.

The seed's "Optimize layer: qwen3.6-mtp" auto-tuner, on mtplint's own models:

* the speed-up comes from :mod:`mtplint.tuner.batching` (roofline + Leviathan acceptance; the
  module docstring states the model and its error: speed-ups within about +-25%, a factor of ~2 on
  the crossover batch);
* the memory check from :mod:`mtplint.tuner.memory` (the MTP201 estimate, term by term);
* the command from :mod:`mtplint.tuner.commands` (which lints clean with ``mtplint check``).

Decisions, in order:

1. **Refused** (no gain figure is meaningful): a model the catalog knows ships no MTP head (MTP105),
   or one for which that is not known; vLLM with a TurboQuant KV cache (MTP101, vLLM #40831); weights
   that do not fit the GPUs at all.
2. **Target batch**: 1 for a single user; ``concurrency`` (default :data:`DEFAULT_CONCURRENCY`) for
   several users -- the number of sequences decoding together at the busy hour.
3. **k** in 1 ... ``max_k`` (3 by default: every catalogued MTP head is one layer reused k times --
   vLLM warns k > 1 lowers acceptance, llama.cpp collapsed at n_max >= 4 on an RTX 4090, MTP302;
   Qwen's recipes use 1-3):

   - objective **throughput**: the k with the highest speed-up *at the target batch*; MTP on only if
     that speed-up is above 1 (aggregate tokens/s at that concurrency);
   - objective **latency**: the k with the highest speed-up *at batch 1* (the TPOT a user sees when
     the server is not saturated) among the ks whose crossover batch is still >= the target batch,
     so the busy hour is never slower than without MTP. For a single user both objectives agree.

4. **Memory**: the MTP201 estimate for the chosen k at the target concurrency; while it is tight, k
   steps down; if even k = 1 is tight MTP is off (the reason names the GiB).
"""

from __future__ import annotations

from enum import Enum

from mtplint.catalogs import SHIPPED, Catalogs
from mtplint.checks.catalog import load_catalog
from mtplint.hardware import Gpu
from mtplint.models import ModelInfo
from mtplint.records import FrozenRecord
from mtplint.settings import turboquant_kv
from mtplint.tuner.batching import (
    Crossover,
    crossover,
    describe_losses,
    losses_json,
    resolve_gpu,
    resolve_model,
)
from mtplint.tuner.commands import (
    ServeCommand,
    llama_mtp_command,
    sglang_mtp_command,
    vllm_mtp_command,
)
from mtplint.tuner.memory import (
    ACTIVATIONS_GIB,
    CAPTURE_CAP,
    DATACENTER_BLACKWELL,
    REFERENCE_CONTEXT,
    MemoryEstimate,
    MemoryInputs,
    _sglang_graph_max_bs,
    estimate,
)
from mtplint.tuner.sizes import (
    GIB,
    MIB,
    ModelSizes,
    kv_bytes_per_element,
    model_sizes,
    smaller_weights_advice,
    weight_format,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

#: concurrency assumed for a multi-user deployment when none is given
DEFAULT_CONCURRENCY = 64
#: the model the tuner advises on when none is named (the original tuner's, ``forge.mtp``)
DEFAULT_MODEL = "Qwen/Qwen3.6-27B"
#: one-layer MTP heads: more draft tokens than this lose acceptance (MTP302)
MAX_DRAFT_TOKENS = 3
ENGINES = ("vllm", "sglang", "llama.cpp")
#: vLLM's ``--gpu-memory-utilization`` (0.9 by default up to 0.32, 0.92 in 0.33): written into the
#: command so the estimate holds for every version
VLLM_MEMORY_FRACTION = 0.9
#: the ``--mem-fraction-static`` Qwen's SGLang recipes and SGLang's Qwen3.6 generator use
#: (``--mem-fraction-static 0.8`` in the Qwen3.6 recipe of https://github.com/sgl-project/sgl-cookbook); written into the command so the estimate does not depend on SGLang's
#: auto formula, which changed across versions
SGLANG_MEMORY_FRACTION = 0.8


class UseCase(str, Enum):
    SINGLE_USER = "single-user"
    MULTI_USER = "multi-user"


class Objective(str, Enum):
    LATENCY = "latency"
    THROUGHPUT = "throughput"
    # the names of the tuner's original usage (``forge.mtp``): aliases of the members above
    MINIMIZE_LATENCY = "latency"
    MAXIMIZE_THROUGHPUT = "throughput"


class Recommendation(FrozenRecord):
    """The tuner's answer; ``enable`` False with ``reason`` when MTP should stay off."""

    __slots__ = ("enable", "reason", "num_speculative_tokens", "expected_gain", "crossover", "batch", "memory",
                 "command", "env", "refused", "fits", "references", "engine", "engine_version", "gpu", "model",
                 "use_case", "objective", "gains", "notes")
    enable: Final[bool]
    reason: Final[str]
    #: k for the command (None when MTP is off)
    num_speculative_tokens: Final[int | None]
    #: speed-up factor at the target batch for the chosen k (or the best k when MTP is off);
    #: None when refused
    expected_gain: Final[float | None]
    #: the crossover for the chosen (or best) k
    crossover: Final[Crossover | None]
    #: the number of sequences decoding together the decision was made for
    batch: Final[int]
    memory: Final[MemoryEstimate | None]
    command: Final[tuple[str, ...]]
    env: Final[tuple[tuple[str, str], ...]]
    #: a blocked combination or a deployment that cannot run: no gain figure applies
    refused: Final[bool]
    #: False: the deployment as asked for does not fit the GPU, so the command (shown for reference,
    #: with MTP off) would not start either
    fits: Final[bool]
    references: Final[tuple[str, ...]]
    engine: Final[str]
    engine_version: Final[str]
    gpu: Final[str]
    model: Final[str]
    use_case: Final[UseCase]
    objective: Final[Objective]
    #: k -> speed-up at the target batch, for every k considered
    gains: Final[dict[int, float]]
    notes: Final[tuple[str, ...]]

    def __init__(self, enable: bool, reason: str, num_speculative_tokens: int | None, expected_gain: float | None,
                 crossover: Crossover | None, batch: int, memory: MemoryEstimate | None, command: tuple[str, ...],
                 env: tuple[tuple[str, str], ...] = (), refused: bool = False, fits: bool = True,
                 references: tuple[str, ...] = (), engine: str = "vllm", engine_version: str = "", gpu: str = "",
                 model: str = "", use_case: UseCase = UseCase.SINGLE_USER,
                 objective: Objective = Objective.LATENCY, gains: dict[int, float] | None = None,
                 notes: tuple[str, ...] = ()) -> None:
        self.enable = enable
        self.reason = reason
        self.num_speculative_tokens = num_speculative_tokens
        self.expected_gain = expected_gain
        self.crossover = crossover
        self.batch = batch
        self.memory = memory
        self.command = command
        self.env = env
        self.refused = refused
        self.fits = fits
        self.references = references
        self.engine = engine
        self.engine_version = engine_version
        self.gpu = gpu
        self.model = model
        self.use_case = use_case
        self.objective = objective
        self.gains = gains if gains is not None else {}
        self.notes = notes

    @property
    def serve_command(self) -> ServeCommand:
        return ServeCommand(self.engine, self.command, self.env, self.engine_version)

    @property
    def command_line(self) -> str:
        """The command for a POSIX shell (environment assignments first)."""
        return self.serve_command.shell()

    def to_json(self) -> dict[str, Any]:
        cross = self.crossover
        return {
            "enable": self.enable,
            "refused": self.refused,
            "reason": self.reason,
            "num_speculative_tokens": self.num_speculative_tokens,
            "expected_gain": None if self.expected_gain is None else round(self.expected_gain, 3),
            "batch": self.batch,
            "crossover": None if cross is None else {
                "k": cross.draft_tokens, "batch": cross.batch, "gain_at_one": round(cross.gain_at_one, 3),
                "losing_ranges": losses_json(cross),
                "acceptance": cross.acceptance, "acceptance_known": cross.acceptance_known,
                "weights": cross.weights.label, "knee_tokens": round(cross.knee_tokens, 1),
            },
            "gains": {str(k): round(v, 3) for k, v in self.gains.items()},
            "memory": None if self.memory is None else {
                "budget_gib": round(self.memory.budget, 2), "left_gib": round(self.memory.left, 2),
                "needed_gib": round(self.memory.needed, 2), "tight": self.memory.tight,
                "terms_gib": {name: round(gib, 2) for name, gib in self.memory.terms.items()},
            },
            "engine": self.engine, "engine_version": self.engine_version, "gpu": self.gpu, "model": self.model,
            "use_case": self.use_case.value, "objective": self.objective.value,
            "fits": self.fits, "command": list(self.command), "env": dict(self.env),
            "command_line": self.command_line,
            "references": list(self.references), "notes": list(self.notes),
        }


# --- lookups ------------------------------------------------------------------------------------

def _rule_urls(code: str) -> tuple[str, ...]:
    rule = load_catalog().get(code)
    if rule is None:
        return ()
    return tuple(str(ref["url"]) for ref in rule.docs.get("references", ()) if ref.get("url"))


def _rule_summary(code: str) -> str:
    rule = load_catalog().get(code)
    return rule.summary if rule is not None else ""


# --- memory -------------------------------------------------------------------------------------

class _Deployment(FrozenRecord):
    __slots__ = ("engine", "gpu", "sizes", "model", "quantization", "kv_dtype", "tensor_parallel", "sequences",
                 "context")
    engine: Final[str]
    gpu: Final[Gpu]
    sizes: Final[ModelSizes]
    model: Final[str]
    quantization: Final[str | None]
    kv_dtype: Final[str | None]
    tensor_parallel: Final[int]
    sequences: Final[int]
    context: Final[int | None]

    def __init__(self, engine: str, gpu: Gpu, sizes: ModelSizes, model: str, quantization: str | None,
                 kv_dtype: str | None, tensor_parallel: int, sequences: int, context: int | None) -> None:
        self.engine = engine
        self.gpu = gpu
        self.sizes = sizes
        self.model = model
        self.quantization = quantization
        self.kv_dtype = kv_dtype
        self.tensor_parallel = tensor_parallel
        self.sequences = sequences
        self.context = context

    def memory(self, k: int) -> MemoryEstimate | None:
        kv_bytes = kv_bytes_per_element(self.kv_dtype or "auto")
        if kv_bytes is None:
            return None
        sizes, n = self.sizes, self.sequences
        context = self.context or sizes.max_context or REFERENCE_CONTEXT
        if self.engine == "vllm":
            fraction, copies, graphs = VLLM_MEMORY_FRACTION, 1 + k, min(n * (1 + k) * 2, 512)
        elif self.engine == "sglang":
            # per-draft-token SSM snapshots plus the two extra_buffer slots a hybrid's radix cache keeps
            fraction = SGLANG_MEMORY_FRACTION
            copies = 1 + (k + 1 if k else 0) + (2 if sizes.hybrid and k else 0)
            graphs = min(_sglang_graph_max_bs(self.gpu, self.tensor_parallel), n)
        else:
            fraction, copies, graphs = 1.0, 1 + k, 0
            context = max(1, context // n) if self.context else context
        return estimate(MemoryInputs(
            engine=self.engine, gpu=self.gpu, sizes=sizes,
            weights=weight_format(self.model, self.quantization, sizes), method="mtp" if k else "none",
            draft_tokens=k, max_sequences=n, kv_bytes=kv_bytes, fraction=fraction,
            tensor_parallel=self.tensor_parallel, context_per_sequence=max(context, 1),
            recurrent_copies=copies, graph_sizes=graphs,
        ))

    def context_that_fits(self, memory: MemoryEstimate) -> int:
        """Tokens of main-model KV the memory left after the resident terms and activations holds."""
        kv_bytes = memory.inputs.kv_bytes / 2
        per_token = (self.sizes.kv_bytes_per_token
                     + (self.sizes.mtp_kv_bytes_per_token if memory.inputs.method == "mtp" else 0)) * kv_bytes
        if per_token <= 0:
            return self.sizes.max_context or 0
        free = (memory.left - ACTIVATIONS_GIB) * GIB
        return max(0, int(free // per_token))


def _round_context(tokens: int) -> int:
    """Down to a multiple of 1024 (engines' block sizes divide it)."""
    return tokens // 1024 * 1024


# --- the recommendation -------------------------------------------------------------------------

def recommend(*, use_case: UseCase | str = UseCase.SINGLE_USER, objective: Objective | str = Objective.LATENCY,
              gpu: str | Gpu | None = None, gpu_id: str | Gpu | None = None, model: str | None = None,
              engine: str | None = None, concurrency: int | None = None, kv_cache_dtype: str | None = None,
              quantization: str | None = None, tensor_parallel: int | None = None,
              max_model_len: int | None = None, engine_version: str | None = None,
              max_k: int = MAX_DRAFT_TOKENS, engine_versions: dict[str, str] | None = None,
              catalogs: Catalogs = SHIPPED) -> Recommendation:
    """Whether to run MTP for this deployment, with which k, the expected gain and the serve command.

    ``gpu`` (or ``gpu_id``, its name in the tuner's original usage) is a catalog id or name
    (``rtx-4090``, ``h100-sxm``; ``rtx-4090x2`` sets the tensor-parallel size to 2 unless
    ``tensor_parallel`` is given). ``model`` defaults to :data:`DEFAULT_MODEL`. ``concurrency`` is the
    number of sequences decoding together for ``multi-user`` (default :data:`DEFAULT_CONCURRENCY`);
    ``single-user`` is batch 1. ``engine`` None picks one: vLLM, unless the model only fits the GPUs
    as a 4-bit GGUF (llama.cpp). When the checkpoint named does not fit but the catalog knows a
    smaller published one (the FP8 release, an MTP-keeping GGUF), the command uses that and a note
    says so; llama.cpp always gets a GGUF. A TurboQuant KV-cache dtype (vLLM's only) keeps MTP off
    on every engine, saying why. ``engine_version`` is the version of the engine served;
    ``engine_versions`` (a configuration's ``engine-versions``) gives one per engine for an engine
    the tuner chooses, and ``engine_version`` wins over it. GPUs and models are looked up in
    ``catalogs`` (a configuration's, :func:`mtplint.config.command_configuration`). Raises ValueError
    for an unknown GPU, model, engine, use case or objective, or for no GPU.
    """
    use = UseCase(use_case)
    goal = Objective(objective)
    card_spec = _gpu_argument(gpu, gpu_id)
    model = model or DEFAULT_MODEL
    turboquant = turboquant_kv(kv_cache_dtype)
    # TurboQuant is a vLLM KV dtype: the tuner does not switch engines away from the dtype asked about
    chosen_by_tuner = engine is None and not turboquant
    engine = _checked_engine(engine)
    if max_k < 1:
        raise ValueError(f"max_k must be >= 1, got {max_k}")
    card, count = resolve_gpu(card_spec, catalogs)
    info = resolve_model(model, catalogs)
    tp = tensor_parallel or count or 1
    if use is UseCase.SINGLE_USER:
        if concurrency not in (None, 1):
            raise ValueError(f"single-user decodes one sequence; use multi-user for concurrency {concurrency}")
        batch = 1
    else:
        batch = DEFAULT_CONCURRENCY if concurrency is None else concurrency
        if batch < 1:
            raise ValueError(f"concurrency must be >= 1, got {batch}")

    notes: list[str] = []
    if info.mtp_layers:
        engine, model = _checkpoint(engine, model, info, card, tp, batch, quantization, kv_cache_dtype,
                                    max_model_len, chosen_by_tuner and engine_version is None, notes, catalogs)
    engine_version = engine_version or (engine_versions or {}).get(engine)
    base: dict[str, Any] = {"engine": engine, "gpu": card.id, "model": model, "use_case": use, "objective": goal,
                            "batch": batch}

    # a dtype the engine does not have is not written into its command (the refusal says so)
    command_kv = None if turboquant and engine != "vllm" else kv_cache_dtype

    def build(k: int, context: int | None = None, capture: int | None = None) -> ServeCommand:
        if engine == "vllm":
            return vllm_mtp_command(model, k, tensor_parallel=tp, max_num_seqs=batch, max_model_len=context,
                                    gpu_memory_utilization=VLLM_MEMORY_FRACTION, kv_cache_dtype=command_kv,
                                    quantization=quantization, max_cudagraph_capture_size=capture,
                                    version=engine_version)
        if engine == "sglang":
            return sglang_mtp_command(model, k, tensor_parallel=tp, max_running_requests=batch,
                                      context_length=context, mem_fraction_static=SGLANG_MEMORY_FRACTION,
                                      kv_cache_dtype=command_kv, quantization=quantization,
                                      version=engine_version, catalogs=catalogs)
        return llama_mtp_command(model, k, parallel=batch, ctx_size=context, cache_type=command_kv,
                                 version=engine_version)

    def refuse(reason: str, references: tuple[str, ...] = (), fits: bool = True) -> Recommendation:
        command = build(0, max_model_len)
        return Recommendation(enable=False, reason=reason, num_speculative_tokens=None, expected_gain=None,
                              crossover=None, memory=None, command=command.argv, env=command.env, refused=True,
                              fits=fits, references=references, engine_version=command.version, **base)

    # 1. blocked combinations
    if info.mtp_layers == 0:
        return refuse(f"{model} ships no MTP head (model catalog entry `{info.id}`, rule MTP105): vLLM refuses to "
                      "start, llama-server crashes at start, vllm-mlx silently ignores `--enable-mtp`",
                      _rule_urls("MTP105"))
    if info.mtp_layers is None:
        return refuse(f"it is not known whether {model} ships MTP weights (model catalog entry `{info.id}`); "
                      "check its `model.safetensors.index.json` for `mtp.` keys before turning MTP on")
    if turboquant and engine == "vllm":
        return refuse(f"KV-cache dtype `{kv_cache_dtype}` is TurboQuant (rule MTP101): {_rule_summary('MTP101')} "
                      "(vLLM #40831, no upstream fix through 0.33). Use `--kv-cache-dtype fp8_e5m2` with MTP, "
                      "or keep TurboQuant without speculation", _rule_urls("MTP101"))
    if turboquant:
        label = "SGLang" if engine == "sglang" else "llama-server"
        return refuse(f"KV-cache dtype `{kv_cache_dtype}` is TurboQuant, a vLLM dtype {label} does not have (rule "
                      f"MTP505; the command leaves the KV cache at {label}'s default), and TurboQuant with MTP is "
                      f"what vLLM cannot run (rule MTP101: {_rule_summary('MTP101')}, vLLM #40831). Serve MTP with "
                      "an FP8 KV cache, or keep TurboQuant on vLLM without speculation",
                      _rule_urls("MTP101"))

    # 2. gains for every k
    sizes = model_sizes(info.id, catalogs)
    weights = weight_format(model, quantization, sizes)
    curves = {k: crossover(card, sizes, k, weights, engine=engine, tensor_parallel=tp) for k in range(1, max_k + 1)}
    gains = {k: cross.speedup_at(batch) for k, cross in curves.items()}
    if sizes is None:
        notes.append(f"the catalog has no sizes for `{info.id}`: gains are for a dense 8B model in {weights.label}, "
                     "and memory is not checked")
    if not next(iter(curves.values())).acceptance_known:
        notes.append(f"acceptance {next(iter(curves.values())).acceptance:g} per position is a default, not a "
                     "published figure for this model")
    if engine == "llama.cpp" and batch > 1:
        notes.append("llama.cpp drafts slot by slot and its MTP path with several slots is the least tested "
                     "(MTP304: cross-slot issues reported)")

    if goal is Objective.THROUGHPUT or batch == 1:
        candidates = sorted((k for k in gains if gains[k] > 1), key=lambda k: (-gains[k], k))
    else:
        candidates = sorted((k for k, cross in curves.items() if cross.batch >= batch),
                            key=lambda k: (-curves[k].gain_at_one, k))

    deployment = None if sizes is None else _Deployment(engine, card, sizes, model, quantization, kv_cache_dtype,
                                                        tp, batch, max_model_len)
    plain_memory = deployment.memory(0) if deployment is not None else None
    plain_fits = plain_memory is None or plain_memory.left >= plain_memory.needed
    if not plain_fits:
        assert plain_memory is not None
        does_not_fit = (f"the model does not fit: {plain_memory.terms_text()} GiB resident against a budget of "
                        f"{plain_memory.budget:.1f} GiB ({plain_memory.budget_text()}) leaves {plain_memory.left:.1f} "
                        f"GiB where the KV cache and activations need at least {plain_memory.needed:.1f}; use "
                        f"{smaller_weights_advice(plain_memory.inputs.weights)} (tensor parallel)"
                        + (", or fewer sequences" if batch > 1 else ""))

    # 3. MTP does not pay at this batch
    best = max(gains, key=lambda k: (gains[k], -k))
    if not candidates:
        cross = curves[best]
        if batch == 1:
            reason = (f"MTP does not pay even for one user: {gains[best]:.2f}x at best (k={best}) on "
                      f"{card.id} with {weights.label} weights")
        elif goal is Objective.THROUGHPUT or cross.loses_at(batch):
            reason = (f"{batch} concurrent sequences are past the crossover: {describe_losses(cross)} (k={best}, "
                      f"{card.id}, {weights.label} weights), {gains[best]:.2f}x at {batch}; turn it on only for "
                      f"deployments below ~{max(cross.batch, 1)} concurrent sequences")
        else:
            # latency: a gain at the busy hour, but the curve dips below 1x on the way there
            reason = (f"{batch} concurrent sequences gain {gains[best]:.2f}x (k={best}), but {describe_losses(cross)} "
                      f"({card.id}, {weights.label} weights): a server whose load passes through that range "
                      f"is slower there than without MTP; turn it on for latency only below ~{max(cross.batch, 1)} "
                      "concurrent sequences, or use objective throughput")
        if not plain_fits:
            notes.append(does_not_fit)
        return _disabled(reason, gains, cross, gains[best], build, plain_memory if plain_fits else None,
                         max_model_len, deployment, notes, _rule_urls("MTP301"), base, fits=plain_fits)

    # 4. it would pay: the weights must fit, then step k down while the MTP buffers are tight
    if not plain_fits:
        return refuse(f"MTP would give {gains[candidates[0]]:.2f}x (k={candidates[0]}), but {does_not_fit}",
                      _rule_urls("MTP201"), fits=False)
    chosen: int | None = None
    memory: MemoryEstimate | None = None
    for k in sorted((c for c in candidates if c <= candidates[0]), reverse=True):
        memory = deployment.memory(k) if deployment is not None else None
        if memory is None or not memory.tight:
            chosen = k
            break
    if chosen is None:
        assert memory is not None
        reason = (f"MTP would give {gains[candidates[0]]:.2f}x but its buffers do not fit even at k=1: "
                  f"{memory.terms_text()} GiB of a {memory.budget:.1f} GiB budget leaves {memory.left:.1f} GiB where "
                  f"the KV cache and activations need {memory.needed:.1f}; use "
                  + ("FP8 KV, " if memory.inputs.kv_bytes >= 2 else "")
                  + f"{smaller_weights_advice(memory.inputs.weights)}" + (", or fewer sequences" if batch > 1 else ""))
        return _disabled(reason, gains, curves[candidates[0]], gains[candidates[0]], build, plain_memory,
                         max_model_len, deployment, notes, _rule_urls("MTP201"), base)
    if chosen != candidates[0]:
        notes.append(f"k={candidates[0]} would be faster ({gains[candidates[0]]:.2f}x) but its buffers leave too "
                     f"little memory for the KV cache; stepped down to k={chosen}")
    cross = curves[chosen]
    context = _context(deployment, memory, max_model_len)
    capture = _capture_size(engine, card, chosen, batch, memory)
    if capture is not None:
        notes.append(f"CUDA graphs captured up to batch {capture}: vLLM's default capture size would exceed the "
                     "recurrent-state cache lines of this hybrid model (MTP203)")
    command = build(chosen, context, capture)
    gain = gains[chosen]
    pays = f"{describe_losses(cross)} ({card.id}, {weights.label} weights)"
    if batch == 1:
        reason = f"k={chosen} gives {gain:.2f}x decode speed for one user, the best of k=1-{max_k}; {pays}"
    elif goal is Objective.THROUGHPUT:
        reason = (f"k={chosen} gives {gain:.2f}x decode throughput at {batch} concurrent sequences, the best of "
                  f"k=1-{max_k}; {pays}")
    else:
        reason = (f"k={chosen} gives {cross.gain_at_one:.2f}x per-user decode speed when the server is quiet and "
                  f"{gain:.2f}x at {batch} concurrent sequences: the fastest k of 1-{max_k} still above 1x at that "
                  f"concurrency; {pays}")
    return Recommendation(enable=True, reason=reason, num_speculative_tokens=chosen, expected_gain=gain,
                          crossover=cross, memory=memory, command=command.argv, env=command.env,
                          references=_rule_urls("MTP301"), engine_version=command.version, gains=gains,
                          notes=tuple(notes), **base)


def _gpu_argument(gpu: str | Gpu | None, gpu_id: str | Gpu | None) -> str | Gpu:
    """The GPU from ``gpu=`` or ``gpu_id=`` (the original tuner's name); ValueError for none or two."""
    if gpu is not None and gpu_id is not None and gpu != gpu_id:
        raise ValueError(f"gpu={gpu!r} and gpu_id={gpu_id!r} name different GPUs: give one")
    found = gpu if gpu is not None else gpu_id
    if found is None:
        raise ValueError("no GPU: pass gpu= (or gpu_id=), e.g. gpu='rtx-4090'")
    return found


def _checked_engine(engine: str | None) -> str:
    """The engine asked for (vLLM when None); ValueError for one the tuner does not model."""
    chosen = engine or "vllm"
    if chosen not in ENGINES:
        raise ValueError(f"unknown engine {chosen!r} (one of {', '.join(ENGINES)})")
    return chosen


def quick_crossover(gpu_id: str | Gpu | None = None, model: str | None = None, engine: str | None = None, *,
                    gpu: str | Gpu | None = None, max_k: int = MAX_DRAFT_TOKENS,
                    tensor_parallel: int | None = None, catalogs: Catalogs = SHIPPED) -> list[Crossover]:
    """One :class:`~mtplint.tuner.batching.Crossover` per k = 1 .. ``max_k`` for a GPU: its
    ``spec_tokens``, ``crossover_batch_size`` (MTP pays at every batch up to it), ``losses`` (every
    range where it loses) and ``curve``.

    ``model`` defaults to :data:`DEFAULT_MODEL`; the checkpoint is the one :func:`recommend` serves
    for one user -- the largest published format of the model that fits the GPU (BF16, else the FP8
    release, else a 4-bit GGUF on llama.cpp when ``engine`` is None) -- and so are the engine's kernels."""
    if max_k < 1:
        raise ValueError(f"max_k must be >= 1, got {max_k}")
    card, count = resolve_gpu(_gpu_argument(gpu, gpu_id), catalogs)
    named = model or DEFAULT_MODEL
    info = resolve_model(named, catalogs)
    tp = tensor_parallel or count or 1
    chosen = _checked_engine(engine)
    served = named
    if info.mtp_layers:
        chosen, served = _checkpoint(chosen, named, info, card, tp, 1, None, None, None, engine is None, [], catalogs)
    sizes = model_sizes(info.id, catalogs)
    weights = weight_format(served, None, sizes)
    return [crossover(card, sizes, k, weights, engine=chosen, tensor_parallel=tp) for k in range(1, max_k + 1)]


#: the GGUF quantisation proposed for llama.cpp: what the published MTP measurements on 24-32 GB
#: cards run (Q4_K_M / UD-Q4_K_XL, e.g. https://github.com/thc1006/qwen3.6-speculative-decoding-rtx3090)
GGUF_QUANT = "Q4_K_M"


def _is_gguf(model: str) -> bool:
    return "gguf" in model.lower()


def _fits(engine: str, model: str, card: Gpu, tp: int, batch: int, quantization: str | None,
          kv_cache_dtype: str | None, max_model_len: int | None,
          catalogs: Catalogs) -> tuple[bool, MemoryEstimate | None]:
    info = catalogs.find_model(model)
    sizes = model_sizes(info.id, catalogs) if info else None
    if sizes is None:
        return True, None
    memory = _Deployment(engine, card, sizes, model, quantization, kv_cache_dtype, tp, batch, max_model_len).memory(0)
    return memory is None or memory.left >= memory.needed, memory


def _checkpoint(engine: str, model: str, info: ModelInfo, card: Gpu, tp: int, batch: int,
                quantization: str | None, kv_cache_dtype: str | None, max_model_len: int | None,
                may_switch_engine: bool, notes: list[str], catalogs: Catalogs) -> tuple[str, str]:
    """The engine and checkpoint to serve: the one named when it fits, else a smaller published one."""
    gguf = info.checkpoint("gguf")
    if engine == "llama.cpp":
        if _is_gguf(model) or model.lower().endswith(".gguf") or gguf is None:
            return engine, model
        notes.append(f"llama-server reads GGUF files: serving {gguf}:{GGUF_QUANT}, a GGUF of {model} that keeps "
                     "the MTP head (plain GGUFs converted before b9180 drop it, MTP105)")
        return engine, f"{gguf}:{GGUF_QUANT}"
    fits, memory = _fits(engine, model, card, tp, batch, quantization, kv_cache_dtype, max_model_len, catalogs)
    if fits or memory is None or quantization:
        return engine, model
    why = (f"{model} needs {memory.terms['weights']:.1f} GiB of {memory.inputs.weights.label} weights against a "
           f"{memory.budget:.1f} GiB budget ({memory.budget_text()})")
    fp8 = info.checkpoint("fp8")
    if fp8 and not memory.inputs.weights.fp8 and memory.inputs.weights.bytes_per_param > 1:
        fp8_fits, _ = _fits(engine, fp8, card, tp, batch, None, kv_cache_dtype, max_model_len, catalogs)
        if fp8_fits:
            notes.append(f"{why}: serving the FP8 release {fp8} instead")
            return engine, fp8
    if may_switch_engine and gguf:
        served = f"{gguf}:{GGUF_QUANT}"
        gguf_fits, _ = _fits("llama.cpp", served, card, tp, batch, None, kv_cache_dtype, max_model_len, catalogs)
        if gguf_fits:
            notes.append(f"{why}, and no FP8 release fits either: serving the 4-bit GGUF {served} with llama.cpp "
                         "(pass --engine to keep vLLM or SGLang with a quantised checkpoint of your own)")
            return "llama.cpp", served
    return engine, model


def _capture_size(engine: str, gpu: Gpu, k: int, batch: int, memory: MemoryEstimate | None) -> int | None:
    """``--max-cudagraph-capture-size`` for vLLM on a hybrid when the default capture size,
    ``min(max_num_seqs x (1+k) x 2, 512)``, exceeds the recurrent-state cache lines (MTP203's bound)."""
    if engine != "vllm" or memory is None or memory.inputs.sizes.recurrent_state_mib <= 0:
        return None
    default = min(batch * (1 + k) * 2, 1024 if gpu.id in DATACENTER_BLACKWELL else CAPTURE_CAP)
    free = memory.budget - memory.terms.get("weights", 0.0) - memory.terms.get("mtp_weights", 0.0) - ACTIVATIONS_GIB
    lines = max(0, int(free / (memory.inputs.sizes.recurrent_state_mib * MIB / GIB)))
    return max(lines // 2, 1) if default > lines else None


def _context(deployment: _Deployment | None, memory: MemoryEstimate | None, given: int | None) -> int | None:
    """The context to write into the command: the user's, else the model's maximum when the KV cache
    holds it, else what fits (rounded to 1024) -- engines refuse to start when one sequence of the
    model's full context does not fit (vLLM) or allocate it all up front (llama-server ``-c 0``)."""
    if given or deployment is None or memory is None:
        return given
    fits = deployment.context_that_fits(memory)
    longest = deployment.sizes.max_context
    if deployment.engine == "llama.cpp":
        # -c is the total the slots share
        wanted = (longest or REFERENCE_CONTEXT) * deployment.sequences
        return min(_round_context(fits), wanted) if fits < wanted or longest is None else wanted
    if longest is not None and fits >= longest:
        return None
    return max(_round_context(fits), 1024)


def _disabled(reason: str, gains: dict[int, float], cross: Crossover, gain: float, build: Any,
              memory: MemoryEstimate | None, given_context: int | None, deployment: _Deployment | None,
              notes: list[str], references: tuple[str, ...], base: dict[str, Any], fits: bool = True) -> Recommendation:
    command: ServeCommand = build(0, _context(deployment, memory, given_context))
    return Recommendation(enable=False, reason=reason, num_speculative_tokens=None, expected_gain=gain,
                          crossover=cross, memory=memory, command=command.argv, env=command.env, fits=fits,
                          references=references, engine_version=command.version, gains=gains,
                          notes=tuple(notes), **base)


__all__ = ["DEFAULT_CONCURRENCY", "DEFAULT_MODEL", "MAX_DRAFT_TOKENS", "Objective", "Recommendation", "UseCase",
           "quick_crossover", "recommend", "resolve_gpu", "resolve_model"]
