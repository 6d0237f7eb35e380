"""``--output-format github``: GitHub Actions workflow commands, escaped as the Actions toolkit does."""

from __future__ import annotations

from pathlib import Path

import pytest

from mtplint.checks import Finding
from mtplint.checks.catalog import load_catalog
from mtplint.report.github import annotation, escape_data, escape_property, render
from mtplint.source import SourceFile
from tests.conftest import run_cli

SERVE = """#!/usr/bin/env bash
exec vllm serve Qwen/Qwen3.6-27B \\
  --kv-cache-dtype turboquant_4bit_nc \\
  --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}' \\
  --no-enable-prefix-caching
"""


def test_escaping_as_github_documents() -> None:
    # data (the message): % first, so an escape is never escaped twice; then CR and LF
    assert escape_data("100% of 2:1, ok\r\nnext") == "100%25 of 2:1, ok%0D%0Anext"
    # property values (file=, title=): also `:` and `,`, which end a value
    assert escape_property("a:b,c%d\ne") == "a%3Ab%2Cc%25d%0Ae"
    assert escape_data("%0A") == "%250A"


def test_annotation_line_escapes_message_and_properties() -> None:
    rule = load_catalog()["MTP101"]
    display = "deploy/a,b:c/serve%.sh"
    source = SourceFile.from_text(SERVE, display)
    start = SERVE.index("turboquant_4bit_nc")
    span = source.span(start, start + len("turboquant_4bit_nc"))
    finding = Finding(rule, "50% slower: drafts, then\nloops\r", span)
    assert annotation(finding) == (
        "::error file=deploy/a%2Cb%3Ac/serve%25.sh,line=3,col=20,endLine=3,endColumn=38,title=MTP101"
        "::50%25 slower: drafts, then%0Aloops%0D"
    )


def test_severity_and_multi_line_spans() -> None:
    catalog = load_catalog()
    source = SourceFile.from_text(SERVE, "serve.sh")
    multi = source.span(SERVE.index("exec"), SERVE.index("--no-enable"))
    info_rule = next(rule for rule in catalog.values() if rule.severity == "info")
    warning_rule = next(rule for rule in catalog.values() if rule.severity == "warning")
    lines = render([
        Finding(warning_rule, "w", source.span(0, 2)),
        Finding(info_rule, "i", multi),
        Finding(catalog["MTP101"], "hidden", source.span(0, 2), suppressed=True),
    ]).splitlines()
    assert lines[0].startswith("::warning file=serve.sh,line=1,col=1,endLine=1,endColumn=3,title=")
    # columns only when the annotation stays on one line
    assert lines[1] == f"::notice file=serve.sh,line=2,endLine=5,title={info_rule.code}::i"
    assert len(lines) == 2


def test_cli_github_format(tmp_path: Path) -> None:
    (tmp_path / "serve.sh").write_text(SERVE, encoding="utf-8")
    code, out, err = run_cli(["check", "--output-format", "github", "--isolated", "--engine-version", "vllm=0.30.0",
                              "--select", "MTP101", "."], cwd=tmp_path)
    assert code == 1, err
    [line] = out.splitlines()
    assert line.startswith("::error file=serve.sh,line=3,col=20,endLine=3,endColumn=38,title=MTP101::KV-cache dtype")
    assert "\n" not in line


def test_paths_relative_to_the_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "deploy" / "gpu-box"
    project.mkdir(parents=True)
    (project / "serve.sh").write_text(SERVE, encoding="utf-8")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    code, out, err = run_cli(["check", "--output-format", "github", "--isolated", "--engine-version", "vllm=0.30.0",
                              "--select", "MTP101", "."], cwd=project)
    assert code == 1, err
    assert out.startswith("::error file=deploy/gpu-box/serve.sh,line=3,")
