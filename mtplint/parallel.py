"""``--jobs N``: work shared out between N - 1 worker processes and this one (:func:`shared_out`).

Chunks of consecutive files (they share a directory's ``.env``, pins and scripts) go to forked
workers, which load the extractors, engines and rules first thing. While every worker has a chunk
running and one waiting, this process analyses the next few files itself (:data:`OWN_FILES`): no
more processes than asked for compete for the CPUs, and no worker waits long for its next chunk.
A chunk a worker could not analyse is analysed here, as a one-process run does: the output is the
same for any ``--jobs``. Results come back as they are finished, with their place in the walk
(:func:`mtplint.lint.assemble` orders them). The fix verification shares its batches out alike.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from itertools import islice

from mtplint.analysed import analysed_with_dependencies
from mtplint.analysis import FileResult, RecordingLoader, RunGroup, load_analysis, quiet_result
from mtplint.discover import Candidate
from mtplint.result_pickle import dump_result, load_result

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from concurrent.futures import Executor
    from typing import TypeVar

    from mtplint.cache import Dependencies
    from mtplint.config import LintSettings

    Work = tuple[int, Candidate]
    #: a file of a chunk as sent to a worker: its path, kind, whether it was named, configuration group
    SentFile = tuple[str, str, bool, int]
    #: a file's result as a worker sends it back (pickled, or its count of files skipped when the run
    #: keeps nothing of it), with its cache dependencies and the files it read
    #: (:func:`mtplint.analysed.analysed_with_dependencies`)
    Done = tuple[bytes | int, Dependencies | None, tuple[str, ...] | None]
    Analysed = tuple[int, Candidate, FileResult, Dependencies | None, tuple[str, ...] | None]
    Kept = Callable[[FileResult], FileResult | None]
    Item = TypeVar("Item")
    Answer = TypeVar("Answer")
    Out = TypeVar("Out")

#: files per chunk: enough that sending costs little, few enough that the first chunks go out while
#: the walk goes on and that no process idles long at the end while another finishes a chunk
CHUNK_FILES = 48
#: chunks each worker holds at once: the one it analyses and the next, so it never waits for this process
HELD = 2
#: files this process analyses between two looks at the workers' chunks. A chunk costs a worker from
#: little (files the prefilter skips) to much more (48 compose files; the benchmark's mixed 10k tree):
#: this process analysing a whole chunk of its own left workers idle for a noticeable part of the run
OWN_FILES = 8


def analyse_in_workers(work: Iterable[Work], groups: Sequence[RunGroup], workers: int, with_deps: bool,
                       analyse_here: Callable[[int, Candidate],
                                              tuple[FileResult, Dependencies | None, tuple[str, ...] | None]],
                       kept: Kept) -> Iterator[Analysed]:
    """The result of each file of ``work`` (as they are finished), over ``workers`` processes.
    ``groups``: the run's configuration groups, growing as the walk meets them (each file's is there
    before the file is in ``work``); ``with_deps``: results come with what they depend on (the cache);
    ``analyse_here``: a file's analysis in this process; ``kept``: what this process keeps of a result
    (:func:`mtplint.lint.needed_by_the_assembly`), all a worker sends unless the cache or a fix's
    verification takes it whole."""
    # forked, a worker starts with this process's first group (house rules read); spawned (Windows),
    # it imports mtplint again and builds it from its settings
    fork = _can_fork()
    first = groups[0] if fork else (groups[0].settings, groups[0].codes)
    context = multiprocessing.get_context("fork" if fork else "spawn")
    pool = ProcessPoolExecutor(workers - 1, context, initializer=_start_worker, initargs=(first, with_deps, kept))

    def submit(chunk: list[Work]) -> Future[list[Done]]:
        numbers = {candidate.group for _, candidate in chunk} - {0}
        sent: list[SentFile] = [(candidate.path, candidate.kind, candidate.explicit, candidate.group)
                                for _, candidate in chunk]
        return pool.submit(_run_chunk, sent, {number: (groups[number].settings, groups[number].codes)
                                              for number in numbers})

    def here(chunk: list[Work]) -> Iterator[Analysed]:
        for index, candidate in chunk:
            yield index, candidate, *analyse_here(index, candidate)

    def answered(chunk: list[Work], answers: list[Done]) -> Iterator[Analysed]:
        for (index, candidate), (data, deps, requested) in zip(chunk, answers, strict=True):
            result = load_result(data, groups[candidate.group]) if isinstance(data, bytes) else quiet_result(data)
            yield index, candidate, result, deps, requested

    yield from shared_out(pool, work, submit, here, answered, CHUNK_FILES, OWN_FILES, HELD * (workers - 1))


def shared_out(pool: Executor, items: Iterable[Item], submit: Callable[[list[Item]], Future[Answer]],
               here: Callable[[list[Item]], Iterable[Out]], answered: Callable[[list[Item], Answer], Iterable[Out]],
               chunk_items: int, own_items: int, held: int) -> Iterator[Out]:
    """The outputs of ``items`` (as they are finished), done by ``pool``'s workers and this process:
    chunks of ``chunk_items`` are ``submit``-ted while the workers hold fewer than ``held``, else
    this process does the next ``own_items`` (``here``) and looks again. A worker's answer becomes
    outputs by ``answered``; a chunk whose task raised or whose worker died is done ``here``, and
    once the pool is broken every item is. The pool is shut down at the end."""
    pending: dict[Future[Answer], list[Item]] = {}
    broken = False

    def finished(block: bool) -> Iterator[Out]:
        nonlocal broken
        done = wait(pending, return_when=FIRST_COMPLETED).done if block else [f for f in pending if f.done()]
        for future in done:
            chunk = pending.pop(future)
            try:
                answer = future.result()
            except Exception as error:  # done here, where a failure is reported as a one-process run does
                broken = broken or isinstance(error, BrokenProcessPool)
                yield from here(chunk)
                continue
            yield from answered(chunk, answer)

    remaining = iter(items)
    try:
        while True:
            yield from finished(block=False)
            if broken or len(pending) >= held:
                own = list(islice(remaining, own_items))
                if not own:
                    break
                yield from here(own)
                continue
            chunk = list(islice(remaining, chunk_items))
            if not chunk:
                break
            try:
                pending[submit(chunk)] = chunk
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
    """What a worker keeps from one chunk to the next: the run's groups (each with its configuration's
    GPU and model catalogs), its loader, whether the run has a cache, and what it keeps of a result."""

    def __init__(self, first: RunGroup, with_deps: bool, kept: Kept) -> None:
        self.groups = {0: first}
        self.with_deps = with_deps
        self.kept = kept
        self.loader = RecordingLoader(first.settings.pipeline.root)


_worker: _WorkerState | None = None


def _start_worker(first: RunGroup | tuple[LintSettings, tuple[str, ...]], with_deps: bool, kept: Kept) -> None:
    """A worker's first task, while this process starts the walk: the run's first configuration (forked:
    this process's, house rules included; spawned: built from its settings) and the analysis code."""
    global _worker
    group = first if isinstance(first, RunGroup) else RunGroup(*first)
    _worker = _WorkerState(group, with_deps, kept)
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
        candidate = Candidate(path, kind, explicit, number)
        result, deps, requested = analysed_with_dependencies(candidate, loader, group, with_deps=state.with_deps)
        # whole for the cache or a fix's verification, else what the run keeps of it; of most files
        # of a tree (skipped by the prefilter, launches that say nothing) nothing but the count skipped
        kept = result if deps is not None or requested is not None else state.kept(result)
        done.append((result.skipped if kept is None else dump_result(kept), deps, requested))
    # what the loader holds of the chunk's files and folders: a worker's memory must not grow with
    # the tree either (a chunk's files are neighbours, the next chunk's seldom share them)
    loader.forget_files()
    for group in state.groups.values():
        group.forget_digests()
    return done
