"""The Python reader's shortcuts give what the plain readings give: the calls of an expression, read
without :func:`ast.iter_child_nodes` and without visiting the nodes that hold none, are those a walk
through every node finds; a position read through the per-line cache (ASCII lines counted in bytes)
and the per-range span cache is where the UTF-8 column says it is."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from mtplint.extract import python
from mtplint.source import SourceFile

ROOT = Path(__file__).resolve().parents[1]
_NESTED_SCOPES = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ListComp, ast.SetComp,
                  ast.DictComp, ast.GeneratorExp)


def _every_node(root: ast.AST) -> Iterator[ast.AST]:
    """Every node below ``root`` in the reader's order, not entering nested scopes below it."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, _NESTED_SCOPES))


def test_the_calls_of_each_statement_and_expression_are_those_of_a_full_walk() -> None:
    files = sorted((ROOT / "mtplint" / "extract").glob("*.py")) + sorted((ROOT / "tests" / "data").rglob("*.py"))
    roots = 0
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        # every third statement or expression: each walk covers the nodes below it again
        for node in [node for node in ast.walk(tree) if isinstance(node, (ast.stmt, ast.expr))][::3]:
            roots += 1
            expected = [found for found in _every_node(node) if isinstance(found, ast.Call)]
            assert list(python._calls(node)) == expected, f"{path}:{node.lineno}"  # type: ignore[attr-defined]
    assert roots > 5_000


_CHARACTERS = st.sampled_from(["a", "Z", "_", " ", "1", "é", "€", "𝔘", "\t", "#"])


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(st.tuples(st.text(_CHARACTERS, max_size=6), st.text(_CHARACTERS, max_size=6)), min_size=1,
                      max_size=6))
def test_a_position_is_where_its_utf8_column_says(lines: list[tuple[str, str]]) -> None:
    text = "".join(f"x{index} = {before!r} + f({after!r})\n" for index, (before, after) in enumerate(lines))
    source = SourceFile.from_text(text, "script.py")
    positions = python.Positions(source)
    encoded = [line.encode("utf-8") for line in text.split("\n")]

    def offset(line: int, column: int) -> int:
        return source.line_start(line) + len(encoded[line - 1][:column].decode("utf-8", errors="ignore"))

    for _ in range(2):  # asked again: the same answers from the caches
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.stmt, ast.expr)):
                start = offset(node.lineno, node.col_offset)
                assert node.end_lineno is not None and node.end_col_offset is not None
                end = offset(node.end_lineno, node.end_col_offset)
                assert positions.offset(node.lineno, node.col_offset) == start
                assert positions.span(node) == source.span(start, end)
