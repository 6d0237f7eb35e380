"""Positions in text (mtplint/textpos.py): line bounds of an offset, and ast's UTF-8 byte columns.

The byte-column conversion is checked against CPython itself: for every node of a Python launch
with non-ASCII text before it on its line, the offset must start the text that
``ast.get_source_segment`` gives for the node, and the extractor's spans must agree.
"""

from __future__ import annotations

import ast

from hypothesis import given
from hypothesis import strategies as st

from mtplint.extract.python import Positions
from mtplint.source import SourceFile
from mtplint.textpos import ast_offset, characters_in, indentation, line_end, line_start, next_line_start

LAUNCH = '''\
"""Démarrage du serveur — Qwen3.6 avec MTP (spéculatif)."""
from vllm import LLM

# modèle « maison », drafter intégré
llm = LLM(model="/modèles/Qwen3.6-27B", speculative_config={"méthode": "x", "method": "mtp"},  # ✓
          tensor_parallel_size=2)
'''


def test_every_ast_node_is_placed_where_cpython_says_it_is_written() -> None:
    source = SourceFile.from_text(LAUNCH, "serve.py")
    positions = Positions(source)
    checked = 0
    for node in ast.walk(ast.parse(LAUNCH)):
        segment = ast.get_source_segment(LAUNCH, node)
        if segment is None or not isinstance(node, ast.expr):
            continue
        start = ast_offset(LAUNCH, node.lineno, node.col_offset)
        end = ast_offset(LAUNCH, node.end_lineno or node.lineno, node.end_col_offset or 0)
        assert LAUNCH[start:end] == segment
        span = positions.span(node)
        assert (span.start, span.end) == (start, end)
        checked += 1
    assert checked > 10
    # a position after the non-ASCII text of its line: bytes and characters differ there
    keyword = LAUNCH.index('"method"')
    line = LAUNCH.count("\n", 0, keyword) + 1
    byte_column = len(LAUNCH[line_start(LAUNCH, keyword):keyword].encode("utf-8"))
    assert byte_column > keyword - line_start(LAUNCH, keyword)
    assert ast_offset(LAUNCH, line, byte_column) == keyword


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n")), st.data())
def test_a_byte_column_at_a_character_boundary_counts_the_characters_before_it(row: str, data: st.DataObject) -> None:
    index = data.draw(st.integers(0, len(row)))
    encoded = row.encode("utf-8")
    assert characters_in(encoded, len(row[:index].encode("utf-8"))) == index
    text = f"x = 1\n{row}\n"
    assert ast_offset(text, 2, len(row[:index].encode("utf-8"))) == len("x = 1\n") + index


def test_a_byte_column_inside_a_character_stops_before_it() -> None:
    assert characters_in("é=1".encode(), 1) == 0
    assert characters_in("é=1".encode(), 2) == 1


def test_line_bounds_keep_crlf_endings_and_a_missing_final_newline() -> None:
    text = "services:\r\n  vllm:\r\n\tcommand: serve\r\nlast"
    second = text.index("vllm")
    assert text[line_start(text, second):line_end(text, second)] == "  vllm:"
    assert text[next_line_start(text, second):].startswith("\tcommand")
    assert indentation(text, second) == "  "
    assert indentation(text, text.index("command")) == "\t"
    last = text.index("last")
    assert (line_start(text, last), line_end(text, last), next_line_start(text, last)) == (last, len(text), len(text))
    assert line_start(text, 0) == 0
