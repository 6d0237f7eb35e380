"""An engine's generated option tables (one ``<release>.json`` per release) in one derived file.

Consecutive releases share most of their rows: SGLang's twenty tables hold ~8,000 action rows, ~850
of them distinct. Reading every table costs ~30 ms a process, most of it JSON, and a tree's version
narrowing reads them all; the compact file writes each distinct row once and each table as the
numbers of its rows. The tables stay the source of truth: a release's table is taken from the
compact file only while the release's own file holds the bytes it was made from (length and
CRC-32), else from its own file. The first table a process reads comes from its own file too
(a launch of a known release needs no other, and one table alone is quicker to read that way).

A launch whose release is not pinned is read at every release to narrow the range; an engine may
also ship a flag index (``<engine>-flags.json``, written by ``tools/regenerate.py``): for each option
string the releases that register it and how each reads it, so that this narrowing needs no table
but the one the launch is parsed with. The index is used only while each table file has the size it
was made from.

Rewrite the compact files after regenerating a table: ``python -m mtplint.engines.compact``.
"""

from __future__ import annotations

import binascii  # built into the interpreter: no hashing module for ~1.5 MB of tables
import json
from pathlib import Path

from mtplint.versions import compare, version_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    #: one release in a flag index: option string -> reading row, names, facts about its parser
    ReleaseReading = tuple[dict[str, dict[str, Any]], set[str], dict[str, Any]]


def _source_key(data: bytes) -> list[int]:
    """What identifies a table file's bytes: their length and CRC-32."""
    return [len(data), binascii.crc32(data)]


class TableFiles:
    """The tables of one engine, ``<release>.json`` in ``directory``; the rows under the keys
    ``shared`` (lists of rows) are written once in the compact file ``compact``."""

    def __init__(self, directory: Path, compact: Path, shared: tuple[str, ...], flag_index: Path | None = None) -> None:
        self.directory = directory
        self.compact = compact
        self.shared = shared
        #: the engine's flag index, if it ships one
        self.flag_index = flag_index
        self._index: dict[str, Any] | None = None
        self._index_read = False
        #: how many tables were read (the first one is read from its own file)
        self.read_count = 0
        #: the compact file once read (None: missing or unreadable)
        self._compact: dict[str, Any] | None = None
        self._compact_read = False
        self._releases: tuple[str, ...] | None = None

    def read(self, version: str) -> tuple[dict[str, Any], dict[str, list[int]] | None]:
        """The table of ``version`` as its file holds it, and for each shared key the numbers of its
        rows among :meth:`rows` (None: read from its own file, the rows are its own)."""
        data = self.directory.joinpath(f"{version}.json").read_bytes()
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
                self._compact = json.loads(self.compact.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                self._compact = None
        return self._compact

    def index(self) -> dict[str, Any] | None:
        """The flag index as :meth:`index_of` wrote it, while it covers the releases of the tables
        as they are (None: no index, unreadable, or stale)."""
        if not self._index_read:
            self._index_read = True
            self._index = self._current_index()
        return self._index

    def _current_index(self) -> dict[str, Any] | None:
        if self.flag_index is None:
            return None
        try:
            index: dict[str, Any] = json.loads(self.flag_index.read_text(encoding="utf-8"))
            sizes = self._sizes()
        except (OSError, ValueError):
            return None
        # a size per table: reading every table's bytes to check them would cost what the index saves
        if index.get("sizes") != sizes or index.get("releases") != list(self.releases()):
            return None
        return index

    def _sizes(self) -> dict[str, int]:
        """Each release's table file size: what tells a flag index it is stale."""
        return {release: self.directory.joinpath(f"{release}.json").stat().st_size for release in self.releases()}

    def index_of(self, readings: dict[str, ReleaseReading]) -> dict[str, Any]:
        """The flag index of ``readings``: for each release, each option string's row of what
        decides how a word naming it is read, the names a Python API launch may pass, and facts
        about the release's parser. Each option is written as runs over the releases (oldest
        first): ``[first, row]``, the row's number from that release on (None: not registered);
        each name as its ``[first, end)`` ranges."""
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
        return {"about": f"derived from {self.directory.name}/*.json by 'python tools/regenerate.py'",
                "releases": releases,
                "sizes": self._sizes(),
                "facts": [readings[release][2] for release in releases],
                "rows": rows,
                "options": {option: _runs(per_release) for option, per_release in sorted(at.items())},
                "names": {name: _ranges(present) for name, present in sorted(named.items())}}

    def versions(self) -> list[str]:
        return [entry.name[: -len(".json")] for entry in self.directory.iterdir() if entry.name.endswith(".json")]

    def releases(self) -> tuple[str, ...]:
        """The releases with a table, oldest first."""
        if self._releases is None:
            self._releases = tuple(sorted(self.versions(), key=version_key))
        return self._releases

    def release_for(self, version: str) -> str:
        """The release whose table ``version`` is read with: the newest one not newer than it (the
        oldest for anything older)."""
        releases = self.releases()
        chosen = releases[0]
        for release in releases:
            if compare(release, version) <= 0:
                chosen = release
        return chosen

    def compacted(self) -> dict[str, Any]:
        """The compact form of the table files as they are now."""
        rows: dict[str, list[Any]] = {key: [] for key in self.shared}
        numbers: dict[str, dict[str, int]] = {key: {} for key in self.shared}
        tables: dict[str, Any] = {}
        for version in sorted(self.versions()):
            data = self.directory.joinpath(f"{version}.json").read_bytes()
            stored: dict[str, Any] = {}
            for key, value in json.loads(data.decode("utf-8")).items():
                if key not in rows:
                    stored[key] = value
                    continue
                stored[key] = [_numbered(row, numbers[key], rows[key]) for row in value]
            tables[version] = {"source": _source_key(data), "table": stored}
        return {"about": f"derived from {self.directory.name}/*.json by 'python -m mtplint.engines.compact'",
                "rows": rows, "tables": tables}

    def write(self) -> None:
        self.compact.write_text(json.dumps(self.compacted(), separators=(",", ":")) + "\n", encoding="utf-8")


def index_releases(index: dict[str, Any]) -> list[tuple[str, dict[str, int], frozenset[str], dict[str, Any]]]:
    """Each release of a flag index (as :meth:`TableFiles.index_of` writes it), oldest first: its
    option strings with their row numbers, its names and its facts."""
    releases: list[str] = index["releases"]
    options: list[dict[str, int]] = [{} for _ in releases]
    for option, runs in index["options"].items():
        ends = [first for first, _ in runs[1:]] + [len(releases)]
        for (first, number), end in zip(runs, ends, strict=True):
            if number is not None:
                for position in range(first, end):
                    options[position][option] = number
    names: list[set[str]] = [set() for _ in releases]
    for name, ranges in index["names"].items():
        for first, end in ranges:
            for position in range(first, end):
                names[position].add(name)
    return [(release, options[position], frozenset(names[position]), index["facts"][position])
            for position, release in enumerate(releases)]


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
