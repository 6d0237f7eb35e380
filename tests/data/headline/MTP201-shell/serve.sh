#!/usr/bin/env bash
# Qwen3.6-35B-A3B with MTP across both 4090s (tensor parallel)
set -euo pipefail
export CUDA_VISIBLE_DEVICES=0,1

exec vllm serve Qwen/Qwen3.6-35B-A3B-FP8 \
  --tensor-parallel-size 2 \
  --max-model-len 131072 \
  --max-num-seqs 128 \
  --gpu-memory-utilization 0.9 \
  --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}' \
  --no-enable-prefix-caching \
  --port 8000
