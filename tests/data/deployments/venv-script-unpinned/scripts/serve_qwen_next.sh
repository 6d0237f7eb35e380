#!/usr/bin/env bash
# Start Qwen3-Next with MTP from the project's virtualenv (uv sync installs the latest vLLM).
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "${SCRIPT_DIR}/../.venv/bin/activate"

PORT="${PORT:-8000}"

exec vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct \
    --tensor-parallel-size 4 \
    --speculative-config '{"method": "qwen3_next_mtp", "num_speculative_tokens": 2}' \
    --port "${PORT}"
