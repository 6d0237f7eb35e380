"""The cache directory is mtplint's only when mtplint created it: `check` never writes into a
folder of the user's ($MTPLINT_CACHE_DIR=., $HOME, a folder with files) and `clean` never deletes one."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from mtplint.cache_directory import OWNER_MARKER
from tests.conftest import run_cli, write_files
from tests.speedtree import build

COMPOSE = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.32.0
    command: >
      Qwen/Qwen3.6-27B-FP8
      --kv-cache-dtype turboquant_4bit_nc
      --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}'
"""


def _snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) below ``root``, by relative path."""
    found: dict[str, bytes | None] = {}
    for directory, folders, files in os.walk(root):
        for name in folders:
            found[os.path.relpath(os.path.join(directory, name), root)] = None
        for name in files:
            path = os.path.join(directory, name)
            found[os.path.relpath(path, root)] = Path(path).read_bytes()
    return found


def _check_and_clean(cwd: Path, target: str) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    checked = run_cli(["check", "--output-format", "json", "--exit-zero", target], cwd=cwd)
    cleaned = run_cli(["clean"], cwd=cwd)
    return checked, cleaned


def _mtp101(output: str) -> list[str]:
    return [finding["filename"] for finding in json.loads(output) if finding["code"] == "MTP101"]


def test_an_existing_folder_with_files_is_neither_written_nor_removed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = write_files(tmp_path / "project", {"compose.yaml": COMPOSE})
    keep = write_files(tmp_path / "keep", {"notes.txt": "mine\n", "photos/cat.jpg": b"\xff\xd8\xff"})
    before = _snapshot(keep)
    monkeypatch.setenv("MTPLINT_CACHE_DIR", str(keep))
    (code, out, err), (clean_code, _, clean_err) = _check_and_clean(project, "compose.yaml")
    assert code == 0 and _mtp101(out) == ["compose.yaml"]  # the run lints, without the cache
    assert "not using the cache" in err and str(keep) in err
    assert clean_code == 2 and "refusing to remove" in clean_err and "mtplint did not create it" in clean_err
    assert _snapshot(keep) == before  # no CACHEDIR.TAG, no .gitignore, no entry, nothing removed


def test_the_working_directory_of_a_git_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = write_files(tmp_path / "repo", {"deploy/compose.yaml": COMPOSE, "README.md": "# ops\n"})
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    before = _snapshot(repo)
    monkeypatch.setenv("MTPLINT_CACHE_DIR", ".")
    (code, out, err), (clean_code, _, clean_err) = _check_and_clean(repo, ".")
    assert code == 0 and _mtp101(out) == ["deploy/compose.yaml"] and "not using the cache" in err
    assert clean_code == 2 and "refusing to remove" in clean_err
    assert _snapshot(repo) == before  # no ./.gitignore hiding new files, .git and every file kept
    status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=all"],
                            capture_output=True, text=True, check=True).stdout
    assert sorted(line[3:] for line in status.splitlines()) == ["README.md", "deploy/compose.yaml"]


def test_the_home_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = write_files(tmp_path / "home", {".bashrc": "export PATH\n", "work/compose.yaml": COMPOSE})
    before = _snapshot(home)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MTPLINT_CACHE_DIR", str(home))
    (code, out, _), (clean_code, _, clean_err) = _check_and_clean(home / "work", ".")
    assert code == 0 and _mtp101(out) == ["compose.yaml"]
    assert clean_code == 2 and "refusing to remove" in clean_err
    assert _snapshot(home) == before


def test_an_empty_folder_of_the_users_is_not_adopted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = write_files(tmp_path / "project", {"compose.yaml": COMPOSE})
    empty = tmp_path / "ci-cache"
    empty.mkdir()
    monkeypatch.setenv("MTPLINT_CACHE_DIR", str(empty))
    (code, _, err), (clean_code, _, _) = _check_and_clean(project, "compose.yaml")
    assert code == 0 and "not using the cache" in err
    assert clean_code == 2 and empty.is_dir() and not list(empty.iterdir())


def test_a_directory_mtplint_created_is_marked_reused_and_cleaned(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = build(tmp_path, copies=1)
    cache = tmp_path / "caches" / "mtplint"
    monkeypatch.setenv("MTPLINT_CACHE_DIR", str(cache))
    first = run_cli(["check", "--output-format", "json", str(tree)], cwd=tmp_path)
    assert (cache / OWNER_MARKER).is_file() and (cache / "CACHEDIR.TAG").is_file()
    entries = sorted(cache.rglob("*.json"))
    assert entries and first[2] == ""
    assert run_cli(["check", "--output-format", "json", str(tree)], cwd=tmp_path) == first
    assert sorted(cache.rglob("*.json")) == entries
    code, out, _ = run_cli(["clean"], cwd=tmp_path)
    assert code == 0 and f"Removing cache at: {cache}" in out
    assert not cache.exists() and (tmp_path / "caches").is_dir()  # only what it created


def test_a_file_put_into_mtplints_directory_stops_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = build(tmp_path, copies=1)
    monkeypatch.delenv("MTPLINT_CACHE_DIR")
    run_cli(["check", "--output-format", "json", str(tree)], cwd=tmp_path)
    cache = tmp_path / ".mtplint_cache"
    assert (cache / OWNER_MARKER).is_file()
    (cache / "v1" / "results.csv").write_text("run,seconds\n")
    code, _, err = run_cli(["clean"], cwd=tmp_path)
    assert code == 2 and "v1/results.csv" in err and (cache / "v1" / "results.csv").is_file()
    (cache / "v1" / "results.csv").unlink()
    assert run_cli(["clean"], cwd=tmp_path)[0] == 0 and not cache.exists()


def test_a_copied_marker_does_not_make_a_repository_removable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = write_files(tmp_path / "repo", {"compose.yaml": COMPOSE, OWNER_MARKER: "copied\n"})
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    before = _snapshot(repo)
    monkeypatch.setenv("MTPLINT_CACHE_DIR", str(repo))
    code, _, err = run_cli(["clean"], cwd=tmp_path)
    assert code == 2 and "root of a git repository" in err and _snapshot(repo) == before
