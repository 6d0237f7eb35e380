"""Offline batch generation with MTP.

Known problems: the deprecated method alias `qwen3_next_mtp`, and 4 draft tokens on a model whose
MTP head is a single layer (acceptance collapses past 3).
"""

from vllm import LLM, SamplingParams

MODEL = "Qwen/Qwen3-Next-80B-A3B-Instruct"
SPEC = {"method": "qwen3_next_mtp", "num_speculative_tokens": 4}

llm = LLM(
    model=MODEL,
    tensor_parallel_size=4,
    speculative_config=SPEC,
    max_num_seqs=128,
)

outputs = llm.generate(["Write a haiku about GPUs."], SamplingParams(max_tokens=64))
for output in outputs:
    print(output.outputs[0].text)
