"""``docker run --env-file FILE`` in launch scripts: the container's environment comes from the file.

Docker's format (docker/cli ``opts/file.go`` ``parseKeyValueFile``; ``docker container run`` reference,
"Set environment variables"): one ``NAME=value`` per line, ``#`` comment lines and blank lines
skipped, the value verbatim (no quote removal, no interpolation), a bare ``NAME`` copied from the
docker client's environment. Every ``--env-file`` is read first, then the ``-e`` flags override it
(``opts/parse.go`` ``readKVStrings``), wherever they stand on the command line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mtplint.extract.dotenv import DockerEnvFileError, parse_docker_env_file
from mtplint.extract.launch import recognise
from mtplint.source import SourceFile, Token
from tests.conftest import inspect_json, run_cli

SERVE = """\
#!/usr/bin/env bash
# DeepSeek-V3 with MTP (NEXTN); the server's variables live in sglang.env
# mtplint: gpu=h200x8
set -euo pipefail
cd "$(dirname "$0")"

docker run --gpus all --shm-size 32g --ipc=host -p 30000:30000 \\
  -v "$HOME/.cache/huggingface:/root/.cache/huggingface" \\
  {flags} \\
  lmsysorg/sglang:v0.5.9 \\
  python -m sglang.launch_server \\
    --model-path deepseek-ai/DeepSeek-V3-0324 --tp 8 --trust-remote-code \\
    --speculative-algorithm NEXTN \\
    --speculative-num-steps 1 \\
    --speculative-eagle-topk 1 \\
    --speculative-num-draft-tokens 2 \\
    --host 0.0.0.0 --port 30000
"""

ENV_WITH_SPEC_V2 = """\
# sglang runtime settings (docker run --env-file: no quotes, no ${} expansion)
HF_TOKEN
NCCL_DEBUG=WARN

SGLANG_ENABLE_SPEC_V2=1
"""

ENV_WITHOUT_SPEC_V2 = """\
# sglang runtime settings
NCCL_DEBUG=WARN
SGLANG_LOG_LEVEL=info
"""


def _project(tmp_path: Path, flags: str, env_files: dict[str, str]) -> Path:
    (tmp_path / "serve.sh").write_text(SERVE.format(flags=flags), encoding="utf-8")
    for name, text in env_files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def _line_of(text: str) -> int:
    """1-based line of the only line of the script that contains ``text``."""
    (line,) = [number for number, content in enumerate(SERVE.splitlines(), 1) if text in content]
    return line


def _launch(tmp_path: Path) -> dict[str, Any]:
    result = inspect_json(["serve.sh"], tmp_path)
    (launch,) = result["launches"]
    assert launch["engine"] == "sglang" and launch["engine_version"] == "0.5.9"
    found: dict[str, Any] = launch
    return found


def _check(tmp_path: Path) -> list[dict[str, Any]]:
    code, out, err = run_cli(["check", "--output-format", "json", "serve.sh"], cwd=tmp_path)
    assert code in (0, 1), err
    findings: list[dict[str, Any]] = json.loads(out)
    return findings


def _codes(findings: list[dict[str, Any]]) -> list[str]:
    return sorted(finding["code"] for finding in findings)


# --- the file format -------------------------------------------------------------------------------

def test_docker_env_file_format_is_verbatim() -> None:
    text = (
        "\ufeff# comment\n"
        "   \n"
        "  NCCL_DEBUG=WARN\n"
        'QUOTED="1"\n'
        "SPACED= a b # not a comment \r\n"
        "REF=${HOME}/models\n"
        "EMPTY=\n"
        "  HF_TOKEN\n"
        "EQUALS=a=b\n"
    )
    source = SourceFile("sglang.env", "sglang.env", text.lstrip("\ufeff"))
    entries = parse_docker_env_file(source)
    assert [(name.value, None if value is None else value.value) for name, value in entries] == [
        ("NCCL_DEBUG", "WARN"),
        ("QUOTED", '"1"'),                # no quote removal
        ("SPACED", " a b # not a comment "),  # nothing trimmed but the line's \r\n
        ("REF", "${HOME}/models"),        # no interpolation
        ("EMPTY", ""),
        ("HF_TOKEN", None),               # copied from the docker client's environment
        ("EQUALS", "a=b"),
    ]
    name, value = entries[0]
    assert value is not None and value.span is not None and name.span is not None
    assert (name.span.line, name.span.column, value.span.column) == (3, 3, 14)


@pytest.mark.parametrize("line", ["SGLANG_ENABLE_SPEC_V2 = 1", "SGLANG_ENABLE_SPEC_V2 ", "=1"])
def test_lines_docker_refuses(line: str) -> None:
    source = SourceFile("sglang.env", "sglang.env", f"NCCL_DEBUG=WARN\n{line}\n")
    with pytest.raises(DockerEnvFileError, match="poorly formatted environment") as raised:
        parse_docker_env_file(source)
    assert raised.value.offset == len("NCCL_DEBUG=WARN\n")


def test_env_file_flag_in_both_spellings_is_recognised() -> None:
    words = ["docker", "run", "--env-file", "a.env", "--env-file=b.env", "-e", "X=1",
             "lmsysorg/sglang:v0.5.9", "python", "-m", "sglang.launch_server"]
    recognised = recognise([Token(word) for word in words])
    assert recognised is not None
    assert [token.value for token in recognised.docker_env_files] == ["a.env", "b.env"]
    assert [name for name, _ in recognised.docker_env] == ["X"]


# --- end to end: inspect and MTP103 ----------------------------------------------------------------

def test_env_file_setting_spec_v2_reaches_the_container(tmp_path: Path) -> None:
    _project(tmp_path, "--env-file ./sglang.env", {"sglang.env": ENV_WITH_SPEC_V2})
    launch = _launch(tmp_path)
    assert launch["env"] == {"HF_TOKEN": {"unresolved": "${HF_TOKEN}"}, "NCCL_DEBUG": "WARN",
                             "SGLANG_ENABLE_SPEC_V2": "1"}
    spec_v2 = launch["effective"]["spec_v2"]
    # the span points into the env file, at the value
    assert (spec_v2["value"], spec_v2["origin"], spec_v2["file"], spec_v2["line"], spec_v2["column"]) == \
        (True, "env", "sglang.env", 5, 1)
    assert "MTP103" not in _codes(_check(tmp_path))


def test_env_file_without_spec_v2_is_mtp103(tmp_path: Path) -> None:
    _project(tmp_path, "--env-file=sglang.env", {"sglang.env": ENV_WITHOUT_SPEC_V2})
    launch = _launch(tmp_path)
    assert launch["env"] == {"NCCL_DEBUG": "WARN", "SGLANG_LOG_LEVEL": "info"}
    assert launch["effective"]["spec_v2"]["value"] is False
    findings = _check(tmp_path)
    assert _codes(findings) == ["MTP103"]
    (finding,) = findings
    assert finding["filename"] == "serve.sh"
    assert finding["location"]["row"] == _line_of("--speculative-algorithm NEXTN")


def test_missing_env_file_leaves_the_environment_open(tmp_path: Path) -> None:
    """Not in the checkout (generated at deploy time, a secret): the variable may well be set there."""
    _project(tmp_path, "--env-file ./sglang.env", {})
    launch = _launch(tmp_path)
    spec_v2 = launch["effective"]["spec_v2"]
    assert spec_v2["value"] is None and spec_v2["unresolved"] == ["--env-file ./sglang.env"]
    assert spec_v2["default"] is False
    assert (spec_v2["line"], spec_v2["column"]) == (_line_of("{flags}"), 14)  # the path word
    assert any("--env-file ./sglang.env: file not found" in note for note in launch["notes"])
    findings = _check(tmp_path)
    assert _codes(findings) == ["MTP003"]
    assert "MTP103" in findings[0]["message"] and "--env-file ./sglang.env" in findings[0]["message"]


def test_env_file_docker_refuses_is_mtp001_and_open(tmp_path: Path) -> None:
    _project(tmp_path, "--env-file ./sglang.env", {"sglang.env": "NCCL_DEBUG=WARN\nSGLANG_ENABLE_SPEC_V2 = 1\n"})
    findings = _check(tmp_path)
    assert _codes(findings) == ["MTP001", "MTP003"]
    malformed = next(f for f in findings if f["code"] == "MTP001")
    assert (malformed["filename"], malformed["location"]) == ("sglang.env", {"row": 2, "column": 1})
    assert "contains whitespaces" in malformed["message"]


def test_e_flags_override_the_env_file_wherever_they_stand(tmp_path: Path) -> None:
    _project(tmp_path, "-e SGLANG_ENABLE_SPEC_V2=1 --env-file ./sglang.env",
             {"sglang.env": "SGLANG_ENABLE_SPEC_V2=0\nNCCL_DEBUG=WARN\n"})
    spec_v2 = _launch(tmp_path)["effective"]["spec_v2"]
    assert (spec_v2["value"], "file" in spec_v2, spec_v2["line"]) == (True, False, _line_of("{flags}"))
    assert "MTP103" not in _codes(_check(tmp_path))


def test_later_env_file_wins(tmp_path: Path) -> None:
    _project(tmp_path, "--env-file base.env --env-file ./prod.env",
             {"base.env": "SGLANG_ENABLE_SPEC_V2=1\n", "prod.env": "SGLANG_ENABLE_SPEC_V2=false\n"})
    spec_v2 = _launch(tmp_path)["effective"]["spec_v2"]
    assert (spec_v2["value"], spec_v2["file"]) == (False, "prod.env")


def test_bare_name_is_copied_from_the_docker_client(tmp_path: Path) -> None:
    _project(tmp_path, "--env-file ./sglang.env", {"sglang.env": "SGLANG_ENABLE_SPEC_V2\n"})
    script = tmp_path / "serve.sh"
    script.write_text(script.read_text().replace("set -euo pipefail\n", "set -euo pipefail\nexport SGLANG_ENABLE_SPEC_V2=1\n"))
    assert _launch(tmp_path)["env"]["SGLANG_ENABLE_SPEC_V2"] == "1"
    # without the export it is whatever the caller's environment holds: unresolved, no MTP103
    script.write_text(script.read_text().replace("export SGLANG_ENABLE_SPEC_V2=1\n", ""))
    launch = _launch(tmp_path)
    assert launch["env"]["SGLANG_ENABLE_SPEC_V2"] == {"unresolved": "${SGLANG_ENABLE_SPEC_V2}"}
    assert "MTP103" not in _codes(_check(tmp_path))


def test_env_file_path_set_at_run_time_leaves_the_environment_open(tmp_path: Path) -> None:
    _project(tmp_path, '--env-file "$ENV_FILE"', {"sglang.env": ENV_WITHOUT_SPEC_V2})
    launch = _launch(tmp_path)
    assert launch["effective"]["spec_v2"]["unresolved"] == ["--env-file $ENV_FILE"]
    assert "MTP103" not in _codes(_check(tmp_path))


def test_llama_server_with_missing_env_file_is_open_ended(tmp_path: Path) -> None:
    """llama-server reads every option from LLAMA_ARG_* too: an unread env file may add any of them."""
    (tmp_path / "serve.sh").write_text(
        "#!/bin/sh\n"
        "docker run --gpus all --env-file llama.env -p 8080:8080 -v /models:/models \\\n"
        "  ghcr.io/ggml-org/llama.cpp:server-cuda-b9180 -m /models/Qwen3.6-27B-Q4_K_M.gguf -ngl 99\n",
        encoding="utf-8")
    (launch,) = inspect_json(["serve.sh"], tmp_path)["launches"]
    assert launch["engine"] == "llama.cpp" and launch.get("open_ended") is True
    (tmp_path / "llama.env").write_text("LLAMA_ARG_N_PARALLEL=1\n", encoding="utf-8")
    (launch,) = inspect_json(["serve.sh"], tmp_path)["launches"]
    assert "open_ended" not in launch
    assert launch["options"]["n_parallel"] == 1
