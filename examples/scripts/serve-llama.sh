#!/usr/bin/env bash
# llama-server with MTP on an RTX 3090, written against an old PR branch.
# Known problems (`mtplint check` reports each):
#   MTP404  `--spec-type mtp` is `draft-mtp` upstream: llama-server stops at startup
#   MTP403  `--draft-max` was removed in b8955 (now `--spec-draft-n-max`); 6 would also be too many
#           for a one-layer MTP head (MTP302 once the flag is renamed)
# mtplint: gpu=rtx-3090
set -euo pipefail

MODEL_DIR="${MODEL_DIR:-/models}"
CTX=32768

exec llama-server \
  -m "$MODEL_DIR/Qwen3.6-27B-MTP-Q4_K_M.gguf" \
  -ngl 99 -fa on \
  -c "$CTX" \
  --spec-type mtp \
  --draft-max 6 \
  --host 0.0.0.0 --port 8080
