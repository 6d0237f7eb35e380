"""A shell script parsed by tree-sitter-bash, with the way back from the tree's UTF-8 byte positions
to characters of the text, and the syntax errors ``bash -n`` would reject that no reading can go
around (unterminated quotes and compound commands, stray closing keywords).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from mtplint.extract import Malformed
from mtplint.extract.shell.scanning import balanced_quotes
from mtplint.source import MappedText, Span

TYPE_CHECKING = False
if TYPE_CHECKING:  # for the type checker only: tree-sitter is imported when a script is parsed
    from typing import Any

    from tree_sitter import Node


_PARSER: Any = None


def _parse(source_bytes: bytes) -> Any:
    global _PARSER
    if _PARSER is None:
        import tree_sitter_bash
        from tree_sitter import Language, Parser

        _PARSER = Parser(Language(tree_sitter_bash.language()))
    return _PARSER.parse(source_bytes)


_FATAL_ERROR_STARTS = {'"': "unterminated double quote", "'": "unterminated single quote",
                       "`": "unterminated backquote", ")": "unexpected `)`", "}": "unexpected `}`",
                       "fi": "unexpected `fi`", "done": "unexpected `done`", "esac": "unexpected `esac`",
                       "then": "unexpected `then`", "do": "unexpected `do`", "else": "unexpected `else`",
                       "elif": "unexpected `elif`", ";;": "unexpected `;;`", "$(": "unterminated `$(`",
                       "${": "unterminated `${`"}

_ASTRAL = re.compile("[\U00010000-\U0010FFFF]")


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
        # the original text, so the emoji survive.
        parse_text = _ASTRAL.sub("\ufffd", parse_text)
        data = parse_text.encode("utf-8")
        if len(data) == len(parse_text):
            self.char_of_byte: list[int] | None = None
        else:
            mapping: list[int] = []
            for index, char in enumerate(parse_text):
                mapping.extend([index] * len(char.encode("utf-8")))
            mapping.append(len(parse_text))
            self.char_of_byte = mapping
        self.tree = _parse(data)
        self.root = self.tree.root_node

    def chars(self, node: Node) -> tuple[int, int]:
        if self.char_of_byte is None:
            return node.start_byte, node.end_byte
        return self.char_of_byte[node.start_byte], self.char_of_byte[node.end_byte]

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


def walk(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))
