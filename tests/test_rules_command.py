"""``mtplint rules`` and ``mtplint rule`` show the house rules a ``check`` in the same place runs:
the README's house-rule example, verbatim, from the configuration and from ``--extend-rules``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import run_cli, write_files

README = Path(__file__).resolve().parents[1] / "README.md"


def _readme_house_rule() -> tuple[str, str]:
    """The README's house-rule file (its first line names the path) and its ``extend-rules`` line."""
    text = README.read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(# (policy/ACME001\.yaml)\n.*?)```", text, re.DOTALL)
    setting = re.search(r'`(extend-rules = \["policy"\])`', text)
    assert block is not None and setting is not None, "the README's house-rule example moved"
    return block.group(1), setting.group(1)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    rule, setting = _readme_house_rule()
    return write_files(tmp_path / "project", {"policy/ACME001.yaml": rule,
                                               "pyproject.toml": f"[project]\nname = 'ops'\n\n[tool.mtplint]\n{setting}\n",
                                               "deploy/README.md": "deployments\n"})


def test_rules_lists_the_readme_house_rule_from_the_configuration(project: Path) -> None:
    code, out, err = run_cli(["rules"], cwd=project)
    assert code == 0, err
    (line,) = [line for line in out.splitlines() if line.startswith("ACME001")]
    assert "mtp-above-64-sequences" in line and "warning" in line and "house rule" in line
    assert any(line.startswith("MTP101") for line in out.splitlines())  # built-in rules are still listed
    # from a folder below, the configuration is found upwards, as check finds it
    code, out, _ = run_cli(["rules", "--output-format", "json"], cwd=project / "deploy")
    assert code == 0
    (entry,) = [rule for rule in json.loads(out) if rule["code"] == "ACME001"]
    assert entry["origin"].endswith("ACME001.yaml") and entry["summary"].startswith("Our MTP deployments")


def test_rule_shows_the_readme_house_rules_documentation(project: Path) -> None:
    for wanted in ("ACME001", "acme001", "mtp-above-64-sequences"):
        code, out, err = run_cli(["rule", wanted], cwd=project)
        assert code == 0, err
        assert out.startswith("# mtp-above-64-sequences (ACME001)")
        assert "House rule from" in out and "capacity review 2026-Q2" in out
        assert "https://wiki.example.com/platform/mtp-capacity" in out


def test_extend_rules_on_the_command_line(project: Path) -> None:
    (project / "pyproject.toml").unlink()
    assert run_cli(["rule", "ACME001"], cwd=project)[0] == 2  # no configuration, no house rule
    code, out, _ = run_cli(["rule", "ACME001", "--extend-rules", "policy"], cwd=project)
    assert code == 0 and out.startswith("# mtp-above-64-sequences (ACME001)")
    code, out, _ = run_cli(["rules", "--extend-rules", "policy/ACME001.yaml"], cwd=project)
    assert code == 0 and "\nACME001  mtp-above-64-sequences" in out


def test_isolated_and_config_choose_the_configuration(project: Path) -> None:
    code, out, _ = run_cli(["rules", "--isolated"], cwd=project)
    assert code == 0 and "ACME001" not in out
    elsewhere = project.parent
    code, out, _ = run_cli(["rules", "--config", str(project / "pyproject.toml")], cwd=elsewhere)
    assert code == 0 and "ACME001" in out


def test_a_broken_house_rule_is_reported_as_check_reports_it(project: Path) -> None:
    (project / "policy" / "ACME001.yaml").write_text("code: ACME001\nname: x\n", encoding="utf-8")
    rules = run_cli(["rules"], cwd=project)
    check = run_cli(["check", "."], cwd=project)
    assert rules[0] == check[0] == 2
    assert rules[2] == check[2] and "ACME001.yaml" in rules[2]


def test_the_readme_example_fires_in_check(project: Path) -> None:
    write_files(project, {"deploy/compose.yaml": (
        "services:\n  qwen:\n    image: vllm/vllm-openai:v0.30.0\n    command: >\n"
        "      Qwen/Qwen3.6-27B --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 2}'\n"
        "      --no-enable-prefix-caching --max-num-seqs 128\n")})
    code, out, _ = run_cli(["check", "--output-format", "json", "--select", "ACME001", "."], cwd=project)
    (finding,) = json.loads(out)
    assert code == 1 and finding["message"].startswith("MTP with 128 concurrent sequences")
