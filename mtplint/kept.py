"""What a run keeps of its files until its assembly (:func:`mtplint.lint.assemble`) and the
verification of its fixes (:mod:`mtplint.fix.verify`): the results of the files that say something,
and the run's own analyses of those whose findings offer a fix.

A large tree's findings grow with it (the benchmark's mixed 100k tree: 10,166 files with 18,472
findings, some 30 MB of results held to the end of the walk). Past :data:`HELD_IN_MEMORY` results
they are pickled to a temporary file as files finish (:mod:`mtplint.result_pickle`) and read back
one at a time, in the walk's order, by the assembly, which keeps only what the report needs of
each; an analysis is read back when the verification asks for it. A run with fewer results (a
pre-commit hook's, most projects') keeps them in memory, as it always did.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Mapping

from mtplint.analysed import AnalysedFile
from mtplint.analysis import FileResult, LaunchResult, RunGroup

# pickle and mtplint.result_pickle are imported by the methods that write and read the temporary
# file: a large run's only (a pre-commit hook's run over a few files never loads them)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO

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

    def add(self, index: int, result: FileResult, group: int) -> None:
        self.started.update(started_launches(result.launches))
        self._held.append((index, result, group))
        if len(self._held) > HELD_IN_MEMORY or self._file is not None:
            self._write_held()

    def write(self, data: bytes) -> tuple[int, int]:
        """``data`` appended to the temporary file (opened the first time): its offset and size."""
        if self._file is None:
            import tempfile  # a large run's only

            # no name on POSIX, removed on close elsewhere: nothing is left behind, even on error. Not
            # a context manager's: the file lives as long as the run's result (its verification
            # reads the analyses), and is closed with it
            self._file = tempfile.TemporaryFile(prefix="mtplint-")  # noqa: SIM115
        offset = self._file.seek(0, 2)
        self._file.write(data)
        return offset, len(data)

    def read(self, offset: int, size: int) -> bytes:
        assert self._file is not None
        self._file.seek(offset)
        return self._file.read(size)

    def _write_held(self) -> None:
        from mtplint.result_pickle import dump_result

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
        from mtplint.result_pickle import load_result

        self._write_held()
        places = self._places
        for start in sorted(range(0, len(places), 4), key=places.__getitem__):
            group = places[start + 1]
            yield load_result(self.read(places[start + 2], places[start + 3]), self.groups[group]), group


class KeptAnalyses(Mapping[str, AnalysedFile]):
    """The run's analyses of the files whose findings offer a fix, by display name: in memory while
    the run's results are, else in the temporary file, read back when asked for."""

    __slots__ = ("_kept", "_held", "_places")

    def __init__(self, kept: KeptResults) -> None:
        self._kept = kept
        self._held: dict[str, AnalysedFile] = {}
        #: display name -> offset and size of the analysis in the temporary file
        self._places: dict[str, tuple[int, int]] = {}

    def add(self, display: str, analysed: AnalysedFile) -> None:
        if not self._kept.written:
            self._held[display] = analysed
            return
        import pickle

        from mtplint.result_pickle import dump_result

        self._held.pop(display, None)
        record = (analysed.kind, analysed.group, analysed.rules, analysed.requested, dump_result(analysed.result))
        self._places[display] = self._kept.write(pickle.dumps(record, pickle.HIGHEST_PROTOCOL))

    def __getitem__(self, display: str) -> AnalysedFile:
        held = self._held.get(display)
        if held is not None:
            return held
        import pickle

        from mtplint.result_pickle import load_result

        kind, group, rules, requested, result = pickle.loads(self._kept.read(*self._places[display]))
        return AnalysedFile(kind, group, rules, requested, load_result(result, self._kept.groups[group]))

    def __iter__(self) -> Iterator[str]:
        yield from self._held
        yield from self._places

    def __len__(self) -> int:
        return len(self._held) + len(self._places)


def started_launches(launches: Iterable[LaunchResult]) -> set[tuple[str, int]]:
    """The keys of the launches read through the unit, Dockerfile or wrapper that starts them: a
    script's stand-alone reading of one of those is dropped (:func:`mtplint.pipeline.unique_launches`)."""
    return {launch.key for launch in launches if launch.via_other}
