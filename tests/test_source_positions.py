"""Positions of source text: a span's two ends are the positions :meth:`SourceFile.position` gives
(the span works them out itself, searching the end's line from the start's)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mtplint.source import SourceFile, Span


@settings(max_examples=200, deadline=None)
@given(text=st.lists(st.sampled_from(["a", "é", " ", "\n", "\r\n", "\n\n", "xyz"]), max_size=20).map("".join))
def test_a_span_is_made_of_the_positions_of_its_ends(text: str) -> None:
    source = SourceFile.from_text(text, "f.txt")
    for start in range(-2, len(text) + 3):
        for end in (None, *range(-2, len(text) + 3)):
            stop = start if end is None or end < start else end
            expected = Span("f.txt", start, stop, *source.position(start), *source.position(stop))
            assert source.span(start, end) == expected


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet="a\n\r é", max_size=40))
def test_lines_start_at_the_text_start_and_after_each_newline(text: str) -> None:
    source = SourceFile.from_text(text)
    assert source.line_count == text.count("\n") + 1
    assert [source.line_start(line) for line in range(1, source.line_count + 1)] == \
        [0, *(index + 1 for index, char in enumerate(text) if char == "\n")]
