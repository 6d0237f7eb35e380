#!/usr/bin/env bash
# Start the chat model on this node. Usage: ./serve.sh [extra vllm flags]
set -euo pipefail

MODEL="${MODEL:-Qwen/Qwen3-32B}"
PORT="${PORT:-8000}"
TP=4

export VLLM_LOGGING_LEVEL=INFO
export HF_HUB_OFFLINE=1

source /opt/venvs/vllm/bin/activate

exec vllm serve "$MODEL" \
  --host 0.0.0.0 \
  --port "$PORT" \
  --tensor-parallel-size "$TP" \
  --max-model-len 40960 \
  --gpu-memory-utilization 0.90 \
  --enable-chunked-prefill \
  --max-num-batched-tokens 8192 \
  --reasoning-parser qwen3 \
  --disable-log-requests
