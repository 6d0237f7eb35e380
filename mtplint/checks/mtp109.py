"""MTP109 mtp-without-token-count: MTP in vLLM without ``num_speculative_tokens`` does not start.

``SpeculativeConfig.__post_init__`` (vLLM 0.33.0 ``vllm/config/speculative.py``;
docs/vllm.md#method-names-and-their-normalisation): with ``method`` ``mtp`` (every ``*_mtp`` alias is normalised to it) and no
``num_speculative_tokens``, vLLM only fills the draft model from the target when a token count is
given. Without one and without ``model`` no draft config is built and ``_verify_args`` raises
``ValueError("num_speculative_tokens must be provided with speculative model unless the draft model
config contains an n_predict parameter.")`` (L1946-1951); with ``model`` set, ``num_speculative_tokens
> 1`` compares ``None`` with an int: ``TypeError`` (issue #55323, open; path present through 0.33).
"""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, Fix, RuleContext
from mtplint.engines.vllm import JsonOptionValue

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mtplint.engines import OptionValue


def _dotted_fix(ctx: RuleContext, option: OptionValue | None) -> Fix | None:
    """``--speculative-config.method mtp`` on a command line: add the dotted token count after it."""
    from mtplint.edits.argv import insert_after  # noqa: PLC0415 - fixing: only when a fix is built

    if not isinstance(option, JsonOptionValue) or option.replaced is not None:
        return None
    method_at = option.key_spans.get("method")
    args = ctx.report.launch.args
    for index, token in enumerate(args[:-1]):
        value = args[index + 1]
        if (token.value.split("=", 1)[0] not in ("--speculative-config.method", "-sc.method")
                or "=" in token.value or value.span != method_at or token.span is None or value.span is None):
            continue
        source = ctx.source_for(value.span)
        edits = insert_after(source, value, ["--speculative-config.num_speculative_tokens", "1"]) if source else None
        return Fix("unsafe", "Add `--speculative-config.num_speculative_tokens 1`", edits) if edits else None
    return None


def _fix(ctx: RuleContext) -> Fix | None:
    """Add ``"num_speculative_tokens": 1`` to the object that sets the method. Unsafe: 1 is a guess
    at what the user wants (right for one MTP layer; the tuner knows better)."""
    from mtplint.edits.jsonvalue import spec_site  # noqa: PLC0415 - fixing: only when a fix is built

    option = ctx.option("speculative_config")
    site = spec_site(ctx, option)
    if site is None:
        return _dotted_fix(ctx, option)
    if "method" not in {key.replace("-", "_") for key in site.value()}:
        return None
    edits = site.add_key("num_speculative_tokens", 1)
    return Fix("unsafe", "Add `\"num_speculative_tokens\": 1` to the speculative config", edits) if edits else None


#: a launch that does not draft finds nothing here (not checked: :func:`mtplint.checks.run_rules`)
ONLY_WITH_SETTING = "spec_method"


def check(ctx: RuleContext) -> Iterator[Finding]:
    method = ctx.setting("spec_method")
    if method is None or method.unresolved or method.value != "mtp":
        return
    tokens = ctx.setting("spec_tokens")
    if tokens is None or tokens.unresolved or tokens.value is not None or tokens.origin != "default":
        return
    if ctx.report.parsed.open_ended:
        return  # "$@" or an unread --config may still add the count (MTP003 says so)
    spec = ctx.option("speculative_config")
    spec_values = spec.value if spec is not None and isinstance(spec.value, dict) else {}
    has_model = spec_values.get("model") is not None or ctx.option("spec_model") is not None
    raw = method.extra.get("raw", method.value)
    if has_model:
        consequence = "vLLM fails at startup with a TypeError comparing None with an int (vLLM #55323)"
    else:
        consequence = ("vLLM fails at startup with \"ValueError: num_speculative_tokens must be provided with "
                       "speculative model\"")
    shortcut = ctx.option("spec_method") is not None and "method" not in spec_values
    fix = "add `--spec-tokens 1`" if shortcut else "add `\"num_speculative_tokens\": 1` to the speculative config"
    yield ctx.report_finding(
        f"speculative method `{raw}` without `num_speculative_tokens`: {consequence}; {fix} "
        "(1 suits a model with one MTP layer; more draft tokens reuse that layer)",
        method.span or ctx.span_of("spec_tokens"),
        fix=None if shortcut else _fix(ctx),
    )
