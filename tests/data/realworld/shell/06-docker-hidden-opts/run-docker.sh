#!/usr/bin/env bash
# Run SGLang in a container. Extra docker flags: DOCKER_EXTRA_ARGS="--network host"
set -euo pipefail

: "${SGLANG_IMAGE:?set SGLANG_IMAGE to the image to run}"
HF_HOME="${HF_HOME:-$HOME/.cache/huggingface}"

opts=(--rm --gpus all --ipc=host --shm-size 32g -p 30000:30000)
opts+=(-v "${HF_HOME}:/root/.cache/huggingface")
if [[ -n "${HF_TOKEN:-}" ]]; then
  opts+=(-e "HF_TOKEN=${HF_TOKEN}")
fi

# shellcheck disable=SC2086
docker run $DOCKER_EXTRA_ARGS "${opts[@]}" "$SGLANG_IMAGE" \
  python3 -m sglang.launch_server \
    --model-path Qwen/Qwen3.6-35B-A3B \
    --speculative-algorithm NEXTN \
    --speculative-num-steps 3 \
    --speculative-eagle-topk 1 \
    --speculative-num-draft-tokens 4 \
    --disable-cuda-graph \
    --host 0.0.0.0 --port 30000
