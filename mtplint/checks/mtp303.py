"""MTP303 lossy-optimistic-mtp: vllm-mlx ``--mtp-optimistic`` accepts drafts without verifying them."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext


def check(ctx: RuleContext) -> Iterator[Finding]:
    method = ctx.setting("spec_method")
    if method is None or method.value != "mtp" or not method.extra.get("optimistic"):
        return
    # the switch reaches the scheduler only with --continuous-batching (docs/mlx.md#vllm-mlx);
    # without it the server verifies every draft and nothing is lost
    if not method.extra.get("optimistic_effective"):
        return
    option = ctx.option("mtp_optimistic")
    yield ctx.report_finding(
        "`--mtp-optimistic` skips the check of MTP drafts against the model: vllm-mlx's own help puts the "
        "result at ~5-10% wrong tokens (fine for chat, not for code or tool calls); drop it and keep "
        "verified MTP (~1.4x instead of ~1.76x on Qwen3-Next, M3 Ultra)",
        option.span if option is not None and option.span is not None else ctx.span_of("spec_method"),
    )
