#!/usr/bin/env bash
# Quick start from the vLLM docs, adapted for our box.
docker run --rm --runtime nvidia --gpus all \
    -v ~/.cache/huggingface:/root/.cache/huggingface \
    --env "HUGGING_FACE_HUB_TOKEN=${HF_TOKEN}" \
    -e VLLM_LOGGING_LEVEL=DEBUG \
    -p 8000:8000 \
    --ipc=host \
    vllm/vllm-openai:v0.28.0 \
    --model Qwen/Qwen2.5-7B-Instruct \
    --max-model-len 32768 \
    --kv-cache-dtype fp8
