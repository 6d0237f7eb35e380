"""MTP407 vllm-mlx-ambiguous-mtp-flag: ``--mtp`` abbreviates several vllm-mlx flags."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, Fix, RuleContext
from mtplint.checks.mtp5xx import flag_name
from mtplint.source import Span


def check(ctx: RuleContext) -> Iterator[Finding]:
    for error in ctx.errors:
        if error.kind != "ambiguous" or flag_name(error.flag) != "--mtp":
            continue
        matches = error.message.split("could match", 1)[-1].strip()
        yield ctx.report_finding(
            f"`--mtp` is not a vllm-mlx flag: argparse reads it as an abbreviation of {matches} and exits "
            "with \"ambiguous option\"; MTP is switched on with `--enable-mtp`",
            error.span,
            fix=_enable_mtp_fix(ctx, error.span),
        )


def _enable_mtp_fix(ctx: RuleContext, span: Span | None) -> Fix | None:
    from mtplint.edits.argv import rename_flag, token_containing  # noqa: PLC0415 - fixing: only when a fix is built

    launch = ctx.report.launch
    token = token_containing(launch.args, span)
    if token is None or token.value.split("=", 1)[0] != "--mtp":
        return None
    edit = rename_flag(launch.source, token, "--enable-mtp")
    return Fix("safe", "Write `--enable-mtp`", [edit]) if edit is not None else None
