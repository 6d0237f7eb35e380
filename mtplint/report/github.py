"""``--output-format github``: workflow commands that GitHub Actions turns into annotations.

One line per finding::

    ::error file=compose.yaml,line=29,col=24,endLine=29,endColumn=42,title=MTP101::KV-cache dtype …

``error`` / ``warning`` / ``notice`` follow the finding's severity (``info`` → ``notice``). Values
are escaped as the Actions toolkit does (``@actions/core`` ``command.ts``, documented in "Workflow
commands for GitHub Actions"): in the message, ``%`` → ``%25``, CR → ``%0D``, LF → ``%0A``; in a
property value additionally ``:`` → ``%3A`` and ``,`` → ``%2C``, which would otherwise end the value.
Columns are 1-based and ``endColumn`` is one past the token, as in the other formats (ruff's
github format does the same); GitHub uses columns only when the annotation stays on one line, so
they are left out for a finding that spans lines. Suppressed findings are not annotated.
``file=`` is relative to the workspace (``GITHUB_WORKSPACE``, else the repository root), which is
what GitHub matches against the changed files, also when mtplint runs in a subdirectory.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from mtplint.pathtext import join, normalized, relative_to, resolved_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mtplint.checks import Finding

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workspace_path(file: str, workspace: str | os.PathLike[str] | None = None) -> str:
    """The file relative to the workspace, or as shown when it lies outside."""
    from mtplint.report.sarif import repository_root  # noqa: PLC0415 - output format: sarif's module (tempfile, urllib) only for a finding

    if workspace is None:
        given = os.environ.get("GITHUB_WORKSPACE")
        workspace = normalized(given) if given else repository_root(os.getcwd())
    try:
        return relative_to(resolved_path(join(os.getcwd(), file)), resolved_path(workspace))
    except ValueError:
        return file


def annotation(finding: Finding, workspace: str | os.PathLike[str] | None = None) -> str:
    span = finding.span
    properties = [("file", workspace_path(span.file, workspace)), ("line", str(span.line))]
    if span.end_line == span.line:
        properties += [("col", str(span.column)), ("endLine", str(span.end_line)),
                       ("endColumn", str(max(span.end_column, span.column)))]
    else:
        properties.append(("endLine", str(span.end_line)))
    properties.append(("title", finding.code))
    rendered = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    return f"::{COMMANDS[finding.severity]} {rendered}::{escape_data(finding.message)}"


def render(findings: Sequence[Finding], workspace: str | os.PathLike[str] | None = None,
           notes: Sequence[str] = ()) -> str:
    """``notes``: what the run says once (launches not checked for want of a GPU identity), as
    notices without a file: the run's summary on GitHub."""
    lines = [annotation(finding, workspace) + "\n" for finding in findings if not finding.suppressed]
    lines.extend(f"::notice title=mtplint::{escape_data(note)}\n" for note in notes)
    return "".join(lines)
