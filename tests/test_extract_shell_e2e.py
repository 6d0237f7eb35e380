"""End to end (``mtplint inspect --format json``) for the shell-family extractors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

Inspect = Callable[..., dict[str, Any]]


def only_launch(result: dict[str, Any]) -> dict[str, Any]:
    assert len(result["launches"]) == 1, result
    launch: dict[str, Any] = result["launches"][0]
    return launch


SGLANG_SCRIPT = """\
#!/bin/bash
set -euo pipefail
export SGLANG_ENABLE_SPEC_V2=1
MODEL=${MODEL:-Qwen/Qwen3.6-35B-A3B}
python3 -m sglang.launch_server --model-path "$MODEL" \\
  --speculative-algorithm NEXTN --speculative-num-steps 3 \\
  --speculative-eagle-topk 1 "$@" &
python3 bench_serving.py --model "$MODEL" --speculative-algorithm NEXTN
wait
"""


def test_shell_script_launch(inspect: Inspect) -> None:
    launch = only_launch(inspect({"serve.sh": SGLANG_SCRIPT}, "serve.sh"))
    assert (launch["file"], launch["line"], launch["column"], launch["context"]) == ("serve.sh", 5, 1, "line 5")
    assert launch["engine"] == "sglang"
    assert launch["argv"] == ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.6-35B-A3B",
                              "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3",
                              "--speculative-eagle-topk", "1", {"unresolved": "$@", "splat": True}]
    assert launch["env"] == {"SGLANG_ENABLE_SPEC_V2": "1"}
    assert launch.get("open_ended") is True
    assert launch["effective"]["model"]["line"] == 5


def test_script_classified_by_shebang(inspect: Inspect) -> None:
    script = "#!/usr/bin/env bash\nexec llama-server -m /models/qwen.gguf --spec-type draft-mtp --spec-draft-n-max 2\n"
    launch = only_launch(inspect({"bin/start-server": script}, "."))
    assert launch["file"] == "bin/start-server"
    assert launch["engine"] == "llama.cpp"
    assert launch["argv"] == ["llama-server", "-m", "/models/qwen.gguf", "--spec-type", "draft-mtp",
                              "--spec-draft-n-max", "2"]


def test_dockerfile_launch(inspect: Inspect) -> None:
    dockerfile = """\
FROM lmsysorg/sglang:v0.5.9-cu129
ENV SGLANG_ENABLE_SPEC_V2=1
CMD python3 -m sglang.launch_server --model-path Qwen/Qwen3.6-27B \\
    --speculative-algorithm NEXTN
"""
    launch = only_launch(inspect({"Dockerfile": dockerfile}, "Dockerfile"))
    assert launch["engine"] == "sglang"
    assert launch["engine_version"] == "0.5.9"
    assert launch["env"] == {"SGLANG_ENABLE_SPEC_V2": "1"}
    assert launch["image"] == "lmsysorg/sglang:v0.5.9-cu129"
    assert launch["argv"][-1] == "NEXTN"


def test_systemd_unit_starting_a_script(inspect: Inspect) -> None:
    unit = """\
[Unit]
Description=llama.cpp MTP server

[Service]
EnvironmentFile=/etc/llama/llama.env
ExecStart=/usr/bin/bash /opt/llama/run.sh
"""
    script = """\
#!/bin/bash
exec /usr/local/bin/llama-server -m "$MODEL_FILE" --spec-type draft-mtp --port "${PORT:-8080}"
"""
    result = inspect({"deploy/llama.service": unit, "deploy/llama.env": "MODEL_FILE=/models/Qwen3.6-27B-Q4_K_M.gguf\n",
                      "deploy/run.sh": script}, "deploy/llama.service")
    launch = only_launch(result)
    assert launch["file"] == "deploy/run.sh"
    assert launch["argv"] == ["/usr/local/bin/llama-server", "-m", "/models/Qwen3.6-27B-Q4_K_M.gguf",
                              "--spec-type", "draft-mtp", "--port", "8080"]
    assert (launch["line"], launch["column"]) == (2, 6)
    assert launch["env"] == {"MODEL_FILE": "/models/Qwen3.6-27B-Q4_K_M.gguf"}


def test_malformed_script_is_mtp001(inspect: Inspect) -> None:
    result = inspect({"serve.sh": '#!/bin/sh\nvllm serve "Qwen/Qwen3-8B --port 8000\n'}, "serve.sh")
    assert result["launches"] == []
    (diagnostic,) = result["diagnostics"]
    assert diagnostic["code"] == "MTP001"
    assert (diagnostic["line"], diagnostic["column"]) == (2, 12)


def test_vllm_run_script(inspect: Inspect) -> None:
    pytest.importorskip("mtplint.engines.vllm")
    script = """\
#!/usr/bin/env bash
MODEL="${MODEL:-Qwen/Qwen3.6-27B}"
vllm serve "$MODEL" \\
    --speculative-config '{"method":"mtp","num_speculative_tokens":2}' \\
    --no-enable-prefix-caching
"""
    launch = only_launch(inspect({"run.sh": script}, "run.sh"))
    assert launch["engine"] == "vllm"
    assert launch["argv"][3] == "--speculative-config"
    assert launch["effective"]["spec_method"]["value"] == "mtp"
    assert (launch["effective"]["spec_method"]["line"], launch["effective"]["spec_method"]["column"]) == (4, 26)
