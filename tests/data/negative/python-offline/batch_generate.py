"""Nightly batch: summarise support tickets with a local model (no speculative decoding)."""

import json
import sys

from vllm import LLM, SamplingParams

MODEL = "Qwen/Qwen3-14B"


def main(path: str) -> None:
    with open(path, encoding="utf-8") as handle:
        tickets = [json.loads(line) for line in handle]

    llm = LLM(
        model=MODEL,
        tensor_parallel_size=2,
        max_model_len=16384,
        gpu_memory_utilization=0.9,
        enable_prefix_caching=True,
        seed=0,
    )
    params = SamplingParams(temperature=0.2, max_tokens=256)
    prompts = [f"Summarise this ticket:\n{t['body']}" for t in tickets]
    for ticket, output in zip(tickets, llm.generate(prompts, params)):
        print(json.dumps({"id": ticket["id"], "summary": output.outputs[0].text}))


if __name__ == "__main__":
    main(sys.argv[1])
