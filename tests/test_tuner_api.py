"""The tuner's Python API runs the original tuner's documented usage (``forge.mtp``) unchanged, with
``from mtplint.tuner import ...``, and its figures hold: MTP a latency win for one user on an RTX 4090, a
crossover at batch 4-8 on an RTX 3090, a loss at 256 users on an H100, TurboQuant KV keeping MTP off."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from mtplint.catalogs import SHIPPED
from mtplint.tuner import (
    Objective,
    UseCase,
    crossover,
    model_sizes,
    quick_crossover,
    recommend,
    sglang_mtp_command,
    speedup,
)
from mtplint.tuner.sizes import weight_format

#: the original tool's README usage, with `forge.mtp` replaced by `mtplint.tuner` and nothing else changed
DOCUMENTED_USAGE = '''
from mtplint.tuner import recommend, UseCase, Objective
rec = recommend(use_case=UseCase.SINGLE_USER, objective=Objective.MINIMIZE_LATENCY, gpu_id="rtx-4090")
print(f"Enable: {rec.enable}")
print(f"Expected gain: {rec.expected_gain}")
print(f"Tokens: {rec.num_speculative_tokens}")

from mtplint.tuner import quick_crossover
for s in quick_crossover(gpu_id="rtx-3090"):
    print(f"MTP-{s.spec_tokens}: crossover at batch {s.crossover_batch_size}")

from mtplint.tuner import vllm_mtp_command, sglang_mtp_command
print(vllm_mtp_command(model="Qwen/Qwen3.6-27B", num_speculative_tokens=2).command)
print(sglang_mtp_command(model="Qwen/Qwen3.6-27B", num_speculative_tokens=2).command)
'''


def test_the_documented_usage_runs_unchanged_and_prints_sensible_values() -> None:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(DOCUMENTED_USAGE, "documented_usage.py", "exec"), {})
    lines = printed.getvalue().splitlines()
    assert lines[0] == "Enable: True"
    gain = float(lines[1].removeprefix("Expected gain: "))
    assert 1.2 < gain < 3.0
    assert re.fullmatch(r"Tokens: [123]", lines[2])
    crossovers = [re.fullmatch(r"MTP-(\d): crossover at batch (\d+)", line) for line in lines[3:6]]
    assert [int(match.group(1)) for match in crossovers if match] == [1, 2, 3]
    assert lines[6].startswith("vllm serve Qwen/Qwen3.6-27B --speculative-config ")
    assert '"method":"mtp","num_speculative_tokens":2' in lines[6]
    assert lines[7].startswith("python -m sglang.launch_server --model-path Qwen/Qwen3.6-27B ")
    assert "--speculative-num-steps 2" in lines[7] and "--speculative-num-draft-tokens 3" in lines[7]
    assert len(lines) == 8


def test_single_user_latency_on_an_rtx_4090_enables_mtp_with_one_to_three_draft_tokens() -> None:
    rec = recommend(use_case=UseCase.SINGLE_USER, objective=Objective.MINIMIZE_LATENCY, gpu_id="rtx-4090")
    assert rec.enable and rec.num_speculative_tokens in (1, 2, 3)
    assert rec.expected_gain is not None and rec.expected_gain > 1
    # the default model in the largest published format that fits 24 GB: BF16 (~50 GiB) and FP8 (~25 GiB)
    # do not, the MTP-keeping 4-bit GGUF does
    assert rec.model == "unsloth/Qwen3.6-27B-MTP-GGUF:Q4_K_M" and rec.engine == "llama.cpp"


def test_quick_crossover_on_an_rtx_3090_puts_a_k_in_the_4_to_8_range_for_the_default_model() -> None:
    rows = quick_crossover("rtx-3090")
    assert [row.spec_tokens for row in rows] == [1, 2, 3]
    assert any(4 <= row.crossover_batch_size <= 8 for row in rows)
    for row in rows:
        # the crossover batch is where the curve first drops below 1, and the losses say what follows
        assert row.curve[row.crossover_batch_size - 1] >= 1 > row.curve[row.crossover_batch_size]
        assert row.losses[0][0] == row.crossover_batch_size + 1
    # the same rows as for the checkpoint recommend serves there, named explicitly
    named = quick_crossover(gpu="rtx-3090", model="unsloth/Qwen3.6-27B-MTP-GGUF:Q4_K_M", engine="llama.cpp")
    assert [row.crossover_batch_size for row in named] == [row.crossover_batch_size for row in rows]


def test_multi_user_throughput_at_256_users_on_an_h100_disables_mtp() -> None:
    rec = recommend(use_case=UseCase.MULTI_USER, objective=Objective.MAXIMIZE_THROUGHPUT, gpu_id="h100-sxm",
                    concurrency=256)
    assert not rec.enable and not rec.refused
    assert rec.expected_gain is not None and rec.expected_gain < 1
    assert rec.crossover is not None and rec.crossover.loses_at(256)


@pytest.mark.parametrize("engine", [None, "vllm", "sglang", "llama.cpp"])
def test_turboquant_kv_keeps_mtp_off_on_every_engine_choice(engine: str | None) -> None:
    rec = recommend(use_case=UseCase.SINGLE_USER, objective=Objective.MINIMIZE_LATENCY, gpu_id="rtx-4090",
                    kv_cache_dtype="turboquant_4bit_nc", engine=engine)
    assert not rec.enable and rec.refused and rec.num_speculative_tokens is None
    assert "turboquant_4bit_nc" in rec.reason and "MTP101" in rec.reason and "#40831" in rec.reason
    command = rec.serve_command.command
    assert "speculative" not in command and "draft-mtp" not in command
    if engine in (None, "vllm"):
        # the dtype asked about is vLLM's: the tuner keeps vLLM (it used to switch to llama.cpp and drop it)
        assert rec.engine == "vllm" and "--kv-cache-dtype turboquant_4bit_nc" in command
    else:
        # an engine without TurboQuant gets no dtype it would refuse, and the reason says so
        assert rec.engine == engine and "turboquant" not in command and "MTP505" in rec.reason


def test_recommend_does_not_suggest_fp8_for_a_checkpoint_that_is_fp8_already() -> None:
    rec = recommend(use_case="multi-user", objective="throughput", gpu="rtx-3090", model="Qwen/Qwen3.6-27B-FP8",
                    engine="vllm", concurrency=8)
    assert not rec.fits and "does not fit" in rec.reason
    assert "FP8 or 4-bit" not in rec.reason and "FP8 / 4-bit" not in rec.reason
    assert "a 4-bit checkpoint (the weights are FP8 already)" in rec.reason


def test_objective_names_of_the_original_tuner_are_aliases() -> None:
    assert Objective.MINIMIZE_LATENCY is Objective.LATENCY
    assert Objective.MAXIMIZE_THROUGHPUT is Objective.THROUGHPUT
    assert [member.value for member in Objective] == ["latency", "throughput"]


def test_gpu_and_gpu_id_name_the_same_argument() -> None:
    by_id = recommend(gpu_id="h100-sxm", model="Qwen/Qwen3.6-27B-FP8")
    by_gpu = recommend(gpu="h100-sxm", model="Qwen/Qwen3.6-27B-FP8")
    assert by_id.to_json() == by_gpu.to_json()
    with pytest.raises(ValueError, match="name different GPUs"):
        recommend(gpu="h100-sxm", gpu_id="rtx-4090")
    with pytest.raises(ValueError, match="no GPU"):
        recommend(model="Qwen/Qwen3.6-27B")


def test_crossover_and_speedup_take_gpu_and_model_names() -> None:
    card = SHIPPED.find_gpu("h100-sxm")
    assert card is not None
    sizes = model_sizes("qwen3.6-27b")
    fp8 = weight_format("Qwen/Qwen3.6-27B-FP8", None, sizes)
    assert crossover("h100-sxm", "Qwen/Qwen3.6-27B-FP8", 2) == crossover(card, sizes, 2, fp8)
    assert speedup("h100-sxm", "Qwen/Qwen3.6-27B-FP8", 2, 32) == speedup(card, sizes, 2, 32, fp8)
    # a count after the GPU is the tensor-parallel size
    assert crossover("h100-sxmx2", "Qwen/Qwen3.6-27B", 1).tensor_parallel == 2
    with pytest.raises(ValueError, match="unknown GPU"):
        crossover("h101", None, 1)
    with pytest.raises(ValueError, match="unknown model"):
        speedup("h100-sxm", "acme/thing-7b", 1, 1)


def test_serve_command_line_carries_its_environment_prefix() -> None:
    # SGLang 0.5.5-0.5.10 overlap speculation only with SGLANG_ENABLE_SPEC_V2=1 (MTP103)
    command = sglang_mtp_command("Qwen/Qwen3.6-27B", 2, version="0.5.9").command
    assert command.startswith("SGLANG_ENABLE_SPEC_V2=1 python -m sglang.launch_server ")


def test_the_readme_python_api_block_is_the_documented_usage_and_its_comments_hold() -> None:
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Python API", 1)[1]
    block = section.split("```python\n", 1)[1].split("```", 1)[0]
    code_only = "\n".join(line.split("#", 1)[0].rstrip() for line in block.splitlines())
    assert code_only.strip() == DOCUMENTED_USAGE.strip()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(block, "README.md", "exec"), {})
    lines = printed.getvalue().splitlines()
    # the values the comments state
    assert lines[0] == "Enable: True" and lines[2] == "Tokens: 3"
    assert lines[1].startswith("Expected gain: 1.80")
    assert lines[3:6] == ["MTP-1: crossover at batch 6", "MTP-2: crossover at batch 4", "MTP-3: crossover at batch 3"]
