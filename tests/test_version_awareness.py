"""Acceptance 3 (issue 3): the same launch is judged by the engine version in play.

* SGLang: ``SGLANG_ENABLE_SPEC_V2`` exists from 0.5.5, defaults to on from 0.5.11 and is gone from
  0.5.14 (``mtplint.engines.sglang`` SPEC_V2_*; docs/sglang.md#sglang_enable_spec_v2), so one NEXTN launch
  without it gets MTP103 on ``lmsysorg/sglang:v0.5.9`` and not on 0.5.11 or later.
* SGLang: ``--mamba-scheduler-strategy`` is registered from 0.5.7, becomes a deprecated alias in
  0.5.14 and is not registered at all in 0.5.20 (MAMBA_STRATEGY_*): an unknown flag (MTP506)
  before and after, a valid one in between.
* vLLM: prefix caching is on by default for GDN hybrids from 0.28 (PR #50991), so MTP102 on an
  MTP launch that leaves it at its default fires on 0.28 and 0.32, not on 0.27.1, and -- resting
  only on a default that differs between versions -- not when the version is unknown. From 0.33
  lookahead block hashes avoid the drop.
* A finding that does not rest on a default (MTP110 with prefix caching switched on explicitly)
  fires with the version unknown and its message names the affected range.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli


def check(tmp_path: Path, files: dict[str, str], code: str, *args: str) -> list[dict[str, Any]]:
    for name, text in files.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    exit_code, out, err = run_cli(
        ["check", "--output-format", "json", "--isolated", "--select", code, *args, "."], cwd=tmp_path
    )
    assert exit_code in (0, 1), err
    findings: list[dict[str, Any]] = json.loads(out)
    return [f for f in findings if f["code"] == code]


def position(text: str, token: str) -> tuple[int, int]:
    assert text.count(token) == 1, token
    offset = text.index(token)
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def locations(findings: list[dict[str, Any]]) -> list[tuple[int, int]]:
    return [(f["location"]["row"], f["location"]["column"]) for f in findings]


# --- SGLang: SGLANG_ENABLE_SPEC_V2 -------------------------------------------------------------------

def sglang_compose(tag: str, environment: str = "") -> str:
    return f"""\
services:
  sglang:
    image: lmsysorg/sglang:{tag}
    ipc: host
    environment:
      HF_TOKEN: ${{HF_TOKEN}}{environment}
    command: >
      python3 -m sglang.launch_server
      --model-path deepseek-ai/DeepSeek-V3-0324
      --tp 8
      --trust-remote-code
      --speculative-algorithm NEXTN
      --speculative-num-steps 3
      --speculative-eagle-topk 1
      --speculative-num-draft-tokens 4
      --host 0.0.0.0 --port 30000
"""


@pytest.mark.parametrize(
    ("tag", "fires"),
    [
        ("v0.5.4", False),        # the variable does not exist yet (--enable-beta-spec era)
        ("v0.5.5", True),         # first release with SGLANG_ENABLE_SPEC_V2, default off
        ("v0.5.9-cu129", True),
        ("v0.5.9", True),
        ("v0.5.10", True),        # 0.5.10.x still defaults to off
        ("v0.5.11", False),       # default flipped to on
        ("v0.5.14-cu129", False), # removed: speculation always runs the V2 worker
        ("v0.5.23", False),
    ],
)
def test_mtp103_follows_the_sglang_image_tag(tmp_path: Path, tag: str, fires: bool) -> None:
    text = sglang_compose(tag)
    findings = check(tmp_path, {"compose.yaml": text}, "MTP103")
    if not fires:
        assert findings == [], [f["message"] for f in findings]
        return
    assert locations(findings) == [position(text, "NEXTN")]
    assert "SGLANG_ENABLE_SPEC_V2" in findings[0]["message"]


@pytest.mark.parametrize("variable", ["SGLANG_ENABLE_SPEC_V2", "SGL_ENABLE_SPEC_V2"])
def test_mtp103_silent_when_the_environment_turns_spec_v2_on(tmp_path: Path, variable: str) -> None:
    text = sglang_compose("v0.5.9-cu129", f'\n      {variable}: "1"')
    assert check(tmp_path, {"compose.yaml": text}, "MTP103") == []


def test_mtp103_follows_a_pinned_requirement(tmp_path: Path) -> None:
    """The same launch in a shell script, versioned by the repository's pin instead of a tag."""
    script = """\
#!/usr/bin/env bash
python3 -m sglang.launch_server \\
  --model-path deepseek-ai/DeepSeek-V3-0324 --tp 8 \\
  --speculative-algorithm NEXTN --speculative-num-steps 3 \\
  --speculative-eagle-topk 1 --speculative-num-draft-tokens 4
"""
    old = check(tmp_path / "old", {"serve.sh": script, "requirements.txt": "sglang[all]==0.5.9\n"}, "MTP103")
    new = check(tmp_path / "new", {"serve.sh": script, "requirements.txt": "sglang[all]==0.5.11\n"}, "MTP103")
    assert locations(old) == [position(script, "NEXTN")]
    assert new == []


# --- SGLang: --mamba-scheduler-strategy ----------------------------------------------------------------

def hybrid_compose(tag: str) -> str:
    return f"""\
services:
  sglang:
    image: lmsysorg/sglang:{tag}
    environment:
      SGLANG_ENABLE_SPEC_V2: "1"
    command:
      - python3
      - -m
      - sglang.launch_server
      - --model-path
      - Qwen/Qwen3.6-35B-A3B
      - --speculative-algorithm
      - NEXTN
      - --speculative-num-steps
      - "3"
      - --speculative-eagle-topk
      - "1"
      - --speculative-num-draft-tokens
      - "4"
      - --mamba-scheduler-strategy
      - extra_buffer
"""


@pytest.mark.parametrize(
    ("tag", "unknown"),
    [
        ("v0.5.6", True),     # not registered yet (added in 0.5.7)
        ("v0.5.7", False),
        ("v0.5.9-cu129", False),
        ("v0.5.14", False),   # kept as a deprecated alias of --mamba-radix-cache-strategy
        ("v0.5.19", False),
        ("v0.5.20", True),    # the alias is gone
        ("v0.5.23", True),
    ],
)
def test_mamba_scheduler_strategy_is_a_flag_of_some_versions(tmp_path: Path, tag: str, unknown: bool) -> None:
    text = hybrid_compose(tag)
    findings = check(tmp_path, {"compose.yaml": text}, "MTP506")
    if not unknown:
        assert findings == [], [f["message"] for f in findings]
        return
    assert locations(findings) == [position(text, "--mamba-scheduler-strategy")]


def test_mamba_scheduler_strategy_is_valid_where_it_exists_per_inspect(tmp_path: Path) -> None:
    """The engine model behind MTP506: the parser's own error, per version."""
    for tag, expect_error in (("v0.5.9-cu129", False), ("v0.5.20", True)):
        project = tmp_path / tag
        project.mkdir()
        (project / "compose.yaml").write_text(hybrid_compose(tag), encoding="utf-8")
        exit_code, out, err = run_cli(["inspect", "--format", "json", "."], cwd=project)
        assert exit_code == 0, err
        (launch,) = json.loads(out)["launches"]
        flagged = [e for e in launch["cli_errors"] if "--mamba-scheduler-strategy" in e["message"]]
        assert bool(flagged) is expect_error, launch["cli_errors"]


# --- vLLM: the hybrid prefix-caching default -------------------------------------------------------

VLLM_HYBRID_MTP = """\
#!/usr/bin/env bash
vllm serve Qwen/Qwen3.6-35B-A3B \\
  --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}' \\
  --max-num-seqs 16
"""


@pytest.mark.parametrize(
    ("version", "fires"),
    [
        ("0.27.1", False),  # hybrids default to prefix caching off
        ("0.28.0", True),   # ... on from 0.28 (PR #50991)
        ("0.32.0", True),
        ("0.33.0", False),  # lookahead block hashes avoid the dropped block
        (None, False),      # unknown: the finding would rest only on a version-dependent default
    ],
)
def test_mtp102_on_the_hybrid_default(tmp_path: Path, version: str | None, fires: bool) -> None:
    args = ["--engine-version", f"vllm={version}"] if version else []
    findings = check(tmp_path, {"serve.sh": VLLM_HYBRID_MTP}, "MTP102", *args)
    if not fires:
        assert findings == [], [f["message"] for f in findings]
        return
    # a shell word's span starts at its opening quote
    assert locations(findings) == [position(VLLM_HYBRID_MTP, "'{\"method\": \"mtp\"")]
    assert "by default" in findings[0]["message"]


def test_mtp102_follows_the_image_tag_too(tmp_path: Path) -> None:
    compose = """\
services:
  vllm:
    image: vllm/vllm-openai:{tag}
    command: ["Qwen/Qwen3.6-27B", "--speculative-config", '{{"method":"mtp","num_speculative_tokens":1}}']
"""
    on = check(tmp_path / "a", {"compose.yaml": compose.format(tag="v0.32.0")}, "MTP102")
    off = check(tmp_path / "b", {"compose.yaml": compose.format(tag="v0.27.1")}, "MTP102")
    assert len(on) == 1 and off == []


# --- unknown version: the finding names the affected range -------------------------------------------

QWEN_NEXT_RECIPE = """\
#!/usr/bin/env bash
# the official Qwen3-Next MTP recipe, plus prefix caching for the shared system prompt
vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct \\
  --tensor-parallel-size 4 \\
  --speculative-config '{"method": "qwen3_next_mtp", "num_speculative_tokens": 2}' \\
  --enable-prefix-caching \\
  --no-enable-chunked-prefill
"""


def test_unknown_version_message_names_the_affected_range(tmp_path: Path) -> None:
    findings = check(tmp_path, {"serve.sh": QWEN_NEXT_RECIPE}, "MTP110")
    assert locations(findings) == [position(QWEN_NEXT_RECIPE, "--no-enable-chunked-prefill")]
    message = findings[0]["message"]
    assert "0.28" in message and "not pinned" in message


@pytest.mark.parametrize(("version", "fires"), [("0.27.1", False), ("0.28.0", True), ("0.33.0", True)])
def test_known_version_outside_the_range_is_silent(tmp_path: Path, version: str, fires: bool) -> None:
    findings = check(tmp_path, {"serve.sh": QWEN_NEXT_RECIPE}, "MTP110", "--engine-version", f"vllm={version}")
    assert bool(findings) is fires
    if fires:
        assert "not pinned" not in findings[0]["message"]
