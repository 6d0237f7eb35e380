"""MTP407 vllm-mlx-ambiguous-mtp-flag: ``--mtp`` abbreviates several vllm-mlx flags."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext
from mtplint.checks.mtp5xx import flag_name


def check(ctx: RuleContext) -> Iterator[Finding]:
    for error in ctx.errors:
        if error.kind != "ambiguous" or flag_name(error.flag) != "--mtp":
            continue
        matches = error.message.split("could match", 1)[-1].strip()
        yield ctx.report_finding(
            f"`--mtp` is not a vllm-mlx flag: argparse reads it as an abbreviation of {matches} and exits "
            "with \"ambiguous option\"; MTP is switched on with `--enable-mtp`",
            error.span,
        )
