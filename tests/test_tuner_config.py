"""Every command reads the configuration ``check`` reads: the same repository gives the same GPU, engine
versions and GPU catalog in ``check``, ``inspect``, ``recommend`` and ``crossover``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.test_user_catalog import PYPROJECT

#: a team's pyproject: its own 16 GB card (a GPU the shipped catalog lacks) and the vLLM it runs
TEAM_PYPROJECT = PYPROJECT.replace('select = ["MTP2"]\n', 'gpu = "rtx-4060-ti-16g"\nengine-versions = { vllm = "0.30.0" }\n')

SERVE = """\
#!/usr/bin/env bash
set -euo pipefail
vllm serve Qwen/Qwen3.6-27B-AWQ --max-num-seqs 64 --kv-cache-dtype fp8_bogus \\
  --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}'
"""


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(TEAM_PYPROJECT, encoding="utf-8")
    (tmp_path / "serve.sh").write_text(SERVE, encoding="utf-8")
    return tmp_path


def test_check_inspect_recommend_and_crossover_read_the_same_configuration(repository: Path) -> None:
    code, out, err = run_cli(["check", "--output-format", "json", "."], cwd=repository)
    assert code == 1, err
    messages = {finding["code"]: finding["message"] for finding in json.loads(out)}
    # check: the configured GPU (from the configured catalog) and the configured vLLM version
    assert "on the rtx-4060-ti-16g with 4-bit weights" in messages["MTP301"]
    assert "16380 MiB (rtx-4060-ti-16g)" in messages["MTP201"]
    assert "vLLM 0.30.0 accepts" in messages["MTP505"]

    code, out, err = run_cli(["inspect", "--format", "json", "."], cwd=repository)
    assert code == 0, err
    (launch,) = json.loads(out)["launches"]
    assert launch["effective"]["gpu"]["value"] == "rtx-4060-ti-16g"
    assert launch["engine_version"] == "0.30.0"

    code, out, err = run_cli(["recommend", "--engine", "vllm", "--model", "Qwen/Qwen3.6-27B-AWQ", "--tensor-parallel",
                              "2", "--format", "json"], cwd=repository)
    assert code == 0, err
    recommendation = json.loads(out)
    assert (recommendation["gpu"], recommendation["engine_version"]) == ("rtx-4060-ti-16g", "0.30.0")
    # the command is built for that version: 0.30-0.32 keep prefix caching with disable_eagle_block_drop
    assert recommendation["enable"] and '"disable_eagle_block_drop":true' in recommendation["command_line"]

    code, out, err = run_cli(["crossover", "--model", "Qwen/Qwen3.6-27B-AWQ", "--format", "json"], cwd=repository)
    assert code == 0, err
    assert json.loads(out)["gpu"] == "rtx-4060-ti-16g"


def test_the_configured_gpu_catalog_is_the_tuners_too(repository: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    for command in (["recommend", "--model", "Qwen/Qwen3.6-27B-AWQ"], ["crossover"]):
        # a GPU only the repository's configuration adds: known there, unknown elsewhere
        code, _, err = run_cli([*command, "--gpu", "rtx-4060-ti-16gx2"], cwd=repository)
        assert code == 0, err
        code, _, err = run_cli([*command, "--gpu", "rtx-4060-ti-16g"], cwd=elsewhere)
        assert code == 2 and "unknown GPU 'rtx-4060-ti-16g'" in err
        # and without --gpu nor a configured one, the error says where a GPU comes from
        code, _, err = run_cli(command, cwd=elsewhere)
        assert code == 2 and "no GPU: pass --gpu" in err


def test_the_command_line_wins_over_the_configuration(repository: Path) -> None:
    code, out, _ = run_cli(["recommend", "--gpu", "h100-sxm", "--engine", "vllm", "--engine-version", "0.33.0",
                            "--model", "Qwen/Qwen3.6-27B-FP8", "--format", "json"], cwd=repository)
    data = json.loads(out)
    assert code == 0 and (data["gpu"], data["engine_version"]) == ("h100-sxm", "0.33.0")
    code, out, _ = run_cli(["inspect", "--format", "json", "--gpu", "h100-sxm", "--engine-version", "vllm=0.33.0",
                            "."], cwd=repository)
    (launch,) = json.loads(out)["launches"]
    assert code == 0 and launch["effective"]["gpu"]["value"] == "h100-sxm" and launch["engine_version"] == "0.33.0"


def test_a_bad_configured_gpu_is_an_error_in_every_command(repository: Path) -> None:
    (repository / "pyproject.toml").write_text(TEAM_PYPROJECT.replace('gpu = "rtx-4060-ti-16g"', 'gpu = "rtx-4061"'),
                                               encoding="utf-8")
    for command in (["check", "."], ["inspect", "."], ["recommend"], ["crossover"]):
        code, _, err = run_cli(command, cwd=repository)
        assert code == 2 and "key `gpu`: unknown GPU 'rtx-4061'" in err, command
