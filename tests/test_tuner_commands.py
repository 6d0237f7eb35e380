"""Round trip: every command the tuner generates parses with mtplint's engine models (which match the
engines' real parsers on tests/data/*conformance*) and lints clean with ``mtplint check`` -- for the
newest engine versions (what ``check`` assumes without a pin) and for pinned older ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mtplint.engines import engine_for
from mtplint.tuner import (
    ServeCommand,
    llama_mtp_command,
    recommend,
    sglang_mtp_command,
    vllm_mtp_command,
)
from mtplint.tuner.commands import NEWEST
from tests.conftest import run_cli

#: pinned versions on either side of each version-dependent choice the builders make
VERSIONS: dict[str, tuple[str | None, ...]] = {
    "vllm": (None, "0.33.0", "0.30.0", "0.28.0", "0.20.0", "0.11.0"),
    "sglang": (None, "0.5.23", "0.5.14", "0.5.12", "0.5.10", "0.5.9"),
    "llama.cpp": (None, "b10470", "b10398", "b9464", "b9235"),
}
HF_MODELS = ("Qwen/Qwen3.6-27B-FP8", "Qwen/Qwen3.6-35B-A3B", "Qwen/Qwen3-Next-80B-A3B-Instruct",
             "deepseek-ai/DeepSeek-V3", "XiaomiMiMo/MiMo-7B-RL")
GGUF_MODELS = ("unsloth/Qwen3.6-27B-MTP-GGUF:Q4_K_M", "/models/Qwen3.6-35B-A3B-MTP-Q4_K_M.gguf")
GPUS = ("rtx-3090", "rtx-4090", "h100-sxm", "h200")


def test_newest_versions_are_the_engine_models_newest() -> None:
    for engine, version in NEWEST.items():
        assert engine_for(engine).known_versions()[-1] == version


def _builder_commands() -> list[ServeCommand]:
    commands: list[ServeCommand] = []
    for k in (0, 1, 2, 3):
        for model in HF_MODELS:
            for version in VERSIONS["vllm"]:
                commands.append(vllm_mtp_command(model, k, max_num_seqs=1, max_model_len=32768, version=version,
                                                 tensor_parallel=8 if "V3" in model else 2))
            for version in VERSIONS["sglang"]:
                commands.append(sglang_mtp_command(model, k, max_running_requests=1, context_length=32768,
                                                   mem_fraction_static=0.8, version=version,
                                                   tensor_parallel=8 if "V3" in model else 2))
        for model in GGUF_MODELS:
            for version in VERSIONS["llama.cpp"]:
                commands.append(llama_mtp_command(model, k, ctx_size=65536, version=version))
    return commands


def _recommended_commands() -> list[tuple[str, ServeCommand]]:
    """(gpu, command) for a grid of recommendations: enabled, disabled and refused ones."""
    found = []
    cases: list[dict[str, Any]] = []
    for gpu in GPUS:
        for engine, model in (("vllm", "Qwen/Qwen3.6-27B-FP8"), ("vllm", "Qwen/Qwen3.6-35B-A3B-FP8"),
                              ("sglang", "Qwen/Qwen3.6-27B-FP8"), ("sglang", "Qwen/Qwen3.6-35B-A3B"),
                              ("llama.cpp", "unsloth/Qwen3.6-27B-MTP-GGUF:Q4_K_M"),
                              ("vllm", "Qwen/Qwen3.6-27B"), ("vllm", "mlx-community/Qwen3.6-27B-4bit")):
            cases.append({"use_case": "single-user", "objective": "latency", "gpu": gpu, "engine": engine,
                          "model": model})
            for objective in ("latency", "throughput"):
                for concurrency in (8, 64, 256):
                    cases.append({"use_case": "multi-user", "objective": objective, "gpu": gpu, "engine": engine,
                                  "model": model, "concurrency": concurrency})
    cases.append({"use_case": "single-user", "objective": "latency", "gpu": "h100-sxm", "model": "Qwen/Qwen3.6-27B",
                  "kv_cache_dtype": "turboquant_4bit_nc"})
    for version in ("0.5.9", "0.5.12"):
        cases.append({"use_case": "single-user", "objective": "latency", "gpu": "h100-sxm", "engine": "sglang",
                      "model": "Qwen/Qwen3.6-27B-FP8", "engine_version": version})
    for case in cases:
        result = recommend(**case)
        found.append((case["gpu"], result.serve_command))
    return found


def _write(root: Path, index: int, command: ServeCommand, gpu: str | None) -> str:
    """One launch file: a shell script in a directory pinning the version (vLLM, SGLang: a
    requirements.txt), or a compose service on the llama.cpp image of that build."""
    directive = f"# mtplint: gpu={gpu}\n" if gpu else ""
    pinned = command.version != NEWEST[command.engine]
    if command.engine == "llama.cpp":
        folder = root / f"llama-{command.version}"
        folder.mkdir(exist_ok=True)
        image = f"ghcr.io/ggml-org/llama.cpp:server-{command.version}" if pinned else "ghcr.io/ggml-org/llama.cpp:server"
        name = f"compose-{index}.yaml"
        (folder / name).write_text(
            f"services:\n  llm:\n    {directive.strip() or '# no gpu'}\n    image: {image}\n"
            f"    command: {json.dumps(list(command.argv[1:]))}\n", encoding="utf-8")
        if not pinned:
            # an unpinned image tag: the newest build is assumed, like a bare llama-server in a script
            (folder / name).write_text(f"{directive}{command.script()}", encoding="utf-8")
            (folder / name).rename(folder / f"serve-{index}.sh")
            return f"{folder.name}/serve-{index}.sh"
        return f"{folder.name}/{name}"
    folder = root / f"{command.engine}-{command.version if pinned else 'unpinned'}"
    folder.mkdir(exist_ok=True)
    if pinned:
        (folder / "requirements.txt").write_text(f"{command.engine}=={command.version}\n", encoding="utf-8")
    script = command.script().replace("#!/bin/sh\n", "#!/bin/sh\n" + directive, 1)
    (folder / f"serve-{index}.sh").write_text(script, encoding="utf-8")
    return f"{folder.name}/serve-{index}.sh"


@pytest.fixture(scope="module")
def linted(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, ServeCommand], dict[str, Any], list[Any]]:
    root = tmp_path_factory.mktemp("tuner-commands")
    files: dict[str, ServeCommand] = {}
    for index, command in enumerate(_builder_commands()):
        gpu = "rtx-5090" if command.engine == "llama.cpp" else "h200x8" if "V3" in command.argv[2:4][-1] else "h200x2"
        files[_write(root, index, command, gpu)] = command
    for index, (gpu, command) in enumerate(_recommended_commands(), start=len(files)):
        files[_write(root, index, command, gpu)] = command
    code, out, err = run_cli(["inspect", "--format", "json", "."], cwd=root)
    assert code == 0, err
    inspected = json.loads(out)
    code, out, err = run_cli(["check", "--output-format", "json", "--exit-zero", "."], cwd=root)
    assert code == 0, err
    return files, inspected, json.loads(out)


def test_every_generated_command_is_a_launch_the_engine_accepts(
        linted: tuple[dict[str, ServeCommand], dict[str, Any], list[Any]]) -> None:
    files, inspected, _ = linted
    launches = {launch["file"]: launch for launch in inspected["launches"]}
    assert set(launches) == set(files)
    for name, command in files.items():
        launch = launches[name]
        assert launch["engine"] == command.engine, name
        assert launch["engine_version"] == command.version, name
        assert launch["cli_errors"] == [], f"{name}: {command.shell()}"
        assert launch["argv"][-len(command.argv) + 1:] == list(command.argv[1:]), name
        assert launch["env"] == dict(command.env) or all(launch["env"].get(k) == v for k, v in command.env), name


def test_every_generated_command_lints_clean(
        linted: tuple[dict[str, ServeCommand], dict[str, Any], list[Any]]) -> None:
    files, _, findings = linted
    by_file: dict[str, list[str]] = {}
    for finding in findings:
        name = finding.get("filename") or finding.get("file") or "?"
        command = files.get(name)
        if (finding.get("code") == "MTP304" and command is not None and "draft-mtp" in command.argv
                and command.argv[command.argv.index("-np") + 1] != "1"):
            # the one finding allowed: llama.cpp multi-user with MTP needs several slots, and MTP304 (info)
            # says so; the recommendation carries the same note (the model expects a gain up to ~4-8 slots)
            continue
        if finding.get("code") == "MTP004" and command is not None and command.version == NEWEST[command.engine]:
            # the newest release's command is written unpinned (see _write): the info that a pin would let
            # the version-dependent defaults be judged is about the file, not about the command
            continue
        by_file.setdefault(finding.get("filename") or finding.get("file") or "?", []).append(
            f"{finding.get('code')}: {finding.get('message')}")
    problems = {name: messages for name, messages in by_file.items()}
    assert not problems, json.dumps(problems, indent=1)[:4000]


def test_enabled_commands_carry_what_the_rules_want() -> None:
    vllm = vllm_mtp_command("Qwen/Qwen3.6-27B-FP8", 2)
    assert json.loads(vllm.argv[vllm.argv.index("--speculative-config") + 1]) == {
        "method": "mtp", "num_speculative_tokens": 2, "disable_eagle_block_drop": True}
    old = vllm_mtp_command("Qwen/Qwen3.6-27B-FP8", 2, version="0.20.0")
    assert "--no-enable-prefix-caching" in old.argv
    assert json.loads(old.argv[old.argv.index("--speculative-config") + 1]) == {
        "method": "mtp", "num_speculative_tokens": 2}
    sglang = sglang_mtp_command("Qwen/Qwen3.6-27B-FP8", 3, version="0.5.9")
    assert sglang.env == (("SGLANG_ENABLE_SPEC_V2", "1"),)
    assert sglang.argv[sglang.argv.index("--speculative-num-draft-tokens") + 1] == "4"
    assert "--mamba-scheduler-strategy" in sglang.argv
    assert sglang_mtp_command("Qwen/Qwen3.6-27B-FP8", 3).env == ()
    llama = llama_mtp_command("unsloth/Qwen3.6-27B-MTP-GGUF:Q4_K_M", 3)
    assert llama.shell() == ("llama-server -hf unsloth/Qwen3.6-27B-MTP-GGUF:Q4_K_M --spec-type draft-mtp "
                             "--spec-draft-n-max 3 -np 1")
    with pytest.raises(ValueError, match="b9180"):
        llama_mtp_command("x.gguf", 1, version="b9131")


def test_shell_renderings() -> None:
    command = sglang_mtp_command("Qwen/Qwen3.6-27B-FP8", 1, version="0.5.9", max_running_requests=4)
    assert command.shell().startswith("SGLANG_ENABLE_SPEC_V2=1 python -m sglang.launch_server --model-path ")
    lines = command.shell(multiline=True).splitlines()
    assert lines[0] == "SGLANG_ENABLE_SPEC_V2=1 python -m sglang.launch_server \\"
    assert lines[-1] == "  --max-running-requests 4"
    script = vllm_mtp_command("Qwen/Qwen3.6-27B-FP8", 1).script().splitlines()
    assert script[1] == "exec vllm serve Qwen/Qwen3.6-27B-FP8 \\"
    assert script[2] == """  --speculative-config '{"method":"mtp","num_speculative_tokens":1,"disable_eagle_block_drop":true}'"""
