"""Every built-in rule has its check, and a rule whose check module cannot be imported is reported,
never silently a rule that finds nothing (issue #23)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mtplint.checks
from mtplint.checks import REPORTED_BY_THE_RUN, predicate_for
from mtplint.checks import catalog as catalog_module
from mtplint.checks.catalog import Rule, builtin_rules
from tests.conftest import run_cli

CHECKS = Path(mtplint.checks.__file__).parent
BUILTIN = builtin_rules()

COMPOSE = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.33.0
    command: >
      Qwen/Qwen3.6-27B
      --kv-cache-dtype turboquant_4bit_nc
      --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}'
"""


@pytest.mark.parametrize("rule", [rule for rule in BUILTIN if rule.code not in REPORTED_BY_THE_RUN],
                         ids=lambda rule: rule.code)
def test_every_builtin_rule_has_a_check_that_imports(rule: Rule) -> None:
    assert (CHECKS / f"{rule.code.lower()}.py").is_file(), f"{rule.code}: no mtplint/checks/{rule.code.lower()}.py"
    assert callable(predicate_for(rule))


def test_the_rules_reported_by_the_run_are_builtin_rules_without_a_check() -> None:
    """Declared as reported by the run: built-in, and no ``check`` of their own that would never run."""
    codes = {rule.code for rule in BUILTIN}
    assert codes >= REPORTED_BY_THE_RUN
    for code in REPORTED_BY_THE_RUN:
        module = CHECKS / f"{code.lower()}.py"
        assert not module.exists() or "\ndef check(" not in module.read_text(encoding="utf-8"), code
    assert all(predicate_for(rule) is None for rule in BUILTIN if rule.code in REPORTED_BY_THE_RUN)


def _rule(code: str, name: str) -> Rule:
    return Rule(code=code, name=name, severity="warning", engines=("vllm",), fix="none",
                summary="A rule of the test.", docs={})


def test_a_builtin_rule_without_a_module_is_an_error_not_a_silent_rule() -> None:
    with pytest.raises(ModuleNotFoundError, match=r"mtplint\.checks\.mtp997"):
        predicate_for(_rule("MTP997", "no-module-written"))


@pytest.fixture
def broken_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A built-in rule MTP998 whose check module fails to import (a dependency missing)."""
    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "mtp998.py").write_text(
        "import no_such_dependency_of_mtplint\n\n\ndef check(ctx):\n    return None\n", encoding="utf-8")
    monkeypatch.setattr(mtplint.checks, "__path__", [*mtplint.checks.__path__, str(modules)])
    broken = _rule("MTP998", "broken-import")
    monkeypatch.setattr(catalog_module, "builtin_rules", lambda: (*BUILTIN, broken))
    return broken.code


@pytest.mark.parametrize(("files", "jobs"), [(1, "1"), (66, "2")])
def test_a_check_module_that_fails_to_import_is_reported_by_the_run(tmp_path: Path, broken_rule: str, files: int,
                                                                    jobs: str) -> None:
    """The broken rule gives a finding under its code at each launch it would have checked, in one
    process and with worker processes alike; the other rules still report theirs."""
    project = tmp_path / "project"
    for number in range(files):
        (project / f"svc{number}").mkdir(parents=True)
        (project / f"svc{number}" / "compose.yaml").write_text(COMPOSE, encoding="utf-8")

    code, out, err = run_cli(["check", "--isolated", "--no-cache", "--output-format", "json", "--jobs", jobs,
                              "--select", f"{broken_rule},MTP101", "."], cwd=project)

    assert code == 1, err
    findings = json.loads(out)
    assert sorted(finding["code"] for finding in findings) == ["MTP101"] * files + [broken_rule] * files
    broken = next(finding for finding in findings if finding["code"] == broken_rule)
    assert broken["message"].startswith(
        "internal error in rule MTP998 (ModuleNotFoundError: No module named 'no_such_dependency_of_mtplint')")
    assert broken["severity"] == "error"
