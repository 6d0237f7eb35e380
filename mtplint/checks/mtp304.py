"""MTP304 llama-mtp-parallel-slots: llama.cpp ``draft-mtp`` with more than one server slot."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext

#: a launch that does not draft finds nothing here (not checked: :func:`mtplint.checks.run_rules`)
ONLY_WITH_SETTING = "spec_method"


def check(ctx: RuleContext) -> Iterator[Finding]:
    if ctx.value("spec_method") != "mtp":
        return
    slots = ctx.setting("max_concurrency")
    if slots is None or slots.unresolved or not isinstance(slots.value, int) or slots.value <= 1:
        return
    how = f"-np {slots.value}"
    if slots.extra.get("auto"):
        how = "-np unset (auto = 4 slots)" if slots.span is None else "-np -1 (auto = 4 slots)"
    yield ctx.report_finding(
        f"`draft-mtp` with {how}: MTP on several llama-server slots has reports of drafts leaking across "
        "slots (llama.cpp #28286) and of unoptimised parallel decoding; the upstream guidance at MTP's "
        "release was one slot. Use `-np 1` for single-user serving, or benchmark your build with several slots",
        ctx.span_of("max_concurrency", "spec_method"),
    )
