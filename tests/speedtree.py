"""A small deployment tree whose files interact, for the --jobs and cache tests."""

from __future__ import annotations

from pathlib import Path

COMPOSE = """\
# mtplint: gpu=rtx-5090
services:
  vllm:
    image: vllm/vllm-openai:${VLLM_TAG:-v0.32.0}
    env_file: .env
    environment:
      VLLM_USE_V1: "1"
    command: >
      ${MODEL:-Qwen/Qwen3.6-27B-FP8}
      --max-model-len 65536
      --kv-cache-dtype turboquant_4bit_nc
      --speculative-config '{"method": "mtp", "num_speculative_tokens": ${NUM_SPEC:-3}}'
      --max-num-seqs 16
"""

OVERRIDE = """\
services:
  vllm:
    command: >
      Qwen/Qwen3.6-27B-FP8 --speculative-config '{"method": "mtp", "num_speculative_tokens": 4}'
      --enable-prefix-caching
"""

SCRIPT = """\
#!/usr/bin/env bash
set -euo pipefail
NUM_SPEC=2
exec vllm serve Qwen/Qwen3.6-35B-A3B \\
  --config=vllm.yaml \\
  --speculative-config '{"method":"mtp","num_speculative_tokens":'"$NUM_SPEC"'}' \\
  --speculative-config.num_speculative_tokens 3 \\
  --enable-prefix-caching \\
  --port 8000 "$@"  # noqa: MTP999
"""

CONFIG = "tensor-parallel-size: 2\nmax-num-seqs: 64\nenable-prefix-caching: false\n"

UNIT = """\
[Unit]
Description=vLLM

[Service]
Environment=NUM_SPEC=5
ExecStart=/bin/bash {script}

[Install]
WantedBy=multi-user.target
"""

SGLANG = """\
#!/bin/sh
python -m sglang.launch_server --model-path Qwen/Qwen3-Next-80B-A3B-Instruct \\
  --speculative-algorithm NEXTN --speculative-num-steps 3 --speculative-eagle-topk 1 \\
  --speculative-num-draft-tokens 4 --mem-fraction-static 0.9  # mtplint: noqa
"""

PYTHON = """\
from vllm import LLM

llm = LLM(model="Qwen/Qwen3.6-27B-FP8", speculative_config={"method": "mtp", "num_speculative_tokens": 3},
          kv_cache_dtype="fp8")
"""

K8S = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args:
            - --model
            - Qwen/Qwen3-Next-80B-A3B-Instruct
            - --speculative-config
            - '{"method": "qwen3_next_mtp", "num_speculative_tokens": 2}'
            - --enable-chunked-prefill
"""

BROKEN = "services:\n  vllm:\n    command: [vllm, serve, --speculative-config\n"


def build(root: Path, copies: int = 3) -> Path:
    """``copies`` project folders with compose (+ override, .env), a script started by a unit,
    a shared --config YAML, SGLang, Python and k8s launches, and a malformed compose file."""
    tree = root / "tree"
    for index in range(copies):
        project = tree / f"project{index}"
        (project / "deploy").mkdir(parents=True)
        (project / "compose.yaml").write_text(COMPOSE)
        (project / ".env").write_text(f"NUM_SPEC={index + 2}\nMODEL=Qwen/Qwen3.6-27B-FP8\n")
        if index % 2 == 0:
            (project / "compose.override.yaml").write_text(OVERRIDE)
        (project / "deploy" / "serve.sh").write_text(SCRIPT)
        (project / "deploy" / "vllm.yaml").write_text(CONFIG)
        # the unit starts the script: its stand-alone reading must give way to the unit's (NUM_SPEC=5)
        (project / "vllm.service").write_text(UNIT.format(script=(project / "deploy" / "serve.sh").resolve()))
        (project / "sglang.sh").write_text(SGLANG)
        (project / "offline.py").write_text(PYTHON)
        (project / "k8s.yaml").write_text(K8S)
        (project / "notes.md").write_text("vllm serve is described here\n")
    (tree / "broken").mkdir()
    (tree / "broken" / "compose.yaml").write_text(BROKEN)
    return tree
