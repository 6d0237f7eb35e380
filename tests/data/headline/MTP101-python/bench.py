"""Long-context offline eval with MTP and compressed KV."""

from vllm import LLM, SamplingParams

llm = LLM(
    model="Qwen/Qwen3.6-27B",
    max_model_len=131072,
    kv_cache_dtype="turboquant_k8v4",
    speculative_config={"method": "mtp", "num_speculative_tokens": 3},
    enable_prefix_caching=False,
)
print(llm.generate(["hello"], SamplingParams(max_tokens=16))[0].outputs[0].text)
