"""MTP504 boolean-flag-with-value: a value given to a switch (``--enforce-eager false``)."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext
from mtplint.checks.mtp5xx import ENGINE_LABELS, flag_name

_FALSE = ("false", "0", "no", "off")


def _negative(ctx: RuleContext, flag: str) -> str | None:
    """The ``--no-`` form of ``flag`` where the engine's parser has one."""
    if ctx.engine == "vllm":
        from mtplint.engines.vllm import load_table

        found = load_table(ctx.report.version.version).by_option.get(flag)
        if found is not None:
            return next(iter(sorted(found.negative)), None)
    return None


def check(ctx: RuleContext) -> Iterator[Finding]:
    engine = ENGINE_LABELS.get(ctx.engine, ctx.engine)
    for error in ctx.errors:
        if error.kind != "bool-value":
            continue
        flag = flag_name(error.flag)
        value = error.message.rsplit("'", 2)[-2] if "explicit argument" in error.message else \
            error.message.split(": ", 1)[-1].split()[0]
        how = "as `=value`, which the parser refuses" if "explicit argument" in error.message else \
            "as a separate word, which the parser takes as a stray argument"
        if value.lower() in _FALSE:
            negative = _negative(ctx, flag)
            instead = f"write `{negative}`" if negative else f"drop `{flag}` (off is its default)"
            meaning = f"`{flag} {value}` reads as \"off\" but"
        else:
            instead = f"write `{flag}` alone"
            meaning = f"`{flag}`"
        yield ctx.report_finding(
            f"{meaning} is a switch that takes no value; `{value}` is given {how}, so {engine} exits "
            f"(\"{error.message}\"); {instead}",
            error.span,
        )
