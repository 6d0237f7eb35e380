"""MTP503 invalid-speculative-config-json: ``--speculative-config`` that is not strict JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator

from mtplint.checks import Finding, Fix, RuleContext
from mtplint.checks.mtp5xx import flag_name
from mtplint.source import Span


def _as_json(text: str) -> dict[str, object] | None:
    """The Python-literal dict ``text`` is, when it has a JSON spelling with the same meaning."""
    from mtplint import pysyntax  # noqa: PLC0415 - ast: only for a config that is not JSON

    try:
        literal = pysyntax.literal(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if not isinstance(literal, dict) or not all(isinstance(key, str) for key in literal):
        return None
    try:
        if json.loads(json.dumps(literal)) != literal:
            return None  # tuples, sets, non-finite floats: JSON would change them
    except (TypeError, ValueError):
        return None
    return literal


def _fix(ctx: RuleContext, span: Span | None, text: str | None) -> Fix | None:
    """Rewrite a Python-literal dict as strict JSON in the same container and spacing."""
    from mtplint.edits.jsonvalue import site_for, token_at  # noqa: PLC0415 - fixing: only when a fix is built

    if span is None or text is None:
        return None
    literal = _as_json(text)
    if literal is None:
        return None
    token = token_at(ctx.report.launch.args, span)
    site = site_for(ctx.source_for(span), span, token.value if token is not None else None)
    edits = site.replace_object(literal, strict_json=True) if site is not None else None
    return Fix("safe", "Rewrite the speculative config as JSON", edits) if edits else None


def _diagnose(text: str) -> str:
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        reason = f"{error.msg} at character {error.pos + 1}"
    except ValueError as error:
        # Python's json (vLLM's argparse ``type=json.loads``) refuses integers of more than
        # sys.get_int_max_str_digits() digits (4,300 by default, CPython 3.11+): a ValueError, which
        # argparse reports as an invalid value
        return f"{error}".split(";")[0]
    except RecursionError:
        return "it is nested too deeply for Python's JSON reader"
    else:
        return "it is not valid for this option"
    if text.rstrip().rstrip("}").rstrip().endswith(","):
        return f"a trailing comma is not JSON ({reason}); remove it"
    from mtplint import pysyntax  # noqa: PLC0415 - ast: only for a config that is not JSON

    try:
        literal = pysyntax.literal(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        literal = None
    if isinstance(literal, dict):
        return (f"it is a Python dict, not JSON ({reason}); write it as JSON: "
                f"`{json.dumps(literal, separators=(', ', ': '))}`")
    return f"{reason}; keys and strings need double quotes, `true`/`false`/`null` are lower case"


def check(ctx: RuleContext) -> Iterator[Finding]:
    for error in ctx.errors:
        if error.kind != "invalid-json" or flag_name(error.flag) not in ("--speculative-config", "-sc",
                                                                          "speculative_config"):
            continue
        text = _value_text(ctx, error.span)
        reason = _diagnose(text) if text is not None else "see the parser's message"
        yield ctx.report_finding(
            f"`--speculative-config` is not valid JSON: vLLM exits before starting; {reason}",
            error.span,
            fix=_fix(ctx, error.span, text),
        )


def _value_text(ctx: RuleContext, span: object) -> str | None:
    for token in ctx.report.launch.args:
        if token.span == span and token.resolved:
            value = token.value
            if value.startswith("-") and "=" in value:
                value = value.split("=", 1)[1]
            return value
    option = ctx.option("speculative_config")
    if option is not None and isinstance(option.value, str):
        return option.value
    return None
