#!/usr/bin/env bash
# usage: PROFILE=latency|throughput ./serve.sh
set -euo pipefail

MODEL="${MODEL:-Qwen/Qwen3.6-35B-A3B}"
PROFILE="${PROFILE:-latency}"

case "$PROFILE" in
  latency)
    # one request at a time: let the MTP head draft
    SPEC_ARGS=(--speculative-config '{"method": "mtp"}')
    MAX_SEQS=4
    ;;
  throughput)
    SPEC_ARGS=()
    MAX_SEQS=256
    ;;
  *)
    echo "unknown PROFILE: $PROFILE" >&2
    exit 64
    ;;
esac

exec vllm serve "$MODEL" \
  --tensor-parallel-size 2 \
  --max-num-seqs "$MAX_SEQS" \
  "${SPEC_ARGS[@]}"
