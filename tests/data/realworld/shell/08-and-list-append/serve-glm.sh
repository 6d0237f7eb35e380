#!/usr/bin/env bash
set -euo pipefail

# defaults, overridable from the environment
: "${MTP_TOKENS:=3}"
: "${USE_MTP:=1}"

ARGS=(
  vllm serve zai-org/GLM-4.5-Air
  --tensor-parallel-size 4
  --max-num-sequences 32
)
[[ "$USE_MTP" == 1 ]] && ARGS+=(--speculative-config "{\"method\":\"mtp\",\"num_speculative_tokens\":${MTP_TOKENS}}" -O0)

exec "${ARGS[@]}"
