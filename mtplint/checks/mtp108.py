"""MTP108 config-file-not-loaded: ``--config=file.yaml`` is stored by argparse but never read.

Both engines expand a config file only when the exact word ``--config`` is followed by a separate
path word: vLLM ``FlexibleArgumentParser.parse_args`` (vLLM 0.33.0 ``argparse_utils.py`` L371,
docs/vllm.md#config-file) and SGLang ``prepare_server_args`` (``"--config" in argv``,
docs/sglang.md#command-line-parsing). Any other
spelling that argparse still accepts -- ``--config=file.yaml``, or an abbreviation such as ``--confi``
on SGLang -- lands in the ``config`` option and the file is silently ignored.
"""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, Fix, RuleContext
from mtplint.source import Token


def _offending_token(tokens: list[Token]) -> Token | None:
    """The word that set ``config`` without triggering the expansion."""
    for token in tokens:
        if not token.resolved or token.splat:
            continue
        text = token.value
        if text.startswith("--config="):
            return token
        name = text.split("=", 1)[0]
        if name.startswith("--conf") and "--config".startswith(name) and name != "--config":
            return token
    return None


#: a launch without a ``--config`` option finds nothing here (not checked: :func:`mtplint.checks.run_rules`)
ONLY_WITH_OPTION = ("config",)


def check(ctx: RuleContext) -> Iterator[Finding]:
    launch = ctx.report.launch
    if launch.kwargs is not None:
        return
    option = ctx.option("config")
    if option is None or option.unresolved or ctx.report.parsed.config_files:
        return
    token = _offending_token(launch.args)
    if token is None:
        return
    path = option.value
    written = token.value.split("=", 1)[0]
    engine = "vLLM" if ctx.engine == "vllm" else "SGLang"
    yield ctx.report_finding(
        f"`{token.value}` is never loaded: {engine} reads a config file only when `--config` and the path are "
        f"separate words, so every option in {path} is silently ignored; write `--config {path}`"
        + (f" (`{written}` is an abbreviation of `--config`)" if written != "--config" else ""),
        token.span,
        fix=_split_fix(ctx, token),
    )


def _split_fix(ctx: RuleContext, token: Token) -> Fix | None:
    """``--config=file.yaml`` → ``--config file.yaml`` (an abbreviation is spelled out as well)."""
    from mtplint.edits.argv import edit_in_word, split_at_equals  # noqa: PLC0415 - fixing: only when a fix is built

    source = ctx.report.launch.source
    name = token.value.split("=", 1)[0]
    edits = []
    if name != "--config":
        rename = edit_in_word(source, token, 0, len(name), "--config")
        if rename is None:
            return None
        edits.append(rename)
    if "=" in token.value:
        split = split_at_equals(source, token)
        if split is None:
            return None
        edits.append(split)
    if not edits:
        return None
    return Fix("safe", "Write `--config` and the path as two words", edits)
