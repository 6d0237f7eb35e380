"""Every rule against its fixtures: ``tests/rules/<CODE>.yaml`` holds positive and negative cases.

A case is a small project (``files``: name -> text, written as people write them) plus optional
extra command-line ``args``. ``mtplint check --select CODE`` must report the code for a positive
case (at ``at`` = [[file, line, column], ...] when given, and with ``message`` as a substring when
given) and must not report it for a negative case.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.case_files import case_file, case_files
from tests.conftest import run_cli

CASES = Path(__file__).parent / "rules"


def _cases() -> list[tuple[str, str, dict[str, Any]]]:
    found = []
    for path in case_files(CASES):
        data = case_file(path)
        for polarity in ("positive", "negative"):
            for case in data.get(polarity) or []:
                found.append((path.stem, polarity, case))
    return found


ALL_CASES = _cases()


def findings_for(code: str, case: dict[str, Any], tmp_path: Path) -> list[dict[str, Any]]:
    for name, text in case["files"].items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    exit_code, out, err = run_cli(
        ["check", "--output-format", "json", "--isolated", "--select", code, *case.get("args", []), "."], cwd=tmp_path
    )
    assert exit_code in (0, 1), err
    findings: list[dict[str, Any]] = json.loads(out)
    return [f for f in findings if f["code"] == code]


@pytest.mark.parametrize(("code", "polarity", "case"), ALL_CASES,
                         ids=[f"{code}-{polarity}-{case['name']}" for code, polarity, case in ALL_CASES])
def test_rule_case(code: str, polarity: str, case: dict[str, Any], tmp_path: Path) -> None:
    findings = findings_for(code, case, tmp_path)
    if polarity == "negative":
        assert findings == [], f"{case['name']}: unexpected {code}: {[f['message'] for f in findings]}"
        return
    assert findings, f"{case['name']}: {code} not reported"
    positions = {(f["filename"], f["location"]["row"], f["location"]["column"]) for f in findings}
    for file, line, column in case.get("at", []):
        assert (file, line, column) in positions, f"{case['name']}: expected {code} at {file}:{line}:{column}, got {positions}"
    if "message" in case:
        assert any(case["message"] in f["message"] for f in findings), [f["message"] for f in findings]
