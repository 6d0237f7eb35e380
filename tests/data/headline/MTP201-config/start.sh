#!/usr/bin/env bash
cd "$(dirname "$0")"
exec vllm serve --config serve.yaml --port 8000
