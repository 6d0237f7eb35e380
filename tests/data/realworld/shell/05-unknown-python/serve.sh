#!/usr/bin/env bash
# The interpreter and the draft length come from the machine and the shared tuning file.
set -euo pipefail

CONF="${CONF:-/etc/llm/tuning.json}"
PYTHON_BIN="$(command -v python3)"
NUM_SPEC="$(jq -r '.num_speculative_tokens' "$CONF")"

"$PYTHON_BIN" -m vllm.entrypoints.openai.api_server \
  --model zai-org/GLM-4.5-Air \
  --tensor-parallel-size 4 \
  --speculative-config "{\"method\":\"mtp\",\"num_speculative_tokens\":${NUM_SPEC}}" \
  --enforce-eager \
  --port 8000
