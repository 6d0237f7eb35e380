"""MTP301 mtp-above-crossover: the server admits more concurrent sequences than MTP pays for.

The crossover is :func:`mtplint.tuner.batching.crossover` (its docstring states the model, the
published points it reproduces and its error). The rule fires only when the launch's concurrency
falls in a range where the modelled speed-up is below 1: where the curve dips and recovers (MoE
models), a concurrency past the dip is a gain and no finding. The rule data's severity is
``warning``; with the configured objective ``latency`` (the default) the finding is reported as
``info`` -- many sequences are then the exception, not the load (rules/MTP301.yaml). Silent without a
GPU identity.
"""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext

SEQS_FLAG = {"vllm": "--max-num-seqs", "sglang": "--max-running-requests", "llama.cpp": "-np"}


#: a launch that does not draft finds nothing here (not checked: :func:`mtplint.checks.run_rules`)
ONLY_WITH_SETTING = "spec_method"


def check(ctx: RuleContext) -> Iterator[Finding]:
    if ctx.engine not in SEQS_FLAG:
        return
    setting = ctx.setting("max_concurrency")
    if setting is None or setting.unresolved or not isinstance(setting.value, int) or setting.extra.get("gpu_unknown"):
        return
    if ctx.report.hardware.gpu is None:
        return  # the throughput model (mtplint.tuner) is loaded only for a launch that names its GPU
    from mtplint.tuner.batching import crossover_below, describe_losses  # noqa: PLC0415 - the throughput model: only for a launch that names its GPU

    concurrency = setting.value
    # reported only when the concurrency itself falls in a losing range (a dip may recover further out)
    result = crossover_below(ctx.report, concurrency)
    if result is None:
        return
    throughput = ctx.report.objective == "throughput"
    flag = SEQS_FLAG[ctx.engine]
    how = f"{flag} {concurrency}" + (" (default)" if setting.origin == "default" else "")
    alpha = f"acceptance {result.acceptance:g}" + ("" if result.acceptance_known else " assumed")
    severity_note = "" if throughput else " (info with objective=latency; a warning with objective=throughput)"
    at_load = result.speedup_at(concurrency)
    losing = result.losing_range(concurrency)
    first_loss = losing[0] if losing is not None else concurrency
    advice = (f"cap concurrency at {first_loss - 1}, or turn MTP off for throughput-bound serving" if first_loss > 1
              else "turn MTP off: it does not pay even for one sequence here")
    yield ctx.report_finding(
        f"{how} is in a range where MTP loses for k={result.draft_tokens} on the {result.gpu.id} with "
        f"{result.weights.label} weights ({result.engine} kernels): the expected speed-up is "
        f"{result.gain_at_one:.2f}x at batch 1 but {at_load:.2f}x at {concurrency} sequences "
        f"({describe_losses(result)}) -- verifying {result.verify_tokens or result.draft_tokens + 1} tokens "
        f"per sequence then costs more than MTP saves (decode turns compute-bound near ~{result.knee_tokens:.0f} "
        f"tokens per step; {alpha}); {advice}{severity_note}",
        ctx.span_of("max_concurrency", "spec_tokens", "spec_method"),
        severity="warning" if throughput else "info",
    )
