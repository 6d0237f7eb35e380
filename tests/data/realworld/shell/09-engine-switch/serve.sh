#!/usr/bin/env bash
# ENGINE=vllm|sglang ./serve.sh
set -euo pipefail

ENGINE="${ENGINE:-vllm}"
MODEL="${MODEL:-Qwen/Qwen3.6-35B-A3B}"

case "$ENGINE" in
  vllm)
    CMD=(vllm serve "$MODEL"
         --speculative-config '{"method":"mtp","num_speculative_tokens":2}')
    ;;
  sglang)
    CMD=(python3 -m sglang.launch_server --model-path "$MODEL"
         --speculative-algorithm NEXTN
         --speculative-num-steps 5
         --speculative-eagle-topk 1
         --speculative-num-draft-tokens 6)
    ;;
  *)
    echo "ENGINE must be vllm or sglang" >&2
    exit 2
    ;;
esac

echo "starting ${CMD[0]}"
exec "${CMD[@]}" --port 8000
