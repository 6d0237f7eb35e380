"""MTP505 invalid-kv-cache-dtype: a ``--kv-cache-dtype`` the engine does not accept."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, Fix, RuleContext
from mtplint.checks.mtp5xx import ENGINE_LABELS, closest, flag_name, version_label
from mtplint.settings import turboquant_kv
from mtplint.source import Span

#: vLLM 0.33 validates the value at startup, not in argparse (vLLM 0.33.0 config/cache.py L44-67
#: ``CacheDType``; docs/vllm.md#memory-flags); platform plugins may register more names
VLLM_033_DTYPES = frozenset({
    "auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla", "nvfp4_ds_mla",
    "turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc", "turboquant_3bit_nc", "octave_k3v4",
    "octave_k3v3", "octave_k3v3_compact", "ultraquant_4bit", "int4_per_token_head", "int8_per_token_head",
    "fp8_per_token_head", "nvfp4", "nvfp4_4over6",
})


def _hint(ctx: RuleContext, value: str, choices: list[str]) -> str:
    if ctx.engine == "sglang" and value.lower() == "fp8":
        # docs/sglang.md#memory-flags: choices are fp8_e5m2/fp8_e4m3, `fp8` alone is invalid
        return "use `fp8_e4m3` (or `fp8_e5m2`); SGLang has no plain `fp8`"
    left_out = ""
    if ctx.value("spec_method"):
        # MTP101 forbids TurboQuant with any speculative method on the same token: never suggest one
        if any(turboquant_kv(c) for c in closest(value, choices, cutoff=0.5)[:2]):
            left_out = ("; TurboQuant dtypes are left out: with speculative decoding they make vLLM generate "
                        "degenerate loops (MTP101)")
        choices = [c for c in choices if not turboquant_kv(c)]
    return _suggestion(value, choices) + left_out


def _suggestion(value: str, choices: list[str]) -> str:
    near = closest(value, choices, cutoff=0.5)
    if near:
        return "use " + " or ".join(f"`{c}`" for c in near[:2])
    common = [c for c in ("auto", "fp8", "fp8_e4m3", "fp8_e5m2", "bfloat16") if c in choices]
    rest = len(choices) - len(common)
    return "use one of " + ", ".join(f"`{c}`" for c in common) + (f" (or {rest} more)" if rest > 0 else "")


def _sglang_fp8_fix(ctx: RuleContext, span: Span | None) -> Fix | None:
    """SGLang ``fp8`` → ``fp8_e4m3`` (its fp8 KV format on Hopper/Blackwell; docs/sglang.md#memory-flags)."""
    from mtplint.edits.argv import replace_flag_value, replace_kwarg_string  # noqa: PLC0415 - fixing: only when a fix is built

    launch = ctx.report.launch
    source = ctx.source_for(span)
    if span is None or source is None:
        return None
    kwarg = launch.kwargs.get("kv_cache_dtype") if launch.kwargs is not None else None
    if kwarg is not None:
        edit = replace_kwarg_string(source, kwarg, "fp8", "fp8_e4m3")
    else:
        tokens = [*launch.args, *(entry.value for entry in launch.env.values())]
        edit = replace_flag_value(source, tokens, span, "fp8", "fp8_e4m3")
    return Fix("safe", "Use `fp8_e4m3`", [edit]) if edit is not None else None


def check(ctx: RuleContext) -> Iterator[Finding]:
    engine = ENGINE_LABELS.get(ctx.engine, ctx.engine)
    for error in ctx.errors:
        if error.kind != "invalid-choice" or flag_name(error.flag) not in ("--kv-cache-dtype", "kv_cache_dtype"):
            continue
        listed = error.message.split("choose from", 1)[-1].strip(" )")
        choices = [c.strip(" '\"") for c in listed.split(",")]
        value = error.message.split("invalid choice:", 1)[-1].split("(", 1)[0].strip(" '\"")
        yield ctx.report_finding(
            f"`--kv-cache-dtype {value}` is not a value {version_label(ctx)} accepts: {engine} exits with "
            f"\"invalid choice\"; {_hint(ctx, value, choices)}",
            error.span,
            fix=_sglang_fp8_fix(ctx, error.span) if ctx.engine == "sglang" and value == "fp8" else None,
        )
    if ctx.engine == "vllm" and ctx.report.version.at_least("0.33.0") is not False:
        from mtplint.engines.vllm import load_table  # noqa: PLC0415 - engine lookup: a vLLM launch's table only

        flag = load_table(ctx.report.version.version).by_dest.get("kv_cache_dtype")
        option = ctx.option("kv_cache_dtype")
        if flag is None or flag.choices is not None or option is None or option.unresolved:
            return
        value = option.value
        if isinstance(value, str) and value not in VLLM_033_DTYPES:
            yield ctx.report_finding(
                f"`--kv-cache-dtype {value}` is not a KV cache dtype of {version_label(ctx)}: startup fails with "
                f"\"Invalid kv_cache_dtype\" unless a platform plugin registers it; "
                f"{_hint(ctx, value, sorted(VLLM_033_DTYPES))}",
                option.span,
            )
