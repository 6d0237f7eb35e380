"""MTP406 removed-speculative-config-key: a ``--speculative-config`` key an older vLLM had."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext
from mtplint.checks.mtp5xx import (
    json_key_span,
    key_history,
    spec_release,
    spec_releases,
    speculative_config,
    version_label,
)
from mtplint.versions import compare

#: what to write instead, where something replaced the key (docs/vllm.md#speculative-config-keys)
INSTEAD = {
    "acceptance_method": "`rejection_sample_method` (0.20+) is the closest setting",
    "posterior_threshold": "`rejection_sample_method` (0.20+) is the closest setting",
    "posterior_alpha": "`rejection_sample_method` (0.20+) is the closest setting",
    "disable_by_batch_size": "no replacement: speculation can no longer switch off by queue length "
                             "(`num_speculative_tokens_per_batch_size` sets k per batch size from 0.27)",
    "speculative_token_tree": "no replacement: tree drafting was removed",
}
CONSEQUENCE = {
    "type-error": "startup fails with TypeError (unexpected keyword argument)",
    "ignored": "the key is dropped silently",
    "refused": "startup fails (SpeculativeConfig forbids extra fields: pydantic ValidationError)",
}


#: a launch without ``speculative_config`` finds nothing here (not checked: :func:`mtplint.checks.run_rules`)
ONLY_WITH_OPTION = ("speculative_config",)


def check(ctx: RuleContext) -> Iterator[Finding]:
    found = speculative_config(ctx)
    if found is None:
        return
    option, spec = found
    release = spec_release(ctx.report.version.version)
    for raw_key in spec:
        key = raw_key.replace("-", "_")
        if key in release.keys or key in release.internal:
            continue
        first, gone = key_history(key)
        if first is None or gone is None or compare(first, release.version) >= 0:
            continue  # never a field (MTP501), or only added later
        instead = INSTEAD.get(key, "remove it")
        last = [r.version for r in spec_releases() if key in r.keys and compare(r.version, gone) < 0][-1]
        yield ctx.report_finding(
            f"speculative-config key `{raw_key}` was removed from vLLM (still a field in {last}, gone by {gone}) "
            f"and is not a field on {version_label(ctx)}: {CONSEQUENCE[release.unknown_keys]}; {instead}",
            json_key_span(ctx, option, raw_key),
        )
