"""Environment files a launch reads that are not in the checkout: compose ``env_file`` and systemd
``EnvironmentFile=`` (``/etc/default/...`` lives on the host). Their variables are unknown, not
absent: a setting read from a variable (SGLang's ``SGLANG_ENABLE_SPEC_V2``) is unresolved, so MTP103
gives way to MTP003 -- as for ``docker run --env-file`` (tests/test_docker_env_file.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli, write_files

SGLANG_ARGS = ("python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3-0324 --tp 8 "
               "--speculative-algorithm NEXTN --speculative-num-steps 3 --speculative-eagle-topk 1 "
               "--speculative-num-draft-tokens 4")

UNIT = f"""\
[Unit]
Description=SGLang with MTP
After=network-online.target

[Service]
EnvironmentFile={{env_file}}
ExecStart=/opt/sglang/bin/{SGLANG_ARGS}
Restart=on-failure

[Install]
WantedBy=multi-user.target
"""

COMPOSE = f"""\
services:
  sglang:
    image: lmsysorg/sglang:v0.5.9-cu129
    env_file: {{env_file}}
    command: >
      {SGLANG_ARGS}
"""


def codes(tmp_path: Path, *extra: str) -> list[tuple[str, str]]:
    code, out, err = run_cli(["check", "--isolated", "--output-format", "json", "--select", "MTP103,MTP003",
                              "--engine-version", "sglang=0.5.9", *extra, "."], cwd=tmp_path)
    assert code in (0, 1), err
    return sorted((f["code"], f["message"].split(" ", 3)[-1][:60]) for f in json.loads(out))


@pytest.mark.parametrize("kind", ["systemd", "compose"])
def test_an_env_file_outside_the_checkout_leaves_spec_v2_unknown(tmp_path: Path, kind: str) -> None:
    name, text, env_file = (("sglang.service", UNIT, "/etc/default/sglang") if kind == "systemd"
                            else ("compose.yaml", COMPOSE, "secrets.env"))
    write_files(tmp_path, {name: text.format(env_file=env_file)})
    code, out, err = run_cli(["check", "--isolated", "--output-format", "json", "--select", "MTP103,MTP003",
                              "--engine-version", "sglang=0.5.9", "."], cwd=tmp_path)
    assert code == 0, err  # an info finding does not fail the run
    [finding] = json.loads(out)
    assert finding["code"] == "MTP003"
    assert f"may be set in `{'EnvironmentFile=' if kind == 'systemd' else 'env_file '}" in finding["message"]
    assert "MTP103 did not check" in finding["message"]


@pytest.mark.parametrize("kind", ["systemd", "compose"])
def test_an_env_file_in_the_checkout_is_read(tmp_path: Path, kind: str) -> None:
    name, text = ("sglang.service", UNIT) if kind == "systemd" else ("compose.yaml", COMPOSE)
    write_files(tmp_path, {name: text.format(env_file="sglang.env"), "sglang.env": "HF_HOME=/models\n"})
    assert [code for code, _ in codes(tmp_path)] == ["MTP103"]  # read, and it does not set the variable
    write_files(tmp_path, {"sglang.env": "HF_HOME=/models\nSGLANG_ENABLE_SPEC_V2=1\n"})
    assert codes(tmp_path) == []


def test_a_unit_that_runs_a_container_passes_its_variables_only_through_e(tmp_path: Path) -> None:
    """The unit's environment is the docker client's: the container sees none of it without ``-e``."""
    unit = UNIT.format(env_file="/etc/default/sglang").replace(
        "ExecStart=/opt/sglang/bin/", "ExecStart=/usr/bin/docker run --rm --gpus all lmsysorg/sglang:v0.5.9 ")
    write_files(tmp_path, {"sglang.service": unit})
    assert [code for code, _ in codes(tmp_path)] == ["MTP103"]
