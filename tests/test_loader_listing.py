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
