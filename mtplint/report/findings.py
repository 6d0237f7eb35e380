"""Finding output formats, in ruff's shapes: ``full`` (code frame), ``concise``, ``json``.

- concise: ``path:line:col: CODE [*] message`` (``[*]``: ``--fix`` would fix it -- a safe fix, or an
  unsafe one with ``--unsafe-fixes``), one line per finding.
- full: the concise header, then the lines around the finding with carets under the offending token.
- json: a list; each finding has ruff's keys ``code``, ``message``, ``filename``, ``location`` /
  ``end_location`` ``{row, column}`` (1-based), ``fix`` (null, or ``applicability``, ``message``,
  ``edits`` of ``{content, location, end_location}``), ``url``, ``noqa_row``, plus mtplint's
  ``name`` and ``severity``. ``filename`` is the path as shown in the other formats (relative to
  the working directory when below it), not always absolute as ruff's is.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from mtplint.files import read_regular
from mtplint.report.fixes import fix_counts
from mtplint.source import frame_lines

TYPE_CHECKING = False
if TYPE_CHECKING:

    from mtplint.checks import Finding
    from mtplint.pipeline import Result
    from mtplint.source import SourceFile

_SEVERITY_MARK = {"error": "error", "warning": "warning", "info": "info"}
#: findings a JSON report encodes at a time
_JSON_BATCH = 256


def header(finding: Finding, unsafe_fixes: bool = False) -> str:
    """``path:line:col: CODE [*] message``; ``[*]`` when ``--fix`` would fix it (as ruff: an unsafe
    fix counts when ``--unsafe-fixes`` is given)."""
    from mtplint.checks import applies  # noqa: PLC0415 - rules only with findings: a run the prefilter answered loads none

    return _header(finding, applies(finding.fix, unsafe_fixes))


def _header(finding: Finding, fixable: bool) -> str:
    span = finding.span
    marker = " [*]" if fixable else ""
    return f"{span.file}:{span.line}:{span.column}: {finding.code}{marker} {finding.message}"


def concise(findings: Sequence[Finding], unsafe_fixes: bool = False) -> str:
    return "".join(concise_lines(findings, unsafe_fixes))


class FindingTally:
    """What the summary counts of the findings (by severity; the fixes ``--fix`` applies, and the
    unsafe ones ``--unsafe-fixes`` would), counted as a report goes through them: a large run's
    findings are read back from its temporary file at each pass (:class:`mtplint.kept.FindingStore`),
    and the summary then needs no pass of its own."""

    __slots__ = ("severities", "fixable", "hidden")

    def __init__(self) -> None:
        self.severities: dict[str, int] = {}
        self.fixable = 0
        self.hidden = 0

    def add(self, finding: Finding, applied: bool) -> None:
        """Count ``finding``; ``applied``: whether ``--fix`` applies its fix (:func:`mtplint.checks.applies`)."""
        severity = finding.severity
        self.severities[severity] = self.severities.get(severity, 0) + 1
        if applied:
            self.fixable += 1
        elif finding.fix is not None and finding.fix.edits and finding.fix.applicability == "unsafe":
            self.hidden += 1


def concise_lines(findings: Sequence[Finding], unsafe_fixes: bool = False,
                  tally: FindingTally | None = None) -> Iterator[str]:
    """The concise report a finding at a time: a run with 100k findings writes them as they are
    formatted rather than holding the whole text (and its escaped copy) at once. ``tally``: counts
    the findings for :func:`summary`."""
    if not findings:
        return  # a run the byte prefilter answered has not loaded the rules (nor should it, to say so)
    from mtplint.checks import applies  # noqa: PLC0415 - rules only with findings: a run the prefilter answered loads none

    for finding in findings:
        applied = applies(finding.fix, unsafe_fixes)
        if tally is not None:
            tally.add(finding, applied)
        yield _header(finding, applied) + "\n"


class _SourceLines:
    """The lines of each file findings point into: the run's text of a launch's file, or the lines
    kept around the finding (:class:`mtplint.source.ShownLines`), or a text the run read, else the
    disk's. A file is split into lines when a finding first needs it (most files of a run have no
    finding in them)."""

    __slots__ = ("_lines", "_sources", "_result")

    def __init__(self, result: Result | None) -> None:
        self._lines: dict[str, list[str]] = {}
        self._sources: dict[str, SourceFile] = {}
        self._result = result
        if result is not None:
            for report in result.launches:
                source = report.launch.source
                self._sources.setdefault(source.display, source)

    def around(self, file: str, line: int) -> Sequence[str]:
        """The file's lines, for showing ``line``."""
        lines = self._lines.get(file)
        if lines is not None:
            return lines
        source = self._sources.get(file)
        if source is None and self._result is not None:
            kept = self._result.shown.lines(file, line)
            if kept is not None:
                return kept
            loader = self._result.loader
            source = loader.by_display(file) if loader is not None else None
        lines = self._lines[file] = source.text.splitlines() if source is not None else _read_lines(file)
        return lines


def _read_lines(file: str) -> list[str]:
    from mtplint.extract import MAX_FILE_BYTES  # noqa: PLC0415 - extractors only with findings: a run the prefilter answered loads none

    try:
        # a file over the size limit (reported "too large", never read) has no frame to show
        return read_regular(file, MAX_FILE_BYTES).decode("utf-8", "replace").splitlines()
    except OSError:
        return []


def full(findings: Sequence[Finding], result: Result | None = None, unsafe_fixes: bool = False) -> str:
    return "".join(full_blocks(findings, result, unsafe_fixes))


def full_blocks(findings: Sequence[Finding], result: Result | None = None, unsafe_fixes: bool = False,
                tally: FindingTally | None = None) -> Iterator[str]:
    """The full report a finding at a time (its header, code frame and help), for the reason
    :func:`concise_lines` gives; ``tally`` as there."""
    if not findings:
        return  # a run the byte prefilter answered has not loaded the rules (nor should it, to say so)
    from mtplint.checks import applies  # noqa: PLC0415 - rules only with findings: a run the prefilter answered loads none

    sources = _SourceLines(result)
    for finding in findings:
        out: list[str] = []
        span = finding.span
        fix = finding.fix
        code = finding.code
        applied = applies(fix, unsafe_fixes)
        if tally is not None:
            tally.add(finding, applied)
        out.append(_header(finding, applied))
        line = span.line
        lines = sources.around(span.file, line)
        if 0 < line <= len(lines):
            shown = frame_lines(line, len(lines))
            width = len(str(shown[-1]))
            frame = " " * width + " |"
            out.append(frame)
            for number in shown:
                text = lines[number - 1].expandtabs(1)
                # rjust, not a nested format spec (f"{number:>{width}}"): half the time, on every line shown
                out.append(f"{str(number).rjust(width)} | {text}".rstrip())
                if number == line:
                    end = span.end_column if span.end_line == line else len(text) + 1
                    carets = "^" * max(1, end - span.column)
                    out.append(f"{frame} {' ' * (span.column - 1)}{carets} {code}")
            out.append(frame)
        if fix is not None:
            out.append(f"  = help: {fix.message}" + (" (unsafe fix)" if fix.applicability == "unsafe" else ""))
        out.append(f"  = docs: mtplint rule {code}")
        out.append("")
        yield "\n".join(out) + "\n"


def finding_json(finding: Finding) -> dict[str, object]:
    data = finding.to_json()
    # ruff's key: the line a `noqa` comment for this finding goes on
    data["noqa_row"] = finding.span.line
    return data


def as_json(findings: Sequence[Finding]) -> str:
    return "".join(json_pieces(findings))


def json_pieces(findings: Sequence[Finding]) -> Iterator[str]:
    """The JSON report (``json.dumps`` of the list, two spaces an indent) some findings at a time,
    for the reason :func:`concise_lines` gives (100k findings as one list of dicts and one string
    peaked at 665 MB). In batches, not one by one: each indented ``json.dumps`` leaves a cycle of
    closures that only the cyclic collector frees, and a run switches it off."""
    if not findings:
        yield "[]\n"
        return
    import json  # noqa: PLC0415 - output format: json (a pre-commit run over files without a launch writes none)

    for start in range(0, len(findings), _JSON_BATCH):
        batch = json.dumps([finding_json(finding) for finding in findings[start:start + _JSON_BATCH]], indent=2,
                           ensure_ascii=False)
        # the batch's elements, without its brackets (``[\n`` ... ``\n]``)
        yield ("[\n" if start == 0 else ",\n") + batch[2:-2]
    yield "\n]\n"


def summary(findings: Sequence[Finding], suppressed: int, *, fixed: int = 0, unsafe_fixes: bool = False,
            errors: int = 0, tally: FindingTally | None = None) -> str:
    """The closing lines; ``fixed``: how many findings ``--fix`` fixed (ruff: ``Found 3 errors (2
    fixed, 1 remaining).``); the fix counts follow ruff, with unsafe fixes hidden unless
    ``unsafe_fixes``. ``errors``: paths or launches the run could not check (reported on stderr):
    then nothing "passed". ``tally``: the ``findings`` as the report counted them (with the same
    ``unsafe_fixes``), else they are counted here."""
    if not findings and not fixed:
        if errors:
            return f"No findings, but the run met {errors} error{'s' if errors != 1 else ''}: not everything was checked.\n"
        return "All checks passed!\n"
    if tally is None:
        from mtplint.checks import applies  # noqa: PLC0415 - rules only with findings: a run the prefilter answered loads none

        tally = FindingTally()
        for finding in findings:
            tally.add(finding, applies(finding.fix, unsafe_fixes))
    counts = tally.severities
    fixable, hidden = tally.fixable, tally.hidden
    detail = ", ".join(f"{counts[s]} {_SEVERITY_MARK[s]}{'s' if counts[s] != 1 else ''}" for s in ("error", "warning", "info") if s in counts)
    if fixed:
        total = len(findings) + fixed
        text = f"Found {total} finding{'s' if total != 1 else ''} ({fixed} fixed, {len(findings)} remaining)."
    else:
        text = f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''} ({detail})."
    fix_line = fix_counts(fixable, hidden)
    if fix_line:
        text += "\n" + fix_line
    if suppressed:
        text += f"\n({suppressed} suppressed by noqa or per-file-ignores.)"
    return text + "\n"
