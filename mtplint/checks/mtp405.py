"""MTP405 vllm-use-v1-no-op: ``VLLM_USE_V1`` is read by nothing from vLLM 0.11.1 (docs/vllm.md#environment-variables)."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, Fix, RuleContext


def check(ctx: RuleContext) -> Iterator[Finding]:
    entry = ctx.report.launch.env.get("VLLM_USE_V1")
    if entry is None:
        return
    value = entry.value.value if entry.value.resolved else None
    consequence = ("`VLLM_USE_V1=0` does not bring the V0 engine back (it is gone); the server runs the V1 engine "
                   "and warns about an unknown VLLM_ variable") if value == "0" else \
        "V1 is the only engine, so the variable changes nothing (vLLM warns about an unknown VLLM_ variable)"
    yield ctx.report_finding(
        f"`VLLM_USE_V1` does nothing from vLLM 0.11.1: {consequence}; remove it{ctx.version_note()}",
        entry.span or entry.value.span,
        fix=_remove_fix(ctx),
    )


def _remove_fix(ctx: RuleContext) -> Fix | None:
    """Remove the entry where it is written (mtplint/edits/env.py); an env file is left alone."""
    from mtplint.edits.env import remove_env  # noqa: PLC0415 - fixing: only when a fix is built

    launch = ctx.report.launch
    entry = launch.env.get("VLLM_USE_V1")
    edits = remove_env(launch, entry) if entry is not None else None
    return Fix("safe", "Remove VLLM_USE_V1", edits) if edits else None
