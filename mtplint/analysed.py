"""A file's analysis as a run keeps it for the fixing that verifies its fixes
(:mod:`mtplint.fix.verify`), apart from the on-disk cache (:mod:`mtplint.cache`), which a run with
``--no-cache`` (a pre-commit hook's) does not load."""

from __future__ import annotations

from mtplint.analysis import FileResult, RecordingLoader, RunGroup, analyse_file
from mtplint.checks import applies
from mtplint.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mtplint.cache import Dependencies
    from mtplint.discover import Candidate
    from mtplint.extract import FileLoader


class AnalysedFile(Record):
    """A file's result as the run analysed it, with what a fix's re-lint needs to take it as its own
    (:meth:`mtplint.fix.relint.ProjectLinter.first`): the file's kind, its configuration group and
    that group's rules, and the files the analysis asked for."""

    __slots__ = ("kind", "group", "rules", "requested", "result")
    kind: str
    group: int
    rules: tuple[str, ...]
    #: the absolute paths the analysis asked the loader for (found or not), in order
    requested: tuple[str, ...]
    result: FileResult

    def __init__(self, kind: str, group: int, rules: tuple[str, ...], requested: tuple[str, ...],
                 result: FileResult) -> None:
        self.kind = kind
        self.group = group
        self.rules = rules
        self.requested = requested
        self.result = result


def offers_fix(result: FileResult) -> bool:
    """Whether a finding of ``result`` carries a fix ``--fix`` may apply (with ``--unsafe-fixes``)."""
    return any(applies(finding.fix, True) for launch in result.launches for finding in launch.findings)


def analysed_with_dependencies(candidate: Candidate, loader: FileLoader, group: RunGroup, prefiltered: bool = False,
                               with_deps: bool = False
                               ) -> tuple[FileResult, Dependencies | None, tuple[str, ...] | None]:
    """The file's result (what the run and its workers keep); what it depends on, ``with_deps`` (a
    run with the cache on); and the files its analysis asked for, when the result offers a fix and
    ``loader`` records what it reads: the fixing that verifies the fix (:mod:`mtplint.fix.verify`)
    takes the result as its own then, rather than analyse the file again. Not when the analysis
    left out what an earlier one through ``loader`` reported (a compose service of an override
    pair): that result is not the file's alone."""
    result = analyse_file(candidate, loader, group, prefiltered)
    alone = not loader.reported_earlier
    loader.reported_earlier = False
    if not isinstance(loader, RecordingLoader):
        return result, None, None
    deps = None
    if with_deps:
        from mtplint.cache import dependencies  # noqa: PLC0415 - the on-disk cache: only a run with the cache

        deps = dependencies(candidate.path, loader, group)
    return result, deps, tuple(loader.requested) if alone and offers_fix(result) else None
