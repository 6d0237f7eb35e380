#!/bin/bash
# Pick the draft length from the card's memory (GiB), e.g. GPU_MEM_GB=80 ./start_server.sh
set -eo pipefail

GPU_MEM_GB=${GPU_MEM_GB:-24}
MODEL_ID=Qwen/Qwen3.6-35B-A3B

if [ "$GPU_MEM_GB" -ge 80 ]; then
    SPEC_ARGS='--speculative-config {"method":"mtp","num_speculative_tokens":5}'
elif [ "$GPU_MEM_GB" -ge 40 ]; then
    SPEC_ARGS='--speculative-config {"method":"mtp","num_speculative_tokens":2}'
else
    SPEC_ARGS=""
fi

# word splitting of SPEC_ARGS is wanted here
# shellcheck disable=SC2086
python3 -m vllm.entrypoints.openai.api_server \
    --model $MODEL_ID \
    --host 0.0.0.0 --port 8080 \
    $SPEC_ARGS \
    --trust-remote-code
