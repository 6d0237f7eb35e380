#!/usr/bin/env bash
set -e
cd "$(dirname "$0")"
exec vllm serve --config qwen.yaml --host 0.0.0.0 --port 8000
