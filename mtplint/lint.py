"""``mtplint check``: the pipeline's launches through the selected rules, then suppressions."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from mtplint.boundary import guarded_rule, guarded_rules
from mtplint.checks import Finding, one_finding_per_mistake, unparsable_findings
from mtplint.checks.catalog import Rule, load_catalog
from mtplint.checks.selection import selected_rules
from mtplint.discover import discover
from mtplint.extract import FileLoader
from mtplint.pipeline import Result, run
from mtplint.records import Record

#: below this many files to lint, worker processes cost more than they save (process start-up and
#: imports are ~0.1 s per worker; one file takes ~1-5 ms): ``--jobs`` left to its default runs in-process
PARALLEL_THRESHOLD = 64

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mtplint.config import LintSettings
    from mtplint.progress import Progress

#: rules about the input itself, produced by the pipeline or by suppression handling, not by predicates
META_RULES = ("MTP001", "MTP002", "MTP003")


class LintResult(Record):
    __slots__ = ("findings", "suppressed", "pipeline", "rules", "without_gpu")
    findings: list[Finding]
    suppressed: list[Finding]
    pipeline: Result
    rules: list[Rule]
    #: launches that rules needing the GPU did not check for want of its identity: how many, and
    #: those rules (:func:`mtplint.checks.mtp003.rules_without_gpu`), said once in the summary
    without_gpu: tuple[int, tuple[str, ...]]

    def __init__(self, findings: list[Finding], suppressed: list[Finding], pipeline: Result,
                 rules: list[Rule], without_gpu: tuple[int, tuple[str, ...]] = (0, ())) -> None:
        self.findings = findings
        self.suppressed = suppressed
        self.pipeline = pipeline
        self.rules = rules
        self.without_gpu = without_gpu


def count_without_gpu(unchecked: Iterable[Sequence[str]], catalog: dict[str, Rule]) -> tuple[int, tuple[str, ...]]:
    """:attr:`LintResult.without_gpu` from each launch's rules left unchecked (empty: checked)."""
    launches = 0
    codes: set[str] = set()
    for rules in unchecked:
        if rules:
            launches += 1
            codes.update(rules)
    order = list(catalog)
    return launches, tuple(sorted(codes, key=lambda code: order.index(code) if code in order else len(order)))


def lint(paths: list[Path], settings: LintSettings, loader: FileLoader | None = None, *,
         jobs: int | None = 1, cache: bool = False, progress: Progress | None = None) -> LintResult:
    """``loader``: see :func:`mtplint.pipeline.run` (``--fix`` passes one seeded with fixed texts).

    ``jobs``: worker processes (None: as many as CPUs when there are enough files, see
    :func:`mtplint.parallel.default_jobs`); ``cache``: reuse and store per-file results in the
    on-disk cache (:mod:`mtplint.cache`). Both give the same findings, in the same order, as the
    plain run; neither applies to a seeded ``loader`` (a fix being re-linted in memory).
    ``progress``: counts of files and findings as they are linted (:mod:`mtplint.progress`).

    With ``settings.configs``, files governed by another configuration than the first path's are
    checked with that configuration's settings (:class:`mtplint.config.ConfigTree`), in the same
    single run: one discovery walk, one report."""
    # in this process, without the worker and record machinery: a fix's seeded loader, or a run
    # without the cache that asks for one process or leaves it to a few files named
    in_process = loader is not None or (not cache and progress is None
                                        and (jobs == 1 or (jobs is None and _few_named_files(paths))))
    if not in_process:
        from mtplint.parallel import lint_units

        # discovers under the run's configurations itself, and lints while it walks
        return lint_units(paths, settings, jobs=jobs, use_cache=cache, progress=progress)
    candidates = None
    tree = settings.configs
    if tree is not None:
        options = settings.pipeline
        candidates = discover(paths, options.root, options.excludes, options.respect_gitignore, tree)
        if any(candidate.group for candidate in candidates):
            from mtplint.parallel import lint_units

            return lint_units(paths, settings, jobs=1, use_cache=False, candidates=candidates, loader=loader)
    catalog = load_catalog(settings.extend_rules)
    rules = selected_rules(catalog, settings.select, settings.extend_select, settings.ignore)
    chosen = {rule.code for rule in rules}
    pipeline_result = run(paths, settings.pipeline, loader, candidates=candidates)
    findings: list[Finding] = []
    checked = [rule for rule in rules if rule.code not in META_RULES]
    # each launch's findings, for the launches of a command that runs differently on different paths
    per_launch: list[list[Finding]] = [[] for _ in pipeline_result.launches]
    for report, found in zip(pipeline_result.launches, per_launch, strict=True):
        report.objective = settings.objective
        found.extend(guarded_rules(checked, report))
        findings.extend(found)
    without_gpu: tuple[int, tuple[str, ...]] = (0, ())
    if "MTP003" in chosen:
        from mtplint.checks.mtp003 import rules_without_gpu, unresolved_findings

        unresolved_rule = catalog["MTP003"]
        for report, found in zip(pipeline_result.launches, per_launch, strict=True):
            unresolved = guarded_rule(unresolved_rule, report, unresolved_findings, unresolved_rule, report, rules)
            found.extend(unresolved)
            findings.extend(unresolved)
        without_gpu = count_without_gpu((rules_without_gpu(catalog["MTP003"], report, rules)
                                         for report in pipeline_result.launches), catalog)
    if any(report.launch.paths is not None for report in pipeline_result.launches):
        from mtplint.checks.paths import name_path_conditions

        name_path_conditions([(report.launch, found)
                              for report, found in zip(pipeline_result.launches, per_launch, strict=True)])
    if "MTP001" in chosen:
        findings.extend(unparsable_findings(catalog["MTP001"], pipeline_result.diagnostics))
    findings = one_finding_per_mistake(findings)

    from mtplint.checks.suppress import apply_suppressions

    kept, suppressed = apply_suppressions(findings, pipeline_result, settings.per_file_ignores, catalog, chosen)
    kept.sort(key=Finding.sort_key)
    return LintResult(kept, suppressed, pipeline_result, rules, without_gpu)


def _few_named_files(paths: list[Path]) -> bool:
    """Files named on the command line (a pre-commit hook's), too few for worker processes: the
    plain run is then the one :func:`mtplint.parallel.lint_units` would choose, without loading it."""
    return len(paths) < PARALLEL_THRESHOLD and all(path.is_file() for path in paths)
