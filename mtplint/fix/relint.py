"""Re-linting a project after a fix, in time proportional to what the fix changed.

``--fix`` checks each pass of fixes (and, when a pass is refused, each part of it) by linting the
fixed texts in memory. Linting the whole project for each try costs the whole tree every time --
seconds on a tree of thousands of files, times the fixes tried. Here the project is linted file by
file (:func:`mtplint.analysis.analyse_file`, as every run: one result per discovered file, its
extraction, the modelling of its launches and the rules on them), noting the files each read. A change
re-analyses only the records that read a changed file, then assembles every record into the project's result as a plain run
does -- the same findings, in the same order, as linting everything again.

What a record depends on, and why the set re-analysed is enough:

* every file it asked the loader for (its own file, ``.env``, ``env_file``, compose override and
  ``extends`` files, a ``--config`` YAML, the script a unit or Dockerfile starts);
* the version pins near its launches (``requirements*.txt``, a Dockerfile's ``FROM`` tag): the run
  reads a directory's pins once, and each later launch below them asks the loader for them again;
* the compose services an earlier record of the run already reported: the records sharing a
  compose project read each other's files, so they are re-analysed together, in discovery order.

Fixes only edit files that were read, and never create or delete one: the files discovered, and
the directory listings the extraction looked at, stay as they were.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from mtplint.analysis import FileResult, RecordingLoader, RunGroup, analyse_file
from mtplint.config import LintSettings
from mtplint.discover import discover
from mtplint.lint import LintResult, assemble
from mtplint.records import FrozenRecord
from mtplint.source import SourceFile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final


#: the rules that report what the engine refuses (MTP509: any rejection no specific rule reports)
ENGINE_REJECTIONS = ("MTP509",)


class ProjectLint(FrozenRecord):
    """The lint of the project's texts at one point of the fixing: each discovered file's result
    (in discovery order) and the assembled result."""

    __slots__ = ("records", "result")
    records: Final[tuple[FileResult, ...]]
    result: Final[LintResult]

    def __init__(self, records: tuple[FileResult, ...], result: LintResult) -> None:
        self.records = records
        self.result = result


class ProjectLinter:
    """Lints ``paths`` as :func:`mtplint.lint.lint` does, and again with some files replaced by
    texts in memory, re-analysing only the files those texts reach (see the module docstring)."""

    def __init__(self, paths: list[Path], settings: LintSettings) -> None:
        options = settings.pipeline
        self.root = options.root
        tree = settings.configs
        self.candidates = discover(paths, options.root, options.excludes, options.respect_gitignore, tree)
        self.grouped = tree is not None and any(candidate.group for candidate in self.candidates)
        self.tree = tree if self.grouped else None
        members = [member.without_configs() for member in (tree.groups if tree is not None and self.grouped
                                                           else [settings])]
        self.members = members
        self.groups = [RunGroup(member) for member in members]
        # the engine's rejection of an argv is damage whether or not its rule is selected (a fix
        # must not hand vLLM '4 --no-enable-prefix-caching' under `--select MTP102`): checked in
        # every lint of the fixing, and left out of what is reported
        self.hidden_codes: set[str] = set()
        for index, group in enumerate(self.groups):
            codes = [rule.code for rule in group.rules]
            missing = [code for code in ENGINE_REJECTIONS if code not in codes and code in group.catalog]
            if missing:
                self.hidden_codes.update(missing)
                self.groups[index] = RunGroup(members[index], [*codes, *missing])
        display = RecordingLoader(options.root).display
        self.candidate_groups = ({display(candidate.path): candidate.group for candidate in self.candidates}
                                 if self.grouped else None)
        #: real path of a file -> the records (indices into the candidates) that read it, at any
        #: point of the fixing: a record that no longer reads it is re-analysed for nothing, never missed
        self.readers: dict[str, set[int]] = {}
        #: record -> the display names of the files it read (at any point of the fixing)
        self.read_names: dict[int, set[str]] = {}
        self._real_paths: dict[str, str] = {}
        #: the loader of the first lint, whose answers about paths every later lint shares
        self._paths = RecordingLoader(self.root)
        #: lints run (the first included), and records analysed, for the tests' accounting
        self.runs = 0
        self.analysed = 0

    def first(self, buffers: Iterable[SourceFile] = ()) -> tuple[ProjectLint, RecordingLoader]:
        """The lint of the files as they are on disk (or as ``buffers`` stand for them), and the
        loader that read them."""
        loader = self._paths = RecordingLoader(self.root)
        for source in buffers:
            loader.put(source)
        records = self._analyse(range(len(self.candidates)), loader)
        return ProjectLint(tuple(records), self._assemble(records, loader)), loader

    def again(self, before: ProjectLint, texts: dict[str, SourceFile], changed: Iterable[SourceFile]) -> ProjectLint:
        """The lint of the project with ``texts`` (every file whose text differs from the disk's)
        standing for their files, where ``before`` was its lint with the ``changed`` files' previous
        texts."""
        loader = RecordingLoader(self.root)
        # the file system's shape is asked once per fixing: each try has thousands of texts to seed
        loader.share_paths(self._paths)
        for source in texts.values():
            loader.put(source)
        affected = self.reaching([source.path for source in changed])
        records = list(before.records)
        for index, record in zip(affected, self._analyse(affected, loader), strict=True):
            records[index] = record
        return ProjectLint(tuple(records), self._assemble(records, loader))

    def _analyse(self, indices: Iterable[int], loader: RecordingLoader) -> list[FileResult]:
        """The results of the candidates at ``indices`` (ascending), read through ``loader``; notes
        what each read."""
        records = []
        for index in indices:
            candidate = self.candidates[index]
            group = self.groups[candidate.group]
            records.append(analyse_file(candidate, loader, group))
            self.analysed += 1
            read = [candidate.path, *map(Path, loader.requested)]
            for path in read:
                self.readers.setdefault(self._real(path), set()).add(index)
            self.read_names.setdefault(index, set()).update(map(loader.display, read))
        return records

    def shown(self, result: LintResult) -> LintResult:
        """``result`` without the findings of the rules checked only for the fixing's sake."""
        if not self.hidden_codes:
            return result
        return LintResult([f for f in result.findings if f.code not in self.hidden_codes],
                          [f for f in result.suppressed if f.code not in self.hidden_codes], result.pipeline,
                          result.rules)

    def _assemble(self, records: list[FileResult], loader: RecordingLoader) -> LintResult:
        self.runs += 1
        return assemble(list(zip(records, [candidate.group for candidate in self.candidates], strict=True)),
                        self.groups, len(records), sum(record.skipped for record in records), self.tree,
                        loader, self.candidate_groups)

    def reaching(self, changed: Iterable[Path]) -> list[int]:
        """The records (indices, ascending) a change of the ``changed`` files may change."""
        affected: set[int] = set()
        for path in map(self._real, changed):
            affected |= self.readers.get(path, set())
        # records that read an affected record's file share a compose project with it: the one read
        # first in the run reports the project's services, so they are analysed again together
        pending = list(affected)
        while pending:
            own = self._real(self.candidates[pending.pop()].path)
            for index in self.readers.get(own, set()) - affected:
                affected.add(index)
                pending.append(index)
        return sorted(affected)

    def reach(self, changed: Iterable[Path]) -> set[str]:
        """The files (display names) where a change of the ``changed`` files may move a finding:
        those read by the records it may change."""
        return {name for index in self.reaching(changed) for name in self.read_names.get(index, ())}

    def _real(self, path: str | Path) -> str:
        key = str(path)
        real = self._real_paths.get(key)
        if real is None:
            real = self._real_paths[key] = os.path.realpath(key)
        return real

