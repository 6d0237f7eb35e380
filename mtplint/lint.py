"""``mtplint check``: each discovered file analysed (:func:`mtplint.analysis.analyse_file`: its
launches modelled and checked by the selected rules), then the results assembled into one run.

The files are analysed as the walk finds them: in this process, in worker processes as well
(``--jobs``, :mod:`mtplint.parallel`), or taken from the on-disk cache (:mod:`mtplint.cache`). What
looks across files happens in :func:`assemble`, over the results in discovery order, whichever way
each was obtained:

* a script's stand-alone launch is dropped when a unit, Dockerfile or wrapper elsewhere in the run
  also started it (:func:`mtplint.pipeline.unique_launches`),
* the same malformed file reported by several launches becomes one MTP001,
* a specific rule supersedes a general one on the same token,
* ``noqa`` comments and ``per-file-ignores`` (MTP002 "unused noqa" needs every finding of the run),
* the final order (by file, line, column, code).

So ``--jobs 1``, ``--jobs N`` and a cached run give the same output (tests/test_parallel.py,
tests/test_cache.py). Files of several configurations (:class:`mtplint.config.ConfigTree`) are each
analysed with their configuration's settings and assembled as one run
(tests/test_config_hierarchy.py). Only what the assembly reads of the files that say something is
kept until then (:func:`needed_by_the_assembly`), without their launches' models, and the texts
the run read are forgotten every so many files (:data:`FORGET_EVERY`): the files the prefilter
skips and the clean ones (most of a tree) cost nothing once walked. A large run's kept results
wait in a temporary file (:mod:`mtplint.kept`), and the assembly keeps only the findings, lines
and diagnostics of each launch it keeps; the findings of a large run go through that file too,
and are suppressed a file at a time (tests/test_memory.py).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain, groupby
from operator import itemgetter

from mtplint.analysed import AnalysedFile, analysed_with_dependencies
from mtplint.analysis import (
    META_RULES,
    FileResult,
    LaunchResult,
    RecordingLoader,
    RunGroup,
    quiet_result,
)
from mtplint.checks import Finding, one_finding_per_mistake, unparsable_findings
from mtplint.checks.catalog import Rule
from mtplint.checks.suppress import apply_suppressions
from mtplint.config import LintSettings
from mtplint.digests import DigestSet
from mtplint.discover import Candidate, WalkListings, discover_as_walked
from mtplint.extract import FileLoader
from mtplint.kept import FindingRuns, FindingStore, KeptResults, ShownOnDisk, started_launches
from mtplint.pathtext import is_dir, normalized, resolved_path
from mtplint.pipeline import Result, is_unique, worth_reading
from mtplint.records import Record
from mtplint.source import SourceFile

#: the work (files the prefilter passes, and their bytes) from which a second process wins on an
#: idle machine. A worker costs CPU to start and warm up (a fork, the imports of the extractors,
#: engines and rules), and on the benchmark's mixed 1k tree (217 relevant files) the busier of two
#: processes still takes nearly one process's time: below some 500 files the saving is within the
#: worker's start-up and the noise of a shared machine. ``bench/run.py`` measures the default
#: against one process on every tree size
PARALLEL_RELEVANT_FILES = 500
PARALLEL_RELEVANT_BYTES = 4 << 20
#: files analysed between two times the run's loader forgets the texts and paths it holds: few
#: enough that its memory does not grow with the tree, many enough that the files a directory's
#: launches share (its ``.env``, the script a unit starts, version pins) are seldom read twice
FORGET_EVERY = 256

#: times the loaders forget between two collections of the run's cycles (see :meth:`_Run.analyse`)
FULL_COLLECTION_EVERY = 8

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from mtplint.analysis import Shown
    from mtplint.cache import Cache, Dependencies
    from mtplint.config import ConfigTree
    from mtplint.progress import Progress

__all__ = ["META_RULES", "LintResult", "LintSettings", "assemble", "lint"]


class LintResult(Record):
    __slots__ = ("findings", "suppressed", "pipeline", "rules", "without_gpu", "cache", "analysed", "processes")
    #: a list, or for a large run a :class:`mtplint.kept.FindingStore` (read back from a temporary
    #: file as they are gone through)
    findings: Sequence[Finding]
    suppressed: list[Finding]
    pipeline: Result
    rules: list[Rule]
    #: launches that rules needing the GPU did not check for want of its identity: how many, and
    #: those rules (:func:`mtplint.checks.mtp003.rules_without_gpu`), said once in the summary
    without_gpu: tuple[int, tuple[str, ...]]
    #: the cache of a run with one configuration, for what the report works out from its findings
    #: (:func:`mtplint.fix.verify.verified`)
    cache: Cache | None
    #: display name -> the run's own analysis of each file whose findings offer a fix (not the
    #: cache's), which the verification of those fixes takes rather than analyse the file again
    analysed: Mapping[str, AnalysedFile]
    #: the processes the files were analysed in (``--jobs``, or its default for this run)
    processes: int

    def __init__(self, findings: Sequence[Finding], suppressed: list[Finding], pipeline: Result,
                 rules: list[Rule], without_gpu: tuple[int, tuple[str, ...]] = (0, ())) -> None:
        self.findings = findings
        self.suppressed = suppressed
        self.pipeline = pipeline
        self.rules = rules
        self.without_gpu = without_gpu
        self.cache = None
        self.analysed = {}
        self.processes = 1


def count_without_gpu(launches: int, codes: set[str], catalog: dict[str, Rule]) -> tuple[int, tuple[str, ...]]:
    """:attr:`LintResult.without_gpu` from the count of launches with rules left unchecked and those
    rules (counted as the assembly goes: a large tree's launches without a GPU are thousands, the
    benchmark's mixed 100k tree 7,161, each with its list of rules)."""
    order = list(catalog)
    return launches, tuple(sorted(codes, key=lambda code: order.index(code) if code in order else len(order)))


def cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def load_average() -> float:
    """The run-queue length over the last minute (0 where the system does not say)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover - not Unix
        return 0.0


def others_running() -> float:
    """How many other tasks want a CPU right now: the runnable count of ``/proc/loadavg`` (its
    fourth field, ``running/total``, this process among the running), else the one-minute load
    average. Not the load average where the kernel says more: a benchmark's or CI's previous
    command keeps it up for a minute after it ended, on a machine now idle."""
    try:
        with open("/proc/loadavg", "rb") as status:
            return others_in_loadavg(status.read())
    except (OSError, ValueError, IndexError):
        return load_average()


def others_in_loadavg(text: bytes) -> int:
    """The tasks running besides this one, from the text of ``/proc/loadavg`` (``0.43 1.00 0.80 2/345 12345``)."""
    return max(0, int(text.split()[3].partition(b"/")[0]) - 1)


def default_jobs(relevant_files: int, relevant_bytes: int, cpus: int, others: float) -> int:
    """Processes for a run left to its default ``--jobs``: one unless the work is large enough that
    more clearly win (:data:`PARALLEL_RELEVANT_FILES` files the prefilter passes, or
    :data:`PARALLEL_RELEVANT_BYTES` of them), and then as many as the ``cpus`` this process may run
    on leave idle with ``others`` tasks running (:func:`others_running`): a second process on a CPU
    already busy only shares it, and costs its start-up on top."""
    if relevant_files < PARALLEL_RELEVANT_FILES and relevant_bytes < PARALLEL_RELEVANT_BYTES:
        return 1
    idle = int(cpus - others + 0.5)  # CPUs with nothing to run, a half-busy one counted as idle
    return max(1, min(cpus, idle))


def lint(paths: Sequence[str | os.PathLike[str]], settings: LintSettings, loader: FileLoader | None = None, *,
         jobs: int | None = 1, cache: bool = False, progress: Progress | None = None) -> LintResult:
    """Every file ``paths`` hold, analysed and assembled (see the module docstring).

    ``loader``: one seeded with texts that stand for files (standard input for an unsaved buffer);
    such a run is linted in this process, without the cache. ``jobs``: processes (None: as many as
    idle CPUs when there is enough work, :func:`default_jobs`); ``cache``: reuse and store per-file
    results in the on-disk cache. Neither changes the findings or their order. ``progress``: counts
    of files and findings as they are linted (:mod:`mtplint.progress`).

    With ``settings.configs``, files governed by another configuration than the first path's are
    checked with that configuration's settings, in the same single run: one walk, one report."""
    given = [normalized(path) for path in paths]
    options = settings.pipeline
    run = _Run(settings, cache and loader is None, loader, progress)
    # the walk's listings of the directories it is in, which the analyses of their files read
    listings: WalkListings | None = {} if loader is None else None
    if listings is not None:
        run.run_loader.walk_listings = listings
    found: Iterator[Candidate] = discover_as_walked(given, options.root, options.excludes, options.respect_gitignore,
                                                    settings.configs, listings)
    if progress is not None:
        found = _walk_counted(found, progress)
    work = filter(None, map(run.add, found))
    wanted = 1 if loader is not None else jobs
    taken: list[tuple[int, Candidate]] = []
    if wanted is None:
        cpus = cpu_count()
        workers = 1
        if default_jobs(PARALLEL_RELEVANT_FILES, PARALLEL_RELEVANT_BYTES, cpus, others_running()) > 1:
            # the machine has CPUs to spare: the files are prefiltered here until there is enough
            # work for them (a file the prefilter rejects is done with then), or the walk ends
            run.counting = True
            for item in work:
                taken.append(item)
                if run.relevant_files >= PARALLEL_RELEVANT_FILES or run.relevant_bytes >= PARALLEL_RELEVANT_BYTES:
                    break
            run.counting = False
            # asked again: the CPUs idle when the workers would start, not when the walk began
            workers = default_jobs(run.relevant_files, run.relevant_bytes, cpus, others_running())
    elif wanted > 1 and not all(is_dir(path) for path in given):
        # files named: no more processes than files to lint
        for item in work:
            taken.append(item)
            if len(taken) >= wanted:
                break
        workers = min(wanted, max(1, len(taken)))
    else:
        # a directory to walk: the workers start, and load what linting needs, while the walk begins
        workers = wanted
    pending = chain(taken, work)
    if workers > 1:
        from mtplint.parallel import analyse_in_workers  # noqa: PLC0415 - --jobs: only a run with workers

        for index, candidate, result, deps, requested in analyse_in_workers(pending, run.groups, workers, run.use_cache,
                                                                            run.analyse, needed_by_the_assembly):
            run.take(index, candidate, result, deps, requested)
    else:
        for index, candidate in pending:
            run.take(index, candidate, *run.analyse(index, candidate))
    linted = run.assemble()
    linted.processes = workers
    return linted


def _walk_counted(found: Iterator[Candidate], progress: Progress) -> Iterator[Candidate]:
    for candidate in found:
        progress.add_found()
        yield candidate
    progress.walk_over()


class _Run:
    """The files of a run as the walk hands them over, and their results: each one's from the
    cache, or analysed here or in a worker. Only the results of files that start or say something
    are kept (with their place in the walk); the others are counted."""

    def __init__(self, settings: LintSettings, use_cache: bool, loader: FileLoader | None,
                 progress: Progress | None) -> None:
        self.settings = settings
        self.use_cache = use_cache
        self.progress = progress
        self.tree = settings.configs
        self.loader = loader
        #: the loader files are read through in this process, noting what each analysis reads (for
        #: the cache, and for the verification of fixes: :attr:`analysed`)
        self.run_loader = loader if loader is not None else RecordingLoader(settings.pipeline.root)
        self.groups: list[RunGroup] = [RunGroup(settings.without_configs())]
        self.files_seen = 0
        self.files_skipped = 0
        #: the result of each file that starts or says something, and this run's analysis of each
        #: file whose findings offer a fix
        self.kept = KeptResults(self.groups)
        self.kept.analysed.loader = self.run_loader
        #: the cache keys of the files whose results are not known yet
        self.keys: dict[int, str] = {}
        self.candidate_groups: dict[str, int] = {}
        self.grouped = False
        #: the loader that names files in cache keys (:meth:`_known`): a loader of its own, the
        #: run's may be the caller's
        self.names = FileLoader(settings.pipeline.root)
        self.display = self.names.display
        #: files analysed since the loaders last forgot what they hold (:data:`FORGET_EVERY`)
        self.since_forgetting = 0
        #: times the loaders forgot (:data:`FULL_COLLECTION_EVERY`)
        self.forgettings = 0
        #: the files to analyse found so far worth reading, and their bytes: what the default
        #: ``--jobs`` is decided from (counted while :attr:`counting`, and for every cache miss)
        self.counting = False
        self.relevant_files = 0
        self.relevant_bytes = 0

    def group(self, number: int) -> RunGroup:
        """A configuration group's settings, rules and cache, read the first time a file needs them."""
        tree = self.tree
        while len(self.groups) <= number and tree is not None:
            self.groups.append(RunGroup(tree.groups[len(self.groups)].without_configs()))
        group = self.groups[number]
        if self.use_cache and group.cache is None:
            group.cache = _open_cache(group.settings, group.rules, group.catalog)
        return group

    def add(self, candidate: Candidate) -> tuple[int, Candidate] | None:
        """Take a discovered file: None when its result is known (the cache's, or the prefilter's
        with the bytes read for the key), else the work to do."""
        index = self.files_seen
        self.files_seen += 1
        if index % FORGET_EVERY == 0:
            self.names.forget_files()
            for group in self.groups:
                group.forget_digests()
        number = candidate.group
        self.grouped = self.grouped or number != 0
        if number != 0 or (self.tree is not None and self.tree.nested):
            # the file a finding sits in follows its own configuration (few runs have several)
            self.candidate_groups[self.display(candidate.path)] = number
        group = self.group(number)
        if group.cache is not None or self.counting:
            known = self._known(index, candidate, group)
            if known is not None:
                self._keep(index, known, number)
                return None
        return index, candidate

    def _known(self, index: int, candidate: Candidate, group: RunGroup) -> FileResult | None:
        """The file's result when the prefilter skips it (most files of a tree: one byte search,
        less than computing a cache key or reading an entry) or the cache holds it; else None, the
        file counted as work to do."""
        try:
            data = self.run_loader.read_regular(candidate.path)[1]
        except OSError:
            return None
        if data is None:
            return None  # not a regular file, or too large: reported by the analysis, every time
        if not worth_reading(data, candidate.kind):
            return quiet_result(1)
        result = None
        cache = group.cache
        if cache is not None:
            key = cache.key(f"{candidate.kind}\0{self.display(candidate.path)}\0{candidate.path}", data)
            result = cache.get(key, group.catalog)
            if result is None:
                self.keys[index] = key
        if result is None:
            self.relevant_files += 1
            self.relevant_bytes += len(data)
        return result

    def analyse(self, index: int, candidate: Candidate
                ) -> tuple[FileResult, Dependencies | None, tuple[str, ...] | None]:
        """Analyse a file in this process (its share of a run with workers, or a chunk a worker failed)."""
        number = candidate.group
        group = self.groups[number]
        # the loader keeps the bytes it read last: the cache key's (a file with a key was read for it
        # and passed the prefilter), when the file is analysed next
        analysed = analysed_with_dependencies(candidate, self.run_loader, group, index in self.keys, self.use_cache)
        self.since_forgetting += 1
        if self.since_forgetting >= FORGET_EVERY:
            self.since_forgetting = 0
            if self.loader is None:  # a caller's loader (seeded texts, a fix's) is theirs to keep
                self.run_loader.forget_files()
            # the run switches the cyclic collector off (mtplint.cli.main); the few cycles an
            # analysis leaves (ast.literal_eval's nested functions, for a Python launcher) would then
            # stay to the end of the run and grow with the tree. Once every few thousand files, all
            # of them are looked at: collections of the younger generations in between freed next to
            # nothing more at the same peak memory, and cost more in all than these (which also leave
            # the young generations small for the collections between the batches of fixes verified)
            self.forgettings += 1
            if self.forgettings % FULL_COLLECTION_EVERY == 0:
                gc.collect()
        return analysed

    def take(self, index: int, candidate: Candidate, result: FileResult, deps: Dependencies | None,
             requested: tuple[str, ...] | None) -> None:
        """The result of the file at ``index`` in the walk; what it depends on (for the cache) and
        the files its analysis asked for (for the verification of its fixes), when known."""
        number = candidate.group
        if deps is not None:
            key = self.keys.pop(index, None)
            cache = self.groups[number].cache
            if cache is not None and key is not None:
                cache.put(key, result, deps)
        written = self._keep(index, result, number)
        if requested is not None:
            # the name the analysis in this process showed the file by: :attr:`names` would resolve
            # the file and its directory again (a run without workers or cache asks it nothing else)
            shown = self.run_loader.known_display(candidate.path) if self.loader is None else None
            self.kept.analysed.add(shown or self.display(candidate.path), AnalysedFile(
                candidate.kind, number, self.groups[number].codes, requested, result), written)

    def _keep(self, index: int, result: FileResult, number: int) -> tuple[int, int] | None:
        """Keep what the assembly needs of ``result``; where ``result`` itself went in the kept
        results' temporary file when it was written there whole (:meth:`KeptResults.add`), else None."""
        self.files_skipped += result.skipped
        if self.progress is not None:
            self.progress.add_done(result.finding_count())
        needed = needed_by_the_assembly(result)
        if needed is None:
            return None
        written = self.kept.add(index, needed, number)
        return written if needed is result else None

    def assemble(self) -> LintResult:
        tree = self.tree
        grouped = tree is not None and self.grouped
        if grouped and tree is not None:
            self.group(len(tree.groups) - 1)  # every configuration the run read, as the report lists their rules
        # a large run with one configuration: the findings go through the kept results' temporary file
        spill = self.kept if self.kept.written and len(self.groups) == 1 and not grouped else None
        result = assemble(self.kept.results(), self.groups, self.files_seen, self.files_skipped,
                          tree if grouped else None, self.loader, self.candidate_groups if grouped else None,
                          self.kept.started, SharedTexts(), spill)
        if not grouped and len(self.groups) == 1:
            result.cache = self.groups[0].cache
        result.analysed = self.kept.analysed
        return result


def needed_by_the_assembly(result: FileResult) -> FileResult | None:
    """What :func:`assemble` reads of a file's result: None when the file starts nothing or only
    launches that say nothing, most of a tree's launch files, whose results are then not kept.

    A launch says nothing when it has no finding or diagnostic, no rule left unchecked for want
    of the GPU, no ``noqa`` comment to judge (MTP002), and was read from its own file: such a
    reading is dropped when another file starts the same command, never the other way round."""
    if result.quiet:
        return None
    launches = [launch for launch in result.launches
                if launch.via_other or launch.findings or launch.diagnostics or launch.without_gpu or launch.noqa]
    if len(launches) == len(result.launches):
        return result
    if not (launches or result.diagnostics or result.errors):
        return None
    return FileResult(result.skipped, result.diagnostics, result.errors, launches, result.shown)


class SharedTexts:
    """One copy of each message and shown line the kept results repeat: a tree's copied launch
    files give the same findings over and over (the benchmark's mixed 10k tree: 1,826 findings of
    297 messages, 3,802 shown lines of 329), and every finding is kept until the report."""

    __slots__ = ("_texts",)

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}

    def share(self, result: FileResult) -> None:
        """Make ``result``'s messages and shown lines the copies already kept (equal texts: no
        output changes)."""
        result.shown = self._shown(result.shown)
        for launch in result.launches:
            launch.shown = self._shown(launch.shown)
            for finding in launch.findings:
                finding.message = self._text(finding.message)

    def _text(self, text: str) -> str:
        return self._texts.setdefault(text, text)

    def _shown(self, shown: Shown) -> Shown:
        text = self._text
        return {file: [count, {text(number): text(line) for number, line in around.items()}]
                for file, (count, around) in shown.items()}


def _open_cache(settings: LintSettings, rules: Sequence[Rule], catalog: dict[str, Rule]) -> Cache:
    # the cache's modules are loaded by a run that uses it, not by a --no-cache one (a pre-commit hook's)
    from mtplint.cache import Cache, settings_key  # noqa: PLC0415 - the cache's runs only
    from mtplint.cache_directory import cache_dir  # noqa: PLC0415 - the cache's runs only

    options = settings.pipeline
    house = {code: [rule.to_json(), rule.when, rule.message, rule.docs]
             for code, rule in catalog.items() if rule.origin != "builtin"}
    key = settings_key({
        "rules": [rule.code for rule in rules],
        "house": house,
        "root": resolved_path(options.root),
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
    return Cache(cache_dir(options.root), key)


def assemble(results: Iterable[tuple[FileResult, int]], groups: Sequence[RunGroup], files_seen: int,
             files_skipped: int, configs: ConfigTree | None = None, loader: FileLoader | None = None,
             candidate_groups: dict[str, int] | None = None, started: set[tuple[str, int]] | None = None,
             texts: SharedTexts | None = None, spill: KeptResults | None = None) -> LintResult:
    """The run's result from its files' results in discovery order, each with its configuration
    group (index into ``groups``: its launches were checked with that group's rules); quiet files
    may be left out, their counts given (see the module docstring).

    Under several configurations (``configs``), a finding's ``per-file-ignores``, and the noqa
    comments of a file (MTP002), follow the configuration of the file they sit in: a candidate's
    own group (``candidate_groups``, by display name), else its closest configuration's.
    ``loader``: the texts the run read (a fix re-linted in memory, standard input).

    ``started``: the keys of the launches read through another file (:func:`mtplint.kept.started_launches`),
    when known before the results: then ``results`` is read once, a file at a time, and only what
    the report needs of each launch is kept (its findings, diagnostics and shown lines), not the
    launch. ``texts``: the copies of messages and shown lines to share those of ``results`` with.

    ``spill``: a large run's kept results, with one configuration (``groups`` has one): the findings
    then go through their temporary file (:class:`mtplint.kept.FindingRuns`), are suppressed a file at
    a time, and the result's are a :class:`mtplint.kept.FindingStore`. The same findings, in the same
    order: the findings of one file are all that one finding per mistake and the suppressions of
    that file look at."""
    first = groups[0]
    loader = loader if loader is not None else FileLoader(first.settings.pipeline.root)
    result = Result(loader=loader, files_seen=files_seen, files_skipped=files_skipped)
    if spill is not None:
        result.shown = ShownOnDisk(spill)
    if started is None:
        results = list(results)
        started = started_launches(item for file_result, _ in results for item in file_result.launches)
    file_diagnostics: list[tuple[Any, int]] = []
    launch_diagnostics: list[tuple[Any, int]] = []
    findings: list[Finding] | FindingRuns = [] if spill is None else FindingRuns(spill)
    noqa_launches: list[LaunchResult] = []
    # the files holding a kept launch without a noqa comment (most of a tree's launch files): by
    # their digests, not as thousands of names held through the assembly
    without_noqa = DigestSet()
    without_gpu_launches = 0
    without_gpu_rules: set[str] = set()
    ends: dict[tuple[str, int], int] = {}
    seen: set[tuple[str, int, str]] = set()
    for file_result, group in results:
        if file_result.quiet:
            continue
        if texts is not None:
            texts.share(file_result)
        result.shown.add(file_result.shown)
        file_diagnostics.extend((item, group) for item in file_result.diagnostics)
        result.internal_errors.extend(file_result.errors)
        for item in file_result.launches:
            if not is_unique(item.key, item.context, item.via_other, started, seen):
                continue
            launch_diagnostics.extend((diagnostic, group) for diagnostic in item.diagnostics)
            result.shown.add(item.shown)
            findings.extend(item.findings)
            if item.noqa:
                noqa_launches.append(item)
            else:
                without_noqa.add(item.display)
            if item.without_gpu:
                without_gpu_launches += 1
                without_gpu_rules.update(item.without_gpu)
            if item.span_key is not None and item.end is not None:
                ends[item.span_key] = item.end
    diagnostics = file_diagnostics + launch_diagnostics
    result.diagnostics = [diagnostic for diagnostic, _ in diagnostics]

    chosen = [group.chosen for group in groups]
    findings.extend(unparsable_findings(first.catalog["MTP001"], (
        diagnostic for diagnostic, group in diagnostics if "MTP001" in chosen[group])))

    sources: dict[str, SourceFile] = {}
    # a file with no noqa anywhere (most) is not read again here: it suppresses nothing
    for item in noqa_launches:
        if item.display not in sources and item.display not in without_noqa:
            source = (SourceFile(item.path, item.display, item.text) if item.text is not None
                      else loader.load(item.path))
            if source is not None:
                sources[item.display] = source
    rules = list({rule.code: rule for group in groups for rule in group.rules}.values())
    without_gpu_count = count_without_gpu(without_gpu_launches, without_gpu_rules, first.catalog)
    if isinstance(findings, FindingRuns):
        assert spill is not None
        store, suppressed = _suppressed_by_file(findings, sources, result, first, ends, without_noqa, spill)
        return LintResult(store, suppressed, result, rules, without_gpu_count)
    findings = one_finding_per_mistake(findings)
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
        governed += [RunGroup(configs.groups[number].without_configs())
                     for number in range(len(groups), max(map(file_group, files), default=0) + 1)]
    kept, suppressed = [], []
    for number, governing in enumerate(governed):
        own = [finding for finding in findings if file_group(finding.span.file) == number]
        own_sources = {name: source for name, source in sources.items() if file_group(name) == number}
        if not own and not own_sources:
            continue  # nothing to suppress, no noqa comment to judge
        group_kept, group_suppressed = apply_suppressions(
            own, result, governing.settings.per_file_ignores, governing.catalog, set(governing.chosen),
            launch_sources=own_sources, launch_ends=ends, without_noqa=without_noqa)
        kept.extend(group_kept)
        suppressed.extend(group_suppressed)
    kept.sort(key=Finding.sort_key)
    return LintResult(kept, suppressed, result, rules, without_gpu_count)


def _suppressed_by_file(findings: FindingRuns, sources: dict[str, SourceFile], result: Result, group: RunGroup,
                        ends: dict[tuple[str, int], int], without_noqa: DigestSet, spill: KeptResults
                        ) -> tuple[FindingStore, list[Finding]]:
    """:func:`assemble`'s last steps for a large run with one configuration, a file at a time in
    report order: its findings' one per mistake, and its suppressions (with the files holding a
    ``noqa`` comment and no finding, for MTP002). The findings kept go to a store in the temporary
    file; the suppressed ones (few) stay, in the order the assembly collected them."""
    import heapq  # noqa: PLC0415 - a large run's spill only (a one-file check never spills)

    store = FindingStore(spill)
    suppressed: list[tuple[int, Finding]] = []
    no_finding: list[tuple[int, Finding]] = []
    by_file = heapq.merge(findings.by_file(), ((name, no_finding) for name in sorted(sources)), key=itemgetter(0))
    chosen = set(group.chosen)
    for file, parts in groupby(by_file, key=itemgetter(0)):
        numbered = [item for _, found in parts for item in found]
        own = one_finding_per_mistake([finding for _, finding in numbered])
        own_sources = {file: sources[file]} if file in sources else {}
        file_kept, file_suppressed = apply_suppressions(
            own, result, group.settings.per_file_ignores, group.catalog, chosen,
            launch_sources=own_sources, launch_ends=ends, without_noqa=without_noqa)
        file_kept.sort(key=Finding.sort_key)
        store.extend(file_kept)
        if file_suppressed:
            place = {id(finding): number for number, finding in numbered}
            suppressed.extend((place[id(finding)], finding) for finding in file_suppressed)
    suppressed.sort(key=itemgetter(0))
    return store, [finding for _, finding in suppressed]
