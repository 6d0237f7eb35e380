"""House rules: a team's own policies as rule files with ``when:`` conditions on effective settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import run_cli

MAX_64 = """\
code: ACME001
name: mtp-above-64-sequences
severity: warning
engines: [vllm, sglang]
fix: none
summary: Our MTP deployments stay at or below 64 concurrent sequences.
message: "MTP with {max_concurrency} concurrent sequences: platform policy caps MTP launches at 64"
when:
  spec_method: {in: [mtp]}
  max_concurrency: {gt: 64}
docs:
  what: Flags MTP launches configured for more than 64 concurrent sequences.
  why: Above 64 sequences MTP costs more than it gains on our H100 fleet (capacity review 2026-Q2).
  example: vllm serve Qwen/Qwen3.6-27B --max-num-seqs 128
  fix_safety: No fix; lower --max-num-seqs or turn MTP off.
  references:
    - title: Platform capacity review
      url: https://wiki.example.com/platform/mtp-capacity
"""

FP8_ON_H100 = """\
code: ACME002
name: kv-cache-fp8-on-h100
severity: error
engines: [vllm]
fix: none
summary: On H100 nodes MTP launches keep the KV cache in FP8.
message: "KV cache `{kv_cache_dtype}` on {gpu} with MTP: fleet policy requires an fp8 KV cache"
when:
  gpu: {in: [h100-sxm, h100-pcie]}
  spec_method: {ne: null}
  kv_cache_dtype: {not_in: [fp8, fp8_e4m3, fp8_e5m2]}
docs:
  what: Flags speculative launches on H100 whose KV cache is not FP8.
  why: The fleet sizes concurrency assuming an FP8 KV cache on H100 nodes.
  example: vllm serve Qwen/Qwen3.6-27B --kv-cache-dtype auto
  fix_safety: No fix; set --kv-cache-dtype fp8.
  references:
    - title: Fleet runbook, KV cache
      url: https://wiki.example.com/fleet/kv-cache
"""

COMPOSE = """\
services:
  qwen:
    image: vllm/vllm-openai:v0.30.0
    command: >
      Qwen/Qwen3.6-27B
      --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}'
      --no-enable-prefix-caching
      --max-num-seqs ${MAX_SEQS:-128}
"""


def run(tmp_path: Path, files: dict[str, str], *args: str) -> tuple[int, list[dict[str, Any]], str]:
    for name, text in files.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    code, out, err = run_cli(["check", "--output-format", "json", *args, "."], cwd=tmp_path)
    return code, (json.loads(out) if out else []), err


def test_house_rule_from_configuration_fires_on_the_offending_token(tmp_path: Path) -> None:
    files = {"policy/ACME001.yaml": MAX_64, "compose.yaml": COMPOSE, ".mtplint.toml": 'extend-rules = ["policy"]\n'}
    code, findings, err = run(tmp_path, files)
    assert code == 1, err
    (finding,) = [f for f in findings if f["code"] == "ACME001"]
    assert finding["message"] == "MTP with 128 concurrent sequences: platform policy caps MTP launches at 64"
    # the default inside ${MAX_SEQS:-128} is the token that set the value
    assert (finding["location"]["row"], finding["location"]["column"]) == (8, 34)
    assert finding["severity"] == "warning"


def test_house_rule_quiet_within_policy_and_when_spec_is_off(tmp_path: Path) -> None:
    files = {"policy/ACME001.yaml": MAX_64, "compose.yaml": COMPOSE.replace("128", "64")}
    assert run(tmp_path, files, "--extend-rules", "policy", "--select", "ACME")[1] == []
    files = {"compose.yaml": "services:\n  qwen:\n    image: vllm/vllm-openai:v0.30.0\n    command: Qwen/Qwen3.6-27B --max-num-seqs 256\n"}
    assert run(tmp_path, files, "--extend-rules", "policy", "--select", "ACME")[1] == []


def test_house_rule_noqa_on_the_block_header(tmp_path: Path) -> None:
    compose = COMPOSE.replace("command: >", "command: >  # mtplint: noqa: ACME001 (batch tier, approved)")
    files = {"policy/ACME001.yaml": MAX_64, "compose.yaml": compose}
    code, findings, _ = run(tmp_path, files, "--extend-rules", "policy", "--select", "ACME,MTP002")
    assert (code, findings) == (0, [])


def test_house_rule_selected_by_name_and_ignored_by_prefix(tmp_path: Path) -> None:
    files = {"policy/ACME001.yaml": MAX_64, "compose.yaml": COMPOSE}
    _, findings, _ = run(tmp_path, files, "--extend-rules", "policy", "--select", "mtp-above-64-sequences")
    assert [f["code"] for f in findings] == ["ACME001"]
    _, findings, _ = run(tmp_path, files, "--extend-rules", "policy", "--ignore", "ACME")
    assert "ACME001" not in [f["code"] for f in findings]


def test_kv_cache_must_be_fp8_on_h100(tmp_path: Path) -> None:
    shell = ("#!/usr/bin/env bash\nexec vllm serve Qwen/Qwen3.6-27B \\\n  --kv-cache-dtype auto \\\n"
             "  --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 2}'\n")
    files = {"policy/ACME002.yaml": FP8_ON_H100, "serve.sh": shell}
    args = ("--isolated", "--extend-rules", "policy", "--select", "ACME002")
    _, findings, _ = run(tmp_path, files, *args, "--gpu", "h100-sxmx8")
    assert [(f["code"], f["location"]["row"], f["location"]["column"]) for f in findings] == [("ACME002", 3, 20)]
    assert findings[0]["message"] == "KV cache `auto` on h100-sxm with MTP: fleet policy requires an fp8 KV cache"
    assert run(tmp_path, files, *args, "--gpu", "rtx-4090")[1] == []
    assert run(tmp_path, {"serve.sh": shell.replace("auto", "fp8")}, *args, "--gpu", "h100-sxm")[1] == []
    # no GPU identity: the rule does not guess, and the summary says it skipped the launch
    _, findings, _ = run(tmp_path, {"serve.sh": shell}, *args, "--extend-select", "MTP003")
    assert findings == []
    code, out, _ = run_cli(["check", *args, "--extend-select", "MTP003", "serve.sh"], cwd=tmp_path)
    assert code == 0 and "1 launch not checked by ACME002" in out and "--gpu" in out


def test_unresolved_setting_skips_the_house_rule_and_mtp003_names_it(tmp_path: Path) -> None:
    files = {"policy/ACME001.yaml": MAX_64, "compose.yaml": COMPOSE.replace("${MAX_SEQS:-128}", "${MAX_SEQS}")}
    _, findings, _ = run(tmp_path, files, "--isolated", "--extend-rules", "policy", "--select", "ACME001,MTP003")
    assert [f["code"] for f in findings] == ["MTP003"]
    assert "`max_concurrency` comes from `${MAX_SEQS}`" in findings[0]["message"] and "ACME001" in findings[0]["message"]
    assert (findings[0]["location"]["row"], findings[0]["location"]["column"]) == (8, 22)


def test_house_rules_are_listed_with_their_origin(tmp_path: Path) -> None:
    from mtplint.checks.catalog import load_catalog

    (tmp_path / "ACME001.yaml").write_text(MAX_64, encoding="utf-8")
    catalog = load_catalog((tmp_path / "ACME001.yaml",))
    assert catalog["ACME001"].origin.endswith("ACME001.yaml")
    assert catalog["ACME001"].to_json()["origin"].endswith("ACME001.yaml")
