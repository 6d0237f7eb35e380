"""FileLoader.first_file answers from one listing of the directory what asking ``is_file`` of each
name in turn answers: files, directories and symbolic links by the names compose and kustomize
look for, a directory that is missing, and one that cannot be listed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtplint.extract import FileLoader
from mtplint.extract.compose import DEFAULT_FILE_NAMES, DEFAULT_OVERRIDE_NAMES
from mtplint.extract.k8s import KUSTOMIZATION_FILES

_NAMES = (*DEFAULT_FILE_NAMES, *DEFAULT_OVERRIDE_NAMES, *KUSTOMIZATION_FILES)
_KINDS = st.sampled_from(["file", "directory", "link to a file", "link to nothing", "Upper-case file"])


def _first_by_asking(directory: Path, names: tuple[str, ...]) -> str | None:
    return next((name for name in names if (directory / name).is_file()), None)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(present=st.dictionaries(st.sampled_from(_NAMES), _KINDS, max_size=5))
def test_the_listing_finds_the_name_asking_finds(tmp_path_factory: pytest.TempPathFactory,
                                                 present: dict[str, str]) -> None:
    directory = tmp_path_factory.mktemp("project")
    (directory / "target.txt").write_text("x", encoding="utf-8")
    for name, kind in present.items():
        path = directory / name
        if kind == "file":
            path.write_text("a: 1\n", encoding="utf-8")
        elif kind == "directory":
            path.mkdir()
        elif kind == "link to a file":
            path.symlink_to(directory / "target.txt")
        elif kind == "link to nothing":
            path.symlink_to(directory / "missing.txt")
        else:
            (directory / name.upper()).write_text("a: 1\n", encoding="utf-8")
    loader = FileLoader(directory)
    for names in (DEFAULT_FILE_NAMES, DEFAULT_OVERRIDE_NAMES, KUSTOMIZATION_FILES):
        assert loader.first_file(directory, names) == _first_by_asking(directory, names)
        assert loader.first_file(directory, names) == _first_by_asking(directory, names)  # from the listing


def test_a_missing_directory_has_no_file_and_an_unlistable_one_is_asked_name_by_name(tmp_path: Path) -> None:
    loader = FileLoader(tmp_path)
    assert loader.first_file(tmp_path / "missing", DEFAULT_FILE_NAMES) is None
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "compose.yml").write_text("services: {}\n", encoding="utf-8")
    os.chmod(locked, 0o111)  # searchable, not readable: its files can be opened by name
    try:
        assert loader.first_file(locked, DEFAULT_FILE_NAMES) == _first_by_asking(locked, DEFAULT_FILE_NAMES)
    finally:
        os.chmod(locked, 0o755)


def test_the_walk_holds_the_names_of_the_directories_it_is_in(tmp_path: Path) -> None:
    """While the walk hands out a file, the names of its directory and of each one above it are
    those ``os.listdir`` gives, whatever each entry is, by the directory's real path; none once
    the walk is over."""
    from mtplint.discover import WalkListings, discover_as_walked

    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    (deep / "serve.sh").write_text("vllm serve m\n", encoding="utf-8")
    (tmp_path / "a" / "compose.yaml").write_text("services: {}\n", encoding="utf-8")
    (tmp_path / "a" / "to-b").symlink_to(deep)
    (tmp_path / "a" / "nowhere").symlink_to(tmp_path / "missing")
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "a" / "pipe")
    listings: WalkListings = {}
    seen: dict[str, dict[str, list[str]]] = {}
    for candidate in discover_as_walked([tmp_path], tmp_path, listings=listings):
        seen[candidate.path] = {directory: sorted(names) for directory, names in listings.items()}
    real = os.path.realpath(tmp_path)
    expected = {directory: sorted(os.listdir(directory)) for directory in (real, f"{real}/a", f"{real}/a/b")}
    assert seen[str(deep / "serve.sh")] == expected
    assert seen[str(tmp_path / "a" / "compose.yaml")] == {key: expected[key] for key in (real, f"{real}/a")}
    assert listings == {}


def test_the_walk_does_not_hold_the_names_of_a_large_directory(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A directory of many names (a flat folder of services) is listed again by whoever asks: its
    names are not held for as long as the walk is below it."""
    from mtplint import discover

    monkeypatch.setattr(discover, "WALK_LISTING_NAMES", 2)
    for name in ("a", "b", "c"):
        (tmp_path / "flat" / name).mkdir(parents=True)
        (tmp_path / "flat" / name / "serve.sh").write_text("vllm serve m\n", encoding="utf-8")
    listings: discover.WalkListings = {}
    held = [sorted(listings) for _ in discover.discover_as_walked([tmp_path], tmp_path, listings=listings)]
    real = os.path.realpath(tmp_path)
    assert held == [[real, f"{real}/flat/{name}"] for name in ("a", "b", "c")]


def test_a_run_lists_no_directory_its_walk_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Compose, kustomize and the version pins look at the names beside each launch: a run over a
    tree takes them from its walk, not from a second listing of each directory."""
    import io

    from mtplint.cli import main

    project = tmp_path / "deploy" / "vllm"
    project.mkdir(parents=True)
    (project / "compose.yaml").write_text(
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.11.0\n    env_file: .env\n    command:\n"
        "      - --model\n      - Qwen/Qwen3-8B\n      - --speculative-config\n"
        "      - '{\"method\": \"mtp\", \"num_speculative_tokens\": 2}'\n",
        encoding="utf-8")
    (project / ".env").write_text("HF_TOKEN=x\n", encoding="utf-8")
    listed: list[str] = []
    real_listdir = os.listdir

    def recorded(path: str = ".") -> list[str]:
        listed.append(os.path.realpath(path))
        return real_listdir(path)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(os, "listdir", recorded)
    out = io.StringIO()
    main(["check", "--no-cache", "--exit-zero", "--output-format", "concise", "."], out=out)
    assert "compose.yaml" in out.getvalue()
    inside = os.path.realpath(tmp_path)
    assert [path for path in listed if path == inside or path.startswith(inside + os.sep)] == []
