#!/usr/bin/env bash
# llama-server with an optional small draft model: USE_DRAFT=1 ./start-llama.sh
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"

set -a
. ./llama.env
set +a

ARGS=(llama-server -m "$MODEL_PATH" -c "$CTX" -ngl 99 --host 0.0.0.0 --port 8080)
if [ "${USE_DRAFT:-0}" = "1" ]; then
    ARGS+=(-md "$DRAFT_PATH" -ngld 99)
fi

exec "${ARGS[@]}"
