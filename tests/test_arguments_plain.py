"""A plain ``check`` of named files is read without argparse (:func:`mtplint.arguments.plain_check`):
what it reads must be what ``check``'s parser reads, and anything else is left to the parser."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mtplint.argument_parser import build_parser
from mtplint.arguments import CHECK_SWITCHES, plain_check


def _check_parser() -> argparse.ArgumentParser:
    parser = build_parser("check")
    commands = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    found: argparse.ArgumentParser = commands.choices["check"]
    return found


def _parsed(arguments: list[str]) -> dict[str, object] | None:
    """What the parser reads from ``arguments``; None when it refuses them."""
    try:
        return vars(build_parser("check").parse_args(arguments))
    except SystemExit:
        return None


def test_the_switches_are_the_parsers_store_true_options() -> None:
    switches = {option: action.dest for action in _check_parser()._actions
                if isinstance(action, argparse._StoreTrueAction) for option in action.option_strings}
    assert switches == CHECK_SWITCHES


@pytest.mark.parametrize("switch", sorted(CHECK_SWITCHES))
def test_each_switch_reads_as_the_parser_reads_it(switch: str) -> None:
    arguments = ["check", switch, "serve.sh", "compose.yaml"]
    plain = plain_check(arguments)
    assert plain is not None and vars(plain) == _parsed(arguments)


@pytest.mark.parametrize("output_format", [None, "json", "no-such-format"])
def test_the_output_format_default_comes_from_the_environment_as_the_parsers(
        output_format: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if output_format is None:
        monkeypatch.delenv("MTPLINT_OUTPUT_FORMAT", raising=False)
    else:
        monkeypatch.setenv("MTPLINT_OUTPUT_FORMAT", output_format)
    arguments = ["check", "--exit-zero", "--no-cache", "serve.sh"]
    plain = plain_check(arguments)
    assert plain is not None and plain.output_format == output_format
    assert vars(plain) == _parsed(arguments)


@pytest.mark.parametrize("arguments", [
    ["check"],  # no path: the parser's default
    ["check", "--no-cache"],
    ["check", "a.sh", "--no-cache", "b.sh"],  # paths on both sides of a switch: argparse refuses
    ["check", "--no-c", "a.sh"],  # an abbreviation
    ["check", "-qv", "a.sh"],  # joined short switches
    ["check", "--jobs", "1", "a.sh"],  # an option with a value
    ["check", "--output-format=json", "a.sh"],
    ["check", "-", "--stdin-filename", "a.sh"],  # standard input
    ["check", "--", "-a.sh"],
    ["check", "-h"],
    ["check", "--no-cache=1", "a.sh"],
    ["inspect", "a.sh"],
])
def test_anything_but_switches_and_one_run_of_paths_is_left_to_the_parser(arguments: list[str]) -> None:
    assert plain_check(arguments) is None


_WORDS = st.sampled_from([*CHECK_SWITCHES, "a.sh", "dir/compose.yaml", "", "check", "rules", "x=1", "-", "--",
                          "--no-c", "-j", "2", "--fix=1", "-qv", "--select", "MTP1"])


@given(st.lists(_WORDS, max_size=8))
def test_what_plain_check_reads_the_parser_reads_alike(words: list[str]) -> None:
    arguments = ["check", *words]
    plain = plain_check(arguments)
    if plain is not None:
        assert vars(plain) == _parsed(arguments)
