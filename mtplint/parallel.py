"""``--jobs N``: files analysed in N - 1 worker processes and this one, as the walk finds them.

Chunks of consecutive files (they share a directory's ``.env``, pins and scripts) go to a
:class:`~concurrent.futures.ProcessPoolExecutor` of forked workers, which load the extractors,
engines and rules first thing. While every worker has a chunk running and one waiting, this
process analyses the next chunk itself: no more processes than asked for compete for the CPUs.

A chunk a worker could not analyse (an exception there, or the worker killed: ``BrokenProcessPool``)
is analysed in this process, where a failure is reported as a one-process run reports it: no file
is lost, and the output is the same for any ``--jobs``. Results come back as they are finished,
with their place in the walk (:func:`mtplint.lint.assemble` puts them back in order).
"""

from __future__ import annotations

import io
import multiprocessing
import os
import pickle
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from itertools import islice
from pathlib import Path

from mtplint.analysis import FileResult, RecordingLoader, RunGroup, load_analysis
from mtplint.cache import analysed_with_dependencies
from mtplint.checks import Edit
from mtplint.checks.catalog import Rule
from mtplint.discover import Candidate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from typing import Any

    from mtplint.cache import Dependencies
    from mtplint.config import LintSettings

    Work = tuple[int, Candidate]
    #: a file of a chunk as sent to a worker: its path, kind, whether it was named, configuration group
    SentFile = tuple[str, str, bool, int]
    #: a file's result as a worker sends it back: pickled (:func:`dump_result`), with its cache dependencies
    #: and the files it read (:func:`mtplint.cache.analysed_with_dependencies`)
    Done = tuple[bytes, Dependencies | None, tuple[str, ...] | None]
    Analysed = tuple[int, Candidate, FileResult, Dependencies | None, tuple[str, ...] | None]

#: files per chunk: enough that sending costs little, few enough that the first chunks go out while
#: the walk goes on and that no process idles long at the end while another finishes a chunk
CHUNK_FILES = 48
#: chunks each worker holds at once: the one it analyses and the next, so it never waits for this process
HELD = 2


def analyse_in_workers(work: Iterable[Work], groups: Sequence[RunGroup], workers: int, with_deps: bool,
                       analyse_here: Callable[[int, Candidate],
                                              tuple[FileResult, Dependencies | None, tuple[str, ...] | None]]
                       ) -> Iterator[Analysed]:
    """The result of each file of ``work`` (in the order they are finished), over ``workers``
    processes. ``groups``: the run's configuration groups, growing as the walk meets them (each
    file's is there before the file is in ``work``); ``with_deps``: each result comes with what it
    depends on (the cache); ``analyse_here``: a file's analysis in this process."""
    # forked, a worker starts with this process's first group (house rules read); spawned (Windows),
    # it imports mtplint again and builds it from its settings
    fork = _can_fork()
    first = groups[0] if fork else (groups[0].settings, groups[0].codes)
    context = multiprocessing.get_context("fork" if fork else "spawn")
    pool = ProcessPoolExecutor(workers - 1, context, initializer=_start_worker, initargs=(first, with_deps))
    pending: dict[Future[list[Done]], list[Work]] = {}
    broken = False

    def finished(block: bool) -> Iterator[Analysed]:
        nonlocal broken
        done = wait(pending, timeout=None if block else 0, return_when=FIRST_COMPLETED).done if pending else ()
        for future in done:
            chunk = pending.pop(future)
            try:
                answers = future.result()
            except Exception as error:  # analysed here, where a failure is reported as a one-process run does
                broken = broken or isinstance(error, BrokenProcessPool)
                yield from here(chunk)
                continue
            for (index, candidate), (data, deps, requested) in zip(chunk, answers, strict=True):
                yield index, candidate, load_result(data, groups[candidate.group]), deps, requested

    def here(chunk: list[Work]) -> Iterator[Analysed]:
        for index, candidate in chunk:
            yield index, candidate, *analyse_here(index, candidate)

    items = iter(work)
    try:
        while chunk := list(islice(items, CHUNK_FILES)):
            yield from finished(block=False)
            if broken or len(pending) >= HELD * (workers - 1):
                yield from here(chunk)
                continue
            numbers = {candidate.group for _, candidate in chunk} - {0}
            sent: list[SentFile] = [(os.fspath(candidate.path), candidate.kind, candidate.explicit, candidate.group)
                                    for _, candidate in chunk]
            try:
                pending[pool.submit(_run_chunk, sent, {number: (groups[number].settings, groups[number].codes)
                                                       for number in numbers})] = chunk
            except BrokenProcessPool:
                broken = True
                yield from here(chunk)
        while pending:
            yield from finished(block=True)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _can_fork() -> bool:
    return hasattr(os, "fork")


# -- in a worker ------------------------------------------------------------------------------------

class _WorkerState:
    """What a worker process keeps from one chunk to the next: the run's groups (each with its
    configuration's GPU and model catalogs), its loader, and whether the run has a cache."""

    def __init__(self, first: RunGroup, with_deps: bool) -> None:
        self.groups = {0: first}
        self.with_deps = with_deps
        self.loader = RecordingLoader(first.settings.pipeline.root)


_worker: _WorkerState | None = None


def _start_worker(first: RunGroup | tuple[LintSettings, tuple[str, ...]], with_deps: bool) -> None:
    """A worker's first task, while this process starts the walk: the run's first configuration
    (forked: this process's, house rules included; spawned: built from its settings) and the code
    analysing files needs."""
    global _worker
    group = first if isinstance(first, RunGroup) else RunGroup(*first)
    _worker = _WorkerState(group, with_deps)
    load_analysis(group.rules)


def _run_chunk(chunk: list[SentFile], new_groups: dict[int, tuple[LintSettings, tuple[str, ...]]]) -> list[Done]:
    return _worker_chunk(chunk, new_groups)  # looked up in the worker: the module's as the worker sees it


def _worker_chunk(chunk: list[SentFile], new_groups: dict[int, tuple[LintSettings, tuple[str, ...]]]) -> list[Done]:
    """Each file of ``chunk`` analysed. ``new_groups``: the configurations of its files other than
    the first (the walk meets them as it goes, after the workers started), each built once."""
    state = _worker
    if state is None:
        raise RuntimeError("the worker did not start")  # its chunk is analysed in the parent
    for number, (settings, codes) in new_groups.items():
        if number not in state.groups:
            state.groups[number] = RunGroup(settings, codes)
    loader = state.loader
    done: list[Done] = []
    for path, kind, explicit, number in chunk:
        group = state.groups[number]
        candidate = Candidate(Path(path), kind, explicit, number)
        result, deps, requested = analysed_with_dependencies(candidate, loader, group, with_deps=state.with_deps)
        done.append((dump_result(result), deps, requested))
    # what the loader holds of the chunk's files and folders: a worker's memory must not grow with
    # the tree either (a chunk's files are neighbours, the next chunk's seldom share them)
    loader.forget_files()
    for group in state.groups.values():
        group.forget_digests()
    return done


# -- a result between processes ---------------------------------------------------------------------

class _ResultPickler(pickle.Pickler):
    """A result's rules by code (this process has them), a Python edit by its recipe (worked out
    with libcst only by whoever needs its text)."""

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, Rule):
            return ("rule", obj.code)
        return ("python", obj.recipe()) if isinstance(obj, Edit) and hasattr(obj, "recipe") else None


def dump_result(result: FileResult) -> bytes:
    out = io.BytesIO()
    _ResultPickler(out, pickle.HIGHEST_PROTOCOL).dump(result)
    return out.getvalue()


def load_result(data: bytes, group: RunGroup) -> FileResult:
    def persistent_load(pid: tuple[str, Any]) -> Any:
        if pid[0] == "rule":
            return group.catalog[pid[1]]
        from mtplint.edits.pyedit import PythonEdit

        return PythonEdit.from_recipe(pid[1])

    unpickler = pickle.Unpickler(io.BytesIO(data))
    unpickler.persistent_load = persistent_load  # type: ignore[method-assign]
    result: FileResult = unpickler.load()
    return result

