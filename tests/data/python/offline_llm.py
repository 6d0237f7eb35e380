"""Offline batch generation with MTP speculative decoding."""
import json
import os

from vllm import LLM, SamplingParams

MODEL = "Qwen/Qwen3.6-27B"
SPECULATIVE = {"method": "mtp", "num_speculative_tokens": 2}
TP = int(os.environ.get("TP", "2"))

os.environ["VLLM_USE_V1"] = "1"


def main(max_len: int) -> None:
    llm = LLM(
        model=MODEL,
        speculative_config=SPECULATIVE,
        tensor_parallel_size=TP,
        max_model_len=max_len,
        kv_cache_dtype="fp8",
        gpu_memory_utilization=0.92,
        hf_overrides=json.dumps({"max_position_embeddings": 65536}),
    )
    outputs = llm.generate(["Hello"], SamplingParams(max_tokens=64))
    print(outputs[0].outputs[0].text)


class LLMJudge:
    """Not an engine: a local class that happens to have LLM in its name."""


if __name__ == "__main__":
    main(32768)
