"""Discovery's faster paths answer as the plain ones they replace: the prefilter's searches as one
expression over its words, one search over a ``.gitignore``'s patterns as pathspec's pattern by
pattern, one opening of a walked file as asking what it is and then reading it, a walked file's
path joined to its directory's as parsed whole."""

from __future__ import annotations

import os
import re
import socket
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, reject, settings
from hypothesis import strategies as st

from mtplint.discover import mentions_engine

#: the prefilter's words as one expression (what the searches of :func:`mentions_engine` replace)
PREFILTER_WORDS = re.compile(
    rb"vllm|s(?:glang|peculative|pec[-_]type)|llama(?:-server|\.cpp|_cpp)|m(?:lx[-_]lm|odels-preset|(?<![a-z]m)tp)"
    rb"|NEXTN|LLAMA_ARG|draft-m|--draft|\.gguf|hf-repo"
)

WORDS = [b"vllm", b"sglang", b"speculative", b"spec-type", b"spec_type", b"llama-server", b"llama.cpp", b"llama_cpp",
         b"mlx-lm", b"mlx_lm", b"models-preset", b"mtp", b"NEXTN", b"LLAMA_ARG", b"draft-m", b"--draft", b".gguf",
         b"hf-repo"]


def _near_misses(word: bytes) -> set[bytes]:
    """The word cut at either end, with one byte left out, doubled or changed."""
    out = {word[i:] for i in range(len(word))} | {word[:i] for i in range(len(word))}
    for i in range(len(word)):
        out.add(word[:i] + word[i + 1:])
        out.add(word[:i] + word[i:i + 1] * 2 + word[i + 1:])
        for other in b"aemptvxA-_. ":
            out.add(word[:i] + bytes([other]) + word[i + 1:])
    return out


#: the words, their near misses, and the bytes around them that the searches look at
FRAGMENTS = sorted({fragment for word in WORDS for fragment in _near_misses(word) | {word}}
                   | {bytes([c]) for c in b"abcmstpvgfxyzMNLGX019-_.:/ \n\x00\xff"})


def _relevant_by_words(data: bytes) -> bool:
    return PREFILTER_WORDS.search(data) is not None


def test_each_word_and_its_near_misses_in_every_surrounding() -> None:
    around = [b"", b"a", b"z", b"m", b"s", b"S", b"2", b"-", b"_", b".", b" ", b"\n", b"\xff"]
    for fragment in FRAGMENTS:
        for before in around:
            for after in around:
                data = before + fragment + after
                assert mentions_engine(data) is _relevant_by_words(data), data


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.binary(max_size=6)), max_size=12))
def test_the_searches_answer_as_one_expression_over_the_words(parts: list[bytes]) -> None:
    data = b"".join(parts)
    assert mentions_engine(data) is _relevant_by_words(data)


# --- .gitignore: one search over the patterns' expressions ----------------------------------------

_NAME_PIECES = ["a", "b", "dist", "node_modules", ".cache", "x.log", "tmp", "build", "a.b", "é", " ", "\\", "[", "]"]
_PATTERN_PIECES = [*_NAME_PIECES, "*", "**", "?", "[ab]", "[!a]", "[a-c]", "/", "\\*", "\\!", "#", "!", "  "]


@st.composite
def _gitignore_lines(draw: st.DrawFn, negations: bool) -> list[str]:
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        line = "".join(draw(st.lists(st.sampled_from(_PATTERN_PIECES), min_size=1, max_size=5)))
        if not negations:
            line = line.lstrip("!")
        lines.append(line)
    return lines


@st.composite
def _walked_paths(draw: st.DrawFn) -> tuple[str, bool]:
    names = draw(st.lists(st.lists(st.sampled_from(_NAME_PIECES), min_size=1, max_size=3).map("".join),
                          min_size=1, max_size=4))
    return "/".join(names), draw(st.booleans())


def _ignore(lines: list[str]) -> Any:
    import pathspec

    from mtplint.discover import _Ignore

    return _Ignore("top/", pathspec.GitIgnoreSpec.from_lines(lines))


@pytest.mark.filterwarnings("ignore:Possible nested set:FutureWarning")  # a pattern's "[[" (pathspec passes it on)
@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.one_of(_gitignore_lines(negations=False), _gitignore_lines(negations=True)),
       st.lists(_walked_paths(), min_size=1, max_size=20))
def test_one_search_over_a_gitignore_answers_as_pathspec(lines: list[str], paths: list[tuple[str, bool]]) -> None:
    from pathspec.patterns.gitignore import GitIgnorePatternError

    try:
        ignore = _ignore(lines)
    except GitIgnorePatternError:  # a line pathspec refuses (a lone trailing backslash)
        reject()
    for path, is_dir in paths:
        assert ignore.matches(f"top/{path}", is_dir) is bool(ignore.spec.match_file(path + ("/" if is_dir else ""))), (
            lines, path, is_dir)


def test_a_gitignore_without_negations_is_one_search() -> None:
    """The equivalence above is about the joined search: it is the one asked when nothing is negated."""
    ignore = _ignore(["node_modules/", "dist/", "*.log", "/abs", "foo/**/bar", "a?b[cd]", "# comment", ""])
    assert ignore._search is not None
    assert ignore.matches("top/x/node_modules", True) and not ignore.matches("top/x/node_modules", False)
    assert ignore.matches("top/x/app.log", False) and ignore.matches("top/foo/1/2/bar", False)
    assert not ignore.matches("top/x/abs", False) and ignore.matches("top/abs", False)
    assert not ignore.matches("elsewhere/app.log", False)
    assert _ignore(["*.log", "!keep.log"])._search is None
    # the text of a group's name inside a character class is no group: renaming it would change the class
    assert _ignore(["a[(?P<ps_d>]b", "c/"])._search is None
    assert not _ignore(["# only a comment"]).matches("top/anything", False)


# --- reading a walked file: one opening, asked what it is --------------------------------------------

def _stat_then_read(path: Path) -> tuple[object, ...]:
    """What extraction did before: ``os.stat``, then ``Path.read_bytes`` of a regular file within the limit."""
    from mtplint.extract import MAX_FILE_BYTES

    try:
        status = os.stat(path)
        data = path.read_bytes() if stat.S_ISREG(status.st_mode) and status.st_size <= MAX_FILE_BYTES else None
    except OSError as error:
        return type(error), error.errno, error.strerror
    return stat.S_IFMT(status.st_mode), status.st_size, status.st_ino, data


def _read_regular(path: Path) -> tuple[object, ...]:
    from mtplint.extract import FileLoader

    try:
        status, data = FileLoader(path.parent).read_regular(path)
    except OSError as error:
        return type(error), error.errno, error.strerror
    return stat.S_IFMT(status.st_mode), status.st_size, status.st_ino, data


def test_reading_a_walked_file_answers_as_stat_then_read_bytes(tmp_path: Path) -> None:
    from mtplint.extract import MAX_FILE_BYTES

    (tmp_path / "empty.sh").write_bytes(b"")
    (tmp_path / "small.sh").write_bytes(b"vllm serve m\n")
    (tmp_path / "large.yaml").write_bytes(bytes(range(256)) * 1000)  # several reads' worth
    with (tmp_path / "limit.yaml").open("wb") as handle:  # sparse: the test stays small on disk
        handle.truncate(MAX_FILE_BYTES)
    with (tmp_path / "over.yaml").open("wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)
    (tmp_path / "dir.sh").mkdir()
    (tmp_path / "loop.sh").symlink_to(tmp_path / "loop.sh")
    (tmp_path / "dangling.sh").symlink_to(tmp_path / "gone.sh")
    (tmp_path / "linked.sh").symlink_to(tmp_path / "small.sh")
    (tmp_path / "file").write_text("x")
    paths = [tmp_path / name for name in ("empty.sh", "small.sh", "large.yaml", "limit.yaml", "over.yaml", "dir.sh",
                                          "loop.sh", "dangling.sh", "linked.sh", "missing.sh", "file/below.sh")]
    if hasattr(os, "mkfifo"):  # a FIFO is told apart without waiting for a writer
        os.mkfifo(tmp_path / "fifo.sh")
        paths.append(tmp_path / "fifo.sh")
    if hasattr(socket, "AF_UNIX") and len(str(tmp_path / "socket.sh")) < 100:  # cannot be opened: asked of stat
        listening = socket.socket(socket.AF_UNIX)
        listening.bind(str(tmp_path / "socket.sh"))
        listening.close()
        paths.append(tmp_path / "socket.sh")
    # a file whose size says nothing of its bytes: read to the end as FileIO.readall does
    paths.extend(path for path in [Path("/proc/self/cmdline")] if path.exists())
    unreadable = tmp_path / "unreadable.sh"
    unreadable.write_text("vllm serve m\n")
    unreadable.chmod(0)
    paths.append(unreadable)
    try:
        for path in paths:
            assert _read_regular(path) == _stat_then_read(path), path
    finally:
        unreadable.chmod(0o644)


def test_reading_to_the_end_goes_past_the_size_asked() -> None:
    """A file can grow between asking its size and reading it: the reading goes on to the end."""
    from mtplint.extract import _read_to_end

    data = bytes(range(256)) * 200  # more than one read's worth, less than a pipe holds
    for size in (0, 1, 10, len(data) - 1, len(data), len(data) + 10):
        reader, writer = os.pipe()
        try:
            os.write(writer, data)
            os.close(writer)
            assert _read_to_end(reader, size) == data
        finally:
            os.close(reader)


def test_a_regular_file_is_read_in_one_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read of a regular file that returns less than it asked for stopped at the file's end: a
    tree's files are read with one ``read`` each, not a second one that returns nothing."""
    from mtplint.extract import FileLoader

    path = tmp_path / "serve.sh"
    path.write_bytes(b"vllm serve m\n" * 1000)
    reads: list[int] = []
    real_read = os.read

    def counted(descriptor: int, size: int) -> bytes:
        reads.append(size)
        return real_read(descriptor, size)

    monkeypatch.setattr(os, "read", counted)
    assert FileLoader(tmp_path).read_regular(str(path))[1] == path.read_bytes()
    assert len(reads) == 1


# --- the walk: a path object per directory -------------------------------------------------------

def test_walked_candidates_are_the_paths_of_the_walked_strings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each candidate's path is the text of the path object of the whole string the walk listed
    (and has its parts), from any spelling of the directory given."""
    from mtplint.discover import _walk, discover, discover_as_walked
    from mtplint.pathtext import path_parts

    for name in ["run.sh", "a/compose.yaml", "a/b/c/deep.py", "a/b/serve.sh", "a/Dockerfile", "x y/é.yaml",
                 "a/.hidden.yaml", "a/b/c/d/e/f.yaml", "z/..x.yaml"]:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("vllm serve m\n")
    monkeypatch.chdir(tmp_path)
    for directory in [tmp_path, Path("."), Path("a"), Path("./a/"), Path("a/../a"), Path("a/b"), tmp_path / "a" / ".."]:
        expected = [Path(path) for path, _, _ in _walk(str(directory), "", [], (), True)]
        for found in (discover([directory], tmp_path), list(discover_as_walked([directory], tmp_path))):
            paths = [candidate.path for candidate in found]
            assert paths == [str(path) for path in expected], directory
            assert [path_parts(path) for path in paths] == [path.parts for path in expected]


def test_the_walk_classifies_a_file_as_its_name_and_first_line_do(tmp_path: Path) -> None:
    """The walk opens a file for its first line only when its name leaves the kind open."""
    from mtplint.discover import _kind_of, classify

    heads = [b"#!/bin/sh\nvllm serve m\n", b"#!/usr/bin/env python3\n", b"#!/usr/bin/env -S bash -e\n", b"plain\n",
             b"", b"#!\n", b"#!/usr/bin/node\n"]
    names = ["serve", "start.vllm", "run.sh", "compose.yaml", "Dockerfile", "notes.md", "x.service", "a.ini",
             "launch.py", "README", ".env", "Makefile", "tool.bin"]
    for index, head in enumerate(heads):
        for name in names:
            path = tmp_path / str(index) / name
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(head)
            assert _kind_of(str(path), name) == classify(path, head), (name, head)
