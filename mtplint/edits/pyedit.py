"""Edits of Python source whose text is worked out with libcst when a fix needs it, not before.

A rule that offers a fix on a Python launch (a keyword of ``LLM(...)``, an element of a
``subprocess`` argv list, an entry of an ``env=`` dict) builds a :class:`PythonEdit`: what to do
(an operation of :mod:`mtplint.edits.pycst` and its arguments) on which file. libcst -- a concrete
syntax tree that keeps every byte, so a change is placed exactly between the tokens the user wrote
-- takes longer to import than a one-file ``check`` takes to run; a ``check`` that only reports
never pays for it. The edit is worked out when something reads its span or content (``--fix``,
``--diff``, a machine format that prints fixes), and it is still a span edit on the original
text: formatting and comments stay.

:func:`resolved` is what the fix engine calls: the fix with plain :class:`~mtplint.checks.Edit` s
worked out on the text the engine holds (which, in the middle of a ``--fix``, is not the disk's), or
``None`` when libcst finds no safe place for it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mtplint.checks import Edit, Fix
from mtplint.extract import FileLoader
from mtplint.pathtext import normalized
from mtplint.source import SourceFile, Span

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

def edit_file(edit: Edit) -> str:
    """The file an edit changes, without working a :class:`PythonEdit` out (which takes libcst)."""
    return edit.file if isinstance(edit, PythonEdit) else edit.span.file


class PythonEdit(Edit):
    """An edit of ``source`` that :mod:`mtplint.edits.pycst`'s ``operation`` works out from
    ``arguments`` (offsets into the text as the rule read it, names, values) when first asked.

    ``span``/``content`` resolve it; where libcst finds no safe place for it, they describe an edit
    that changes nothing (the fix engine never gets there: it asks :func:`resolved` first)."""

    __slots__ = ("file", "path", "operation", "arguments", "source", "_edits", "_worked_out")
    file: Final[str]
    path: Final[str]
    operation: Final[str]
    arguments: Final[tuple[Any, ...]]

    def __init__(self, source: SourceFile | None, operation: str, *arguments: Any,
                 file: str | None = None, path: str | None = None) -> None:
        # no Edit.__init__: the span and content are worked out later
        self.source = source
        self.file = file if file is not None else source.display if source is not None else ""
        self.path = path if path is not None else str(source.path) if source is not None else self.file
        self.operation = operation
        self.arguments = tuple(arguments)
        self._edits: list[Edit] | None = None
        self._worked_out = False

    def edits(self, source: SourceFile | None = None) -> list[Edit] | None:
        """The plain edits on ``source`` (by default the text the rule read, or the file on disk),
        none when there is nothing to do; None when libcst finds no safe place for them."""
        if source is not None:
            return _work_out(self.operation, self.arguments, source)
        if not self._worked_out:
            self._edits = _work_out(self.operation, self.arguments, self._own_source())
            self._worked_out = True
        return self._edits

    def _own_source(self) -> SourceFile | None:
        if self.source is None:
            self.source = FileLoader(".").load(normalized(self.path))
            if self.source is not None and self.source.display != self.file:
                loaded = self.source
                self.source = SourceFile(loaded.path, self.file, loaded.text, loaded.encoding, loaded.bom,
                                         loaded.digest)
        return self.source

    def _single(self) -> Edit:
        found = self.edits()
        source = self._own_source()
        if source is None:
            return Edit(Span(self.file, 0, 0, 1, 1, 1, 1), "")
        if not found:  # nothing to do here, or no safe place: an edit that changes nothing
            return Edit(source.span(0), "")
        return merged(source, found)

    @property
    def span(self) -> Span:
        return self._single().span

    @span.setter
    def span(self, value: Span) -> None:
        raise AttributeError("a PythonEdit's span is worked out, not set")

    @property
    def content(self) -> str:
        return self._single().content

    @content.setter
    def content(self, value: str) -> None:
        raise AttributeError("a PythonEdit's content is worked out, not set")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PythonEdit):
            return NotImplemented
        return (self.file, self.operation, self.arguments) == (other.file, other.operation, other.arguments)

    def __repr__(self) -> str:
        return f"PythonEdit({self.file!r}, {self.operation!r}, {self.arguments!r})"

    def recipe(self) -> list[Any]:
        """What the edit is, as JSON (a record linted in a worker or kept in the cache)."""
        return [self.file, self.path, self.operation, list(self.arguments)]

    @classmethod
    def from_recipe(cls, data: Sequence[Any]) -> PythonEdit:
        file, path, operation, arguments = data
        return cls(None, operation, *(tuple(a) if isinstance(a, list) else a for a in arguments), file=file, path=path)


def _work_out(operation: str, arguments: tuple[Any, ...], source: SourceFile | None) -> list[Edit] | None:
    if source is None:
        return None
    from mtplint.edits import pycst  # noqa: PLC0415 - fixing: libcst, only when a fix is worked out

    build: Callable[..., list[Edit] | None] = getattr(pycst, operation)
    return build(source, *arguments)


def merged(source: SourceFile, edits: Sequence[Edit]) -> Edit:
    """One edit doing what ``edits`` (on ``source``, not overlapping) do: the span from the first
    to the last, the original text between them kept."""
    ordered = sorted(edits, key=lambda edit: (edit.span.start, edit.span.end))
    if len(ordered) == 1:
        return ordered[0]
    pieces = []
    cursor = ordered[0].span.start
    for edit in ordered:
        pieces.append(source.text[cursor:edit.span.start])
        pieces.append(edit.content)
        cursor = edit.span.end
    return Edit(source.span(ordered[0].span.start, cursor), "".join(pieces))


def resolved(fix: Fix, sources: Callable[[str], SourceFile | None]) -> Fix | None:
    """``fix`` with its Python edits worked out on the texts ``sources`` gives (by display name);
    the fix itself when it has none, None when one of them has no safe place."""
    if not any(isinstance(edit, PythonEdit) for edit in fix.edits):
        return fix
    edits: list[Edit] = []
    for edit in fix.edits:
        if not isinstance(edit, PythonEdit):
            edits.append(edit)
            continue
        source = sources(edit.file)
        found = edit.edits(source) if source is not None else None
        if found is None:
            return None
        edits.extend(found)
    return Fix(fix.applicability, fix.message, edits)


def deferred(source: SourceFile, operation: str, *arguments: Any) -> PythonEdit:
    """A :class:`PythonEdit` of ``source`` (the call a rule makes)."""
    return PythonEdit(source, operation, *arguments)
