"""``mtplint check`` file by file: in worker processes (``--jobs``) and through the on-disk cache.

The plain run (:func:`mtplint.lint.lint`) reads every file, then models every launch, then runs
the rules. Here the unit of work is one discovered file: its extraction, the modelling of the
launches found in it, and the rules on them, reduced to a JSON *record* (findings, diagnostics,
internal errors, what :func:`mtplint.pipeline._unique` and the suppressions need to know of each
launch, and the lines the report shows around each finding). Records are what workers send back
and what the cache stores. Everything that looks across files happens afterwards in the parent,
over the records in discovery order, exactly as the plain run does it:

* a script's stand-alone launch is dropped when a unit, Dockerfile or wrapper elsewhere in the run
  also started it (``_unique``),
* the same malformed file reported by several launches becomes one MTP001,
* a specific rule supersedes a general one on the same token,
* ``noqa`` comments and ``per-file-ignores`` (MTP002 "unused noqa" needs every finding of the run),
* the final order (by file, line, column, code).

So ``--jobs 1``, ``--jobs N`` and a cached run give the same output (tests/test_parallel.py,
tests/test_cache.py). A run over files of several configurations (:class:`mtplint.config.ConfigTree`)
goes this way too: each file is analysed with its configuration's settings (each with its own
cache key), and the records are assembled as one run (tests/test_config_hierarchy.py).
"""

from __future__ import annotations

import codecs
import os
import pickle
import select
import stat
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import suppress
from pathlib import Path
from time import monotonic

from mtplint.boundary import guarded_rule, guarded_rules
from mtplint.checks.suppress import launch_end_line, may_hold_noqa
from mtplint.discover import Candidate, discover_as_walked, relevant
from mtplint.extract import MAX_FILE_BYTES, FileLoader
from mtplint.lint import META_RULES, PARALLEL_THRESHOLD
from mtplint.pipeline import Result, extract_file, model_launch, modelling_failed
from mtplint.source import Diagnostic, Issues, SourceFile, Span, frame_lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from typing import Any

    from mtplint.cache import Cache, Probe
    from mtplint.checks import Edit, Finding
    from mtplint.checks.catalog import Rule
    from mtplint.config import ConfigTree, LintSettings
    from mtplint.extract.launch import Launch
    from mtplint.lint import LintResult
    from mtplint.progress import Progress

    Record = dict[str, Any]
    Deps = dict[str, dict[str, str]]
    #: a file of a chunk sent to a worker: its index in the run, path, kind, whether it was named, group
    SentCandidate = tuple[int, str, str, bool, int]


def cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def default_jobs(files: int) -> int:
    """One process for a few files (a pre-commit hook, an editor), one per CPU for a tree -- as ruff."""
    return 1 if files < PARALLEL_THRESHOLD else cpu_count()


# -- (de)serialising the pieces of a record --------------------------------------------------------

def span_json(span: Span | None) -> list[Any] | None:
    if span is None:
        return None
    return [span.file, span.start, span.end, span.line, span.column, span.end_line, span.end_column]


def span_from(data: list[Any] | None) -> Span | None:
    return None if data is None else Span(*data)


def _edit_json(edit: Edit) -> list[Any]:
    recipe = getattr(edit, "recipe", None)
    if recipe is not None:
        # a Python edit stays what to do: working it out (libcst) is left to whoever needs its text
        return ["python", recipe()]
    return [span_json(edit.span), edit.content]


def _edit_from(data: list[Any], edit: type[Edit]) -> Edit:
    if data[0] == "python":
        from mtplint.edits.pyedit import PythonEdit

        return PythonEdit.from_recipe(data[1])
    return edit(Span(*data[0]), data[1])


def finding_json(finding: Finding) -> dict[str, Any]:
    fix = finding.fix
    return {
        "code": finding.rule.code,
        "message": finding.message,
        "span": span_json(finding.span),
        "fix": None if fix is None else [fix.applicability, fix.message, [_edit_json(edit) for edit in fix.edits]],
        "launch": span_json(finding.launch_span),
        "severity": finding.severity_override,
    }


def finding_from(data: dict[str, Any], catalog: dict[str, Rule]) -> Finding:
    from mtplint.checks import Edit, Finding, Fix

    fix = data["fix"]
    return Finding(
        catalog[data["code"]],
        data["message"],
        Span(*data["span"]),
        None if fix is None else Fix(fix[0], fix[1], [_edit_from(edit, Edit) for edit in fix[2]]),
        span_from(data["launch"]),
        severity_override=data["severity"],
    )


def launch_findings(item: Record, catalog: dict[str, Rule]) -> list[Finding]:
    """A launch record's findings (its rules', then MTP003's) as objects: once converted, as they are."""
    found: list[Finding] | None = item.get("found")
    if found is None:
        found = [finding_from(data, catalog) for key in ("findings", "unresolved") for data in item[key]]
    return found


def _diagnostics_json(items: list[Diagnostic]) -> list[list[Any]]:
    return [[item.code, item.message, span_json(item.span)] for item in items]


def shown_lines(spans: Iterable[Span], loader: FileLoader, launch_source: SourceFile | None = None) -> dict[str, Any]:
    """The lines the report shows around each finding or diagnostic (its line and one either side),
    by file, with the file's line count (:class:`mtplint.source.ShownLines`): the texts the run read
    stay in the process that read them, and the report does not read a thousand files again for
    three lines each."""
    shown: dict[str, Any] = {}
    split: dict[str, list[str]] = {}
    for span in spans:
        lines = split.get(span.file)
        if lines is None:
            source = (launch_source if launch_source is not None and span.file == launch_source.display
                      else loader.by_display(span.file))
            if source is None:
                continue  # not read by this run (the report reads it)
            lines = split[span.file] = source.split_lines
        count, around = shown.setdefault(span.file, [len(lines), {}])
        for number in frame_lines(span.line, count):
            around[str(number)] = lines[number - 1]  # str: the record may be stored as JSON
    return shown


# -- the work on one file (in a worker or in-process) ----------------------------------------------

class RecordingLoader(FileLoader):
    """A :class:`FileLoader` that notes every file a unit of work asked for (found or not)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.requested: dict[str, SourceFile | None] = {}

    def load(self, path: Path) -> SourceFile | None:
        source = super().load(path)
        self.requested[os.path.abspath(path)] = source
        return source


def _run_loader(root: Path, with_deps: bool) -> FileLoader:
    """The loader a run's units read through: one that notes what they read only for the cache."""
    return RecordingLoader(root) if with_deps else FileLoader(root)


def analyse(candidate: Candidate, loader: FileLoader, group: _Group, with_deps: bool, *,
            as_objects: bool = False) -> tuple[Record, Deps | None]:
    """Extract, model and check one discovered file under its configuration ``group``; the record of
    it and, for the cache (with a :class:`RecordingLoader`), the files and directories its result
    depends on.

    ``as_objects``: each launch's findings as :class:`Finding` objects (``found``), not as JSON: for
    a record that stays in this process and is not stored."""
    if isinstance(loader, RecordingLoader):
        loader.requested = {}
    scratch = Result(loader=loader)
    issues = Issues()
    launches = extract_file(candidate, loader, issues, scratch)
    if launches or issues.items or scratch.internal_errors:
        record: Record = {"skipped": scratch.files_skipped, "diagnostics": _diagnostics_json(issues.items),
                          "errors": list(scratch.internal_errors),
                          "launches": _launch_records(candidate, launches, loader, group, as_objects),
                          "shown": shown_lines([item.span for item in issues.items], loader)}
    else:
        record = _quiet_record(scratch.files_skipped)
    deps = (_deps(candidate, loader, group) if with_deps and isinstance(loader, RecordingLoader) else None)
    return record, deps


#: the record of a file that starts nothing and says nothing (most files of a tree: the prefilter
#: skips them, or they hold no launch), by its count of skipped files: shared, and never changed
_QUIET: dict[int, Record] = {}


def _quiet_record(skipped: int) -> Record:
    record = _QUIET.get(skipped)
    if record is None:
        record = _QUIET[skipped] = {"skipped": skipped, "diagnostics": [], "errors": [], "launches": [], "shown": {}}
    return record


def _launch_records(candidate: Candidate, launches: list[Launch], loader: FileLoader, group: _Group,
                    as_objects: bool) -> list[Record]:
    """Each launch of a file modelled and checked, as the records :func:`assemble` reads."""
    records: list[Record] = []
    if not launches:
        return records
    settings = group.settings
    # realpath, not resolve() (pipeline._extracted): the same answer, but no RuntimeError on a
    # symlink loop; asked of the loader, which has resolved these directories already
    candidate_path = loader.real_path(candidate.path)
    checked: list[tuple[Record, Launch, list[Finding], list[Finding]]] = []
    for launch in launches:
        span = launch.span
        item: Record = {
            "key": [launch.source.display, span.start if span else -1],
            "context": launch.context,
            "via_other": loader.real_path(launch.source.path) != candidate_path,
            "path": str(launch.source.path),
            "display": launch.source.display,
            # a launch read from text no file holds as such (rare): keep the text for the noqa scan
            "text": None if loader.peek(launch.source.path) is launch.source else launch.source.text,
            # whether the parent must read the file again for its noqa comments
            "noqa": may_hold_noqa(launch.source.text),
            "span_key": [span.file, span.start] if span else None,
            "end": None, "findings": [], "unresolved": [], "diagnostics": [], "errors": [],
            # the rules that needed the GPU and did not check this launch (the summary counts them)
            "without_gpu": [],
        }
        records.append(item)
        launch_issues = Issues()
        findings: list[Finding] = []
        unresolved: list[Finding] = []
        try:
            report = model_launch(launch, loader, launch_issues, settings.pipeline)
        except Exception as error:  # one bad launch must not stop the run (as pipeline.run)
            modelling_failed(launch, error, launch_issues)
        else:
            if item["noqa"]:  # the last line matters only to a noqa comment after it
                item["end"] = launch_end_line(report)
            report.objective = settings.objective
            findings = guarded_rules(group.checked, report)
            if group.unresolved_rule:
                from mtplint.checks.mtp003 import rules_without_gpu, unresolved_findings

                unresolved_rule = group.catalog["MTP003"]
                unresolved = guarded_rule(unresolved_rule, report, unresolved_findings, unresolved_rule, report,
                                          group.rules)
                item["without_gpu"] = rules_without_gpu(group.catalog["MTP003"], report, group.rules)
            checked.append((item, launch, findings, unresolved))
        item["diagnostics"] = _diagnostics_json(launch_issues.items)
        item["shown"] = shown_lines([diagnostic.span for diagnostic in launch_issues.items]
                                    + [finding.span for finding in (*findings, *unresolved)], loader, launch.source)
    if any(launch.paths is not None for _, launch, _, _ in checked):
        from mtplint.checks.paths import name_path_conditions

        name_path_conditions([(launch, [*findings, *unresolved]) for _, launch, findings, unresolved in checked])
    for item, _, findings, unresolved in checked:
        if as_objects:
            item["found"] = findings + unresolved
        else:
            item["findings"] = [finding_json(finding) for finding in findings]
            item["unresolved"] = [finding_json(finding) for finding in unresolved]
    return records


def _deps(candidate: Candidate, loader: RecordingLoader, group: _Group) -> Deps:
    from mtplint.cache import Probe, cache_dir

    root = group.settings.pipeline.root
    if group.probe is None:
        # one for the run: each directory's listing is hashed once, not again for every file in it
        group.probe = group.cache.probe if group.cache is not None else Probe(cache_dir(root))
    probe = group.probe
    files: dict[str, str] = {}
    directories: set[str] = set()
    for path, source in loader.requested.items():
        # the digest of the bytes read, or (a binary file, a folder, nothing there) what the probe sees
        files[path] = source.digest if source is not None and source.digest else probe.file(path)
        directories.add(os.path.dirname(path))
    # files found by listing a directory (compose override files, version pins up to the root,
    # systemd drop-ins) appear or disappear without being asked for by name
    directories.update(_up_to_root(os.path.dirname(os.path.abspath(candidate.path)), group))
    return {"files": files, "dirs": {path: probe.directory(path) for path in sorted(directories)}}


def _up_to_root(folder: str, group: _Group) -> tuple[str, ...]:
    """``folder`` and the folders above it up to the run's root (only ``folder`` when it is outside
    the root), worked out once per folder in a run: the files of one folder share them."""
    chain = group.folders_up.get(folder)
    if chain is None:
        if group.top is None:
            group.top = group.settings.pipeline.root.resolve()
        top = group.top
        directory = Path(folder)
        found: list[str] = []
        while True:
            found.append(str(directory))
            if directory == top or directory.parent == directory or top not in directory.parents:
                break
            directory = directory.parent
        chain = group.folders_up[folder] = tuple(found)
    return chain


# -- worker processes ----------------------------------------------------------------------------

_WORKER: dict[str, Any] = {}

#: files per unit of work sent to a worker: enough that sending costs little, few enough that the
#: first units go out while the walk goes on and that no worker idles long at the end while
#: another finishes a heavy unit; consecutive files keep a directory together (they share .env,
#: pins, scripts)
CHUNK_FILES = 48


class _Group:
    """One configuration's part of a run: its settings, rule catalog, selected rules and cache."""

    def __init__(self, settings: LintSettings, rule_codes: Sequence[str] | None = None) -> None:
        from mtplint.checks.catalog import load_catalog
        from mtplint.checks.selection import selected_rules

        self.settings = settings
        self.catalog = load_catalog(settings.extend_rules)
        self.rules = (selected_rules(self.catalog, settings.select, settings.extend_select, settings.ignore)
                      if rule_codes is None else [self.catalog[code] for code in rule_codes])
        #: the rules that check a launch, in one call per launch as the plain run does (not per rule)
        self.checked = [rule for rule in self.rules if rule.code not in META_RULES]
        #: MTP003 (what could not be checked) is selected
        self.unresolved_rule = any(rule.code == "MTP003" for rule in self.rules)
        self.cache: Cache | None = None
        #: the hashes of dependencies this run has computed, the folders above each folder linted and
        #: the resolved root (:func:`_deps`)
        self.probe: Probe | None = None
        self.folders_up: dict[str, tuple[str, ...]] = {}
        self.top: Path | None = None

    def for_worker(self) -> tuple[LintSettings, list[str]]:
        return self.settings, [rule.code for rule in self.rules]


def _worker_main(connection: Connection | _Channel, with_deps: bool, first_group: _Group | tuple[LintSettings, list[str]]) -> None:
    """A worker process: it lints the chunks this connection brings until it brings None (or closes),
    and answers each with its records, or with None when linting it failed (the parent then lints
    that chunk itself, so the failure is reported as a one-process run reports it)."""
    _WORKER.update(groups={}, with_deps=with_deps, loader=None)
    try:
        # a failure here fails every chunk too: each comes back unlinted, and the parent lints it
        # itself (and reports the failure as a one-process run does)
        with suppress(Exception):
            _worker_warm_up(first_group)
        while (message := connection.recv()) is not None:
            try:
                done: list[tuple[int, Record, Deps | None]] | None = _worker_chunk(*message)
            except Exception:
                done = None
            connection.send(done)
    except (EOFError, OSError, KeyboardInterrupt):
        pass  # the parent is gone or interrupted: it reports what there is to report


def _worker_chunk(chunk: list[SentCandidate],
                  new_groups: dict[int, tuple[LintSettings, list[str]]]) -> list[tuple[int, Record, Deps | None]]:
    """``chunk``: the files, as :meth:`_Worker.give` sends them. ``new_groups``: the configurations of
    the chunk's files (and the first one), by group: the walk finds configurations as it goes, after
    the workers started, and any worker may get any chunk. A worker builds each group the first time
    it meets it."""
    w = _WORKER
    groups: dict[int, _Group] = w["groups"]
    for number, (settings, codes) in new_groups.items():
        if number not in groups:
            groups[number] = _Group(settings, codes)
    if w["loader"] is None:
        w["loader"] = _run_loader(groups[0].settings.pipeline.root, w["with_deps"])
    done = []
    for index, path, kind, explicit, number in chunk:
        group = groups[number]
        done.append((index, *analyse(Candidate(Path(path), kind, explicit, number), w["loader"], group,
                                     w["with_deps"])))
    return done


def _worker_warm_up(first_group: _Group | tuple[LintSettings, list[str]]) -> None:
    """A worker's first task, done while the parent starts the walk (which has no files for it
    yet): the run's first configuration group -- a forked worker has the parent's (its catalog,
    house rules included, already read), a spawned one builds it from its settings -- and what
    analysing files needs."""
    group = first_group if isinstance(first_group, _Group) else _Group(*first_group)
    _WORKER["groups"][0] = group
    _load_analysis(group.rules)


def _load_analysis(rules: Sequence[Rule]) -> None:
    """Import what analysing files needs: the extractors, the engines, the predicates of ``rules``."""
    from mtplint.checks import predicate_for
    from mtplint.engines import engine_for
    from mtplint.extract.launch import ENGINES
    from mtplint.pipeline import EXTRACTORS, extractor_for

    for kind in EXTRACTORS:
        extractor_for(kind)
    for name in ENGINES:
        engine_for(name)
    for rule in rules:
        if rule.code not in META_RULES:  # reported by the run itself, not by a check of their own
            predicate_for(rule)


def _can_fork() -> bool:
    return hasattr(os, "fork")


class _Channel:
    """A forked worker's end of its conversation with this process, or this process's end of it:
    pickled messages, each after its length, over two pipes (one each way).

    What :mod:`multiprocessing.connection` does over a pipe, without importing :mod:`multiprocessing`
    (~20 ms, before the first file of a run can be handed out): a forked worker needs no more."""

    def __init__(self, reading: int, writing: int) -> None:
        self._reading = reading
        self._writing = writing

    def fileno(self) -> int:
        return self._reading

    def send(self, message: Any) -> None:
        data = pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
        view = memoryview(len(data).to_bytes(8, "big") + data)
        while view:
            view = view[os.write(self._writing, view):]

    def recv_bytes(self) -> bytes:
        size = int.from_bytes(self._read(8), "big")
        return self._read(size)

    def recv(self) -> Any:
        return pickle.loads(self.recv_bytes())

    def _read(self, size: int) -> bytes:
        parts = []
        while size:
            part = os.read(self._reading, min(size, 1 << 20))
            if not part:
                raise EOFError("the other end closed its pipe")
            parts.append(part)
            size -= len(part)
        return b"".join(parts)

    def close(self) -> None:
        for descriptor in (self._reading, self._writing):
            with suppress(OSError):
                os.close(descriptor)


def _fork(work: Callable[[_Channel], None], inherited: Sequence[_Channel] = ()) -> tuple[_Channel, int]:
    """A process forked from this one, which starts with everything it imported and loaded (for a
    worker: the rules, the flag tables), does ``work`` over its channel to this process and exits;
    this process's channel to it, and its process id. ``inherited``: channels of this process to
    processes forked before it, closed in it."""
    to_child, from_here = os.pipe()
    to_here, from_child = os.pipe()
    for stream in (sys.stdout, sys.stderr):  # what is buffered is written once, by this process
        with suppress(Exception):
            stream.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child (coverage does not follow a fork)
        code = 0
        try:
            os.close(from_here)
            os.close(to_here)
            for channel in inherited:
                channel.close()
            work(_Channel(to_child, from_child))
        except BaseException:
            code = 1
        finally:
            # not the interpreter's exit: this process's atexit handlers and open files are the parent's
            os._exit(code)
    os.close(to_child)
    os.close(from_child)
    return _Channel(to_here, from_here), pid


# -- the run ---------------------------------------------------------------------------------------

class _Units:
    """The files of a run as discovery hands them over: each one's record from the cache, or its
    place in the work still to do."""

    def __init__(self, settings: LintSettings, use_cache: bool, progress: Progress | None = None) -> None:
        self.settings = settings
        self.use_cache = use_cache
        self.progress = progress
        self.candidates: list[Candidate] = []
        self.records: list[Record | None] = []
        self.keys: dict[int, str] = {}
        self.groups: list[_Group] = [_Group(settings.without_configs())]
        #: whether a file of a configuration other than the first one has been taken
        self.grouped = False
        self.display = FileLoader(settings.pipeline.root).display

    def group(self, number: int) -> _Group:
        """A configuration group's settings, rules and cache, read the first time a file needs them."""
        tree = self.settings.configs
        while len(self.groups) <= number and tree is not None:
            self.groups.append(_Group(tree.groups[len(self.groups)].without_configs()))
        return self.groups[number]

    def add(self, candidate: Candidate) -> tuple[int, Candidate] | None:
        """Take a discovered file: None when the cache holds its record, else the work to do."""
        index = len(self.candidates)
        self.candidates.append(candidate)
        self.grouped = self.grouped or candidate.group != 0
        self.records.append(None)
        group = self.group(candidate.group)
        if self.use_cache and group.cache is None:
            group.cache = _open_cache(group.settings, group.rules, group.catalog)
        if group.cache is not None:
            key = _cache_key(group.cache, candidate, self.display)
            if key is not None:
                self.keys[index] = key
                self.records[index] = group.cache.get(key)
        record = self.records[index]
        if record is None:
            return index, candidate
        if self.progress is not None:
            self.progress.add_done(sum(len(item["findings"]) + len(item["unresolved"])
                                       for item in record["launches"]))
        return None

    def take(self, done: list[tuple[int, Record, Deps | None]]) -> None:
        for index, record, deps in done:
            self.records[index] = record
            group = self.groups[self.candidates[index].group]
            if group.cache is not None and deps is not None and index in self.keys:
                group.cache.put(self.keys[index], record, deps)
            # the findings as objects now (the record as stored stays JSON): with workers, while
            # they still analyse the files after these, rather than all once the last file is in
            for item in record["launches"]:
                item["found"] = launch_findings(item, group.catalog)
            if self.progress is not None:
                self.progress.add_done(sum(len(item["found"]) for item in record["launches"]))


def _walk_counted(found: Iterator[Candidate], progress: Progress) -> Iterator[Candidate]:
    for candidate in found:
        progress.add_found()
        yield candidate
    progress.walk_over()


def lint_units(paths: list[Path], settings: LintSettings, *, jobs: int | None, use_cache: bool,
               candidates: list[Candidate] | None = None, loader: FileLoader | None = None,
               progress: Progress | None = None) -> LintResult:
    """``candidates``: the files, already discovered (default: discovered here, under the run's
    configurations, and linted by the workers while the walk goes on). When they come from several
    configurations (``settings.configs``, candidates of a group other than 0), each file is analysed
    with its own configuration's settings and the records assembled as one run. ``loader``: one
    seeded with texts that stand for files (a fix re-linted in memory; in-process, no cache)."""
    options = settings.pipeline
    tree = settings.configs
    found: Iterator[Candidate] = (iter(candidates) if candidates is not None else
                                  discover_as_walked(paths, options.root, options.excludes, options.respect_gitignore,
                                                     tree))
    if progress is not None:
        found = _walk_counted(found, progress)
    units = _Units(settings, use_cache, progress)
    work: list[tuple[int, Candidate]] = []
    wanted = 1 if loader is not None else None if jobs is None else max(1, jobs)
    with_deps = use_cache and loader is None
    if wanted is not None and wanted > 1 and candidates is None and all(path.is_dir() for path in paths):
        # directories to walk with the workers asked for: they start, and load what linting needs,
        # while the parent begins the walk, on CPUs that would otherwise wait for its first files
        workers = wanted
    else:
        # files are taken until the number of workers is decided: the run's worth of them when few
        # (as ruff, one process for a pre-commit hook's handful), else as many workers as asked for
        enough = PARALLEL_THRESHOLD if wanted is None else wanted
        for candidate in found:
            item = units.add(candidate)
            if item is not None:
                work.append(item)
                if len(work) >= enough and wanted != 1:
                    break
        else:
            found = iter(())
        workers = default_jobs(len(work)) if wanted is None else min(wanted, max(1, len(work)))
    if workers == 1:
        work.extend(item for item in map(units.add, found) if item is not None)
        _analyse_here(work, units, loader, with_deps)
    else:
        _analyse_in_workers(work, found, units, workers, with_deps)
    candidates = units.candidates
    grouped = tree is not None and units.grouped
    if grouped and tree is not None:
        units.group(len(tree.groups) - 1)  # every configuration the run read, as the report lists their rules
    kept = [(record, candidate) for record, candidate in zip(units.records, candidates, strict=True)
            if record is not None]
    return assemble([record for record, _ in kept], units.groups, [candidate.group for _, candidate in kept],
                    tree if grouped else None, loader,
                    {units.display(candidate.path): candidate.group for _, candidate in kept} if grouped else None)


def _analyse_here(work: Iterable[tuple[int, Candidate]], units: _Units, loader: FileLoader | None,
                  with_deps: bool) -> None:
    run_loader = loader if loader is not None else _run_loader(units.settings.pipeline.root, with_deps)
    for index, candidate in work:
        group = units.groups[candidate.group]
        # the findings stay objects when the record is not stored; taken file by file, so that
        # with workers nothing of this process's share is left to do once the last file is linted
        units.take([(index, *analyse(candidate, run_loader, group, with_deps, as_objects=not with_deps))])


class _Worker:
    """A worker process, the connection to it, and the chunks sent to it whose records have not come
    back (the first one it is linting, the next one waiting in the connection).

    Forked where the system can (:func:`_fork`); elsewhere (Windows) a :mod:`multiprocessing`
    process spawned, which imports mtplint again and is sent its settings."""

    def __init__(self, with_deps: bool, first_group: _Group, others: Sequence[_Worker]) -> None:
        self.connection: Any
        self._pid: int | None = None
        self._process: Any = None
        if _can_fork():
            self.connection, self._pid = _fork(lambda channel: _worker_main(channel, with_deps, first_group),
                                               [other.connection for other in others])
        else:
            import multiprocessing

            context = multiprocessing.get_context("spawn")
            self.connection, theirs = context.Pipe()
            self._process = context.Process(target=_worker_main, args=(theirs, with_deps, first_group.for_worker()),
                                            daemon=True)
            self._process.start()
            theirs.close()
        self.chunks: deque[list[tuple[int, Candidate]]] = deque()
        #: the configuration groups whose settings it has been sent: the walk finds configurations
        #: as it goes, after the worker started
        self.groups: set[int] = set()
        self.stopped = False

    def stop(self) -> None:
        """Tell it there is nothing more to lint: it exits."""
        if not self.stopped:
            self.stopped = True
            with suppress(OSError):  # it is gone already
                self.connection.send(None)

    def terminate(self) -> None:
        if self._process is not None:
            self._process.terminate()
        elif self._pid is not None:
            import signal

            with suppress(OSError):
                os.kill(self._pid, signal.SIGTERM)

    def join(self) -> None:
        if self._process is not None:
            self._process.join()
        elif self._pid is not None:
            with suppress(ChildProcessError):
                os.waitpid(self._pid, 0)
            self._pid = None

    def give(self, chunk: list[tuple[int, Candidate]], units: _Units) -> None:
        numbers = {candidate.group for _, candidate in chunk} | {0}
        # each file as plain values: a candidate pickled as itself calls back into Python for each
        sent: list[SentCandidate] = [(index, os.fspath(candidate.path), candidate.kind, candidate.explicit,
                                      candidate.group) for index, candidate in chunk]
        self.connection.send((sent, {number: units.groups[number].for_worker()
                                     for number in sorted(numbers - self.groups)}))
        self.groups |= numbers
        self.chunks.append(chunk)


#: chunks a worker holds at once: one it lints and the next, so it never waits for this process
#: to notice that it finished one (this process looks between two files of its own)
_HELD = 2
#: seconds between two looks at the workers while this process lints: a look is a system call and
#: some bookkeeping, and a file takes a fraction of a millisecond; a held chunk lasts far longer
_LOOK_EVERY = 0.001


class _Dispatch:
    """The files of a run no process has taken yet (``waiting``, chunks in discovery order), and the
    workers linting the others.

    Workers take chunks from the front, :data:`_HELD` at a time; this process takes files one at a
    time from the back once the walk is over, and between two files takes the records of the
    chunks workers finished and hands them the next ones. Once the walk is over, the chunks handed
    out shrink with the files left, so that at the end no process waits long for another."""

    def __init__(self, units: _Units, workers: list[_Worker]) -> None:
        self.units = units
        self.workers = {worker.connection.fileno(): worker for worker in workers}
        self.waiting: deque[list[tuple[int, Candidate]]] = deque()
        self.walked = False
        self._poll: Any = None
        if hasattr(select, "poll"):  # Windows pipes cannot be polled: multiprocessing's wait() there
            self._poll = select.poll()
            for descriptor in self.workers:
                self._poll.register(descriptor, select.POLLIN)

    def exchange(self, block: bool = False) -> None:
        """Take the records of the chunks workers have finished (``block``: wait for one), and keep
        every worker supplied."""
        answers = []
        for worker in self._answered(block):
            if not worker.chunks:  # nothing to answer: it is gone
                self._lose(worker)
                continue
            chunk = worker.chunks.popleft()
            try:
                answers.append((chunk, worker.connection.recv_bytes()))
            except (EOFError, OSError):  # the worker is gone: its chunks are linted here
                worker.chunks.appendleft(chunk)
                self._lose(worker)
        # the next chunks first, the records read afterwards: the workers are not kept waiting
        for worker in list(self.workers.values()):
            while len(worker.chunks) < _HELD and self.waiting:
                try:
                    worker.give(self._front(), self.units)
                except OSError:
                    self._lose(worker)
                    break
        for chunk, answer in answers:
            done: list[tuple[int, Record, Deps | None]] | None = pickle.loads(answer)
            if done is not None:
                self.units.take(done)
            else:  # it failed there: here, it fails as a one-process run fails
                self.waiting.append(chunk)
        if self.walked and not self.waiting:
            # nothing left to hand out: a worker done with its chunks stops now, and exits while
            # this process lints its last files (not after, with this process waiting for it)
            for worker in [worker for worker in self.workers.values() if not worker.chunks]:
                worker.stop()
                self._lose(worker)

    def _answered(self, block: bool) -> list[_Worker]:
        busy = [worker for worker in self.workers.values() if worker.chunks]
        if not busy:
            return []
        if self._poll is not None:
            return [self.workers[descriptor] for descriptor, _ in self._poll.poll(None if block else 0)]
        from multiprocessing.connection import wait

        ready = wait([worker.connection for worker in busy], None if block else 0)
        return [worker for worker in busy if worker.connection in ready]

    def _front(self) -> list[tuple[int, Candidate]]:
        first = self.waiting[0]
        if self.walked:
            left = sum(map(len, self.waiting))
            size = max(1, min(CHUNK_FILES, left // (4 * (len(self.workers) + 1))))
            if len(first) > size:
                taken = first[:size]
                del first[:size]
                return taken
        return self.waiting.popleft()

    def _lose(self, worker: _Worker) -> None:
        self.waiting.extendleft(reversed(worker.chunks))
        del self.workers[worker.connection.fileno()]
        if self._poll is not None:
            self._poll.unregister(worker.connection.fileno())

    def from_the_back(self) -> Iterator[tuple[int, Candidate]]:
        """The files this process lints once the walk is over: the last waiting one each time, until
        no chunk waits and no worker is busy."""
        self.walked = True
        next_look = 0.0
        while True:
            now = monotonic()
            if now >= next_look:
                self.exchange()
                next_look = now + _LOOK_EVERY
            if self.waiting:
                last = self.waiting[-1]
                item = last.pop()
                if not last:
                    self.waiting.pop()
                yield item
            elif any(worker.chunks for worker in self.workers.values()):
                self.exchange(block=True)
            else:
                return


def _analyse_in_workers(work: list[tuple[int, Candidate]], found: Iterator[Candidate], units: _Units,
                        workers: int, with_deps: bool) -> None:
    """The work so far and the rest of the walk, in chunks, over ``workers`` processes: this one and
    ``workers - 1`` others (:class:`_Dispatch`). The others lint chunks while this process walks,
    so no more processes than ``workers`` compete for the CPUs; the files linted here are never
    sent."""
    # each worker loads the extractors, engines and rule predicates itself, first thing: this process
    # needs them only once the walk is over, and a worker would otherwise wait for the walk's first
    # files with nothing to do
    started: list[_Worker] = []
    for _ in range(workers - 1):
        started.append(_Worker(with_deps, units.groups[0], started))
    finished = False
    try:
        dispatch = _Dispatch(units, started)
        pending = work
        for candidate in found:
            item = units.add(candidate)
            if item is not None:
                pending.append(item)
                if len(pending) >= CHUNK_FILES:
                    dispatch.waiting.append(pending)
                    pending = []
                    dispatch.exchange()
        if pending:
            dispatch.waiting.append(pending)
        _analyse_here(dispatch.from_the_back(), units, None, with_deps)
        finished = True
    finally:
        for worker in started:
            if finished:
                worker.stop()
            else:
                worker.terminate()
            worker.connection.close()
        for worker in started:
            worker.join()


def _cache_key(cache: Cache, candidate: Candidate, display: Any) -> str | None:
    try:
        status = os.stat(candidate.path)
        if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_FILE_BYTES:
            return None  # reported (or skipped) by the work itself, every time
        data = candidate.path.read_bytes()
    except OSError:
        return None
    if not data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) and not relevant(data, candidate.kind):
        # the prefilter skips it (most files of a tree): linting it again is one byte search, less
        # than reading an entry, and writing one per file made a cold run of 10k files take minutes
        return None
    return cache.key(f"{candidate.kind}\0{display(candidate.path)}\0{candidate.path}", data)


def _open_cache(settings: LintSettings, rules: Sequence[Rule], catalog: dict[str, Rule]) -> Cache:
    from mtplint import cache as caching

    options = settings.pipeline
    house = {code: [rule.to_json(), rule.when, rule.message, rule.docs]
             for code, rule in catalog.items() if rule.origin != "builtin"}
    key = caching.settings_key({
        "rules": [rule.code for rule in rules],
        "house": house,
        "root": str(options.root.resolve()),
        "cwd": os.getcwd(),
        "excludes": list(options.excludes),
        "gitignore": options.respect_gitignore,
        "engine_versions": options.engine_versions,
        "gpu": options.gpu,
        "objective": settings.objective,
        # the configuration's GPUs and models: a finding's memory figures come from them
        "gpus": list(options.catalogs.gpu_entries),
        "models": list(options.catalogs.model_entries_added),
    })
    return caching.Cache(caching.cache_dir(options.root), key)


def _unique(items: list[Record]) -> list[Record]:
    """:func:`mtplint.pipeline._unique` over launch records."""
    started = {tuple(item["key"]) for item in items if item["via_other"]}
    seen: set[tuple[Any, ...]] = set()
    unique = []
    for item in items:
        key = tuple(item["key"])
        if not item["via_other"]:
            if key not in started:
                unique.append(item)
            continue
        identity = (*key, item["context"])
        if identity not in seen:
            seen.add(identity)
            unique.append(item)
    return unique


def assemble(records: list[Record], groups: Sequence[_Group], record_groups: Sequence[int],
             configs: ConfigTree | None = None, loader: FileLoader | None = None,
             candidate_groups: dict[str, int] | None = None) -> LintResult:
    """The run's result from its files' records, in the plain run's order (see module docstring).

    ``record_groups``: each record's configuration group (index into ``groups``): its launches were
    checked with that group's rules. Under several configurations (``configs``), a finding's
    ``per-file-ignores``, and the noqa comments of a file (MTP002), follow the configuration of the
    file they sit in: a candidate's own group (``candidate_groups``, by display name), else its
    closest configuration's. ``loader``: the texts the run read (a fix re-linted in memory)."""
    from mtplint.checks import Finding, one_finding_per_mistake, unparsable_findings
    from mtplint.checks.suppress import apply_suppressions
    from mtplint.lint import LintResult, count_without_gpu
    from mtplint.pipeline import Result

    first = groups[0]
    loader = loader if loader is not None else FileLoader(first.settings.pipeline.root)
    result = Result(loader=loader, files_seen=len(records))
    diagnostics: list[tuple[list[Any], int]] = []
    launches: list[Record] = []
    launch_groups: dict[int, int] = {}
    for record, group in zip(records, record_groups, strict=True):
        result.files_skipped += record["skipped"]
        if not (record["launches"] or record["diagnostics"] or record["errors"]):
            continue  # most files of a tree (:func:`_quiet_record`)
        result.shown.add(record.get("shown", {}))
        diagnostics.extend((item, group) for item in record["diagnostics"])
        result.internal_errors.extend(record["errors"])
        for item in record["launches"]:
            launches.append(item)
            launch_groups[id(item)] = group
    unique = _unique(launches)
    for item in unique:
        diagnostics.extend((diagnostic, launch_groups[id(item)]) for diagnostic in item["diagnostics"])
        result.internal_errors.extend(item["errors"])
        result.shown.add(item.get("shown", {}))
    result.diagnostics = [Diagnostic(code, message, Span(*span)) for (code, message, span), _ in diagnostics]

    chosen = [{rule.code for rule in group.rules} for group in groups]
    findings = [finding for item in unique for finding in launch_findings(item, groups[launch_groups[id(item)]].catalog)]
    findings.extend(unparsable_findings(first.catalog["MTP001"], (
        diagnostic for diagnostic, (_, group) in zip(result.diagnostics, diagnostics, strict=True)
        if "MTP001" in chosen[group])))
    findings = one_finding_per_mistake(findings)

    sources: dict[str, SourceFile] = {}
    ends: dict[tuple[str, int], int] = {}
    # a file with no noqa anywhere (most) is not read again here: it suppresses nothing
    without_noqa = frozenset(item["display"] for item in unique if not item.get("noqa", True))
    for item in unique:
        if item["display"] not in sources and item["display"] not in without_noqa:
            text = item["text"]
            source = (SourceFile(Path(item["path"]), item["display"], text) if text is not None
                      else loader.load(Path(item["path"])))
            if source is not None:
                sources[item["display"]] = source
        if item["span_key"] is not None and item["end"] is not None:
            ends[(item["span_key"][0], item["span_key"][1])] = item["end"]
    # each configuration's per-file-ignores and MTP002 over the files it governs (without
    # ``configs``, the one configuration over all)
    known = candidate_groups or {}
    group_of: dict[str, int] = {}

    def file_group(file: str) -> int:
        if configs is None:
            return 0
        if file not in group_of:
            group_of[file] = configs.group_of_file(file, known)
        return group_of[file]

    governed = list(groups)
    if configs is not None:
        files = {finding.span.file for finding in findings} | set(sources)
        governed += [_Group(configs.groups[number].without_configs())
                     for number in range(len(groups), max(map(file_group, files), default=0) + 1)]
        chosen += [{rule.code for rule in group.rules} for group in governed[len(groups):]]
    kept, suppressed = [], []
    for number, governing in enumerate(governed):
        own = [finding for finding in findings if file_group(finding.span.file) == number]
        own_sources = {name: source for name, source in sources.items() if file_group(name) == number}
        if not own and not own_sources:
            continue  # nothing to suppress, no noqa comment to judge
        group_kept, group_suppressed = apply_suppressions(
            own, result, governing.settings.per_file_ignores, governing.catalog, chosen[number],
            launch_sources=own_sources, launch_ends=ends, without_noqa=without_noqa)
        kept.extend(group_kept)
        suppressed.extend(group_suppressed)
    kept.sort(key=Finding.sort_key)
    rules = list({rule.code: rule for group in groups for rule in group.rules}.values())
    without_gpu = count_without_gpu((item.get("without_gpu", ()) for item in unique), first.catalog)
    return LintResult(kept, suppressed, result, rules, without_gpu)
