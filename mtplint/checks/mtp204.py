"""MTP204 memory-utilization-near-full-with-draft: vLLM ``--gpu-memory-utilization`` >= 0.95 with speculation."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext
from mtplint.settings import explicit_origin

THRESHOLD = 0.95


#: a launch that does not draft finds nothing here (not checked: :func:`mtplint.checks.run_rules`)
ONLY_WITH_SETTING = "spec_method"


def check(ctx: RuleContext) -> Iterator[Finding]:
    method = ctx.value("spec_method")
    setting = ctx.setting("memory_fraction")
    if method is None or setting is None or setting.unresolved or not explicit_origin(setting.origin):
        return
    value = setting.value
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value < THRESHOLD:
        return
    gpu = ctx.report.hardware.gpu
    left = ""
    if gpu is not None:
        left = f" ({(1 - value) * gpu.memory_mib / 1024:.1f} GiB of the {gpu.id}'s {gpu.memory_mib / 1024:.1f} GiB)"
    yield ctx.report_finding(
        f"--gpu-memory-utilization {value:g} with `{method}` speculation leaves {1 - value:.0%} of GPU memory "
        f"outside vLLM's pool{left}: the drafter's sampling buffers, CUDA-graph captures for k+1-token decode "
        f"steps and other processes have to fit there, and startup or the first long batch runs out of memory; "
        f"use 0.90-0.92 (the default) and size the KV cache with --max-model-len / --max-num-seqs",
        setting.span,
    )
