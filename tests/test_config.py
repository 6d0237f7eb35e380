"""Configuration files: discovery, ``extend``, command-line precedence, and errors that name the key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli

# MTP102 fires here on 0.32 (hybrid model, prefix caching on by default); nothing else does
COMPOSE = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.32.0
    command: >
      Qwen/Qwen3.6-35B-A3B
      --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}'
      --max-num-seqs 16
"""

RULE_DOCS = """\
docs:
  what: Flags MTP launches above 64 concurrent sequences.
  why: Above 64 sequences MTP costs more than it gains on our fleet.
  example: vllm serve Qwen/Qwen3.6-27B --max-num-seqs 128
  fix_safety: No fix.
  references:
    - title: Capacity review
      url: https://wiki.example.com/capacity
"""


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def codes(root: Path, *args: str) -> list[str]:
    """The MTP102 findings (the rule these tests switch on and off; other rules may fire too)."""
    exit_code, out, err = run_cli(["check", "--output-format", "json", *args], cwd=root)
    assert exit_code in (0, 1), err
    findings: list[dict[str, Any]] = json.loads(out)
    return [f["code"] for f in findings if f["code"] == "MTP102"]


def test_pyproject_tool_table_is_read(tmp_path: Path) -> None:
    write(tmp_path, {"compose.yaml": COMPOSE, "pyproject.toml": '[project]\nname = "x"\n\n[tool.mtplint]\nignore = ["MTP102"]\n'})
    assert codes(tmp_path, ".") == []


def test_pyproject_without_tool_table_is_skipped_for_a_farther_file(tmp_path: Path) -> None:
    write(tmp_path, {"mtplint.toml": 'ignore = ["MTP102"]\n', "deploy/compose.yaml": COMPOSE,
                     "deploy/pyproject.toml": '[project]\nname = "x"\n'})
    assert codes(tmp_path, "deploy") == []


def test_closest_file_wins_and_dot_file_beats_plain_name(tmp_path: Path) -> None:
    write(tmp_path, {
        "mtplint.toml": 'ignore = ["MTP102"]\n',
        "deploy/compose.yaml": COMPOSE,
        "deploy/mtplint.toml": 'ignore = ["MTP102"]\n',
        "deploy/.mtplint.toml": 'select = ["MTP1"]\n',
    })
    assert codes(tmp_path, "deploy") == ["MTP102"]
    assert codes(tmp_path / "deploy", ".") == ["MTP102"]


def test_extend_inherits_and_overrides(tmp_path: Path) -> None:
    write(tmp_path, {
        "base.toml": 'ignore = ["MTP102"]\n[engine-versions]\nvllm = "0.27.1"\n',
        "deploy/mtplint.toml": 'extend = "../base.toml"\nignore = []\n',
        "deploy/compose.yaml": COMPOSE.replace("v0.32.0", "latest"),
    })
    # ignore is overridden (so MTP102 may fire), engine-versions inherited: 0.27.1 is before hybrids defaulted on
    assert codes(tmp_path / "deploy", ".") == []
    write(tmp_path, {"base.toml": 'ignore = ["MTP102"]\n[engine-versions]\nvllm = "0.32.0"\n'})
    assert codes(tmp_path / "deploy", ".") == ["MTP102"]


def test_command_line_wins_over_the_file(tmp_path: Path) -> None:
    write(tmp_path, {"compose.yaml": COMPOSE, "mtplint.toml": 'ignore = ["MTP102"]\noutput-format = "concise"\n'})
    assert codes(tmp_path, "--select", "MTP102", ".") == ["MTP102"]
    assert codes(tmp_path, "--isolated", ".") == ["MTP102"]
    exit_code, out, _ = run_cli(["check", "--select", "prefix-caching-with-mtp", "."], cwd=tmp_path)
    assert exit_code == 1 and out.startswith("compose.yaml:6:29: MTP102 ")  # concise, from the file


def test_per_file_ignores(tmp_path: Path) -> None:
    write(tmp_path, {"deploy/compose.yaml": COMPOSE, "mtplint.toml": '[per-file-ignores]\n"deploy/*" = ["MTP1"]\n'})
    assert codes(tmp_path, ".") == []
    write(tmp_path, {"mtplint.toml": '[per-file-ignores]\n"compose.yaml" = ["prefix-caching-with-mtp"]\n'})
    assert codes(tmp_path, ".") == []
    write(tmp_path, {"mtplint.toml": '[per-file-ignores]\n"*.sh" = ["MTP102"]\n'})
    assert codes(tmp_path, ".") == ["MTP102"]


def test_per_file_ignores_are_relative_to_the_configuration_file(tmp_path: Path) -> None:
    """As ruff: a pattern naming a directory holds whichever directory mtplint runs from."""
    write(tmp_path, {"deploy/compose.yaml": COMPOSE, "other/compose.yaml": COMPOSE,
                     "mtplint.toml": '[per-file-ignores]\n"deploy/*" = ["MTP102"]\n'})
    assert codes(tmp_path / "deploy", ".") == []
    assert codes(tmp_path / "deploy", "compose.yaml") == []
    assert codes(tmp_path / "other", ".", "../deploy") == ["MTP102"]  # other/ is not deploy/
    assert codes(tmp_path, ".") == ["MTP102"]


def test_explicit_config_option(tmp_path: Path) -> None:
    write(tmp_path, {"compose.yaml": COMPOSE, "ci/strict.toml": 'ignore = ["MTP1"]\n'})
    assert codes(tmp_path, "--config", "ci/strict.toml", ".") == []


HOUSE_RULE_NO_WHEN = "code: ACME001\nname: house\nseverity: warning\nengines: [vllm]\nfix: none\nsummary: A house rule without conditions.\n" + RULE_DOCS
HOUSE_RULE = HOUSE_RULE_NO_WHEN + "when:\n  max_concurrency: {gt: 64}\n"


@pytest.mark.parametrize(
    ("files", "args", "expected"),
    [
        pytest.param({"mtplint.toml": 'selct = ["MTP1"]\n'}, [],
                     ["mtplint.toml", "key `selct`", "unknown key; did you mean `select`?"], id="unknown-key"),
        pytest.param({"mtplint.toml": 'select = "MTP1"\n'}, [],
                     ["mtplint.toml", "key `select`", "expected a list, got str"], id="wrong-type"),
        pytest.param({"pyproject.toml": '[tool.mtplint]\nper-file-ignores = ["x"]\n'}, [],
                     ["pyproject.toml [tool.mtplint]", "key `per-file-ignores`", "expected a table"], id="wrong-type-pyproject"),
        pytest.param({"mtplint.toml": 'select = ["MTP1"]\nignore = [MTP102]\n'}, [], ["mtplint.toml", "invalid TOML", "line 2"],
                     id="bad-toml"),
        pytest.param({"mtplint.toml": 'select = ["MTP1"\n'}, [], ["mtplint.toml", "invalid TOML"], id="bad-toml-at-end"),
        pytest.param({"mtplint.toml": 'ignore = ["MTP9"]\n'}, [],
                     ["mtplint.toml", "key `ignore`", "unknown rule selector 'MTP9'"], id="selector-matches-nothing"),
        pytest.param({"mtplint.toml": 'select = ["mtp 102"]\n'}, [],
                     ["mtplint.toml", "key `select.0`", "wrong form"], id="malformed-selector"),
        pytest.param({"mtplint.toml": '[per-file-ignores]\n"*.sh" = ["MTP999"]\n'}, [],
                     ["key `per-file-ignores.*.sh`", "'MTP999'"], id="per-file-ignores-selector"),
        pytest.param({"mtplint.toml": '[engine-versions]\nvllm = "latest"\n'}, [],
                     ["key `engine-versions.vllm`", "'latest'", "e.g. 0.11.0"], id="bad-engine-version"),
        pytest.param({"mtplint.toml": '[engine-versions]\ntgi = "2.0"\n'}, [],
                     ["key `engine-versions`", "tgi"], id="unknown-engine"),
        pytest.param({}, ["--engine-version", "vllm=newest"], ["--engine-version", "'newest' is not a version"],
                     id="bad-engine-version-on-command-line"),
        pytest.param({"mtplint.toml": 'gpu = "rtx-9999"\n'}, [], ["key `gpu`", "unknown GPU 'rtx-9999'", "rtx-4090"], id="unknown-gpu"),
        pytest.param({"mtplint.toml": 'objective = "speed"\n'}, [], ["key `objective`", "'latency', 'throughput'"], id="bad-objective"),
        pytest.param({"mtplint.toml": 'extend = "missing.toml"\n'}, [], ["key `extend`", "does not exist"], id="missing-extend"),
        pytest.param({"mtplint.toml": 'extend = "b.toml"\n', "b.toml": 'extend = "mtplint.toml"\n'}, [],
                     ["key `extend`", "circular"], id="circular-extend"),
        pytest.param({"mtplint.toml": 'extend-rules = ["policy"]\n'}, [], ["policy", "key `extend-rules`", "no such"],
                     id="missing-rule-dir"),
        pytest.param({"policy/ACME001.yaml": "code: ACME001\nname: house\nseverity: warning\nengines: [vllm]\nfix: none\n"
                      "summary: A rule file without its documentation.\nwhen:\n  max_concurrency: {gt: 64}\n"},
                     ["--extend-rules", "policy"], ["ACME001.yaml", "key `docs`", "missing (required)"], id="rule-missing-docs"),
        pytest.param({"policy/ACME001.yaml": HOUSE_RULE_NO_WHEN}, ["--extend-rules", "policy"],
                     ["ACME001.yaml", "key `when`", "needs conditions"], id="house-rule-without-when"),
        pytest.param({"policy/ACME001.yaml": HOUSE_RULE_NO_WHEN + "when:\n  max_concurency: {gt: 64}\n"},
                     ["--extend-rules", "policy"], ["key `when.max_concurency`", "did you mean `max_concurrency`"],
                     id="house-rule-unknown-setting"),
        pytest.param({"policy/ACME001.yaml": HOUSE_RULE_NO_WHEN + "when:\n  max_concurrency: {above: 64}\n"},
                     ["--extend-rules", "policy"], ["key `when.max_concurrency.above`", "unknown key"],
                     id="house-rule-unknown-operator"),
        pytest.param({"policy/ACME001.yaml": HOUSE_RULE_NO_WHEN.replace("severity: warning", "severity: fatal")
                      + "when:\n  max_concurrency: {gt: 64}\n"},
                     ["--extend-rules", "policy"], ["key `severity`", "'fatal' is not one of"], id="house-rule-bad-severity"),
        pytest.param({"policy/MTP102.yaml": HOUSE_RULE_NO_WHEN.replace("ACME001", "MTP102") + "when:\n  max_concurrency: {gt: 64}\n"},
                     ["--extend-rules", "policy/MTP102.yaml"], ["key `code`", "built-in rule"], id="house-rule-reuses-builtin-code"),
        pytest.param({"policy/ACME001.yaml": "code: ACME001\nname: [unclosed\n"}, ["--extend-rules", "policy"],
                     ["ACME001.yaml", "invalid YAML"], id="rule-file-bad-yaml"),
        pytest.param({"policy/ACME001.yaml": HOUSE_RULE, "policy/ACME001-copy.yaml": HOUSE_RULE},
                     ["--extend-rules", "policy"], ["ACME001-copy.yaml", "key `code`", "ACME001 is already defined in",
                                                    "ACME001.yaml"], id="house-rule-code-defined-twice"),
        pytest.param({"policy/ACME001.yaml": HOUSE_RULE.replace("name: house", "name: prefix-caching-with-mtp")},
                     ["--extend-rules", "policy"], ["ACME001.yaml", "key `name`", "already the name of MTP102"],
                     id="house-rule-reuses-builtin-name"),
        pytest.param({"policy/ACME001.yaml": HOUSE_RULE + 'message: "MTP with {max_seqs} sequences"\n'},
                     ["--extend-rules", "policy"], ["ACME001.yaml", "key `message`", "`{max_seqs}`",
                                                    "{max_concurrency}"], id="house-rule-message-unknown-placeholder"),
        pytest.param({"policy/ACME001.yaml": HOUSE_RULE + 'message: "MTP above {max_concurrency sequences"\n'},
                     ["--extend-rules", "policy"], ["ACME001.yaml", "key `message`", "{{"],
                     id="house-rule-message-unbalanced-brace"),
    ],
)
def test_broken_configuration_exits_two_and_names_file_key_problem(
    tmp_path: Path, files: dict[str, str], args: list[str], expected: list[str]
) -> None:
    write(tmp_path, {"compose.yaml": COMPOSE, **files})
    exit_code, out, err = run_cli(["check", *args, "."], cwd=tmp_path)
    assert exit_code == 2, out
    assert err.startswith("mtplint: error: ")
    for part in expected:
        assert part in err, err


def test_the_same_rule_directory_from_configuration_and_command_line(tmp_path: Path) -> None:
    """``extend-rules`` add up: naming the same directory twice loads each file once, no clash."""
    write(tmp_path, {"compose.yaml": COMPOSE, "policy/ACME001.yaml": HOUSE_RULE, "mtplint.toml": 'extend-rules = ["policy"]\n'})
    exit_code, _out, err = run_cli(["check", "--output-format", "json", "--extend-rules", "./policy", "."], cwd=tmp_path)
    assert exit_code in (0, 1), err
