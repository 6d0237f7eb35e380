"""``mtplint check`` output: full / concise / json in ruff's shapes, and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli

SERVE = """#!/usr/bin/env bash
exec vllm serve Qwen/Qwen3.6-27B \\
  --kv-cache-dtype turboquant_4bit_nc \\
  --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}' \\
  --no-enable-prefix-caching
"""
ARGS = ["--isolated", "--engine-version", "vllm=0.30.0", "--select", "MTP101"]


def project(tmp_path: Path, text: str = SERVE) -> Path:
    (tmp_path / "serve.sh").write_text(text, encoding="utf-8")
    return tmp_path


def test_concise(tmp_path: Path) -> None:
    code, out, _ = run_cli(["check", "--output-format", "concise", *ARGS, "."], cwd=project(tmp_path))
    assert code == 1
    first, *rest = out.splitlines()
    assert first.startswith("serve.sh:3:20: MTP101 KV-cache dtype `turboquant_4bit_nc`")
    assert rest == ["Found 1 finding (1 error).",
                    "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option)."]


def test_the_fix_marker_follows_unsafe_fixes_as_ruffs_does(tmp_path: Path) -> None:
    """MTP101's fix is unsafe: ``[*]`` (``--fix`` would fix it) only once ``--unsafe-fixes`` is given."""
    for output_format in ("concise", "full"):
        _, plain, _ = run_cli(["check", "--output-format", output_format, *ARGS, "."], cwd=project(tmp_path))
        _, unsafe, _ = run_cli(["check", "--output-format", output_format, "--unsafe-fixes", *ARGS, "."],
                               cwd=project(tmp_path))
        assert plain.splitlines()[0].startswith("serve.sh:3:20: MTP101 KV-cache")
        assert unsafe.splitlines()[0].startswith("serve.sh:3:20: MTP101 [*] KV-cache")
        assert "[*] 1 fixable with the `--fix` option." in unsafe


def test_full_shows_a_code_frame_with_carets_under_the_token(tmp_path: Path) -> None:
    code, out, _ = run_cli(["check", *ARGS, "."], cwd=project(tmp_path))
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("serve.sh:3:20: MTP101 ")
    assert lines[1] == "  |"
    assert lines[2] == "2 | exec vllm serve Qwen/Qwen3.6-27B \\"
    assert lines[3] == "3 |   --kv-cache-dtype turboquant_4bit_nc \\"
    assert lines[4] == "  |                    " + "^" * len("turboquant_4bit_nc") + " MTP101"
    assert "  = docs: mtplint rule MTP101" in lines
    assert lines[-2:] == ["Found 1 finding (1 error).",
                          "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option)."]


def test_json_has_ruffs_keys(tmp_path: Path) -> None:
    code, out, _ = run_cli(["check", "--output-format", "json", *ARGS, "."], cwd=project(tmp_path))
    assert code == 1
    (finding,) = json.loads(out)
    assert {"code", "message", "filename", "location", "end_location", "fix", "url", "noqa_row"} <= set(finding)
    assert finding["code"] == "MTP101" and finding["severity"] == "error"
    assert finding["filename"] == "serve.sh"
    assert finding["location"] == {"row": 3, "column": 20}
    assert finding["end_location"] == {"row": 3, "column": 38}
    assert finding["noqa_row"] == 3
    assert finding["fix"] == {
        "applicability": "unsafe",
        "message": "Use `--kv-cache-dtype fp8_e5m2`",
        "edits": [{"content": "fp8_e5m2", "location": {"row": 3, "column": 20}, "end_location": {"row": 3, "column": 38}}],
    }
    assert finding["url"].endswith("MTP101.yaml")


def test_json_of_a_clean_run_is_an_empty_list(tmp_path: Path) -> None:
    clean = SERVE.replace("turboquant_4bit_nc", "fp8_e5m2")
    code, out, _ = run_cli(["check", "--output-format", "json", *ARGS, "."], cwd=project(tmp_path, clean))
    assert (code, json.loads(out)) == (0, [])
    code, out, _ = run_cli(["check", *ARGS, "."], cwd=tmp_path)
    assert (code, out) == (0, "All checks passed!\n")


def test_json_of_many_findings_is_one_indented_list(tmp_path: Path) -> None:
    """The JSON report is written some findings at a time: past the first batch it still reads as
    ``json.dumps`` of the whole list (its separators, its two-space indent), every finding once."""
    flags = " \\\n  ".join(f"--unknown-flag-{index} {index}" for index in range(2_500))
    code, out, _ = run_cli(["check", "--output-format", "json", "--isolated", "--select", "MTP506", "."],
                           cwd=project(tmp_path, f"#!/bin/sh\nexec vllm serve Qwen/Qwen3-8B \\\n  {flags}\n"))
    findings = json.loads(out)
    assert code == 1 and len(findings) == 2_500
    assert [finding["location"]["row"] for finding in findings] == list(range(3, 2_503))
    assert out == json.dumps(findings, indent=2, ensure_ascii=False) + "\n"


def test_exit_zero_and_bare_paths(tmp_path: Path) -> None:
    project(tmp_path)
    assert run_cli(["check", "--exit-zero", *ARGS, "."], cwd=tmp_path)[0] == 0
    code, out, _ = run_cli([*ARGS, "--output-format", "concise", "serve.sh"], cwd=tmp_path)  # `mtplint PATHS…`
    assert code == 1 and out.startswith("serve.sh:3:20: MTP101")


def test_usage_and_missing_path_exit_two(tmp_path: Path) -> None:
    project(tmp_path)
    assert run_cli(["check", "--output-format", "sarif2", "."], cwd=tmp_path)[0] == 2
    assert run_cli(["check", "--select", "NOPE1", "."], cwd=tmp_path)[0] == 2
    code, _, err = run_cli(["check", *ARGS, "missing.yaml"], cwd=tmp_path)
    assert code == 2 and "missing.yaml" in err


def test_suppressed_count_is_shown(tmp_path: Path) -> None:
    text = SERVE.replace("--no-enable-prefix-caching\n", "--no-enable-prefix-caching  # noqa: MTP101\n")
    code, out, _ = run_cli(["check", *ARGS, "."], cwd=project(tmp_path, text))
    assert code == 0 and "All checks passed!" in out
    code, out, _ = run_cli(["check", *ARGS, "--extend-select", "MTP003", "."], cwd=project(tmp_path, SERVE))
    assert code == 1


def test_a_config_file_two_launches_read_is_reported_once(tmp_path: Path) -> None:
    """Two services read the same vLLM --config: its ignored ``false`` is one mistake, one finding."""
    (tmp_path / "serve.yaml").write_text("model: Qwen/Qwen3.6-27B\nenable-prefix-caching: false\n", encoding="utf-8")
    service = ('  {name}:\n    image: vllm/vllm-openai:v0.30.0\n    volumes: ["./serve.yaml:/etc/serve.yaml"]\n'
               '    command: ["--config", "/etc/serve.yaml", "--port", "{port}"]\n')
    (tmp_path / "compose.yaml").write_text(
        "services:\n" + service.format(name="a", port=8000) + service.format(name="b", port=8001), encoding="utf-8")
    code, out, err = run_cli(["check", "--isolated", "--output-format", "json", "--select", "MTP107", "."],
                             cwd=tmp_path)
    assert code == 1, err
    assert [(f["code"], f["filename"], f["location"]["row"]) for f in json.loads(out)] == [("MTP107", "serve.yaml", 2)]


def test_main_leaves_the_callers_garbage_collector_as_it_was(tmp_path: Path) -> None:
    import gc

    before = gc.get_threshold()
    run_cli(["check", "--isolated", "."], cwd=project(tmp_path))
    assert gc.get_threshold() == before


def test_a_path_that_cannot_be_read_is_not_reported_as_passing(tmp_path: Path) -> None:
    code, out, err = run_cli(["check", "--no-cache", "missing.yaml"], cwd=tmp_path)
    assert code == 2
    assert "missing.yaml: does not exist" in err
    assert "All checks passed" not in out
    assert out == "No findings, but the run met 1 error: not everything was checked.\n"
