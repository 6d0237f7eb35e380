"""Positions of source text: a span's two ends are the positions :meth:`SourceFile.position` gives
(the span works them out itself, searching the end's line from the start's)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mtplint.source import MappedText, SourceFile, Span


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


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="ab ", max_size=6), data=st.data(), start=st.integers(-2, 8),
       end=st.none() | st.integers(-2, 8))
def test_a_mapped_texts_span_runs_from_its_first_character_past_its_furthest(text: str, data: st.DataObject,
                                                                            start: int, end: int | None) -> None:
    source = SourceFile.from_text("x\n" * 20, "f.txt")
    offsets = data.draw(st.lists(st.integers(0, 40), min_size=len(text) + 1, max_size=len(text) + 1))
    mapped = MappedText(text, offsets, source)
    def expected() -> Span:  # as it was written: the old reading, step by step
        stop = len(text) if end is None else end
        if stop <= start:
            at = offsets[min(start, len(offsets) - 1)]
            return source.span(at, at)
        first = offsets[start]
        return source.span(first, max(max(offsets[start:stop]) + 1, first + 1))

    try:
        wanted: object = expected()
    except (IndexError, ValueError) as error:  # a start past the text, or before it
        wanted = type(error)
    try:
        got: object = mapped.span(start, end)
    except (IndexError, ValueError) as error:
        got = type(error)
    assert got == wanted
    assert MappedText(text, offsets, None).span(start, end) is None
