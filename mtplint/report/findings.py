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

import json
from collections.abc import Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mtplint.checks import Finding
    from mtplint.pipeline import Result

_SEVERITY_MARK = {"error": "error", "warning": "warning", "info": "info"}


def header(finding: Finding, unsafe_fixes: bool = False) -> str:
    """``path:line:col: CODE [*] message``; ``[*]`` when ``--fix`` would fix it (as ruff: an unsafe
    fix counts when ``--unsafe-fixes`` is given)."""
    from mtplint.checks import applies

    span = finding.span
    marker = " [*]" if applies(finding.fix, unsafe_fixes) else ""
    return f"{span.file}:{span.line}:{span.column}: {finding.code}{marker} {finding.message}"


def concise(findings: Sequence[Finding], unsafe_fixes: bool = False) -> str:
    return "".join(header(f, unsafe_fixes) + "\n" for f in findings)


def _source_lines(result: Result | None) -> dict[str, list[str]]:
    lines: dict[str, list[str]] = {}
    if result is None:
        return lines
    for report in result.launches:
        source = report.launch.source
        lines.setdefault(source.display, source.text.splitlines())
    return lines


def _read_lines(file: str, cache: dict[str, list[str]]) -> list[str]:
    if file not in cache:
        try:
            with open(file, encoding="utf-8", errors="replace") as handle:
                cache[file] = handle.read().splitlines()
        except OSError:
            cache[file] = []
    return cache[file]


def full(findings: Sequence[Finding], result: Result | None = None, unsafe_fixes: bool = False) -> str:
    cache = _source_lines(result)
    out: list[str] = []
    for finding in findings:
        span = finding.span
        out.append(header(finding, unsafe_fixes))
        lines = _read_lines(span.file, cache)
        if 0 < span.line <= len(lines):
            width = len(str(min(span.line + 1, len(lines))))
            first = max(1, span.line - 1)
            out.append(f"{' ' * width} |")
            for number in range(first, min(span.line + 1, len(lines)) + 1):
                text = lines[number - 1].expandtabs(1)
                out.append(f"{number:>{width}} | {text}".rstrip())
                if number == span.line:
                    end = span.end_column if span.end_line == span.line else len(text) + 1
                    carets = "^" * max(1, end - span.column)
                    out.append(f"{' ' * width} | {' ' * (span.column - 1)}{carets} {finding.code}")
            out.append(f"{' ' * width} |")
        if finding.fix is not None:
            out.append(f"  = help: {finding.fix.message}" + (" (unsafe fix)" if finding.fix.applicability == "unsafe" else ""))
        out.append(f"  = docs: mtplint rule {finding.code}")
        out.append("")
    return "\n".join(out) + ("\n" if out else "")


def finding_json(finding: Finding) -> dict[str, object]:
    data = finding.to_json()
    # ruff's key: the line a `noqa` comment for this finding goes on
    data["noqa_row"] = finding.span.line
    return data


def as_json(findings: Sequence[Finding]) -> str:
    return json.dumps([finding_json(f) for f in findings], indent=2, ensure_ascii=False) + "\n"


def summary(findings: Sequence[Finding], suppressed: int, *, fixed: int = 0, unsafe_fixes: bool = False,
            errors: int = 0) -> str:
    """The closing lines; ``fixed``: how many findings ``--fix`` fixed (ruff: ``Found 3 errors (2
    fixed, 1 remaining).``); the fix counts follow ruff, with unsafe fixes hidden unless
    ``unsafe_fixes``. ``errors``: paths or launches the run could not check (reported on stderr):
    then nothing "passed"."""
    if not findings and not fixed:
        if errors:
            return f"No findings, but the run met {errors} error{'s' if errors != 1 else ''}: not everything was checked.\n"
        return "All checks passed!\n"
    from mtplint.checks import available
    from mtplint.report.fixes import fix_counts

    counts: dict[str, int] = {}
    for finding in findings:
        counts[finding.severity] = counts.get(finding.severity, 0) + 1
    detail = ", ".join(f"{counts[s]} {_SEVERITY_MARK[s]}{'s' if counts[s] != 1 else ''}" for s in ("error", "warning", "info") if s in counts)
    if fixed:
        total = len(findings) + fixed
        text = f"Found {total} finding{'s' if total != 1 else ''} ({fixed} fixed, {len(findings)} remaining)."
    else:
        text = f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''} ({detail})."
    fixable, hidden = available(findings, unsafe_fixes)
    fix_line = fix_counts(fixable, hidden)
    if fix_line:
        text += "\n" + fix_line
    if suppressed:
        text += f"\n({suppressed} suppressed by noqa or per-file-ignores.)"
    return text + "\n"
