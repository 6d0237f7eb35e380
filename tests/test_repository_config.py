"""The repository's own configuration: ``mtplint check`` at its root reports nothing from its test
fixtures or examples (as ruff's configuration excludes its fixtures), while naming them still
lints them, and the dogfooding pre-commit hook leaves out the same folders."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import run_cli

ROOT = Path(__file__).resolve().parents[1]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _excluded_folders() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    excludes: list[str] = config["tool"]["mtplint"]["exclude"]
    return excludes


def _findings(*args: str) -> list[str]:
    code, out, err = run_cli(["check", "--output-format", "json", "--exit-zero", "--no-cache", *args], cwd=ROOT)
    assert code == 0, err
    return [finding["filename"] for finding in json.loads(out)]


@pytest.mark.slow
def test_check_at_the_root_reports_no_fixture() -> None:
    assert _findings() == []  # no path: `.`
    # what the configuration keeps out: every finding of a run without it lies in an excluded folder
    # (and there are such findings: the exclusion is what keeps the root's run clean)
    without = _findings("--isolated", ".")
    folders = _excluded_folders()
    assert {"tests/data", "examples"} <= {folder for folder in folders
                                          if any(name.startswith(folder + "/") for name in without)}
    assert [name for name in without if not any(name.startswith(folder + "/") for folder in folders)] == []


def test_folders_named_on_the_command_line_are_linted() -> None:
    """The README's first command, and a fixture folder named explicitly (ruff lints what it is named)."""
    examples = _findings("examples/")
    assert {name.split("/")[1] for name in examples} >= {"vllm-compose", "sglang-compose", "k8s", "python", "scripts"}
    assert _findings("examples/vllm-compose/compose.yaml") == [name for name in examples
                                                               if name == "examples/vllm-compose/compose.yaml"]
    assert all(name.startswith("tests/data/headline/") for name in _findings("tests/data/headline"))
    assert _findings("tests/data/headline")


def test_the_dogfood_hook_is_the_published_one_with_the_configurations_exclusions() -> None:
    published = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    (local,) = [hook for repo in config["repos"] if repo["repo"] == "local" for hook in repo["hooks"]
                if hook["id"] == "mtplint"]
    for key in ("entry", "files", "types", "require_serial"):
        assert local[key] == published["mtplint"][key], key
    exclude = re.compile(local["exclude"])
    for folder in _excluded_folders():
        assert exclude.search(f"{folder}/compose.yaml"), folder
    for kept in ("bench/run.py", "mtplint/cli.py", "tools/regenerate.py", "tests/test_cli_exit.py"):
        assert not exclude.search(kept), kept


def test_exclude_applies_to_what_a_walk_finds_below_a_named_folder(tmp_path: Path) -> None:
    from tests.test_stdin import COMPOSE

    files = {"mtplint.toml": 'exclude = ["legacy", "*.bak.yaml"]\n', "legacy/old/compose.yaml": COMPOSE,
             "legacy/old/compose.bak.yaml": COMPOSE, "deploy/compose.bak.yaml": COMPOSE}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")

    def linted(*args: str) -> set[str]:
        code, out, err = run_cli(["check", "--output-format", "json", "--exit-zero", *args], cwd=tmp_path)
        assert code == 0, err
        return {finding["filename"] for finding in json.loads(out)}

    assert linted(".") == set()
    # a folder named, or one inside it: the pattern that names the folder no longer applies, the others do
    assert linted("legacy") == linted("legacy/old") == {"legacy/old/compose.yaml"}
    assert linted("legacy/old/compose.bak.yaml") == {"legacy/old/compose.bak.yaml"}  # a file named is linted
    assert linted("deploy") == set()


def test_the_dogfood_hook_passes_on_the_repository() -> None:
    """What pre-commit would pass the hook (tracked files, its files and exclude patterns) lints clean."""
    import subprocess

    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False)
    if listed.returncode != 0:
        pytest.skip("not a git checkout (an sdist): pre-commit would not run here")
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    (hook,) = [hook for repo in config["repos"] if repo["repo"] == "local" for hook in repo["hooks"]
               if hook["id"] == "mtplint"]
    files, exclude = re.compile(hook["files"]), re.compile(hook["exclude"])
    names = [name for name in listed.stdout.decode().split("\0")
             if name and files.search(name) and not exclude.search(name) and (ROOT / name).is_file()]
    assert any(name.startswith("mtplint/") for name in names)
    code, out, err = run_cli(["check", "--output-format", "json", "--no-cache", *names], cwd=ROOT)
    assert (code, json.loads(out)) == (0, []), err
