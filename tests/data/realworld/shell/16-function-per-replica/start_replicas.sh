#!/usr/bin/env bash
# Two replicas of the same model behind nginx, one per GPU.
set -euo pipefail

MODEL=Qwen/Qwen3.6-35B-A3B
SPEC='{"method":"mtp","num_speculative_tokens":2}'
LOG_DIR="${LOG_DIR:-./logs}"

start_server() {
  local port="$1" mem_util="$2"
  echo "replica on :${port} (GPU ${CUDA_VISIBLE_DEVICES})"
  vllm serve "$MODEL" \
    --port "$port" \
    --gpu-memory-utilization "$mem_util" \
    --speculative-config "$SPEC" \
    >"${LOG_DIR}/vllm-${port}.log" 2>&1 &
}

mkdir -p "$LOG_DIR"
CUDA_VISIBLE_DEVICES=0 start_server 8001 0.90
# GPU 1 has nothing else on it: give vLLM nearly all of it
CUDA_VISIBLE_DEVICES=1 start_server 8002 0.97
wait
