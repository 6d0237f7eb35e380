"""Golden before/after tests for every fix: ``tests/fixes/<CODE>.yaml``.

A case is a small project (``files``) and the exact content some files must have (``after``) after
``mtplint check --fix --isolated --select CODE [args] .`` (``args`` may add ``--unsafe-fixes`` and
version pins). Every case also checks that no fix was dropped, that the files not in ``after`` are
unchanged, that a second ``--fix`` changes nothing (idempotence) and that ``check`` no longer
reports the code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.case_files import case_file, case_files
from tests.conftest import run_cli, write_files

CASES_DIR = Path(__file__).parent / "fixes"


def _cases() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in case_files(CASES_DIR):
        data = case_file(path)
        for case in data.get("cases") or []:
            found.append((path.stem, case))
    return found


ALL_CASES = _cases()


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(("code", "case"), ALL_CASES, ids=[f"{code}-{case['name']}" for code, case in ALL_CASES])
def test_fix_case(code: str, case: dict[str, Any], tmp_path: Path) -> None:
    write_files(tmp_path, case["files"])
    args = ["check", "--fix", "--isolated", "--select", code, *case.get("args", []), "."]
    exit_code, _, err = run_cli(args, cwd=tmp_path)
    assert exit_code in (0, 1), err
    assert "fix not applied" not in err, f"{case['name']}: {err}"
    for name, expected in case["after"].items():
        assert (tmp_path / name).read_text(encoding="utf-8") == expected, f"{case['name']}: {name}"
    for name, text in case["files"].items():
        if name not in case["after"]:
            assert (tmp_path / name).read_bytes() == text.encode("utf-8"), f"{case['name']}: {name} changed"
    before_second = _snapshot(tmp_path)
    run_cli(args, cwd=tmp_path)
    assert _snapshot(tmp_path) == before_second, f"{case['name']}: a second --fix changed the files"
    unsafe = [a for a in case.get("args", []) if a == "--unsafe-fixes"]
    check_args = ["check", "--isolated", "--output-format", "json", "--select", code,
                  *[a for a in case.get("args", []) if a not in unsafe], "."]
    _, out, _ = run_cli(check_args, cwd=tmp_path)
    assert [f for f in json.loads(out) if f["code"] == code] == [], f"{case['name']}: {code} still reported"


def test_every_fixable_rule_has_golden_cases_in_two_source_kinds() -> None:
    from mtplint.checks.catalog import builtin_rules
    from mtplint.discover import classify

    fixable = [rule.code for rule in builtin_rules() if rule.fix in ("safe", "unsafe")]
    kinds_by_code: dict[str, set[str]] = {}
    for code, case in ALL_CASES:
        kinds_by_code.setdefault(code, set()).update(classify(Path(name)) or Path(name).name for name in case["after"])
    thin = {code: sorted(kinds_by_code.get(code, ())) for code in fixable if len(kinds_by_code.get(code, ())) < 2}
    assert not thin, f"fixable rules without golden fix cases in two source kinds: {thin}"
