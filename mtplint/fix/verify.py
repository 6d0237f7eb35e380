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

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from mtplint.checks import Finding, Fix, applies

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mtplint.config import LintSettings
    from mtplint.fix.apply import FixRun, RejectedFix


def _key(finding: Finding) -> tuple[str, str, str]:
    return finding.code, finding.span.file, finding.message


def unapplied(findings: Sequence[Finding], run: FixRun, unsafe: bool) -> list[Finding]:
    """The ``findings`` (of the files as read) with an applicable fix that are still there after the
    ``run`` of ``--fix``, matched by code, file and message (fixes move findings, not their words)."""
    remaining = Counter(_key(finding) for finding in run.result.findings)
    left = []
    for finding in findings:
        if not applies(finding.fix, unsafe):
            continue
        key = _key(finding)
        if remaining[key]:
            remaining[key] -= 1
            left.append(finding)
    return left


def _reasons(rejected: Iterable[RejectedFix]) -> dict[tuple[str, str, str], str]:
    reasons: dict[tuple[str, str, str], str] = {}
    for item in rejected:
        reasons.setdefault(_key(item.finding), item.reason)
    return reasons


def demote(findings: Sequence[Finding], refused: Sequence[Finding], rejected: Iterable[RejectedFix]) -> list[Finding]:
    """``findings`` with the fixes of the ``refused`` ones (the same objects) shown, not offered: a
    ``display-only`` fix whose message says why ``--fix`` does not apply it."""
    if not refused:
        return list(findings)
    ids = {id(finding) for finding in refused}
    reasons = _reasons(rejected)
    shown: list[Finding] = []
    for finding in findings:
        fix = finding.fix
        if id(finding) not in ids or fix is None:
            shown.append(finding)
            continue
        reason = reasons.get(_key(finding), "it does not resolve the finding")
        note = Fix("display-only", f"{fix.message} (not applied by --fix: {reason})", fix.edits)
        shown.append(Finding(finding.rule, finding.message, finding.span, note, finding.launch_span,
                             finding.suppressed, finding.severity_override))
    return shown


def verified(findings: Sequence[Finding], settings: LintSettings, unsafe: bool) -> list[Finding]:
    """``findings`` of a ``check`` without ``--fix``, with every fix that ``--fix`` would refuse
    shown as not applied. The fixing runs over the files holding an applicable fix and the files
    its edits reach, not the whole tree: it costs what ``--diff`` on those files costs (a lint of
    them and one of what each pass changes), and nothing when no fix applies."""
    from mtplint.edits.pyedit import edit_file

    files: set[str] = set()
    for finding in findings:
        if applies(finding.fix, unsafe) and finding.fix is not None:
            files.add(finding.span.file)
            files.update(edit_file(edit) for edit in finding.fix.edits)
    if not files:
        return list(findings)
    from mtplint.fix.apply import fix_project

    root = settings.pipeline.root
    paths = sorted(Path(name) if Path(name).is_absolute() else root / name for name in files)
    run = fix_project([path for path in paths if path.is_file()], settings, unsafe=unsafe)
    return demote(findings, unapplied(findings, run, unsafe), run.rejected)
