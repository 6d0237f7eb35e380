"""Offline generation with SGLang's engine API and MTP."""

import sglang as sgl

if __name__ == "__main__":
    llm = sgl.Engine(
        model_path="XiaomiMiMo/MiMo-7B-RL",
        speculative_algorithm="EAGLE",
        speculative_num_steps=1,
        speculative_eagle_topk=1,
        speculative_num_draft_tokens=2,
        mem_fraction_static=0.7,
    )
    print(llm.generate("Hello", {"max_new_tokens": 32})["text"])
