"""Paths as strings (:mod:`mtplint.pathtext`) answer as the ``pathlib`` objects they replaced:
the same text, name, suffix, parent, order, relative path, and the same errors."""

from __future__ import annotations

import errno
import os
from pathlib import Path, PurePosixPath

import pytest

from mtplint import pathtext

SPELLINGS = ["", ".", "..", "/", "//", "///", "a", "a/", "a//b", "./a", "a/./b", "a/.", "/a/b/", "//a/b", "///a",
             ".env", "a.", "..a", "a.tar.gz", "a/..", "x/.y", "x/.", "...", "a-b/c", "a/b", "a b/é.yaml", "-",
             "deploy/.env.prod", "compose.yaml.tpl"]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_path_string_is_the_text_name_suffix_and_parent_of_its_path_object(spelling: str) -> None:
    path = PurePosixPath(spelling)
    text = pathtext.normalized(spelling)
    assert text == str(path)
    assert pathtext.normalized(text) == text
    assert pathtext.path_name(text) == path.name
    assert pathtext.name_suffix(path.name) == path.suffix
    assert pathtext.name_stem(path.name) == path.stem
    assert pathtext.parent_dir(text) == str(path.parent)
    assert pathtext.path_parts(text) == path.parts


@pytest.mark.parametrize("base", SPELLINGS)
def test_joined_strings_and_relative_paths_are_those_of_path_objects(base: str) -> None:
    for other in SPELLINGS:
        if other:
            assert pathtext.join(pathtext.normalized(base), other) == str(PurePosixPath(base) / other), other
        try:
            expected: str | None = str(PurePosixPath(base).relative_to(other))
        except ValueError:
            expected = None
        try:
            found: str | None = pathtext.relative_to(pathtext.normalized(base), pathtext.normalized(other))
        except ValueError:
            found = None
        assert found == expected, other


def test_path_strings_sorted_by_their_parts_keep_the_order_of_path_objects() -> None:
    texts = [pathtext.normalized(spelling) for spelling in SPELLINGS]
    assert sorted(texts, key=pathtext.path_parts) == [str(path) for path in sorted(map(PurePosixPath, SPELLINGS))]
    assert sorted(["a/b", "a-b/c"]) == ["a-b/c", "a/b"]  # the strings' own order differs
    assert sorted(["a/b", "a-b/c"], key=pathtext.path_parts) == ["a/b", "a-b/c"]


def test_files_directories_and_links_are_told_as_pathlib_tells_them(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    (tmp_path / "dir").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "file")
    (tmp_path / "dangling").symlink_to(tmp_path / "missing")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    for name in ("file", "dir", "link", "dangling", "loop", "missing", "file/below", "nul\0name"):
        path = tmp_path / name
        text = str(path)
        assert (pathtext.exists(text), pathtext.is_file(text), pathtext.is_dir(text), pathtext.is_symlink(text)) == (
            path.exists(), path.is_file(), path.is_dir(), path.is_symlink()), name
    assert pathtext.resolved_path(str(tmp_path / "link")) == str((tmp_path / "link").resolve())
    assert pathtext.resolved_path(str(tmp_path / "dir" / ".." / "file")) == str((tmp_path / "dir/../file").resolve())
    with pytest.raises(RuntimeError):
        (tmp_path / "loop").resolve()
    with pytest.raises(RuntimeError):
        pathtext.resolved_path(str(tmp_path / "loop"))


def test_an_error_pathlib_raises_is_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Path.is_file()`` answers False only for a missing file; another error (a directory that
    cannot be searched, a name too long) is raised, unlike ``os.path.isfile``."""
    def refused(path: str, **_: object) -> os.stat_result:
        raise PermissionError(errno.EACCES, "Permission denied", path)

    with monkeypatch.context() as patched:
        patched.setattr(os, "stat", refused)
        with pytest.raises(PermissionError):
            Path("x").is_file()
        with pytest.raises(PermissionError):
            pathtext.is_file("x")
        assert os.path.isfile("x") is False


def test_glob_of_one_name_is_the_sorted_paths_pathlib_finds(tmp_path: Path) -> None:
    for name in ("b.yaml", "a.yml", ".hidden.yaml", "c.txt", "d.yaml.orig"):
        (tmp_path / name).write_text("")
    (tmp_path / "e.yaml").mkdir()
    found = pathtext.glob_names(str(tmp_path), lambda name: name.endswith("ml") and ".y" in name[:-2])
    assert found == [str(path) for path in sorted(tmp_path.glob("*.y*ml"))]
    assert pathtext.glob_names(str(tmp_path / "missing"), lambda name: True) == []


@pytest.mark.parametrize("path", ["/", "/a/b c/é.yaml", "/x/%41#?&;=", "/bytes/\udcff\udcfe.sh", "//host/share"])
def test_a_sarif_file_uri_is_that_of_the_path_object(path: str) -> None:
    from mtplint.report.sarif import file_uri

    assert file_uri(path) == PurePosixPath(path).as_uri()
