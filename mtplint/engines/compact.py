"""An engine's generated option tables (one ``<release>.json`` per release) in one derived file.

Consecutive releases share most of their rows: SGLang's twenty tables hold ~8,000 action rows, ~850
of them distinct. Reading every table is costly, most of it JSON, and a tree's version
narrowing reads them all; the compact file writes each distinct row once and each table as the
numbers of its rows. The tables stay the source of truth: a release's table is taken from the
compact file only while the release's own file holds the bytes it was made from (length and
CRC-32), else from its own file. The first table a process reads comes from its own file too
(a launch of a known release needs no other, and one table alone is quicker to read that way).

A launch whose release is not pinned is read at every release to narrow the range; an engine may
also ship a flag index (``<engine>-flags.txt``, written by ``tools/regenerate.py``): for each option
string the releases that register it and how each reads it, so that this narrowing needs no table
but the one the launch is parsed with. The index is used only while each table file has the size it
was made from. It is looked up one word at a time (:class:`FlagIndex`): a launch of exact option
strings decodes only their entries and builds no release's whole option set.

Rewrite the compact files after regenerating a table: ``python -m mtplint.engines.compact``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Set

from mtplint.pathtext import read_bytes, read_text
from mtplint.versions import compare, version_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any, TypeVar

    #: one release in a flag index: option string -> reading row, names, facts about its parser
    ReleaseReading = tuple[dict[str, dict[str, Any]], set[str], dict[str, Any]]
    #: what a :class:`NumberedOptions` maps an option string to (an engine's action of a reading row)
    Entry = TypeVar("Entry")
    #: what an engine makes of one release of its flag index (:meth:`TableFiles.indexed_releases`)
    Release = TypeVar("Release")


def _source_key(data: bytes) -> list[int]:
    """What identifies a table file's bytes: their length and CRC-32 (asked only when a second table
    is read, or the compact file written: a one-file check reads one table)."""
    import binascii  # noqa: PLC0415 - zlib's CRC-32: only when a second table is read

    return [len(data), binascii.crc32(data)]


class TableFiles:
    """The tables of one engine, ``<release>.json`` in ``directory``; the rows under the keys
    ``shared`` (lists of rows) are written once in the compact file ``compact``."""

    def __init__(self, directory: str | os.PathLike[str], compact: str | os.PathLike[str], shared: tuple[str, ...],
                 flag_index: str | os.PathLike[str] | None = None) -> None:
        self.directory = os.fspath(directory)
        self.compact = os.fspath(compact)
        self.shared = shared
        #: the engine's flag index, if it ships one
        self.flag_index = os.fspath(flag_index) if flag_index is not None else None
        self._index: FlagIndex | None = None
        self._index_read = False
        #: how many tables were read (the first one is read from its own file)
        self.read_count = 0
        #: the compact file once read (None: missing or unreadable)
        self._compact: dict[str, Any] | None = None
        self._compact_read = False
        self._releases: tuple[str, ...] | None = None
        #: each version asked about -> the release whose table it is read with (:meth:`release_for`)
        self._release_of: dict[str, str] | None = None
        #: every release as the flag index tells it (:meth:`reading_release`), once asked for
        self._indexed: dict[str, Any] | None = None
        self._indexed_read = False

    def read(self, version: str) -> tuple[dict[str, Any], dict[str, list[int]] | None]:
        """The table of ``version`` as its file holds it, and for each shared key the numbers of its
        rows among :meth:`rows` (None: read from its own file, the rows are its own)."""
        data = read_bytes(os.path.join(self.directory, f"{version}.json"))
        self.read_count += 1
        compact = self._loaded() if self.read_count > 1 else None
        entry = compact["tables"].get(version) if compact is not None else None
        if compact is None or entry is None or entry["source"] != _source_key(data):
            table: dict[str, Any] = json.loads(data.decode("utf-8"))
            return table, None
        stored: dict[str, Any] = entry["table"]
        rows = compact["rows"]
        # the shared rows are one object for all the tables that hold them
        return ({key: [rows[key][number] for number in value] if key in rows else value
                 for key, value in stored.items()},
                {key: stored[key] for key in self.shared})

    def rows(self, key: str) -> list[Any]:
        """The distinct rows under ``key`` of every table (what :meth:`read`'s numbers count)."""
        compact = self._loaded()
        assert compact is not None, "numbers come only from a compact file"
        found: list[Any] = compact["rows"][key]
        return found

    def _loaded(self) -> dict[str, Any] | None:
        if not self._compact_read:
            self._compact_read = True
            try:
                self._compact = json.loads(read_text(self.compact))
            except (OSError, ValueError):
                self._compact = None
        return self._compact

    def index(self) -> FlagIndex | None:
        """The flag index :meth:`index_of` wrote, while it covers the releases of the tables as
        they are (None: no index, unreadable, or stale)."""
        if not self._index_read:
            self._index_read = True
            self._index = self._current_index()
        return self._index

    def indexed_releases(self, release: Callable[[str, FlagIndex, int], Release]) -> dict[str, Release] | None:
        """Every release as the flag index tells it, each made by ``release`` from its name, the
        index and its place there (None: no current index)."""
        index = self.index()
        if index is None:
            return None
        return {name: release(name, index, position) for position, name in enumerate(index.releases)}

    def reading_release(self, version: str, indexed: Callable[[str, FlagIndex, int], Release],
                        table: Callable[[str], Release]) -> Release:
        """The release ``version`` is read with, as far as reading words goes: from the flag index
        (no table to load), each release made once by ``indexed``; or its ``table`` when there is
        no current index. An engine asks with one ``indexed`` type throughout."""
        if not self._indexed_read:
            self._indexed_read = True
            self._indexed = self.indexed_releases(indexed)
        chosen = self.release_for(version)
        if self._indexed is None or chosen not in self._indexed:
            return table(version)
        release: Release = self._indexed[chosen]
        return release

    def _current_index(self) -> FlagIndex | None:
        if self.flag_index is None:
            return None
        try:
            index = read_index(read_text(self.flag_index))
            sizes = self._sizes()
        except (OSError, ValueError):
            return None
        # a size per table: reading every table's bytes to check them would cost what the index saves
        if index.get("sizes") != sizes or index.get("releases") != list(self.releases()):
            return None
        return FlagIndex(index)

    def _sizes(self) -> dict[str, int]:
        """Each release's table file size: what tells a flag index it is stale (a ``stat`` of each
        name, without a path object each: every run that reads the index asks)."""
        return {release: os.stat(os.path.join(self.directory, f"{release}.json")).st_size for release in self.releases()}

    def index_of(self, readings: dict[str, ReleaseReading]) -> dict[str, Any]:
        """The flag index of ``readings``: for each release, each option string's row of what
        decides how a word naming it is read, the names a Python API launch may pass, and facts
        about the release's parser. Each option is written as runs over the releases (oldest
        first): ``[first, row]``, the row's number from that release on (None: not registered);
        each name as its ``[first, end)`` ranges.

        The options, rows and names are each one string of tab-separated parts (the option strings
        sorted, then each one's runs as JSON, in the same order): a process reads the index whole
        but decodes only the parts its launches look up."""
        releases = list(self.releases())
        rows: list[dict[str, Any]] = []
        numbers: dict[str, int] = {}
        at: dict[str, list[int | None]] = {}
        named: dict[str, list[bool]] = {}
        for position, release in enumerate(releases):
            options, names, _ = readings[release]
            for option, row in options.items():
                at.setdefault(option, [None] * len(releases))[position] = _numbered(row, numbers, rows)
            for name in names:
                named.setdefault(name, [False] * len(releases))[position] = True
        option_strings = sorted(at)
        return {"about": f"derived from {os.path.basename(self.directory)}/*.json by 'python tools/regenerate.py'",
                "releases": releases,
                "sizes": self._sizes(),
                "facts": [readings[release][2] for release in releases],
                "rows": _joined(rows),
                "options": "\t".join(option_strings),
                "runs": _joined(_runs(at[option]) for option in option_strings),
                "names": "\t".join(sorted(named)),
                "ranges": _joined(_ranges(named[name]) for name in sorted(named))}

    def versions(self) -> list[str]:
        return [name[: -len(".json")] for name in os.listdir(self.directory) if name.endswith(".json")]

    def releases(self) -> tuple[str, ...]:
        """The releases with a table, oldest first."""
        if self._releases is None:
            self._releases = tuple(sorted(self.versions(), key=version_key))
        return self._releases

    def release_for(self, version: str) -> str:
        """The release whose table ``version`` is read with: the newest one not newer than it (the
        oldest for anything older). An unpinned launch asks this of every release: a release is
        its own table's, and otherwise the releases are compared newest first, up to the first
        that is not newer."""
        if self._release_of is None:
            self._release_of = {release: release for release in self.releases()}
        chosen = self._release_of.get(version)
        if chosen is None:
            releases = self.releases()
            chosen = self._release_of[version] = next(
                (release for release in reversed(releases) if compare(release, version) <= 0), releases[0])
        return chosen

    def compacted(self) -> dict[str, Any]:
        """The compact form of the table files as they are now."""
        rows: dict[str, list[Any]] = {key: [] for key in self.shared}
        numbers: dict[str, dict[str, int]] = {key: {} for key in self.shared}
        tables: dict[str, Any] = {}
        for version in sorted(self.versions()):
            data = read_bytes(os.path.join(self.directory, f"{version}.json"))
            stored: dict[str, Any] = {}
            for key, value in json.loads(data.decode("utf-8")).items():
                if key not in rows:
                    stored[key] = value
                    continue
                stored[key] = [_numbered(row, numbers[key], rows[key]) for row in value]
            tables[version] = {"source": _source_key(data), "table": stored}
        return {"about": f"derived from {os.path.basename(self.directory)}/*.json by 'python -m mtplint.engines.compact'",
                "rows": rows, "tables": tables}

    def write(self) -> None:
        with open(self.compact, "w", encoding="utf-8") as file:
            file.write(json.dumps(self.compacted(), separators=(",", ":")) + "\n")


class FlagIndex:
    """A flag index (as :meth:`TableFiles.index_of` writes it), looked up one option at a time.

    Reading a launch at every release asks, for each word, whether each release registers it and
    how it reads it: a lookup in the option's runs. A prefix is matched against every release's
    option strings at once (:attr:`option_strings`); a release's whole option set is built only
    to put the candidates of an ambiguous prefix in order."""

    def __init__(self, index: dict[str, Any]) -> None:
        #: the releases, oldest first
        self.releases: list[str] = index["releases"]
        #: facts about each release's parser, in the order of ``releases``
        self.facts: list[dict[str, Any]] = index["facts"]
        #: every option string some release registers, sorted (what a prefix is matched against)
        self.option_strings = _split(index["options"])
        self._runs = dict(zip(self.option_strings, _split(index["runs"]), strict=True))
        self._rows = _split(index["rows"])
        # the names are for a Python API launch's keywords: split when one is first asked about
        self._written_names: tuple[str, str] = (index["names"], index["ranges"])
        self._names_read: dict[str, str] | None = None  # tests read whether they were split
        self._decoded: dict[str, list[list[Any]]] = {}
        #: name -> the ranges of releases that have it, decoded when first asked about (at most one
        #: entry per name the index holds)
        self._name_ranges: dict[str, list[list[int]]] = {}
        self._names_at: dict[int, frozenset[str]] = {}
        #: reading row number -> what the engine made of it (:meth:`made_row`)
        self._made: dict[int, Any] = {}
        #: how many whole option sets of a release were built (what an exact flag needs none of)
        self.option_sets_built = 0

    def row(self, number: int) -> Any:
        """The reading row ``number`` (decoded anew: the engine keeps what it makes of it)."""
        return json.loads(self._rows[number])

    def made_row(self, number: int, make: Callable[[dict[str, Any]], Entry]) -> Entry:
        """What ``make`` makes of reading row ``number``, made once: a row several releases share is
        one entry for them all (an index is one engine's, which makes each row one way)."""
        made: Entry | None = self._made.get(number)
        if made is None:
            made = self._made[number] = make(self.row(number))
        return made

    def row_of(self, option: str, position: int) -> int | None:
        """The row number of ``option`` at the release at ``position`` (None: not registered)."""
        runs = _decoded(self._decoded, self._runs, option)
        if runs is None:
            return None
        number = None
        for first, row in runs:
            if first > position:
                break
            number = row
        return number

    @property
    def _names(self) -> dict[str, str]:
        """Each name with its ranges, as JSON."""
        if self._names_read is None:
            names, ranges = self._written_names
            self._names_read = dict(zip(_split(names), _split(ranges), strict=True))
        return self._names_read

    def has_name(self, name: str, position: int) -> bool:
        ranges = _decoded(self._name_ranges, self._names, name)
        return ranges is not None and any(first <= position < end for first, end in ranges)

    def option_rows(self, position: int) -> dict[str, int]:
        """Every option string of the release at ``position`` with its row number, in the index's order."""
        self.option_sets_built += 1
        found: dict[str, int] = {}
        for option in self.option_strings:
            number = self.row_of(option, position)
            if number is not None:
                found[option] = number
        return found

    def names(self, position: int) -> frozenset[str]:
        """The names the release at ``position`` has (worked out once per release, when first asked)."""
        names = self._names_at.get(position)
        if names is None:
            names = self._names_at[position] = frozenset(name for name in self._names if self.has_name(name, position))
        return names


def _decoded(decoded: dict[str, Any], written: Mapping[str, str], key: str) -> Any:
    """The JSON ``written`` holds for ``key``, decoded when first asked for and kept in ``decoded``
    (None: ``written`` has no such key)."""
    value = decoded.get(key)
    if value is None:
        text = written.get(key)
        if text is None:
            return None
        value = decoded[key] = json.loads(text)
    return value


class ReleaseNames(Set[str]):
    """The names one release of a flag index has (:meth:`FlagIndex.names`). A membership test looks
    up that name alone: a Python API launch whose release is not pinned is read at every release by
    its few keywords, where building each release's whole set decoded every name of the index."""

    __slots__ = ("_index", "_position")

    def __init__(self, index: FlagIndex, position: int) -> None:
        self._index = index
        self._position = position

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._index.has_name(name, self._position)

    def __iter__(self) -> Iterator[str]:
        return iter(self._index.names(self._position))

    def __len__(self) -> int:
        return len(self._index.names(self._position))


class NumberedOptions(Mapping[str, "Entry"]):
    """Option strings, each mapped to ``entry`` of its row number, made when looked up: a membership
    test or a lookup asks ``number_of`` about that option alone; only iterating takes
    ``every_number()`` (the option strings in order with their numbers, asked for once)."""

    __slots__ = ("_entry", "_every_number", "_number_of", "_whole")

    def __init__(self, number_of: Callable[[str], int | None], every_number: Callable[[], dict[str, int]],
                 entry: Callable[[int], Entry]) -> None:
        self._number_of = number_of
        self._every_number = every_number
        self._entry = entry
        self._whole: dict[str, int] | None = None

    def __contains__(self, option: object) -> bool:
        return isinstance(option, str) and self._number_of(option) is not None

    def __getitem__(self, option: str) -> Entry:
        number = self._number_of(option)
        if number is None:
            raise KeyError(option)
        return self._entry(number)

    def __iter__(self) -> Iterator[str]:
        return iter(self._numbers())

    def __len__(self) -> int:
        return len(self._numbers())

    def _numbers(self) -> dict[str, int]:
        if self._whole is None:
            self._whole = self._every_number()
        return self._whole


def release_options(index: FlagIndex, position: int, make: Callable[[dict[str, Any]], Entry]) -> NumberedOptions[Entry]:
    """The option strings of the release at ``position`` of ``index``, each mapped to what ``make``
    makes of its reading row (:meth:`FlagIndex.made_row`)."""
    return NumberedOptions(lambda option: index.row_of(option, position), lambda: index.option_rows(position),
                           lambda number: index.made_row(number, make))


def rows_by_option(row_options: Iterable[list[str]]) -> dict[str, int]:
    """Each option string of a table's rows (the option strings of each, in registration order)
    with the number of its row. As in argparse, a later registration of the same string wins, and
    keeps the first one's place."""
    return {option: number for number, options in enumerate(row_options) for option in options}


def keyed(numbers: dict[str, int], entry: Callable[[int], Entry]) -> NumberedOptions[Entry]:
    """The keys of ``numbers``, each mapped to ``entry`` of its row number, made when looked up."""
    return NumberedOptions(numbers.get, lambda: numbers, entry)


#: the parts of a flag index written as lines of their own after its first line (the JSON of the rest)
_INDEX_LINES = ("rows", "options", "runs", "names", "ranges")


def written_index(index: dict[str, Any]) -> str:
    """A flag index (:meth:`TableFiles.index_of`) as its file holds it: the small parts as one line
    of JSON, then each tab-separated part as a line of its own. Those parts are most of the index;
    as JSON strings they were decoded whole, every quote of their JSON escaped, at each run."""
    head = {key: value for key, value in index.items() if key not in _INDEX_LINES}
    lines = [json.dumps(head, separators=(",", ":")), *(index[key] for key in _INDEX_LINES)]
    assert not any("\n" in line for line in lines), "compact JSON and option strings hold no newline"
    return "\n".join(lines) + "\n"


def read_index(text: str) -> dict[str, Any]:
    """The flag index :func:`written_index` wrote (ValueError: not one)."""
    lines = text.split("\n")
    if len(lines) != len(_INDEX_LINES) + 2 or lines[-1]:
        raise ValueError("not a flag index")
    index: dict[str, Any] = json.loads(lines[0])
    if not isinstance(index, dict):
        raise ValueError("not a flag index")
    index.update(zip(_INDEX_LINES, lines[1:-1], strict=True))
    return index


def _joined(parts: Iterable[Any]) -> str:
    """``parts`` as JSON, tab-separated (compact JSON holds no tab: a tab in a string is escaped)."""
    return "\t".join(json.dumps(part, separators=(",", ":"), sort_keys=True) for part in parts)


def _split(joined: str) -> list[str]:
    return joined.split("\t") if joined else []


def _runs(values: list[int | None]) -> list[list[int | None]]:
    found: list[list[int | None]] = []
    for position, value in enumerate(values):
        if not found or found[-1][1] != value:
            found.append([position, value])
    return found


def _ranges(present: list[bool]) -> list[list[int]]:
    found: list[list[int]] = []
    for position, there in enumerate(present):
        if there and found and found[-1][1] == position:
            found[-1][1] = position + 1
        elif there:
            found.append([position, position + 1])
    return found


#: the engine modules whose tables are compacted (each builds its ``TABLE_FILES`` on this module)
COMPACTED_ENGINES = ("mtplint.engines.vllm", "mtplint.engines.sglang")


def main() -> None:
    for name in COMPACTED_ENGINES:
        files: TableFiles = __import__(name, fromlist=("TABLE_FILES",)).TABLE_FILES
        files.write()
        print(f"wrote {files.compact}")


if __name__ == "__main__":
    main()


def _numbered(row: Any, numbers: dict[str, int], rows: list[Any]) -> int:
    """The number of ``row`` among the distinct ``rows`` (added when it is new); rows are told
    apart by their JSON, keys sorted."""
    written = json.dumps(row, sort_keys=True)
    number = numbers.get(written)
    if number is None:
        number = numbers[written] = len(rows)
        rows.append(row)
    return number
