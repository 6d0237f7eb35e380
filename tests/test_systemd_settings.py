"""A unit's setting values, cut out of their lines: blanks around a value are dropped, and every
character of the value keeps where it is in the file (a continuation's backslash, read as a blank,
is where the backslash is; the end is just past the last character)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mtplint.extract.systemd import read_settings
from mtplint.source import SourceFile

_VALUES = st.sampled_from(["", " ", "  ", "\t", "x", "a b", " =1 ", "/usr/bin/vllm serve", "é"])
_LINES = st.tuples(st.sampled_from(["ExecStart", " Environment ", "A"]), _VALUES, _VALUES, _VALUES,
                   st.booleans(), st.sampled_from(["\n", "\r\n"]))


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(_LINES, min_size=1, max_size=6))
def test_a_value_is_its_text_without_blanks_around_it_where_it_is_written(
        lines: list[tuple[str, str, str, str, bool, str]]) -> None:
    text = "[Service]\n"
    expected: list[tuple[str, str]] = []
    for key, before, value, after, continued, newline in lines:
        if continued:  # `Key=before value\` + `after`: the backslash reads as a blank
            text += f"{key}={before}{value}\\{newline}{after}{newline}"
            joined = f"{before}{value} {after}"
        else:
            text += f"{key}={before}{value}{after}{newline}"
            joined = f"{before}{value}{after}"
        expected.append((key.strip(), joined.strip()))
    source = SourceFile.from_text(text, "unit.service")
    read = read_settings(source)
    assert [(setting.key, setting.value.text) for setting in read] == expected
    for setting in read:
        value = setting.value
        assert len(value.offsets) == len(value.text) + 1
        for char, offset in zip(value.text, value.offsets, strict=False):
            assert text[offset] == char or (char == " " and text[offset] == "\\")
        if value.text:
            assert value.offsets[-1] == value.offsets[-2] + 1
        else:  # just past the blanks that follow the `=`: at the line's end, or its continuation
            assert text[value.offsets[0]] in "\r\n\\"


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(_LINES, min_size=1, max_size=6), keys=st.sets(st.sampled_from(["ExecStart", "Environment", "A"])))
def test_the_settings_of_some_keys_are_those_of_all_settings_with_these_keys(
        lines: list[tuple[str, str, str, str, bool, str]], keys: set[str]) -> None:
    text = "[Service]\nExec\\\nStart=x\n"  # a key itself continued on the next line
    for key, before, value, after, continued, newline in lines:
        text += f"{key}={before}{value}" + ("\\" if continued else "") + f"{newline}{after}{newline}"
    source = SourceFile.from_text(text, "unit.service")
    assert read_settings(source, keys) == [setting for setting in read_settings(source) if setting.key in keys]
