"""A shell script parsed by tree-sitter-bash, with the way back from the tree's UTF-8 byte positions
to characters of the text, and the syntax errors ``bash -n`` would reject that no reading can go
around (unterminated quotes and compound commands, stray closing keywords).
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterator

from mtplint.extract import Malformed
from mtplint.extract.shell.scanning import balanced_quotes
from mtplint.source import MappedText, Span
from mtplint.startup import DeferredPattern, bash_parser

TYPE_CHECKING = False
if TYPE_CHECKING:  # for the type checker only: tree-sitter is imported when a script is parsed
    from typing import Any

    from tree_sitter import Node


_PARSER: Any = None


def _parse(source_bytes: bytes) -> Any:
    global _PARSER
    if _PARSER is None:
        _PARSER = bash_parser()
    return _PARSER.parse(source_bytes)


_FATAL_ERROR_STARTS = {'"': "unterminated double quote", "'": "unterminated single quote",
                       "`": "unterminated backquote", ")": "unexpected `)`", "}": "unexpected `}`",
                       "fi": "unexpected `fi`", "done": "unexpected `done`", "esac": "unexpected `esac`",
                       "then": "unexpected `then`", "do": "unexpected `do`", "else": "unexpected `else`",
                       "elif": "unexpected `elif`", ";;": "unexpected `;;`", "$(": "unterminated `$(`",
                       "${": "unterminated `${`"}

_ASTRAL = DeferredPattern("[\U00010000-\U0010FFFF]")
_NOT_ASCII = DeferredPattern("[^\x00-\x7f]")


class Script:
    """A parsed script: the tree plus the mapping from UTF-8 bytes back to characters."""

    def __init__(self, text: MappedText, whole_file: bool = False) -> None:
        self.mapped = text
        #: the text is a file's whole text (:meth:`SourceFile.whole`): character i is at offset i
        self.source = text.source if whole_file else None
        # Carriage returns before newlines (CRLF files) are blanks to bash's reader in practice
        # (`\r` would end up in the last word); tree-sitter trips over them, so parse a copy where
        # they are spaces. Same length, so character positions are unchanged.
        # A `\` before CRLF is read as a continuation too (lenient: bash itself would escape the CR).
        parse_text = text.text.replace("\\\r\n", "\\\n ").replace("\r\n", " \n")
        # Characters outside the Basic Multilingual Plane (emoji, ...) corrupt tree-sitter-bash's memory
        # (a segfault some parses later; found by tests/test_properties.py, tree-sitter 0.24-0.26 with
        # tree-sitter-bash 0.23-0.25). One BMP character for one keeps positions; values are read from
        # the original text, so the emoji survive. An ASCII script (most) has none to look for.
        if not parse_text.isascii():
            parse_text = _ASTRAL.sub("\ufffd", parse_text)
        data = parse_text.encode("utf-8")
        self.wide = None if len(data) == len(parse_text) else _WideCharacters(parse_text)
        self.tree = _parse(data)
        self.root = self.tree.root_node
        if self.root.has_error:
            plain = _command_operators_as_words(self.root, data)
            if plain is not None:
                self.tree = _parse(plain)
                self.root = self.tree.root_node

    def chars(self, node: Node) -> tuple[int, int]:
        wide = self.wide
        if wide is None:
            return node.start_byte, node.end_byte
        return wide.character(node.start_byte), wide.character(node.end_byte)

    def raw(self, node: Node) -> str:
        start, end = self.chars(node)
        return self.mapped.text[start:end]

    def span(self, start: int, end: int) -> Span | None:
        """Where characters ``start:end`` of the script are in the file (``start <= end``)."""
        if self.source is not None:  # as the slice's span, without searching its offsets for the furthest
            return self.source.span(start, end)
        return self.mapped.slice(start, end).span()

    def file_offset(self, index: int) -> int:
        return self.mapped.offset_at(index)

    def check(self) -> None:
        """Raise :class:`Malformed` for what ``bash -n`` would reject and we cannot read around:
        unterminated quotes and compound commands, stray closing keywords. Other tree-sitter ERROR
        nodes (grammar gaps) are skipped where they are."""
        if not self.root.has_error:
            return
        for node in walk(self.root):
            if node.is_missing:
                start, _ = self.chars(node)
                raise Malformed(f"shell syntax error: missing `{node.type}`", self.file_offset(start))
            if node.type != "ERROR":
                continue
            first = node.children[0] if node.children else None
            start, end = self.chars(node)
            head = self.mapped.text[start:end].lstrip()
            leading = first.type if first is not None else head[:2]
            for token, message in _FATAL_ERROR_STARTS.items():
                if leading == token or (first is None and head.startswith(token)):
                    raise Malformed(f"shell syntax error: {message}", self.file_offset(start))
            if head[:1] in ('"', "'") and not balanced_quotes(head):
                raise Malformed(f"shell syntax error: {_FATAL_ERROR_STARTS[head[:1]]}", self.file_offset(start))


def _command_operators_as_words(root: Node, data: bytes) -> bytes | None:
    """``data`` with each ``==``/``=~`` that tree-sitter-bash took for a regular-expression operator
    among a plain command's arguments (``vllm serve M == x '0}'``) made a word of the same length,
    or None when there is none. The grammar reads a pattern after such a word and fails on a ``}``
    or quote in it, where bash sees plain words; words are read from the original text, so the
    substitute never reaches a value."""
    starts = [node.prev_sibling.start_byte for node in walk(root)
              if node.type == "regex" and node.parent is not None and node.parent.type == "command"
              and node.prev_sibling is not None and node.prev_sibling.type in ("==", "=~")]
    if not starts:
        return None
    patched = bytearray(data)
    for start in starts:
        patched[start + 1:start + 2] = b"_"
    return bytes(patched)


class _WideCharacters:
    """Where the characters of a text that are more than one byte in UTF-8 stand, to turn a byte
    offset of the parse tree into a character offset. Held per such character, not per byte: a
    6 MiB script with one accented word in each line took ~250 MB as a list of every byte's
    character."""

    __slots__ = ("_starts", "_skipped")

    def __init__(self, text: str) -> None:
        #: the byte offset where each wide character starts
        self._starts = array("q")
        #: the bytes beyond one per character before each wide character; last, those of the whole text
        self._skipped = array("q")
        skipped = 0
        for match in _NOT_ASCII.finditer(text):
            index = match.start()
            self._starts.append(index + skipped)
            self._skipped.append(skipped)
            skipped += len(match.group().encode("utf-8")) - 1
        self._skipped.append(skipped)

    def character(self, byte: int) -> int:
        """The character holding ``byte`` (the text's length for the byte just past its end)."""
        wide = bisect_right(self._starts, byte) - 1
        if wide < 0:
            return byte
        start, before, after = self._starts[wide], self._skipped[wide], self._skipped[wide + 1]
        if byte <= start + after - before:  # within the wide character
            return start - before
        return byte - after


def walk(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))
