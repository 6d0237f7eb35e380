"""A rule's ``only_when`` (``rules/<CODE>.yaml``): a launch that does not meet it is not checked by the
rule, whose module is not even loaded, and the condition never hides a finding the rule would make."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import mtplint.checks
from mtplint.checks import _PREDICATE_MODULES, LAUNCH_CONDITIONS, run_rules
from mtplint.checks.catalog import Rule, builtin_rules
from mtplint.source import SourceFile
from tests.case_files import case_file
from tests.conftest import run_cli

CASES = Path(__file__).parent / "rules"
EXAMPLES = Path(__file__).parents[1] / "examples"
CONDITIONED = [rule for rule in builtin_rules() if rule.only_when]


def _rule(code: str, only_when: tuple[str, ...]) -> Rule:
    return Rule(code=code, name=code.lower(), severity="warning", engines=("vllm",), fix="none", summary="s",
                docs={}, only_when=only_when)


def _report(errors: list[Any], gpu: Any = None) -> Any:
    source = SourceFile("serve.sh", "serve.sh", "vllm serve m --max-num-seqs 512\n")
    launch = SimpleNamespace(engine="vllm", span=source.span(0, 10), source=source)
    return SimpleNamespace(launch=launch, undecided=[], version=None, parsed=SimpleNamespace(errors=errors),
                           hardware=SimpleNamespace(gpu=gpu))


@pytest.mark.parametrize(("condition", "unmet", "met"), [
    ("refused", {"errors": []}, {"errors": ["unrecognized arguments: --bogus"]}),
    ("gpu-named", {"errors": [], "gpu": None}, {"errors": [], "gpu": "rtx-4090"}),
])
def test_a_rule_is_not_loaded_for_a_launch_without_its_condition(
        condition: str, unmet: dict[str, Any], met: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    # MTP997 has no module: asking for its check would raise ModuleNotFoundError
    rule = _rule("MTP997", (condition,))
    assert run_rules([rule], _report(**unmet)) == []
    assert "MTP997" not in _PREDICATE_MODULES
    ran: list[str] = []
    monkeypatch.setitem(_PREDICATE_MODULES, "MTP997", SimpleNamespace(check=lambda ctx: ran.append(ctx.rule.code)))
    run_rules([rule], _report(**met))
    assert ran == ["MTP997"]


def test_every_condition_a_rule_file_names_is_known() -> None:
    assert CONDITIONED, "no built-in rule declares only_when"
    for rule in CONDITIONED:
        assert set(rule.only_when) <= LAUNCH_CONDITIONS.keys(), rule.code


def test_a_shell_launch_the_engine_accepts_loads_no_rule_that_explains_a_refusal(tmp_path: Path) -> None:
    """The rules that explain a refusal (and those that need the GPU) stay unloaded for a launch with
    neither, in a fresh interpreter as a one-file check runs."""
    import subprocess
    import sys

    (tmp_path / "serve.sh").write_text("vllm serve Qwen/Qwen3.6-27B --max-num-seqs 4 "
                                       "--speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 1}'\n",
                                       encoding="utf-8")
    program = ("import io, sys; from mtplint.cli import main; "
               "main(['check', '--isolated', '--no-cache', 'serve.sh'], io.StringIO(), io.StringIO()); "
               "print(' '.join(sorted(m for m in sys.modules if m.startswith('mtplint.checks.mtp'))))")
    loaded = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True, check=True,
                            env={"PYTHONPATH": str(Path(mtplint.checks.__file__).parents[2]), "PATH": ""}).stdout.split()
    assert "mtplint.checks.mtp102" in loaded  # the vLLM rules ran
    unloaded = {f"mtplint.checks.{rule.code.lower()}" for rule in CONDITIONED}
    assert not unloaded & set(loaded)


def _findings(code: str, files: dict[str, str], args: list[str], cwd: Path) -> list[dict[str, Any]]:
    for name, text in files.items():
        target = cwd / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    exit_code, out, err = run_cli(["check", "--output-format", "json", "--isolated", "--no-cache", "--select", code,
                                   *args, "."], cwd=cwd)
    assert exit_code in (0, 1), err
    found: list[dict[str, Any]] = json.loads(out)
    return found


@pytest.mark.parametrize("rule", CONDITIONED, ids=lambda rule: rule.code)
def test_the_condition_hides_no_finding(rule: Rule, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule's own cases and the bundled examples give the same findings with every launch taken
    as meeting the rule's condition (the rule run on all of them)."""
    data = case_file(CASES / f"{rule.code}.yaml")
    projects = [(case["files"], case.get("args", [])) for polarity in ("positive", "negative")
                for case in data.get(polarity) or []]
    projects.append(({str(path.relative_to(EXAMPLES)): path.read_text(encoding="utf-8")
                      for path in EXAMPLES.rglob("*") if path.is_file()}, []))
    for number, (files, args) in enumerate(projects):
        as_declared = _findings(rule.code, files, args, tmp_path / f"declared-{number}")
        with monkeypatch.context() as patched:
            patched.setattr(mtplint.checks, "LAUNCH_CONDITIONS", dict.fromkeys(LAUNCH_CONDITIONS, lambda report: True))
            patched.setattr(mtplint.checks, "_PLANS", {})
            unconditioned = _findings(rule.code, files, args, tmp_path / f"unconditioned-{number}")
        assert unconditioned == as_declared, (rule.code, sorted(files))
