"""MTP202 sglang-mem-fraction-high-with-draft: a high ``--mem-fraction-static`` leaves no room for the draft."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext
from mtplint.settings import explicit_origin

THRESHOLD = 0.88


#: a launch that does not draft finds nothing here (not checked: :func:`mtplint.checks.run_rules`)
ONLY_WITH_SETTING = "spec_method"


def check(ctx: RuleContext) -> Iterator[Finding]:
    method = ctx.value("spec_method")
    # NGRAM has no draft model, no draft KV and no draft graphs (its auto memory fraction reserves nothing for it; docs/sglang.md#memory-flags)
    if method is None or method == "ngram":
        return
    setting = ctx.setting("memory_fraction")
    if setting is None or setting.unresolved or not explicit_origin(setting.origin):
        return
    value = setting.value
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value < THRESHOLD:
        return
    gpu = ctx.report.hardware.gpu
    slack = f"{1 - value:.0%} of GPU memory"
    if gpu is not None:
        slack += f" ({(1 - value) * gpu.memory_mib / 1024:.1f} GiB on the {gpu.id})"
    yield ctx.report_finding(
        f"--mem-fraction-static {value:g} with `{method}` drafting: on these SGLang versions the target's weights "
        f"and KV pool fill the whole fraction, so the draft weights, the draft KV pool (same token capacity as the "
        f"target) and the draft CUDA graphs must fit in the remaining {slack}; the automatic value reserves "
        f"2-4 GiB extra for them. Lower it (0.80-0.85) or leave it unset{ctx.version_note()}",
        setting.span,
    )
