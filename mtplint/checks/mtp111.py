"""MTP111 sglang-hybrid-spec-radix-cache: hybrid model + speculation + radix cache without extra_buffer.

On a Mamba/GDN hybrid (the model catalog's ``hybrid`` entries: Qwen3-Next, Qwen3.5, Qwen3.6) the
radix cache needs a mamba strategy that keeps extra state buffers for speculative decoding. With
``no_buffer`` -- what ``auto`` resolves to before 0.5.14 -- SGLang (docs/sglang.md#validation; checked in
the release wheels' ``server_args.py``):

* 0.5.9: logs "Disabling radix cache since speculative decoding for {arch} is not supported with
  radix cache yet" and runs without prefix reuse (``_handle_mamba_radix_cache``). 0.5.7/0.5.8 have
  no such branch for Qwen3-Next, so they are left out of the range.
* 0.5.10 … 0.5.13: raises ``ValueError: Speculative decoding for {arch} is not compatible with radix
  cache when using --mamba-scheduler-strategy no_buffer`` (commit 9457c049).
* 0.5.14+: ``--mamba-radix-cache-strategy auto`` resolves to ``extra_buffer`` when overlap scheduling
  or paging is on, and ``no_buffer`` with speculation is no longer refused.
"""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, Fix, RuleContext
from mtplint.engines import OptionValue

#: first release that refuses instead of silently disabling the radix cache
REFUSES_FROM = "0.5.10"
#: release that renamed the flag to --mamba-radix-cache-strategy (engines/sglang.py MAMBA_STRATEGY_RENAMED)
RENAMED = "0.5.14"


#: a launch that does not draft finds nothing here (not checked: :func:`mtplint.checks.run_rules`)
ONLY_WITH_SETTING = "spec_method"


def check(ctx: RuleContext) -> Iterator[Finding]:
    method = ctx.setting("spec_method")
    if method is None or method.unresolved or method.value is None:
        return
    model = ctx.value("model")
    info = ctx.catalogs.find_model(model if isinstance(model, str) else None)
    if info is None or not info.hybrid:
        return
    if any(setting is not None and setting.unresolved
           for setting in (ctx.setting("prefix_caching"), ctx.setting("mamba_strategy"))):
        return  # e.g. an unread --config file may set either (MTP003 says so)
    radix_off = ctx.option("disable_radix_cache")
    if radix_off is not None and (radix_off.unresolved or radix_off.value):
        return
    strategy = ctx.option("mamba_radix_cache_strategy") or ctx.option("mamba_scheduler_strategy")
    if strategy is not None and strategy.unresolved:
        return
    explicit = strategy.value if strategy is not None else None
    if explicit is not None and str(explicit).startswith("extra_buffer"):
        return
    affected = ctx.affected()
    if explicit != "no_buffer" and affected is not True:
        # `auto` (or unset) resolves differently across the versions still possible: a finding
        # resting on that default needs a known version (docs/versions.md#what-rules-do-with-a-range)
        return
    version = ctx.report.version
    refuses = version.at_least(REFUSES_FROM)
    arch = info.arch
    if refuses is True:
        consequence = (f"SGLang refuses to start (\"Speculative decoding for {arch} is not compatible with radix "
                       "cache when using --mamba-scheduler-strategy no_buffer\")")
    elif refuses is False:
        consequence = "SGLang silently disables the radix cache (no prefix reuse at all)"
    else:
        consequence = "SGLang 0.5.9 silently disables the radix cache and 0.5.10 … 0.5.13 refuse to start"
    how = "`no_buffer`" if explicit == "no_buffer" else "the default `auto` (which resolves to `no_buffer` here)"
    new_name = version.at_least(RENAMED)
    flag = "--mamba-radix-cache-strategy" if new_name is True else "--mamba-scheduler-strategy"
    span = strategy.span if strategy is not None and strategy.span is not None else method.span
    yield ctx.report_finding(
        f"hybrid model {model} with speculative decoding and the radix cache on, mamba strategy {how}: "
        f"{consequence}{ctx.version_note()}; add `{flag} extra_buffer`",
        span,
        fix=_extra_buffer_fix(ctx, strategy, flag),
    )


def _extra_buffer_fix(ctx: RuleContext, strategy: OptionValue | None, flag: str) -> Fix | None:
    """Set the strategy to ``extra_buffer``: the written value is replaced, or the flag is added.
    The flag is added only when the version is pinned: ``--mamba-scheduler-strategy`` is unknown
    from 0.5.20 and ``--mamba-radix-cache-strategy`` before 0.5.14, so no name fits every version."""
    from mtplint.edits.argv import append_flags, replace_flag_value  # noqa: PLC0415 - fixing: only when a fix is built

    launch = ctx.report.launch
    if strategy is not None and strategy.origin == "explicit" and strategy.span is not None \
            and strategy.span.file == launch.source.display and isinstance(strategy.value, str):
        edit = replace_flag_value(launch.source, launch.args, strategy.span, strategy.value, "extra_buffer")
        return Fix("safe", "Use the `extra_buffer` mamba strategy", [edit]) if edit is not None else None
    if strategy is not None or not ctx.report.version.known:
        return None
    edits = append_flags(launch, [flag, "extra_buffer"])
    return Fix("safe", f"Add `{flag} extra_buffer`", edits) if edits else None
