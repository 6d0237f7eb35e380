"""The rule catalog: every code of RULES.md exists, is documented, cited and has fixtures."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from mtplint.checks.catalog import builtin_rules, rules_dir, schema
from tests.conftest import DATA, run_cli

SPEC_CODES = sorted(set(re.findall(r"^\| (MTP\d{3}) \|", (DATA / "spec" / "RULES.md").read_text(), re.MULTILINE)))
CASES = Path(__file__).parent / "rules"


def test_rules_json_lists_every_code_of_the_spec() -> None:
    code, out, _ = run_cli(["rules", "--output-format", "json"])
    assert code == 0
    listed = [rule["code"] for rule in json.loads(out)]
    assert len(SPEC_CODES) >= 40
    assert sorted(listed) == SPEC_CODES


@pytest.mark.parametrize("path", sorted(Path(rules_dir()).glob("MTP*.yaml")), ids=lambda p: p.stem)
def test_rule_file_is_valid_and_documented(path: Path) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema("rule.schema.json")).validate(data)
    assert data["code"] == path.stem
    for section in ("what", "why", "example", "fix_safety", "references"):
        assert data["docs"][section], f"{path.stem}: empty {section}"
    assert any(ref.get("url") or ref.get("source") for ref in data["docs"]["references"])


@pytest.mark.parametrize("code", SPEC_CODES)
def test_every_rule_has_positive_and_negative_fixtures(code: str) -> None:
    path = CASES / f"{code}.yaml"
    assert path.is_file(), f"no fixtures for {code} ({path})"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert data.get("positive"), f"{code}: no positive case"
    assert data.get("negative"), f"{code}: no negative case"


@pytest.mark.parametrize("code", SPEC_CODES)
def test_rule_documentation_prints(code: str) -> None:
    exit_code, out, _ = run_cli(["rule", code])
    assert exit_code == 0
    assert out.startswith("# ") and "## What it does" in out and "## Why is this bad?" in out and "## References" in out


def test_rule_names_are_unique() -> None:
    names = [rule.name for rule in builtin_rules()]
    assert len(names) == len(set(names))
