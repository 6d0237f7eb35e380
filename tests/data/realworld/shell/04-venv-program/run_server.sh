#!/usr/bin/env bash
# Runs vLLM from the project's own virtualenv (uv sync --extra serve).
set -euo pipefail

SCRIPT_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" &>/dev/null && pwd)"
VENV="${VENV:-$SCRIPT_DIR/.venv}"

export VLLM_LOGGING_LEVEL=INFO

exec "${VENV}/bin/vllm" serve Qwen/Qwen3.6-27B \
    --host 127.0.0.1 \
    --port 8001 \
    --speculative-config '{"method": "mtp"}' \
    --gpu-memory-utilization 0.90
