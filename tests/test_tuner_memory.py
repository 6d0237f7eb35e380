"""The memory model (mtplint/tuner/memory.py) per engine, on launches read by the real pipeline, against the
worked numbers of docs/models.md#sizes. Stated error (module docstring): exact arithmetic on config shapes
for weights, KV and recurrent state (+-10% for quantised formats), CUDA graphs +-50%."""

from __future__ import annotations

from pathlib import Path

import pytest

from mtplint.pipeline import Options, run
from mtplint.tuner.memory import MemoryEstimate, estimate_memory

MIB_PER_GIB = 1024


def memory_for(tmp_path: Path, script: str, **versions: str) -> MemoryEstimate:
    (tmp_path / "serve.sh").write_text(script, encoding="utf-8")
    result = run([tmp_path / "serve.sh"], Options(root=tmp_path, engine_versions=versions))
    assert len(result.launches) == 1, result.diagnostics
    estimate = estimate_memory(result.launches[0])
    assert estimate is not None
    return estimate


def test_vllm_keeps_one_plus_k_state_copies_per_sequence(tmp_path: Path) -> None:
    # catalog §2.3: Qwen3.6-27B ~147 MiB of GDN state per sequence; vLLM keeps (1+k) copies: k=3 at 32 sequences ~18 GiB
    estimate = memory_for(tmp_path, """# mtplint: gpu=h100-sxm
vllm serve Qwen/Qwen3.6-27B-FP8 --max-num-seqs 32 --max-model-len 32768 \\
  --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}'
""", vllm="0.33.0")
    assert estimate.inputs.recurrent_copies == 4
    assert estimate.terms["recurrent"] == pytest.approx(32 * 4 * 147 / MIB_PER_GIB, rel=0.01)  # 18.4 GiB
    assert estimate.terms["recurrent"] == pytest.approx(18, rel=0.05)
    assert estimate.terms["weights"] == pytest.approx(27e9 / 2**30, rel=0.01)  # FP8: 1 byte per parameter
    # budget: the memory nvidia-smi reports x --gpu-memory-utilization (default 0.92 from vLLM 0.20) x TP
    assert estimate.budget == pytest.approx(81559 * 0.92 / MIB_PER_GIB, rel=1e-6)
    # lookahead: k slots of main + MTP KV per sequence (64 KiB + 4 KiB per token at BF16)
    assert estimate.terms["lookahead"] == pytest.approx(32 * 3 * (65536 + 4096) / 2**30, rel=1e-6)


def test_budget_multiplies_by_tensor_parallel_and_utilisation(tmp_path: Path) -> None:
    estimate = memory_for(tmp_path, """# mtplint: gpu=rtx-4090x2
vllm serve Qwen/Qwen3.6-27B --tensor-parallel-size 2 --gpu-memory-utilization 0.85 --max-num-seqs 8 \\
  --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}'
""", vllm="0.33.0")
    assert estimate.budget == pytest.approx(24564 * 0.85 * 2 / MIB_PER_GIB, rel=1e-6)
    assert estimate.terms["weights"] == pytest.approx(27e9 * 2 / 2**30, rel=0.01)  # BF16
    assert estimate.terms["mtp_weights"] == pytest.approx(0.42e9 * 2 / 2**30, rel=0.01)


def test_sglang_counts_per_draft_token_snapshots_and_ping_pong_buffers(tmp_path: Path) -> None:
    # sglang.md §4.2: one SSM snapshot per draft token, plus two ping-pong slots with the extra_buffer strategy
    estimate = memory_for(tmp_path, """# mtplint: gpu=h100-sxm
python3 -m sglang.launch_server --model-path Qwen/Qwen3.6-35B-A3B-FP8 --max-running-requests 16 \\
  --mamba-scheduler-strategy extra_buffer \\
  --speculative-algorithm NEXTN --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4
""", sglang="0.5.9")
    assert estimate.inputs.recurrent_copies == 1 + 4 + 2
    assert estimate.terms["recurrent"] == pytest.approx(16 * 7 * 61.4 / MIB_PER_GIB, rel=0.01)
    # SGLang's own CUDA-graph reserve: 2 MiB per captured batch size, capped by the request pool
    assert estimate.terms["cuda_graphs"] == pytest.approx(16 * 2 / MIB_PER_GIB, rel=1e-6)


def test_llama_cpp_has_no_memory_fraction_and_no_graph_reserve(tmp_path: Path) -> None:
    estimate = memory_for(tmp_path, """# mtplint: gpu=rtx-3090
llama-server -hf unsloth/Qwen3.6-27B-GGUF:Q4_K_M --spec-type draft-mtp --spec-draft-n-max 3 -np 1 -c 32768
""", **{"llama.cpp": "b9300"})
    assert estimate.budget == pytest.approx(24576 / MIB_PER_GIB, rel=1e-6)
    assert estimate.terms["cuda_graphs"] == 0
    assert estimate.terms["recurrent"] == pytest.approx(4 * 147 / MIB_PER_GIB, rel=0.01)
    # Q4_K_M is ~4.9 bits per weight
    assert estimate.terms["weights"] == pytest.approx(27e9 * 4.9 / 8 / 2**30, rel=0.05)


def test_an_unpinned_vllm_concurrency_is_estimated_at_one_sequence(tmp_path: Path) -> None:
    # vLLM's max_num_seqs default is a cap the scheduler never fills past what the KV blocks hold: the
    # estimate is made at the smallest concurrency, one sequence; the graphs are captured for the default cap
    estimate = memory_for(tmp_path, """# mtplint: gpu=rtx-4090
vllm serve Qwen/Qwen3.6-27B-AWQ --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}'
""", vllm="0.33.0")
    assert estimate.inputs.smallest and estimate.inputs.max_sequences == 1
    assert estimate.terms["recurrent"] == pytest.approx(4 * 147 / MIB_PER_GIB, rel=0.01)
    assert estimate.terms["cuda_graphs"] == pytest.approx(512 * 2 / MIB_PER_GIB)  # min(cap x (1+k) x 2, 512)
    assert not estimate.tight  # a 4-bit 27B runs on a 24 GB card


def test_an_explicit_vllm_concurrency_is_not_the_smallest(tmp_path: Path) -> None:
    estimate = memory_for(tmp_path, """# mtplint: gpu=rtx-4090
vllm serve Qwen/Qwen3.6-27B-AWQ --max-num-seqs 4 --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}'
""", vllm="0.33.0")
    assert not estimate.inputs.smallest and estimate.inputs.max_sequences == 4
