"""What counts as a launch (RULES.md "What is a launch"): entry points, wrappers, images."""

from __future__ import annotations

import pytest

from mtplint.extract.launch import entry_for_image, image_engine, image_entry, image_version, recognise
from mtplint.source import Token


def words(*values: str) -> list[Token]:
    return [Token(value) for value in values]


@pytest.mark.parametrize(
    ("argv", "engine", "first_arg"),
    [
        (["vllm", "serve", "Qwen/Qwen3.6-27B"], "vllm", "Qwen/Qwen3.6-27B"),
        (["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"], "vllm", "--model"),
        (["python", "-u", "-m", "sglang.launch_server", "--model-path", "m"], "sglang", "--model-path"),
        (["sglang", "serve", "--model-path", "m"], "sglang", "--model-path"),
        (["/app/llama-server", "-m", "x.gguf"], "llama.cpp", "-m"),
        (["./build/bin/llama-server", "-m", "x.gguf"], "llama.cpp", "-m"),
        (["vllm-mlx", "serve", "mlx-community/Qwen3-Next"], "vllm-mlx", "mlx-community/Qwen3-Next"),
        (["mlx_lm.server", "--model", "m"], "mlx-lm", "--model"),
        (["exec", "nohup", "vllm", "serve", "m"], "vllm", "m"),
        (["env", "CUDA_VISIBLE_DEVICES=0", "vllm", "serve", "m"], "vllm", "m"),
        (["uv", "run", "--with", "vllm", "vllm", "serve", "m"], "vllm", "m"),
        (["timeout", "-s", "KILL", "24h", "vllm", "serve", "m"], "vllm", "m"),
        (["sudo", "-E", "-u", "llm", "llama-server", "-m", "x.gguf"], "llama.cpp", "-m"),
    ],
)
def test_entry_points(argv: list[str], engine: str, first_arg: str) -> None:
    found = recognise(words(*argv))
    assert found is not None
    assert found.engine == engine
    assert found.args[0].value == first_arg


@pytest.mark.parametrize(
    "argv",
    [
        ["vllm", "bench", "serve", "--model", "m", "--speculative-config", "{}"],
        ["python", "benchmarks/benchmark_serving.py", "--model", "m"],
        ["python", "-m", "sglang.bench_serving", "--backend", "sglang"],
        ["curl", "http://localhost:8000/v1/models"],
        ["./serve.sh", "vllm", "serve", "m"],
    ],
)
def test_other_programs_are_not_launches(argv: list[str]) -> None:
    assert recognise(words(*argv)) is None


def test_env_wrapper_assignments_become_environment() -> None:
    found = recognise(words("env", "SGLANG_ENABLE_SPEC_V2=1", "python3", "-m", "sglang.launch_server", "--model-path", "m"))
    assert found is not None
    assert [(k, v.value) for k, v in found.env] == [("SGLANG_ENABLE_SPEC_V2", "1")]


def test_docker_run_with_image_entrypoint_and_env() -> None:
    argv = words("docker", "run", "--gpus", "all", "--ipc=host", "-p", "8000:8000", "-e", "HF_TOKEN=abc",
                 "--env=VLLM_USE_V1=1", "vllm/vllm-openai:v0.11.0", "Qwen/Qwen3.6-27B", "--max-num-seqs", "8")
    found = recognise(argv)
    assert found is not None
    assert (found.engine, found.entry) == ("vllm", "image vllm/vllm-openai (vllm serve)")
    assert [t.value for t in found.args] == ["Qwen/Qwen3.6-27B", "--max-num-seqs", "8"]
    assert dict((k, v.value) for k, v in found.docker_env) == {"HF_TOKEN": "abc", "VLLM_USE_V1": "1"}
    assert found.image is not None and found.image.value == "vllm/vllm-openai:v0.11.0"


def test_docker_run_sglang_image_needs_its_command() -> None:
    found = recognise(words("docker", "run", "--gpus", "2", "lmsysorg/sglang:v0.5.9-cu129",
                            "python3", "-m", "sglang.launch_server", "--model-path", "m"))
    assert found is not None and found.engine == "sglang" and found.gpu_count == 2
    assert recognise(words("docker", "run", "lmsysorg/sglang:v0.5.9", "bash")) is None


def test_unresolved_program_is_not_a_launch() -> None:
    assert recognise([Token("$SERVER", unresolved=("SERVER",)), Token("serve")]) is None


def test_images() -> None:
    assert image_entry("vllm/vllm-openai:latest") is not None
    assert image_entry("docker.io/vllm/vllm-openai@sha256:abc") is not None
    assert image_entry("ghcr.io/ggml-org/llama.cpp:server-cuda-b9180") is not None
    assert image_entry("ghcr.io/ggml-org/llama.cpp:full-cuda") is None
    assert image_entry("lmsysorg/sglang:v0.5.9-cu129") is None
    assert image_engine("lmsysorg/sglang:v0.5.9-cu129") == "sglang"
    assert image_version("lmsysorg/sglang:v0.5.9-cu129") == "0.5.9"
    assert image_version("vllm/vllm-openai:v0.11.0") == "0.11.0"
    assert image_version("ghcr.io/ggml-org/llama.cpp:server-cuda-b9180") == "b9180"
    assert image_version("vllm/vllm-openai:latest") is None
    assert image_version("myorg/vllm:prod") is None


def test_container_command_overrides_image_entrypoint() -> None:
    image = Token("vllm/vllm-openai:v0.11.0")
    args = entry_for_image(image, words("Qwen/Qwen3.6-27B", "--max-num-seqs", "4"))
    assert args is not None and args.engine == "vllm" and [t.value for t in args.program] == ["vllm", "serve"]
    # the image's entrypoint still runs: the command becomes its arguments, as in the real container
    doubled = entry_for_image(image, words("vllm", "serve", "m"))
    assert doubled is not None and [t.value for t in doubled.program + doubled.args] == ["vllm", "serve", "vllm", "serve", "m"]
    plain = entry_for_image(Token("lmsysorg/sglang:v0.5.9"), words("python3", "-m", "sglang.launch_server", "--model-path", "m"))
    assert plain is not None and plain.entry == "python -m sglang.launch_server"


def test_launches_naming_the_same_image_read_its_name_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree's launches name a few images over and over: what an image name says of the engine's
    release is worked out once per name, and every launch gets the same hint (its own span)."""
    from mtplint.extract import launch as launch_module
    from mtplint.source import Span

    launch_module._image_reading.cache_clear()
    split: list[str] = []
    real_image_name = launch_module._image_name

    def image_name(image: str) -> tuple[str, str]:
        split.append(image)
        return real_image_name(image)

    monkeypatch.setattr(launch_module, "_image_name", image_name)
    hints = []
    for line in range(1, 21):
        span = Span("compose.yaml", line * 10, line * 10 + 24, line, 5, line, 29)
        for image in ("vllm/vllm-openai:v0.11.0", "vllm/vllm-openai:latest", "lmsysorg/sglang:v0.5.9-cu129"):
            hints.append(launch_module.image_version_hint("vllm", Token(image, span)))
    released, floating, other = hints[:3]
    assert released is not None and (released.spec, released.source) == ("==0.11.0", "image")
    assert floating is not None and floating.source == "tag"
    assert other is None and hints[-3] is not None and hints[-3].span.line == 20
    assert len(split) <= 5 * 3  # each name split a few times in all (60 launches), not for each launch
    launch_module._image_reading.cache_clear()
