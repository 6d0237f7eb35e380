"""``--output-format sarif``: SARIF 2.1.0 for code scanning (GitHub, GitLab) and editors.

One run, as GitHub requires since it stopped combining runs of one tool (docs/sarif.md).
What GitHub reads and how (docs/sarif.md#what-github-requires) shapes the choices here:

- ``tool.driver``: name, version, semanticVersion, informationUri, and one ``rules`` entry per rule
  that fired (including rules whose only findings are suppressed); results point at it with
  ``ruleId`` and ``ruleIndex``.
- rule texts: ``shortDescription`` and ``fullDescription`` at most 1024 characters (GitHub's
  limit), ``help`` as text and markdown (the ``mtplint rule CODE`` page), ``helpUri``,
  ``defaultConfiguration.level``, ``properties`` tags / precision / ``problem.severity``.
- each result has exactly one physical location: the path relative to the repository root with
  ``uriBaseId: %SRCROOT%`` (declared in ``originalUriBaseIds``), a 1-based region whose
  ``endColumn`` is one past the last character, and ``partialFingerprints.primaryLocationLineHash``
  computed as GitHub's upload action does (:func:`line_hashes`), so alerts keep their identity when
  lines are inserted above them and uploads through the REST API do not duplicate alerts.
- fixes become SARIF ``fixes`` (``artifactChanges`` with ``replacements``); suppressed findings are
  included with ``suppressions`` (``inSource`` for a ``noqa`` comment, ``external`` for
  ``per-file-ignores`` in configuration), which code scanning shows as dismissed.
- ``run.columnKind`` is ``unicodeCodePoints``: columns count characters of the decoded text
  (SARIF §3.14.27 requires the property when results point into text files).
- GitHub rejects a run with more than 25,000 results or a file above 10 MB gzipped; the log is cut
  to fit (suppressed findings first, then the least severe) and says so in a tool notification.
"""

from __future__ import annotations

import json
import os
import tempfile
import urllib.parse
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from mtplint import __version__
from mtplint.checks.suppress import _per_file_ignored
from mtplint.extract import MAX_FILE_BYTES
from mtplint.files import read_regular
from mtplint.pathtext import exists, join, parent_dir, relative_to, resolved_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from mtplint.checks import Finding, Fix
    from mtplint.checks.catalog import Rule

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/mtplint/mtplint"
SRCROOT = "%SRCROOT%"

#: GitHub's limits for one uploaded file (docs `data/reusables/code-scanning/sarif-limits.md`)
MAX_RESULTS = 25_000
MAX_GZIPPED_BYTES = 10 * 1024 * 1024
#: GitHub's limit on ``shortDescription.text`` / ``fullDescription.text``
MAX_DESCRIPTION = 1024

LEVELS = {"error": "error", "warning": "warning", "info": "note"}
#: ``properties.problem.severity``, which GitHub reads for rules that are not security rules
PROBLEM_SEVERITY = {"error": "error", "warning": "warning", "info": "recommendation"}
_SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}


# -- primaryLocationLineHash -------------------------------------------------------------------

# The algorithm of github/codeql-action `src/fingerprints.ts` (MIT), re-implemented from its
# description: a rolling polynomial hash (base 37, arithmetic on signed 64-bit integers) over a window
# of the next 100 characters starting at each line, where spaces and tabs are skipped, CR and CRLF
# count as one LF, and a sentinel 0xFFFF marks the end of the file. Each line's hash is written as
# unsigned hex plus ``:<n>``, n counting earlier lines with the same hash, so identical lines stay
# distinct. Test vectors from the action's own tests are in tests/test_sarif_fingerprint.py.
_WINDOW = 100
_BASE = 37
_MASK = (1 << 64) - 1
_END_OF_FILE = 0xFFFF
_BASE_TO_WINDOW = pow(_BASE, _WINDOW, 1 << 64)


def _utf16_units(text: str) -> Iterable[int]:
    """The UTF-16 code units of the text: the action reads files as JavaScript strings."""
    for char in text:
        point = ord(char)
        if point < 0x10000:
            yield point
        else:
            point -= 0x10000
            yield 0xD800 + (point >> 10)
            yield 0xDC00 + (point & 0x3FF)


def line_hashes(text: str) -> dict[int, str]:
    """``primaryLocationLineHash`` of every line of a file's text, by 1-based line number."""
    window = [0] * _WINDOW
    line_at = [-1] * _WINDOW  # the line that starts at this window slot, -1 if none
    position = 0
    value = 0
    line = 0
    at_line_start = True
    after_cr = False
    seen: dict[str, int] = {}
    hashes: dict[int, str] = {}

    def emit() -> None:
        digest = format(value, "x")
        seen[digest] = seen.get(digest, 0) + 1
        hashes[line_at[position]] = f"{digest}:{seen[digest]}"
        line_at[position] = -1

    def push(unit: int) -> None:
        nonlocal value, position
        leaving = window[position]
        window[position] = unit
        value = (_BASE * value + unit - _BASE_TO_WINDOW * leaving) & _MASK
        position = (position + 1) % _WINDOW

    def feed(unit: int) -> None:
        nonlocal at_line_start, after_cr, line
        if unit in (0x20, 0x09) or (after_cr and unit == 0x0A):
            after_cr = False
            return
        after_cr = unit == 0x0D
        if after_cr:
            unit = 0x0A
        if line_at[position] != -1:
            emit()  # the window now holds the 100 characters that start that line
        if at_line_start:
            at_line_start = False
            line += 1
            line_at[position] = line
        if unit == 0x0A:
            at_line_start = True
        push(unit)

    for unit in _utf16_units(text):
        feed(unit)
    feed(_END_OF_FILE)
    for _ in range(_WINDOW):  # lines near the end: pad the window with zeros
        if line_at[position] != -1:
            emit()
        push(0)
    return hashes


# -- rules ------------------------------------------------------------------------------------

def _clip(text: str, limit: int = MAX_DESCRIPTION) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _first_paragraph(text: str) -> str:
    return text.strip().split("\n\n", 1)[0]


def _help_text(markdown: str) -> str:
    """The rule page without markdown headings and fences, for viewers that show plain text."""
    lines = []
    in_fence = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
            continue
        # a `# comment` inside an example is content, not a heading
        lines.append(line.lstrip("# ") if line.startswith("#") and not in_fence else line)
    return "\n".join(lines).strip() + "\n"


def rule_descriptor(rule: Rule) -> dict[str, Any]:
    from mtplint.report.docs import render_rule  # noqa: PLC0415 - output format: sarif's rule pages (github loads this module for its root)

    markdown = render_rule(rule)
    what = rule.docs.get("what") or rule.summary
    tags = ["mtplint", *(engine for engine in rule.engines if engine != "any"), _family(rule.code)]
    descriptor: dict[str, Any] = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": _clip(rule.summary)},
        "fullDescription": {"text": _clip(_first_paragraph(what))},
        "help": {"text": _help_text(markdown), "markdown": markdown},
    }
    if rule.origin == "builtin":  # a house rule's page is its own file, not on the project's site
        descriptor["helpUri"] = rule.url
    return {
        **descriptor,
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {
            "tags": tags,
            # findings rest on the engines' own parsers and source (docs/sarif.md#what-github-requires), not on heuristics
            "precision": "very-high" if rule.origin == "builtin" else "high",
            "problem.severity": PROBLEM_SEVERITY[rule.severity],
        },
    }


def _family(code: str) -> str:
    families = {"0": "input", "1": "known-broken", "2": "memory", "3": "throughput", "4": "deprecated", "5": "invalid"}
    return families.get(code[3:4], "house-rule") if code.startswith("MTP") else "house-rule"


# -- locations --------------------------------------------------------------------------------

def repository_root(start: str | os.PathLike[str]) -> str:
    """The closest directory holding ``.git`` (what code scanning resolves relative paths against),
    else ``start`` itself (resolved)."""
    directory = start = resolved_path(start)
    while not exists(join(directory, ".git")):
        above = parent_dir(directory)
        if above == directory:
            return start
        directory = above
    return directory


def file_uri(path: str) -> str:
    """``Path(path).as_uri()`` of an absolute path: ``file://`` and its bytes, percent-encoded."""
    return "file://" + urllib.parse.quote_from_bytes(os.fsencode(path))


class _Locator:
    def __init__(self, root: str) -> None:
        self.root = resolved_path(root)
        self.cwd = resolved_path(os.getcwd())

    def artifact(self, file: str) -> dict[str, Any]:
        resolved = resolved_path(join(self.cwd, file))  # an absolute path as it is
        try:
            relative = relative_to(resolved, self.root)
        except ValueError:
            return {"uri": file_uri(resolved)}
        # a name that is not UTF-8 keeps its bytes, percent-encoded (RFC 3986 section 2.1)
        return {"uri": urllib.parse.quote(relative, errors="surrogateescape"), "uriBaseId": SRCROOT}


def _region(line: int, column: int, end_line: int, end_column: int) -> dict[str, int]:
    return {"startLine": max(1, line), "startColumn": max(1, column),
            "endLine": max(1, line, end_line), "endColumn": max(1, end_column)}


def _fixes(fix: Fix, locator: _Locator) -> list[dict[str, Any]]:
    by_file: dict[str, list[dict[str, Any]]] = {}
    for edit in fix.edits:
        span = edit.span
        by_file.setdefault(span.file, []).append({
            "deletedRegion": _region(span.line, span.column, span.end_line, span.end_column),
            "insertedContent": {"text": edit.content},
        })
    if not by_file:
        return []
    changes = [{"artifactLocation": locator.artifact(file), "replacements": replacements}
               for file, replacements in by_file.items()]
    return [{"description": {"text": fix.message}, "artifactChanges": changes,
             "properties": {"applicability": fix.applicability}}]


# -- the log ----------------------------------------------------------------------------------

def suppression_kind(per_file_ignores: Mapping[str, Sequence[str]]) -> Callable[[Finding], str]:
    """How a suppressed finding was suppressed: ``external`` when configuration's
    ``per-file-ignores`` covers it (the same test the suppression pass made), else ``inSource``
    (a ``noqa`` comment in the file)."""
    ignores = {pattern: list(codes) for pattern, codes in per_file_ignores.items()}

    def kind(finding: Finding) -> str:
        if ignores and _per_file_ignored(finding.span.file, finding.code, ignores, {finding.code: finding.rule}):
            return "external"
        return "inSource"

    return kind


class _Hashes:
    """Line hashes per file, from the text the run read (or the file on disk). Those of the file
    asked last only: results come file by file, and every file's would grow with the findings."""

    def __init__(self, texts: Mapping[str, str]) -> None:
        self.texts = texts
        self.cache: dict[str, dict[int, str]] = {}

    def of(self, file: str, line: int) -> str | None:
        if file not in self.cache:
            self.cache.clear()
            text = self.texts.get(file)
            if text is None:
                try:
                    # CR/CRLF kept as written (the hash normalises them itself); a file over the
                    # size limit (reported "too large", never read) gets no line hashes
                    text = read_regular(file, MAX_FILE_BYTES).decode("utf-8", "replace")
                except OSError:
                    text = None
            self.cache[file] = line_hashes(text) if text is not None else {}
        return self.cache[file].get(line)


def _result(finding: Finding, rule_index: int, locator: _Locator, hashes: _Hashes,
            suppression_kind: str | None) -> dict[str, Any]:
    span = finding.span
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "ruleIndex": rule_index,
        "level": LEVELS[finding.severity],
        "message": {"text": finding.message},
        "locations": [{"physicalLocation": {
            "artifactLocation": locator.artifact(span.file),
            "region": _region(span.line, span.column, span.end_line, span.end_column),
        }}],
    }
    line_hash = hashes.of(span.file, max(1, span.line))
    if line_hash is not None:
        result["partialFingerprints"] = {"primaryLocationLineHash": line_hash}
    if finding.fix is not None:
        fixes = _fixes(finding.fix, locator)
        if fixes:
            result["fixes"] = fixes
    if suppression_kind is not None:
        result["suppressions"] = [{"kind": suppression_kind}]
    return result


def _within_limits(findings: list[Finding], max_results: int) -> list[Finding]:
    """At most ``max_results`` findings: drop suppressed ones first, then the least severe."""
    if len(findings) <= max_results:
        return findings
    ranked = sorted(range(len(findings)), key=lambda i: (findings[i].suppressed, _SEVERITY_RANK[findings[i].severity], i))
    keep = sorted(ranked[:max_results])
    return [findings[i] for i in keep]


def build_log(
    findings: Sequence[Finding],
    suppressed: Sequence[Finding] = (),
    *,
    root: str | os.PathLike[str] | None = None,
    texts: Mapping[str, str] | None = None,
    suppression_kind: Callable[[Finding], str] | None = None,
    internal_errors: Sequence[str] = (),
    max_results: int = MAX_RESULTS,
    limit_reason: str = "",
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """The SARIF log as a dictionary.

    ``texts`` maps a finding's file (as displayed) to the text the run read, for files that are not
    on disk as linted (``--stdin-filename``). ``suppression_kind`` says how a suppressed finding was
    suppressed (``inSource`` or ``external``); the default is ``inSource``. ``notes``: what the run
    says once rather than per finding (launches not checked for want of a GPU identity), as
    notifications of level ``note``.
    """
    log = _Log(findings, suppressed, root=root, texts=texts, suppression_kind=suppression_kind,
               internal_errors=internal_errors, max_results=max_results, limit_reason=limit_reason, notes=notes)
    head = log.head()
    head["runs"][0]["results"] = list(log.results())
    return head


class _Log:
    """A SARIF log as its head (everything but the results) and its results one at a time: a log
    of many findings is written without holding all its results, or its text, at once."""

    def __init__(
        self,
        findings: Sequence[Finding],
        suppressed: Sequence[Finding],
        *,
        root: str | os.PathLike[str] | None,
        texts: Mapping[str, str] | None,
        suppression_kind: Callable[[Finding], str] | None,
        internal_errors: Sequence[str],
        max_results: int,
        limit_reason: str,
        notes: Sequence[str],
    ) -> None:
        self.root = repository_root(root if root is not None else os.getcwd())
        self.texts = texts or {}
        self.suppression_kind = suppression_kind
        self.internal_errors = internal_errors
        everything = sorted([*findings, *suppressed], key=lambda f: f.sort_key())
        self.chosen = _within_limits(everything, max_results)
        notifications: list[dict[str, Any]] = []
        if len(self.chosen) < len(everything):
            notifications.append(_notification(
                "warning", f"{len(everything) - len(self.chosen)} of {len(everything)} findings left out: "
                           f"{limit_reason or f'code scanning accepts at most {max_results} results per run'} "
                           "(suppressed and least severe findings were dropped)"))
        for error in internal_errors:
            notifications.append(_notification("error", error.partition("\n")[0]))
        notifications.extend(_notification("note", note) for note in notes)
        self.notifications = notifications
        #: each rule that fired, by its code, in the order of its first result
        self.index_of: dict[str, int] = {}
        self.rules: list[Rule] = []
        for finding in self.chosen:
            if finding.code not in self.index_of:
                self.index_of[finding.code] = len(self.rules)
                self.rules.append(finding.rule)

    def head(self) -> dict[str, Any]:
        """The log with no results yet (``runs[0].results`` is its last member, left empty)."""
        invocation: dict[str, Any] = {"executionSuccessful": not self.internal_errors}
        if self.notifications:
            invocation["toolExecutionNotifications"] = self.notifications
        run: dict[str, Any] = {
            "tool": {"driver": {
                "name": "mtplint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [rule_descriptor(rule) for rule in self.rules],
            }},
            "originalUriBaseIds": {SRCROOT: {"uri": file_uri(self.root) + "/"}},
            "columnKind": "unicodeCodePoints",
            "invocations": [invocation],
            "results": [],
        }
        return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}

    def results(self) -> Iterator[dict[str, Any]]:
        locator = _Locator(self.root)
        hashes = _Hashes(self.texts)
        for finding in self.chosen:
            kind = None
            if finding.suppressed:
                kind = self.suppression_kind(finding) if self.suppression_kind is not None else "inSource"
            yield _result(finding, self.index_of[finding.code], locator, hashes, kind)

    def pieces(self) -> Iterator[str]:
        """The log's text (as :func:`_dump` of :meth:`head` with the results in) some results at a
        time. In batches, for the reason :func:`mtplint.report.findings.json_pieces` gives."""
        text = _dump(self.head())
        # the results list is the document's last value: ``"results": []`` then the closing brackets
        place = text.rindex(_NO_RESULTS)
        if not self.chosen:
            yield text
            return
        yield text[:place] + '"results": ['
        batch: list[dict[str, Any]] = []
        first = True
        for result in self.results():
            batch.append(result)
            if len(batch) == _RESULTS_BATCH:
                yield _results_text(batch, first)
                batch, first = [], False
        if batch:
            yield _results_text(batch, first)
        yield "\n" + _RESULTS_KEY_INDENT + "]" + text[place + len(_NO_RESULTS):]


#: ``runs[0].results`` as :func:`_dump` writes it when empty, and the indent of that key (and of
#: the list's closing bracket; its items are one level deeper)
_NO_RESULTS = '"results": []'
_RESULTS_KEY_INDENT = " " * 6
_RESULTS_BATCH = 256  # as the JSON report's batches (mtplint.report.findings)


def _results_text(batch: list[dict[str, Any]], first: bool) -> str:
    """Some results as items of ``runs[0].results`` in :func:`_dump`'s text (each line indented as
    deep as the list's items; JSON strings hold no newline)."""
    # without the batch's own brackets; its items are indented one level already
    items = json.dumps(batch, indent=2, ensure_ascii=False)[2:-2]
    return ("\n" if first else ",\n") + _RESULTS_KEY_INDENT + items.replace("\n", "\n" + _RESULTS_KEY_INDENT)


def _notification(level: str, text: str) -> dict[str, Any]:
    return {"level": level, "message": {"text": text}}


def _dump(log: Mapping[str, Any]) -> str:
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def render(findings: Sequence[Finding], suppressed: Sequence[Finding] = (), **options: Any) -> str:
    """The SARIF log as text, cut down until it fits GitHub's size limit when it does not
    (``options``: those of :func:`render_pieces`)."""
    return "".join(render_pieces(findings, suppressed, **options))


def render_pieces(
    findings: Sequence[Finding],
    suppressed: Sequence[Finding] = (),
    *,
    root: str | os.PathLike[str] | None = None,
    texts: Mapping[str, str] | None = None,
    suppression_kind: Callable[[Finding], str] | None = None,
    internal_errors: Sequence[str] = (),
    max_results: int = MAX_RESULTS,
    max_gzipped_bytes: int = MAX_GZIPPED_BYTES,
    notes: Sequence[str] = (),
) -> Iterator[str]:
    """:func:`render`'s text a piece at a time. Whether the log fits is known only once it is all
    written: it is written to a temporary file (in memory while small), gzipped as it goes, and
    read back from there when it fits."""
    limit, reason = max_results, ""
    while True:
        log = _Log(findings, suppressed, root=root, texts=texts, suppression_kind=suppression_kind,
                   internal_errors=internal_errors, max_results=limit, limit_reason=reason, notes=notes)
        results = len(log.chosen)
        with tempfile.SpooledTemporaryFile(_SPOOLED_IN_MEMORY, "w+", encoding="utf-8", newline="") as spool:
            zipped = zlib.compressobj(9, zlib.DEFLATED, _GZIP_WINDOW)
            size = 0
            for piece in log.pieces():
                spool.write(piece)
                size += len(zipped.compress(piece.encode("utf-8")))
            size += len(zipped.flush())
            if results == 0 or size <= max_gzipped_bytes:
                spool.seek(0)
                while piece := spool.read(_SPOOLED_IN_MEMORY):
                    yield piece
                return
        limit = results // 2
        reason = f"code scanning accepts at most {max_gzipped_bytes // (1024 * 1024)} MB of gzipped SARIF per file"


#: the text kept in memory before the spool of :func:`render_pieces` goes to disk, and the size it is read back in
_SPOOLED_IN_MEMORY = 1 << 20
#: zlib's window for a gzip stream (header and trailer): the size ``gzip.compress`` gives
_GZIP_WINDOW = 16 + zlib.MAX_WBITS
