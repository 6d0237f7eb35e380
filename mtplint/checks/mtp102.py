"""MTP102 prefix-caching-with-mtp: EAGLE-style drafting drops the last matched cache block."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, Fix, RuleContext

#: vLLM's use_eagle() methods, after *_mtp normalisation (docs/vllm.md#prefix-cache-hits-with-eagle-style-drafters, vLLM #38182)
EAGLE_STYLE = frozenset({"mtp", "eagle", "eagle3", "dflash", "dspark"})


#: a launch that does not draft finds nothing here (not checked: :func:`mtplint.checks.run_rules`)
ONLY_WITH_SETTING = "spec_method"


def check(ctx: RuleContext) -> Iterator[Finding]:
    method = ctx.value("spec_method")
    if method not in EAGLE_STYLE or ctx.value("prefix_caching") is not True:
        return
    spec = ctx.option("speculative_config")
    spec_values = spec.value if spec is not None and isinstance(spec.value, dict) else {}
    connector = ctx.option("kv_transfer_config") is not None
    if ctx.rests_on_version_default("prefix_caching", fires_on=(
            "≥0.28.0" if connector or spec_values.get("disable_lookahead_block_hashes") else "0.28.0 … <0.33.0")
            + " (prefix caching is on by default for hybrid models from 0.28, PR #50991)"):
        return
    if spec_values.get("disable_eagle_block_drop") is True and ctx.report.version.at_least("0.30.0") is not False:
        return
    lookahead_fixes_it = ctx.report.version.at_least("0.33.0")
    if lookahead_fixes_it is True and not connector and not spec_values.get("disable_lookahead_block_hashes"):
        return
    setting = ctx.setting("prefix_caching")
    how = "on by default" if setting is not None and setting.origin == "default" else "on"
    note = ""
    if lookahead_fixes_it is None:
        note = " (vLLM 0.33+ avoids the drop with lookahead hashes unless a KV connector is set; the version is not pinned)"
    yield ctx.report_finding(
        f"prefix caching is {how} with `{method}` speculative decoding: vLLM drops the last matched prefix-cache "
        f"block on every hit (hit rate ~92% → ~71%, vLLM #38182){note}; add `--no-enable-prefix-caching`"
        + (" or `\"disable_eagle_block_drop\": true`" if ctx.report.version.at_least("0.30.0") is not False else ""),
        ctx.span_of("prefix_caching", "spec_method"),
        fix=prefix_caching_off_fix(ctx, "unsafe"),
    )


def prefix_caching_off_fix(ctx: RuleContext, applicability: str) -> Fix | None:
    """Turn prefix caching off: ``--enable-prefix-caching`` → ``--no-enable-prefix-caching``, or the
    flag added (a ``--config`` file value or the default is overridden by the command line)."""
    from mtplint.edits.argv import switch_off_edits  # noqa: PLC0415 - fixing: only when a fix is built

    setting = ctx.setting("prefix_caching")
    edits = switch_off_edits(ctx.report.launch, setting.span if setting is not None else None,
                             "--enable-prefix-caching", "--no-enable-prefix-caching", "enable_prefix_caching")
    return Fix(applicability, "Add `--no-enable-prefix-caching`", edits) if edits else None
