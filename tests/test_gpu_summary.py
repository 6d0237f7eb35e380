"""No finding per launch for a missing GPU identity: the run's summary says once how many launches
the GPU rules did not check and how to name the GPU, in every format that has a summary."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import run_cli, write_files
from tests.test_sarif import assert_valid

# three launches with MTP on and no GPU named; one with a node selector naming an H100
COMPOSE = """\
services:
  chat:
    image: vllm/vllm-openai:v0.32.0
    command: >
      Qwen/Qwen3.6-27B-FP8
      --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}'
      --kv-cache-dtype turboquant_4bit_nc
      --max-num-seqs 64
  coder:
    image: vllm/vllm-openai:v0.32.0
    command: >
      Qwen/Qwen3.6-35B-A3B
      --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}'
      --no-enable-prefix-caching
      --max-num-seqs ${MAX_SEQS}
"""

SERVE = """\
#!/usr/bin/env bash
set -euo pipefail
PORT="${PORT:-8080}"
exec llama-server -hf unsloth/Qwen3.6-35B-A3B-GGUF:Q4_K_M \\
  --spec-type draft-mtp --spec-draft-n-max 2 -np 16 --port "$PORT"
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: qwen}
spec:
  selector: {matchLabels: {app: qwen}}
  template:
    metadata: {labels: {app: qwen}}
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.32.0
          args:
            - Qwen/Qwen3.6-27B-FP8
            - --speculative-config
            - '{"method":"mtp","num_speculative_tokens":3}'
            - --max-num-seqs
            - "256"
          resources: {limits: {nvidia.com/gpu: 1}}
"""

NOTE = re.compile(r"3 launches not checked by MTP201, MTP301 \(memory and throughput need the GPU\): name it with "
                  r"`--gpu ID\[xN\]`.*`gpu` in the configuration, a Kubernetes `nvidia.com/gpu.product` node "
                  r"selector, or a `# mtplint: gpu=…` line in the file\.")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_files(tmp_path / "fleet", {"compose.yaml": COMPOSE, "bin/serve-llama.sh": SERVE,
                                             "k8s/deployment.yaml": DEPLOYMENT})


def _check(project: Path, output_format: str, *args: str) -> tuple[int, str]:
    code, out, err = run_cli(["check", "--output-format", output_format, "--isolated", *args, "."], cwd=project)
    assert code in (0, 1), err
    return code, out


@pytest.mark.parametrize("output_format", ["full", "concise"])
def test_the_summary_says_it_once(project: Path, output_format: str) -> None:
    _, out = _check(project, output_format)
    assert len(NOTE.findall(out)) == 1, out
    assert out.rstrip("\n").splitlines()[-1].startswith("3 launches not checked")  # after "Found …"
    assert "no GPU identity for this launch" not in out  # the finding per launch it replaces
    # the true positives stay: TurboQuant KV (MTP101), the H100 launch's memory/throughput rules ran,
    # and a setting that could not be resolved is still MTP003, at its token
    codes = {line.split()[1] for line in _check(project, "concise")[1].splitlines() if ": MTP" in line}
    assert {"MTP101", "MTP003"} <= codes
    mtp003 = [line for line in _check(project, "concise")[1].splitlines() if " MTP003 " in line]
    assert len(mtp003) == 1 and "${MAX_SEQS}" in mtp003[0] and mtp003[0].startswith("compose.yaml:15:")


def test_naming_the_gpu_silences_it(project: Path) -> None:
    _, out = _check(project, "concise", "--gpu", "rtx-4090x2")
    assert " not checked by " not in out
    write_files(project, {"mtplint.toml": 'gpu = "h100"\n'})
    code, out, _ = run_cli(["check", "--output-format", "concise", "."], cwd=project)
    assert code in (0, 1) and " not checked by " not in out
    (project / "mtplint.toml").unlink()
    write_files(project, {"compose.yaml": "# mtplint: gpu=h100\n" + COMPOSE})
    _, out = _check(project, "concise")
    assert "1 launch not checked by MTP201, MTP301" in out  # only the llama.cpp script is left


def test_ignoring_the_gpu_rules_or_mtp003_silences_it(project: Path) -> None:
    assert " not checked " not in _check(project, "full", "--ignore", "MTP201,MTP301")[1]
    assert " not checked " not in _check(project, "full", "--ignore", "MTP003")[1]
    assert "3 launches not checked by MTP301 " in _check(project, "full", "--ignore", "MTP201")[1]


def test_quiet_leaves_it_out_with_the_summary(project: Path) -> None:
    _, out = _check(project, "concise", "--quiet")
    assert " not checked " not in out and "Found" not in out and ": MTP101 " in out


def test_json_has_no_summary_and_no_per_launch_finding(project: Path) -> None:
    _, out = _check(project, "json")
    findings = json.loads(out)
    assert findings and not [f for f in findings if f["code"] == "MTP003" and "GPU" in f["message"]]


def test_github_says_it_once_as_a_notice_without_a_file(project: Path) -> None:
    _, out = _check(project, "github")
    notices = [line for line in out.splitlines() if line.startswith("::notice title=mtplint::")]
    assert len(notices) == 1 and NOTE.search(notices[0])
    assert all("file=" in line for line in out.splitlines() if line not in notices)


def test_sarif_carries_it_as_a_tool_notification(project: Path) -> None:
    _, out = _check(project, "sarif")
    log = json.loads(out)
    assert_valid(log)
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is True
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "note" and NOTE.fullmatch(note["message"]["text"])
    assert not [r for r in log["runs"][0]["results"] if "GPU identity" in r["message"]["text"]]


def test_the_cache_and_workers_count_the_same_launches(tmp_path: Path) -> None:
    for n in range(70):
        write_files(tmp_path / "fleet", {f"svc{n:02}/compose.yaml": COMPOSE})
    outputs = {run_cli(["check", "--output-format", "concise", "--isolated", *args, "fleet"], cwd=tmp_path)[1]
               for args in (["--no-cache", "--jobs", "1"], ["--no-cache", "--jobs", "2"], [], [])}
    (out,) = outputs
    assert "140 launches not checked by MTP201, MTP301" in out
