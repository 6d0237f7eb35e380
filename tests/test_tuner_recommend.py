"""``recommend``: the issue's acceptance lines and the refusals, with the reasons a user reads."""

from __future__ import annotations

import pytest

from mtplint.tuner import Objective, UseCase, recommend


def test_single_user_latency_on_rtx_4090_enables_k_1_to_3() -> None:
    for engine, model in (("vllm", "Qwen/Qwen3.6-27B-GPTQ-Int4"), ("sglang", "Qwen/Qwen3.6-27B-GPTQ-Int4"),
                          ("llama.cpp", "unsloth/Qwen3.6-27B-MTP-GGUF:Q4_K_M")):
        result = recommend(use_case=UseCase.SINGLE_USER, objective=Objective.LATENCY, gpu="rtx-4090", model=model,
                           engine=engine)
        assert result.enable and not result.refused, result.reason
        assert result.num_speculative_tokens in (1, 2, 3)
        assert result.expected_gain is not None and result.expected_gain > 1.2
        assert result.batch == 1 and result.crossover is not None and result.crossover.batch >= 1
        assert result.memory is not None and not result.memory.tight
        assert str(result.num_speculative_tokens) in result.command_line


def test_the_issue_example_picks_the_checkpoint_that_fits_a_24_gb_card() -> None:
    # `mtplint recommend --gpu rtx-4090 --model Qwen/Qwen3.6-27B --use-case single-user --objective latency`:
    # BF16 (50 GiB) and FP8 (25 GiB) do not fit 24 GB (vLLM recipe: "Int4 fits a single 24 GB card",
    # https://recipes.vllm.ai/Qwen/Qwen3.6-27B), so the tuner serves the MTP-keeping 4-bit GGUF with llama.cpp
    result = recommend(use_case="single-user", objective="latency", gpu="rtx-4090", model="Qwen/Qwen3.6-27B")
    assert result.enable and not result.refused, result.reason
    assert result.num_speculative_tokens in (1, 2, 3)
    assert result.engine == "llama.cpp" and result.model == "unsloth/Qwen3.6-27B-MTP-GGUF:Q4_K_M"
    assert any("50.3 GiB of BF16 weights" in note and "21.6 GiB budget" in note for note in result.notes)
    assert result.command[:3] == ("llama-server", "-hf", "unsloth/Qwen3.6-27B-MTP-GGUF:Q4_K_M")


def test_bf16_27b_with_vllm_asked_for_does_not_fit_a_24_gb_card() -> None:
    result = recommend(use_case="single-user", objective="latency", gpu="rtx-4090", model="Qwen/Qwen3.6-27B",
                       engine="vllm")
    assert not result.enable and result.refused
    assert "does not fit" in result.reason and "weights (BF16) 50.3" in result.reason and "21.6 GiB" in result.reason
    assert result.fits is False  # the plain command shown would not start either
    fitting = recommend(use_case="single-user", objective="latency", gpu="rtx-4090x2", model="Qwen/Qwen3.6-27B",
                        engine="vllm")
    assert fitting.fits


def test_the_fp8_release_is_served_where_bf16_does_not_fit() -> None:
    result = recommend(use_case="single-user", objective="latency", gpu="l40s", model="Qwen/Qwen3.6-27B")
    assert result.enable and result.engine == "vllm" and result.model == "Qwen/Qwen3.6-27B-FP8"
    assert "Qwen/Qwen3.6-27B-FP8" in result.command


def test_llama_cpp_always_gets_a_gguf() -> None:
    result = recommend(use_case="single-user", objective="latency", gpu="rtx-3090", model="Qwen/Qwen3.6-35B-A3B",
                       engine="llama.cpp")
    assert result.model == "unsloth/Qwen3.6-35B-A3B-MTP-GGUF:Q4_K_M" and result.enable


@pytest.mark.parametrize("model", ["Qwen/Qwen3.6-27B", "Qwen/Qwen3.6-27B-FP8"])
def test_256_concurrent_on_h100_is_past_the_crossover(model: str) -> None:
    result = recommend(use_case="multi-user", objective="throughput", gpu="h100-sxm", model=model, concurrency=256)
    assert not result.enable and not result.refused
    assert result.crossover is not None and 0 < result.crossover.batch < 256
    assert f"MTP loses from batch {result.crossover.batch + 1} on" in result.reason and "past the crossover" in result.reason
    assert result.expected_gain is not None and result.expected_gain < 1
    assert "--speculative-config" not in result.command


def test_latency_keeps_the_fastest_quiet_k_that_survives_the_busy_hour() -> None:
    latency = recommend(use_case="multi-user", objective="latency", gpu="h100-sxm", model="Qwen/Qwen3.6-27B-FP8",
                        concurrency=32)
    throughput = recommend(use_case="multi-user", objective="throughput", gpu="h100-sxm",
                           model="Qwen/Qwen3.6-27B-FP8", concurrency=32)
    assert latency.enable and throughput.enable
    assert latency.crossover is not None and latency.crossover.batch >= 32
    assert throughput.crossover is not None
    assert latency.crossover.gain_at_one >= throughput.crossover.gain_at_one
    assert throughput.expected_gain == max(throughput.gains.values())


def test_turboquant_kv_is_refused_citing_40831() -> None:
    result = recommend(use_case="single-user", objective="latency", gpu="h100-sxm", model="Qwen/Qwen3.6-27B",
                       kv_cache_dtype="turboquant_4bit_nc")
    assert result.refused and not result.enable
    assert "40831" in result.reason
    assert "https://github.com/vllm-project/vllm/issues/40831" in result.references
    assert "--speculative-config" not in result.command


@pytest.mark.parametrize("model", ["mlx-community/Qwen3.6-27B-4bit", "meta-llama/Llama-3.1-8B-Instruct",
                                   "moonshotai/Kimi-K2-Instruct"])
def test_model_without_mtp_head_is_refused(model: str) -> None:
    result = recommend(use_case="single-user", objective="latency", gpu="h100-sxm", model=model)
    assert result.refused and "ships no MTP head" in result.reason and "MTP105" in result.reason


def test_tight_memory_steps_k_down_or_turns_mtp_off() -> None:
    # a 27B Int4 on an L4 (23 GiB): 8 sequences hold k=1's recurrent-state copies but not k=3's;
    # 12 sequences do not even hold k=1's
    stepped = recommend(use_case="multi-user", objective="throughput", gpu="l4", model="Qwen/Qwen3.6-27B-GPTQ-Int4",
                        concurrency=8)
    assert stepped.enable and stepped.num_speculative_tokens == 1
    assert "stepped down to k=1" in " ".join(stepped.notes)
    assert stepped.memory is not None and not stepped.memory.tight
    tight = recommend(use_case="multi-user", objective="throughput", gpu="l4", model="Qwen/Qwen3.6-27B-GPTQ-Int4",
                      concurrency=12)
    assert not tight.enable and not tight.refused
    assert "do not fit even at k=1" in tight.reason and "recurrent state (12 seqs x 2 copies" in tight.reason


def test_unknown_gpu_and_model_name_close_matches() -> None:
    with pytest.raises(ValueError, match="did you mean rtx-4090"):
        recommend(use_case="single-user", objective="latency", gpu="rtx-4091", model="Qwen/Qwen3.6-27B")
    with pytest.raises(ValueError, match="unknown model"):
        recommend(use_case="single-user", objective="latency", gpu="rtx-4090", model="acme/unknown-7b")
    with pytest.raises(ValueError, match="multi-user"):
        recommend(use_case="single-user", objective="latency", gpu="rtx-4090", model="Qwen/Qwen3.6-27B",
                  concurrency=8)


def test_gpu_count_sets_tensor_parallel() -> None:
    result = recommend(use_case="single-user", objective="latency", gpu="h100-sxmx2", model="Qwen/Qwen3.6-27B")
    assert result.enable
    assert result.command[result.command.index("--tensor-parallel-size") + 1] == "2"
