"""Edits of whole lines that keep the file's line endings and a missing final newline as they are."""

from __future__ import annotations

from mtplint.checks import Edit
from mtplint.source import SourceFile
from mtplint.textpos import line_start, next_line_start


def insert_line(source: SourceFile, at: int, content: str) -> Edit:
    """Insert ``content`` as a whole line at a line start ``at`` (or after the last line when ``at``
    is the end of a file without a final newline)."""
    text = source.text
    newline = source.newline
    if at >= len(text) and text and not text.endswith("\n"):
        return Edit(source.span(len(text)), newline + content)
    return Edit(source.span(at), content + newline)


def remove_lines(source: SourceFile, start: int, end: int) -> Edit:
    """Remove the whole lines from the one holding ``start`` to the one holding ``end`` (inclusive)."""
    text = source.text
    first = line_start(text, start)
    last = next_line_start(text, max(start, end - 1))
    if last >= len(text) and not text.endswith("\n") and first > 0:
        # the last line has no newline: take the newline before it instead, keeping the file's
        # missing final newline missing
        first -= 2 if text[first - 2:first] == "\r\n" else 1
    return Edit(source.span(first, last), "")
