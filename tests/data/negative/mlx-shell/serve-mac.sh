#!/bin/zsh
# Local server on the M3 Max for the editor plugin
mlx_lm.server \
  --model mlx-community/Qwen3-30B-A3B-4bit \
  --host 127.0.0.1 \
  --port 8080 \
  --max-tokens 4096
