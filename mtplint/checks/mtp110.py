"""MTP110 chunked-prefill-off-with-hybrid-prefix-cache: vLLM asserts at startup.

From vLLM 0.28 (PR #50991) prefix caching is on by default for Mamba/GDN hybrids (Qwen3-Next,
Qwen3.5, Qwen3.6); with it on, vLLM switches the hybrid to ``mamba_cache_mode="align"`` and asserts
``enable_chunked_prefill`` ("Chunked prefill is required for Mamba prefix caching.",
``model_executor/models/config.py`` L763-773, docs/vllm.md#prefix-caching-defaults,
inferred from the code). The official Qwen3-Next MTP recipe passes ``--no-enable-chunked-prefill``
(docs/vllm.md#recipes), so following it on 0.28+ fails to start.
"""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext
from mtplint.checks.mtp102 import prefix_caching_off_fix


def check(ctx: RuleContext) -> Iterator[Finding]:
    chunked = ctx.setting("chunked_prefill")
    if chunked is None or chunked.unresolved or chunked.value is not False or chunked.origin == "default":
        return
    model = ctx.value("model")
    info = ctx.catalogs.find_model(model if isinstance(model, str) else None)
    if info is None or not info.hybrid:
        return
    prefix = ctx.setting("prefix_caching")
    if prefix is None or prefix.unresolved or prefix.value is not True:
        return
    # The affected range (≥0.28) is exactly where the hybrid default is on, so a default-on prefix
    # cache does not rest on a default that differs inside the range; version_note() names it.
    how = "on by default" if prefix.origin == "default" else "on"
    yield ctx.report_finding(
        f"chunked prefill is off while prefix caching is {how} for the hybrid (GDN) model {model}: vLLM fails at startup "
        f"with \"AssertionError: Chunked prefill is required for Mamba prefix caching\"{ctx.version_note()}; "
        "add `--no-enable-prefix-caching`, or drop `--no-enable-chunked-prefill`",
        chunked.span,
        fix=prefix_caching_off_fix(ctx, "safe"),
    )
