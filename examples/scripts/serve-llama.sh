#!/usr/bin/env bash
# llama-server with MTP on an RTX 3090, written against an old PR branch.
# Known problems: `--spec-type mtp` is `draft-mtp` upstream; `--draft-max` was removed in b8955;
# n_max above 3 on a one-layer MTP head collapses acceptance.
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
