"""A ``--config`` file mtplint cannot read (not in the checkout: a ConfigMap, a file copied at deploy
time; or a path known only at run time) may set any option the command line does not give.

The effective settings it may set are unknown -- ``value`` null, ``unresolved`` naming the file, the
engine's default kept under ``default`` -- never the engine default shown as the answer (PRODUCT.md
stage 2: "What cannot be resolved stays marked unresolved -- never guessed"). What the command line
sets stays known: both engines apply the command line over the file. Rules that would have rested on
such a default skip the launch, and one MTP003 info names them (RULES.md MTP003).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import inspect_json, run_cli

VLLM_COMPOSE = """\
services:
  qwen:
    image: vllm/vllm-openai:v0.11.0
    # mtplint: gpu=h100-sxm
    volumes:
      - qwen-config:/configs
    command: >
      --config /configs/qwen.yaml
      --speculative-config '{{"method": "mtp", "num_speculative_tokens": 2}}'
      {extra}
volumes:
  qwen-config:
"""

SGLANG_SCRIPT = """\
#!/bin/bash
# mtplint: gpu=h200x8
python3 -m sglang.launch_server {config} \\
  --model-path {model} --tp 8 \\
  --speculative-algorithm NEXTN --speculative-num-steps 3 \\
  --host 0.0.0.0 --port 30000
"""


def _write(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")


def _only_launch(tmp_path: Path, name: str, extra: list[str] | None = None) -> dict[str, Any]:
    (launch,) = inspect_json([name], tmp_path, extra)["launches"]
    found: dict[str, Any] = launch
    return found


def _findings(tmp_path: Path, name: str, extra: list[str] | None = None) -> list[dict[str, Any]]:
    code, out, err = run_cli(["check", "--output-format", "json", *(extra or []), name], cwd=tmp_path)
    assert code in (0, 1), err
    findings: list[dict[str, Any]] = json.loads(out)
    return findings


def test_vllm_model_is_unknown_not_the_parser_default(tmp_path: Path) -> None:
    _write(tmp_path, "compose.yaml", VLLM_COMPOSE.format(extra=""))
    launch = _only_launch(tmp_path, "compose.yaml")
    assert launch["open_ended"] is True
    model = launch["effective"]["model"]
    assert model["value"] is None and model["unresolved"] == ["--config /configs/qwen.yaml"]
    assert (model["origin"], model["default"]) == ("config-file", "Qwen/Qwen3-0.6B")
    assert (model["line"], model["column"]) == (8, 16)  # the path, where the options would come from
    for name in ("prefix_caching", "kv_cache_dtype", "max_concurrency", "memory_fraction", "tensor_parallel"):
        assert launch["effective"][name]["value"] is None, name
        assert launch["effective"][name]["unresolved"] == ["--config /configs/qwen.yaml"], name
    # the command line's own settings stay known: vLLM applies them over the file
    assert (launch["effective"]["spec_method"]["value"], launch["effective"]["spec_method"]["origin"]) == ("mtp", "explicit")
    assert launch["effective"]["spec_tokens"]["value"] == 2
    assert launch["effective"]["gpu"]["value"] == "h100-sxm"


def test_vllm_explicit_flag_stays_known_next_to_an_unread_config(tmp_path: Path) -> None:
    _write(tmp_path, "compose.yaml", VLLM_COMPOSE.format(extra="--no-enable-prefix-caching"))
    prefix = _only_launch(tmp_path, "compose.yaml")["effective"]["prefix_caching"]
    assert (prefix["value"], prefix["origin"], "unresolved" in prefix) == (False, "explicit", False)


def test_vllm_no_finding_from_a_default_the_config_may_override(tmp_path: Path) -> None:
    """MTP102 used to fire on prefix caching "on by default" although the unread file may say
    ``no-enable-prefix-caching: true``; now one MTP003 says which rules skipped the launch, and why."""
    _write(tmp_path, "compose.yaml", VLLM_COMPOSE.format(extra=""))
    findings = _findings(tmp_path, "compose.yaml")
    assert [f["code"] for f in findings] == ["MTP003"]
    message = findings[0]["message"]
    assert "`--config /configs/qwen.yaml`" in message and "cannot read" in message
    assert "MTP102" in message and "`prefix_caching`" in message and "`model`" in message
    assert findings[0]["location"] == {"row": 8, "column": 16}
    # the same launch without --config: the default is real, and MTP102 fires on it
    _write(tmp_path, "compose.yaml", VLLM_COMPOSE.format(extra="").replace("--config /configs/qwen.yaml\n", "Qwen/Qwen3-8B\n"))
    assert "MTP102" in [f["code"] for f in _findings(tmp_path, "compose.yaml")]


def test_vllm_config_path_known_only_at_run_time(tmp_path: Path) -> None:
    _write(tmp_path, "serve.sh", "#!/bin/bash\nexec vllm serve --config \"$VLLM_CONFIG\" "
                                 "--speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":2}'\n")
    launch = _only_launch(tmp_path, "serve.sh")
    assert launch["effective"]["model"]["unresolved"] == ["--config $VLLM_CONFIG"]
    assert "MTP102" not in [f["code"] for f in _findings(tmp_path, "serve.sh")]


def test_sglang_missing_config_skips_mtp103_with_mtp003(tmp_path: Path) -> None:
    """The file may set ``speculative-eagle-topk: 4`` or ``disable-overlap-schedule: true``: MTP103
    cannot know. SGLANG_ENABLE_SPEC_V2 itself is read from the environment only, so ``spec_v2`` stays."""
    _write(tmp_path, "serve.sh", SGLANG_SCRIPT.format(config="--config sglang.yaml",
                                                      model="deepseek-ai/DeepSeek-V3-0324"))
    extra = ["--engine-version", "sglang=0.5.9"]
    launch = _only_launch(tmp_path, "serve.sh", extra)
    effective = launch["effective"]
    assert effective["spec_topk"]["value"] is None and effective["spec_topk"]["unresolved"] == ["--config sglang.yaml"]
    assert (effective["model"]["value"], effective["model"]["origin"]) == ("deepseek-ai/DeepSeek-V3-0324", "explicit")
    assert (effective["spec_v2"]["value"], effective["spec_v2"]["origin"]) == (False, "default")
    findings = _findings(tmp_path, "serve.sh", extra)
    assert [f["code"] for f in findings] == ["MTP003"]
    assert "MTP103" in findings[0]["message"] and "`spec_topk`" in findings[0]["message"]
    # readable and silent about top-k: MTP103 fires as before
    _write(tmp_path, "sglang.yaml", "mem-fraction-static: 0.8\ncuda-graph-max-bs: 64\n")
    assert [f["code"] for f in _findings(tmp_path, "serve.sh", extra)] == ["MTP103"]


def test_sglang_hybrid_missing_config_no_mtp111_guess(tmp_path: Path) -> None:
    """The file may set ``mamba-scheduler-strategy: extra_buffer`` or ``disable-radix-cache: true``."""
    extra = ["--engine-version", "sglang=0.5.9"]
    _write(tmp_path, "serve.sh", SGLANG_SCRIPT.format(config="", model="Qwen/Qwen3.6-35B-A3B"))
    assert "MTP111" in [f["code"] for f in _findings(tmp_path, "serve.sh", extra)]
    _write(tmp_path, "serve.sh", SGLANG_SCRIPT.format(config="--config /etc/sglang/qwen.yaml",
                                                      model="Qwen/Qwen3.6-35B-A3B"))
    findings = _findings(tmp_path, "serve.sh", extra)
    assert [f["code"] for f in findings] == ["MTP003"]
    assert "MTP111" in findings[0]["message"]
