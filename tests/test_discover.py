"""Discovery: classification, .gitignore and exclude, the byte-level prefilter."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from mtplint.discover import classify, discover, relevant
from mtplint.extract import FileLoader


def test_classification_by_name_and_shebang() -> None:
    assert classify(Path("docker-compose.prod.yml")) == "compose"
    assert classify(Path("compose.yaml")) == "compose"
    assert classify(Path("k8s/deploy.yaml")) == "yaml"
    assert classify(Path("run.sh")) == "shell"
    assert classify(Path("bin/serve"), b"#!/usr/bin/env bash\nvllm serve m\n") == "shell"
    assert classify(Path("bin/launch"), b"#!/usr/bin/env -S python3 -u\n") == "python"
    assert classify(Path("deploy/start.vllm"), b"#!/bin/bash\nvllm serve m\n") == "shell"
    # another language's source is not opened for a first line (a monorepo has thousands)
    assert classify(Path("web/server.js"), b"#!/bin/sh\n") is None
    assert classify(Path("cmd/main.go"), b"#!/bin/sh\n") is None
    assert classify(Path("Dockerfile.vllm")) == "dockerfile"
    assert classify(Path("vllm.Dockerfile")) == "dockerfile"
    assert classify(Path("vllm.service")) == "systemd"
    assert classify(Path("presets.ini")) == "ini"
    assert classify(Path("README.md")) is None
    assert classify(Path("notes"), b"plain text") is None


def test_prefilter_skips_unrelated_files() -> None:
    assert relevant(b"services:\n  web:\n    image: nginx\n", "compose") is False
    assert relevant(b"vllm serve m", "shell") is True
    assert relevant(b"--spec-type draft-mtp", "shell") is True
    assert relevant(b'{"method": "deepseek_mtp"}', "yaml") is True
    assert relevant(b"mtp:\n  num_speculative_tokens: 2\n", "yaml") is True
    # a mail setting is not a speculative one: the file is skipped before any parser runs
    assert relevant(b"notify:\n  smtp_host: smtp.example.com\n", "yaml") is False
    # the letter check looks at the byte before ``mtp`` only: at the start, after a capital or a
    # digit it counts; an ``m`` before it (``mmtp``) is a letter like any other
    assert relevant(b"mtp", "yaml") is True
    assert relevant(b"Smtp_host: x", "yaml") is True
    assert relevant(b"x2mtp", "yaml") is True
    assert relevant(b"mmtp", "yaml") is False
    assert relevant(b"smtp: a\nmethod: mtp\n", "yaml") is True
    assert relevant(b"[Service]\nExecStart=/opt/start.sh\n", "systemd") is True


def test_gitignore_exclude_and_default_folders(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("generated/\n*.tmp.yaml\n")
    for name in ["compose.yaml", "generated/compose.yaml", "x.tmp.yaml", "node_modules/a/run.sh",
                 "deploy/run.sh", "deploy/legacy/run.sh", "sub/.gitignore", "sub/skip.sh", "sub/keep.sh"]:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("skip.sh\n" if name == "sub/.gitignore" else "vllm serve m\n")
    found = {Path(c.path).relative_to(tmp_path).as_posix() for c in discover([tmp_path], tmp_path, excludes=("deploy/legacy",))}
    assert found == {"compose.yaml", "deploy/run.sh", "sub/keep.sh"}


def test_explicit_files_are_always_linted(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.sh\n")
    script = tmp_path / "serve.sh"
    script.write_text("vllm serve m\n")
    assert [c.kind for c in discover([script], tmp_path)] == ["shell"]
    assert discover([tmp_path], tmp_path) == []


def test_symlink_loops_do_not_hang(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "loop").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "a" / "run.sh").write_text("vllm serve m\n")
    assert [Path(c.path).name for c in discover([tmp_path], tmp_path)] == ["run.sh"]


def test_the_loader_sees_one_file_under_every_name_it_is_reached_by(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The loader resolves a file through its remembered directory: a symlinked directory, a
    symlinked file, ``..`` and a relative name must all reach the one file read once, and every
    key must be what ``Path.resolve`` gives."""
    real = tmp_path / "real"
    real.mkdir()
    (real / "compose.yaml").write_text("services: {}\n")
    (tmp_path / "linked-dir").symlink_to(real, target_is_directory=True)
    (real / "alias.yaml").symlink_to(real / "compose.yaml")
    monkeypatch.chdir(tmp_path)
    loader = FileLoader(tmp_path)
    names = [real / "compose.yaml", tmp_path / "linked-dir" / "compose.yaml", real / "alias.yaml",
             tmp_path / "linked-dir" / ".." / "real" / "compose.yaml", Path("real/compose.yaml"),
             Path("linked-dir/alias.yaml")]
    for name in names:
        assert loader._key(name) == os.path.normcase(os.fspath(name.resolve()))
    first = loader.load(names[0])
    assert first is not None
    assert all(loader.load(name) is first for name in names)
    missing = tmp_path / "linked-dir" / "missing.yaml"
    assert loader._key(missing) == os.fspath(missing) and loader.load(missing) is None
    # read first, as extraction does: opened without following a link, it is not asked again whether it is one
    for name in names:
        loader = FileLoader(tmp_path)
        assert loader.read_regular(name)[1] == b"services: {}\n"
        source = loader.load(name)
        assert source is not None and source.display == "real/compose.yaml"
        assert loader._key(name) == os.path.normcase(os.fspath(name.resolve()))
        assert loader.load(real / "compose.yaml") is source


def test_discovery_as_walked_hands_over_the_same_files_in_the_same_order(tmp_path: Path) -> None:
    for name in ["b/compose.yaml", "a/run.sh", "a/deep/serve.py", "a/.env", "c/notes.md", "b/sub/compose.yaml"]:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("vllm serve m\n")
    from mtplint.discover import discover_as_walked

    # directories (streamed, a folder given twice counts once), and a file given by name among them
    for paths in ([tmp_path], [tmp_path / "b", tmp_path / "a", tmp_path / "b" / "sub"],
                  [tmp_path / "a", tmp_path / "a" / "run.sh", tmp_path / "missing.yaml"]):
        assert list(discover_as_walked(paths, tmp_path)) == discover(paths, tmp_path)
    assert [Path(c.path).name for c in discover_as_walked([tmp_path / "b", tmp_path / "b" / "sub"], tmp_path)] == [
        "compose.yaml", "compose.yaml"]


def test_the_loader_shows_every_name_as_its_real_path_relative_to_the_working_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Display names come from the directories the loader already resolved; they must be what
    ``os.path.realpath`` gives (relative to the working directory, else the root, else as
    written), under symlinked directories and files, ``..``, missing files and symlink loops."""
    real = tmp_path / "project" / "real"
    (real / "deep").mkdir(parents=True)
    (real / "deep" / "run.sh").write_text("vllm serve m\n")
    (tmp_path / "project" / "linked").symlink_to(real, target_is_directory=True)
    (real / "alias.sh").symlink_to(real / "deep" / "run.sh")
    (real / "loop.sh").symlink_to("loop.sh")
    (tmp_path / "outside.sh").write_text("vllm serve m\n")
    monkeypatch.chdir(tmp_path / "project")
    names = [Path("real/deep/run.sh"), Path("linked/deep/run.sh"), Path("linked/alias.sh"), Path("real/loop.sh"),
             Path("linked/deep/../deep/run.sh"), Path("real/missing/run.sh"), Path("linked/deep"),
             real / "deep" / "run.sh", tmp_path / "outside.sh", Path("."), Path("real/deep/run.sh/below")]
    loader = FileLoader(tmp_path)
    for name in names:
        resolved = Path(os.path.realpath(name))
        for base in (tmp_path / "project", tmp_path):
            if resolved.is_relative_to(base):
                expected = resolved.relative_to(base).as_posix()
                break
        assert loader.display(name) == expected, name
    assert loader.display(Path("real/deep/run.sh")) == loader.display(Path("linked/alias.sh")) == "real/deep/run.sh"
    assert loader.display(Path("real/loop.sh")) == "real/loop.sh" and loader.load(Path("real/loop.sh")) is None


def test_a_file_read_for_the_prefilter_is_loaded_with_the_same_text(tmp_path: Path) -> None:
    """The bytes read to decide whether a file is worth extracting are the ones loaded (the file
    is read once), and they are not used for another file."""
    first, second = tmp_path / "a.sh", tmp_path / "b.sh"
    first.write_text("vllm serve first\n")
    second.write_text("vllm serve second\n")
    loader = FileLoader(tmp_path)
    assert loader.read_bytes(first) == b"vllm serve first\n"
    loaded = loader.load(second)
    assert loaded is not None and loaded.text == "vllm serve second\n"
    loaded = loader.load(first)
    assert loaded is not None and loaded.text == "vllm serve first\n"



def test_a_candidate_that_is_not_a_readable_regular_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What extraction says of a named file that is missing, a directory, a symlink loop or a file
    that became unreadable; a regular file is read once, by the prefilter, and loaded from those bytes."""
    from mtplint.discover import Candidate
    from mtplint.pipeline import Result, extract_file
    from mtplint.source import Issues

    monkeypatch.chdir(tmp_path)
    (tmp_path / "dir.sh").mkdir()
    (tmp_path / "loop.sh").symlink_to(tmp_path / "loop.sh")
    (tmp_path / "run.sh").write_text("vllm serve m --port 8000\n")
    loader = FileLoader(tmp_path)
    issues, result = Issues(), Result(loader=loader)
    for name, kind in (("gone.sh", "missing"), ("dir.sh", "shell"), ("loop.sh", "shell")):
        assert extract_file(Candidate(Path(name), kind, explicit=True), loader, issues, result) == []
    assert [error.splitlines()[0] for error in result.internal_errors] == [
        "gone.sh: does not exist", "dir.sh: is not a regular file"]
    assert [(d.code, d.span.file) for d in issues.items] == [("MTP001", "loop.sh")]
    assert "cannot read file" in issues.items[0].message

    opened: list[str] = []
    os_open = os.open

    def counted(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        opened.append(os.fspath(path))
        return os_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", counted)
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail(f"{self} read again"))
    launches = extract_file(Candidate(Path("run.sh"), "shell"), loader, issues, result)
    assert [launch.engine for launch in launches] == ["vllm"] and opened == ["run.sh"]
    assert launches[0].source is loader.load(tmp_path / "run.sh") and launches[0].source.display == "run.sh"



def test_the_loader_shows_every_name_of_a_file_by_where_it_really_is(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A name is shown relative to the working directory by its real path: through symlinked
    directories at any depth (the directories are resolved once, each through its parent), a
    symlinked file and ``..``; a name that does not exist is shown by ``realpath``."""
    deep = tmp_path / "real" / "a" / "b"
    deep.mkdir(parents=True)
    (deep / "run.sh").write_text("vllm serve m\n")
    (tmp_path / "real" / "a" / "hop").symlink_to(tmp_path / "real", target_is_directory=True)
    (tmp_path / "top").symlink_to(tmp_path / "real" / "a", target_is_directory=True)
    (deep / "alias.sh").symlink_to(deep / "run.sh")
    (deep / "dangling.sh").symlink_to(deep / "gone.sh")
    monkeypatch.chdir(tmp_path)
    loader = FileLoader(tmp_path)
    names = [Path("real/a/b/run.sh"), Path("top/b/run.sh"), Path("top/hop/a/b/run.sh"), Path("real/a/b/alias.sh"),
             Path("top/hop/../real/a/b/run.sh"), tmp_path / "top" / "b" / "run.sh", Path("top/hop/a/b")]
    for name in names:
        expected = Path(os.path.realpath(name)).relative_to(tmp_path.resolve()).as_posix()
        assert loader.display(name) == expected, name
    assert loader.display(Path("top/b/dangling.sh")) == "real/a/b/gone.sh"
    assert loader.display(Path("top/b/missing.sh")) == "real/a/b/missing.sh"
    source = loader.load(Path("top/hop/a/b/run.sh"))
    assert source is not None and source.display == "real/a/b/run.sh"


@pytest.mark.parametrize("name", [".env", "run.", "a.b.c", "serve", ".config.yaml", "..x", "a..b", "Dockerfile.vllm",
                                  "compose.override.YML", "x.tar.gz"])
def test_the_walk_classifies_by_name_as_a_path_would(name: str) -> None:
    """The walk classifies each file by its name string (no path object per file of a tree)."""
    from mtplint.discover import _kind_of
    from mtplint.pathtext import name_suffix

    assert name_suffix(name) == Path(name).suffix
    assert _kind_of(f"/nonexistent/{name}", name) == classify(name, b"")


def test_a_gitignore_line_pathspec_refuses_is_left_out_not_fatal(tmp_path: Path) -> None:
    """``foo\\`` (an escape with nothing after it) matches nothing in git; pathspec raises on it.
    The run goes on, and the .gitignore's other lines still apply."""
    (tmp_path / ".gitignore").write_text("foo\\\n*.tmp.sh\n")
    for name in ("keep.sh", "skip.tmp.sh", "foo"):
        (tmp_path / name).write_text("#!/bin/sh\nvllm serve m\n")
    found = sorted(Path(candidate.path).name for candidate in discover([tmp_path], tmp_path))
    assert found == ["foo", "keep.sh"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_the_walk_reads_first_lines_without_waiting_on_what_replaced_a_file(tmp_path: Path) -> None:
    """A file the walk opens at once for its first line (its name says nothing) may have become a
    FIFO since it was listed: it is told apart once open, not waited on; a link to a script is read."""
    from mtplint.discover import _kind_of

    (tmp_path / "serve").write_text("#!/bin/bash\nvllm serve m\n")
    (tmp_path / "linked").symlink_to(tmp_path / "serve")
    os.mkfifo(tmp_path / "launch")
    assert _kind_of(str(tmp_path / "serve"), "serve") == "shell"
    assert _kind_of(str(tmp_path / "linked"), "linked") == "shell"
    assert _kind_of(str(tmp_path / "launch"), "launch") is None
    assert _kind_of(str(tmp_path / "gone"), "gone") is None
