"""What a run keeps of its files until its assembly (:func:`mtplint.lint.assemble`) and the
verification of its fixes (:mod:`mtplint.fix.verify`): the results of the files that say something,
and the run's own analyses of those whose findings offer a fix.

A large tree's findings grow with it (the benchmark's mixed 100k tree: 10,166 files with 18,472
findings, some 30 MB of results held to the end of the walk). Past :data:`HELD_IN_MEMORY` results
they are pickled to a temporary file as files finish (:mod:`mtplint.result_pickle`) and read back
one at a time, in the walk's order, by the assembly, which keeps only what the report needs of
each; an analysis is read back when the verification asks for it. The findings the assembly
keeps go the same way (:class:`FindingRuns`, :class:`FindingStore`): through the report, the
summary and the exit code a chunk at a time. A run with fewer results (a pre-commit hook's, most
projects') keeps them in memory, as it always did.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import groupby
from operator import itemgetter

from mtplint.analysed import AnalysedFile
from mtplint.analysis import FileResult, LaunchResult, RunGroup
from mtplint.checks import Finding
from mtplint.source import ShownLines, kept_lines

# pickle and mtplint.result_pickle are imported by the methods that write and read the temporary
# file: a large run's only (a pre-commit hook's run over a few files never loads them)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any

    from mtplint.extract import FileLoader

#: the results a run holds in memory before it writes them, and those that follow, to a temporary
#: file: the benchmark's mixed 10k tree keeps 996, its 1k trees about a hundred
HELD_IN_MEMORY = 256


class KeptResults:
    """The results a run keeps, by their place in the walk (workers hand them over out of order),
    each with its configuration group (an index into ``groups``, the run's list of them)."""

    __slots__ = ("groups", "_held", "_file", "_places", "started", "analysed")

    def __init__(self, groups: list[RunGroup]) -> None:
        self.groups = groups
        self._held: list[tuple[int, FileResult, int]] = []
        self._file: IO[bytes] | None = None
        #: each written result's place in the walk, group, offset and size in :attr:`_file`
        self._places = array("q")
        #: the keys of the launches read through another file, which the assembly needs before
        #: the results (:func:`started_launches`)
        self.started: set[tuple[str, int]] = set()
        #: display name -> the run's analysis of each file whose findings offer a fix
        self.analysed = KeptAnalyses(self)

    def __len__(self) -> int:
        return len(self._held) + len(self._places) // 4

    @property
    def written(self) -> bool:
        """Whether the results are kept in the temporary file (from the first one past the limit)."""
        return self._file is not None

    def add(self, index: int, result: FileResult, group: int) -> tuple[int, int] | None:
        """Keep ``result``; where it went in the temporary file (its offset and size) when it was
        written there now, else None (held in memory)."""
        self.started.update(started_launches(result.launches))
        self._held.append((index, result, group))
        if len(self._held) > HELD_IN_MEMORY or self._file is not None:
            self._write_held()  # the last one written is this result
            return self._places[-2], self._places[-1]
        return None

    def write(self, data: bytes) -> tuple[int, int]:
        """``data`` appended to the temporary file (opened the first time): its offset and size."""
        if self._file is None:
            import tempfile  # noqa: PLC0415 - a large run's spill only

            # no name on POSIX, removed on close elsewhere: nothing is left behind, even on error. Not
            # a context manager's: the file lives as long as the run's result (its verification
            # reads the analyses), and is closed with it
            self._file = tempfile.TemporaryFile(prefix="mtplint-")  # noqa: SIM115
        offset = self._file.seek(0, 2)
        self._file.write(data)
        # in the file, not its buffer, for :meth:`read` (as the next write's seek would write it)
        self._file.flush()
        return offset, len(data)

    def read(self, offset: int, size: int) -> bytes:
        file = self._file
        assert file is not None
        if not hasattr(os, "pread"):  # pragma: no cover - not Unix, where no process is forked
            file.seek(offset)
            return file.read(size)
        # at an offset, not through the file's position: the processes forked to verify fixes
        # (mtplint.fix.verify) read the same open file, and would move each other's
        return os.pread(file.fileno(), size, offset)

    def write_value(self, value: object) -> tuple[int, int]:
        """``value`` pickled and appended (:meth:`write`): its offset and size."""
        import pickle  # noqa: PLC0415 - a large run's spill only

        return self.write(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))

    def read_value(self, spots: array[int], at: int) -> Any:
        """What :meth:`write_value` wrote at the offset ``spots[at]``, of the size ``spots[at + 1]``."""
        import pickle  # noqa: PLC0415 - a large run's spill only

        return pickle.loads(self.read(spots[at], spots[at + 1]))

    def _write_held(self) -> None:
        from mtplint.result_pickle import dump_result  # noqa: PLC0415 - a large run's spill only

        for index, result, group in self._held:
            self._places.extend((index, group, *self.write(dump_result(result))))
        self._held.clear()

    def results(self) -> Iterator[tuple[FileResult, int]]:
        """Each result with its group, in the walk's order; read back one at a time once written."""
        if self._file is None:
            self._held.sort(key=lambda held: held[0])
            for _, result, group in self._held:
                yield result, group
            return
        from mtplint.result_pickle import load_result  # noqa: PLC0415 - a large run's spill only

        self._write_held()
        places = self._places
        for start in sorted(range(0, len(places), 4), key=places.__getitem__):
            group = places[start + 1]
            yield load_result(self.read(places[start + 2], places[start + 3]), self.groups[group]), group


#: the findings a large run's assembly sorts in memory before it writes them, as one sorted run
#: of the merge that gives them back in report order (:class:`FindingRuns`)
FINDINGS_RUN = 1024
#: the findings pickled, and read back, together: few enough that the pickler's memo of their
#: objects stays small (256 at a time held some 1 MB while pickled)
FINDINGS_CHUNK = 64


def _report_order(numbered: tuple[int, Finding]) -> tuple[tuple[str, int, int, str], int]:
    """A finding's place in the report, ties left in the order the assembly collected them."""
    return numbered[1].sort_key(), numbered[0]


class FindingRuns:
    """The findings a large run's assembly collects (those of every launch it keeps, in the walk's
    order), written to the kept results' temporary file as they come, a sorted run at a time, and
    given back a file at a time in report order (a merge of the runs): what is done with the
    findings of one file (one finding per mistake, the suppressions) needs none of the others, so
    the run's findings are never all in memory at once."""

    __slots__ = ("_kept", "_group", "_collected", "_runs", "_count")

    def __init__(self, kept: KeptResults, group: int = 0) -> None:
        self._kept = kept
        #: the configuration group whose rules the findings name (a run with one configuration)
        self._group = group
        self._collected: list[tuple[int, Finding]] = []
        #: each written run's chunks: offset and size in the temporary file
        self._runs: list[list[tuple[int, int]]] = []
        self._count = 0

    def extend(self, findings: Iterable[Finding]) -> None:
        for finding in findings:
            self._collected.append((self._count, finding))
            self._count += 1
        if len(self._collected) >= FINDINGS_RUN:
            self._write_run()

    def _write_run(self) -> None:
        from mtplint.result_pickle import dump_findings  # noqa: PLC0415 - a large run's spill only

        collected = sorted(self._collected, key=_report_order)
        self._collected = []
        self._runs.append([self._kept.write(dump_findings(collected[start:start + FINDINGS_CHUNK]))
                           for start in range(0, len(collected), FINDINGS_CHUNK)])

    def _read_run(self, chunks: list[tuple[int, int]]) -> Iterator[tuple[int, Finding]]:
        from mtplint.result_pickle import load_findings  # noqa: PLC0415 - a large run's spill only

        group = self._kept.groups[self._group]
        for offset, size in chunks:
            yield from load_findings(self._kept.read(offset, size), group)

    def by_file(self) -> Iterator[tuple[str, list[tuple[int, Finding]]]]:
        """Each file's findings, numbered in the order they were collected and in that order; the
        files in report order."""
        import heapq  # noqa: PLC0415 - a large run's spill only: its findings wait in the temporary file

        runs: list[Iterable[tuple[int, Finding]]] = list(map(self._read_run, self._runs))
        if self._collected:
            # the last run, fewer findings than :data:`FINDINGS_RUN` still in memory: merged from
            # there, not written to be read back at once
            runs.append(sorted(self._collected, key=_report_order))
            self._collected = []
        merged = heapq.merge(*runs, key=_report_order)
        for file, numbered in groupby(merged, key=lambda item: item[1].span.file):
            yield file, sorted(numbered, key=itemgetter(0))


class FindingStore(Sequence[Finding]):
    """A large run's findings in report order, in the kept results' temporary file, read back a
    chunk at a time: the report, the summary and the exit code go through them without holding
    them all."""

    __slots__ = ("kept", "group", "_chunks", "_pending", "_length", "_last")

    def __init__(self, kept: KeptResults, group: int = 0) -> None:
        self.kept = kept
        #: the configuration group whose rules the findings name
        self.group = group
        #: each chunk's offset and size in the temporary file
        self._chunks: list[tuple[int, int]] = []
        self._pending: list[Finding] = []
        self._length = 0
        #: the chunk read last, by its number (a report's slices read each chunk once)
        self._last: tuple[int, list[Finding]] | None = None

    def extend(self, findings: Iterable[Finding]) -> None:
        for finding in findings:
            self._pending.append(finding)
            self._length += 1
            if len(self._pending) >= FINDINGS_CHUNK:
                self._write_pending()

    def _write_pending(self) -> None:
        from mtplint.result_pickle import dump_findings  # noqa: PLC0415 - a large run's spill only

        if self._pending:
            self._chunks.append(self.kept.write(dump_findings(self._pending)))
            self._pending = []

    def _chunk(self, number: int) -> list[Finding]:
        if self._last is not None and self._last[0] == number:
            return self._last[1]
        from mtplint.result_pickle import load_findings  # noqa: PLC0415 - a large run's spill only

        self._write_pending()
        findings: list[Finding] = load_findings(self.kept.read(*self._chunks[number]), self.kept.groups[self.group])
        self._last = (number, findings)
        return findings

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: Any) -> Any:  # an int, or a slice (a list): as a list's
        if isinstance(index, slice):
            return [self[number] for number in range(*index.indices(self._length))]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError(index)
        return self._chunk(index // FINDINGS_CHUNK)[index % FINDINGS_CHUNK]

    def __iter__(self) -> Iterator[Finding]:
        self._write_pending()
        for number in range(len(self._chunks)):
            yield from self._chunk(number)

    def replaced(self, places: Iterable[int], replacement: Callable[[Finding], Finding]) -> FindingStore:
        """A store of these findings with each of those at ``places`` replaced by its
        ``replacement``: it shares the chunks that hold none of them, and writes the others again."""
        from mtplint.result_pickle import dump_findings  # noqa: PLC0415 - a large run's spill only

        self._write_pending()
        store = FindingStore(self.kept, self.group)
        store._chunks = list(self._chunks)
        store._length = self._length
        by_chunk: dict[int, list[int]] = {}
        for place in places:
            by_chunk.setdefault(place // FINDINGS_CHUNK, []).append(place % FINDINGS_CHUNK)
        for number in sorted(by_chunk):
            chunk = list(self._chunk(number))
            for offset in by_chunk[number]:
                chunk[offset] = replacement(chunk[offset])
            store._chunks[number] = self.kept.write(dump_findings(chunk))
        return store


#: the files whose shown lines a large run's assembly holds before it writes them, as one sorted
#: run of the merge that gives them back by file (:class:`ShownOnDisk`)
SHOWN_RUN = 1024


class ShownOnDisk(ShownLines):
    """The lines a large run's report shows around its findings (:class:`mtplint.source.ShownLines`),
    in the kept results' temporary file: written as the assembly takes them, a sorted run of
    :data:`SHOWN_RUN` files at a time, merged into one record per file the first time the report
    asks, and read back a file at a time (the report asks for them in its order, by file). Only
    the files' names stay in memory (the benchmark's mixed 100k tree: 9,524 files, 3.6 MB of lines)."""

    __slots__ = ("_kept", "_runs", "_names", "_spots", "_last")

    def __init__(self, kept: KeptResults) -> None:
        super().__init__()
        self._kept = kept
        #: each written run's files: offset and size in the temporary file
        self._runs: list[array[int]] = []
        #: once merged: the files in order, and where each one's record is (offset, size)
        self._names: list[str] | None = None
        self._spots = array("q")
        #: the record read last, by its file's place in :attr:`_names`
        self._last: tuple[int, int, dict[str, str]] | None = None

    def add(self, shown: dict[str, Any]) -> None:
        super().add(shown)
        if len(self._files) >= SHOWN_RUN:
            self._write_run()

    def _write_run(self) -> None:
        spots = array("q")
        for file, (count, around) in sorted(self._files.items()):
            spots.extend(self._kept.write_value((file, count, around)))
        self._runs.append(spots)
        self._files = {}
        self._own = set()

    def _read_run(self, spots: array[int]) -> Iterator[tuple[str, int, dict[str, str], int, int]]:
        """A run's records (file, line count, lines), each with its offset and size."""
        for start in range(0, len(spots), 2):
            yield (*self._kept.read_value(spots, start), spots[start], spots[start + 1])

    def _merged(self) -> list[str]:
        """The runs merged into one record per file (a file in several takes the lines of each)."""
        if self._names is not None:
            return self._names
        import heapq  # noqa: PLC0415 - a large run's spill only: its lines wait in the temporary file

        if self._files:
            self._write_run()
        names: list[str] = []
        merged = heapq.merge(*map(self._read_run, self._runs), key=itemgetter(0))
        for file, group in groupby(merged, key=itemgetter(0)):
            records = list(group)  # one a run at most
            names.append(file)
            if len(records) == 1:  # most files: their run's record is theirs, not written again
                self._spots.extend(records[0][3:])
                continue
            count, around = records[0][1], records[0][2]  # the first one's line count (as ShownLines.add)
            for _, _, lines, _, _ in records[1:]:
                around.update(lines)
            self._spots.extend(self._kept.write_value((file, count, around)))
        self._runs = []
        self._names = names
        return names

    def lines(self, file: str, line: int) -> Sequence[str] | None:
        if not self._runs and self._names is None:
            # no run written (fewer files than :data:`SHOWN_RUN`): every file's lines are still in
            # memory, not written to be read back at once
            return super().lines(file, line)
        names = self._merged()
        place = bisect_left(names, file)
        if place == len(names) or names[place] != file:
            return None
        if self._last is None or self._last[0] != place:
            _, count, around = self._kept.read_value(self._spots, 2 * place)
            self._last = (place, count, around)
        return kept_lines(self._last[1], self._last[2], line)


def replaced_at(findings: Sequence[Finding], places: Iterable[int],
                replacement: Callable[[Finding], Finding]) -> Sequence[Finding]:
    """``findings`` with each of those at ``places`` replaced by its ``replacement``, kept as
    ``findings`` are: in a store of the same temporary file, which reads and writes again only the
    chunks holding them, once each (a large run's report reads every chunk anyway), else in a list."""
    if isinstance(findings, FindingStore):
        return findings.replaced(places, replacement)
    replaced = list(findings)
    for place in places:
        replaced[place] = replacement(replaced[place])
    return replaced


def same_kind(findings: Sequence[Finding], replaced: Iterable[Finding]) -> Sequence[Finding]:
    """``replaced`` (the findings of ``findings`` as a report now shows them), kept as ``findings``
    are: in a store of the same temporary file, else in a list."""
    if isinstance(findings, FindingStore):
        store = FindingStore(findings.kept, findings.group)
        store.extend(replaced)
        return store
    return list(replaced)


class KeptAnalyses(Mapping[str, AnalysedFile]):
    """The run's analyses of the files whose findings offer a fix, by display name: in memory while
    the run's results are, else in the temporary file, read back when asked for."""

    __slots__ = ("_kept", "_held", "_places", "_spots", "loader")

    def __init__(self, kept: KeptResults) -> None:
        self._kept = kept
        #: the loader the run read files through in this process (:meth:`lend_loader`)
        self.loader: FileLoader | None = None
        self._held: dict[str, AnalysedFile] = {}
        #: display name -> where its analysis is in the temporary file: the index of its offset in
        #: :attr:`_spots` (then its size), not a tuple per file (the benchmark's mixed 100k tree
        #: keeps ~5,000 analyses: ~80 bytes less each)
        self._places: dict[str, int] = {}
        self._spots = array("q")

    def add(self, display: str, analysed: AnalysedFile, written: tuple[int, int] | None = None) -> None:
        """Keep ``analysed``; ``written``: where its very result is in the temporary file already (a
        kept result, :meth:`KeptResults.add`), which the analysis then points to rather than hold a
        second copy of it (most files whose findings offer a fix keep their whole result)."""
        if not self._kept.written:
            self._held[display] = analysed
            return
        self._held.pop(display, None)
        result: bytes | tuple[int, int]
        if written is None:
            from mtplint.result_pickle import dump_result  # noqa: PLC0415 - a large run's spill only

            result = dump_result(analysed.result)
        else:
            result = written
        record = (analysed.kind, analysed.group, analysed.rules, analysed.requested, result)
        self._places[display] = len(self._spots)
        self._spots.extend(self._kept.write_value(record))

    def __getitem__(self, display: str) -> AnalysedFile:
        held = self._held.get(display)
        if held is not None:
            return held
        from mtplint.result_pickle import load_result  # noqa: PLC0415 - a large run's spill only

        kind, group, rules, requested, result = self._kept.read_value(self._spots, self._places[display])
        data = result if isinstance(result, bytes) else self._kept.read(*result)
        return AnalysedFile(kind, group, rules, requested, load_result(data, self._kept.groups[group]))

    def lend_loader(self) -> FileLoader | None:
        """The run's loader, for the first fixing that verifies these analyses' fixes: its answers
        about paths (real paths, directory listings) hold for the fixing, which asks them again. Lent
        once: the fixing's own answers join them, and a large run's batches would pile theirs up in
        it to the end of the run (each later batch asks about files of its own anyway)."""
        loader, self.loader = self.loader, None
        return loader

    @property
    def groups(self) -> list[RunGroup]:
        """The run's configuration groups, which the analyses' ``group`` numbers index."""
        return self._kept.groups

    def requested(self, display: str) -> tuple[str, ...] | None:
        """The files the run's analysis of ``display`` asked for (:attr:`AnalysedFile.requested`),
        None without an analysis: its result is not read back (what batching the verification of
        a large run's fixes asks of thousands of analyses)."""
        held = self._held.get(display)
        if held is not None:
            return held.requested
        spot = self._places.get(display)
        if spot is None:
            return None
        requested: tuple[str, ...] = self._kept.read_value(self._spots, spot)[3]
        return requested

    def __iter__(self) -> Iterator[str]:
        yield from self._held
        yield from self._places

    def __len__(self) -> int:
        return len(self._held) + len(self._places)


def started_launches(launches: Iterable[LaunchResult]) -> set[tuple[str, int]]:
    """The keys of the launches read through the unit, Dockerfile or wrapper that starts them: a
    script's stand-alone reading of one of those is dropped (:func:`mtplint.pipeline.unique_launches`)."""
    return {launch.key for launch in launches if launch.via_other}


def requested_by(analysed: Mapping[str, AnalysedFile], display: str) -> tuple[str, ...] | None:
    """What the analysis of ``display`` among ``analysed`` asked for (:attr:`AnalysedFile.requested`),
    None without one; a run's kept analyses give it without reading back the analysis's result."""
    if isinstance(analysed, KeptAnalyses):
        return analysed.requested(display)
    known = analysed.get(display)
    return known.requested if known is not None else None
