"""The vLLM engine model: parser quirks with positions, config files, version-dependent defaults.

Facts under test are from docs/vllm.md and the wheels' sources (see mtplint/engines/vllm.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mtplint.catalogs import SHIPPED
from mtplint.engines.vllm import ENGINE, human_readable_int, load_table
from mtplint.extract.launch import Launch
from mtplint.hardware import Hardware
from mtplint.source import SourceFile, Token
from mtplint.versions import EngineVersion

Inspect = Callable[..., dict[str, Any]]


def _only(result: dict[str, Any]) -> dict[str, Any]:
    launches = [launch for launch in result["launches"] if launch["engine"] == "vllm"]
    assert len(launches) == 1, result
    launch: dict[str, Any] = launches[0]
    return launch


def _version(version: str) -> list[str]:
    return ["--engine-version", f"vllm={version}"]


def _parse(argv: list[str], version: str = "0.33.0") -> Any:
    return ENGINE.parse_words([Token(word) for word in argv], version)


# --- tables -----------------------------------------------------------------------------------------

def test_known_versions_are_ordered_oldest_first() -> None:
    versions = ENGINE.known_versions()
    for wanted in ("0.8.2", "0.8.3", "0.11.0", "0.20.0", "0.27.1", "0.28.0", "0.30.0", "0.33.0"):
        assert wanted in versions
    assert versions[0] == "0.8.2" and versions[-1] == "0.33.0"
    assert versions.index("0.8.3") < versions.index("0.11.0") < versions.index("0.12.0")


def test_unknown_version_uses_the_nearest_older_table() -> None:
    assert load_table("0.29.1").version == "0.28.0"
    assert load_table("0.40.0").version == "0.33.0"
    assert load_table("0.5.0").version == "0.8.2"


def test_human_readable_ints() -> None:
    assert human_readable_int("32k") == 32000
    assert human_readable_int("1K") == 1024
    assert human_readable_int("25.6k") == 25600
    with pytest.raises(ValueError, match="Decimals are not allowed"):
        human_readable_int("1.5K")


# --- argv quirks, end to end with positions ----------------------------------------------------------

SERVE_SH = """\
#!/bin/bash
set -euo pipefail
exec vllm serve Qwen/Qwen3.6-27B \\
  --speculative-config '{"method":"mtp","num_speculative_tokens":2}' \\
  --tensor_parallel_size 2 \\
  --speculative-config.num_speculative_tokens 3
"""


def test_dotted_keys_replace_a_full_json(inspect: Inspect) -> None:
    launch = _only(inspect({"serve.sh": SERVE_SH}, "serve.sh", extra=_version("0.33.0")))
    assert launch["cli_errors"] == []
    assert launch["options"]["speculative_config"] == {"num_speculative_tokens": 3}  # method lost
    assert launch["options"]["tensor_parallel_size"] == 2
    effective = launch["effective"]
    assert effective["spec_tokens"]["value"] == 3
    assert (effective["spec_tokens"]["line"], effective["spec_tokens"]["column"]) == (6, 47)
    assert effective["spec_method"]["value"] is None
    assert effective["tensor_parallel"]["line"] == 5


def test_full_json_value_spans_point_at_the_json_token(inspect: Inspect) -> None:
    script = "vllm serve Qwen/Qwen3.6-27B \\\n  -sc '{\"method\": \"qwen3_next_mtp\", \"num_speculative_tokens\": 2}'\n"
    launch = _only(inspect({"serve.sh": script}, "serve.sh", extra=_version("0.33.0")))
    method = launch["effective"]["spec_method"]
    assert method["value"] == "mtp" and method["raw"] == "qwen3_next_mtp"
    assert (method["line"], method["column"]) == (2, 7)  # the quoted JSON word
    assert launch["effective"]["spec_model"] == {
        "value": "Qwen/Qwen3.6-27B", "origin": "inferred", "note": "MTP uses the target model's own weights"}


def test_boolean_flag_with_a_value_is_rejected_at_the_value(inspect: Inspect) -> None:
    script = "vllm serve Qwen/Qwen3.6-27B --enable-prefix-caching true --enforce-eager=false\n"
    launch = _only(inspect({"serve.sh": script}, "serve.sh", extra=_version("0.33.0")))
    messages = {error["message"]: error for error in launch["cli_errors"]}
    assert messages["unrecognized arguments: true"]["column"] == 53
    ignored = messages["argument --enforce-eager/--no-enforce-eager: ignored explicit argument 'false'"]
    assert ignored["column"] == 58


def test_positional_and_model_flag_conflict() -> None:
    parsed = _parse(["Qwen/Qwen3.6-27B", "--model", "Qwen/Qwen3.6-35B-A3B"])
    assert parsed.options["model"].value == "Qwen/Qwen3.6-35B-A3B"
    assert [error.message for error in parsed.errors] == ["unrecognized arguments: Qwen/Qwen3.6-27B"]


def test_last_wins_disable_alias_and_abbreviation() -> None:
    parsed = _parse(["Q/Qwen3.6-27B", "--enable-prefix-caching", "--disable-prefix-caching",
                     "--max-num-seq", "8", "--max_num_seqs=16", "-O0", "--max-model-len", "1K"])
    assert parsed.errors == []
    assert parsed.options["enable_prefix_caching"].value is False
    assert parsed.options["max_num_seqs"].value == 16
    assert parsed.options["optimization_level"].value == "0"
    assert parsed.options["max_model_len"].value == 1024


def test_invalid_choice_and_type_wording() -> None:
    parsed = _parse(["Q", "--spec-method", "medusa", "--max-num-seqs", "many"])
    messages = [error.message for error in parsed.errors]
    assert messages[0].startswith("argument --spec-method: invalid choice: 'medusa' (choose from ")
    assert messages[1] == "argument --max-num-seqs: invalid int value: 'many'"


def test_spec_shortcut_conflicts_with_the_json_key() -> None:
    parsed = _parse(["Q", "--spec-tokens", "2", "-sc", '{"method":"mtp","num_speculative_tokens":3}'])
    assert [error.message for error in parsed.errors] == [
        "--spec-tokens and --speculative-config['num_speculative_tokens'] are mutually exclusive"]


def test_unresolved_value_and_splat(inspect: Inspect) -> None:
    script = 'vllm serve "$MODEL" --max-num-seqs "$SEQS" "$@"\n'
    launch = _only(inspect({"serve.sh": script}, "serve.sh", extra=_version("0.33.0")))
    assert launch["open_ended"] is True
    assert "unresolved" in launch["options"]["max_num_seqs"]
    assert launch["effective"]["max_concurrency"]["unresolved"]
    assert launch["cli_errors"] == []


# --- --config ---------------------------------------------------------------------------------------

CONFIG_YAML = """\
model: Qwen/Qwen3.6-35B-A3B
enable-prefix-caching: false
gpu-memory-utilization: 0.85
speculative-config:
  method: mtp
  num_speculative_tokens: 2
"""


def test_config_file_options_carry_their_own_positions(inspect: Inspect) -> None:
    script = "vllm serve Qwen/Qwen3.6-27B --config vllm.yaml --gpu-memory-utilization 0.9\n"
    launch = _only(inspect({"serve.sh": script, "vllm.yaml": CONFIG_YAML}, "serve.sh", extra=_version("0.33.0")))
    assert launch["cli_errors"] == []
    assert launch["config_files"] == ["vllm.yaml"]
    options = launch["options"]
    assert options["model"] == "Qwen/Qwen3.6-27B"  # the positional beats model: in the file
    assert options["gpu_memory_utilization"] == 0.9  # the CLI beats the file
    assert "enable_prefix_caching" not in options  # key: false is dropped under vllm serve
    effective = launch["effective"]
    assert effective["prefix_caching"]["value"] is True and effective["prefix_caching"]["origin"] == "default"
    tokens = effective["spec_tokens"]
    assert tokens["origin"] == "config-file"
    assert (tokens["file"], tokens["line"], tokens["column"]) == ("vllm.yaml", 6, 27)


def test_config_with_equals_is_never_loaded(inspect: Inspect) -> None:
    script = "vllm serve Qwen/Qwen3.6-27B --config=vllm.yaml\n"
    launch = _only(inspect({"serve.sh": script, "vllm.yaml": CONFIG_YAML}, "serve.sh", extra=_version("0.33.0")))
    assert launch["options"]["config"] == "vllm.yaml"
    assert "speculative_config" not in launch["options"]


def test_malformed_config_yaml_is_mtp001(inspect: Inspect) -> None:
    script = "vllm serve Qwen/Qwen3.6-27B --config vllm.yaml\n"
    result = inspect({"serve.sh": script, "vllm.yaml": "speculative-config: {method: mtp\n"}, "serve.sh",
                     extra=_version("0.33.0"))
    assert any(d["code"] == "MTP001" and d["file"] == "vllm.yaml" for d in result["diagnostics"])


def test_yaml_dict_is_not_json_before_0_16(inspect: Inspect) -> None:
    script = "vllm serve Qwen/Qwen3.6-27B --config vllm.yaml\n"
    launch = _only(inspect({"serve.sh": script, "vllm.yaml": CONFIG_YAML}, "serve.sh", extra=_version("0.11.0")))
    assert any("--speculative-config" in error["message"] for error in launch["cli_errors"])


# --- versions -----------------------------------------------------------------------------------------

def test_python_literal_json_only_before_0_8_3() -> None:
    literal = "{'method': 'eagle', 'model': 'yuhuili/EAGLE-LLaMA3-Instruct-8B', 'num_speculative_tokens': 5}"
    old = _parse(["meta-llama/Llama-3.1-8B-Instruct", "--speculative-config", literal], "0.8.2")
    assert old.errors == [] and old.options["speculative_config"].value["method"] == "eagle"
    new = _parse(["meta-llama/Llama-3.1-8B-Instruct", "--speculative-config", literal], "0.8.3")
    assert new.errors and "cannot be converted" in new.errors[0].message


def test_model_option_rejected_in_0_11_0_and_moved_later() -> None:
    assert "--model" in _parse(["--model", "Q"], "0.11.0").errors[0].message
    assert _parse(["--model", "Q"], "0.12.0").errors == []


def test_spec_shortcuts_do_not_exist_before_0_27() -> None:
    parsed = _parse(["Q", "--spec-method", "mtp"], "0.20.0")
    assert [error.message for error in parsed.errors] == ["unrecognized arguments: --spec-method mtp"]


@pytest.mark.parametrize(("version", "expected"), [("0.27.1", False), ("0.28.0", True), ("0.33.0", True)])
def test_hybrid_prefix_caching_default(version: str, expected: bool, inspect: Inspect) -> None:
    script = "vllm serve Qwen/Qwen3.6-27B\n"
    launch = _only(inspect({"serve.sh": script}, "serve.sh", extra=_version(version)))
    assert launch["effective"]["prefix_caching"]["value"] is expected


def test_assumed_version_flags_version_dependent_defaults(inspect: Inspect) -> None:
    files = {"serve.sh": "vllm serve Qwen/Qwen3.6-27B\n", "requirements.txt": "vllm>=0.19\n"}
    launch = _only(inspect(files, "serve.sh"))
    assert launch["assumed_version"] is True
    assert launch["effective"]["prefix_caching"]["depends_on_version"] is True
    assert launch["effective"]["memory_fraction"]["depends_on_version"] is True


@pytest.mark.parametrize(("version", "expected"), [("0.19.0", 0.9), ("0.20.0", 0.92)])
def test_memory_fraction_default(version: str, expected: float, inspect: Inspect) -> None:
    launch = _only(inspect({"serve.sh": "vllm serve Qwen/Qwen3.6-27B\n"}, "serve.sh", extra=_version(version)))
    assert launch["effective"]["memory_fraction"] == {"value": expected, "origin": "default"}


@pytest.mark.parametrize(("gpu", "expected"), [("h100-sxm", 1024), ("a100-80g", 256), ("rtx-4090", 256)])
def test_max_num_seqs_default_by_gpu(gpu: str, expected: int, inspect: Inspect) -> None:
    launch = _only(inspect({"serve.sh": "vllm serve Qwen/Qwen3.6-27B\n"}, "serve.sh",
                           extra=[*_version("0.33.0"), "--gpu", gpu]))
    assert launch["effective"]["max_concurrency"]["value"] == expected


def test_unknown_gpu_keeps_the_generic_default_and_says_so(inspect: Inspect) -> None:
    launch = _only(inspect({"serve.sh": "vllm serve Qwen/Qwen3.6-27B\n"}, "serve.sh", extra=_version("0.33.0")))
    assert launch["effective"]["max_concurrency"]["value"] == 256
    assert launch["effective"]["max_concurrency"]["gpu_unknown"] is True


def test_enforce_eager_turns_cuda_graphs_off() -> None:
    parsed = _parse(["Q", "--enforce-eager"])
    launch = Launch("vllm", "vllm serve", SourceFile.from_text(""), None, [], [], base_dir=Path("."))
    effective = ENGINE.effective(launch, parsed, EngineVersion("vllm", "0.33.0", True, "config"), Hardware(), SHIPPED)
    assert effective["cuda_graphs"].value is False
    assert "gpu" not in effective


# --- Python API ------------------------------------------------------------------------------------------

APP_PY = """\
from vllm import LLM

llm = LLM(
    model="Qwen/Qwen3.6-35B-A3B",
    speculative_config={"method": "mtp", "num-speculative-tokens": 2},
    enable_prefix_caching=False,
    max_num_sequences=8,
)
"""


def test_python_kwargs(inspect: Inspect) -> None:
    launch = _only(inspect({"app.py": APP_PY}, "app.py", extra=_version("0.33.0")))
    assert launch["options"]["speculative_config"] == {"method": "mtp", "num_speculative_tokens": 2}
    assert launch["effective"]["prefix_caching"]["value"] is False
    assert launch["effective"]["prefix_caching"]["line"] == 6
    errors = launch["cli_errors"]
    assert [error["message"] for error in errors] == [
        "EngineArgs.__init__() got an unexpected keyword argument 'max_num_sequences'"]
    assert errors[0]["line"] == 7
