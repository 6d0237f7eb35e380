#!/bin/bash
#SBATCH --job-name=qwen36-serve
#SBATCH --gres=gpu:1
#SBATCH --time=08:00:00
set -euo pipefail

module load apptainer
SIF="${SIF:-$HOME/containers/vllm-openai.sif}"
export HF_HOME="/scratch/$USER/hf"

apptainer exec --nv --bind "/scratch/$USER:/scratch/$USER" "$SIF" \
  vllm serve Qwen/Qwen3.6-27B \
    --speculative-config '{"method":"mtp","num_speculative_tokens":1}' \
    --enforce-eager \
    --port 8000
