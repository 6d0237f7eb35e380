#!/bin/bash
# DeepSeek-V3 with MTP (NEXTN) on 8xH200
export SGLANG_LOG_LEVEL=info

python3 -m sglang.launch_server \
    --model-path deepseek-ai/DeepSeek-V3-0324 \
    --tp 8 \
    --trust-remote-code \
    --speculative-algorithm EAGLE \
    --speculative-num-steps 1 \
    --speculative-eagle-topk 1 \
    --speculative-num-draft-tokens 2 \
    --host 0.0.0.0 --port 30000
