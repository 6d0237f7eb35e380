"""GPUs and models added in configuration (``[[tool.mtplint.gpus]]`` / ``[[tool.mtplint.models]]``)."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

from mtplint.catalogs import SHIPPED, Catalogs
from mtplint.config_files import load_config
from mtplint.tuner.sizes import model_sizes
from tests.conftest import run_cli

#: a 16 GB RTX 4060 Ti as its owner measured it, and an in-house Qwen3.6-27B fine-tune
PYPROJECT = """\
[project]
name = "inference"

[tool.mtplint]
select = ["MTP2"]

[[tool.mtplint.gpus]]
id = "rtx-4060-ti-16g"
name = "NVIDIA GeForce RTX 4060 Ti"
memory_mib = 16380
bandwidth_gbs = 288
bf16_tflops = 88
fp8 = true
fp8_tflops = 176
names = { nvidia_smi = ["NVIDIA GeForce RTX 4060 Ti"], k8s = ["NVIDIA-GeForce-RTX-4060-Ti"] }
note = "the 16 GB card; the 8 GB one has the same name"

[[tool.mtplint.models]]
id = "acme-coder-27b"
patterns = ["acme/coder-27b"]
family = "qwen3.5"
arch = "Qwen3_5ForConditionalGeneration"
hybrid = true
mtp_layers = 1
mtp = { config_key = "text_config.mtp_num_hidden_layers", layers = 1 }

[tool.mtplint.models.sizes]
params_b = 27.0
active_params_b = 27.0
mtp_params_b = 0.42
checkpoint_dtype = "bf16"
kv_bytes_per_token = 65536
mtp_kv_bytes_per_token = 4096
recurrent_state_mib = 147
max_context = 262144
source = "same shapes as Qwen3.6-27B"
"""

COMPOSE = """\
# mtplint: gpu=rtx-4060-ti-16g
services:
  coder:
    image: vllm/vllm-openai:v0.11.0
    command: >
      --model acme/coder-27b-awq
      --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}'
      --max-num-seqs 32
      --max-model-len 32768
"""


def _project(tmp_path: Path, pyproject: str = PYPROJECT, compose: str = COMPOSE) -> Path:
    (tmp_path / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    (tmp_path / "compose.yaml").write_text(compose, encoding="utf-8")
    return tmp_path


def _check_json(cwd: Path, *extra: str) -> tuple[int, list[dict[str, Any]], str]:
    code, out, err = run_cli(["check", "--output-format", "json", *extra, "compose.yaml"], cwd=cwd)
    findings: list[dict[str, Any]] = json.loads(out) if out.strip() else []
    return code, findings, err


def test_inspect_shows_the_configured_gpu(tmp_path: Path) -> None:
    code, out, err = run_cli(["inspect", "--format", "json", "compose.yaml"], cwd=_project(tmp_path))
    assert code == 0, err
    launch = json.loads(out)["launches"][0]
    assert launch["effective"]["gpu"]["value"] == "rtx-4060-ti-16g"
    assert "unknown_gpu" not in json.dumps(launch["effective"]["gpu"])


def test_check_fires_mtp201_on_the_configured_gpu_and_model(tmp_path: Path) -> None:
    code, findings, err = _check_json(_project(tmp_path))
    assert code == 1, err
    vram = [f for f in findings if f["code"] == "MTP201"]
    assert vram, findings
    assert "rtx-4060-ti-16g" in vram[0]["message"] and "16380 MiB" in json.dumps(vram[0])


def test_gpu_key_and_flag_accept_a_configured_id(tmp_path: Path) -> None:
    project = _project(tmp_path, PYPROJECT.replace('select = ["MTP2"]', 'select = ["MTP2"]\ngpu = "rtx-4060-ti-16gx1"'),
                       COMPOSE.replace("# mtplint: gpu=rtx-4060-ti-16g\n", ""))
    code, findings, err = _check_json(project)
    assert code == 1 and any(f["code"] == "MTP201" for f in findings), err
    code, findings, err = _check_json(project, "--gpu", "rtx-4060-ti-16g")
    assert code == 1 and any(f["code"] == "MTP201" for f in findings), err


def test_without_the_configuration_the_gpu_is_unknown(tmp_path: Path) -> None:
    project = _project(tmp_path)
    code, _, err = run_cli(["check", "--isolated", "--gpu", "rtx-4060-ti-16g", "compose.yaml"], cwd=project)
    assert code == 2 and "unknown GPU 'rtx-4060-ti-16g'" in err
    assert SHIPPED.find_gpu("rtx-4060-ti-16g") is None


def test_bad_entry_exits_2_naming_file_and_key(tmp_path: Path) -> None:
    project = _project(tmp_path, PYPROJECT.replace("memory_mib = 16380", 'memory_mib = "16 GB"'))
    code, _, err = run_cli(["check", "compose.yaml"], cwd=project)
    assert code == 2
    assert "pyproject.toml [tool.mtplint]: key `gpus.0.memory_mib`: expected integer or null" in err
    code, _, err = run_cli(["inspect", "compose.yaml"], cwd=project)
    assert code == 2 and "key `gpus.0.memory_mib`" in err


def test_unknown_key_and_bad_pattern_are_reported(tmp_path: Path) -> None:
    project = _project(tmp_path, PYPROJECT.replace("fp8_tflops = 176", "fp8_tflop = 176"))
    code, _, err = run_cli(["check", "compose.yaml"], cwd=project)
    assert code == 2 and "key `gpus.0.fp8_tflop`: unknown key; did you mean `fp8_tflops`?" in err
    project = _project(tmp_path, PYPROJECT.replace('patterns = ["acme/coder-27b"]', 'patterns = ["acme/(coder"]'))
    code, _, err = run_cli(["check", "compose.yaml"], cwd=project)
    assert code == 2 and "key `models.0.patterns.0`: 'acme/(coder' is not a regular expression" in err


def test_mtplint_toml_top_level_keys(tmp_path: Path) -> None:
    table = PYPROJECT.split("[tool.mtplint]\n", 1)[1].replace("tool.mtplint.", "")
    (tmp_path / "mtplint.toml").write_text(table, encoding="utf-8")
    (tmp_path / "compose.yaml").write_text(COMPOSE, encoding="utf-8")
    code, findings, err = _check_json(tmp_path)
    assert code == 1 and any(f["code"] == "MTP201" for f in findings), err


H100_AS_MEASURED = {"id": "h100-sxm", "name": "NVIDIA H100 80GB HBM3", "memory_mib": 80000, "bandwidth_gbs": 3350,
                    "bf16_tflops": 989, "fp8": True}
HOUSE_QWEN = {"id": "my-qwen", "patterns": ["qwen3\\.6-27b-house"], "family": "qwen3.5",
              "arch": "Qwen3_5ForConditionalGeneration", "hybrid": True, "mtp_layers": 0}


def test_user_entries_take_precedence() -> None:
    shipped_h100 = SHIPPED.find_gpu("h100-sxm")
    assert shipped_h100 is not None and shipped_h100.memory_mib == 81559
    catalogs = Catalogs([H100_AS_MEASURED], [HOUSE_QWEN])
    replaced = catalogs.find_gpu("NVIDIA-H100-80GB-HBM3")
    assert replaced is not None and replaced.memory_mib == 80000 and replaced.user
    # a user pattern is tried before the shipped `qwen3\.6-27b`
    house = catalogs.find_model("acme/Qwen3.6-27B-house")
    assert house is not None and house.id == "my-qwen" and house.user and house.mtp_layers == 0
    plain = catalogs.find_model("Qwen/Qwen3.6-27B")
    assert plain is not None and plain.id == "qwen3.6-27b"
    # the shipped catalogs are left as they were
    restored = SHIPPED.find_gpu("h100-sxm")
    assert restored is not None and restored.memory_mib == 81559 and not restored.user


def test_each_configuration_looks_up_in_its_own_catalogs() -> None:
    """Lookups are remembered per catalogs: a configured model answers for its configuration's
    files, and the shipped answer stays for the others, in whichever order they are asked."""
    name = "acme/Qwen3.6-27B-house"
    before = SHIPPED.find_model(name)
    assert before is not None and before.id == "qwen3.6-27b"
    house = Catalogs([], [HOUSE_QWEN])
    during = house.find_model(name)
    assert during is not None and during.id == "my-qwen"
    assert house.find_model(name) is during
    after = SHIPPED.find_model(name)
    assert after is not None and after.id == "qwen3.6-27b"
    assert house.find_model("no-such/model") is None and SHIPPED.find_model("no-such/model") is None


def test_catalogs_own_their_entries_and_travel_to_a_worker() -> None:
    """A configuration's entries are copied (the caller's lists may change afterwards), two
    configurations with equal entries have equal catalogs, and a worker process receives the
    entries and answers as the parent does."""
    entry = dict(H100_AS_MEASURED)
    catalogs = Catalogs([entry], [])
    entry["memory_mib"] = 79000
    user_h100 = catalogs.find_gpu("h100-sxm")
    assert user_h100 is not None and user_h100.memory_mib == 80000
    assert catalogs == Catalogs([dict(H100_AS_MEASURED)], []) != Catalogs([entry], [])
    copied = pickle.loads(pickle.dumps(catalogs))
    assert copied == catalogs and copied.find_gpu("h100-sxm") == user_h100
    assert pickle.loads(pickle.dumps(SHIPPED)) is SHIPPED


def test_user_model_sizes_reach_the_tuner() -> None:
    sizes = {"params_b": 12.0, "active_params_b": 12.0, "checkpoint_dtype": "bf16", "kv_bytes_per_token": 1024,
             "recurrent_state_mib": 0, "source": "measured"}
    catalogs = Catalogs([], [{"id": "house-12b", "patterns": ["house-12b"], "family": "house", "arch": "X",
                              "hybrid": False, "mtp_layers": 1, "sizes": sizes}])
    found = model_sizes("house-12b", catalogs)
    assert found is not None and found.params_b == 12.0 and found.mtp_params_b == 0.0
    assert model_sizes("house-12b") is None


def test_extend_adds_entries_and_the_child_wins(tmp_path: Path) -> None:

    (tmp_path / "base.toml").write_text(
        '[[gpus]]\nid = "lab-a"\nname = "Lab A"\nmemory_mib = 16000\nbandwidth_gbs = 300\nbf16_tflops = 50\nfp8 = false\n'
        '[[gpus]]\nid = "lab-b"\nname = "Lab B"\nmemory_mib = 8000\nbandwidth_gbs = 300\nbf16_tflops = 50\nfp8 = false\n',
        encoding="utf-8")
    (tmp_path / "mtplint.toml").write_text(
        'extend = "base.toml"\n[[gpus]]\nid = "lab-b"\nname = "Lab B"\nmemory_mib = 12000\nbandwidth_gbs = 300\n'
        'bf16_tflops = 50\nfp8 = false\n', encoding="utf-8")
    gpus = load_config(tmp_path / "mtplint.toml").values["gpus"]
    assert [(g["id"], g["memory_mib"]) for g in gpus] == [("lab-b", 12000), ("lab-a", 16000)]


def test_duplicate_ids_in_one_file_are_rejected(tmp_path: Path) -> None:
    entry = '[[gpus]]\nid = "lab-a"\nname = "Lab A"\nmemory_mib = 16000\nbandwidth_gbs = 300\nbf16_tflops = 50\nfp8 = false\n'
    (tmp_path / "mtplint.toml").write_text(entry * 2, encoding="utf-8")
    (tmp_path / "compose.yaml").write_text(COMPOSE, encoding="utf-8")
    code, _, err = run_cli(["check", "compose.yaml"], cwd=tmp_path)
    assert code == 2 and "mtplint.toml: key `gpus.1.id`: 'lab-a' is defined twice" in err
