"""Output about fixes, in ruff's words: ``--diff``, ``--show-fixes``, the fix counts of the summary."""

from __future__ import annotations

from collections.abc import Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mtplint.checks import Finding
    from mtplint.fix.apply import AppliedFix, RejectedFix
    from mtplint.fix.write import WriteFailure
    from mtplint.source import SourceFile


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 'es' if word.endswith('x') else 's'}"


def unified_diff(changed: Sequence[tuple[SourceFile, str]]) -> str:
    """One unified diff per changed file (``--- name`` / ``+++ name``, as ruff prints it). Line
    endings are shown as they are in the file (a CRLF file's lines end in CRLF)."""
    import difflib  # noqa: PLC0415 - only --diff needs it

    out: list[str] = []
    for source, text in changed:
        before = source.text.splitlines(keepends=True)
        after = text.splitlines(keepends=True)
        for line in difflib.unified_diff(before, after, fromfile=source.display, tofile=source.display):
            out.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def would_fix(count: int) -> str:
    """``--diff``'s closing line (ruff writes it to stderr)."""
    return f"Would fix {_plural(count, 'finding')}.\n" if count else "No findings would be fixed.\n"


def applied_list(applied: Sequence[AppliedFix]) -> str:
    """``--show-fixes`` after ``--fix``: per file, how many of each rule were fixed."""
    if not applied:
        return ""
    by_file: dict[str, dict[tuple[str, str], int]] = {}
    for item in applied:
        finding = item.finding
        counts = by_file.setdefault(finding.span.file, {})
        key = (finding.code, finding.rule.name)
        counts[key] = counts.get(key, 0) + 1
    lines = [f"Fixed {_plural(len(applied), 'finding')}:"]
    for file in sorted(by_file):
        lines.append(f"- {file}:")
        for (code, name), count in sorted(by_file[file].items()):
            lines.append(f"    {count} × {code} ({name})")
    return "\n".join(lines) + "\n"


def available_list(findings: Sequence[Finding], unsafe: bool) -> str:
    """``--show-fixes`` without ``--fix``: every fix there is, and whether ``--fix`` applies it."""
    lines: list[str] = []
    for finding in findings:
        fix = finding.fix
        if fix is None:
            continue
        if fix.applicability == "safe" or (unsafe and fix.applicability == "unsafe"):
            how = "applied by --fix"
        elif fix.applicability == "unsafe":
            how = "unsafe: needs --unsafe-fixes"
        else:
            how = "display only: not applied"
        span = finding.span
        lines.append(f"{span.file}:{span.line}:{span.column}: {finding.code} {fix.message} ({how})")
    if not lines:
        return ""
    return "Fixes:\n" + "".join(f"  {line}\n" for line in lines)


def rejected_list(rejected: Sequence[RejectedFix]) -> str:
    """Fixes that were dropped, and why (the findings stay)."""
    lines = []
    for item in rejected:
        finding = item.finding
        span = finding.span
        fix = finding.fix
        what = fix.message if fix is not None else "fix"
        lines.append(f"mtplint: warning: {span.file}:{span.line}:{span.column}: {finding.code}: "
                     f"fix not applied ({what}): {item.reason}\n")
    return "".join(lines)


def write_failures(failures: Sequence[WriteFailure]) -> str:
    return "".join(f"mtplint: warning: {failure.source.display}: {failure.reason}\n" for failure in failures)


def fix_counts(fixable: int, hidden: int) -> str:
    """The summary's line about fixes (ruff's wording), or ``""`` when there is nothing to say."""
    hidden_note = ""
    if hidden:
        hidden_note = (f"{_plural(hidden, 'hidden fix')} can be enabled with the `--unsafe-fixes` option")
    if fixable:
        return f"[*] {fixable} fixable with the `--fix` option" + (f" ({hidden_note})." if hidden else ".")
    if hidden:
        return f"No fixes available ({hidden_note})."
    return ""
