"""MTP103 sglang-spec-v2-missing: EAGLE-family speculation without ``SGLANG_ENABLE_SPEC_V2`` runs
without the overlap scheduler.

Facts (docs/sglang.md#sglang_enable_spec_v2; v0.5.9 ``server_args.py`` L2368-2388, ``environ.py`` L414): from
SGLang 0.5.5 (``SPEC_V2_ENV_ADDED``) to 0.5.10.x the variable is ``EnvBool(False)``; unless it is
truthy, EAGLE / EAGLE3 / STANDALONE / NEXTN set ``disable_overlap_schedule = True`` (V1 worker,
a warning, no crash). The default turns on in 0.5.11 (``SPEC_V2_DEFAULT_TRUE``) and the variable is
gone in 0.5.14 (``SPEC_V2_REMOVED``). ``EnvBool`` accepts true/1/yes/y and false/0/no/n (lower-cased);
anything else is ignored with a warning and the default applies. ``SGL_ENABLE_SPEC_V2`` is copied
over ``SGLANG_ENABLE_SPEC_V2`` at import (``_convert_SGL_to_SGLANG``). The engine model's
``spec_v2`` setting applies all of this for the version in play.
"""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, Fix, RuleContext
from mtplint.engines.sglang import (
    EAGLE_FAMILY,
    ENV_FALSE,
    ENV_TRUE,
    SPEC_V2_DEFAULT_TRUE,
    SPEC_V2_ENV_ADDED,
)
from mtplint.source import EnvEntry

#: spec V2 learned the mamba verify-state update in commit e4b708d3 (2026-02-27, first released in
#: v0.5.10rc0); before it V2 on a GDN hybrid (Qwen3-Next / 3.5 / 3.6) is unsupported (the diff of
#: that commit's ``eagle_worker_v2.py``; what happens is uncertain) -- no advice to turn it on there.
HYBRID_SPEC_V2_SUPPORTED = "0.5.10"


def spec_v2_entry(ctx: RuleContext) -> EnvEntry | None:
    """The variable SGLang reads: ``SGL_ENABLE_SPEC_V2`` overwrites ``SGLANG_ENABLE_SPEC_V2``."""
    env = ctx.report.launch.env
    return env.get("SGL_ENABLE_SPEC_V2") or env.get("SGLANG_ENABLE_SPEC_V2")


def eagle_family_algorithm(ctx: RuleContext) -> str | None:
    option = ctx.option("speculative_algorithm")
    if option is None or option.unresolved or not isinstance(option.value, str):
        return None
    algorithm = option.value.upper()
    return algorithm if algorithm in EAGLE_FAMILY else None


def _topk_is_one(ctx: RuleContext) -> bool:
    """``--speculative-eagle-topk 1``, or unset where SGLang's auto choice is 1 (not Llama/Grok's 4)."""
    option = ctx.option("speculative_eagle_topk")
    if option is not None:
        return not option.unresolved and option.value == 1
    auto = ctx.setting("spec_topk")
    if auto is not None and auto.unresolved:
        return False  # an unread --config file may set it (MTP003 says so)
    return not (auto is not None and isinstance(auto.value, int) and auto.value > 1)


#: a launch without ``--speculative-algorithm`` finds nothing here (not checked: :func:`mtplint.checks.run_rules`)
ONLY_WITH_OPTION = ("speculative_algorithm",)


def check(ctx: RuleContext) -> Iterator[Finding]:
    algorithm = eagle_family_algorithm(ctx)
    if algorithm is None or not _topk_is_one(ctx):
        return
    overlap_off = ctx.option("disable_overlap_schedule")
    if overlap_off is not None and (overlap_off.unresolved or overlap_off.value):
        return  # the launch asks for the non-overlap path itself
    version = ctx.report.version
    if version.in_range(SPEC_V2_ENV_ADDED, SPEC_V2_DEFAULT_TRUE) is False:
        return  # the rule's `affected` range says the same; the engine's constants are the source
    model = ctx.value("model")
    info = ctx.catalogs.find_model(model) if isinstance(model, str) else None
    if info is not None and info.hybrid and version.at_least(HYBRID_SPEC_V2_SUPPORTED) is False:
        return
    where = f"SGLang {version.version}" if version.known else \
        f"SGLang before {SPEC_V2_DEFAULT_TRUE}"
    note = ctx.version_note()
    entry = spec_v2_entry(ctx)
    if entry is not None and entry.value.resolved:
        text = entry.value.value.strip().lower()
        if text not in ENV_TRUE and text not in ENV_FALSE:
            yield ctx.report_finding(
                f"{entry.name}={entry.value.value} is not a value SGLang accepts (true/1/yes/y, false/0/no/n): it is "
                f"ignored with a warning and spec V2 stays off on {where}, so {algorithm} speculative decoding runs "
                f"without the overlap scheduler{note}; write {entry.name}=1",
                entry.span or entry.value.span or ctx.span_of("spec_method"),
                fix=_value_fix(ctx, entry),
            )
        return
    if entry is not None:
        return  # unresolved, or a deliberate false/0/no/n
    setting = ctx.setting("spec_v2")
    if setting is None or setting.unresolved \
            or ctx.rests_on_version_default("spec_v2", fires=lambda value: value is False) or setting.value is not False:
        return
    yield ctx.report_finding(
        f"{algorithm} speculative decoding without SGLANG_ENABLE_SPEC_V2: on {where} spec V2 defaults to off, so "
        "SGLang turns the overlap scheduler off (the V1 speculative worker; no error, only a log warning) and "
        f"decoding loses the CPU/GPU overlap{note}; set SGLANG_ENABLE_SPEC_V2=1 in the launch's environment",
        ctx.span_of("spec_method"),
        fix=_add_fix(ctx),
    )


def _add_fix(ctx: RuleContext) -> Fix | None:
    """``SGLANG_ENABLE_SPEC_V2=1`` where the launch's environment is written (mtplint/edits/env.py)."""
    from mtplint.edits.env import set_env  # noqa: PLC0415 - fixing: only when a fix is built

    edits = set_env(ctx.report.launch, "SGLANG_ENABLE_SPEC_V2", "1")
    return Fix("safe", "Set SGLANG_ENABLE_SPEC_V2=1 in the launch's environment", edits) if edits else None


def _value_fix(ctx: RuleContext, entry: EnvEntry) -> Fix | None:
    """The value SGLang ignores becomes ``1``, in place (quotes kept)."""
    from mtplint.edits.env import replace_env_value  # noqa: PLC0415 - fixing: only when a fix is built

    source = ctx.source_for(entry.value.span)
    edits = replace_env_value(source, entry, "1") if source is not None else None
    return Fix("safe", f"Write {entry.name}=1", edits) if edits else None
