"""MTP501 unknown-speculative-config-key: a key vLLM's ``SpeculativeConfig`` does not have."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext
from mtplint.checks.mtp5xx import (
    json_key_span,
    key_history,
    spec_release,
    speculative_config,
    suggestion,
    version_label,
)
from mtplint.checks.mtp406 import CONSEQUENCE
from mtplint.versions import compare


def check(ctx: RuleContext) -> Iterator[Finding]:
    found = speculative_config(ctx)
    if found is None:
        return
    option, spec = found
    release = spec_release(ctx.report.version.version)
    for raw_key in spec:
        # top-level `-` is read as `_` (W33 arg_utils.py create_speculative_config ~L2126)
        key = raw_key.replace("-", "_")
        if (key in release.keys and key != "tensor_parallel_size") or key in release.internal:
            continue
        if key == "tensor_parallel_size":
            hint = "vLLM refuses it by name: use `draft_tensor_parallel_size`"
        else:
            first, _ = key_history(key)
            if first is not None and compare(first, release.version) > 0:
                hint = f"it was added in vLLM {first}; upgrade or remove it"
            else:
                hint = suggestion(key, release.keys) or "remove it"
        yield ctx.report_finding(
            f"`{raw_key}` is not a speculative-config key of {version_label(ctx)}: "
            f"{CONSEQUENCE[release.unknown_keys]}; {hint}",
            json_key_span(ctx, option, raw_key),
        )
