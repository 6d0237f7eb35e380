"""The server's linting of editor buffers (:mod:`mtplint.server.session`), in process: what the
protocol layer builds on, on inputs whose edge cases an end-to-end test would reach slowly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsprotocol import types

from mtplint.server import session
from mtplint.server.protocol import create_server
from mtplint.server.session import lint_document, offset_of, position_of, suppression
from mtplint.source import SourceFile
from tests.conftest import run_cli, write_files

SERVE = """\
#!/usr/bin/env bash
set -euo pipefail
exec vllm serve Qwen/Qwen3.6-27B \\
  --kv-cache-dtype turboquant_4bit_nc \\
  --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}'
"""


def test_an_unsaved_buffer_of_a_file_not_on_disk_is_linted_as_that_file(tmp_path: Path) -> None:
    write_files(tmp_path, {"mtplint.toml": 'ignore = ["MTP004"]\n'})
    path = str(tmp_path / "deploy" / "serve.sh")  # neither the file nor its folder exists
    linted = lint_document(path, {path: SERVE})
    assert linted.problem is None
    assert {finding.code for finding in linted.findings} == {"MTP101"}  # MTP004 ignored by the configuration
    assert linted.findings_by_file().keys() == {path}


def test_a_crash_of_the_linter_is_the_documents_problem_not_the_servers(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(*args: object, **kwargs: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(session, "lint", crash)
    path = str(tmp_path / "serve.sh")
    linted = lint_document(path, {path: SERVE}, version=7)
    assert linted.findings == [] and linted.version == 7
    assert linted.problem is not None and linted.problem.startswith("internal error")
    assert "RecursionError" in linted.problem


@pytest.mark.parametrize(("encoding", "column"), [("utf-16", 9), ("utf-32", 8), ("utf-8", 12)])
def test_positions_count_characters_in_the_clients_encoding(encoding: str, column: int) -> None:
    # 🚀 is one character, two UTF-16 units and four UTF-8 bytes; é is two UTF-8 bytes
    source = SourceFile.from_text("first\n# é🚀 --x y\n")
    offset = source.text.index("--x") + 3
    assert position_of(source, offset, encoding) == (1, column)
    assert offset_of(source, 1, column, encoding) == offset
    assert offset_of(source, 1, 999, encoding) == source.text.index("\n", offset)  # past the end: the line's end
    assert offset_of(source, 9, 0, encoding) == len(source.text)


def _finding(path: Path, text: str, code: str) -> tuple[session.DocumentLint, session.Finding]:
    linted = lint_document(str(path), {str(path): text}, ["--isolated"])
    return linted, next(finding for finding in linted.findings if finding.code == code)


def test_a_noqa_comment_goes_where_check_reads_it(tmp_path: Path) -> None:
    # the finding's line ends with a continuation: the comment goes on the command's last line
    path = tmp_path / "serve.sh"
    linted, finding = _finding(path, SERVE, "MTP101")
    offered = suppression(finding, linted)
    assert offered is not None
    _, edit = offered
    fixed = SERVE[:edit.span.start] + edit.content + SERVE[edit.span.end:]
    assert fixed.splitlines()[4].endswith("}'  # mtplint: noqa: MTP101")
    path.write_text(fixed, encoding="utf-8")
    code, out, err = run_cli(["check", "--output-format", "json", "--isolated", "--no-cache", "serve.sh"], cwd=tmp_path)
    assert code in (0, 1) and "MTP101" not in {f["code"] for f in json.loads(out)}, err


UNIT = """\
[Unit]
Description=vLLM with MTP

[Service]
ExecStart=/usr/bin/vllm serve Qwen/Qwen3.6-27B --kv-cache-dtype turboquant_4bit_nc --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}'

[Install]
WantedBy=multi-user.target
"""


def test_a_unit_file_gets_a_whole_line_noqa_for_the_file(tmp_path: Path) -> None:
    # systemd passes an inline `#` to the program: only a comment line is possible, which
    # speaks for the whole file
    path = tmp_path / "vllm.service"
    linted, finding = _finding(path, UNIT, "MTP101")
    offered = suppression(finding, linted)
    assert offered is not None
    title, edit = offered
    assert title == "MTP101: suppress in this file"
    fixed = UNIT[:edit.span.start] + edit.content + UNIT[edit.span.end:]
    assert fixed.startswith("# mtplint: noqa: MTP101\n[Unit]\n")
    path.write_text(fixed, encoding="utf-8")
    code, out, err = run_cli(["check", "--output-format", "json", "--isolated", "--no-cache", "vllm.service"],
                             cwd=tmp_path)
    assert code in (0, 1) and "MTP101" not in {f["code"] for f in json.loads(out)}, err


def test_initialization_options_give_check_options_and_the_pause(tmp_path: Path) -> None:
    server = create_server()
    initialize = server.protocol.fm.features[types.INITIALIZE]
    initialize(types.InitializeParams(capabilities=types.ClientCapabilities(), initialization_options={
        "args": ["--select", "MTP102", "--engine-version", "vllm=0.30.0"], "debounceMs": 40}))
    assert server.debounce == 0.04
    path = str(tmp_path / "serve.sh")
    linted = lint_document(path, {path: SERVE}, server.check_args)
    assert {finding.code for finding in linted.findings} == {"MTP102"}
    assert all(report.version.version == "0.30.0" for report in linted.launches)

    # options `check` refuses: the document says so, as `check` would
    refused = lint_document(path, {path: SERVE}, ["--no-such-option"])
    assert refused.problem is not None and "--no-such-option" in refused.problem
