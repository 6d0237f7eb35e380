"""Offline throughput run with the SGLang engine API."""

import sglang as sgl


def main() -> None:
    llm = sgl.Engine(
        model_path="Qwen/Qwen3-8B",
        tp_size=1,
        mem_fraction_static=0.85,
        chunked_prefill_size=4096,
        context_length=16384,
    )
    prompts = ["The capital of France is", "List three prime numbers:"]
    outputs = llm.generate(prompts, {"temperature": 0.0, "max_new_tokens": 64})
    for prompt, output in zip(prompts, outputs):
        print(prompt, output["text"])
    llm.shutdown()


if __name__ == "__main__":
    main()
