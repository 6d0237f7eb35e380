#!/usr/bin/env bash
# Start the OpenAI-compatible server for the model named in model.env.
# MTP drafting is opt-in: SPEC_TOKENS=2 ./serve.sh
set -euo pipefail

cd "$(dirname "$0")"

log() { printf '[serve] %s\n' "$*" >&2; }

set -a
# shellcheck source=model.env
source ./model.env
set +a

ARGS=(
  vllm serve "$MODEL"
  --served-model-name "$SERVED_NAME"
  --port "$PORT"
  # graphs take too long to capture on the dev box
  --enforce-eager
  --max-model-len 32768
)

if [[ -n "${SPEC_TOKENS:-}" ]]; then
  log "speculative decoding on (${SPEC_TOKENS} tokens)"
  ARGS+=(--speculative-config "{\"method\":\"mtp\",\"num_speculative_tokens\":${SPEC_TOKENS}}")
fi

log "exec: ${ARGS[*]}"
exec "${ARGS[@]}"
