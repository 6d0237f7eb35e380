"""MTP112 sglang-spec-fatal-combination: speculative settings SGLang refuses at startup.

Each combination is checked in the release wheels' ``server_args.py`` / ``arg_groups/*.py``
(docs/sglang.md#validation):

* ``--pp-size`` > 1 with any algorithm: ``AssertionError: Pipeline parallelism is not compatible with
  overlap schedule, speculative decoding, mixed chunked prefill`` (v0.5.4 … 0.5.19). From 0.5.20
  (``validation_hook.check_pipeline_parallel_compat``) only EAGLE/NEXTN (not multi-layer) and DSPARK
  (PD prefill) may run with pipeline parallelism.
* ``--attention-backend flex_attention`` with any algorithm: ``AssertionError: Speculative decoding is
  currently not supported with Flex Attention backend`` (every release read).
* a ``trtllm_mha`` attention/decode/prefill backend with EAGLE-family topk > 1: ``ValueError: trtllm_mha
  backend only supports topk = 1 for speculative decoding.`` (every release read; the check runs after
  the automatic (steps, topk, draft tokens) choice, so an automatic topk of 4 counts).
* STANDALONE or NGRAM with ``--enable-dp-attention``: ``ValueError: Currently standalone/ngram
  speculative decoding does not support dp attention.`` (every release read); DFLASH likewise from
  0.5.11 to 0.5.22 (NPU excepted from 0.5.20); 0.5.23 allows it with ``--enable-dp-lm-head``.
* ``--disable-radix-cache`` with mamba ``extra_buffer`` on a hybrid model: ``ValueError: mamba
  extra_buffer is not compatible with --disable-radix-cache`` (0.5.10 … 0.5.13, whether or not
  speculation is on); from 0.5.14 extra_buffer simply does not apply without the radix cache.
"""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext
from mtplint.engines import OptionValue
from mtplint.engines.sglang import EAGLE_FAMILY
from mtplint.source import Span

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PP_EAGLE_ALLOWED = "0.5.20"
DFLASH_DP_NPU_ONLY = "0.5.20"
DFLASH_DP_WITH_LM_HEAD = "0.5.23"
EXTRA_BUFFER_RADIX_ERROR = ("0.5.10", "0.5.14")
TRTLLM_BACKENDS = ("attention_backend", "decode_attention_backend", "prefill_attention_backend")


def _value(option: OptionValue | None) -> Any:
    return None if option is None or option.unresolved else option.value


def _range_note(answer: bool | None, described: str) -> str:
    return "" if answer is not None else f" (on {described}; the sglang version is not pinned)"


def check(ctx: RuleContext) -> Iterator[Finding]:
    yield from _extra_buffer_without_radix(ctx)
    algorithm_option = ctx.option("speculative_algorithm")
    algorithm_value = _value(algorithm_option)
    if not isinstance(algorithm_value, str):
        return
    algorithm = algorithm_value.upper()
    if algorithm == "NEXTN":
        algorithm = "EAGLE"  # a pure alias (docs/sglang.md#nextn-is-eagle)
    fallback = algorithm_option.span if algorithm_option is not None else None
    version = ctx.report.version

    # pipeline parallelism
    pp = ctx.option("pp_size")
    pp_size = _value(pp)
    if isinstance(pp_size, int) and pp_size > 1:
        eagle_ok = algorithm in ("EAGLE", "DSPARK") and not _value(ctx.option("enable_multi_layer_eagle"))
        refused = True if not eagle_ok else version.in_range(None, PP_EAGLE_ALLOWED)
        if refused is not False:
            note = _range_note(refused, f"SGLang <{PP_EAGLE_ALLOWED}; later releases run EAGLE/NEXTN with it")
            later = "" if eagle_ok else f" (SGLang {PP_EAGLE_ALLOWED}+ allows only EAGLE/NEXTN with pipeline parallelism)"
            yield ctx.report_finding(
                f"pipeline parallelism (`--pp-size {pp_size}`) with speculative algorithm {algorithm_value}: SGLang "
                f"refuses to start (\"Pipeline parallelism is not compatible with … speculative decoding\"){note}{later}; "
                "use tensor parallelism instead, or turn speculation off",
                _span(pp, fallback),
            )

    # flex attention
    backend = ctx.option("attention_backend")
    if _value(backend) == "flex_attention":
        yield ctx.report_finding(
            f"`--attention-backend flex_attention` with speculative algorithm {algorithm_value}: SGLang refuses to "
            "start (\"Speculative decoding is currently not supported with Flex Attention backend\"); choose another "
            "attention backend (e.g. `triton` or `flashinfer`) or turn speculation off",
            _span(backend, fallback),
        )

    # trtllm_mha with tree drafting
    if algorithm in EAGLE_FAMILY:
        trtllm = next((ctx.option(n) for n in TRTLLM_BACKENDS if _value(ctx.option(n)) == "trtllm_mha"), None)
        topk = ctx.setting("spec_topk")
        if trtllm is not None and topk is not None and not topk.unresolved and isinstance(topk.value, int) \
                and topk.value > 1 and not topk.extra.get("auto_depends_on_architecture"):
            how = "the automatic topk" if topk.origin == "default" else "`--speculative-eagle-topk`"
            yield ctx.report_finding(
                f"`trtllm_mha` attention with {how} {topk.value}: SGLang refuses to start (\"trtllm_mha backend only "
                "supports topk = 1 for speculative decoding\"); set `--speculative-eagle-topk 1` or use another "
                "attention backend",
                topk.span if topk.origin != "default" and topk.span is not None else _span(trtllm, fallback),
            )

    # dp attention
    dp = ctx.option("enable_dp_attention")
    if _value(dp):
        yield from _dp_attention(ctx, algorithm, algorithm_value, _span(dp, fallback))


def _dp_attention(ctx: RuleContext, algorithm: str, written: str, span: Span | None) -> Iterator[Finding]:
    version = ctx.report.version
    if algorithm in ("STANDALONE", "NGRAM"):
        yield ctx.report_finding(
            f"`--enable-dp-attention` with speculative algorithm {written}: SGLang refuses to start (\"Currently "
            f"{'standalone' if algorithm == 'STANDALONE' else 'ngram'} speculative decoding does not support dp "
            "attention\"); drop `--enable-dp-attention` or use an EAGLE-family algorithm",
            span,
        )
        return
    if algorithm != "DFLASH":
        return
    if _value(ctx.option("device")) == "npu" and version.at_least(DFLASH_DP_NPU_ONLY) is True:
        return
    before_lm_head = version.in_range(None, DFLASH_DP_WITH_LM_HEAD)
    if before_lm_head is False and _value(ctx.option("enable_dp_lm_head")):
        return
    if before_lm_head is False:
        yield ctx.report_finding(
            f"`--enable-dp-attention` with speculative algorithm {written}: SGLang refuses to start (\"DFLASH with "
            "dp attention requires --enable-dp-lm-head\"); add `--enable-dp-lm-head`",
            span,
        )
        return
    note = _range_note(before_lm_head, f"SGLang <{DFLASH_DP_WITH_LM_HEAD}; {DFLASH_DP_WITH_LM_HEAD}+ accepts it "
                                      "with `--enable-dp-lm-head`")
    yield ctx.report_finding(
        f"`--enable-dp-attention` with speculative algorithm {written}: SGLang refuses to start (\"Currently DFLASH "
        f"speculative decoding does not support dp attention\"){note}; drop `--enable-dp-attention`",
        span,
    )


def _extra_buffer_without_radix(ctx: RuleContext) -> Iterator[Finding]:
    radix_off = ctx.option("disable_radix_cache")
    if not _value(radix_off):
        return
    strategy = ctx.option("mamba_radix_cache_strategy") or ctx.option("mamba_scheduler_strategy")
    if _value(strategy) != "extra_buffer":
        return
    model = _value(ctx.option("model_path"))
    info = ctx.catalogs.find_model(model if isinstance(model, str) else None)
    if info is None or not info.hybrid:
        return  # the mamba strategy is only read for hybrid models
    answer = ctx.report.version.in_range(*EXTRA_BUFFER_RADIX_ERROR)
    if answer is False:
        return
    low, below = EXTRA_BUFFER_RADIX_ERROR
    yield ctx.report_finding(
        "`--disable-radix-cache` with mamba strategy `extra_buffer`: SGLang refuses to start (\"mamba extra_buffer "
        f"is not compatible with --disable-radix-cache\"){_range_note(answer, f'SGLang {low} … <{below}')}; "
        "drop `--disable-radix-cache` (extra_buffer exists to keep the radix cache) or use `no_buffer`",
        _span(radix_off, strategy.span if strategy is not None else None),
    )


def _span(option: OptionValue | None, fallback: Span | None) -> Span | None:
    if option is not None and option.span is not None:
        return option.span
    return fallback
