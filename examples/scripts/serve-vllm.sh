#!/usr/bin/env bash
# vLLM launch script with a shared config file.
# Known problems (`mtplint check` reports each):
#   MTP108  `--config=vllm.yaml` (with "=") is never loaded
#   MTP106  the dotted key after the full --speculative-config JSON replaces it, so the method is lost
set -euo pipefail

export VLLM_LOGGING_LEVEL=INFO
NUM_SPEC=2

vllm serve Qwen/Qwen3.6-35B-A3B \
  --config=vllm.yaml \
  --speculative-config '{"method":"mtp","num_speculative_tokens":'"$NUM_SPEC"'}' \
  --speculative-config.num_speculative_tokens 3 \
  --enable-prefix-caching \
  --port 8000 "$@"
