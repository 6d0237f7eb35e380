"""One launch, written in every source kind, means the same thing (issue 2, acceptance 3 and 4).

The same vLLM and SGLang command lines are written as a compose list, a compose folded string, a
Kubernetes ``args`` list, a Python ``subprocess`` list, a ``--config`` YAML and a systemd
``ExecStart``. ``mtplint inspect`` must give identical ``options`` for all of them, and every
explicit setting must point at the token that set it in the file it came from.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

SPEC = '{"method":"mtp","num_speculative_tokens":2}'

VLLM_ARGS = ["Qwen/Qwen3.6-27B", "--speculative-config", SPEC, "--max-num-seqs", "8",
             "--no-enable-prefix-caching", "--kv-cache-dtype", "fp8_e5m2", "--gpu-memory-utilization", "0.85",
             "--tensor-parallel-size", "2"]
VLLM_EXPECTED = {
    "model": "Qwen/Qwen3.6-27B",
    "speculative_config": {"method": "mtp", "num_speculative_tokens": 2},
    "max_num_seqs": 8,
    "enable_prefix_caching": False,
    "kv_cache_dtype": "fp8_e5m2",
    "gpu_memory_utilization": 0.85,
    "tensor_parallel_size": 2,
}
VLLM_CONFIG = """\
# vLLM serve config
model: Qwen/Qwen3.6-27B
speculative-config:
  method: mtp
  num_speculative_tokens: 2
max-num-seqs: 8
no-enable-prefix-caching: true
kv-cache-dtype: fp8_e5m2
gpu-memory-utilization: 0.85
tensor-parallel-size: 2
"""

SGLANG_ARGS = ["--model-path", "Qwen/Qwen3.6-27B", "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3",
               "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4", "--mem-fraction-static", "0.8",
               "--tp-size", "2"]
SGLANG_EXPECTED = {
    "model_path": "Qwen/Qwen3.6-27B",
    "speculative_algorithm": "NEXTN",
    "speculative_num_steps": 3,
    "speculative_eagle_topk": 1,
    "speculative_num_draft_tokens": 4,
    "mem_fraction_static": 0.8,
    "tp_size": 2,
}
SGLANG_CONFIG = """\
model-path: Qwen/Qwen3.6-27B
speculative-algorithm: NEXTN
speculative-num-steps: 3
speculative-eagle-topk: 1
speculative-num-draft-tokens: 4
mem-fraction-static: 0.8
tp-size: 2
"""


def _yaml_item(word: str) -> str:
    return "'" + word + "'" if word.startswith("{") else json.dumps(word) if word[0].isdigit() else word


def _shell_word(word: str) -> str:
    return "'" + word + "'" if any(c in word for c in '{}" ') else word


def _folded(words: list[str], indent: str) -> str:
    lines = []
    for index, word in enumerate(words):
        if word.startswith("--") and index + 1 < len(words) and not words[index + 1].startswith("--"):
            continue
        previous = words[index - 1] if index else None
        if previous is not None and previous.startswith("--") and not word.startswith("--"):
            lines.append(f"{indent}{previous} {_shell_word(word)}")
        else:
            lines.append(f"{indent}{_shell_word(word)}")
    return "\n".join(lines)


def forms(program: list[str], image: str, args: list[str], config: str,
          image_runs_program: bool) -> dict[str, tuple[dict[str, str], str]]:
    """Files (name -> text) and the file to inspect, for each way of writing the launch.

    ``image_runs_program``: the image's entrypoint is ``program``, so compose gives only the arguments.
    """
    full = [*program, *args]
    container_command = args if image_runs_program else full
    command_list = "\n".join(f"      - {_yaml_item(w)}" for w in container_command)
    k8s_args = "\n".join(f"            - {_yaml_item(w)}" for w in args)
    py_list = ",\n        ".join(json.dumps(w) for w in full)
    systemd_line = " \\\n    ".join(_shell_word(w) for w in full)
    k8s_command = json.dumps(program)
    return {
        "compose-list": ({"compose.yaml": f"services:\n  llm:\n    image: {image}\n    command:\n{command_list}\n"},
                         "compose.yaml"),
        "compose-folded": ({"compose.yaml": f"services:\n  llm:\n    image: {image}\n    command: >\n"
                                            f"{_folded(container_command, '      ')}\n"}, "compose.yaml"),
        "k8s-args": ({"deploy.yaml": f"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
spec:
  template:
    spec:
      containers:
        - name: server
          image: {image}
          command: {k8s_command}
          args:
{k8s_args}
          resources:
            limits:
              nvidia.com/gpu: 2
"""}, "deploy.yaml"),
        "python-subprocess": ({"launch.py": f"""\
import os
import subprocess

proc = subprocess.Popen(
    [
        {py_list},
    ],
    env={{**os.environ, "HF_HOME": "/models"}},
)
proc.wait()
"""}, "launch.py"),
        "config-yaml": ({"serve.sh": "#!/bin/sh\nexec " + " ".join(program) + " --config server.yaml\n",
                         "server.yaml": config}, "serve.sh"),
        "systemd": ({"llm.service": f"""\
[Unit]
Description=LLM server

[Service]
Environment=HF_HOME=/models
ExecStart={systemd_line}
Restart=always

[Install]
WantedBy=multi-user.target
"""}, "llm.service"),
    }


VLLM_FORMS = forms(["vllm", "serve"], "vllm/vllm-openai:v0.33.0", VLLM_ARGS, VLLM_CONFIG, image_runs_program=True)
SGLANG_FORMS = forms(["python3", "-m", "sglang.launch_server"], "lmsysorg/sglang:v0.5.23", SGLANG_ARGS, SGLANG_CONFIG,
                     image_runs_program=False)


def _only_launch(data: dict[str, Any]) -> dict[str, Any]:
    assert len(data["launches"]) == 1, data
    launch: dict[str, Any] = data["launches"][0]
    return launch


@pytest.mark.parametrize("form", sorted(VLLM_FORMS))
def test_vllm_launch_gives_the_same_options_in_every_source_kind(form: str, inspect: Callable[..., Any]) -> None:
    files, target = VLLM_FORMS[form]
    launch = _only_launch(inspect(files, target, extra=["--engine-version", "vllm=0.33.0"]))
    assert launch["engine"] == "vllm"
    assert launch["cli_errors"] == []
    assert launch["options"] == VLLM_EXPECTED  # the whole dict: no form adds or loses an option
    assert launch["effective"]["spec_method"]["value"] == "mtp"
    assert launch["effective"]["spec_tokens"]["value"] == 2


@pytest.mark.parametrize("form", sorted(SGLANG_FORMS))
def test_sglang_launch_gives_the_same_options_in_every_source_kind(form: str, inspect: Callable[..., Any]) -> None:
    files, target = SGLANG_FORMS[form]
    launch = _only_launch(inspect(files, target, extra=["--engine-version", "sglang=0.5.23"]))
    assert launch["engine"] == "sglang"
    assert launch["cli_errors"] == []
    assert launch["options"] == SGLANG_EXPECTED


# what each explicit setting's position must show in the file: the flag, its value or the config key
SETTING_TOKENS = {
    "spec_method": ("--speculative-config", SPEC, "'" + SPEC, "method", "mtp", "--speculative-algorithm", "NEXTN",
                    "speculative-algorithm", "speculative-config"),
    "spec_tokens": ("--speculative-config", SPEC, "'" + SPEC, "num_speculative_tokens", "2", "3",
                    "--speculative-num-steps", "speculative-num-steps", "speculative-config"),
    "max_concurrency": ("--max-num-seqs", "8", "max-num-seqs"),
    "kv_cache_dtype": ("--kv-cache-dtype", "fp8_e5m2", "kv-cache-dtype"),
    "memory_fraction": ("--gpu-memory-utilization", "0.85", "--mem-fraction-static", "0.8", "gpu-memory-utilization",
                        "mem-fraction-static"),
    "tensor_parallel": ("--tensor-parallel-size", "2", "--tp-size", "tensor-parallel-size", "tp-size"),
    "prefix_caching": ("--no-enable-prefix-caching", "no-enable-prefix-caching"),
    "model": ("Qwen/Qwen3.6-27B", "--model-path", "model"),
}


@pytest.mark.parametrize(("engine", "form"), [("vllm", f) for f in sorted(VLLM_FORMS)] + [("sglang", f) for f in sorted(SGLANG_FORMS)])
def test_explicit_settings_point_at_their_token(engine: str, form: str, inspect: Callable[..., Any], tmp_path: Path) -> None:
    files, target = (VLLM_FORMS if engine == "vllm" else SGLANG_FORMS)[form]
    version = "vllm=0.33.0" if engine == "vllm" else "sglang=0.5.23"
    launch = _only_launch(inspect(files, target, extra=["--engine-version", version]))
    checked = 0
    for name, setting in launch["effective"].items():
        if setting["origin"] not in ("explicit", "config-file") or name not in SETTING_TOKENS:
            continue
        path = tmp_path / setting.get("file", launch["file"])
        line = path.read_text().splitlines()[setting["line"] - 1]
        # a Python string literal shows JSON quotes escaped
        at = line[setting["column"] - 1:].lstrip("\"' ").replace('\\"', '"')
        assert at.startswith(SETTING_TOKENS[name]) or any(at.startswith(t.strip("'")) for t in SETTING_TOKENS[name]), (
            f"{form}: {name} points at {setting['line']}:{setting['column']}: {line!r}"
        )
        checked += 1
    assert checked >= 5
