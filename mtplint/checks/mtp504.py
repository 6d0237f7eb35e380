"""MTP504 boolean-flag-with-value: a value given to a switch (``--enforce-eager false``)."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Edit, Finding, Fix, RuleContext
from mtplint.checks.mtp5xx import ENGINE_LABELS, flag_name
from mtplint.engines import CliError

_FALSE = ("false", "0", "no", "off")
_TRUE = ("true", "1", "yes", "on")


def _negative(ctx: RuleContext, flag: str) -> str | None:
    """The ``--no-`` form of ``flag`` where the engine's parser has one."""
    if ctx.engine == "vllm":
        from mtplint.engines.vllm import load_table  # noqa: PLC0415 - engine lookup: a vLLM launch's table only

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
            fix=_fix(ctx, error, flag, value, _negative(ctx, flag) if value.lower() in _FALSE else None),
        )


def _fix(ctx: RuleContext, error: CliError, flag: str, value: str, negative: str | None) -> Fix | None:
    """Drop the value (``--x true`` → ``--x``), or for a false value write the ``--no-`` form where
    the parser has one, else drop the switch with its value (off is the switch's default). Only for a
    value that reads as a boolean: another word after a switch may be a positional argument."""
    from mtplint.edits.argv import edit_in_word, remove_args, rename_flag, token_containing, token_index  # noqa: PLC0415 - fixing: only when a fix is built

    if value.lower() not in _FALSE + _TRUE:
        return None
    launch = ctx.report.launch
    source = launch.source
    token = token_containing(launch.args, error.span)
    index = token_index(launch.args, token) if token is not None else None
    if token is None or index is None:
        return None
    off = value.lower() in _FALSE
    edits: list[Edit | None]
    name, equals, written_value = token.value.partition("=")
    if equals and name.startswith("-") and written_value == value:
        if not off:
            edits = [edit_in_word(source, token, len(name), len(token.value), "")]
        elif negative:
            edits = [edit_in_word(source, token, 0, len(token.value), negative)]
        else:
            edits = [remove_args(source, launch, index, 1)]
    elif token.value == value and index > 0 and launch.args[index - 1].value.startswith("-"):
        switch = launch.args[index - 1]
        if not off:
            edits = [remove_args(source, launch, index, 1)]
        elif negative:
            edits = [rename_flag(source, switch, negative), remove_args(source, launch, index, 1)]
        else:
            edits = [remove_args(source, launch, index - 1, 2)]
    else:
        return None
    if any(edit is None for edit in edits):
        return None
    message = f"Write `{negative}`" if off and negative else (f"Remove `{flag}` and its value" if off else
                                                              f"Write `{flag}` alone")
    return Fix("safe", message, [edit for edit in edits if edit is not None])
