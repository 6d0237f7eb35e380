"""``tools/gen_vllm_spec_keys.py`` rewrites ``keys.json`` whole, from the releases it is given: it
refuses a command that would lose a release the file covers (CONTRIBUTING.md, "Adding an engine
flag table")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KEYS = ROOT / "mtplint" / "engines" / "data" / "vllm" / "speculative" / "keys.json"


def _run(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "tools/gen_vllm_spec_keys.py", *arguments], cwd=ROOT,
                          capture_output=True, text=True)


def test_a_command_that_leaves_out_a_covered_release_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "vllm" / "config").mkdir(parents=True)
    (tmp_path / "vllm" / "config" / "speculative.py").write_text("class SpeculativeConfig:\n    method: str = ''\n")
    before = KEYS.read_bytes()
    done = _run(f"0.99.0={tmp_path}")
    assert done.returncode == 2
    newest = sorted(json.loads(before)["releases"])[-1]
    assert "also covers" in done.stderr and newest in done.stderr and "--drop-missing" in done.stderr
    assert KEYS.read_bytes() == before


def test_a_folder_without_an_unpacked_vllm_is_a_usage_error(tmp_path: Path) -> None:
    done = _run(f"0.99.0={tmp_path}", "--drop-missing")
    assert done.returncode == 2 and "holding an unpacked vllm/" in done.stderr


def test_help_is_help_not_a_release() -> None:
    done = _run("--help")
    assert done.returncode == 0 and "VERSION=DIR" in done.stdout
