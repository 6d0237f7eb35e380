"""MTP203 cudagraph-capture-exceeds-mamba-cache: vLLM captures more decode slots than hybrid state lines exist."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext

#: a launch that does not draft finds nothing here (not checked: :func:`mtplint.checks.run_rules`)
ONLY_WITH_SETTING = "spec_method"


def check(ctx: RuleContext) -> Iterator[Finding]:
    model = ctx.value("model")
    info = ctx.catalogs.find_model(model) if isinstance(model, str) else None
    if info is None or not info.hybrid or ctx.value("spec_method") not in ("mtp", "eagle", "eagle3", "draft_model"):
        return
    if ctx.value("cuda_graphs") is False or ctx.report.hardware.gpu is None:
        return
    from mtplint.tuner.memory import ACTIVATIONS_GIB, CAPTURE_CAP, DATACENTER_BLACKWELL, estimate_memory  # noqa: PLC0415 - the memory model: only for a launch that names its GPU
    from mtplint.tuner.sizes import GIB, MIB  # noqa: PLC0415 - the memory model: only for a launch that names its GPU

    estimate = estimate_memory(ctx.report)
    # an estimate at the smallest concurrency (vLLM's default max_num_seqs is only a cap) has no
    # sequence count to size the default capture with
    if estimate is None or estimate.inputs.smallest or estimate.inputs.sizes.recurrent_state_mib <= 0:
        return
    k = estimate.inputs.draft_tokens
    seqs = estimate.inputs.max_sequences
    compilation = ctx.option("compilation_config")
    explicit = ctx.option("max_cudagraph_capture_size")
    if explicit is not None and not explicit.unresolved and isinstance(explicit.value, int):
        capture, how, span = explicit.value, f"--max-cudagraph-capture-size {explicit.value}", explicit.span
    elif compilation is not None and isinstance(compilation.value, dict) and \
            isinstance(compilation.value.get("max_cudagraph_capture_size"), int):
        capture = compilation.value["max_cudagraph_capture_size"]
        how, span = f"max_cudagraph_capture_size {capture}", compilation.span
    else:
        assert estimate.inputs.gpu is not None
        cap = 1024 if estimate.inputs.gpu.id in DATACENTER_BLACKWELL else CAPTURE_CAP
        capture = min(seqs * (1 + k) * 2, cap)
        how = f"the default capture size min({seqs} seqs x (1+{k}) x 2, {cap}) = {capture}"
        span = ctx.span_of("max_concurrency", "spec_tokens")
    # an upper bound on the state cache lines: all memory left after weights and activations holds states
    weights = estimate.terms.get("weights", 0.0) + estimate.terms.get("mtp_weights", 0.0)
    free_gib = estimate.budget - weights - ACTIVATIONS_GIB
    state_gib = estimate.inputs.sizes.recurrent_state_mib * MIB / GIB
    lines = max(0, int(free_gib / state_gib))
    # no line fits at all: the weights leave no room for the cache -- MTP201's finding (weights against
    # the budget), not a capture size to lower
    if capture <= lines or lines < 1:
        return
    yield ctx.report_finding(
        f"{how} is larger than the recurrent-state cache: at most ~{lines} lines of {state_gib * 1024:.0f} MiB fit "
        f"in the {max(free_gib, 0):.1f} GiB left after weights on {estimate.budget_text()}, so CUDA-graph capture "
        f"fails with `assert num_cache_lines >= batch`; set --max-cudagraph-capture-size {max(lines // 2, 1)} "
        f"or lower --max-num-seqs",
        span,
    )
