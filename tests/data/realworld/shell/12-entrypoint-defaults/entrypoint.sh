#!/bin/bash
# Container entrypoint: `docker run img` serves; `docker run img bash` gets a shell.
set -euo pipefail

if [[ $# -gt 0 ]]; then
  exec "$@"
fi

MODEL_NAME="${MODEL_NAME:-Qwen/Qwen3.6-27B}"

exec python3 -m vllm.entrypoints.openai.api_server \
  --model "${MODEL_NAME}" \
  --gpu-memory-utilization "${GPU_UTIL:-0.97}" \
  --speculative-config "{\"method\":\"${SPEC_METHOD:=mtp}\",\"num_speculative_tokens\":${NUM_SPEC_TOKENS:-2}}"
