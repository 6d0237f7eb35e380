#!/usr/bin/env python3
"""Start one SGLang server per GPU pair and wait for them to become healthy."""

import os
import subprocess
import time
import urllib.request

import sglang

PORTS = (30000, 30001)


def start(port: int, gpus: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=gpus, SGLANG_LOG_LEVEL="warning")
    return subprocess.Popen(
        [
            "python3", "-m", "sglang.launch_server",
            "--model-path", "meta-llama/Llama-3.1-8B-Instruct",
            "--port", str(port),
            "--tp", "2",
            "--mem-fraction-static", "0.8",
            "--schedule-policy", "lpm",
        ],
        env=env,
    )


def wait_healthy(port: int) -> None:
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
            return
        except OSError:
            time.sleep(5)


if __name__ == "__main__":
    print("sglang", sglang.__version__)
    servers = [start(30000, "0,1"), start(30001, "2,3")]
    for port in PORTS:
        wait_healthy(port)
    for server in servers:
        server.wait()
