from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mtplint.cli import main

DATA = Path(__file__).parent / "data"


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
