"""Shortcuts of the shell reader give what the long way gives.

* A word without quotes, escapes or ``$`` is taken as its own text, without the lexer; so is a word
  without quotes or escapes that is split without expansion (``split_words``). Read by the lexer
  instead (every character then counts as special: no word is plain), every reader gives the same
  words, values and positions.
* A script file is read knowing that each character is at its own offset: its words' spans are
  those of the same text read as any mapped text (searching its offsets for the furthest).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtplint.extract import Malformed
from mtplint.extract.shell import expansion, launches
from mtplint.extract.shell.interpreter import Interpreter, ShellCommand
from mtplint.extract.shell.state import State
from mtplint.source import EnvEntry, MappedText, SourceFile, Token

#: matches every character: no word is plain, and the lexer steps through each one
_EVERY_CHARACTER = re.compile(r"[\s\S]")

_PIECES = st.sampled_from([
    " ", "\t", "\n", "\r\n", "\\\n", "\\", "'", '"', "$", "`", "$(", "${", "}", ")", "=", ";", "&&", "|",
    "vllm", "serve", "exec", "--port", "8000", "-m", "/models/x.gguf", "A=1", "$A", "${A:-x}", "\"$@\"",
    "sh -c", "set --", "é", "#",
])
_TEXT = st.lists(_PIECES, max_size=30).map("".join)


def _read(mapped: MappedText) -> object:
    split = [(word.text, list(word.offsets), word.source) for word in expansion.split_words(mapped)]
    substituted = [expansion.substitute_words(mapped, {"A": Token("1 2")}, split=split) for split in (True, False)]
    try:
        env = {"A": EnvEntry("A", Token("a b"))}
        commands: object = [(command.argv, command.env, command.span)
                            for command in launches.script_commands(mapped, env, positional=[Token("p")])]
    except Malformed as error:
        commands = ("malformed", str(error), error.offset)
    return split, substituted, commands


def _both(monkeypatch: pytest.MonkeyPatch, text: str) -> tuple[object, object]:
    """What the readers make of ``text``, and what they make of it through the lexer alone."""
    mapped = SourceFile.from_text(text).whole()
    with monkeypatch.context() as patched:
        patched.setattr(expansion, "_LEXER_SPECIAL", _EVERY_CHARACTER)
        patched.setattr(expansion, "_QUOTING", _EVERY_CHARACTER)
        lexed = _read(mapped)
    return _read(mapped), lexed


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_TEXT)
def test_a_plain_word_reads_as_the_lexer_reads_it(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    read, lexed = _both(monkeypatch, text)
    assert read == lexed


def test_a_plain_word_reads_as_the_lexer_reads_it_in_a_script(monkeypatch: pytest.MonkeyPatch) -> None:
    script = ('#!/bin/sh\nMODEL=Qwen/Qwen3-8B\nexec vllm serve "$MODEL" --port 8000 \\\n'
              "  --max-model-len 32768 -tp 2 \\\r\n  --speculative-config '{\"method\": \"mtp\"}' x\\ y \"$@\"\n"
              "docker run --gpus all -e A=b vllm/vllm-openai:v0.11.0 --model m\n")
    read, lexed = _both(monkeypatch, script)
    assert read == lexed
    split, _, commands = read  # type: ignore[misc]
    assert [word[0] for word in split][:4] == ["#!/bin/sh", "MODEL=Qwen/Qwen3-8B", "exec", "vllm"]
    assert [token.value for token in commands[0][0]][:6] == ["exec", "vllm", "serve", "Qwen/Qwen3-8B", "--port", "8000"]


@settings(max_examples=200, deadline=None)
@given(text=_TEXT)
def test_a_script_file_reads_as_its_whole_text_does(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    directory = tmp_path_factory.mktemp("scripts")
    (directory / "vars.sh").write_text("SOURCED=1\nexport PORT=8000\n", encoding="utf-8")
    source = SourceFile.from_text(f". ./vars.sh\n{text}\nvllm serve m --port $PORT $SOURCED\n", "serve.sh",
                                  directory / "serve.sh")
    env = {"A": EnvEntry("A", Token("a b"))}

    def commands(read: Callable[[], list[ShellCommand]]) -> object:
        try:
            return [(command.argv, command.env, command.span) for command in read()]
        except Malformed as error:
            return ("malformed", str(error), error.offset)

    as_file = commands(lambda: Interpreter(directory, None, depth=0).run_file(
        source, State.initial(env, None), record=True))
    as_text = commands(lambda: launches.script_commands(source.whole(), env, directory))
    assert as_file == as_text
