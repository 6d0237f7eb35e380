#!/usr/bin/env bash
# MODE=spec ./serve.sh  -- one GPU per tensor-parallel rank, as many as the node has
set -euo pipefail

MODEL="Qwen/Qwen3.6-35B-A3B"
TP="$(nvidia-smi -L | wc -l)"

SERVE_ARGS="--model $MODEL --tensor-parallel-size $TP --max-num-seqs 64"
if [[ "${MODE:-plain}" == spec ]]; then
  SERVE_ARGS+=" --speculative-config {\"method\":\"mtp\",\"num_speculative_tokens\":4}"
fi

# shellcheck disable=SC2086  # SERVE_ARGS is a list of words
exec python3 -m vllm.entrypoints.openai.api_server $SERVE_ARGS
