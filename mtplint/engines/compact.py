"""An engine's generated option tables (one ``<release>.json`` per release) in one derived file.

Consecutive releases share most of their rows: SGLang's twenty tables hold ~8,000 action rows, ~850
of them distinct. Reading every table costs ~30 ms a process, most of it JSON, and a tree's version
narrowing reads them all; the compact file writes each distinct row once and each table as the
numbers of its rows. The tables stay the source of truth: a release's table is taken from the
compact file only while the release's own file holds the bytes it was made from (length and
CRC-32), else from its own file. The first table a process reads comes from its own file too
(a launch of a known release needs no other, and one table alone is quicker to read that way).

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


def _source_key(data: bytes) -> list[int]:
    """What identifies a table file's bytes: their length and CRC-32."""
    return [len(data), binascii.crc32(data)]


class TableFiles:
    """The tables of one engine, ``<release>.json`` in ``directory``; the rows under the keys
    ``shared`` (lists of rows) are written once in the compact file ``compact``."""

    def __init__(self, directory: Path, compact: Path, shared: tuple[str, ...]) -> None:
        self.directory = directory
        self.compact = compact
        self.shared = shared
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
                stored[key] = []
                for row in value:
                    written = json.dumps(row, sort_keys=True)
                    if written not in numbers[key]:
                        numbers[key][written] = len(rows[key])
                        rows[key].append(row)
                    stored[key].append(numbers[key][written])
            tables[version] = {"source": _source_key(data), "table": stored}
        return {"about": f"derived from {self.directory.name}/*.json by 'python -m mtplint.engines.compact'",
                "rows": rows, "tables": tables}

    def write(self) -> None:
        self.compact.write_text(json.dumps(self.compacted(), separators=(",", ":")) + "\n", encoding="utf-8")


#: the engine modules whose tables are compacted (each builds its ``TABLE_FILES`` on this module)
COMPACTED_ENGINES = ("mtplint.engines.vllm", "mtplint.engines.sglang")


def main() -> None:
    for name in COMPACTED_ENGINES:
        files: TableFiles = __import__(name, fromlist=("TABLE_FILES",)).TABLE_FILES
        files.write()
        print(f"wrote {files.compact}")


if __name__ == "__main__":
    main()
