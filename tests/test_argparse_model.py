"""The argparse model both vLLM and SGLang parse with, against the standard library's own argparse.

The engines' conformance answers were recorded under CPython 3.11, the interpreter these tests run
on: a real ``ArgumentParser`` holding a release's option strings is the ground truth for which words
are options, which option a word names, the value glued to it, and an ambiguous prefix's message.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Iterable
from typing import NoReturn

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplint.engines import sglang, vllm
from mtplint.engines.argparse_model import (
    ArgumentCountError,
    OptionWord,
    ParserOptions,
    ambiguous_message,
    values_taken,
)

pytestmark = pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the model is CPython 3.11's argparse")


class _Exit(Exception):
    """What ``ArgumentParser.error`` would exit with."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _Exit(message)


def _real_parser(options: Iterable[str], allow_abbrev: bool) -> _Parser:
    """A standard-library parser that registers ``options`` in this order."""
    parser = _Parser(add_help=False, allow_abbrev=allow_abbrev)
    for number, option in enumerate(options):
        parser.add_argument(option, dest=f"option_{number}")
    return parser


def _real_reading(parser: _Parser, text: str) -> object:
    try:
        found = parser._parse_optional(text)
    except _Exit as error:
        return str(error)
    if found is None:
        return None
    action, option, explicit = found
    return (option, explicit, action is not None)


def _model_reading(options: ParserOptions, text: str) -> object:
    found = options.parse_optional(text)
    if found is None:
        return None
    if found.ambiguous:
        return ambiguous_message(found)
    return (found.option, found.explicit, found.known)


def _words(options: list[str], seed: int) -> list[str]:
    """Words a command line is made of, around these option strings: each option, prefixes of it
    (unique, shared, none), ``=`` values, glued short values, ``_`` spellings, negative numbers,
    words with spaces, positionals."""
    rng = random.Random(seed)
    words = ["", "-", "--", "-1", "-1.5", "-.5", "-1x", "--x y", "-x y", "model", "8", "--not-an-option",
             "--not-an-option=1", "-Z", "-Zvalue"]
    for option in options:
        words.append(option)
        words.append(option + "=v")
        words.append(option + "= two words")
        words.append(option[: max(2, len(option) - rng.randint(1, 6))])
        words.append(option[: max(2, len(option) - rng.randint(1, 6))] + "=1")
        words.append(option[:3])
        words.append(option.replace("-", "_").replace("__", "--", 1))
        if not option.startswith("--"):
            words.append(option + "glued")
            words.append(option[:2] + "8")
    return words


def _agree(options: ParserOptions, parser: _Parser, words: Iterable[str]) -> list[tuple[str, object, object]]:
    return [(text, _model_reading(options, text), _real_reading(parser, text)) for text in words
            if _model_reading(options, text) != _real_reading(parser, text)]


@pytest.mark.parametrize("version", vllm.table_versions())
def test_vllm_options_read_words_as_argparse_does(version: str) -> None:
    table = vllm.load_table(version)
    parser = _real_parser(table.by_option, table.allow_abbrev)
    words = _words(list(table.by_option), seed=len(table.by_option))
    assert len(words) > 1000
    assert _agree(table.options, parser, words) == []


@pytest.mark.parametrize("version", sglang.table_versions())
def test_sglang_options_read_words_as_argparse_does(version: str) -> None:
    table = sglang.load_table(version)
    parser = _real_parser(table.index, True)
    words = _words(list(table.index), seed=len(table.index))
    assert _agree(table.options, parser, words) == []


def test_an_ambiguous_prefix_lists_its_options_in_registration_order() -> None:
    """Not alphabetical: argparse walks its options in the order the parser added them."""
    options = ["--speculative-num-steps", "--speculative-algorithm", "--speculative-num-draft-tokens"]
    found = ParserOptions(dict.fromkeys(options)).parse_optional("--speculative-num=3")
    assert isinstance(found, OptionWord)
    assert ambiguous_message(found) == ("ambiguous option: --speculative-num=3 could match --speculative-num-steps, "
                                        "--speculative-num-draft-tokens")
    assert ambiguous_message(found) == _real_reading(_real_parser(options, True), "--speculative-num=3")


@pytest.mark.parametrize("allow_abbrev", [True, False])
def test_allow_abbrev_governs_long_prefixes_only(allow_abbrev: bool) -> None:
    """Without abbreviations ``--max-num`` is an unknown option; a single-dash prefix (``-tp`` of
    ``-tpx``) still matches in Python 3.11, and a one-letter option still takes a glued value."""
    options = ["--max-num-seqs", "--max-num-batched-tokens", "--max-model-len", "-tpx", "-q", "--quantization"]
    model = ParserOptions(dict.fromkeys(options), allow_abbrev)
    parser = _real_parser(options, allow_abbrev)
    words = ["--max-num", "--max-model", "--max-model=8", "-tp", "-qfp8", "-q=fp8", "--quant", "--quant=fp8", "-t"]
    assert _agree(model, parser, words) == []
    assert (model.parse_optional("--max-model") is not None and model.parse_optional("--max-model").known) \
        is allow_abbrev


def test_a_word_like_a_negative_number_is_an_option_only_when_an_option_looks_like_one() -> None:
    for options in (["--x", "-y"], ["--x", "-1"]):
        model = ParserOptions(dict.fromkeys(options))
        parser = _real_parser(options, True)
        assert _agree(model, parser, ["-1", "-2", "-1.5", "-.5", "-1e3", "-1\n"]) == []
    assert ParserOptions(dict.fromkeys(["--x"])).parse_optional("-2") is None
    found = ParserOptions(dict.fromkeys(["--x", "-1"])).parse_optional("-2")
    assert found is not None and not found.known


@given(text=st.text(alphabet="-0123456789.٣x=a \n", max_size=8))
@settings(max_examples=600)
def test_any_short_word_is_read_as_argparse_reads_it_by_vllm_options(text: str) -> None:
    table = vllm.load_table("0.33.0")
    assert _model_reading(table.options, text) == _real_reading(_vllm_parser(), text)


_PARSERS: dict[str, _Parser] = {}


def _vllm_parser() -> _Parser:
    if "vllm" not in _PARSERS:
        table = vllm.load_table("0.33.0")
        _PARSERS["vllm"] = _real_parser(table.by_option, table.allow_abbrev)
    return _PARSERS["vllm"]


@pytest.mark.parametrize("nargs", [None, "?", "*", "+", 1, 2, 3])
@pytest.mark.parametrize("available", [0, 1, 2, 3, 4])
def test_an_option_takes_as_many_arguments_as_argparse_gives_it(nargs: int | str | None, available: int) -> None:
    parser = _Parser(add_help=False)
    parser.add_argument("--x", nargs=nargs)
    parser.add_argument("rest", nargs="*")
    words = [f"v{number}" for number in range(available)]
    try:
        namespace = parser.parse_args(["--x", *words, "--", "end"])
    except _Exit as error:
        with pytest.raises(ArgumentCountError) as raised:
            values_taken(nargs, available)
        assert f"argument --x: {raised.value}" == str(error)
        return
    stored = namespace.x
    taken = 0 if stored is None else len(stored) if isinstance(stored, list) else 1
    assert values_taken(nargs, available) == taken
    assert namespace.rest == [*words[taken:], "end"]
