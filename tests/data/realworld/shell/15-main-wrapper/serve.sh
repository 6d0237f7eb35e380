#!/usr/bin/env bash
# Serve Qwen3.6-27B with its built-in MTP head.
# usage: ./serve.sh [extra vllm serve arguments...]
set -euo pipefail

MODEL="${MODEL:-Qwen/Qwen3.6-27B}"
PORT="${PORT:-8000}"

log() {
  echo "[$(date -u +%H:%M:%S)] $*" >&2
}

main() {
  # draft length: tuned on our chat traffic
  local spec_config='{"method": "mtp", "num_speculative_tokens": 4}'

  log "serving ${MODEL} on :${PORT}"
  exec vllm serve "$MODEL" \
    --port "$PORT" \
    --max-num-seqs 32 \
    --speculative-config "$spec_config" \
    "$@"
}

main "$@"
