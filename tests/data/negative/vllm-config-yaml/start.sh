#!/usr/bin/env bash
set -euo pipefail
cd "$(dirname "$0")"
exec vllm serve --config vllm-config.yaml --host 0.0.0.0
