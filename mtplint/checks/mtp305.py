"""MTP305 speculation-with-cuda-graphs-off: eager decode pays kernel-launch overhead on every verify step."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext

HOW = {
    "enforce_eager": "`--enforce-eager`",
    "-O0": "`-O0` (optimisation level 0)",
    "cudagraph_mode NONE": '`"cudagraph_mode": "NONE"`',
}


#: a launch that does not draft finds nothing here (not checked: :func:`mtplint.checks.run_rules`)
ONLY_WITH_SETTING = "spec_method"


def check(ctx: RuleContext) -> Iterator[Finding]:
    method = ctx.value("spec_method")
    graphs = ctx.setting("cuda_graphs")
    if method is None or graphs is None or graphs.unresolved or graphs.value is not False:
        return
    if ctx.engine == "vllm":
        how = HOW.get(str(graphs.extra.get("reason")), "CUDA graphs off")
        undo = "remove it (use `speculative_config.enforce_eager` to keep only the drafter eager)"
    else:
        option = ctx.option("cuda_graph_backend_decode")
        how = "`--cuda-graph-backend-decode disabled`" if option is not None and option.span == graphs.span \
            else "`--disable-cuda-graph`"
        undo = "remove it (lower `--cuda-graph-max-bs` instead if capture memory is the concern)"
    yield ctx.report_finding(
        f"{how} turns CUDA graphs off for decode while `{method}` speculation is on: each verify step and "
        f"each draft step then launches its kernels one by one, and at low batch that overhead eats the "
        f"speculative gain; {undo}",
        ctx.span_of("cuda_graphs"),
    )
