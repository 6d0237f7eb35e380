"""Issue #19, acceptance 2: no summary counts a fix that ``--fix`` would not apply.

Over every case of the rule fixtures (``tests/rules``) and the golden fixes (``tests/fixes``), with
all rules on and ``--unsafe-fixes`` (so that a rename exposing another rule's finding, as MTP403's
did with MTP302, is in play): the findings a plain ``check`` marks ``[*]`` are as many as its "N
fixable" line says, ``check --fix`` then removes every one of them (and says it fixed at least
that many), and what it leaves is not counted as fixable any more.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.case_files import case_file, case_files
from tests.conftest import run_cli, write_files

TESTS = Path(__file__).parent
_FIXABLE = re.compile(r"^\[\*\] (\d+) fixable with the `--fix` option", re.MULTILINE)
_FIXED = re.compile(r"^Found \d+ findings? \((\d+) fixed, \d+ remaining\)\.$", re.MULTILINE)
#: a concise line: ``file:line:col: CODE [*] message`` (the mark only on a fix --fix applies)
_LINE = re.compile(r"^(?P<file>[^:\n]+):\d+:\d+: (?P<code>[A-Z]+\d+) (?P<mark>\[\*\] )?(?P<message>.*)$", re.MULTILINE)


def _cases() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for folder in ("rules", "fixes"):
        for path in case_files(TESTS / folder):
            data = case_file(path)
            for section in ("positive", "negative", "cases"):
                for case in data.get(section) or []:
                    found.append((f"{folder}/{path.stem}/{case['name']}", case))
    return found


CASES = _cases()


def _marked(output: str) -> Counter[tuple[str, str, str]]:
    return Counter((m["file"], m["code"], m["message"]) for m in _LINE.finditer(output) if m["mark"])


def _all(output: str) -> Counter[tuple[str, str, str]]:
    return Counter((m["file"], m["code"], m["message"]) for m in _LINE.finditer(output))


@pytest.mark.parametrize("case", [case for _, case in CASES], ids=[name for name, _ in CASES])
def test_fixable_count_is_what_fix_then_applies(case: dict[str, Any], tmp_path: Path) -> None:
    write_files(tmp_path, case["files"])
    args = [*(str(arg) for arg in case.get("args", []) if arg != "--unsafe-fixes"), "--unsafe-fixes"]
    _, out, _ = run_cli(["check", "--isolated", "--output-format", "concise", *args, "."], cwd=tmp_path)
    marked = _marked(out)
    counted = _FIXABLE.search(out)
    assert (int(counted[1]) if counted else 0) == sum(marked.values()), out
    if not marked:
        return
    _, fixed_out, err = run_cli(["check", "--isolated", "--fix", "--output-format", "concise", *args, "."],
                                cwd=tmp_path)
    remaining = _all(fixed_out)
    assert not [finding for finding in marked if remaining[finding]], (
        f"counted as fixable but still there after --fix:\n{fixed_out}\n{err}")
    fixed = _FIXED.search(fixed_out)
    assert fixed is not None and int(fixed[1]) >= sum(marked.values()), fixed_out
    assert _FIXABLE.search(fixed_out) is None and not _marked(fixed_out), fixed_out


def test_a_refused_fix_is_shown_not_counted(tmp_path: Path) -> None:
    """The issue's MTP403 case: renaming ``--draft-max 6`` to ``--spec-draft-n-max 6`` would expose
    MTP302 (six draft tokens from a one-layer MTP head), so --fix refuses it; ``check`` shows the
    fix with the reason, without ``[*]`` and without counting it."""
    script = tmp_path / "serve.sh"
    text = ("#!/usr/bin/env bash\n"
            "exec llama-server -m /models/Qwen3.6-27B-UD-Q4_K_XL.gguf \\\n"
            "  --spec-type draft-mtp --draft-max 6 -np 1 --port 8080\n")
    script.write_text(text)
    pin = ["--engine-version", "llama.cpp=b10000"]
    _, out, _ = run_cli(["check", "--isolated", "--show-fixes", *pin, "."], cwd=tmp_path)
    assert "MTP403 [*]" not in out and "fixable" not in out, out
    assert ("Rename `--draft-max` to `--spec-draft-n-max` (not applied by --fix: the result has a new finding "
            "(MTP302") in out
    code, out, err = run_cli(["check", "--isolated", "--fix", *pin, "."], cwd=tmp_path)
    assert script.read_text() == text
    assert "MTP403: fix not applied" in err and "fixable" not in out
    assert code == 1
