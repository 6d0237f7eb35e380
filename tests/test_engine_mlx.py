"""vllm-mlx and mlx-lm engine models (argparse tables generated from their sources)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mtplint.engines import engine_for

Inspect = Callable[..., dict[str, Any]]


def only_launch(inspect: Inspect, script: str) -> dict[str, Any]:
    (launch,) = inspect({"serve.sh": script}, "serve.sh")["launches"]
    return launch


def test_engines_are_registered() -> None:
    assert engine_for("vllm-mlx").known_versions() == ["0.6.0"]
    assert engine_for("mlx-lm").known_versions() == ["0.32.2"]


def test_vllm_mlx_mtp_depth_is_always_one(inspect: Inspect) -> None:
    script = (
        "#!/bin/bash\n"
        "vllm-mlx serve mlx-community/Qwen3-Next-80B-A3B-Instruct-6bit \\\n"
        "  --enable-mtp --mtp-num-draft-tokens 3 \\\n"
        "  --continuous-batching --max-num-seqs 16 --port 8000\n"
    )
    launch = only_launch(inspect, script)
    assert launch["engine"] == "vllm-mlx" and launch["cli_errors"] == []
    effective = launch["effective"]
    assert effective["model"]["value"] == "mlx-community/Qwen3-Next-80B-A3B-Instruct-6bit"
    assert (effective["model"]["line"], effective["model"]["column"]) == (2, 16)
    assert effective["spec_method"]["value"] == "mtp"
    assert (effective["spec_method"]["line"], effective["spec_method"]["column"]) == (3, 3)
    assert effective["spec_tokens"] == {"value": 1, "origin": "inferred", "requested": 3, "line": 3, "column": 39}
    assert effective["max_concurrency"]["value"] == 16
    assert effective["max_concurrency"]["continuous_batching"] is True


def test_vllm_mlx_ambiguous_mtp_prefix(inspect: Inspect) -> None:
    launch = only_launch(inspect, "vllm-mlx serve mlx-community/Qwen3-Next-80B-A3B-Instruct-4bit --mtp\n")
    (error,) = launch["cli_errors"]
    assert error["message"] == "ambiguous option: --mtp could match --mtp-num-draft-tokens, --mtp-optimistic"
    assert error["kind"] == "ambiguous"
    assert (error["line"], error["column"]) == (1, 63)


def test_vllm_mlx_unique_prefix_and_optimistic_without_batching(inspect: Inspect) -> None:
    launch = only_launch(inspect, "vllm-mlx serve m --enable-mtp --mtp-num 2 --mtp-opt\n")
    assert launch["cli_errors"] == []
    assert launch["options"]["mtp_num_draft_tokens"] == 2
    method = launch["effective"]["spec_method"]
    assert method["optimistic"] is True and method["optimistic_effective"] is False
    assert launch["effective"]["spec_tokens"]["requested"] == 2


def test_vllm_mlx_without_mtp_and_bad_values(inspect: Inspect) -> None:
    launch = only_launch(inspect, "vllm-mlx serve m --kv-cache-quantization --kv-cache-quantization-bits 4\n")
    assert launch["effective"]["spec_method"]["value"] is None
    assert launch["effective"]["kv_cache_dtype"]["value"] == "q4"
    bad = only_launch(inspect, "vllm-mlx serve m --max-num-seqs many\n")
    assert bad["cli_errors"][0]["message"] == "argument --max-num-seqs: invalid int value: 'many'"
    unknown = only_launch(inspect, "vllm-mlx serve m --speculative-config '{}'\n")
    assert unknown["cli_errors"][0]["message"] == "unrecognized arguments: --speculative-config {}"


def test_mlx_lm_draft_model(inspect: Inspect) -> None:
    script = ("python -m mlx_lm.server --model mlx-community/Qwen3-8B-4bit \\\n"
              "    --draft-model mlx-community/Qwen3-0.6B-4bit --num-draft-tokens 4\n")
    launch = only_launch(inspect, script)
    assert launch["engine"] == "mlx-lm" and launch["cli_errors"] == []
    effective = launch["effective"]
    assert effective["spec_method"]["value"] == "draft_model"
    assert (effective["spec_method"]["line"], effective["spec_method"]["column"]) == (2, 19)
    assert effective["spec_model"]["value"] == "mlx-community/Qwen3-0.6B-4bit"
    assert effective["spec_tokens"]["value"] == 4
    assert effective["max_concurrency"]["value"] == 1


def test_mlx_lm_defaults(inspect: Inspect) -> None:
    launch = only_launch(inspect, "mlx_lm.server --model m --draft-model d\n")
    assert launch["effective"]["spec_tokens"] == {"value": 3, "origin": "default"}
    plain = only_launch(inspect, "mlx_lm.server --model m --decode-concurrency 8\n")
    assert plain["effective"]["spec_method"]["value"] is None
    assert plain["effective"]["max_concurrency"]["value"] == 8


def test_unresolved_value_passes_type_checks(inspect: Inspect) -> None:
    launch = only_launch(inspect, 'vllm-mlx serve "$MODEL" --enable-mtp --max-num-seqs "$SEQS"\n')
    assert launch["cli_errors"] == []
    assert launch["effective"]["max_concurrency"]["unresolved"]
    assert launch["effective"]["model"]["unresolved"]
