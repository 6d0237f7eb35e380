"""MTP507 sglang-draft-shape-inconsistent: EAGLE-family steps / topk / draft tokens that do not fit.

SGLang v0.5.9 ``server_args.py`` L2422-2451 (docs/sglang.md#auto-selection): without
``--speculative-num-steps`` it asserts that topk and draft tokens are unset too, then picks all three;
with topk 1 it resets draft tokens to steps + 1 with a warning.
"""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, Fix, RuleContext
from mtplint.engines import OptionValue

EAGLE_FAMILY = frozenset({"NEXTN", "EAGLE", "EAGLE3", "STANDALONE"})


def _given(ctx: RuleContext, dest: str) -> tuple[object, bool]:
    """(value, explicitly set and resolved)."""
    option = ctx.option(dest)
    if option is None or option.origin == "default" or option.value is None:
        return None, False
    if option.unresolved:
        return None, True
    return option.value, True


def _set_draft_tokens(ctx: RuleContext, option: OptionValue | None, old: int, new: int) -> Fix | None:
    """Replace the number in ``--speculative-num-draft-tokens N`` / ``=N`` where it is written."""
    from mtplint.edits.argv import replace_flag_value  # noqa: PLC0415 - fixing: only when a fix is built

    if option is None or option.span is None or option.unresolved:
        return None
    source = ctx.source_for(option.span)
    if source is None:
        return None
    edit = replace_flag_value(source, ctx.report.launch.args, option.span, str(old), str(new))
    if edit is None:
        return None
    return Fix("safe", f"Set `--speculative-num-draft-tokens` to {new} (steps + 1)", [edit])


#: a launch without ``--speculative-algorithm`` finds nothing here (not checked: :func:`mtplint.checks.run_rules`)
ONLY_WITH_OPTION = ("speculative_algorithm",)


def check(ctx: RuleContext) -> Iterator[Finding]:
    algorithm = ctx.option("speculative_algorithm")
    if algorithm is None or algorithm.unresolved or not isinstance(algorithm.value, str):
        return
    name = algorithm.value.upper()
    if name not in EAGLE_FAMILY:
        return
    steps, steps_set = _given(ctx, "speculative_num_steps")
    topk, topk_set = _given(ctx, "speculative_eagle_topk")
    drafts, drafts_set = _given(ctx, "speculative_num_draft_tokens")
    if not steps_set and (topk_set or drafts_set):
        dest = "speculative_eagle_topk" if topk_set else "speculative_num_draft_tokens"
        option = ctx.option(dest)
        given = " and ".join(f for f, on in (("--speculative-eagle-topk", topk_set),
                                             ("--speculative-num-draft-tokens", drafts_set)) if on)
        yield ctx.report_finding(
            f"{given} without `--speculative-num-steps`: with {name} SGLang picks steps, topk and draft tokens "
            "itself only when all three are unset, and otherwise stops at startup with a bare AssertionError; "
            "set `--speculative-num-steps` too (e.g. steps 3, topk 1, draft tokens 4)",
            option.span if option is not None else None,
            severity="error",
        )
        return
    if topk == 1 and isinstance(steps, int) and isinstance(drafts, int) and drafts != steps + 1:
        option = ctx.option("speculative_num_draft_tokens")
        yield ctx.report_finding(
            f"`--speculative-num-draft-tokens {drafts}` with topk 1 and {steps} steps is silently reset to "
            f"{steps + 1} (steps + 1) by SGLang: the launch does not run what it says; set it to {steps + 1} "
            "or raise `--speculative-eagle-topk` for a tree",
            option.span if option is not None else None,
            fix=_set_draft_tokens(ctx, option, drafts, steps + 1),
        )
