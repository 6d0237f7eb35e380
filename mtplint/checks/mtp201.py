"""MTP201 vram-tight-draft-buffers: weights plus speculation's buffers leave the KV cache too little room.

The estimate is :func:`mtplint.tuner.memory.estimate_memory` (its docstring states the model and its
error). This module decides what to change first, and the finding sits on that setting's token:

1. weights alone take more than 80% of the budget -> quantised weights, a smaller quantisation or more
   GPUs (the model token);
2. the recurrent-state copies (hybrids) are the largest speculative term and k >= 2 -> fewer draft
   tokens (the k token): (1+k) copies per sequence, and a one-layer MTP head gains little past k = 1-2;
3. lower max concurrency (its token, else the k token) -- it scales draft KV and state alike; not
   when the estimate is for one sequence already (vLLM with its default ``max_num_seqs``, a cap only:
   the estimate is then made at the smallest concurrency, and the message says so);
4. FP8 KV when the cache is 16-bit; then fewer draft tokens and quantised weights if not named yet.
On SGLang the advice also says to *lower* ``--mem-fraction-static`` where the draft lives outside it.
Silent without a GPU identity (the run's summary counts such launches: :func:`mtplint.checks.mtp003.rules_without_gpu`).
"""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext
from mtplint.source import Span
from mtplint.tuner.memory import REFERENCE_CONTEXT, MemoryEstimate, estimate_memory
from mtplint.tuner.sizes import smaller_weights_advice

WEIGHTS_SHARE = 0.8

K_FLAG = {"vllm": "num_speculative_tokens", "sglang": "--speculative-num-steps", "llama.cpp": "--spec-draft-n-max"}
SEQS_FLAG = {"vllm": "--max-num-seqs", "sglang": "--max-running-requests", "llama.cpp": "-np"}
KV_FLAG = {"vllm": "--kv-cache-dtype fp8", "sglang": "--kv-cache-dtype fp8_e4m3", "llama.cpp": "-ctk q8_0 -ctv q8_0"}


def _advice(ctx: RuleContext, estimate: MemoryEstimate) -> tuple[list[str], Span]:
    """What to change, first item first, and the token of the first item's setting."""
    inputs = estimate.inputs
    engine = ctx.engine
    k, seqs = inputs.draft_tokens, inputs.max_sequences
    recurrent = estimate.terms.get("recurrent", 0.0)
    speculative = {name: gib for name, gib in estimate.terms.items() if name not in ("weights",)}
    largest = max(speculative, key=lambda name: speculative[name]) if speculative else ""
    per_copy = recurrent / max(seqs * inputs.recurrent_copies, 1)
    fewer_k = f"fewer draft tokens ({K_FLAG.get(engine, 'k')} {k} -> 1 saves {(k - 1) * seqs * per_copy:.1f} GiB)"
    half = max(seqs // 2, 1)
    fewer_seqs = (f"lower max concurrency ({SEQS_FLAG.get(engine, 'max concurrency')} {seqs} -> {half} saves "
                  f"{(seqs - half) / seqs * (recurrent + estimate.terms.get('draft_kv', 0.0)):.1f} GiB)")
    fp8_kv = f"FP8 KV cache ({KV_FLAG.get(engine, 'an 8-bit KV cache')})"
    quantised = smaller_weights_advice(inputs.weights)
    items: list[tuple[str, tuple[str, ...]]] = []
    if estimate.terms["weights"] > WEIGHTS_SHARE * estimate.budget:
        items.append((quantised, ("model",)))
    if largest == "recurrent" and k >= 2:
        items.append((fewer_k, ("spec_tokens",)))
    if seqs > 1:
        items.append((fewer_seqs, ("max_concurrency", "spec_tokens")))
    if inputs.kv_bytes >= 2:
        items.append((fp8_kv, ("kv_cache_dtype", "spec_tokens")))
    if k >= 2 and all(text != fewer_k for text, _ in items):
        items.append((fewer_k, ("spec_tokens",)))
    if inputs.weights.bytes_per_param >= 1 and all(text != quantised for text, _ in items):
        items.append((quantised, ("model",)))
    if engine == "sglang":
        items.append(("a lower --mem-fraction-static (before SGLang 0.5.14 the draft KV and graphs live outside it)",
                      ("memory_fraction",)))
    first_names = items[0][1] if items else ("spec_tokens",)
    return [text for text, _ in items], ctx.span_of(*first_names, "spec_tokens", "spec_method")


def check(ctx: RuleContext) -> Iterator[Finding]:
    if ctx.report.hardware.gpu is None:
        return  # only_when gpu-named: the run loads this module, and the tuner, only for a launch that names one
    estimate = estimate_memory(ctx.report)
    if estimate is None or not estimate.tight:
        return
    inputs = estimate.inputs
    advice, span = _advice(ctx, estimate)
    context = min(inputs.context_per_sequence, REFERENCE_CONTEXT)
    seqs_setting = ctx.setting("max_concurrency")
    if inputs.smallest:
        sequences = (f"1 sequence, the smallest concurrency ({SEQS_FLAG.get(ctx.engine, 'max concurrency')} is left "
                     "at its default, only a cap on admission: this is the least the launch needs)")
    else:
        default = " (default)" if seqs_setting is not None and seqs_setting.origin == "default" else ""
        sequences = f"{inputs.max_sequences} sequences{default}"
    short = estimate.needed - estimate.left
    yield ctx.report_finding(
        f"estimated {estimate.resident:.1f} GiB resident of a {estimate.budget:.1f} GiB budget "
        f"({estimate.budget_text()}) for {sequences} with k={inputs.draft_tokens}: "
        f"{estimate.terms_text()} GiB (draft KV at {context} tokens per sequence); that leaves "
        f"{estimate.left:.1f} GiB for the KV cache and activations, {short:.1f} GiB less than the "
        f"{estimate.needed:.1f} GiB that should stay free. Change first: {advice[0]}"
        + (f"; then {', '.join(advice[1:])}" if len(advice) > 1 else ""),
        span,
    )
