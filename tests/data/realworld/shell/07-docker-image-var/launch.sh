#!/bin/sh
# usage: ./launch.sh IMAGE [docker options...]
#   ./launch.sh registry.internal/ml/vllm-runtime:2026.03 --network host
set -eu

IMG="$1"
shift
DOCKER_ARGS="$*"

# shellcheck disable=SC2086
docker run -d --name qwen36 --gpus all $DOCKER_ARGS "$IMG" \
  vllm serve Qwen/Qwen3.6-27B \
    --speculative-config '{"method": "mtp", "num_speculative_tokens": 4}' \
    --max-num-seqs 16
