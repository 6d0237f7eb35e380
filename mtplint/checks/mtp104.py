"""MTP104 sglang-spec-v2-with-topk: ``SGLANG_ENABLE_SPEC_V2`` on with ``--speculative-eagle-topk`` > 1.

From SGLang 0.5.7 to 0.5.10.x ``_handle_speculative_decoding`` raises "Spec v2 currently only
supports topk = 1 for speculative decoding." when the variable is truthy and the explicit topk is
above 1 (docs/sglang.md#validation, v0.5.9 ``server_args.py`` L2368-2383). 0.5.5/0.5.6 have
no such check; from the 0.5.11 default flip (commit 79dbfe45) topk > 1 falls back to V1 with a
warning, and later releases support tree drafting on V2 (f68c7967). The check runs before SGLang's
auto-selection, so only an explicit topk counts.
"""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext
from mtplint.checks.mtp103 import eagle_family_algorithm, spec_v2_entry
from mtplint.engines.sglang import ENV_TRUE

#: the topk check first appears in sglang 0.5.7 (v0.5.5/v0.5.6 have none; docs/sglang.md#validation)
SPEC_V2_TOPK_CHECK_ADDED = "0.5.7"


#: a launch without ``--speculative-algorithm`` finds nothing here (not checked: :func:`mtplint.checks.run_rules`)
ONLY_WITH_OPTION = ("speculative_algorithm",)


def check(ctx: RuleContext) -> Iterator[Finding]:
    algorithm = eagle_family_algorithm(ctx)
    if algorithm is None:
        return
    topk = ctx.option("speculative_eagle_topk")
    if topk is None or topk.unresolved or not isinstance(topk.value, int) or topk.value <= 1:
        return
    entry = spec_v2_entry(ctx)
    if entry is None or not entry.value.resolved or entry.value.value.strip().lower() not in ENV_TRUE:
        return
    env_at = entry.span or entry.value.span
    env_where = f" (line {env_at.line})" if env_at is not None and env_at.file == (topk.span.file if topk.span else "") \
        else (f" ({env_at.file}:{env_at.line})" if env_at is not None else "")
    yield ctx.report_finding(
        f"--speculative-eagle-topk {topk.value} with {entry.name}={entry.value.value}{env_where}: SGLang "
        f"{SPEC_V2_TOPK_CHECK_ADDED} … 0.5.10.x refuses to start (\"Spec v2 currently only supports topk = 1\")"
        f"{ctx.version_note()}; use --speculative-eagle-topk 1 (with --speculative-num-draft-tokens = steps + 1) "
        f"or drop {entry.name}",
        topk.span or ctx.span_of("spec_topk"),
    )
