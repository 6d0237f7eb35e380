"""MTP404 renamed-llama-spec-type: ``--spec-type`` names that upstream llama.cpp does not accept."""

from __future__ import annotations

import re
from collections.abc import Iterator

from mtplint.checks import Finding, Fix, RuleContext
from mtplint.checks.mtp5xx import text_span
from mtplint.source import Span

#: old or fork spelling -> upstream name (docs/llamacpp.md#spec-types): `draft`/`eagle3` were
#: renamed in b9131 (PR #22964); `mtp` was the PR #22673 branch's name (and forks'), merged as
#: `draft-mtp` in b9180
RENAMED = {"mtp": "draft-mtp", "draft": "draft-simple", "eagle3": "draft-eagle3"}
UNKNOWN_TYPE = re.compile(r"unknown speculative type: (\S+)")


def check(ctx: RuleContext) -> Iterator[Finding]:
    for error in ctx.errors:
        match = UNKNOWN_TYPE.search(error.message)
        if match is None or match.group(1) not in RENAMED:
            continue
        old = match.group(1)
        new = RENAMED[old]
        if old == "mtp":
            why = ("`mtp` is the spelling of the MTP pull request's branch and of forks; upstream merged it as "
                   "`draft-mtp` (b9180)")
        else:
            why = f"`{old}` was renamed `{new}` in b9131"
        span = error.span
        if span is not None and not (error.flag or "").startswith("LLAMA_ARG_"):
            # the value word right after the flag, when it is in the same file
            for index, token in enumerate(ctx.report.launch.args):
                if token.span == span and index + 1 < len(ctx.report.launch.args):
                    span = ctx.report.launch.args[index + 1].span or span
                    break
                if token.span == span and "=" in token.value:
                    span = text_span(ctx, span, token.value.split("=", 1)[1]) or span
                    break
        yield ctx.report_finding(
            f"llama-server stops with \"unknown speculative type: {old}\": {why}; use `--spec-type {new}`",
            span,
            fix=_rename_type_fix(ctx, span, old, new, error.flag or ""),
        )


def _rename_type_fix(ctx: RuleContext, span: Span | None, old: str, new: str, flag: str) -> Fix | None:
    """The old ``--spec-type`` name → the upstream one, in the word (or env value) that holds it."""
    from mtplint.edits.argv import replace_flag_value  # noqa: PLC0415 - fixing: only when a fix is built

    launch = ctx.report.launch
    tokens = launch.args
    entry = launch.env.get(flag) if flag.startswith("LLAMA_ARG_") else None
    if entry is not None:
        tokens, span = [entry.value], entry.value.span
    source = ctx.source_for(span)
    if span is None or source is None:
        return None
    edit = replace_flag_value(source, tokens, span, old, new)
    return Fix("safe", f"Use `--spec-type {new}`", [edit]) if edit is not None else None
