"""MTP403 removed-llama-draft-flags: llama.cpp's old draft flags (docs/llamacpp.md#timeline-of-the-speculative-flags)."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Edit, Finding, Fix, RuleContext
from mtplint.checks.mtp5xx import flag_name
from mtplint.source import Span

#: removed in b8955 (PR #22397) as stubs that throw; the replacement flag
STUBS = {
    "--draft": "--spec-draft-n-max", "--draft-n": "--spec-draft-n-max", "--draft-max": "--spec-draft-n-max",
    "--draft-min": "--spec-draft-n-min", "--draft-n-min": "--spec-draft-n-min",
    "LLAMA_ARG_DRAFT_MAX": "LLAMA_ARG_SPEC_DRAFT_N_MAX", "LLAMA_ARG_DRAFT_MIN": "LLAMA_ARG_SPEC_DRAFT_N_MIN",
}
#: deleted without a stub in b9109 (PR #22838): "error: invalid argument"
DELETED = ("-cd", "--ctx-size-draft", "--spec-draft-ctx-size", "--spec-replace", "--spec-draft-replace")


def _rename_fix(ctx: RuleContext, span: Span | None, name: str, replacement: str | None) -> Fix | None:
    """Rename the removed flag (or environment variable) to its replacement; the value stays."""
    from mtplint.edits.argv import edit_in_word, rename_flag, token_containing  # noqa: PLC0415 - fixing: only when a fix is built

    launch = ctx.report.launch
    if replacement is None or span is None:
        return None
    source = ctx.source_for(span)
    if source is None:
        return None
    edit: Edit | None
    if name.startswith("LLAMA_ARG_"):
        entry = launch.env.get(name)
        if entry is None or entry.span is None or entry.span.file != source.display:
            return None
        written = source.text[entry.span.start:entry.span.end]
        at = written.find(name)
        if at < 0 or written.count(name) != 1:
            return None
        start = entry.span.start + at
        edit = Edit(source.span(start, start + len(name)), replacement)
    else:
        token = token_containing(launch.args, span)
        if token is None or token.value.split("=", 1)[0] != name:
            return None
        edit = rename_flag(source, token, replacement) if token.value.startswith("--") else \
            edit_in_word(source, token, 0, len(name), replacement)
    return Fix("safe", f"Rename `{name}` to `{replacement}`", [edit]) if edit is not None else None


def check(ctx: RuleContext) -> Iterator[Finding]:
    for error in ctx.errors:
        name = flag_name(error.flag)
        if error.kind == "removed":
            replacement = STUBS.get(name)
            instead = f"use `{replacement}`" if replacement else "see the message for its replacement"
            where = "environment variable" if name.startswith("LLAMA_ARG_") else "flag"
            yield ctx.report_finding(
                f"llama.cpp {where} `{name}` was removed in b8955 and now stops startup "
                f"(\"{error.message.split(': ', 1)[-1]}\"); {instead}",
                error.span,
                fix=_rename_fix(ctx, error.span, name, replacement),
            )
        elif error.kind in ("unknown", "ambiguous") and name.replace("_", "-") in DELETED:
            what = "the draft context follows the main context" if "ctx" in name or name == "-cd" else \
                "vocabulary replacement between target and draft is gone"
            yield ctx.report_finding(
                f"llama.cpp flag `{name}` was deleted in b9109 (\"error: invalid argument\"): {what}; remove it",
                error.span,
            )
