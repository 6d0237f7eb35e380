"""MTP502 invalid-speculative-method: a ``method`` the vLLM release's type does not accept."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext
from mtplint.checks.mtp5xx import (
    json_value_span,
    key_history,
    spec_release,
    speculative_config,
    suggestion,
    version_label,
)
from mtplint.versions import compare

#: a launch that does not draft finds nothing here (not checked: :func:`mtplint.checks.run_rules`)
ONLY_WITH_SETTING = "spec_method"


def check(ctx: RuleContext) -> Iterator[Finding]:
    setting = ctx.setting("spec_method")
    if setting is None or setting.unresolved or setting.origin == "inferred":
        return
    raw = setting.extra.get("raw", setting.value)
    if not isinstance(raw, str):
        return
    release = spec_release(ctx.report.version.version)
    if release.methods is None or raw in release.methods:
        return  # 0.8.x: `method` is a plain str
    first, gone = key_history(raw, "methods")
    if first is not None and compare(first, release.version) > 0:
        history = f" (added in vLLM {first})"
    elif first is not None and gone is not None:
        history = f" (removed in vLLM {gone})"
    else:
        history = ""
    hint = suggestion(raw, release.methods) or "use one of " + ", ".join(
        f"`{m}`" for m in sorted(release.methods) if not m.endswith("_mtp"))
    if raw.endswith("_mtp") and "mtp" in release.methods:
        hint = "write `\"method\": \"mtp\"` (every model's MTP head is selected from the model itself)"
    span = setting.span
    found = speculative_config(ctx)
    if found is not None and found[1].get("method") == raw:
        span = json_value_span(ctx, found[0], "method", raw) or span
    yield ctx.report_finding(
        f"speculative method `{raw}` is not accepted by {version_label(ctx)}{history}: startup fails validating "
        f"`method`; {hint}",
        span,
    )
