#!/usr/bin/env bash
# Start GLM-4.5-Air with MTP; `./run.sh --no-spec` to compare without it.
set -euo pipefail

SERVED_NAME=glm-air

log() { printf '%s %s\n' "$(date +%FT%T)" "$*"; }

spec_args() {
  # fills SPEC_ARGS; empty when speculation is off
  SPEC_ARGS=()
  if [[ "${1:-}" == "--no-spec" ]]; then
    log "speculation off"
    return 0
  fi
  SPEC_ARGS=(--speculative-config '{"method":"mtp","num_speculative_tokens":3}')
}

launch() {
  local model="$1"
  shift
  log "launching ${model}"
  vllm serve "$model" --served-model-name "$SERVED_NAME" "$@"
}

main() {
  spec_args "${1:-}"
  launch zai-org/GLM-4.5-Air --max-num-seqs 48 "${SPEC_ARGS[@]}"
}

main "$@"
