#!/bin/sh
exec vllm serve Qwen/Qwen3.6-27B --evil[2J --tensor-parallel-size 2 \
  --bell]0;pwned
