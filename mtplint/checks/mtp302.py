"""MTP302 too-many-draft-tokens-for-one-mtp-layer: k > 3 reuses a one-layer MTP head until acceptance collapses."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext

#: above this many draft tokens a single reused MTP layer stops paying (rules/MTP302.yaml; docs/llamacpp.md#limits)
MAX_USEFUL_DRAFT_TOKENS = 3

#: what k is called on each engine's command line
K_FLAG = {
    "vllm": '"num_speculative_tokens"',
    "sglang": "--speculative-num-steps",
    "llama.cpp": "--spec-draft-n-max",
}


#: a launch that does not draft finds nothing here (not checked: :func:`mtplint.checks.run_rules`)
ONLY_WITH_SETTING = "spec_method"


def check(ctx: RuleContext) -> Iterator[Finding]:
    if ctx.value("spec_method") != "mtp":
        return
    model = ctx.value("model")
    info = ctx.catalogs.find_model(model) if isinstance(model, str) else None
    # only a model *known* to ship a one-layer head (vLLM warns about reusing it; docs/models.md#where-the-layer-count-is-written)
    if info is None or info.mtp_layers != 1:
        return
    # llama.cpp's unset --spec-draft-n-max is 16 before b9235 and 3 from it: a default only counts
    # when the build is known (docs/versions.md#what-rules-do-with-a-range); asked before the count, which is the newest's
    if ctx.rests_on_version_default("spec_tokens", fires=_too_many):
        return
    k = ctx.value("spec_tokens")
    if not _too_many(k):
        return
    setting = ctx.setting("spec_tokens")
    flag = K_FLAG.get(ctx.engine, "k")
    how = f"{flag} {k}"
    if setting is not None and setting.origin == "default":
        how = f"{flag} defaults to {k} on this build (3 from b9235)"
    yield ctx.report_finding(
        f"{how}: {info.id} has a one-layer MTP head, so every draft token after the first re-runs the same "
        f"layer on its own output and acceptance collapses (llama.cpp on an RTX 4090: 84 tok/s at 3, ~6 tok/s "
        f"at 4 or more); use {flag} {MAX_USEFUL_DRAFT_TOKENS} or less (1-2 for throughput)",
        ctx.span_of("spec_tokens", "spec_method"),
    )


def _too_many(k: object) -> bool:
    """More draft tokens than a one-layer MTP head gives back."""
    return isinstance(k, int) and not isinstance(k, bool) and k > MAX_USEFUL_DRAFT_TOKENS
