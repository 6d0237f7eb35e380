#!/usr/bin/env bash
# EAGLE3 drafter for the 8B chat model; prefix caching for the shared system prompt
set -euo pipefail
exec vllm serve meta-llama/Llama-3.1-8B-Instruct \
  --speculative-config '{"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3}' \
  --enable-prefix-caching \
  --max-num-seqs 32 \
  --port 8000
