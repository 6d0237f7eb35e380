#!/bin/bash
# DeepSeek-V3 on 8xH200, no speculative decoding (baseline for the benchmark)
export SGLANG_LOG_LEVEL=info
export NCCL_IB_DISABLE=0

python3 -m sglang.launch_server \
    --model-path deepseek-ai/DeepSeek-V3-0324 \
    --tp 8 \
    --trust-remote-code \
    --host 0.0.0.0 --port 30000 \
    --mem-fraction-static 0.85 \
    --chunked-prefill-size 8192 \
    --enable-metrics \
    2>&1 | tee sglang.log
