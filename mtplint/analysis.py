"""One discovered file through the pipeline: its extraction, the modelling of the launches found in
it and the rules on them, as a :class:`FileResult`.

Every way of running ``mtplint check`` goes through :func:`analyse_file`: the run in this process
and the worker processes of ``--jobs`` (:mod:`mtplint.lint`, :mod:`mtplint.parallel`), the on-disk
cache (:mod:`mtplint.cache` stores a file's result) and the re-lint of each fix
(:mod:`mtplint.fix.relint`). What looks across files -- a script's stand-alone launch dropped when a
unit started it, one MTP001 per malformed file, suppressions -- happens afterwards, over the results
in discovery order (:func:`mtplint.lint.assemble`). A result keeps what that needs of each launch and
the lines the report shows around each finding, not the launch's model (its parsed flags, settings,
the texts it read).
"""

from __future__ import annotations

import os

from mtplint.boundary import guarded_rule, guarded_rules
from mtplint.checks import REPORTED_BY_THE_RUN, UNDECIDED, predicate_for
from mtplint.checks.catalog import Rule, load_catalog
from mtplint.checks.selection import selected_rules
from mtplint.checks.suppress import launch_end_line, may_hold_noqa
from mtplint.discover import Candidate
from mtplint.engines import engine_for
from mtplint.extract import FileLoader
from mtplint.extract.launch import ENGINES
from mtplint.pipeline import EXTRACTORS, Result, extract_file, extractor_for, model_launch, modelling_failed
from mtplint.records import Record
from mtplint.source import Diagnostic, Issues, SourceFile, Span, frame_lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    from mtplint.cache import Cache, Probe
    from mtplint.checks import Finding
    from mtplint.config import LintSettings
    from mtplint.extract.launch import Launch

    #: file (as findings show it) -> [its line count, {line number as text: the line}] (:class:`mtplint.source.ShownLines`)
    Shown = dict[str, list[Any]]

#: rules about the input itself, produced by the run or by suppression handling, not by predicates
META_RULES = REPORTED_BY_THE_RUN


class RunGroup:
    """One configuration's part of a run: its settings, rule catalog, selected rules and cache."""

    def __init__(self, settings: LintSettings, rule_codes: Sequence[str] | None = None) -> None:
        self.settings = settings
        self.catalog = load_catalog(settings.extend_rules)
        self.rules = (selected_rules(self.catalog, settings.select, settings.extend_select, settings.ignore)
                      if rule_codes is None else [self.catalog[code] for code in rule_codes])
        #: the rules that check a launch, in one call per launch (not per rule); a tuple, which the
        #: rules' plan knows by what it is (:func:`mtplint.checks.run_rules`)
        self.checked = tuple(rule for rule in self.rules if rule.code not in META_RULES)
        #: MTP003 (what could not be checked) is selected
        self.chosen = frozenset(rule.code for rule in self.rules)
        #: the selected rules' codes, in order: what a worker and a fix's re-lint compare a group by
        self.codes = tuple(rule.code for rule in self.rules)
        self.unresolved_rule = "MTP003" in self.chosen
        self.cache: Cache | None = None
        #: the hashes of the files and directories this run's cache entries depend on, each computed once
        self.probe: Probe | None = None

    def forget_digests(self) -> None:
        """Drop the file and folder hashes worked out so far (a run forgets them as it goes, so that
        its memory does not grow with the tree); they are worked out again from the disk when asked."""
        probes = {id(probe): probe for probe in (self.probe, self.cache.probe if self.cache is not None else None)
                  if probe is not None}
        for probe in probes.values():
            probe.forget()


class LaunchResult(Record):
    """What the assembly of a run needs of one launch of a file: who it is (to drop a script's
    stand-alone reading), its findings, and what its ``noqa`` comments need."""

    __slots__ = ("key", "context", "via_other", "path", "text", "noqa", "span_key", "end", "findings",
                 "diagnostics", "without_gpu", "shown")
    #: the display name of the launch's file and where the launch starts in it (-1: nowhere)
    key: tuple[str, int]
    context: str
    #: found through another file (the unit, Dockerfile or wrapper that starts the script)
    via_other: bool
    path: str
    #: the text the launch was read from, when no file holds it as such (rare): for the noqa scan
    text: str | None
    #: whether the file may hold a noqa comment (the assembly reads it again only then)
    noqa: bool
    #: the launch span's file and start, the key of :attr:`end`
    span_key: tuple[str, int] | None
    #: the launch's last line, when a noqa comment after it matters
    end: int | None
    #: the rules' findings, then MTP003's
    findings: list[Finding]
    diagnostics: list[Diagnostic]
    #: the rules that needed the GPU's identity and did not check this launch
    without_gpu: list[str]
    shown: Shown

    def __init__(self, key: tuple[str, int], context: str, via_other: bool, path: str, text: str | None,
                 noqa: bool, span_key: tuple[str, int] | None, end: int | None = None,
                 findings: list[Finding] | None = None, diagnostics: list[Diagnostic] | None = None,
                 without_gpu: list[str] | None = None, shown: Shown | None = None) -> None:
        self.key = key
        self.context = context
        self.via_other = via_other
        self.path = path
        self.text = text
        self.noqa = noqa
        self.span_key = span_key
        self.end = end
        self.findings = findings if findings is not None else []
        self.diagnostics = diagnostics if diagnostics is not None else []
        self.without_gpu = without_gpu if without_gpu is not None else []
        self.shown = shown if shown is not None else {}

    @property
    def display(self) -> str:
        return self.key[0]


class FileResult(Record):
    """What linting one discovered file gave: its launches', its reading's diagnostics and internal
    errors, and the lines the report shows around them."""

    __slots__ = ("skipped", "diagnostics", "errors", "launches", "shown")
    #: files skipped (by the prefilter, or too large to read)
    skipped: int
    diagnostics: list[Diagnostic]
    errors: list[str]
    launches: list[LaunchResult]
    shown: Shown

    def __init__(self, skipped: int = 0, diagnostics: list[Diagnostic] | None = None, errors: list[str] | None = None,
                 launches: list[LaunchResult] | None = None, shown: Shown | None = None) -> None:
        self.skipped = skipped
        self.diagnostics = diagnostics if diagnostics is not None else []
        self.errors = errors if errors is not None else []
        self.launches = launches if launches is not None else []
        self.shown = shown if shown is not None else {}

    @property
    def quiet(self) -> bool:
        """It starts nothing and says nothing (most files of a tree): the assembly passes it by."""
        return not (self.launches or self.diagnostics or self.errors)

    def finding_count(self) -> int:
        return sum(len(launch.findings) for launch in self.launches)


#: the result of a quiet file, by its count of skipped files: shared, and never changed
_QUIET: dict[int, FileResult] = {}


def quiet_result(skipped: int) -> FileResult:
    result = _QUIET.get(skipped)
    if result is None:
        result = _QUIET[skipped] = FileResult(skipped)
    return result


class RecordingLoader(FileLoader):
    """A :class:`FileLoader` that notes every file an analysis asked for (found or not): what a
    cache entry depends on, and what a fix's re-lint must analyse again."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        super().__init__(root)
        self.requested: dict[str, SourceFile | None] = {}

    def load(self, path: str) -> SourceFile | None:
        source = super().load(path)
        text = os.fspath(path)  # a path object too, as os.path took it
        self.requested[os.path.normpath(text if text.startswith("/") else self.working_directory + text)] = source
        return source


def analyse_file(candidate: Candidate, loader: FileLoader, group: RunGroup, prefiltered: bool = False) -> FileResult:
    """Extract, model and check one discovered file under its configuration ``group``. With a
    :class:`RecordingLoader`, its ``requested`` holds the files this analysis read afterwards.
    ``prefiltered``: see :func:`mtplint.pipeline.extract_file`."""
    if isinstance(loader, RecordingLoader):
        loader.requested = {}
    scratch = Result(loader=loader)
    issues = Issues()
    launches = extract_file(candidate, loader, issues, scratch, prefiltered)
    if not (launches or issues.items or scratch.internal_errors):
        return quiet_result(scratch.files_skipped)
    return FileResult(scratch.files_skipped, issues.items, list(scratch.internal_errors),
                      _launch_results(candidate, launches, loader, group),
                      shown_lines([item.span for item in issues.items], loader))


def _launch_results(candidate: Candidate, launches: list[Launch], loader: FileLoader,
                    group: RunGroup) -> list[LaunchResult]:
    results: list[LaunchResult] = []
    if not launches:
        return results
    settings = group.settings
    # realpath, not resolve(): the same answer, but no RuntimeError on a symlink loop; asked of the
    # loader, which has resolved these directories already
    candidate_path = loader.real_path(candidate.path)
    checked: list[tuple[LaunchResult, Launch]] = []
    for launch in launches:
        span = launch.span
        item = LaunchResult(
            (launch.source.display, span.start if span else -1), launch.context,
            loader.real_path(launch.source.path) != candidate_path, launch.source.path,
            None if loader.peek(launch.source.path) is launch.source else launch.source.text,
            may_hold_noqa(launch.source.text), (span.file, span.start) if span else None)
        results.append(item)
        launch_issues = Issues()
        try:
            report = model_launch(launch, loader, launch_issues, settings.pipeline)
        except Exception as error:  # one bad launch must not stop the run
            modelling_failed(launch, error, launch_issues)
        else:
            if item.noqa:  # the last line matters only to a noqa comment after it
                item.end = launch_end_line(report)
            report.objective = settings.objective
            item.findings = guarded_rules(group.checked, report)
            if group.unresolved_rule:
                from mtplint.checks.mtp003 import rules_without_gpu, unresolved_findings  # noqa: PLC0415 - rule lookup: MTP003's module, when it runs

                unresolved_rule = group.catalog["MTP003"]
                item.findings += guarded_rule(unresolved_rule, report, unresolved_findings, unresolved_rule, report,
                                              group.rules)
                item.without_gpu = rules_without_gpu(unresolved_rule, report, group.rules)
            checked.append((item, launch))
        item.diagnostics = launch_issues.items
        item.shown = shown_lines([diagnostic.span for diagnostic in launch_issues.items]
                                 + [finding.span for finding in item.findings], loader, launch.source)
    if any(launch.paths is not None for _, launch in checked):
        from mtplint.checks.paths import name_path_conditions  # noqa: PLC0415 - only for launches along a script's paths

        name_path_conditions([(launch, item.findings) for item, launch in checked])
    return results


def shown_lines(spans: Iterable[Span], loader: FileLoader, launch_source: SourceFile | None = None) -> Shown:
    """The lines the report shows around each finding or diagnostic (its line and one either side),
    by file, with the file's line count: the texts the run read are not kept, and the report does
    not read a thousand files again for three lines each."""
    shown: Shown = {}
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
            around[str(number)] = lines[number - 1]  # str: a result may be stored as JSON
    return shown


def load_analysis(rules: Iterable[Rule]) -> None:
    """Import what analysing files needs: the extractors, the engines, the predicates of ``rules``."""
    for kind in EXTRACTORS:
        extractor_for(kind)
    for name in ENGINES:
        engine_for(name)
    for rule in rules:
        # the meta rules and MTP004 (what the others left undecided) have no check of their own
        if rule.code not in META_RULES and rule.code != UNDECIDED:
            predicate_for(rule)
