"""MTP101 turboquant-with-speculative-decoding: TurboQuant KV cache + any speculative method loops.

vLLM #40831 (docs/vllm.md#turboquant-kv-cache-with-speculation): every ``turboquant_*`` KV-cache dtype combined with speculative
decoding -- MTP at k=1 and k=3, and ngram (reproduced on 0.19.2rc1) -- produces degenerate token
loops, on dense and hybrid models alike; ``fp8_e5m2`` KV with MTP is fine, and TurboQuant without
speculation is fine. No fix was merged through 0.33.0: vLLM 0.33.0 ``v1/attention/backends/turboquant_attn.py``
L220-224 still pairs ``_cudagraph_support = UNIFORM_BATCH`` with ``supports_spec_as_decode=False``,
the pair #53406 names as the root cause (fix PRs #40914, #53406, #53410 open, #43887 closed).
"""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Edit, Finding, Fix, RuleContext
from mtplint.engines.vllm import key_span
from mtplint.settings import turboquant_kv
from mtplint.source import Span

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: the speculative-config ``kv_cache_dtype`` key (the drafter's own KV dtype) exists from vLLM 0.27
#: (vLLM 0.27.1 ``vllm/config/speculative.py``; docs/vllm.md#speculative-config-keys)
DRAFT_KV_DTYPE_ADDED = "0.27.0"


def _speculation(ctx: RuleContext) -> str | None:
    """How the launch speculates, for the message: the method, or ``None`` when it does not (or
    when that is not known -- an unresolved ``--speculative-config`` is MTP003's business)."""
    method = ctx.setting("spec_method")
    if method is None or method.unresolved:
        return None
    if method.value is not None:
        return str(method.extra.get("raw") or method.value)
    spec = ctx.option("speculative_config")
    if spec is not None and not spec.unresolved and isinstance(spec.value, dict) and spec.value:
        # a speculative config without a method vLLM can infer still turns speculation on (or fails)
        return "speculative"
    return None


def _draft_kv_dtype(ctx: RuleContext) -> tuple[Any, Span | None]:
    """The drafter's ``kv_cache_dtype`` override from the speculative config, and its span."""
    spec = ctx.option("speculative_config")
    if spec is None or spec.unresolved or not isinstance(spec.value, dict):
        return None, None
    for key, value in spec.value.items():
        if str(key).replace("-", "_") == "kv_cache_dtype":
            return value, key_span(spec, str(key))
    return None, None


#: the KV-cache dtype reported to work with MTP (#40831)
SAFE_DTYPE = "fp8_e5m2"


def _target_dtype_fix(ctx: RuleContext, value: str, span: Span | None) -> Fix | None:
    """``--kv-cache-dtype turboquant_*`` → ``fp8_e5m2`` where the value was written (a word of the
    argv, a ``--config`` YAML value, a Python keyword argument)."""
    from mtplint.edits.argv import replace_flag_value, replace_kwarg_string  # noqa: PLC0415 - fixing: only when a fix is built

    launch = ctx.report.launch
    source = ctx.source_for(span)
    if span is None or source is None:
        return None
    edit: Edit | None = None
    if launch.kwargs is not None:
        kwarg = launch.kwargs.get("kv_cache_dtype")
        if kwarg is not None and kwarg.span == span:
            edit = replace_kwarg_string(source, kwarg, value, SAFE_DTYPE)
    elif span.file == launch.source.display:
        edit = replace_flag_value(source, launch.args, span, value, SAFE_DTYPE)
    else:
        # a ``kv-cache-dtype: turboquant_*`` line of the ``--config`` YAML
        raw = source.text[span.start:span.end]
        if raw.strip("'\"") == value:
            quote = len(raw) - len(raw.lstrip("'\""))
            edit = Edit(source.span(span.start + quote, span.start + quote + len(value)), SAFE_DTYPE)
    if edit is None:
        return None
    return Fix("unsafe", f"Use `--kv-cache-dtype {SAFE_DTYPE}`", [edit])


def check(ctx: RuleContext) -> Iterator[Finding]:
    method = _speculation(ctx)
    if method is None:
        return
    described = "speculative decoding" if method == "speculative" else f"`{method}` speculative decoding"
    target = ctx.setting("kv_cache_dtype")
    draft_value, draft_span = _draft_kv_dtype(ctx)
    if target is not None and not target.unresolved and turboquant_kv(target.value):
        override = ""
        if draft_value is not None and not turboquant_kv(draft_value):
            override = (f"; the drafter's `\"kv_cache_dtype\": \"{draft_value}\"` does not help, the target model "
                        "still verifies draft tokens through the TurboQuant backend")
        yield ctx.report_finding(
            f"KV-cache dtype `{target.value}` (TurboQuant) with {described}: generation degenerates into repeated "
            f"tokens and tool-call loops (vLLM #40831, unfixed through 0.33){override}; use "
            "`--kv-cache-dtype fp8_e5m2` (reported to work with MTP) or turn speculation off",
            target.span or ctx.span_of("kv_cache_dtype", "spec_method"),
            fix=_target_dtype_fix(ctx, str(target.value), target.span),
        )
        return
    if turboquant_kv(draft_value) and ctx.report.version.at_least(DRAFT_KV_DTYPE_ADDED) is not False:
        # the drafter alone on TurboQuant: the backend that cannot run speculative batches is the same
        # one (inferred from #40831 / #53406; the reports used TurboQuant for the whole model)
        yield ctx.report_finding(
            f"the drafter's KV-cache dtype `{draft_value}` (speculative config `kv_cache_dtype`) is TurboQuant: its "
            "attention backend does not support speculative batches, the cause of the token loops in vLLM #40831 "
            f"(reported with TurboQuant for the whole model; unfixed through 0.33); use `fp8_e5m2` or leave "
            "the key out",
            draft_span or ctx.span_of("spec_method"),
            fix=_draft_dtype_fix(ctx, str(draft_value), draft_span),
        )


def _draft_dtype_fix(ctx: RuleContext, value: str, span: Span | None) -> Fix | None:
    """The speculative config's ``kv_cache_dtype`` → ``fp8_e5m2``, edited where the JSON (or
    Python dict, or ``--config`` mapping) is written, in its own style; a dotted
    ``--speculative-config.kv_cache_dtype`` word has its value replaced."""
    from mtplint.edits.argv import replace_flag_value  # noqa: PLC0415 - fixing: only when a fix is built
    from mtplint.edits.jsonvalue import spec_site  # noqa: PLC0415 - fixing: only when a fix is built

    launch = ctx.report.launch
    edits: list[Edit] | None = None
    site = spec_site(ctx, ctx.option("speculative_config"))
    if site is not None:
        keys = [key for key in site.value() if str(key).replace("-", "_") == "kv_cache_dtype"]
        if len(keys) == 1:
            edits = site.set_value(keys[0], SAFE_DTYPE)
    if not edits and span is not None and span.file == launch.source.display:
        token = launch.args
        edit = replace_flag_value(launch.source, token, span, value, SAFE_DTYPE)
        edits = [edit] if edit is not None else None
    return Fix("unsafe", f"Use `\"kv_cache_dtype\": \"{SAFE_DTYPE}\"` for the drafter", edits) if edits else None
