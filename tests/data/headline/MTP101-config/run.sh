#!/usr/bin/env bash
cd "$(dirname "$0")"
vllm serve --config serve.yaml --port 8000
