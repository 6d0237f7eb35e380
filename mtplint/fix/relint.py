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

The same dependencies let the verification of a ``check``'s fixes (:mod:`mtplint.fix.verify`)
start from the run's own results: a file's result from the run is this lint's when its analysis
left out nothing an earlier one had reported and no other file of this lint read its files
(:meth:`ProjectLinter.first`). And they let a large try share its records out among processes
(:meth:`ProjectLinter._analyse_shared`): records reading none of each other's files are analysed
independently.

Assembling the project after each try costs the whole tree too, so a try assembles only the records
whose assembled findings it may change, and splices what they report, file by file, into the
previous lint (:meth:`ProjectLinter.again`). Every step of :func:`mtplint.lint.assemble` that looks
across records decides within one file:

* :func:`mtplint.pipeline.unique_launches` compares launches by their key, which names the file
  the launch is in;
* one MTP001 per malformed file is keyed by file and offset; a specific rule supersedes a general
  one, and a finding reached twice is reported once, on the same token of the same file;
* suppressions: a ``noqa`` comment (and MTP002, "unused noqa") covers the findings of its own file,
  ``per-file-ignores`` and the configuration governing a finding follow its file alone;
* the final order sorts by file first.

So the records that touch none of each other's files (:func:`touched`: where their launches,
findings, diagnostics and internal errors are) assemble independently, and a file's findings are
those of the assembly of the records touching it, together with everything linked to them through
files they share. A try assembles that closure of the records it re-analyses (over the files each
touched in any lint of the fixing, so it holds both before and after), and replaces the findings
and problems of the files they touch; the other files' stay as they were. The lint of the whole
project (:attr:`ProjectLint.result`) is assembled only when asked: once a pass, for its fixes, and
for the outcome.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence

from mtplint.analysed import AnalysedFile
from mtplint.analysis import FileResult, RecordingLoader, RunGroup, analyse_file
from mtplint.checks import Finding
from mtplint.config import LintSettings
from mtplint.discover import discover
from mtplint.extract import FileLoader
from mtplint.kept import KeptAnalyses
from mtplint.lint import LintResult, assemble
from mtplint.pipeline import share_pin_listings, share_pins
from mtplint.records import Record
from mtplint.source import SourceFile
from mtplint.versions import may_be_pin_file

#: (code, file, offset, message) of what a fix must not add
Problem = tuple[str, str, int, str]


#: the rules that report what the engine refuses (MTP509: any rejection no specific rule reports)
ENGINE_REJECTIONS = ("MTP509",)

#: records a try analyses from which, when the run had several processes, forked processes take a
#: share: forking and sending the results back cost tens of milliseconds, a record's analysis a few
SHARED_FROM = 48


def error_file(error: str) -> str:
    """The file an internal error is about (the run writes ``file: what went wrong``)."""
    return error.split(":", 1)[0]


def problems(result: LintResult) -> list[tuple[Problem, Finding | None]]:
    """(code, file, offset, message) of everything a fix must not add: findings, MTP001 diagnostics
    (also when MTP001 is not selected: an unparsable result is never acceptable), internal errors;
    each with the finding it comes from."""
    items: list[tuple[Problem, Finding | None]] = [
        ((f.code, f.span.file, f.span.start, f.message), f) for f in result.findings]
    items.extend((("MTP001", d.span.file, d.span.start, d.message), None)
                 for d in result.pipeline.diagnostics if d.code == "MTP001")
    items.extend((("internal", error_file(error), -1, error.split("\n", 1)[0]), None)
                 for error in result.pipeline.internal_errors)
    return items


def touched(record: FileResult) -> set[str]:
    """The files (display names) where the assembly may put what ``record`` says, or take from
    them what decides it: its launches' files, and those of its findings, diagnostics and internal
    errors."""
    files = {diagnostic.span.file for diagnostic in record.diagnostics}
    files.update(map(error_file, record.errors))
    for launch in record.launches:
        files.add(launch.display)
        if launch.span_key is not None:
            files.add(launch.span_key[0])
        files.update(finding.span.file for finding in launch.findings)
        files.update(diagnostic.span.file for diagnostic in launch.diagnostics)
    return files


def linked_sets(indices: Iterable[int], keys: Callable[[int], Iterable[str]]) -> list[list[int]]:
    """``indices`` in the sets linked by sharing a key (``keys`` of each), each set in the order of
    ``indices``, the sets in the order of their first index."""
    parent: dict[int, int] = {}

    def root(index: int) -> int:
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    order = list(indices)
    first_with: dict[str, int] = {}
    for index in order:
        parent[index] = index
        for key in keys(index):
            parent[root(index)] = root(first_with.setdefault(key, index))
    sets: dict[int, list[int]] = {}
    for index in order:
        sets.setdefault(root(index), []).append(index)
    return list(sets.values())


class ProjectLint(Record):
    """The lint of the project's texts at one point of the fixing: each discovered file's result
    (in discovery order), what the assembly reports in each file, and the assembled result of the
    whole project (built when first asked)."""

    __slots__ = ("records", "by_file", "reassembled", "part", "_result")
    records: tuple[FileResult, ...]
    #: display name -> the problems (:func:`problems`) the assembled lint has in that file, in order
    by_file: dict[str, list[tuple[Problem, Finding | None]]]
    #: the files whose problems were assembled again for this lint (after the previous one)
    reassembled: frozenset[str]
    #: the problems of :attr:`reassembled`, in the order the whole project's lint has them
    part: list[tuple[Problem, Finding | None]]
    _result: LintResult | Callable[[], LintResult]

    def __init__(self, records: tuple[FileResult, ...], by_file: dict[str, list[tuple[Problem, Finding | None]]],
                 result: LintResult | Callable[[], LintResult], reassembled: frozenset[str] = frozenset(),
                 part: list[tuple[Problem, Finding | None]] | None = None) -> None:
        self.records = records
        self.by_file = by_file
        self.reassembled = reassembled
        self.part = part if part is not None else []
        self._result = result

    @property
    def result(self) -> LintResult:
        if not isinstance(self._result, LintResult):
            self._result = self._result()
        return self._result

    def problems_in(self, files: Iterable[str]) -> list[tuple[Problem, Finding | None]]:
        """The problems in ``files``, by file name and then in the lint's order."""
        return [item for name in sorted(set(files)) for item in self.by_file.get(name, ())]

    def findings_in(self, files: Iterable[str]) -> list[Finding]:
        """The findings in ``files``, in the lint's order (by file first)."""
        return [finding for _, finding in self.problems_in(files) if finding is not None]


def run_group(settings: LintSettings, groups: Iterable[RunGroup]) -> RunGroup:
    """The configuration group of ``settings``: the run's (``groups``) when it has one of the same
    settings (their rules are selected once), else a new one."""
    for group in groups:
        if group.settings == settings:
            return group
    return RunGroup(settings)


def problems_by_file(items: Iterable[tuple[Problem, Finding | None]]) -> dict[str, list[tuple[Problem, Finding | None]]]:
    """``items`` by the file each is in, in their order."""
    files: dict[str, list[tuple[Problem, Finding | None]]] = {}
    for item in items:
        files.setdefault(item[0][1], []).append(item)
    return files


class ProjectLinter:
    """Lints ``paths`` as :func:`mtplint.lint.lint` does, and again with some files replaced by
    texts in memory, re-analysing only the files those texts reach (see the module docstring).

    ``analysed``: a run's own analyses of some of these files (:attr:`mtplint.lint.LintResult.analysed`),
    which the first lint takes rather than analyse the files again (:meth:`first`). ``processes``:
    how many the run had, which share out the analysis of a large try (:meth:`_analyse_shared`).
    ``pin_listings``: a loader that outlives this fixing (a verification's, across its batches),
    whose record of the long directory listings that hold no pin file's name
    (:func:`mtplint.pipeline.share_pin_listings`) every lint of the fixing shares, and adds to."""

    def __init__(self, paths: Sequence[str | os.PathLike[str]], settings: LintSettings,
                 analysed: Mapping[str, AnalysedFile] | None = None, processes: int = 1,
                 pin_listings: FileLoader | None = None) -> None:
        self.analysed_by_the_run = analysed if analysed is not None else {}
        self.processes = processes
        options = settings.pipeline
        self.root = options.root
        tree = settings.configs
        self.candidates = discover(paths, options.root, options.excludes, options.respect_gitignore, tree)
        self.grouped = tree is not None and any(candidate.group for candidate in self.candidates)
        self.tree = tree if self.grouped else None
        members = [member.without_configs() for member in (tree.groups if tree is not None and self.grouped
                                                           else [settings])]
        self.members = members
        # the run's analyses come with what the run built for them, which holds for the fixing
        # too: its configurations' rule selections, and its loader's answers about paths
        run = analysed if isinstance(analysed, KeptAnalyses) else None
        self.groups = [run_group(member, run.groups if run is not None else ()) for member in members]
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
        #: the run's loader, whose answers about paths every lint of the fixing shares
        self._run_loader = run.lend_loader() if run is not None else None
        #: the loader whose record of long listings without pins every lint shares (the run's joins it)
        self._pin_listings = pin_listings if pin_listings is not None else self._run_loader
        if pin_listings is not None and self._run_loader is not None:
            share_pin_listings(pin_listings, self._run_loader)
        #: the loader of the first lint, whose answers about paths every later lint shares
        self._paths = self._new_loader()
        display = self._paths.display
        self.candidate_groups = ({display(candidate.path): candidate.group for candidate in self.candidates}
                                 if self.grouped else None)
        #: real path of a file -> the records (indices into the candidates) that read it, at any
        #: point of the fixing: a record that no longer reads it is re-analysed for nothing, never missed
        self.readers: dict[str, set[int]] = {}
        #: record -> the real paths, and the display names, of the files it read (at any point of the fixing)
        self.reads: dict[int, set[str]] = {}
        self.read_names: dict[int, set[str]] = {}
        #: records analysed together, reading none of the other records' files of their lint -> each
        #: time: the texts that stood for the files they read (real path -> text; None: the disk's),
        #: and their results
        self._analyses: dict[tuple[int, ...], list[tuple[dict[str, str | None], list[FileResult]]]] = {}
        self._real_paths: dict[str, str] = {}
        #: the display names of the texts that stood for files in any try, by the loader's key and
        #: by real path of their files (:meth:`_index_texts`)
        self._indexed_displays: set[str] = set()
        self._display_by_key: dict[str, str] = {}
        self._display_by_real: dict[str, str] = {}
        #: the display names of those texts whose files may be version pin files
        self._pin_file_displays: set[str] = set()
        #: record -> the files it touched (:func:`touched`) in any lint of the fixing, and the reverse
        self.touched: dict[int, set[str]] = {}
        self.touchers: dict[str, set[int]] = {}
        #: lints run (the first included), records analysed, and records assembled (the whole
        #: project's assemblies included), for the tests' accounting
        self.runs = 0
        self.analysed = 0
        self.assembled = 0

    def first(self, buffers: Iterable[SourceFile] = ()) -> tuple[ProjectLint, RecordingLoader]:
        """The lint of the files as they are on disk (or as ``buffers`` stand for them), and the
        loader that read them."""
        # texts standing for files may change a pin file the run read
        loader = self._paths = self._new_loader(pins=not buffers)
        for source in buffers:
            loader.put(source)
        self.runs += 1
        taken = {} if buffers else self._taken_from_the_run(loader)
        fresh = [index for index in range(len(self.candidates)) if index not in taken]
        found = dict(zip(fresh, self._analyse(fresh, loader), strict=True))
        for index, analysed in taken.items():
            found[index] = analysed.result
            self._note(index, analysed.requested, analysed.result, loader)
            for name in analysed.requested:
                loader.load(name)  # the texts the fixing starts from, as an analysis here would hold them
        records = [found[index] for index in range(len(self.candidates))]
        # a result taken from the run is the one an analysis here gives when no other file of this
        # lint read the files it read: only through those does one analysis leave something for the
        # next (compose services already reported). Else its files are analysed together, as ever
        together = [index for index in taken if any(len(self.readers[path]) > 1 for path in self.reads[index])]
        if together:
            linked = sorted(index for indices in linked_sets(range(len(records)), self.reads.__getitem__)
                            if not set(indices).isdisjoint(together) for index in indices)
            again = RecordingLoader(self.root)
            again.share_paths(loader)
            for index, record in zip(linked, self._analyse(linked, again), strict=True):
                records[index] = record
        result = self._assemble(range(len(records)), records, loader)
        return ProjectLint(tuple(records), problems_by_file(problems(result)), result), loader

    def _new_loader(self, pins: bool = True) -> RecordingLoader:
        """A loader for a lint of the fixing that knows what the run's loader knows about paths:
        the files the fixing reads are the run's, which a fix edits but never creates or deletes;
        and, with ``pins``, the version pins the run found."""
        loader = RecordingLoader(self.root)
        if self._pin_listings is not None:
            share_pin_listings(loader, self._pin_listings)
        if self._run_loader is not None:
            loader.share_paths(self._run_loader)
            if pins:
                share_pins(loader, self._run_loader)
        return loader

    def _taken_from_the_run(self, loader: RecordingLoader) -> dict[int, AnalysedFile]:
        """The candidates (by index) whose analysis by the run is this lint's own: the same file,
        kind, configuration and rules."""
        taken: dict[int, AnalysedFile] = {}
        if not self.analysed_by_the_run:
            return taken
        for index, candidate in enumerate(self.candidates):
            analysed = self.analysed_by_the_run.get(loader.display(candidate.path))
            if (analysed is not None and analysed.kind == candidate.kind and analysed.group == candidate.group
                    and analysed.rules == self.groups[candidate.group].codes):
                taken[index] = analysed
        return taken

    def again(self, before: ProjectLint, texts: dict[str, SourceFile], changed: Iterable[SourceFile]) -> ProjectLint:
        """The lint of the project with ``texts`` (every file whose text differs from the disk's)
        standing for their files, where ``before`` was its lint with the ``changed`` files' previous
        texts. Only the records the change reaches are analysed again, and only those linked to them
        through the files they touch are assembled (see the module docstring)."""
        self.runs += 1
        affected = self.reaching([source.path for source in changed])
        analysed, loader = self._analyse_again(affected, texts)
        records = list(before.records)
        for index, record in zip(affected, analysed, strict=True):
            records[index] = record
        together = self._linked(affected)
        files = frozenset(name for index in together for name in self.touched.get(index, ()))
        assembled = self._assemble(together, records, loader)
        part = problems(assembled)
        # copied whole and the reassembled files taken out: a try reassembles a few of thousands
        files_problems = dict(before.by_file)
        for name in files & files_problems.keys():
            del files_problems[name]
        files_problems.update(problems_by_file(part))

        def whole() -> LintResult:
            return self._assemble(range(len(records)), records, loader)

        # a try linked to every record (a batch's first, which fixes every file) has assembled the
        # whole project: the lint of its pass's fixes, not assembled again
        result = assembled if len(together) == len(records) else whole
        return ProjectLint(tuple(records), files_problems, result, files, part)

    def _loader(self, texts: dict[str, SourceFile]) -> RecordingLoader:
        loader = RecordingLoader(self.root)
        # the file system's shape is asked once per fixing: each try has thousands of texts to seed,
        # of which it reads a few, so they are handed over as they are, each taken when read
        loader.share_paths(self._paths)
        share_pin_listings(loader, self._paths)
        self._index_texts(texts, loader)
        if not any(display in texts for display in self._pin_file_displays):
            share_pins(loader, self._paths)  # every pin file has the text the first lint read
        loader.stand_in(texts, self._display_by_key)
        return loader

    def _index_texts(self, texts: dict[str, SourceFile], loader: RecordingLoader) -> None:
        """Note the loader's key and the real path of the files of ``texts`` not seen before in
        the fixing (a file's text changes from try to try, its path does not)."""
        for display in texts.keys() - self._indexed_displays:
            path = texts[display].path
            self._display_by_key[loader.key_of(texts[display])] = display
            self._display_by_real[self._real(path)] = display
            self._indexed_displays.add(display)
            if may_be_pin_file(path):
                self._pin_file_displays.add(display)

    def _text_standing_for(self, texts: dict[str, SourceFile], real: str) -> str | None:
        """The text in ``texts`` that stands for the file whose real path is ``real`` (None: the disk's)."""
        display = self._display_by_real.get(real)
        source = texts.get(display) if display is not None else None
        return source.text if source is not None else None

    def _analyse_again(self, affected: list[int], texts: dict[str, SourceFile]) -> tuple[list[FileResult], RecordingLoader]:
        """The results of the ``affected`` records (ascending) with ``texts`` standing for their
        files, and the loader that read them. Records that read none of the other affected records'
        files are analysed independently of them (what one analysis leaves in the loader for the
        next -- compose services reported, version pins -- goes with the files both read); so a set
        of such records whose files all have the texts of an earlier analysis of that very set is
        not analysed again. It saves the second analysis of a refused try's innocent part: tried on
        its own next, with the texts it had in the whole try; and of a refused pair's second fix,
        tried after the first with the texts of the pair."""
        loader = self._loader(texts)

        def stands_for(real: str) -> str | None:
            return self._text_standing_for(texts, real)

        known: dict[int, FileResult] = {}
        for records in self._independent(affected):
            earlier = self._same_analysis(records, stands_for)
            if earlier is not None:
                known.update(zip(records, earlier, strict=True))
        fresh = [index for index in affected if index not in known]
        results = self._analyse_shared(fresh, loader, texts)
        fresh_set = set(fresh)
        if any(self.readers[path] & fresh_set for index in known for path in self.reads[index]):
            # a new text made a record read the files of one taken as known: analysed together, as ever
            known = {}
            loader = self._loader(texts)
            fresh = affected
            results = dict(zip(fresh, self._analyse(fresh, loader), strict=True))
        for records in self._independent(fresh):
            read = {path for index in records for path in self.reads[index]}
            self._analyses.setdefault(tuple(records), []).append(({path: stands_for(path) for path in read},
                                                                  [results[index] for index in records]))
        return [known[index] if index in known else results[index] for index in affected], loader

    def _analyse_shared(self, fresh: list[int], loader: RecordingLoader,
                        texts: dict[str, SourceFile]) -> dict[int, FileResult]:
        """The results of the ``fresh`` records (ascending) with ``texts`` standing for their files.
        With several processes and many records (the first try of a pass: every file it fixes),
        the sets of records that read none of each other's files are shared out between this
        process (through ``loader``) and forked ones, each through a loader of its own: those sets
        are analysed independently in any case. When the new texts made records of two shares read
        the same file, the records are analysed again here, together."""
        if self.processes < 2 or len(fresh) < SHARED_FROM or not hasattr(os, "fork"):
            return dict(zip(fresh, self._analyse(fresh, loader), strict=True))
        shares: list[list[int]] = [[] for _ in range(self.processes)]
        for records in sorted(self._independent(fresh), key=len, reverse=True):
            min(shares, key=len).extend(records)
        here, *others = (sorted(share) for share in shares)
        elsewhere = [share for share in others if share]
        if not elsewhere:  # one set of records reading each other's files: nothing to share
            return dict(zip(fresh, self._analyse(fresh, loader), strict=True))
        results = self._analysed_elsewhere(elsewhere, texts,
                                           lambda: dict(zip(here, self._analyse(here, loader), strict=True)), loader)
        share_of = {index: number for number, share in enumerate(shares) for index in share}
        if any(len({share_of[index] for index in records}) > 1 for records in self._independent(fresh)):
            return dict(zip(fresh, self._analyse(fresh, self._loader(texts)), strict=True))
        return results

    def _analysed_elsewhere(self, shares: list[list[int]], texts: dict[str, SourceFile],
                            meanwhile: Callable[[], dict[int, FileResult]],
                            loader: RecordingLoader) -> dict[int, FileResult]:
        """The results of the records of ``shares``, each analysed by a forked process, with those
        ``meanwhile`` gives (the share of this process, analysed while they work). A share whose
        process failed is analysed here, as :mod:`mtplint.parallel` does."""
        global _fixing
        import multiprocessing  # noqa: PLC0415 - --jobs with a large try only
        from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415 - --jobs with a large try only

        from mtplint.result_pickle import load_result  # noqa: PLC0415 - --jobs with a large try only

        _fixing = (self, texts)  # what the forked processes inherit
        try:
            with ProcessPoolExecutor(len(shares), multiprocessing.get_context("fork")) as pool:
                futures = [pool.submit(_analyse_share, share) for share in shares]
                results = meanwhile()
                for share, future in zip(shares, futures, strict=True):
                    try:
                        answers = future.result()
                    except Exception:  # analysed here, where a failure is reported as ever
                        results.update(zip(share, self._analyse(share, loader), strict=True))
                        continue
                    for index, (data, requested) in zip(share, answers, strict=True):
                        record = load_result(data, self.groups[self.candidates[index].group])
                        self.analysed += 1
                        self._note(index, requested, record, loader)
                        results[index] = record
        finally:
            _fixing = None
        return results

    def _independent(self, indices: list[int]) -> list[list[int]]:
        """``indices`` (ascending) in sets that read none of each other's files, in any lint of the fixing."""
        return linked_sets(indices, lambda index: self.reads.get(index, ()))

    def _same_analysis(self, records: list[int], stands_for: Callable[[str], str | None]) -> list[FileResult] | None:
        """The results of an earlier analysis of these ``records`` (and no others) when every file
        they read then has the same text now (``stands_for``: a file's text now, by real path; None:
        the disk's): a refused pair's second fix tried after its first has the texts of the pair."""
        for texts, results in self._analyses.get(tuple(records), ()):
            if all(stands_for(path) == text for path, text in texts.items()):
                return results
        return None

    def _analyse(self, indices: Iterable[int], loader: RecordingLoader) -> list[FileResult]:
        """The results of the candidates at ``indices`` (ascending), read through ``loader``; notes
        what each read."""
        records = []
        for index in indices:
            candidate = self.candidates[index]
            group = self.groups[candidate.group]
            records.append(analyse_file(candidate, loader, group))
            self.analysed += 1
            self._note(index, loader.requested, records[-1], loader)
        return records

    def _note(self, index: int, requested: Iterable[str], record: FileResult, loader: RecordingLoader) -> None:
        """Note what the record at ``index`` read (the ``requested`` paths besides its own file) and touched."""
        read = [self.candidates[index].path, *requested]
        real = {self._real(path) for path in read}
        self.reads.setdefault(index, set()).update(real)
        for path in real:
            self.readers.setdefault(path, set()).add(index)
        self.read_names.setdefault(index, set()).update(map(loader.display, read))
        files = touched(record)
        self.touched.setdefault(index, set()).update(files)
        for name in files:
            self.touchers.setdefault(name, set()).add(index)

    def shown(self, result: LintResult) -> LintResult:
        """``result`` without the findings of the rules checked only for the fixing's sake."""
        if not self.hidden_codes:
            return result
        return LintResult([f for f in result.findings if f.code not in self.hidden_codes],
                          [f for f in result.suppressed if f.code not in self.hidden_codes], result.pipeline,
                          result.rules)

    def _assemble(self, indices: Iterable[int], records: Sequence[FileResult], loader: RecordingLoader) -> LintResult:
        """The assembly of the ``records`` at ``indices`` (ascending), as a run of those files."""
        chosen = [(records[index], self.candidates[index].group) for index in indices]
        self.assembled += len(chosen)
        return assemble(chosen, self.groups, len(chosen), sum(record.skipped for record, _ in chosen), self.tree,
                        loader, self.candidate_groups)

    def _linked(self, indices: Iterable[int]) -> list[int]:
        """The records (ascending) linked to those at ``indices`` through the files they touched, at
        any point of the fixing: what a change of those records may change the assembly of."""
        linked = set(indices)
        pending = list(linked)
        seen: set[str] = set()
        while pending:
            for name in self.touched.get(pending.pop(), set()) - seen:
                seen.add(name)
                for index in self.touchers[name] - linked:
                    linked.add(index)
                    pending.append(index)
        return sorted(linked)

    def reaching(self, changed: Iterable[str]) -> list[int]:
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

    def reach(self, changed: Iterable[str]) -> set[str]:
        """The files (display names) where a change of the ``changed`` files may move a finding:
        those read by the records it may change."""
        return {name for index in self.reaching(changed) for name in self.read_names.get(index, ())}

    def _real(self, path: str) -> str:
        real = self._real_paths.get(path)
        if real is None:
            # ``os.path.realpath``, answered by the folders the fixing's loaders have resolved (one
            # ``lstat`` for a file rather than one per folder of its path)
            real = self._real_paths[path] = self._paths.real_path(path)
        return real



#: the fixing whose records a forked process analyses (:meth:`ProjectLinter._analysed_elsewhere`)
_fixing: tuple[ProjectLinter, dict[str, SourceFile]] | None = None


def _analyse_share(indices: list[int]) -> list[tuple[bytes, tuple[str, ...]]]:
    """In a forked process: each record at ``indices`` (ascending) analysed with the fixing's texts,
    as its result pickled and the files it asked for."""
    from mtplint.result_pickle import dump_result  # noqa: PLC0415 - --jobs with a large try only

    if _fixing is None:
        raise RuntimeError("not a forked process of a fixing")  # the share is analysed in the parent
    linter, texts = _fixing
    loader = linter._loader(texts)
    done = []
    for index in indices:
        candidate = linter.candidates[index]
        record = analyse_file(candidate, loader, linter.groups[candidate.group])
        done.append((dump_result(record), tuple(loader.requested)))
    return done
