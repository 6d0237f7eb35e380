"""Positions in text: the line around a character offset, and Python's byte columns as characters.

Every offset here counts characters of the decoded text, as :class:`~mtplint.source.Span` does.
A line ends at ``\\n``; the ``\\r`` of a CRLF ending belongs to the line ending, not to the line's
content (:func:`line_end` stops before it), so text written at a line's end keeps the file's endings.

:mod:`ast` reports a node's column as a count of UTF-8 bytes from the start of its line
(https://docs.python.org/3/library/ast.html#ast.AST.col_offset), which differs from the
character column as soon as the line holds a non-ASCII character: :func:`characters_in` and
:func:`ast_offset` convert.
"""

from __future__ import annotations


def line_start(text: str, offset: int) -> int:
    """Offset of the first character of the line holding ``offset``."""
    return text.rfind("\n", 0, offset) + 1


def line_end(text: str, offset: int) -> int:
    """Offset of the line's end, before its ``\\r\\n`` or ``\\n`` (or the end of the text)."""
    newline = text.find("\n", offset)
    if newline < 0:
        return len(text)
    return newline - 1 if newline > 0 and text[newline - 1] == "\r" else newline


def next_line_start(text: str, offset: int) -> int:
    """Offset just past the newline ending the line that holds ``offset`` (or the end of the text)."""
    newline = text.find("\n", offset)
    return len(text) if newline < 0 else newline + 1


def indentation(text: str, offset: int) -> str:
    """The spaces and tabs that begin the line holding ``offset``."""
    start = line_start(text, offset)
    end = start
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[start:end]


def characters_in(encoded_line: bytes, byte_column: int) -> int:
    """How many characters the first ``byte_column`` bytes of a UTF-8 encoded line hold (a
    character cut by the column is not counted)."""
    if encoded_line.isascii():  # one character per byte
        return len(encoded_line[:byte_column])
    return len(encoded_line[:byte_column].decode("utf-8", errors="ignore"))


def ast_offset(text: str, line: int, byte_column: int) -> int:
    """The character offset in ``text`` of an :mod:`ast` position (1-based line, UTF-8 byte column)."""
    start = 0
    for _ in range(line - 1):
        start = text.index("\n", start) + 1
    end = text.find("\n", start)
    row = text[start:] if end < 0 else text[start:end]
    return start + characters_in(row.encode("utf-8"), byte_column)
