"""Offline batch generation with MTP on the RTX PRO 6000 workstation."""
# mtplint: gpu=rtx-pro-6000

from vllm import LLM, SamplingParams

llm = LLM(
    model="Qwen/Qwen3.6-27B",
    max_model_len=32768,
    max_num_seqs=64,
    speculative_config={"method": "mtp", "num_speculative_tokens": 3},
    enable_prefix_caching=False,
)
prompts = [line.strip() for line in open("prompts.txt")]
for output in llm.generate(prompts, SamplingParams(max_tokens=512)):
    print(output.outputs[0].text)
