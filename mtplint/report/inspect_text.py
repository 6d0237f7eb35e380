"""The readable form of ``mtplint inspect``."""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from mtplint.pipeline import Result
    from mtplint.versions import EngineVersion


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _version_lines(version: EngineVersion) -> list[str]:
    """The range of versions still possible and each piece of evidence, with where it comes from."""
    lines = [f"    version range      {version.describe_range()}"] if not version.known else []
    for evidence in version.evidence:
        origin = f"  @ {evidence.origin}" if evidence.origin else ""
        lines.append(f"    version evidence   {evidence.kind} {evidence.spec}: {evidence.detail}{origin}")
    return lines


def render(result: Result) -> str:
    lines: list[str] = []
    for report in result.launches:
        data = report.to_json()
        version = data["engine_version"] + (" (assumed)" if data.get("assumed_version") else f" ({data['version_source']})")
        lines.append(f"{data['file']}:{data['line']}:{data['column']}: {data['engine']} {version} — {data['entry']}"
                     + (f" [{data['context']}]" if data.get("context") else ""))
        lines.extend(_version_lines(report.version))
        for name, setting in data["effective"].items():
            where = f"  @ {setting.get('file', '')}{':' if setting.get('file') else ''}{setting['line']}:{setting['column']}" if "line" in setting else ""
            extra = f" x{setting['count']}" if setting.get("count") else ""
            shown = "unknown" if setting["value"] is None and name == "gpu" else _value(setting["value"])
            unresolved = "  (unresolved)" if setting.get("unresolved") else ""
            lines.append(f"    {name:<18} {shown}{extra}  [{setting['origin']}]{where}{unresolved}")
        for error in data["cli_errors"]:
            where = f"{error['line']}:{error['column']}: " if "line" in error else ""
            lines.append(f"    ! {where}{error['message']}")
        if data.get("open_ended"):
            lines.append("    ~ more arguments may be passed at run time (\"$@\" or an extra-args variable)")
        lines.append("")
    for diagnostic in result.diagnostics:
        span = diagnostic.span
        lines.append(f"{span.file}:{span.line}:{span.column}: {diagnostic.code} {diagnostic.message}")
    if not result.launches and not result.diagnostics:
        lines.append(f"No launches found ({result.files_seen} files looked at).")
    return "\n".join(lines) + "\n"
