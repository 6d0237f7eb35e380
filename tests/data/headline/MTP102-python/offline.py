from vllm import LLM, SamplingParams

SYSTEM = open("system_prompt.txt").read()

llm = LLM(
    model="Qwen/Qwen3.6-27B",
    speculative_config={"method": "mtp", "num_speculative_tokens": 2},
    enable_prefix_caching=True,
    max_num_seqs=64,
)
outputs = llm.generate([SYSTEM + q for q in ["a", "b"]], SamplingParams(max_tokens=128))
