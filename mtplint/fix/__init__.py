"""Stage 6 of the pipeline, the writing half: fixes as text edits on the original file.

A fix is a set of :class:`~mtplint.checks.Edit` (a span of the original text and its replacement)
with an applicability; rules build the edits with :mod:`mtplint.edits`. This package runs them:
applies them (:func:`apply_edits`, :mod:`.apply`), lints the result again (:mod:`.relint`),
counts what ``--fix`` would apply (:mod:`.verify`) and writes the files (:mod:`.scope`,
:mod:`.write`). Everything outside the edits stays byte-identical: comments, blank lines, tabs,
CRLF, a BOM, a missing final newline.
"""

from __future__ import annotations

from collections.abc import Iterable

from mtplint.checks import Edit


def apply_edits(text: str, edits: Iterable[Edit]) -> tuple[str, list[Edit]]:
    """Apply non-overlapping edits to ``text`` (offsets of the original); returns the new text and
    the edits applied. An edit overlapping one already taken is skipped (it is retried on the next
    pass, against the new text)."""
    ordered = sorted(edits, key=lambda edit: (edit.span.start, edit.span.end))
    applied: list[Edit] = []
    last_end = -1
    for edit in ordered:
        if edit.span.start < last_end:
            continue
        applied.append(edit)
        last_end = max(last_end, edit.span.end)
    pieces: list[str] = []
    cursor = 0
    for edit in applied:
        pieces.append(text[cursor:edit.span.start])
        pieces.append(edit.content)
        cursor = edit.span.end
    pieces.append(text[cursor:])
    return "".join(pieces), applied
