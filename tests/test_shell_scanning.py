"""The shell reader jumps over plain characters to the next one it acts on (a regular expression
search) instead of stepping one character at a time. Stepping is what it did before, and what it
does again when those expressions match every character: on any text both give the same words,
values and positions."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtplint.extract import Malformed
from mtplint.extract.shell import expansion, launches, scanning
from mtplint.source import SourceFile

#: matches every character: each search stops at once, so the readers step one by one
_EVERY_CHARACTER = re.compile(r"[\s\S]")
_SCANNERS = ((scanning, "_WORD_STOP"), (expansion, "_LEXER_SPECIAL"), (scanning, "_QUOTED_SPECIAL"),
             (scanning, "_BRACED_SPECIAL"))

_PIECES = st.sampled_from([
    " ", "  ", "\t", "\n", "\r\n", "\\\n", "\\", "'", '"', "$", "`", "$(", "${", "}", ")", "(", "$'", '$"',
    "\\n", "\\x41", "vllm", "serve", "--port", "8000", "=", "A=1", "$A", "${A:-x}", "\"$@\"", "é", "#", ";",
])
_TEXT = st.lists(_PIECES, max_size=30).map("".join)


def _read(text: str) -> object:
    """Everything the readers make of ``text``: split words, and the commands a script runs."""
    mapped = SourceFile.from_text(text).whole()
    split = [(word.text, list(word.offsets)) for word in expansion.split_words(mapped)]
    ranges = list(scanning.unquoted_word_ranges(text, 0, len(text)))
    quoted = [scanning.skip_double_quotes(text, start, len(text)) for start in range(len(text) + 1)]
    try:
        commands: object = [(command.argv, command.env, command.span) for command in launches.script_commands(mapped)]
    except Malformed as error:
        commands = ("malformed", str(error), error.offset)
    return split, ranges, quoted, commands


def _stepping(monkeypatch: pytest.MonkeyPatch, text: str) -> object:
    with monkeypatch.context() as patched:
        for module, name in _SCANNERS:
            patched.setattr(module, name, _EVERY_CHARACTER)
        return _read(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_TEXT)
def test_jumping_reads_what_stepping_reads(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    assert _read(text) == _stepping(monkeypatch, text)


def test_jumping_reads_what_stepping_reads_in_a_script(monkeypatch: pytest.MonkeyPatch) -> None:
    script = ('#!/bin/sh\nexport MODEL="${MODEL:-Qwen/Qwen3-8B}"\n'
              "exec vllm serve \"$MODEL\" --port $'80\\x30' \\\n  --speculative-config '{\"method\": \"mtp\"}' "
              '"$@" `echo x` $(printf "%s" "a b") plain"quo\\"ted"tail\n')
    assert _read(script) == _stepping(monkeypatch, script)


# --- compose's string command ----------------------------------------------------------------------

_COMMAND_PIECES = st.sampled_from([
    " ", "\t", "\n", "\r\n", "\\", "\\\n", "'", '"', "`", "$", "$(", "(", ")", ";", "&", "|", "<", ">", "2>",
    "vllm", "serve", "--port", "8000", "{\"method\": \"mtp\"}", "é", "x y",
])


def _split(text: str) -> object:
    from mtplint.extract.compose import CommandSyntaxError, split_command

    try:
        return [(word.text, list(word.offsets)) for word in split_command(SourceFile.from_text(text).whole())]
    except CommandSyntaxError as error:
        return ("error", str(error), error.index)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.lists(_COMMAND_PIECES, max_size=25).map("".join))
def test_compose_command_split_by_runs_reads_what_stepping_reads(monkeypatch: pytest.MonkeyPatch,
                                                                 text: str) -> None:
    # compose's splitter keeps a run of plain characters whole; with every character special it
    # steps through them one by one, as it did before
    from mtplint.extract import compose

    jumping = _split(text)
    with monkeypatch.context() as patched:
        patched.setattr(compose, "_COMMAND_SPECIAL", _EVERY_CHARACTER)
        assert _split(text) == jumping
