#!/usr/bin/env bash
cd "$(dirname "$0")"
python3 -m sglang.launch_server --config sglang-config.yaml --port 30000
