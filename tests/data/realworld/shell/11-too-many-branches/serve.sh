#!/usr/bin/env bash
# Every feature is a switch in the environment.
set -euo pipefail

ARGS=(vllm serve Qwen/Qwen3.6-27B --speculative-config '{"method": "mtp"}')

[[ -n "${ENABLE_PREFIX_CACHE:-}" ]] && ARGS+=(--enable-prefix-caching)
[[ -n "${KV_FP8:-}" ]] && ARGS+=(--kv-cache-dtype fp8)
[[ -n "${CHUNKED:-}" ]] && ARGS+=(--enable-chunked-prefill)
[[ -n "${LONG_CTX:-}" ]] && ARGS+=(--max-model-len 131072)
[[ -n "${TOOLS:-}" ]] && ARGS+=(--enable-auto-tool-choice --tool-call-parser qwen3_coder)

exec "${ARGS[@]}"
