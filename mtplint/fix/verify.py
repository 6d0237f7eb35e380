"""Only fixes that ``--fix`` applies are counted and marked as fixable.

A fix offered by a rule may still be refused by :mod:`mtplint.fix.apply`: the fixed text would not
parse, would carry a new finding (MTP403's rename exposing MTP302), or would keep the finding it
was meant to resolve. Shown as ``[*]`` and counted in "N fixable with the `--fix` option", such a
fix promises what ``--fix`` will not do. So ``check`` runs the fixing in memory over the files
that have an applicable fix (nothing is written) and turns every fix that does not remove its
finding into a ``display-only`` one that says why; ``check --fix`` does the same for what
remains after its run.
"""

from __future__ import annotations

import gc
import json
import os
from array import array
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence

from mtplint.checks import Finding, Fix, applies
from mtplint.digests import DigestSet
from mtplint.edits.pyedit import edit_file
from mtplint.extract import FileLoader
from mtplint.kept import replaced_at, requested_by, same_kind
from mtplint.pathtext import is_file, join, path_parts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from concurrent.futures import Future
    from typing import Any

    from mtplint.analysed import AnalysedFile
    from mtplint.cache import Cache
    from mtplint.config import LintSettings
    from mtplint.fix.apply import FixRun, RejectedFix


#: what the fixing of a batch of files found: the refused fixes (their numbers among the offered
#: ones), why each was refused (by :func:`_key`), and the real paths of the files it read
BatchOutcome = tuple[list[int], dict[tuple[str, str, str], str], tuple[str, ...]]


def _key(finding: Finding) -> tuple[str, str, str]:
    return finding.code, finding.span.file, finding.message


def unapplied(offered: Iterable[tuple[int, int]], run: FixRun) -> list[int]:
    """The numbers of the ``offered`` fixes (:meth:`Offered.keys_among`: each with the digest of its
    finding's :func:`_key`) whose findings are still there after the ``run`` of ``--fix``, matched by
    code, file and message (fixes move findings, not their words)."""
    remaining = Counter(hash(_key(finding)) for finding in run.result.findings)
    left = []
    for number, key in offered:
        if remaining[key]:
            remaining[key] -= 1
            left.append(number)
    return left


def _reasons(rejected: Iterable[RejectedFix]) -> dict[tuple[str, str, str], str]:
    reasons: dict[tuple[str, str, str], str] = {}
    for item in rejected:
        reasons.setdefault(_key(item.finding), item.reason)
    return reasons


def demote(findings: Sequence[Finding], refused: Sequence[Finding], rejected: Iterable[RejectedFix]
           ) -> Sequence[Finding]:
    """``findings`` with the fixes of the ``refused`` ones shown, not offered: a ``display-only``
    fix whose message says why ``--fix`` does not apply it."""
    return _shown_not_offered(findings, refused, _reasons(rejected))


def _shown_not_offered(findings: Sequence[Finding], refused: Sequence[Finding],
                       reasons: dict[tuple[str, str, str], str]) -> Sequence[Finding]:
    """A run's ``findings`` (one of each :meth:`~mtplint.checks.Finding.identity`: the assembly keeps
    one finding per mistake) with those of ``refused`` demoted; told apart by identity, not as
    objects: a large run's findings are read back from a temporary file as new objects each time
    they are gone through (:class:`mtplint.kept.FindingStore`), and the result is stored alike."""
    if not refused:
        return findings
    identities = {finding.identity() for finding in refused}
    return same_kind(findings, (_demoted(finding, reasons) if finding.fix is not None
                                and finding.identity() in identities else finding for finding in findings))


def _demoted_at(findings: Sequence[Finding], refused: Collection[int],
                reasons: dict[tuple[str, str, str], str]) -> Sequence[Finding]:
    """A run's ``findings`` with the ``refused`` ones (their places among them) demoted, as
    :func:`_shown_not_offered` does: known by place, a large run's store of findings reads and
    writes again only the chunks that hold them (:meth:`mtplint.kept.FindingStore.replaced`)."""
    if not refused:
        return findings
    return replaced_at(findings, refused, lambda finding: _demoted(finding, reasons))


def _demoted(finding: Finding, reasons: dict[tuple[str, str, str], str]) -> Finding:
    fix = finding.fix
    assert fix is not None
    reason = reasons.get(_key(finding), "it does not resolve the finding")
    note = Fix("display-only", f"{fix.message} (not applied by --fix: {reason})", fix.edits)
    return Finding(finding.rule, finding.message, finding.span, note, finding.launch_span,
                   finding.suppressed, finding.severity_override)


def verified(findings: Sequence[Finding], settings: LintSettings, unsafe: bool,
             cache: Cache | None = None, analysed: Mapping[str, AnalysedFile] | None = None,
             processes: int = 1) -> Sequence[Finding]:
    """``findings`` of a ``check`` without ``--fix``, with every fix that ``--fix`` would refuse
    shown as not applied. The fixing runs over the files holding an applicable fix and the files
    its edits reach, not the whole tree: it costs what ``--diff`` on those files costs (a lint of
    them and one of what each pass changes), and nothing when no fix applies. ``cache``: the run's
    (:attr:`mtplint.lint.LintResult.cache`), which keeps which fixes were refused, and why, until
    the settings, the findings offering fixes or a file the fixing read change. ``analysed``: the
    run's own analyses of the files whose findings offer a fix
    (:attr:`mtplint.lint.LintResult.analysed`), which the fixing takes rather than analyse them again;
    ``processes``: the run's, which share out the batches of a large run's fixes
    (:func:`_fix_shared`), or the analysis of a large try of fixes."""
    offered = Offered(findings, unsafe)
    if not offered.linked:
        return findings
    key = None
    if cache is not None:
        # read in their order: a store's chunks are read once each
        identities = [findings[place].identity() for place in offered.places]
        key = cache.key("verified\0" + json.dumps([unsafe, identities]), b"")
        del identities  # not held through the fixing
        stored = _refused_from(cache.get_record(key), len(offered))
        if stored is not None:
            return _demoted_at(findings, *_stored_refusals(stored, offered, findings))
    root = settings.pipeline.root
    # every batch's fixing lists the same long folders on the way up to the root for the version
    # pins: the run's record of those that hold no pin file's name is kept through the batches
    pin_listings = FileLoader(root)
    fixing = _Fixing(settings, unsafe, analysed, processes, pin_listings, cache is not None)
    # shared out among the run's processes when there are more fixes' files than one batch holds
    shared = processes > 1 and len(offered.linked) > VERIFY_BATCH_FILES and hasattr(os, "fork")
    batches = _batches(offered.linked, root, analysed or {}, SHARED_BATCH_FILES if shared else VERIFY_BATCH_FILES)
    if shared and len(batches) > 1:
        _fix_shared(fixing, batches, offered)
    else:
        for batch in batches:
            fixing.run(batch, offered.keys_among(batch))
    if fixing.overlapping:
        # a file one batch's fixing read was read by another's too, through a file the run kept no
        # analysis of: their fixes may meet, so they are verified together, as one fixing
        fixing = _Fixing(settings, unsafe, analysed, processes, pin_listings, cache is not None)
        everything = set().union(*batches)
        fixing.run(everything, offered.keys_among(everything))
    # in the order of the findings offering them, whichever batch refused them
    numbers = sorted(fixing.refused)
    places = [offered.places[number] for number in numbers]
    if cache is not None and key is not None:
        from mtplint.cache import files_dependencies  # noqa: PLC0415 - the cache's runs only

        record = {"refused": [[number, fixing.reasons.get(_key(findings[place]))]
                              for number, place in zip(numbers, places, strict=True)]}
        cache.put_record(key, record, files_dependencies(fixing.read, cache.probe, root))
    return _demoted_at(findings, places, fixing.reasons)


class Offered:
    """Which of a check's ``findings`` offer a fix that ``--fix`` applies, by their place among
    them, with the files each one's fix edits and the digest of its :func:`_key`: what batching
    their verification needs, and what tells whether a batch's fixing left a finding in place
    (:mod:`mtplint.digests` says why a digest is enough), not the findings. A large run's findings
    are in its temporary file (:class:`mtplint.kept.FindingStore`), which the batches do not read
    back (the benchmark's mixed 100k tree offers some 3,500 fixes: held as findings to the end of
    the verification, they made its peak; read back by each batch, they cost a reading of the store)."""

    __slots__ = ("places", "files", "linked", "keys")

    def __init__(self, findings: Iterable[Finding], unsafe: bool) -> None:
        #: each offering finding's place among the findings, in their order
        self.places = array("q")
        #: each one's file (one string for a file's findings, which the report order keeps together)
        self.files: list[str] = []
        #: each file holding an offered fix -> the files its fixes edit
        self.linked: dict[str, set[str]] = {}
        #: the digest of each one's :func:`_key`
        self.keys = array("q")
        file = ""
        for place, finding in enumerate(findings):
            fix = finding.fix
            if fix is None or not applies(fix, unsafe):
                continue
            if finding.span.file != file:
                file = finding.span.file
            self.places.append(place)
            self.files.append(file)
            self.keys.append(hash(_key(finding)))
            self.linked.setdefault(file, set()).update(map(edit_file, fix.edits))

    def __len__(self) -> int:
        return len(self.places)

    def keys_among(self, files: set[str]) -> list[tuple[int, int]]:
        """The offering findings of ``files``, each as its number among the offered ones and the
        digest of its :func:`_key`."""
        return [(number, key) for number, (key, file) in enumerate(zip(self.keys, self.files, strict=True))
                if file in files]


#: files a fixing verifies at once. Each try of a fix re-lints what it changes against the texts
#: of every file of its fixing, and a large tree's tries grow with its fixes: one fixing of all
#: of them costs the square of the tree's fixes in time, and holds every file's texts and lints
#: to the end (the benchmark's mixed 100k tree: some 3,500 fixes, 800 tries, 46 MB). Fixes whose
#: files read none of each other's are independent, and verified in batches of this many files
VERIFY_BATCH_FILES = 64
#: files a batch holds when the batches are shared out among processes (:func:`_fix_shared`): the
#: processes then finish within a small batch of each other. A batch's own cost (its fixing's
#: set-up) is small next to its files': the benchmark's mixed 10k tree's fixes cost about as much
#: in batches of 16 files as of 64
SHARED_BATCH_FILES = 16


#: the fixes' files whose paths :func:`_batches` resolves before it forgets what it resolved
RESOLVED_AT_ONCE = 256


def _batches(linked: Mapping[str, set[str]], root: str, analysed: Mapping[str, AnalysedFile],
             batch_files: int | None = None) -> list[set[str]]:
    """The files of the offered fixes (display names), in batches that read none of each other's
    files, as far as the run knows: a finding's file and those its fix edits go together (``linked``,
    :attr:`Offered.linked`), with the files the run's analysis of it read
    (:attr:`AnalysedFile.requested`). Of ``batch_files`` files each (:data:`VERIFY_BATCH_FILES`
    without it), more where linked files need them."""
    from mtplint.fix.relint import linked_sets  # noqa: PLC0415 - fixing: not for a run whose cache knows the outcome

    # ``os.path.realpath`` asks the file system once per folder of every path; the fixes' files and
    # what they read share their folders, which a loader resolves once each
    loader = FileLoader(root)
    real_path = loader.real_path
    names = sorted(linked.keys() | {name for edited in linked.values() for name in edited})

    def reads(index: int) -> set[str]:
        if index % RESOLVED_AT_ONCE == 0:
            # the loader remembers each path it resolved: not thousands of them at once (the
            # names are sorted, a folder's together, and a folder is seldom resolved twice)
            loader.forget_files()
        name = names[index]
        requested = requested_by(analysed, name)
        paths = [join(root, name), *(join(root, other) for other in linked.get(name, ()))]
        return {real_path(path) for path in paths} | (
            {real_path(path) for path in requested} if requested is not None else set())

    size = VERIFY_BATCH_FILES if batch_files is None else batch_files
    batches: list[set[str]] = []
    for indices in linked_sets(range(len(names)), reads):
        if not batches or len(batches[-1]) + len(indices) > size:
            batches.append(set())
        batches[-1].update(names[index] for index in indices)
    return batches


class _Fixing:
    """The in-memory fixing of a check's fixes, a batch of files at a time: the fixes refused, and
    why, and the files read (each batch's alone, or :attr:`overlapping`)."""

    def __init__(self, settings: LintSettings, unsafe: bool, analysed: Mapping[str, AnalysedFile] | None,
                 processes: int, pin_listings: FileLoader, keep_read: bool = True) -> None:
        self.settings = settings
        self.unsafe = unsafe
        self.analysed = analysed
        self.processes = processes
        #: what every batch's fixing shares of long directory listings (:class:`mtplint.fix.relint.ProjectLinter`)
        self.pin_listings = pin_listings
        #: the refused findings' numbers among the offered ones: the findings are read back once
        #: the batches are done (held through them, a large run's grew with its fixes, each
        #: with its fix and edits)
        self.refused: list[int] = []
        self.reasons: dict[tuple[str, str, str], str] = {}
        #: the files read, by name for a cache (a record depends on them), and by digest: enough
        #: to tell whether two batches read the same file (not thousands of names held through the
        #: batches: the benchmark's mixed 100k tree, 4,253)
        self.read: set[str] = set()
        self.keep_read = keep_read
        self.read_digests = DigestSet()
        #: a file was read by the fixings of two batches
        self.overlapping = False
        #: batches this process fixed (a process forked to fix batches counts its own)
        self.batches_fixed = 0

    def run(self, files: set[str], offered: Sequence[tuple[int, int]]) -> None:
        """Fix ``files`` in memory, noting which of the ``offered`` fixes in them (the check's
        findings with an applicable fix, numbered: :meth:`Offered.keys_among`) the fixing refused, and why."""
        self.take(self.fixed(files, offered, self.processes))

    def fixed(self, files: set[str], offered: Sequence[tuple[int, int]], processes: int) -> BatchOutcome:
        """What the fixing of ``files`` in memory, over ``processes``, found of the ``offered`` fixes in them."""
        if self.batches_fixed:
            # the run switches the cyclic collector off (mtplint.cli.main), and a batch's fixing
            # leaves cycles (parsed YAML, edits): kept to the end of the run, they grew with the
            # tree's fixes (the benchmark's mixed 100k tree: 54 batches, some 6 MB). Only what the
            # last batch allocated is looked at (the younger generations), and only before another:
            # after a process's only batch (a pre-commit hook's, a one-file check) the collection
            # would cost more than that batch's fixing, to free what the process's exit frees anyway
            gc.collect(1)
        self.batches_fixed += 1
        from mtplint.edits.substitution import forget_sources  # noqa: PLC0415 - fixing: not for a run whose cache knows the outcome
        from mtplint.fix.apply import fix_project  # noqa: PLC0415 - fixing: not for a run whose cache knows the outcome

        root = self.settings.pipeline.root
        # in the order of path objects: by their components
        paths = sorted((join(root, name) for name in files), key=path_parts)
        run = fix_project([path for path in paths if is_file(path)], self.settings, unsafe=self.unsafe,
                          analysed=self.analysed, processes=processes, pin_listings=self.pin_listings)
        # the edits' caches of the batch's texts: those of the builders a fix loaded (most fixes, a
        # value inside a word, never load the argv edits)
        forget_sources()
        return unapplied(offered, run), _reasons(run.rejected), run.read

    def take(self, outcome: BatchOutcome) -> None:
        """A batch's outcome, after those of the batches before it."""
        refused, reasons, names = outcome
        self.refused.extend(refused)
        for key, reason in reasons.items():
            self.reasons.setdefault(key, reason)
        read = self.read_digests
        self.overlapping = self.overlapping or any(name in read for name in names)
        for name in names:
            read.add(name)
        if self.keep_read:
            self.read.update(names)


#: batches each forked process holds when a verification is shared out: the one it fixes and the
#: next, so that it does not wait for this process to finish a batch of its own before it gets one
BATCHES_HELD = 2

#: what forked processes fixing batches of a verification take from this one: the fixing, the
#: batches and the offered fixes (:func:`_fix_shared`)
_shared: tuple[_Fixing, list[set[str]], Offered] | None = None


def _fix_shared(fixing: _Fixing, batches: list[set[str]], offered: Offered) -> None:
    """The batches fixed by this process and forked ones (``fixing.processes`` in all, no more than
    the batches), as :func:`mtplint.parallel.shared_out` shares work out, a batch at a time: batches
    read none of each other's files (:func:`_batches`), so each is fixed alone, in one process. The
    outcomes are taken in the batches' order, as one process takes them."""
    global _shared
    import multiprocessing  # noqa: PLC0415 - --jobs with several batches only
    from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415 - --jobs with several batches only

    from mtplint.parallel import shared_out  # noqa: PLC0415 - --jobs with several batches only

    def submit(numbers: list[int]) -> Future[BatchOutcome]:
        return pool.submit(_fix_shared_batch, *numbers)

    def here(numbers: list[int]) -> list[tuple[int, BatchOutcome]]:
        return [(number, _fix_shared_batch(number)) for number in numbers]

    def answered(numbers: list[int], outcome: BatchOutcome) -> list[tuple[int, BatchOutcome]]:
        return [(numbers[0], outcome)]

    forked = min(fixing.processes, len(batches)) - 1
    _shared = (fixing, batches, offered)  # what the forked processes inherit
    try:
        pool = ProcessPoolExecutor(forked, multiprocessing.get_context("fork"))
        # one batch a chunk, one fixed here at a time when the forked processes hold theirs
        outcomes = dict(shared_out(pool, range(len(batches)), submit, here, answered, 1, 1, BATCHES_HELD * forked))
    finally:
        _shared = None
    for number in range(len(batches)):
        fixing.take(outcomes[number])


def _fix_shared_batch(number: int) -> BatchOutcome:
    """The outcome of the batch ``number`` of a verification shared out, fixed in this process or
    in one forked from it."""
    if _shared is None:
        raise RuntimeError("not forked from a verification")  # the batch is fixed in the parent
    fixing, batches, offered = _shared
    batch = batches[number]
    return fixing.fixed(batch, offered.keys_among(batch), 1)


def _refused_from(record: dict[str, Any] | None, offered: int) -> list[tuple[int, str | None]] | None:
    """The refused ones among ``offered`` fixes (by number), each with its reason, from a cache
    record; None when there is no record or it is not of that shape."""
    if record is None:
        return None
    refused: list[tuple[int, str | None]] = []
    try:
        for place, reason in record["refused"]:
            if type(place) is not int or not 0 <= place < offered or not isinstance(reason, (str, type(None))):
                return None
            refused.append((place, reason))
    except (KeyError, TypeError, ValueError):
        return None
    return refused


def _stored_refusals(stored: list[tuple[int, str | None]], offered: Offered, findings: Sequence[Finding]
                     ) -> tuple[dict[int, Finding], dict[tuple[str, str, str], str]]:
    """The findings a cache record refused (:func:`_refused_from`), by their places among
    ``findings``, and the reasons."""
    refused: dict[int, Finding] = {}
    reasons: dict[tuple[str, str, str], str] = {}
    for number, reason in stored:
        place = offered.places[number]
        finding = refused[place] = findings[place]
        if reason is not None:
            reasons.setdefault(_key(finding), reason)
    return refused, reasons
