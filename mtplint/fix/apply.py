"""The fix engine: apply the findings' fixes to a fixed point, in memory, and keep only good ones.

``mtplint check --fix`` (and ``--diff``, ``--fix-only``) runs :func:`fix_project`:

1. lint the paths; every finding whose fix is applicable (``safe``, or ``unsafe`` with
   ``--unsafe-fixes``; ``display-only`` never) is a candidate. A fix is all its edits or none.
2. take the candidates that do not overlap (nor touch) an edit already taken, in file order, and
   apply them in one pass with :func:`mtplint.fix.apply_edits` -- edits are on the text as read, so
   every byte outside them stays as it was.
3. re-lint the same paths *in memory*: the new texts are seeded into the :class:`FileLoader`, the
   disk is not written, and only the files the edits reach are linted again
   (:class:`mtplint.fix.relint.ProjectLinter`). When the pass made a file unparsable (a new MTP001),
   crashed the pipeline, produced a finding that was not there before (the engine's rejection of
   the new argv, MTP509, counts whether or not it is selected), or left a fixed finding in place,
   the fixes that cannot have caused it are kept together and the suspects tried in smaller
   groups, down to each fix that does so on its own, which is dropped (reported as a
   :class:`RejectedFix`); the others stay. A new finding
   that carries a fix this run applies is not damage: it is the next pass's candidate (rewriting
   removed flags into a ``--speculative-config`` brings the deprecated alias inside it into play,
   and that alias is fixed next), and if its own fix is dropped, that is reported in turn.
4. repeat from 1 on the new texts until no candidate is left (or :data:`MAX_PASSES`): a fix deferred
   because it overlapped another gets its turn against the new text. A fix offered again right
   after it was applied is refused, and the fixing starts again from the files as read without it:
   nothing written contains it, so a second ``--fix`` changes nothing. A fix whose own edits
   overlap, fall outside its file or edit inside a substituted reference (``$(VAR)``, ``${VAR}``,
   ``$VAR``, systemd ``%i``: :mod:`mtplint.edits.substitution`) is refused before it is tried.

So one rule decides what is written: a file is written only with fixes that each re-lint and
re-parse cleanly (the text parses as its kind, the fixed finding is gone, nothing new appears,
and a second pass changes nothing). :mod:`mtplint.fix.verify` uses the same run to count as
fixable only what ``--fix`` applies.

Inserted line breaks follow the file's line ending (``SourceFile.newline``), so a CRLF file stays CRLF.

Nothing here writes files: :mod:`mtplint.fix.write` does, after the whole run.
"""

from __future__ import annotations

import itertools
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from mtplint.analysed import AnalysedFile
from mtplint.checks import Edit, Finding, Fix, applies
from mtplint.config import LintSettings
from mtplint.edits.pyedit import resolved
from mtplint.edits.substitution import edits_substituted, source_kind
from mtplint.extract import FileLoader
from mtplint.fix import apply_edits
from mtplint.fix.relint import Problem, ProjectLint, ProjectLinter, linked_sets
from mtplint.fix.scope import WriteScope
from mtplint.lint import LintResult
from mtplint.records import FrozenRecord, Record
from mtplint.source import SourceFile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

#: passes before giving up on a fixed point (ruff stops at 100; a launch has few findings)
MAX_PASSES = 10


class AppliedFix(FrozenRecord):
    """A fix that is in the final text. ``finding`` is as reported in the pass that applied it."""

    __slots__ = ("finding", "pass_number")
    finding: Final[Finding]
    pass_number: Final[int]

    def __init__(self, finding: Finding, pass_number: int) -> None:
        self.finding = finding
        self.pass_number = pass_number


class RejectedFix(FrozenRecord):
    """A fix that was dropped, and why (shown to the user; the finding stays)."""

    __slots__ = ("finding", "reason")
    finding: Final[Finding]
    reason: Final[str]

    def __init__(self, finding: Finding, reason: str) -> None:
        self.finding = finding
        self.reason = reason


class FixRun(Record):
    """The outcome of fixing: the new texts (nothing written yet) and what happened to each fix."""

    __slots__ = ("originals", "texts", "applied", "rejected", "result", "initial", "passes", "converged", "read")
    #: every file that has a new text: its display name -> the file as first read from disk
    originals: dict[str, SourceFile]
    #: display name -> the fixed text (only files whose text changed)
    texts: dict[str, str]
    applied: list[AppliedFix]
    rejected: list[RejectedFix]
    #: the lint of the fixed texts (in memory): what remains
    result: LintResult
    #: the lint of the files as read, before any fix
    initial: LintResult
    passes: int
    #: False when :data:`MAX_PASSES` ran out with fixes still applicable
    converged: bool
    #: the real paths of the files the fixing read from disk (what its outcome depends on)
    read: tuple[str, ...]

    def __init__(self, originals: dict[str, SourceFile], texts: dict[str, str], applied: list[AppliedFix],
                 rejected: list[RejectedFix], result: LintResult, initial: LintResult, passes: int = 0,
                 converged: bool = True) -> None:
        self.originals = originals
        self.texts = texts
        self.applied = applied
        self.rejected = rejected
        self.result = result
        self.initial = initial
        self.passes = passes
        self.converged = converged
        self.read = ()

    def changed(self) -> list[tuple[SourceFile, str]]:
        """(file as read, new text) for each file a fix changed, in file-name order."""
        return [(self.originals[name], self.texts[name]) for name in sorted(self.texts)
                if name in self.originals and self.texts[name] != self.originals[name].text]


# --- choosing the fixes of a pass ----------------------------------------------------------------


def _edit_signature(edit: Edit, text: str) -> tuple[str, str, str]:
    return edit.span.file, text[edit.span.start:edit.span.end], edit.content


class _Candidate(FrozenRecord):
    __slots__ = ("finding", "fix", "identity")
    finding: Final[Finding]
    fix: Final[Fix]
    #: what the fix does, independent of where: its code, message and (file, replaced text, new text)
    identity: Final[tuple[object, ...]]

    def __init__(self, finding: Finding, fix: Fix, identity: tuple[object, ...]) -> None:
        self.finding = finding
        self.fix = fix
        self.identity = identity


def _candidates(findings: Iterable[Finding], unsafe: bool, texts: Callable[[str], SourceFile | None],
                refused: set[tuple[object, ...]], malformed: list[RejectedFix]) -> list[_Candidate]:
    """The applicable fixes, in file order; a fix that cannot be applied as a whole goes to
    ``malformed`` (once: its identity joins ``refused``)."""
    found: list[_Candidate] = []
    for finding in findings:
        fix = finding.fix
        if fix is None or not applies(fix, unsafe):
            continue
        placed = resolved(fix, texts)
        if placed is None:
            # a Python edit libcst found no safe place for, in the code as it now stands
            unplaced: tuple[object, ...] = (finding.code, fix.message, "unplaced", tuple(map(repr, fix.edits)))
            if unplaced not in refused:
                refused.add(unplaced)
                malformed.append(RejectedFix(finding, "the code is not written in a way the fix can edit safely"))
            continue
        fix = placed
        sources = [texts(edit.span.file) for edit in fix.edits]
        problem = None
        if any(source is None for source in sources):
            problem = "it edits a file that was not read"
        elif any(source is not None and not 0 <= edit.span.start <= edit.span.end <= len(source.text)
                 for edit, source in zip(fix.edits, sources, strict=True)):
            problem = "an edit lies outside the file"
        elif _overlaps_itself(fix.edits):
            problem = "its edits overlap each other (a fix is all its edits or none)"
        elif (reference := _substituted_reference(fix.edits, sources)) is not None:
            problem = (f"it would edit inside `{reference}`, which is substituted before the engine reads the "
                       "argument")
        if problem is not None:
            identity: tuple[object, ...] = (finding.code, fix.message, "malformed", tuple(
                (e.span.file, e.span.start, e.span.end, e.content) for e in fix.edits))
            if identity not in refused:
                refused.add(identity)
                malformed.append(RejectedFix(finding, f"{problem}; this is a bug in the rule's fix"))
            continue
        conformed = Fix(fix.applicability, fix.message,
                        [Edit(edit.span, conform_newlines(edit.content, source.newline))
                         for edit, source in zip(fix.edits, sources, strict=True) if source is not None])
        signature = tuple(_edit_signature(edit, source.text)
                          for edit, source in zip(conformed.edits, sources, strict=True) if source is not None)
        identity = (finding.code, fix.message, signature)
        if identity in refused:
            continue
        found.append(_Candidate(finding, conformed, identity))
    found.sort(key=lambda c: (c.finding.sort_key(), min((e.span.file, e.span.start) for e in c.fix.edits)))
    return found


def _substituted_reference(edits: Sequence[Edit], sources: Sequence[SourceFile | None]) -> str | None:
    """The substituted reference (``$(TP)``, ``${PORT}``, ``$VAR``, systemd ``%i``) one of the
    ``edits`` would change, if any: the argument the engine reads is what the kubelet, compose,
    the shell or systemd make of it, so an edit there does not say what the fix means."""
    for edit, source in zip(edits, sources, strict=True):
        if source is None:
            continue
        kind = source_kind(source)
        if kind == "python":
            continue  # a Python string is not substituted (``shell=True`` scripts aside, not edited)
        reference = edits_substituted(source.text, edit.span.start, edit.span.end, edit.content, kind == "systemd")
        if reference is not None:
            return reference
    return None


def _overlaps_itself(edits: Sequence[Edit]) -> bool:
    ordered = sorted(edits, key=lambda e: (e.span.file, e.span.start, e.span.end))
    return any(a.span.file == b.span.file and b.span.start < a.span.end for a, b in itertools.pairwise(ordered))


def _conflicts(edit: Edit, taken: Sequence[Edit]) -> bool:
    """Overlapping or touching ranges conflict (two insertions at one point have no defined order;
    a replacement next to another is safer re-checked against the new text on the next pass)."""
    return any(edit.span.file == other.span.file and edit.span.start <= other.span.end
               and other.span.start <= edit.span.end for other in taken)


def _non_overlapping(candidates: Sequence[_Candidate]) -> list[_Candidate]:
    chosen: list[_Candidate] = []
    #: the edits taken in each file: an edit conflicts only with those of its own file (a pass over
    #: a tree offers thousands, and comparing each with all of them grew with the square)
    taken_in: dict[str, list[Edit]] = {}
    identities: set[tuple[object, ...]] = set()
    for candidate in candidates:
        if candidate.identity in identities and all(e in taken_in.get(e.span.file, ()) for e in candidate.fix.edits):
            continue  # the same edits, offered by two findings: applied once
        if any(_conflicts(edit, taken_in.get(edit.span.file, ())) for edit in candidate.fix.edits):
            continue  # retried on the next pass, against the new text
        chosen.append(candidate)
        for edit in candidate.fix.edits:
            taken_in.setdefault(edit.span.file, []).append(edit)
        identities.add(candidate.identity)
    return chosen


def _left_out(candidates: Sequence[_Candidate], chosen: Sequence[_Candidate]) -> list[_Candidate]:
    """The candidates not in ``chosen`` (by equality, as ``not in``), in their order: compared only
    with the chosen of the same identity, not with every one of a tree's thousands."""
    by_identity: dict[tuple[object, ...], list[_Candidate]] = {}
    for candidate in chosen:
        by_identity.setdefault(candidate.identity, []).append(candidate)
    return [candidate for candidate in candidates
            if not any(other is candidate or other == candidate for other in by_identity.get(candidate.identity, ()))]


def _same_edits_taken(candidate: _Candidate, applied: Sequence[_Candidate]) -> bool:
    """``candidate`` was left out of its pass only because an applied fix made the same edits."""
    return any(other.identity == candidate.identity and other.fix.edits == candidate.fix.edits for other in applied)


# --- applying and checking -----------------------------------------------------------------------


def conform_newlines(content: str, newline: str) -> str:
    """Inserted text uses the file's line ending (a CRLF file stays CRLF)."""
    if "\n" not in content and "\r" not in content:
        return content
    return content.replace("\r\n", "\n").replace("\n", newline)


class _State(Record):
    """The texts as they stand after the passes so far (changed files only), and their lint."""

    __slots__ = ("texts", "lint", "disk", "_read")
    texts: dict[str, SourceFile]
    lint: ProjectLint
    #: the files as first read, for the ones no fix has touched yet
    disk: FileLoader
    #: display name -> the file as first read
    _read: dict[str, SourceFile | None]

    def __init__(self, texts: dict[str, SourceFile], lint: ProjectLint, disk: FileLoader,
                 read: dict[str, SourceFile | None] | None = None) -> None:
        self.texts = texts
        self.lint = lint
        self.disk = disk
        self._read = read if read is not None else {}

    @property
    def result(self) -> LintResult:
        return self.lint.result

    def as_read(self, name: str) -> SourceFile | None:
        """The file as first read from disk."""
        if name not in self._read:
            self._read[name] = self.disk.by_display(name)
        return self._read[name]

    def source(self, name: str) -> SourceFile | None:
        return self.texts.get(name) or self.as_read(name)

    def findings_saying(self, code: str, file: str, message: str) -> list[Finding]:
        """The findings of the current lint with this code, file and message, in order."""
        return [finding for finding in self.lint.findings_in([file])
                if finding.code == code and finding.message == message]

    def moved_on(self, texts: dict[str, SourceFile], lint: ProjectLint) -> _State:
        return _State(texts, lint, self.disk, self._read)


def _apply(state: _State, edits: Sequence[Edit]) -> tuple[dict[str, SourceFile], dict[str, list[Edit]]]:
    """The new sources (unchanged files are not in the result) and the edits applied per file."""
    by_file: dict[str, list[Edit]] = {}
    for edit in edits:
        by_file.setdefault(edit.span.file, []).append(edit)
    new_sources: dict[str, SourceFile] = {}
    applied_edits: dict[str, list[Edit]] = {}
    for name, file_edits in by_file.items():
        source = state.source(name)
        if source is None:
            continue
        new_text, applied = apply_edits(source.text, file_edits)
        applied_edits[name] = applied
        if new_text != source.text:
            new_sources[name] = source.edited(new_text)
    return new_sources, applied_edits


def _shifted(edit: Edit, accepted: Sequence[Edit], source: SourceFile) -> Edit:
    """``edit`` (offsets of the pass's starting text) moved past the ``accepted`` edits already
    applied to ``source`` this pass; they neither overlap nor touch it (see :func:`_conflicts`)."""
    delta = sum(len(other.content) - (other.span.end - other.span.start) for other in accepted
                if other.span.file == edit.span.file and other.span.end <= edit.span.start)
    return Edit(source.span(edit.span.start + delta, edit.span.end + delta), edit.content)


def _back_mapper(edits: Sequence[Edit]) -> Callable[[int], int]:
    """Maps an offset of the edited text to the offset it had before the edits (text an edit
    inserted maps to the start of that edit)."""
    segments: list[tuple[int, int, int, int]] = []
    shift = 0
    for edit in sorted(edits, key=lambda e: (e.span.start, e.span.end)):
        new_start = edit.span.start + shift
        new_end = new_start + len(edit.content)
        segments.append((new_start, new_end, edit.span.start, edit.span.end))
        shift += len(edit.content) - (edit.span.end - edit.span.start)

    def mapped(offset: int) -> int:
        delta = 0
        for new_start, new_end, old_start, old_end in segments:
            if offset < new_start:
                return offset - delta
            if offset < new_end:
                return old_start
            delta = new_end - old_end
        return offset - delta

    return mapped


def _new_problems(before: Sequence[tuple[Problem, Finding | None]], after: Sequence[tuple[Problem, Finding | None]],
                  edits: dict[str, list[Edit]], fixed: Sequence[Finding], unsafe: bool) -> list[Problem]:
    """What ``after`` has that ``before`` had not (the problems of two lints,
    :func:`mtplint.fix.relint.problems`, in the files a change may have moved them in: the others'
    are the same in both). A problem is the same as one before when its
    code, file, position (mapped back through the edits) and message match; or -- unless it is a
    finding a fix just applied was meant to remove -- its code, file and position, or its code, file
    and message (a message naming a value, a finding moved by an inserted line). Each problem before
    matches one after at most, the first in order of those that fit."""
    mappers = {name: _back_mapper(file_edits) for name, file_edits in edits.items()}
    pool = before
    fixed_ids = {id(finding) for finding in fixed}
    meant_to_go = [finding is not None and id(finding) in fixed_ids for _, finding in pool]
    used = [False] * len(pool)
    # indices into the pool, in order, by the whole problem and by (code, file): a project has
    # thousands of problems, and each try of a fix compares them all
    exactly: dict[Problem, list[int]] = {}
    by_file: dict[tuple[str, str], list[int]] = {}
    for index, (problem, _) in enumerate(pool):
        exactly.setdefault(problem, []).append(index)
        by_file.setdefault(problem[:2], []).append(index)
    added: list[Problem] = []
    for problem, finding in after:
        if finding is not None and finding.severity == "info":
            # a note (MTP003: a check that could not run; MTP301 under the latency objective) is not damage:
            # turning speculation on, as MTP113's fix does, rightly makes "no GPU identity" appear
            continue
        if finding is not None and applies(finding.fix, unsafe):
            # fixed on the next pass (see the module docstring), or reported when its fix is dropped
            continue
        code, file, offset, message = problem
        mapper = mappers.get(file)
        original = (code, file, mapper(offset) if mapper is not None and offset >= 0 else offset, message)
        match = next((i for i in exactly.get(original, ()) if not used[i]), None)
        if match is None:
            match = next((i for i in by_file.get((code, file), ()) if not used[i] and not meant_to_go[i]
                          and (pool[i][0][2] == original[2] or pool[i][0][3] == message)), None)
        if match is None:
            added.append(problem)
        else:
            used[match] = True
    return added


def _describe(problems: Sequence[Problem]) -> str:
    first = problems[0]
    code, file, _, message = first
    if code == "unresolved":
        text = f"applying it does not resolve the finding ({message} is still reported); not written"
    elif code == "MTP001":
        text = f"the result no longer parses ({file}: {message})"
    elif code == "internal":
        text = f"the result cannot be read ({message})"
    else:
        text = f"the result has a new finding ({code} in {file}: {message})"
    if len(problems) > 1:
        text += f" and {len(problems) - 1} more"
    return text


def _current(finding: Finding, accepted: Sequence[Edit], state: _State) -> list[Finding]:
    """``finding`` (of the pass's starting text) as the lint of the current text reports it, after
    the ``accepted`` edits of the pass: same code, file and message, its start moved past them."""
    delta = sum(len(edit.content) - (edit.span.end - edit.span.start) for edit in accepted
                if edit.span.file == finding.span.file and edit.span.end <= finding.span.start)
    start = finding.span.start + delta
    same = state.findings_saying(finding.code, finding.span.file, finding.message)
    return [f for f in same if f.span.start == start][:1] or same[:1]


class _Outcome(Record):
    __slots__ = ("applied", "rejected")
    applied: list[_Candidate]
    rejected: list[tuple[_Candidate, str]]

    def __init__(self) -> None:
        self.applied = []
        self.rejected = []


def _try(state: _State, chosen: Sequence[_Candidate], relint: ProjectLinter, unsafe: bool,
         moved: tuple[Sequence[Edit], Sequence[Finding]] | None = None) -> tuple[_State, list[Problem]]:
    """Apply the ``chosen`` fixes together; the new state, or the old one and the problems that
    made the result refused. ``moved``: their edits and findings as they stand in the current text, when earlier
    fixes of the pass have already changed it."""
    if moved is None:
        edits: Sequence[Edit] = [edit for candidate in chosen for edit in candidate.fix.edits]
        findings: Sequence[Finding] = [candidate.finding for candidate in chosen]
    else:
        edits, findings = moved
    new_sources, applied = _apply(state, edits)
    if not new_sources:
        return state, []
    texts = {**state.texts, **new_sources}
    linted = relint.again(state.lint, texts, new_sources.values())
    changed_edits = {name: applied[name] for name in new_sources}
    # only the files the new lint assembled again can differ from the previous one
    added = _new_problems(state.lint.problems_in(linted.reassembled), linted.part, changed_edits, findings, unsafe)
    added.extend(_still_there(findings, linted.findings_in({finding.span.file for finding in findings}),
                              changed_edits))
    if added:
        return state, added
    return state.moved_on(texts, linted), []


def _still_there(fixed: Sequence[Finding], after: Sequence[Finding], edits: dict[str, list[Edit]]) -> list[Problem]:
    """The ``fixed`` findings that the findings ``after`` the fix (those of their files) still
    report: same code, file and message, at the place the finding was (mapped back through the
    edits). Such a fix does not do what it says, and a second ``--fix`` would apply it again."""
    mappers = {name: _back_mapper(file_edits) for name, file_edits in edits.items()}
    wanted = {(f.code, f.span.file, f.span.start, f.message) for f in fixed}
    remaining: list[Problem] = []
    for finding in after:
        mapper = mappers.get(finding.span.file)
        start = mapper(finding.span.start) if mapper is not None else finding.span.start
        key = (finding.code, finding.span.file, start, finding.message)
        if key in wanted:
            wanted.discard(key)
            remaining.append(("unresolved", finding.span.file, finding.span.start, finding.code))
    return remaining


def _pass(state: _State, chosen: Sequence[_Candidate], relint: ProjectLinter,
          unsafe: bool) -> tuple[_State, _Outcome]:
    outcome = _Outcome()
    state = _settle(state, chosen, [], relint, unsafe, outcome)
    # in the order of the pass, whichever part of it they were tried in
    order = {id(candidate): index for index, candidate in enumerate(chosen)}
    outcome.applied.sort(key=lambda candidate: order[id(candidate)])
    outcome.rejected.sort(key=lambda item: order[id(item[0])])
    return state, outcome


def _settle(state: _State, group: Sequence[_Candidate], accepted: list[Edit], relint: ProjectLinter,
            unsafe: bool, outcome: _Outcome) -> _State:
    """Try the ``group`` of fixes of the pass together, after the ``accepted`` ones (which it
    extends). When the result is refused, one of them (or a combination) is bad: the fixes that
    cannot have caused it are tried on their own, and the suspects in smaller groups, down to the
    single fix refused on its own -- so that with k bad fixes among n it takes about k log n tries
    rather than n (each one a lint of what the fixes change)."""
    movable = []
    moved_edits: list[Edit] = []
    moved_findings: list[Finding] = []
    for candidate in group:
        moved = []
        for edit in candidate.fix.edits:
            source = state.source(edit.span.file)
            if source is None:
                break
            moved.append(_shifted(edit, accepted, source))
        if len(moved) != len(candidate.fix.edits):
            continue
        movable.append(candidate)
        moved_edits.extend(moved)
        moved_findings.extend(_current(candidate.finding, accepted, state) if accepted else [candidate.finding])
    if not movable:
        return state
    tried, problems = _try(state, movable, relint, unsafe, (moved_edits, moved_findings))
    if not problems:
        outcome.applied.extend(movable)
        accepted.extend(edit for candidate in movable for edit in candidate.fix.edits)
        return tried
    if len(movable) == 1:
        outcome.rejected.append((movable[0], _describe(problems)))
        return state
    for part in _parts(state, movable, problems, relint):
        state = _settle(state, part, accepted, relint, unsafe, outcome)
    return state


def _parts(state: _State, group: Sequence[_Candidate], problems: Sequence[Problem],
           relint: ProjectLinter) -> list[list[_Candidate]]:
    """How to split a refused ``group``: the fixes none of whose changes reach a file where a new
    problem is, together (they are independent of the others, so the order in which the two are
    applied does not matter); then each set of suspects that reach the same files. When that does
    not narrow the group down, its halves."""
    reaches: list[set[str]] = []
    for candidate in group:
        paths = [source.path for source in map(state.source, {edit.span.file for edit in candidate.fix.edits})
                 if source is not None]
        reaches.append(relint.reach(paths) | {edit.span.file for edit in candidate.fix.edits})
    # fixes whose reaches overlap may interact: one cluster
    clusters = linked_sets(range(len(group)), reaches.__getitem__)
    problem_files = {file for _, file, _, _ in problems}
    if all(any(file in reach for reach in reaches) for file in problem_files):
        suspects = [cluster for cluster in clusters if any(reaches[index] & problem_files for index in cluster)]
        suspected = {index for cluster in suspects for index in cluster}
        innocent = [candidate for index, candidate in enumerate(group) if index not in suspected]
        suspect_parts = [[group[index] for index in cluster] for cluster in suspects]
        parts = [innocent, *suspect_parts] if innocent else suspect_parts
        if len(parts) > 1:
            return parts
    middle = len(group) // 2
    return [list(group[:middle]), list(group[middle:])]


def _within(relint: ProjectLinter, candidates: list[_Candidate], state: _State, refused: set[tuple[object, ...]],
            rejected: list[RejectedFix]) -> list[_Candidate]:
    """The candidates whose edits all fall in files ``--fix`` may write (the files ``relint``
    lints); the others are refused (reported once, with the reason)."""
    scope = WriteScope(candidate.path for candidate in relint.candidates)
    kept = []
    for candidate in candidates:
        sources = [source for source in map(state.source, {edit.span.file for edit in candidate.fix.edits})
                   if source is not None]
        reason = scope.refusal(sources)
        if reason is None:
            kept.append(candidate)
        else:
            refused.add(candidate.identity)
            rejected.append(RejectedFix(candidate.finding, reason))
    return kept


def fix_project(paths: Sequence[str | os.PathLike[str]], settings: LintSettings, *, unsafe: bool = False,
                max_passes: int = MAX_PASSES, buffers: Sequence[SourceFile] = (),
                analysed: Mapping[str, AnalysedFile] | None = None, processes: int = 1,
                pin_listings: FileLoader | None = None) -> FixRun:
    """Fix what can be fixed in ``paths``, in memory (see the module docstring). ``buffers``: texts
    that stand for their files, as read (an editor's unsaved buffers, ``mtplint server``);
    ``analysed``: a run's own analyses of some of the files, taken as they are; ``processes``: the
    run's, which share out large tries; ``pin_listings``: a loader that keeps what the fixing learns
    of long directory listings past it (see :class:`mtplint.fix.relint.ProjectLinter`)."""
    relint = ProjectLinter(paths, settings, analysed, processes, pin_listings)
    first, loader = relint.first(buffers)
    as_read = {source.display: source for source in buffers}
    rejected: list[RejectedFix] = []
    refused: set[tuple[object, ...]] = set()
    while True:
        run, applied_again = _fixed_point(_State(dict(as_read), first, loader), unsafe, max_passes, relint, refused,
                                          rejected)
        if not applied_again:
            run.result = relint.shown(run.result)
            run.initial = relint.shown(run.initial)
            run.read = tuple(relint.readers)
            return run
        # a fix that was applied and comes back must not be in what is written, nor anything built
        # on it: start again from the files as read, without it (each round refuses one more fix)


def _fixed_point(state: _State, unsafe: bool, max_passes: int, relint: ProjectLinter,
                 refused: set[tuple[object, ...]], rejected: list[RejectedFix]) -> tuple[FixRun, bool]:
    """The passes from the files as read (``state``); the run, and whether a fix that was applied
    in one pass was offered again in the next (then the run's texts contain it, and must not be
    used). ``refused`` and ``rejected`` accumulate across calls."""
    initial = state.result
    originals: dict[str, SourceFile] = {}
    applied: list[AppliedFix] = []
    #: identities applied last pass, and those left for later (deferred), to notice a fix that does
    #: not remove its finding (it would come back on every pass, and on every run)
    last_applied: Counter[tuple[object, ...]] = Counter()
    last_deferred: Counter[tuple[object, ...]] = Counter()
    passes = 0
    converged = False
    while True:
        candidates = _candidates(state.result.findings, unsafe, state.source, refused, rejected)
        offered = Counter(c.identity for c in candidates)
        applied_again = False
        for identity in offered:
            if last_applied[identity] and offered[identity] > last_deferred[identity]:
                refused.add(identity)
                finding = next(c.finding for c in candidates if c.identity == identity)
                rejected.append(RejectedFix(finding, "applying it does not resolve the finding (it would be "
                                            "applied again); not written"))
                applied_again = True
        if applied_again:
            return FixRun({}, {}, [], rejected, initial, initial, passes, False), True
        candidates = [c for c in candidates if c.identity not in refused]
        candidates = _within(relint, candidates, state, refused, rejected)
        chosen = _non_overlapping(candidates)
        if not chosen:
            converged = True
            break
        if passes == max_passes:
            break
        passes += 1
        for candidate in chosen:
            for edit in candidate.fix.edits:
                if edit.span.file not in originals:
                    source = state.as_read(edit.span.file)
                    if source is not None:
                        originals[edit.span.file] = source
        state, outcome = _pass(state, chosen, relint, unsafe)
        for candidate, reason in outcome.rejected:
            refused.add(candidate.identity)
            rejected.append(RejectedFix(candidate.finding, reason))
        applied.extend(AppliedFix(c.finding, passes) for c in outcome.applied)
        # a finding whose fix is the very edits another finding's applied fix made is fixed too
        made = {c.identity for c in outcome.applied}
        left = _left_out(candidates, chosen)
        applied.extend(AppliedFix(c.finding, passes) for c in left
                       if c.identity in made and _same_edits_taken(c, outcome.applied))
        last_applied = Counter(c.identity for c in outcome.applied)
        last_deferred = Counter(c.identity for c in left)
    texts = {name: source.text for name, source in state.texts.items()}
    for name in list(originals):
        if name not in texts:
            del originals[name]
    applied.extend(_resolved_along(initial, applied, state.result, unsafe, passes))
    return FixRun(originals, texts, applied, rejected, state.result, initial, passes, converged), False


def _resolved_along(initial: LintResult, applied: Sequence[AppliedFix], final: LintResult, unsafe: bool,
                    passes: int) -> list[AppliedFix]:
    """The findings of the files as read, with a fix of their own, that another fix resolved (MTP110
    and MTP102 both asking for ``--no-enable-prefix-caching``: one is applied, both are gone): fixed
    by ``--fix`` as much as the other, and counted so (found = fixed + remaining)."""
    # matched by code, file and message: a fix deferred to a later pass is applied to that pass's
    # finding, another object at another offset
    done = Counter((item.finding.code, item.finding.span.file, item.finding.message) for item in applied)
    remaining = Counter((f.code, f.span.file, f.message) for f in final.findings)
    resolved = []
    for finding in initial.findings:
        if not applies(finding.fix, unsafe):
            continue
        key = (finding.code, finding.span.file, finding.message)
        if done[key]:
            done[key] -= 1
        elif remaining[key]:
            remaining[key] -= 1
        else:
            resolved.append(AppliedFix(finding, max(passes, 1)))
    return resolved
