#!/usr/bin/env python3
"""Start an SGLang server with MTP (NEXTN) and wait for it."""
import os
import subprocess
import sys

MODEL = "Qwen/Qwen3.6-35B-A3B"
PORT = 30000
BASE = [sys.executable, "-m", "sglang.launch_server", "--model-path", MODEL]
SPEC_FLAGS = [
    "--speculative-algorithm", "NEXTN",
    "--speculative-num-steps", "3",
    "--speculative-eagle-topk", "1",
]


def start(extra: list[str]) -> subprocess.Popen[bytes]:
    cmd = BASE + SPEC_FLAGS + ["--port", str(PORT), "--mem-fraction-static", "0.85"]
    if os.environ.get("DEBUG"):
        cmd.append("--log-level=debug")
    cmd.extend(extra)
    return subprocess.Popen(
        cmd,
        env={**os.environ, "SGLANG_ENABLE_SPEC_V2": "1", "CUDA_VISIBLE_DEVICES": "0,1"},
    )


if __name__ == "__main__":
    server = start(sys.argv[1:])
    server.wait()
