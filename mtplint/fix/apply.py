"""The fix engine: apply the findings' fixes to a fixed point, in memory, and keep only good ones.

``mtplint check --fix`` (and ``--diff``, ``--fix-only``) runs :func:`fix_project`:

1. lint the paths; every finding whose fix is applicable (``safe``, or ``unsafe`` with
   ``--unsafe-fixes``; ``display-only`` never) is a candidate. A fix is all its edits or none.
2. take the candidates that do not overlap (nor touch) an edit already taken, in file order, and
   apply them in one pass with :func:`mtplint.fix.apply_edits` -- edits are on the text as read, so
   every byte outside them stays as it was.
3. re-lint the same paths *in memory*: the new texts are seeded into the :class:`FileLoader`, the
   disk is not written. When the pass made a file unparsable (a new MTP001), crashed the pipeline,
   or produced a finding that was not there before, the pass is redone one fix at a time and each
   fix that does so is dropped (reported as a :class:`RejectedFix`); the others stay. A new finding
   that carries a fix this run applies is not damage: it is the next pass's candidate (rewriting
   removed flags into a ``--speculative-config`` brings the deprecated alias inside it into play,
   and that alias is fixed next), and if its own fix is dropped, that is reported in turn.
4. repeat from 1 on the new texts until no candidate is left (or :data:`MAX_PASSES`): a fix deferred
   because it overlapped another gets its turn against the new text. A fix offered again right
   after it was applied (it does not remove its finding) is dropped, so that a second ``--fix``
   changes nothing; so is a fix whose own edits overlap or fall outside its file.

Inserted line breaks follow the file's line ending (``SourceFile.newline``), so a CRLF file stays CRLF.

Nothing here writes files: :mod:`mtplint.fix.write` does, after the whole run.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from mtplint.checks import Edit, Finding, Fix, applies
from mtplint.extract import FileLoader
from mtplint.fix import apply_edits
from mtplint.lint import LintResult, LintSettings, lint
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

    __slots__ = ("originals", "texts", "applied", "rejected", "result", "initial", "passes", "converged")
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
        sources = [texts(edit.span.file) for edit in fix.edits]
        problem = None
        if any(source is None for source in sources):
            problem = "it edits a file that was not read"
        elif any(source is not None and not 0 <= edit.span.start <= edit.span.end <= len(source.text)
                 for edit, source in zip(fix.edits, sources, strict=True)):
            problem = "an edit lies outside the file"
        elif _overlaps_itself(fix.edits):
            problem = "its edits overlap each other (a fix is all its edits or none)"
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
    taken: list[Edit] = []
    identities: set[tuple[object, ...]] = set()
    for candidate in candidates:
        if candidate.identity in identities and all(e in taken for e in candidate.fix.edits):
            continue  # the same edits, offered by two findings: applied once
        if any(_conflicts(edit, taken) for edit in candidate.fix.edits):
            continue  # retried on the next pass, against the new text
        chosen.append(candidate)
        taken.extend(candidate.fix.edits)
        identities.add(candidate.identity)
    return chosen


# --- applying and checking -----------------------------------------------------------------------


def conform_newlines(content: str, newline: str) -> str:
    """Inserted text uses the file's line ending (a CRLF file stays CRLF)."""
    if "\n" not in content and "\r" not in content:
        return content
    return content.replace("\r\n", "\n").replace("\n", newline)


class _State(Record):
    """The texts as they stand after the passes so far (changed files only), and their lint."""

    __slots__ = ("texts", "result", "disk")
    texts: dict[str, SourceFile]
    result: LintResult
    #: the files as first read, for the ones no fix has touched yet
    disk: FileLoader

    def __init__(self, texts: dict[str, SourceFile], result: LintResult, disk: FileLoader) -> None:
        self.texts = texts
        self.result = result
        self.disk = disk

    def source(self, name: str) -> SourceFile | None:
        return self.texts.get(name) or self.disk.by_display(name)


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
            new_sources[name] = SourceFile(source.path, source.display, new_text, source.encoding, source.bom,
                                           source.digest)
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


Problem = tuple[str, str, int, str]


def _problems(result: LintResult) -> list[tuple[Problem, Finding | None]]:
    """(code, file, offset, message) of everything a fix must not add: findings, MTP001 diagnostics
    (also when MTP001 is not selected: an unparsable result is never acceptable), internal errors;
    each with the finding it comes from."""
    items: list[tuple[Problem, Finding | None]] = [
        ((f.code, f.span.file, f.span.start, f.message), f) for f in result.findings]
    items.extend((("MTP001", d.span.file, d.span.start, d.message), None)
                 for d in result.pipeline.diagnostics if d.code == "MTP001")
    items.extend((("internal", error.split(":", 1)[0], -1, error.split("\n", 1)[0]), None)
                 for error in result.pipeline.internal_errors)
    return items


def _new_problems(before: LintResult, after: LintResult, edits: dict[str, list[Edit]],
                  fixed: Sequence[Finding], unsafe: bool) -> list[Problem]:
    """What ``after`` has that ``before`` had not. A problem is the same as one before when its
    code, file, position (mapped back through the edits) and message match; or -- unless it is a
    finding a fix just applied was meant to remove -- its code, file and position, or its code, file
    and message (a message naming a value, a finding moved by an inserted line)."""
    mappers = {name: _back_mapper(file_edits) for name, file_edits in edits.items()}
    pool = _problems(before)
    fixed_ids = {id(finding) for finding in fixed}
    meant_to_go = [finding is not None and id(finding) in fixed_ids for _, finding in pool]
    used = [False] * len(pool)
    added: list[Problem] = []
    for problem, finding in _problems(after):
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
        match = next((i for i, (p, _) in enumerate(pool) if not used[i] and p == original), None)
        if match is None:
            match = next((i for i, (p, _) in enumerate(pool) if not used[i] and not meant_to_go[i]
                          and p[:2] == original[:2] and (p[2] == original[2] or p[3] == message)), None)
        if match is None:
            added.append(problem)
        else:
            used[match] = True
    return added


def _describe(problems: Sequence[Problem]) -> str:
    first = problems[0]
    code, file, _, message = first
    if code == "MTP001":
        text = f"the result no longer parses ({file}: {message})"
    elif code == "internal":
        text = f"the result cannot be read ({message})"
    else:
        text = f"the result has a new finding ({code} in {file}: {message})"
    if len(problems) > 1:
        text += f" and {len(problems) - 1} more"
    return text


class _Linter:
    """Lints the paths with some files replaced by texts in memory."""

    def __init__(self, paths: list[Path], settings: LintSettings) -> None:
        self.paths = paths
        self.settings = settings
        self.runs = 0

    def __call__(self, texts: dict[str, SourceFile]) -> tuple[LintResult, FileLoader]:
        loader = FileLoader(self.settings.pipeline.root)
        for source in texts.values():
            loader.put(source)
        self.runs += 1
        return lint(self.paths, self.settings, loader), loader


def _current(finding: Finding, accepted: Sequence[Edit], state: _State) -> list[Finding]:
    """``finding`` (of the pass's starting text) as the lint of the current text reports it, after
    the ``accepted`` edits of the pass: same code, file and message, its start moved past them."""
    delta = sum(len(edit.content) - (edit.span.end - edit.span.start) for edit in accepted
                if edit.span.file == finding.span.file and edit.span.end <= finding.span.start)
    start = finding.span.start + delta
    same = [f for f in state.result.findings
            if (f.code, f.span.file, f.message) == (finding.code, finding.span.file, finding.message)]
    return [f for f in same if f.span.start == start][:1] or same[:1]


class _Outcome(Record):
    __slots__ = ("applied", "rejected")
    applied: list[_Candidate]
    rejected: list[tuple[_Candidate, str]]

    def __init__(self) -> None:
        self.applied = []
        self.rejected = []


def _try(state: _State, chosen: Sequence[_Candidate], relint: _Linter, unsafe: bool,
         moved: tuple[Sequence[Edit], Sequence[Finding]] | None = None) -> tuple[_State, str | None]:
    """Apply the ``chosen`` fixes together; the new state, or the old one and why the result was
    refused. ``moved``: their edits and findings as they stand in the current text, when earlier
    fixes of the pass have already changed it."""
    if moved is None:
        edits: Sequence[Edit] = [edit for candidate in chosen for edit in candidate.fix.edits]
        findings: Sequence[Finding] = [candidate.finding for candidate in chosen]
    else:
        edits, findings = moved
    new_sources, applied = _apply(state, edits)
    if not new_sources:
        return state, None
    texts = {**state.texts, **new_sources}
    result, _ = relint(texts)
    added = _new_problems(state.result, result, {name: applied[name] for name in new_sources}, findings, unsafe)
    if added:
        return state, _describe(added)
    return _State(texts, result, state.disk), None


def _pass(state: _State, chosen: Sequence[_Candidate], relint: _Linter, unsafe: bool) -> tuple[_State, _Outcome]:
    outcome = _Outcome()
    together, refusal = _try(state, chosen, relint, unsafe)
    if refusal is None:
        outcome.applied.extend(chosen)
        return together, outcome
    if len(chosen) == 1:
        outcome.rejected.append((chosen[0], refusal))
        return state, outcome
    # one of them (or a combination) is bad: one at a time, each against the text the previous
    # accepted ones left, so a bad fix is dropped and the others stay
    accepted: list[Edit] = []
    for candidate in chosen:
        moved = []
        for edit in candidate.fix.edits:
            source = state.source(edit.span.file)
            if source is None:
                break
            moved.append(_shifted(edit, accepted, source))
        if len(moved) != len(candidate.fix.edits):
            continue
        alone, refusal = _try(state, [candidate], relint, unsafe, (moved, _current(candidate.finding, accepted, state)))
        if refusal is not None:
            outcome.rejected.append((candidate, refusal))
            continue
        outcome.applied.append(candidate)
        accepted.extend(candidate.fix.edits)
        state = alone
    return state, outcome


def fix_project(paths: list[Path], settings: LintSettings, *, unsafe: bool = False,
                max_passes: int = MAX_PASSES) -> FixRun:
    """Fix what can be fixed in ``paths``, in memory (see the module docstring)."""
    relint = _Linter(paths, settings)
    initial, loader = relint({})
    state = _State({}, initial, loader)
    originals: dict[str, SourceFile] = {}
    applied: list[AppliedFix] = []
    rejected: list[RejectedFix] = []
    refused: set[tuple[object, ...]] = set()
    #: identities applied last pass, and those left for later (deferred), to notice a fix that does
    #: not remove its finding (it would come back on every pass, and on every run)
    last_applied: Counter[tuple[object, ...]] = Counter()
    last_deferred: Counter[tuple[object, ...]] = Counter()
    passes = 0
    converged = False
    while True:
        candidates = _candidates(state.result.findings, unsafe, state.source, refused, rejected)
        offered = Counter(c.identity for c in candidates)
        for identity in offered:
            if last_applied[identity] and offered[identity] > last_deferred[identity]:
                refused.add(identity)
                finding = next(c.finding for c in candidates if c.identity == identity)
                rejected.append(RejectedFix(finding, "applying it does not resolve the finding (it would be applied again)"))
        candidates = [c for c in candidates if c.identity not in refused]
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
                    source = loader.by_display(edit.span.file)
                    if source is not None:
                        originals[edit.span.file] = source
        state, outcome = _pass(state, chosen, relint, unsafe)
        for candidate, reason in outcome.rejected:
            refused.add(candidate.identity)
            rejected.append(RejectedFix(candidate.finding, reason))
        applied.extend(AppliedFix(c.finding, passes) for c in outcome.applied)
        last_applied = Counter(c.identity for c in outcome.applied)
        last_deferred = Counter(c.identity for c in candidates if c not in chosen)
    texts = {name: source.text for name, source in state.texts.items()}
    for name in list(originals):
        if name not in texts:
            del originals[name]
    return FixRun(originals, texts, applied, rejected, state.result, initial, passes, converged)


