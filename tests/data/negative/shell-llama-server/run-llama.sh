#!/usr/bin/env bash
set -e
cd "$(dirname "$0")"

# gemma on the 3090, four slots for the team
LLAMA_BIN=./build/bin/llama-server
"$LLAMA_BIN" \
  --hf-repo ggml-org/gemma-3-12b-it-GGUF \
  --hf-file gemma-3-12b-it-Q4_K_M.gguf \
  --ctx-size 32768 \
  --n-gpu-layers 99 \
  --parallel 4 \
  --cont-batching \
  --flash-attn on \
  --cache-type-k q8_0 --cache-type-v q8_0 \
  --host 127.0.0.1 --port 8081 \
  --metrics
