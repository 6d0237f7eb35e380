"""The server's diagnostics are ``mtplint check --output-format json``'s findings (issue #25, acceptance 2).

For every file of the bundled examples and of every rule fixture (``tests/rules``), the diagnostics
the server would publish after linting the file as an open, unsaved buffer -- built by the server's
own code, in this process, so hundreds of files take seconds -- have the codes, ranges and
messages that ``check`` reports for the file on disk, file by file (a ``--config`` YAML's
findings on the YAML). End-to-end runs of the server itself are in ``tests/test_server.py``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from mtplint.server.protocol import MtplintServer
from mtplint.server.session import lint_document
from tests.conftest import run_cli, write_files
from tests.test_rule_cases import ALL_CASES

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
EXAMPLE_FILES = sorted(path.relative_to(EXAMPLES).as_posix() for path in EXAMPLES.rglob("*")
                       if path.is_file() and path.name != "README.md")

Compared = tuple[str, str, int, int, int, int, str]


@pytest.fixture(scope="module")
def server() -> MtplintServer:
    return MtplintServer()


def _utf16_column(line: str, column: int) -> int:
    """A 1-based column counted in characters (``check``'s) as a 0-based UTF-16 offset (LSP's default)."""
    return len(line[:column - 1].encode("utf-16-le")) // 2


def _from_check(findings: list[dict[str, Any]], root: Path) -> list[Compared]:
    compared = []
    for finding in findings:
        path = (root / finding["filename"]).resolve()
        lines = path.read_text(encoding="utf-8").split("\n")
        start, end = finding["location"], finding["end_location"]
        compared.append((str(path), finding["code"],
                         start["row"] - 1, _utf16_column(lines[start["row"] - 1], start["column"]),
                         end["row"] - 1, _utf16_column(lines[end["row"] - 1], end["column"]),
                         finding["message"]))
    return sorted(compared)


def _from_server(server: MtplintServer, path: Path, args: list[str]) -> list[Compared]:
    text = path.read_text(encoding="utf-8")
    linted = lint_document(str(path), {str(path): text}, args)
    assert linted.problem is None, linted.problem
    compared = []
    for file, findings in linted.findings_by_file().items():
        for finding in findings:
            diagnostic: types.Diagnostic = server.diagnostic(finding, linted)
            assert diagnostic.source == "mtplint" and diagnostic.code_description is not None
            assert diagnostic.code_description.href == finding.rule.url
            compared.append((str(Path(file).resolve()), str(diagnostic.code),
                             diagnostic.range.start.line, diagnostic.range.start.character,
                             diagnostic.range.end.line, diagnostic.range.end.character, diagnostic.message))
    return sorted(compared)


def _assert_same(server: MtplintServer, root: Path, name: str, args: list[str]) -> int:
    code, out, err = run_cli(["check", "--output-format", "json", "--no-cache", *args, name], cwd=root)
    assert code in (0, 1), err
    expected = _from_check(json.loads(out), root)
    previous = Path.cwd()
    os.chdir(root)  # as `check` ran, and as an editor starts the server in its workspace
    try:
        assert _from_server(server, root / name, args) == expected, name
    finally:
        os.chdir(previous)
    return len(expected)


def test_examples(server: MtplintServer, tmp_path: Path) -> None:
    root = tmp_path / "examples"
    shutil.copytree(EXAMPLES, root)
    found = sum(_assert_same(server, root, name, []) for name in EXAMPLE_FILES)
    assert found >= 15  # the examples' documented findings (examples/README.md)


@pytest.mark.parametrize(("code", "polarity", "case"), ALL_CASES,
                         ids=[f"{code}-{polarity}-{case['name']}" for code, polarity, case in ALL_CASES])
def test_rule_fixture(server: MtplintServer, code: str, polarity: str, case: dict[str, Any], tmp_path: Path) -> None:
    write_files(tmp_path, case["files"])
    for name in case["files"]:
        if (tmp_path / name).is_file():
            _assert_same(server, tmp_path, name, ["--isolated", *case.get("args", [])])
