"""MTP401 deprecated-mtp-method-alias: vLLM ``*_mtp`` method names are normalised to ``mtp``."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Edit, Finding, Fix, RuleContext
from mtplint.checks.mtp5xx import json_value_span, spec_release, speculative_config
from mtplint.source import Span


def _fix(ctx: RuleContext, raw: str, span: Span | None, in_config: bool) -> Fix | None:
    """``"method": "mtp"``: the value's text only, in the quoting it was written in."""
    from mtplint.edits.jsonvalue import replace_word_text, spec_site  # noqa: PLC0415 - fixing: only when a fix is built

    edits: list[Edit] | None = None
    if in_config:
        site = spec_site(ctx, ctx.option("speculative_config"))
        edits = site.set_value("method", "mtp") if site is not None else None
    if edits is None and span is not None:
        # a dotted `--speculative-config.method`, a `--config` YAML value, the shortcut flag's word
        source = ctx.source_for(span)
        edit = replace_word_text(source, span, raw, "mtp") if source is not None else None
        edits = [edit] if edit is not None else None
    return Fix("safe", f"Replace `{raw}` with `mtp`", edits) if edits else None


#: a launch that does not draft finds nothing here (not checked: :func:`mtplint.checks.run_rules`)
ONLY_WITH_SETTING = "spec_method"


def check(ctx: RuleContext) -> Iterator[Finding]:
    # the raw method: ``spec_method`` keeps it in ``extra["raw"]`` after normalisation
    setting = ctx.setting("spec_method")
    if setting is None or setting.unresolved:
        return
    raw = setting.extra.get("raw", setting.value)
    if not isinstance(raw, str) or raw == "mtp":
        return
    release = spec_release(ctx.report.version.version)
    # accepted and renamed with a warning (vLLM 0.11.0 L213-216, 0.33.0 L1246-1250 of
    # ``vllm/config/speculative.py``; docs/vllm.md#method-names-and-their-normalisation);
    # a name the version's `method` type refuses is MTP502's
    if raw not in release.mtp_aliases or release.methods is None or raw not in release.methods:
        return
    span = setting.span
    found = speculative_config(ctx)
    in_config = found is not None and found[1].get("method") == raw
    if found is not None and in_config:
        span = json_value_span(ctx, found[0], "method", raw) or span
    yield ctx.report_finding(
        f"speculative method `{raw}` is a deprecated alias: vLLM logs \"method `{raw}` is deprecated and "
        f"replaced with mtp\" and runs `mtp`; write `\"method\": \"mtp\"` (the alias list changes between "
        f"releases, `mtp` is accepted by every release that has MTP){ctx.version_note()}",
        span,
        fix=_fix(ctx, raw, span, in_config),
    )
