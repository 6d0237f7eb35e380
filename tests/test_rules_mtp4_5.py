"""MTP4xx/MTP5xx together: one finding per mistake (RULES.md), and the shared helpers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mtplint.checks.mtp5xx import closest, key_history, spec_release
from tests.conftest import run_cli


def _check(tmp_path: Path, files: dict[str, str], select: str, *args: str) -> list[dict[str, Any]]:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    code, out, err = run_cli(["check", "--output-format", "json", "--isolated", "--select", select, *args, "."],
                             cwd=tmp_path)
    assert code in (0, 1), err
    findings: list[dict[str, Any]] = json.loads(out)
    return findings


@pytest.mark.parametrize(("specific", "files", "args"), [
    ("MTP402", {"serve.sh": "vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-model '[ngram]'\n"},
     ["--engine-version", "vllm=0.20.0"]),
    ("MTP403", {"run.sh": "llama-server -m /m/q.gguf -md /m/d.gguf --spec-type draft-simple -cd 4096\n"},
     ["--engine-version", "llama.cpp=b10000"]),
    ("MTP407", {"start.sh": "vllm-mlx serve mlx-community/Qwen3.6-27B-4bit --mtp\n"}, []),
])
def test_specific_rule_replaces_mtp506_on_the_same_flag(tmp_path: Path, specific: str, files: dict[str, str],
                                                         args: list[str]) -> None:
    findings = _check(tmp_path, files, f"{specific},MTP506", *args)
    assert [f["code"] for f in findings] == [specific]


def test_removed_key_replaces_unknown_key(tmp_path: Path) -> None:
    script = ("vllm serve Qwen/Qwen3.6-27B --speculative-config "
              "'{\"method\": \"mtp\", \"num_speculative_tokens\": 2, \"disable_by_batch_size\": 8, \"num_spec\": 1}'\n")
    findings = _check(tmp_path, {"serve.sh": script}, "MTP406,MTP501", "--engine-version", "vllm=0.20.0")
    by_code = {f["code"]: f for f in findings}
    assert sorted(by_code) == ["MTP406", "MTP501"]
    assert "disable_by_batch_size" in by_code["MTP406"]["message"]
    assert "`num_spec`" in by_code["MTP501"]["message"]


def test_spec_key_table_follows_the_wheels() -> None:
    assert "disable_by_batch_size" in spec_release("0.16.0").keys
    assert "disable_by_batch_size" not in spec_release("0.20.0").keys
    assert "speculative_token_tree" not in spec_release("0.27.1").keys
    assert spec_release("0.11.0").methods is not None and "qwen3_5_mtp" not in spec_release("0.11.0").methods
    assert "medusa" not in (spec_release("0.33.0").methods or ())
    assert spec_release("0.13.0").unknown_keys == "ignored"  # nearest older table: 0.12.0
    assert spec_release("0.8.2").unknown_keys == "type-error" and spec_release("0.16.0").unknown_keys == "refused"
    assert key_history("disable_eagle_block_drop") == ("0.30.0", None)


def test_closest_prefers_the_dash_spelling_and_one_clear_match() -> None:
    assert closest("--speculative_num_steps", ["--speculative-num-steps", "--speculative-num-draft-tokens"]) == [
        "--speculative-num-steps"]
    assert closest("num_speculative_token", ["num_speculative_tokens", "num_speculative_tokens_per_batch_size"]) == [
        "num_speculative_tokens"]
