"""``mtplint recommend`` and ``mtplint crossover``: text, JSON, the SVG plot, usage errors."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.conftest import run_cli

SVG = "{http://www.w3.org/2000/svg}"


def test_recommend_text_names_k_gain_memory_and_command() -> None:
    code, out, err = run_cli(["recommend", "--gpu", "rtx-4090", "--model", "unsloth/Qwen3.6-27B-MTP-GGUF:Q4_K_M",
                              "--use-case", "single-user", "--objective", "latency", "--engine", "llama.cpp"])
    assert code == 0, err
    assert out.startswith("MTP: enable, k=3  (unsloth/Qwen3.6-27B-MTP-GGUF:Q4_K_M on rtx-4090, llama.cpp b10470")
    assert "speed-up at batch 1: k=1 1.53x, k=2 1.76x, k=3 1.80x" in out
    assert "crossover (k=3): batch 4" in out
    assert "memory (GiB): weights (GGUF Q4_K_M) 15.4" in out
    assert "    llama-server \\\n      -hf unsloth/Qwen3.6-27B-MTP-GGUF:Q4_K_M \\\n      --spec-type draft-mtp" in out


def test_recommend_json_for_a_disabled_deployment() -> None:
    code, out, err = run_cli(["recommend", "--gpu", "h100-sxm", "--model", "Qwen/Qwen3.6-27B-FP8", "--use-case",
                              "multi-user", "--objective", "throughput", "--concurrency", "256", "--format", "json"])
    assert code == 0, err
    data = json.loads(out)
    assert data["enable"] is False and data["refused"] is False and data["batch"] == 256
    assert data["crossover"]["batch"] < 256 and "past the crossover" in data["reason"]
    assert data["command"][:3] == ["vllm", "serve", "Qwen/Qwen3.6-27B-FP8"]
    assert "--speculative-config" not in data["command"]


def test_recommend_refusal_in_json_carries_the_references() -> None:
    code, out, _ = run_cli(["recommend", "--gpu", "h100-sxm", "--model", "Qwen/Qwen3.6-27B", "--kv-cache-dtype",
                            "turboquant_k8v4", "--format", "json"])
    data = json.loads(out)
    assert code == 0 and data["refused"] and "https://github.com/vllm-project/vllm/issues/40831" in data["references"]


def test_recommend_says_when_the_command_does_not_fit_either() -> None:
    """BF16 27B on one 24 GB card: refused, and the plain command is labelled as not fitting, not offered."""
    argv = ["recommend", "--gpu", "rtx-4090", "--model", "Qwen/Qwen3.6-27B", "--engine", "vllm"]
    code, out, _ = run_cli(argv)
    assert code == 0 and out.startswith("MTP: refused")
    assert "  command (as asked for; it does not fit this GPU either):\n    vllm serve Qwen/Qwen3.6-27B" in out
    code, out, _ = run_cli([*argv, "--format", "json"])
    assert code == 0 and json.loads(out)["fits"] is False
    code, out, _ = run_cli(["recommend", "--gpu", "h100-sxm", "--model", "Qwen/Qwen3.6-27B", "--engine", "vllm"])
    assert "\n  command:\n" in out and json.loads(run_cli([*argv[:2], "h100-sxm", *argv[3:], "--format", "json"])[1])["fits"]


def test_unknown_gpu_or_model_exits_2() -> None:
    code, _, err = run_cli(["recommend", "--gpu", "rtx-4091", "--model", "Qwen/Qwen3.6-27B"])
    assert code == 2 and "unknown GPU 'rtx-4091'; did you mean rtx-4090" in err
    code, _, err = run_cli(["crossover", "--gpu", "rtx-3090", "--model", "acme/thing-7b"])
    assert code == 2 and "unknown model 'acme/thing-7b'" in err
    code, _, err = run_cli(["crossover", "--gpu", "rtx-3090", "--weights", "q9_z"])
    assert code == 2 and "unknown weight format" in err


def test_crossover_notes_weights_that_do_not_fit() -> None:
    """BF16 35B-A3B (~66 GiB) on one 24 GB card: the table is shown, with a note that it cannot start."""
    argv = ["crossover", "--gpu", "rtx-3090", "--model", "Qwen/Qwen3.6-35B-A3B"]
    code, out, _ = run_cli(argv)
    assert code == 0
    assert out.splitlines()[-1].startswith("note: the BF16 weights (~66 GiB) do not fit rtx-3090 (22 GiB")
    assert json.loads(run_cli([*argv, "--format", "json"])[1])["weights_fit"] is False
    code, out, _ = run_cli([*argv, "--weights", "Q4_K_M"])
    assert code == 0 and "do not fit" not in out
    assert json.loads(run_cli([*argv, "--weights", "Q4_K_M", "--format", "json"])[1])["weights_fit"] is True


def test_crossover_table_rows_per_engine_and_k() -> None:
    code, out, err = run_cli(["crossover", "--gpu", "rtx-3090", "--model", "Qwen/Qwen3.6-35B-A3B", "--weights",
                              "Q4_K_M"])
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("MTP speed-up by batch size: Qwen/Qwen3.6-35B-A3B on rtx-3090, GGUF Q4_K_M weights")
    assert lines[1].split() == ["engine", "k", "loses", "at", "b=1", "b=2", "b=4", "b=8", "b=16", "b=32", "b=64",
                                "b=128", "b=256"]
    rows = [line.split() for line in lines[2:8]]
    header = lines[1]
    assert lines[8].startswith("loses at: the batch sizes where MTP is below 1x")
    assert [(row[0], row[1]) for row in rows] == [("vllm", "1"), ("vllm", "2"), ("vllm", "3"),
                                                  ("llama.cpp", "1"), ("llama.cpp", "2"), ("llama.cpp", "3")]
    # llama.cpp on a consumer GPU with a GGUF crosses over at single-digit batches (seed: 4-8): it loses
    # from one batch past the crossover; the cell lines up under its header
    column = header.index("loses at")
    cells = [line[column:].split()[0] for line in lines[3 + 2:8]]
    assert all(2 <= int(cell.split(",")[0].split("-")[0].rstrip("+")) <= 9 for cell in cells), cells


def test_crossover_json_and_one_engine() -> None:
    code, out, _ = run_cli(["crossover", "--gpu", "rtx-4090", "--engine", "vllm", "--weights", "4-bit",
                            "--max-k", "2", "--format", "json"])
    data = json.loads(out)
    assert code == 0 and [row["k"] for row in data["rows"]] == [1, 2]
    assert data["weights"] == "4-bit" and set(data["rows"][0]["speedup"]) >= {"1", "8", "256"}


def test_crossover_plot_is_well_formed_svg_with_a_polyline_per_k(tmp_path: Path) -> None:
    target = tmp_path / "crossover.svg"
    code, out, err = run_cli(["crossover", "--gpu", "rtx-3090", "--model", "Qwen/Qwen3.6-27B", "--engine",
                              "llama.cpp", "--weights", "Q4_K_M", "--plot", str(target)])
    assert code == 0, err
    assert f"wrote {target}" in out
    root = ET.parse(target).getroot()
    assert root.tag == f"{SVG}svg"
    curves = root.findall(f".//{SVG}polyline")
    assert [curve.get("data-k") for curve in curves] == ["1", "2", "3"]
    assert all(len((curve.get("points") or "").split()) == 512 for curve in curves)
    break_even = root.find(f".//{SVG}line[@class='break-even']")
    assert break_even is not None
    assert "Qwen/Qwen3.6-27B on rtx-3090" in (root.findtext(f"{SVG}title") or "")
    # the curves say what the table says: a gain at batch 1 (above the 1.0x line, smaller y), a loss at 512
    one = float(break_even.get("y1") or 0)
    for curve in curves:
        points = [tuple(map(float, point.split(","))) for point in (curve.get("points") or "").split()]
        assert points[0][1] < one < points[-1][1]
        assert [x for x, _ in points] == sorted(x for x, _ in points)


def test_crossover_plot_legend_fits_inside_the_image(tmp_path: Path) -> None:
    # the longest labels ("llama.cpp k=3 (loses at 127+)") were cut at the right edge of a fixed 720 px canvas
    target = tmp_path / "crossover.svg"
    code, _, err = run_cli(["crossover", "--gpu", "h100-sxm", "--model", "Qwen/Qwen3.6-27B", "--plot", str(target)])
    assert code == 0, err
    root = ET.parse(target).getroot()
    width = float(root.get("width") or 0)
    assert root.get("viewBox") == f"0 0 {width:g} {root.get('height')}"
    labels = root.findall(f".//{SVG}g[@class='legend']/{SVG}text")
    assert len(labels) == 6 and any(label.text == "llama.cpp k=3 (loses at 8+)" for label in labels)
    for label in labels:
        # 7.5 px per character bounds a 12 px sans-serif face (DejaVu Sans averages ~7 px on these labels)
        assert float(label.get("x") or 0) + 7.5 * len(label.text or "") <= width
