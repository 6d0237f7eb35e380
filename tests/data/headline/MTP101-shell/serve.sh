#!/usr/bin/env bash
# Prompt-lookup decoding for the code-review bot, TurboQuant KV for long diffs.
set -euo pipefail

MODEL=${MODEL:-meta-llama/Llama-3.1-8B-Instruct}

vllm serve "$MODEL" \
  --max-model-len 131072 \
  --kv-cache-dtype=turboquant_k8v4 \
  --speculative-config '{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}' \
  --port 8000
