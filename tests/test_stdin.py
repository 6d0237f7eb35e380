"""Standard input as a file: ``--stdin-filename PATH`` for a file not saved yet, and ``-``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mtplint.stdin import kind_of_text
from tests.conftest import write_files

COMPOSE = """\
# mtplint: gpu=rtx-5090
services:
  vllm:
    image: vllm/vllm-openai:v0.32.0
    environment:
      VLLM_USE_V1: "1"
    command: >  # noqa: MTP203
      Qwen/Qwen3.6-27B-FP8
      --max-model-len 65536
      --kv-cache-dtype turboquant_4bit_nc
      --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}'
      --max-num-seqs 16
"""

#: the project's configuration, found from a buffer's (missing) folder as from the saved file's
CONFIG = 'ignore = ["MTP405"]\n'

SCRIPT = """\
set -euo pipefail
MODEL="${MODEL:-Qwen/Qwen3.6-35B-A3B}"
exec vllm serve "$MODEL" \\
  --speculative-config '{"method":"mtp","num_speculative_tokens":2}' \\
  --kv-cache-dtype turboquant_4bit_nc \\
  --port 8000
"""


def _check(cwd: Path, *args: str, stdin: str | None = None) -> list[tuple[str, int, int, str]]:
    run = subprocess.run([sys.executable, "-m", "mtplint", "check", "--output-format", "json", *args],
                         cwd=cwd, input=stdin, capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert run.returncode in (0, 1), run.stderr
    return [(item["code"], item["location"]["row"], item["location"]["column"], item["message"])
            for item in json.loads(run.stdout)]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_files(tmp_path / "project", {"mtplint.toml": CONFIG, "deploy/compose.yaml": COMPOSE,
                                               "serve": "#!/usr/bin/env bash\n" + SCRIPT})


def test_an_unsaved_buffer_and_standard_input_find_what_the_saved_file_does(project: Path) -> None:
    saved = _check(project, "deploy/compose.yaml")
    codes = {code for code, *_ in saved}
    # the configuration's ignore and the noqa comment hold; the rest is found
    assert {"MTP101", "MTP102"} <= codes and not codes & {"MTP405", "MTP203"}
    assert _check(project, "--stdin-filename", "new/dir/compose.yaml", stdin=COMPOSE) == saved
    assert _check(project, "-", stdin=COMPOSE) == saved
    assert _check(project, "--stdin-filename", "new/compose.yaml", "-", stdin=COMPOSE) == saved


def test_a_nameless_script_on_standard_input_is_read_as_shell(project: Path) -> None:
    saved = _check(project, "serve")
    assert {code for code, *_ in saved} >= {"MTP101"}
    assert _check(project, "-", stdin=SCRIPT) == [(code, row - 1, column, message)
                                                 for code, row, column, message in saved]


def test_the_missing_folders_configuration_is_the_nearest_existing_ones(project: Path) -> None:
    write_files(project / "team", {"mtplint.toml": 'ignore = ["MTP101"]\n'})
    codes = {code for code, *_ in _check(project, "--stdin-filename", "team/not/yet/compose.yaml", stdin=COMPOSE)}
    assert "MTP101" not in codes and "MTP405" in codes and "MTP102" in codes


def test_dash_with_other_paths_is_a_usage_error(project: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "mtplint", "check", "-", "deploy/compose.yaml"], cwd=project,
                         input=COMPOSE, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "cannot be combined with other paths" in run.stderr


@pytest.mark.parametrize(("text", "kind"), [
    (COMPOSE, "yaml"),
    ("apiVersion: apps/v1\nkind: Deployment\n", "yaml"),
    ("---\n- name: x\n", "yaml"),
    (SCRIPT, "shell"),
    ("#!/usr/bin/env python3\nprint(1)\n", "python"),
    ("from vllm import LLM\nllm = LLM(model='x')\n", "python"),
    ("# syntax=docker/dockerfile:1\nFROM vllm/vllm-openai:v0.32.0\nCMD [\"--model\", \"x\"]\n", "dockerfile"),
    ("[Unit]\nDescription=vLLM\n[Service]\nExecStart=/usr/bin/vllm serve x\n", "systemd"),
    ("[qwen]\nmodel = x.gguf\n", "ini"),
    ("vllm serve Qwen/Qwen3.6-27B --port 8000\n", "shell"),
])
def test_a_nameless_texts_kind(text: str, kind: str) -> None:
    assert kind_of_text(text) == kind


def test_standard_input_that_is_not_text_is_mtp001_not_a_crash(project: Path) -> None:
    for args in (["-"], ["--stdin-filename", "new/compose.yaml"]):
        run = subprocess.run([sys.executable, "-m", "mtplint", "check", "--output-format", "json", *args],
                             cwd=project, input=b"\xff\xfe\x00\xd8binary\x80", capture_output=True, timeout=60,
                             env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
        assert run.returncode == 1 and b"Traceback" not in run.stderr, run.stderr
        (finding,) = json.loads(run.stdout)
        assert finding["code"] == "MTP001" and "not valid text" in finding["message"]


def test_a_utf16_buffer_reads_as_the_saved_utf8_file(project: Path) -> None:
    saved = _check(project, "deploy/compose.yaml")
    run = subprocess.run([sys.executable, "-m", "mtplint", "check", "--output-format", "json", "-"], cwd=project,
                         input=COMPOSE.encode("utf-16"), capture_output=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert [(item["code"], item["location"]["row"], item["location"]["column"], item["message"])
            for item in json.loads(run.stdout)] == saved


def test_a_buffer_named_like_a_template_is_read_as_the_saved_file_is(project: Path) -> None:
    # a file named explicitly is classified through its template suffix and its content; the buffer of
    # one not saved yet (beside it) the same way
    write_files(project, {"deploy/vllm.compose.yaml.tpl": COMPOSE, "bin/run-server": SCRIPT})
    for name, text in (("deploy/vllm.compose.yaml.tpl", COMPOSE), ("bin/run-server", SCRIPT)):
        saved = _check(project, name)
        assert saved and any(code == "MTP101" for code, *_ in saved)
        unsaved = name.replace("vllm.", "new.").replace("run-server", "run-new")
        assert _check(project, "--stdin-filename", unsaved, stdin=text) == saved
