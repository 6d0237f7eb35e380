"""Source text, positions and the values extracted from it.

Every stage after discovery speaks in these types. Extractors never hand out bare strings: a
value read from a file is a :class:`MappedText` (text plus, for each character, the offset it came
from), so that a token cut out of a folded YAML block, a shell continuation or a JSON string inside
a shell quote still knows its line and column in the original file.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from itertools import accumulate, pairwise
from weakref import ref as weak_ref

from mtplint.pathtext import normalized
from mtplint.records import FrozenRecord, Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final


_PLUS_ONE = (1).__add__


class Span(FrozenRecord):
    """A range in one file. Lines and columns are 1-based; ``end_column`` is one past the end."""

    __slots__ = ("file", "start", "end", "line", "column", "end_line", "end_column")
    file: Final[str]
    start: Final[int]
    end: Final[int]
    line: Final[int]
    column: Final[int]
    end_line: Final[int]
    end_column: Final[int]

    def __init__(self, file: str, start: int, end: int, line: int, column: int, end_line: int,
                 end_column: int) -> None:
        self.file = file
        self.start = start
        self.end = end
        self.line = line
        self.column = column
        self.end_line = end_line
        self.end_column = end_column

    def to_json(self) -> dict[str, object]:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
        }


class SourceFile:
    """A file's decoded text with a line index; converts character offsets to positions."""

    def __init__(self, path: str, display: str, text: str, encoding: str = "utf-8", bom: bytes = b"",
                 digest: str | None = "") -> None:
        self.path = path
        self.display = display
        self.text = text
        #: how the file was stored, so a fix writes it back the same way
        self.encoding = encoding
        self.bom = bom
        # ``None``: the text was decoded from the file's bytes exactly (``FileLoader``); the digest
        # is then computed on first use, so a plain run never hashes it
        self._digest = digest
        #: the source this one is an edit of (:meth:`edited`), whose digest is this one's
        self._read_as: SourceFile | None = None
        # where each line starts: 0, then one past each newline (summed line lengths, in C)
        starts = list(accumulate(map(_PLUS_ONE, map(len, text.split("\n"))), initial=0))
        starts.pop()  # one past the end of the text: no line starts there
        self._line_starts = starts
        self._parses: weak_ref[Parses] | None = None
        # worked out on first use, once: asked again for each launch and fix in the file
        self._newline: str | None = None
        self._lines: list[str] | None = None

    @property
    def parses(self) -> Parses | None:
        """Where readers of this text share what they parse from it (set by the run's loader); None:
        each reader parses it afresh. Held weakly: the parses hold their texts, and a loader's files
        must go with it by reference counting alone (a run switches the cyclic collector off)."""
        return self._parses() if self._parses is not None else None

    @parses.setter
    def parses(self, parses: Parses | None) -> None:
        self._parses = weak_ref(parses) if parses is not None else None

    @property
    def digest(self) -> str:
        """sha256 of the bytes read, to notice a file that changed on disk before a fix is written
        (``""``: a text that stands for a file, not read from it)."""
        if self._digest is None and self._read_as is not None:
            self._digest = self._read_as.digest
        if self._digest is None:
            from mtplint.digest import sha256_hex  # noqa: PLC0415 - SHA-256: only a fix written or the cache

            # strict UTF-8/16/32 decoding round-trips: BOM + the re-encoded text are the bytes read
            self._digest = sha256_hex(self.bom + self.text.encode(self.encoding))
        return self._digest

    def edited(self, text: str) -> SourceFile:
        """This file with ``text`` in place of its text: stored the same way, and with the digest of
        the bytes read, hashed only if asked for (checking a fix in memory writes nothing, and
        hashes nothing)."""
        edit = SourceFile(self.path, self.display, text, self.encoding, self.bom, self._digest)
        if self._digest is None:
            # the text read, not the edit before this one: a fixing's passes make no chain of texts
            edit._read_as = self._read_as if self._read_as is not None else self
        return edit

    @classmethod
    def from_text(cls, text: str, display: str = "<string>", path: str | None = None) -> SourceFile:
        return cls(path or normalized(display), display, text)

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset (column counts characters)."""
        length = len(self.text)
        offset = 0 if offset < 0 else length if offset > length else offset
        starts = self._line_starts
        line_index = bisect_right(starts, offset) - 1
        return line_index + 1, offset - starts[line_index] + 1

    def offset(self, line: int, column: int) -> int:
        """Character offset of a 1-based (line, column)."""
        line_index = max(0, min(line - 1, len(self._line_starts) - 1))
        return min(self._line_starts[line_index] + column - 1, len(self.text))

    def line_start(self, line: int) -> int:
        return self._line_starts[max(0, min(line - 1, len(self._line_starts) - 1))]

    @property
    def newline(self) -> str:
        """The file's line ending (``\\r\\n`` when most lines end so), for text a fix inserts."""
        if self._newline is None:
            crlf = self.text.count("\r\n")
            self._newline = "\r\n" if crlf and crlf * 2 >= self.text.count("\n") else "\n"
        return self._newline

    @property
    def split_lines(self) -> list[str]:
        """``text.splitlines()``, split once (the report's frames of each launch in the file read it)."""
        if self._lines is None:
            self._lines = self.text.splitlines()
        return self._lines

    @property
    def line_count(self) -> int:
        return len(self._line_starts)

    def span(self, start: int, end: int | None = None) -> Span:
        end = start if end is None or end < start else end
        # :meth:`position` of both ends, written out: every token of every launch gets a span
        length = len(self.text)
        starts = self._line_starts
        first = 0 if start < 0 else length if start > length else start
        line_index = bisect_right(starts, first) - 1
        line, column = line_index + 1, first - starts[line_index] + 1
        if end == start:
            return Span(self.display, start, end, line, column, line, column)
        last = 0 if end < 0 else length if end > length else end
        # the end is on the start's line or a later one: search from there
        end_index = bisect_right(starts, last, line_index) - 1
        if end_index == line_index:  # most spans: one line, whose number (an int of its own past 256) is shared
            return Span(self.display, start, end, line, column, line, last - starts[end_index] + 1)
        return Span(self.display, start, end, line, column, end_index + 1, last - starts[end_index] + 1)

    def whole(self) -> MappedText:
        return MappedText(self.text, range(len(self.text) + 1), self)


def frame_lines(line: int, count: int) -> range:
    """The line numbers a finding's code frame shows in a file of ``count`` lines: its ``line`` and
    the line either side (the report's frame, and the lines a record keeps for it)."""
    return range(max(1, line - 1), min(line + 1, count) + 1)


class ShownLines:
    """The lines a report shows of the files findings point into, where the files' texts are not
    kept (the records of files linted in worker processes, or taken from the cache): each file's
    line count, and the lines around its findings."""

    __slots__ = ("_files", "_own")

    def __init__(self) -> None:
        #: file (as findings show it) -> its line count and its lines by number (a text: records are JSON)
        self._files: dict[str, tuple[int, dict[str, str]]] = {}
        #: the files whose lines are a dict of this object's own, not a record's it was given: only
        #: those take the lines of a second record (most files are in one record, not copied)
        self._own: set[str] = set()

    def __eq__(self, other: object) -> bool:  # a Result compares by its fields, this one among them
        return self._files == other._files if isinstance(other, ShownLines) else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal-when-equal-lines and mutable

    def add(self, shown: dict[str, Any]) -> None:
        """Take the lines a record kept: file -> [its line count, its lines by number]."""
        files = self._files
        for file, (count, around) in shown.items():
            known = files.get(file)
            if known is None:
                files[file] = (count, around)
            elif file in self._own:
                known[1].update(around)
            elif not around.items() <= known[1].items():
                files[file] = (known[0], {**known[1], **around})
                self._own.add(file)

    def lines(self, file: str, line: int) -> Sequence[str] | None:
        """The file's lines (a sequence as long as the file) for showing ``line``: None unless the
        line and those either side of it are kept (a finding made after the records, such as an
        unused ``noqa``, may point elsewhere)."""
        known = self._files.get(file)
        return None if known is None else kept_lines(*known, line)


def kept_lines(count: int, around: dict[str, str], line: int) -> Sequence[str] | None:
    """:meth:`ShownLines.lines` of a file of ``count`` lines, of which those in ``around`` are kept."""
    if not all(str(number) in around for number in frame_lines(line, count)):
        return None
    return _KeptLines(count, around)


class _KeptLines(Sequence[str]):
    """A file's lines as the report reads them, by index (``lines[number - 1]``) and count; only the
    kept ones can be read."""

    __slots__ = ("_count", "_around")

    def __init__(self, count: int, around: dict[str, str]) -> None:
        self._count = count
        self._around = around

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: Any) -> Any:
        if not isinstance(index, int) or not 0 <= index < self._count:
            raise IndexError(index)
        return self._around[str(index + 1)]


class Parses:
    """What readers parsed from a run's texts (a YAML stream's trees), shared by every reader of the
    same file: its extractor, a kustomization or compose file naming it, an engine reading it as
    ``--config``, a fix locating a word in it. Parses are values of the text, never changed by
    their readers (they build new ones), so sharing them changes no result.

    Held for the most recently parsed files, and for files marked with :meth:`keep` (those with a
    launch: rules and fixes read them again once every file has been read) up to a budget of
    characters: a run over a large tree must not hold every file's parses to its end (a YAML tree
    takes some 20 bytes per character of its text)."""

    __slots__ = ("__weakref__", "_kept", "_kept_characters", "_recent", "_recent_kinds", "kept_characters",
                 "recent_files")

    def __init__(self, recent_files: int = 32, kept_characters: int = 1_000_000) -> None:
        self.recent_files = recent_files
        self.kept_characters = kept_characters
        # keyed by the source's id: each entry holds the source, so the id is not reused meanwhile
        self._recent: OrderedDict[tuple[int, str], tuple[SourceFile, object]] = OrderedDict()
        #: how many entries of ``_recent`` each source has: :meth:`keep` is asked for every launch,
        #: and most sources (scripts, or a file already kept) have none
        self._recent_kinds: dict[int, int] = {}
        self._kept: dict[tuple[int, str], tuple[SourceFile, object]] = {}
        self._kept_characters = 0

    def get(self, source: SourceFile, kind: str) -> object | None:
        """What was parsed from ``source`` as ``kind`` (None: not held)."""
        key = (id(source), kind)
        entry = self._kept.get(key)
        if entry is None:
            entry = self._recent.get(key)
            if entry is None:
                return None
            self._recent.move_to_end(key)
        return entry[1]

    def put(self, source: SourceFile, kind: str, parsed: object) -> None:
        key = (id(source), kind)
        if key not in self._recent:
            self._recent_kinds[key[0]] = self._recent_kinds.get(key[0], 0) + 1
        self._recent[key] = (source, parsed)
        if len(self._recent) > self.recent_files:
            self._left_recent(self._recent.popitem(last=False)[0])

    def _left_recent(self, key: tuple[int, str]) -> None:
        left = self._recent_kinds[key[0]] - 1
        if left:
            self._recent_kinds[key[0]] = left
        else:
            del self._recent_kinds[key[0]]

    def keep(self, source: SourceFile) -> None:
        """Hold what was parsed from ``source`` past the most recent files, while the budget lasts."""
        identity = id(source)
        if identity not in self._recent_kinds:
            return
        for key in [key for key in self._recent if key[0] == identity]:
            if self._kept_characters + len(source.text) > self.kept_characters:
                return
            self._kept[key] = self._recent.pop(key)
            self._left_recent(key)
            self._kept_characters += len(source.text)


class MappedText(Record):
    """Text whose every character remembers the file offset it came from.

    ``offsets`` has ``len(text) + 1`` entries; the last one is the offset just past the text, so an
    empty slice still has a position. Characters produced by an expansion (``${VAR}``) all map to
    the start of the expression that produced them.

    Text read straight from a file (the commonest kind: a whole script, and each word cut from it)
    maps character ``i`` to ``first + i``: its offsets are a ``range``, a few dozen bytes whatever
    the length, where a list costs some 36 bytes a character (an 8 MB script read whole held
    ~300 MB of them). Slices and joins of such text stay ranges; only text whose mapping jumps
    (quote removal, an expansion, an escape) keeps a list, and that is a word's worth.
    """

    __slots__ = ("text", "offsets", "source")
    text: str
    offsets: Sequence[int]
    source: SourceFile | None

    def __init__(self, text: str, offsets: Sequence[int], source: SourceFile | None) -> None:
        self.text = text
        self.offsets = offsets
        self.source = source

    def __eq__(self, other: object) -> bool:
        # the same mapping is equal whether it is held as a range or a list
        if not isinstance(other, MappedText):
            return NotImplemented
        return (self.text == other.text and self.source is other.source
                and _same_offsets(self.offsets, other.offsets))

    @classmethod
    def synthetic(cls, text: str, source: SourceFile | None = None, at: int = 0) -> MappedText:
        """Text that has no place in a file (a default, an image entrypoint): maps to ``at``."""
        return cls(text, [at] * (len(text) + 1), source)

    @classmethod
    def of_range(cls, source: SourceFile, start: int, end: int) -> MappedText:
        return cls(source.text[start:end], range(start, end + 1), source)

    def __len__(self) -> int:
        return len(self.text)

    def __str__(self) -> str:
        return self.text

    def offset_at(self, index: int) -> int:
        """The file offset of character ``index``, clamped to the text (its end: just past it)."""
        offsets = self.offsets
        last = len(offsets) - 1
        return offsets[0 if index < 0 else last if index > last else index]

    def slice(self, start: int, end: int | None = None) -> MappedText:
        # extractors cut texts into words a character at a time: bounds by comparison, not min/max
        text = self.text
        length = len(text)
        start = 0 if start < 0 else length if start > length else start
        end = length if end is None or end > length else start if end < start else end
        # the entry at ``end`` is the one just past the piece (at the text's end: just past the text)
        piece = self.offsets[start:end + 1]
        return MappedText(text[start:end], piece, self.source)

    def __add__(self, other: MappedText) -> MappedText:
        if not self.text:
            return other
        if not other.text:
            return MappedText(self.text, self.offsets, self.source)
        return MappedText.join((self, other))

    @staticmethod
    def join(parts: Sequence[MappedText]) -> MappedText:
        """The parts added one after another (``+``), in one pass: a word is joined from pieces of
        one character each, and adding them pairwise copied its offsets once per character."""
        if not parts:
            return MappedText("", [0], None)
        if len(parts) == 1:  # most words are one piece: the piece itself, as below
            return parts[0]
        filled = [part for part in parts if part.text]
        if len(filled) < 2:  # nothing to concatenate: what ``+`` gives (an empty part may be the result)
            result = parts[0]
            for part in parts[1:]:
                result = result + part
            return result
        source = next((part.source for part in filled if part.source is not None), None)
        text = "".join(part.text for part in filled)
        # pieces that follow each other in the file (a word cut at a continuation) stay one range
        first = filled[0].offsets
        if all(part.offsets.__class__ is range for part in filled) and all(
                before.offsets[-1] == after.offsets[0] for before, after in pairwise(filled)):
            return MappedText(text, range(first[0], filled[-1].offsets[-1] + 1), source)
        offsets: list[int] = []
        for part in filled[:-1]:
            offsets += part.offsets[:-1]
        offsets += filled[-1].offsets
        return MappedText(text, offsets, source)

    def span(self, start: int = 0, end: int | None = None) -> Span | None:
        """The file range covering characters ``start:end`` of this text."""
        # every token of every launch gets a span: each attribute read once
        source = self.source
        if source is None:
            return None
        offsets = self.offsets
        if end is None:
            end = len(self.text)
        if end <= start:
            offset = offsets[min(start, len(offsets) - 1)]
            return source.span(offset, offset)
        # one past the furthest character (the first is among them, so the range is never empty)
        first = offsets[start]
        furthest = offsets[min(end, len(offsets)) - 1] if offsets.__class__ is range else max(offsets[start:end])
        return source.span(first, furthest + 1)


def _same_offsets(first: Sequence[int], second: Sequence[int]) -> bool:
    if first.__class__ is second.__class__:
        return first == second
    return len(first) == len(second) and all(a == b for a, b in zip(first, second, strict=True))


class Token(Record):
    """One argv word (or env value) with where it came from.

    ``unresolved`` names what could not be resolved (``$MODEL``, a runtime call, ...); a token with
    anything in it must not be taken at face value. ``splat`` marks a word that may expand to any
    number of words (``"$@"``, ``${EXTRA_ARGS}`` unquoted, ``*args``).
    """

    __slots__ = ("value", "span", "unresolved", "splat")
    value: str
    span: Span | None
    unresolved: tuple[str, ...]
    splat: bool

    def __init__(self, value: str, span: Span | None = None, unresolved: tuple[str, ...] = (),
                 splat: bool = False) -> None:
        self.value = value
        self.span = span
        self.unresolved = unresolved
        self.splat = splat

    @property
    def resolved(self) -> bool:
        return not self.unresolved and not self.splat

    @classmethod
    def from_mapped(cls, text: MappedText, unresolved: Iterable[str] = (), splat: bool = False) -> Token:
        return cls(text.text, text.span(), tuple(unresolved), splat)

    def to_json(self) -> object:
        if self.splat:
            return {"unresolved": self.value, "splat": True}
        if self.unresolved:
            return {"unresolved": self.value}
        return self.value


class EnvEntry(Record):
    """One variable of a launch's environment."""

    __slots__ = ("name", "value", "span", "origin")
    name: str
    value: Token
    span: Span | None
    origin: str

    def __init__(self, name: str, value: Token, span: Span | None = None, origin: str = "explicit") -> None:
        self.name = name
        self.value = value
        self.span = span
        self.origin = origin

    def to_json(self) -> object:
        return self.value.to_json()


class Diagnostic(Record):
    """A problem found while reading input (MTP001 and friends), before any rule runs."""

    __slots__ = ("code", "message", "span")
    code: str
    message: str
    span: Span

    def __init__(self, code: str, message: str, span: Span) -> None:
        self.code = code
        self.message = message
        self.span = span

    def to_json(self) -> dict[str, object]:
        return {"code": self.code, "message": self.message, **self.span.to_json()}


class Issues(Record):
    """Diagnostics collected while reading; passed down so every stage can add to it."""

    __slots__ = ("items",)
    items: list[Diagnostic]

    def __init__(self) -> None:
        self.items = []

    def add(self, code: str, message: str, span: Span) -> None:
        self.items.append(Diagnostic(code, message, span))
