"""Suppressions: ``per-file-ignores`` and ``# noqa`` comments, and MTP002 for unused ones.

``# mtplint: noqa: MTP102`` (or plain ``# noqa: MTP102``) on the line of a finding, or on the line
where its launch starts, suppresses it; without codes it suppresses every finding there. A line
holding only ``# mtplint: noqa`` (optionally ``: codes``) suppresses those codes in the whole file.
The comment must be a real comment of the file's language (``#`` in YAML, shell, Python, ``.env``,
systemd and Dockerfiles; ``;`` too in INI files).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fnmatch import fnmatch

from mtplint.checks import Finding
from mtplint.checks.catalog import Rule
from mtplint.pipeline import Result
from mtplint.source import SourceFile, Span

_NOQA = re.compile(
    r"(?P<comment>[#;])\s*(?P<tool>mtplint:\s*)?noqa(?P<colon>\s*:\s*(?P<codes>[A-Z]{2,6}\d{3}(?:\s*,\s*[A-Z]{2,6}\d{3})*))?",
    re.IGNORECASE,
)


@dataclass
class Suppression:
    line: int
    codes: frozenset[str] | None  # None: every code
    span: Span
    file_level: bool
    used: set[str] = field(default_factory=set)


def _comment_starts(text: str, index: int) -> bool:
    """A ``#`` begins a comment when it starts the line or follows whitespace."""
    return index == 0 or text[index - 1] in " \t"


def suppressions_in(source: SourceFile) -> list[Suppression]:
    found: list[Suppression] = []
    text = source.text
    for match in _NOQA.finditer(text):
        if not _comment_starts(text, match.start()):
            continue
        if match.group("comment") == ";" and not source.display.endswith(".ini"):
            continue
        line, _ = source.position(match.start())
        line_text = text[source.line_start(line):match.start()]
        file_level = bool(match.group("tool")) and not line_text.strip()
        codes_text = match.group("codes")
        codes = frozenset(c.strip().upper() for c in codes_text.split(",")) if codes_text else None
        found.append(Suppression(line, codes, source.span(match.start(), match.end()), file_level))
    return found


def _covers(suppression: Suppression, code: str) -> bool:
    return suppression.codes is None or code in suppression.codes


def apply_suppressions(
    findings: list[Finding],
    result: Result,
    per_file_ignores: dict[str, list[str]],
    catalog: dict[str, Rule],
    chosen: set[str],
) -> tuple[list[Finding], list[Finding]]:
    """Split findings into kept and suppressed; add MTP002 for suppressions that matched nothing."""
    sources: dict[str, SourceFile] = {}
    for report in result.launches:
        sources.setdefault(report.launch.source.display, report.launch.source)
    kept: list[Finding] = []
    suppressed: list[Finding] = []
    by_file: dict[str, list[Suppression]] = {}
    for name, source in sources.items():
        by_file[name] = suppressions_in(source)

    for finding in findings:
        file = finding.span.file
        if any(fnmatch(file, pattern) and any(finding.code.startswith(c) for c in codes)
               for pattern, codes in per_file_ignores.items()):
            finding.suppressed = True
            suppressed.append(finding)
            continue
        lines = {finding.span.line}
        if finding.launch_span is not None and finding.launch_span.file == file:
            lines.add(finding.launch_span.line)
        matched = False
        for suppression in by_file.get(file, ()):
            if (suppression.file_level or suppression.line in lines) and _covers(suppression, finding.code):
                suppression.used.add(finding.code)
                matched = True
        if matched:
            finding.suppressed = True
            suppressed.append(finding)
        else:
            kept.append(finding)

    if "MTP002" in chosen and "MTP002" in catalog:
        unused_rule = catalog["MTP002"]
        for suppressions in by_file.values():
            for suppression in suppressions:
                if suppression.codes is None:
                    if not suppression.used:
                        kept.append(Finding(unused_rule, "unused `noqa` comment (it suppresses nothing)", suppression.span))
                    continue
                unused = sorted(code for code in suppression.codes if code not in suppression.used and code in chosen)
                unknown = sorted(code for code in suppression.codes if code not in catalog)
                if unused or unknown:
                    parts = []
                    if unused:
                        parts.append(f"unused `noqa` for {', '.join(unused)}")
                    if unknown:
                        parts.append(f"unknown code {', '.join(unknown)}")
                    kept.append(Finding(unused_rule, "; ".join(parts), suppression.span))
    return kept, suppressed
