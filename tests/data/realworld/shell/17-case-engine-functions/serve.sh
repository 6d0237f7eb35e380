#!/usr/bin/env bash
# One entry point for both engines.
# usage: ENGINE=vllm|sglang MODEL=... ./serve.sh
set -euo pipefail

MODEL="${MODEL:-Qwen/Qwen3.6-35B-A3B}"
TP="${TP:-2}"

die() {
  echo "error: $*" >&2
  exit 1
}

serve_vllm() {
  # eager mode: we hit a graph capture OOM once, never re-tested
  exec vllm serve "$MODEL" \
    --tensor-parallel-size "$TP" \
    --speculative-config '{"method":"mtp","num_speculative_tokens":1}' \
    --enforce-eager
}

serve_sglang() {
  exec python3 -m sglang.launch_server \
    --model-path "$MODEL" \
    --tp-size "$TP" \
    --speculative-algorithm NEXTN \
    --speculative-num-steps 3 \
    --speculative-eagle-topk 1 \
    --speculative-num-draft-tokens 4
}

case "${ENGINE:-vllm}" in
  vllm) serve_vllm ;;
  sglang) serve_sglang ;;
  *) die "unknown ENGINE=${ENGINE}" ;;
esac
