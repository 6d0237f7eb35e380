"""The estimates behind MTP201 / MTP301 against the published points in docs/throughput.md and docs/models.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mtplint.catalogs import SHIPPED
from mtplint.tuner import model_sizes
from mtplint.tuner.memory import MemoryInputs, estimate
from mtplint.tuner.sizes import WeightFormat, kv_bytes_per_element, weight_format
from tests.conftest import run_cli

FOUR_BIT = WeightFormat("4-bit", 0.55)


def gpu(name: str):  # type: ignore[no-untyped-def]
    found = SHIPPED.find_gpu(name)
    assert found is not None
    return found


@pytest.mark.parametrize(("name", "quantization", "label"), [
    ("Qwen/Qwen3.6-27B-FP8", None, "FP8"),
    ("Qwen/Qwen3.6-27B-AWQ", None, "4-bit"),
    ("Qwen/Qwen3.6-27B", "awq_marlin", "4-bit"),
    ("/models/Qwen3.6-27B-UD-Q4_K_XL.gguf", None, "GGUF Q4_K_XL"),
    ("unsloth/Qwen3.6-27B-GGUF:Q8_0", None, "GGUF Q8_0"),
    ("Qwen/Qwen3.6-27B", None, "BF16"),
    ("deepseek-ai/DeepSeek-V3", None, "FP8"),
])
def test_weight_format_from_name_or_flag(name: str, quantization: str | None, label: str) -> None:
    info = SHIPPED.find_model(name)
    assert weight_format(name, quantization, model_sizes(info.id if info else None)).label == label


def test_kv_bytes() -> None:
    assert kv_bytes_per_element("auto") == 2.0
    assert kv_bytes_per_element("fp8_e4m3") == 1.0
    assert kv_bytes_per_element("q8_0") == pytest.approx(1.0625)
    assert kv_bytes_per_element("mystery") is None


def test_recurrent_state_term_matches_the_catalog_arithmetic() -> None:
    # catalog §2.3: (1+k) x 147 MiB per sequence for Qwen3.6-27B; k=3, 32 sequences -> ~18 GiB of state
    sizes = model_sizes("qwen3.6-27b")
    assert sizes is not None
    result = estimate(MemoryInputs(
        engine="vllm", gpu=gpu("h100-sxm"), sizes=sizes, weights=WeightFormat("FP8", 1.0, fp8=True), method="mtp",
        draft_tokens=3, max_sequences=32, kv_bytes=2.0, fraction=0.92, tensor_parallel=1,
        context_per_sequence=32768, recurrent_copies=4, graph_sizes=256,
    ))
    assert result.terms["recurrent"] == pytest.approx(18.4, abs=0.1)
    assert result.terms["weights"] == pytest.approx(27e9 / 2**30, rel=0.01)
    assert result.terms["mtp_weights"] == pytest.approx(0.42e9 / 2**30, rel=0.01)
    assert result.budget == pytest.approx(81559 * 0.92 / 1024, rel=1e-6)
    # 44.9 GiB resident of 73.3 leaves 28.4 GiB for the KV cache: not tight on an H100
    assert result.left == pytest.approx(28.4, abs=0.1)
    assert not result.tight


def _check(files: dict[str, str], tmp_path: Path, *args: str) -> list[dict[str, object]]:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    code, out, err = run_cli(["check", "--output-format", "json", "--isolated", *args, "."], cwd=tmp_path)
    assert code in (0, 1), err
    findings: list[dict[str, object]] = json.loads(out)
    return findings


SGLANG_48 = """\
# mtplint: gpu=rtx-4090
python3 -m sglang.launch_server --model-path Qwen/Qwen3.6-27B-AWQ \\
  --speculative-algorithm NEXTN --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4
"""


@pytest.mark.parametrize(("objective", "severity"), [("throughput", "warning"), ("latency", "info")])
def test_mtp301_severity_follows_the_objective(objective: str, severity: str, tmp_path: Path) -> None:
    findings = _check({"serve.sh": SGLANG_48}, tmp_path, "--select", "MTP301", "--objective", objective,
                      "--engine-version", "sglang=0.5.9")
    assert [f["severity"] for f in findings] == [severity]


def test_mtp201_message_lists_every_term_in_gib(tmp_path: Path) -> None:
    text = ("# mtplint: gpu=rtx-4090\n"
            "vllm serve Qwen/Qwen3.6-27B-AWQ --max-num-seqs 16 \\\n"
            "  --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 3}'\n")
    findings = _check({"serve.sh": text}, tmp_path, "--select", "MTP201", "--engine-version", "vllm=0.33.0")
    assert len(findings) == 1
    message = str(findings[0]["message"])
    for term in ("weights (4-bit) 13.8", "MTP head 0.2", "draft KV", "lookahead slots", "recurrent state", "CUDA graphs",
                 "Change first: fewer draft tokens"):
        assert term in message


BF16_27B_ON_3090 = """\
# mtplint: gpu=rtx-3090
set -euo pipefail
vllm serve Qwen/Qwen3.6-27B \\
  --speculative-config '{"method": "mtp", "num_speculative_tokens": 1}'
"""


def test_mtp201_fires_at_the_smallest_concurrency_when_max_num_seqs_is_a_default(tmp_path: Path) -> None:
    """~50 GiB of BF16 weights on one 24 GB card cannot load even for one sequence: with --max-num-seqs
    left at vLLM's default (a cap only) MTP201 estimates at one sequence and says so."""
    findings = [f for f in _check({"serve.sh": BF16_27B_ON_3090}, tmp_path, "--engine-version", "vllm=0.33.0")
                if f["code"] == "MTP201"]
    assert len(findings) == 1
    message = str(findings[0]["message"])
    assert "for 1 sequence, the smallest concurrency (--max-num-seqs is left at its default" in message
    assert "weights (BF16) 50.3" in message
    # BF16 weights: an FP8 or 4-bit checkpoint is the first advice, and one sequence is not "lowered" further
    assert "Change first: quantised weights (an FP8 or 4-bit checkpoint) or more GPUs" in message
    assert "lower max concurrency" not in message


def test_mtp201_does_not_suggest_fp8_for_a_checkpoint_that_is_fp8_already(tmp_path: Path) -> None:
    script = BF16_27B_ON_3090.replace("Qwen/Qwen3.6-27B", "Qwen/Qwen3.6-27B-FP8")
    findings = [f for f in _check({"serve.sh": script}, tmp_path, "--engine-version", "vllm=0.33.0")
                if f["code"] == "MTP201"]
    assert len(findings) == 1
    message = str(findings[0]["message"])
    assert "weights (FP8)" in message and "FP8 or 4-bit" not in message
    assert "a 4-bit checkpoint (the weights are FP8 already) or more GPUs" in message


def test_mtp203_leaves_weights_that_leave_no_state_line_to_mtp201(tmp_path: Path) -> None:
    """BF16 27B on one RTX 3090 with --max-num-seqs 8: the weights alone exceed the budget, so no
    recurrent-state line fits. MTP203 used to say "at most ~0 lines ... set --max-cudagraph-capture-size 1";
    the launch is MTP201's (weights against the budget), and MTP203 says nothing it cannot mean."""
    script = BF16_27B_ON_3090.replace("vllm serve Qwen/Qwen3.6-27B \\", "vllm serve Qwen/Qwen3.6-27B --max-num-seqs 8 \\")
    codes = [f["code"] for f in _check({"serve.sh": script}, tmp_path, "--engine-version", "vllm=0.33.0")]
    assert "MTP201" in codes and "MTP203" not in codes


def test_mtp203_still_fires_when_some_state_lines_fit(tmp_path: Path) -> None:
    # FP8 27B on an H100 with 512 sequences at k=3: ~45 GiB after weights hold ~300 lines of 147 MiB, fewer
    # than the 512 CUDA-graph batch sizes captured by default
    script = """# mtplint: gpu=h100-sxm
vllm serve Qwen/Qwen3.6-27B-FP8 --max-num-seqs 512 \\
  --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}'
"""
    findings = [f for f in _check({"serve.sh": script}, tmp_path, "--engine-version", "vllm=0.33.0")
                if f["code"] == "MTP203"]
    assert len(findings) == 1
    message = str(findings[0]["message"])
    lines = int(message.split("at most ~", 1)[1].split()[0])
    assert 1 <= lines < 512
    assert f"set --max-cudagraph-capture-size {max(lines // 2, 1)}" in message


@pytest.mark.parametrize(("dtype", "version"), [("turboquant_4bit", "0.33.0"), ("turbo4", "0.20.0")])
def test_mtp505_never_suggests_turboquant_where_mtp101_forbids_it(dtype: str, version: str, tmp_path: Path) -> None:
    """A misspelt TurboQuant dtype on a launch running MTP: the closest valid names are TurboQuant
    presets, which MTP101 forbids with speculation on the same token; MTP505 leaves them out."""
    script = f"""# mtplint: gpu=rtx-4090
vllm serve Qwen/Qwen3.6-27B-AWQ --kv-cache-dtype {dtype} \\
  --speculative-config '{{"method": "mtp", "num_speculative_tokens": 2}}'
"""
    findings = [f for f in _check({"serve.sh": script}, tmp_path, "--engine-version", f"vllm={version}")
                if f["code"] == "MTP505"]
    assert len(findings) == 1
    message = str(findings[0]["message"])
    advice = message.split(";", 1)[1]
    assert "use " in advice and "`turboquant_" not in advice
    assert "TurboQuant dtypes are left out: with speculative decoding" in message


def test_mtp505_still_suggests_turboquant_without_speculation(tmp_path: Path) -> None:
    script = "# mtplint: gpu=rtx-4090\nvllm serve Qwen/Qwen3.6-27B-AWQ --kv-cache-dtype turboquant_4bit\n"
    findings = [f for f in _check({"serve.sh": script}, tmp_path, "--engine-version", "vllm=0.33.0")
                if f["code"] == "MTP505"]
    assert len(findings) == 1 and "use `turboquant_4bit_nc`" in str(findings[0]["message"])


def test_bundled_examples_give_no_tuner_finding_its_own_numbers_contradict() -> None:
    """MTP301 only where the speed-up at the concurrency it names is below 1x; MTP203 never with no
    state line to capture; MTP201 never proposing FP8 for FP8 weights nor lowering one sequence."""
    import re

    root = Path(__file__).resolve().parent.parent
    code, out, err = run_cli(["check", "--output-format", "json", "--no-cache", "examples"], cwd=root)
    assert code in (0, 1), err
    findings = json.loads(out)
    seen = set()
    for finding in findings:
        message = str(finding["message"])
        if finding["code"] == "MTP301":
            match = re.search(r"([\d.]+)x at batch 1 but ([\d.]+)x at (\d+) sequences", message)
            assert match is not None, message
            assert float(match.group(2)) < 1 <= float(match.group(1)), message
        elif finding["code"] == "MTP203":
            assert int(message.split("at most ~", 1)[1].split()[0]) >= 1, message
        elif finding["code"] == "MTP201":
            assert not ("weights (FP8)" in message and "FP8 or 4-bit" in message), message
            assert not re.search(r" 1 -> 1 saves", message), message
        seen.add(finding["code"])
    assert {"MTP201", "MTP203"} <= seen  # the examples exercise the memory rules
