"""Offline batch generation with MTP on a 4x H100 node.

Known problems (`mtplint check` reports each):
  MTP401  the deprecated method alias `qwen3_next_mtp` (write `mtp`)
  MTP302  4 draft tokens on a model whose MTP head is a single layer: acceptance collapses past 3
  MTP004  nothing pins the vLLM release, so MTP102 (prefix caching, on by default for this hybrid
          model from vLLM 0.28) cannot decide; `--engine-version vllm=X` or a pin settles it

Not a problem: 128 concurrent sequences. On this MoE model MTP's modelled speed-up dips below 1x
only at batch 6-15 (k=4) and is a gain again by 128 (`mtplint crossover --gpu h100-sxmx4 --model
Qwen/Qwen3-Next-80B-A3B-Instruct --max-k 4`), so MTP301 stays silent.
"""
# mtplint: gpu=h100-sxmx4

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
