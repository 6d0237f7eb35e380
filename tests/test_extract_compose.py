"""The compose extractor: launches, values and positions (issue 2).

Fixture projects live in tests/data/compose/ (each is also checked against ``docker compose
config`` in test_extract_compose_conformance.py); small cases are written inline.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplint.extract import ExtractContext, FileLoader, Malformed, compose, yamlfiles
from mtplint.extract.launch import Launch
from mtplint.extract.yamlpos import load_all
from mtplint.source import SourceFile, Span, Token

FIXTURES = Path(__file__).parent / "data" / "compose"


def launches_of(directory: Path, *names: str, loader: FileLoader | None = None,
                ctx: ExtractContext | None = None) -> list[Launch]:
    loader = loader or FileLoader(directory)
    ctx = ctx or ExtractContext(loader)
    found: list[Launch] = []
    for name in names or ("compose.yaml",):
        source = loader.load(directory / name)
        assert source is not None, name
        found.extend(compose.extract(source, ctx))
    return found


def fixture(name: str, *files: str) -> list[Launch]:
    return launches_of(FIXTURES / name, *files)


def write(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def values(tokens: list[Token]) -> list[str]:
    return [token.value for token in tokens]


def at(span: Span | None) -> tuple[int, int]:
    assert span is not None
    return span.line, span.column


def token(launch: Launch, value: str, occurrence: int = 0) -> Token:
    return [t for t in launch.argv if t.value == value][occurrence]


def env(launch: Launch) -> dict[str, str]:
    return {name: entry.value.value for name, entry in launch.env.items()}


# --- commands and their positions ---------------------------------------------------------------------

def test_folded_command_with_default_model_on_vllm_image() -> None:
    [launch] = fixture("vllm-folded")
    assert (launch.engine, launch.entry, launch.context) == ("vllm", "image vllm/vllm-openai (vllm serve)", "service vllm")
    assert values(launch.program) == ["vllm", "serve"]
    assert values(launch.args) == [
        "Qwen/Qwen3.6-27B", "--served-model-name", "qwen", "--tensor-parallel-size", "2",
        "--speculative-config", '{"method": "mtp", "num_speculative_tokens": 2}',
        "--max-model-len", "32768", "--gpu-memory-utilization", "0.90"]
    # tokens inside the `>` block point at themselves; a default at the default text
    assert at(token(launch, "Qwen/Qwen3.6-27B").span) == (17, 16)
    assert at(token(launch, "--tensor-parallel-size").span) == (19, 7)
    assert at(token(launch, "2").span) == (19, 30)
    assert at(token(launch, '{"method": "mtp", "num_speculative_tokens": 2}').span) == (20, 29)
    assert at(token(launch, "32768").span) == (21, 34)
    assert at(launch.span) == (17, 16)
    assert launch.gpu is not None and launch.gpu.count == 2 and launch.gpu.product is None
    assert at(launch.gpu.span) == (28, 22)
    assert [(hint.engine, hint.spec) for hint in launch.version_hints] == [("vllm", "==0.11.0")]
    assert launch.base_dir == str(FIXTURES / "vllm-folded")
    assert env(launch) == {"HF_HOME": "/root/.cache/huggingface", "VLLM_USE_V1": "1", "OMP_NUM_THREADS": "8",
                           "VLLM_SLEEP_SECONDS": "0.5"}


def test_literal_block_with_entrypoint_list() -> None:
    [launch] = fixture("vllm-literal")
    assert launch.entry == "vllm serve"
    assert values(launch.program) == ["vllm", "serve"]
    assert at(launch.program[0].span) == (4, 19)
    assert values(launch.args)[:3] == ["Qwen/Qwen3.6-35B-A3B-FP8", "--port", "8000"]
    assert at(token(launch, "--speculative-config.num_speculative_tokens").span) == (10, 7)
    assert at(token(launch, "3").span) == (10, 51)
    assert at(token(launch, "fp8").span) == (11, 24)
    assert launch.gpu is not None and launch.gpu.count == 2  # device_ids: ["0", "1"]
    hf_token = launch.env["HF_TOKEN"].value
    assert hf_token.unresolved == ("HF_TOKEN",)  # `- HF_TOKEN`: from the shell running compose
    assert at(launch.env["HF_TOKEN"].span) == (14, 9)


def test_list_command_sglang_launch_server() -> None:
    [launch] = fixture("sglang-list")
    assert (launch.engine, launch.entry) == ("sglang", "python -m sglang.launch_server")
    assert values(launch.program) == ["python3", "-m", "sglang.launch_server"]
    assert at(launch.span) == (10, 9)
    assert at(token(launch, "NEXTN").span) == (16, 9)
    assert at(token(launch, "3").span) == (18, 10)  # inside the quotes of - "3"
    assert env(launch) == {"SGLANG_ENABLE_SPEC_V2": "1", "HF_HOME": "/models"}
    assert at(launch.env["SGLANG_ENABLE_SPEC_V2"].span) == (7, 9)
    assert at(launch.env["SGLANG_ENABLE_SPEC_V2"].value.span) == (7, 31)
    assert launch.gpu is not None and launch.gpu.count is None  # count: all
    assert launch.image is not None and launch.image.value == "lmsysorg/sglang:v0.5.9-cu129"
    assert [(hint.engine, hint.spec) for hint in launch.version_hints] == [("sglang", "==0.5.9")]


def test_llama_cpp_server_image_runs_llama_server() -> None:
    [launch] = fixture("llamacpp-server")
    assert (launch.engine, launch.entry) == ("llama.cpp", "image ghcr.io/ggml-org/llama.cpp:server-cuda (llama-server)")
    assert values(launch.program) == ["/app/llama-server"]
    assert values(launch.args)[:2] == ["-m", "/models/Qwen3.6-27B-Q4_K_M.gguf"]
    assert at(token(launch, "draft-mtp").span) == (13, 19)
    assert env(launch)["LLAMA_ARG_CTX_SIZE"] == "16384"
    assert launch.gpu is not None and launch.gpu.count is None  # runtime: nvidia, every GPU


def test_sh_c_script_with_escaped_dollars_reads_the_container_environment() -> None:
    [launch] = fixture("dollar-shell")
    assert launch.entry == "vllm serve"
    assert values(launch.args) == ["Qwen/Qwen3.6-27B", "--speculative-config",
                                   '{"method": "mtp", "num_speculative_tokens": 2}', "--port", "8000"]
    assert at(launch.span) == (11, 14)  # `vllm` after `exec` inside the `|` block
    assert at(token(launch, "--port").span) == (13, 11)


def test_bash_c_string_command_on_an_image_without_entrypoint() -> None:
    [launch] = fixture("sglang-bash")
    assert launch.engine == "sglang"
    assert values(launch.args) == ["--model-path", "Qwen/Qwen3.6-27B", "--speculative-algorithm", "NEXTN",
                                   "--speculative-num-steps", "2", "--tp", "2"]
    assert at(launch.span) == (6, 53)
    assert env(launch) == {"SGLANG_ENABLE_SPEC_V2": "true"}


def test_backslash_continuations_in_a_literal_command_become_newline_arguments() -> None:
    [launch] = fixture("literal-continuation")
    assert values(launch.args) == ["Qwen/Qwen3.6-27B", "\n", "--speculative-config",
                                   '{"method": "mtp", "num_speculative_tokens": 2}', "\n", "--max-num-seqs", "16"]
    assert any("not a line continuation" in note for note in launch.notes)


# --- interpolation, .env, env_file -----------------------------------------------------------------

def test_dotenv_values_fill_image_command_and_environment() -> None:
    [launch] = fixture("dotenv")
    assert launch.image is not None and launch.image.value == "vllm/vllm-openai:v0.11.0"
    assert [(hint.engine, hint.spec) for hint in launch.version_hints] == [("vllm", "==0.11.0")]
    assert values(launch.args) == ["Qwen/Qwen3.6-27B-FP8", "--speculative-config",
                                   '{"method": "mtp", "num_speculative_tokens": 2}',
                                   "--gpu-memory-utilization=0.92", "--port", "8000"]
    assert at(token(launch, "Qwen/Qwen3.6-27B-FP8").span) == (12, 9)  # `$MODEL`
    assert env(launch) == {"HF_TOKEN": "hf_example", "VLLM_LOGGING_LEVEL": "INFO", "USE_EXTRA": "", "HAS_TOKEN": "yes"}
    assert all(entry.value.resolved for entry in launch.env.values())


def test_nested_defaults_and_nvidia_visible_devices() -> None:
    [launch] = fixture("nested-defaults")
    assert values(launch.args)[:3] == ["Qwen/Qwen3.6-35B-A3B", "--tensor-parallel-size", "2"]
    assert launch.gpu is not None and launch.gpu.count == 2
    assert at(launch.gpu.span) == (5, 7)


def test_env_file_entries_use_compose_lookup_order() -> None:
    [launch] = fixture("env-file-lookup")
    assert env(launch) == {
        "VLLM_USE_V1": "1",
        "HF_HOME": "/data/hf",  # `environment:` wins over env_file
        "CACHE_DIR": "/data/hf/cache",  # the service environment before the file's own HF_HOME
        "TENSOR_PARALLEL": "2",  # the project .env before everything
        "TP": "4",
        "REVISION_COPY": "main",
        "VLLM_WORKER_MULTIPROC_METHOD": "spawn",
        "LOG_PREFIX": "qwen-log",
        "SERVICE_NAME": "qwen",
    }
    assert values(launch.args)[-1] == "2"  # `${TP}` in the command comes from .env, not the service
    assert launch.env["CACHE_DIR"].value.span is not None
    assert launch.env["CACHE_DIR"].value.span.file.endswith("env-file-lookup/engine.env")
    assert at(launch.env["CACHE_DIR"].value.span) == (3, 11)


def test_env_file_list_bare_keys_quotes_and_optional_file() -> None:
    [launch] = fixture("env-file")
    values_by_name = env(launch)
    assert values_by_name["REGION"] == "eu"  # bare key: from .env
    assert values_by_name["QUOTED"] == "literal ${TP}"
    assert values_by_name["HF_HOME"] == "/data/hf"
    assert not any("local.env" in note for note in launch.notes)  # required: false


def test_unset_variables_are_unresolved_never_empty() -> None:
    [launch] = fixture("unset-variable")
    model = launch.args[0]
    assert model.unresolved == ("MODEL",) and not model.splat  # a list item stays one word
    assert at(model.span) == (7, 16)
    assert launch.args[2].value == '{"method":"mtp","num_speculative_tokens":2}'
    assert launch.env["VLLM_API_KEY"].value.unresolved == ("API_KEY",)
    assert launch.env["HF_TOKEN"].value.unresolved == ("HF_TOKEN",)
    assert any("MODEL" in note for note in launch.notes)


def test_unquoted_unset_variable_in_a_string_command_may_be_any_number_of_words(tmp_path: Path) -> None:
    project = write(tmp_path, {"compose.yaml": (
        "services:\n  vllm:\n    image: vllm/vllm-openai\n"
        "    command: Qwen/Qwen3.6-27B ${EXTRA_ARGS} --served-model-name \"${NAME}\"\n")})
    [launch] = launches_of(project)
    extra = launch.args[1]
    assert extra.unresolved == ("EXTRA_ARGS",) and extra.splat
    name = launch.args[3]
    assert name.unresolved == ("NAME",) and not name.splat


def test_an_unresolved_compose_variable_inside_a_script_stays_unresolved(tmp_path: Path) -> None:
    project = write(tmp_path, {"compose.yaml": (
        "services:\n  vllm:\n    image: vllm/vllm-openai\n    entrypoint: [sh, -c]\n"
        "    environment:\n      MODEL: from-container\n"
        "    command: [\"exec vllm serve $MODEL --port 8000\"]\n")})
    [launch] = launches_of(project)
    assert launch.args[0].unresolved == ("MODEL",)  # compose substituted it before the shell ran


# --- YAML structure, overrides, extends --------------------------------------------------------------

def test_anchors_and_merge_keys_share_environment_and_gpus() -> None:
    chat, coder = fixture("anchors")
    assert (chat.context, coder.context) == ("service chat", "service coder")
    assert env(chat) == {"TZ": "Europe/Berlin", "HF_HOME": "/models", "VLLM_USE_V1": "1"}
    assert env(coder) == {"HF_HOME": "/models", "VLLM_USE_V1": "1", "TZ": "UTC"}
    assert at(coder.env["HF_HOME"].span) == (11, 3)  # the anchored definition
    assert chat.gpu is not None and chat.gpu.count == 1
    assert coder.gpu is not None and coder.gpu.count == 1


def test_override_file_merges_and_the_service_is_reported_once() -> None:
    directory = FIXTURES / "override"
    loader = FileLoader(directory)
    ctx = ExtractContext(loader)
    launches = launches_of(directory, "compose.yaml", "compose.override.yaml", loader=loader, ctx=ctx)
    [launch] = launches
    assert values(launch.args) == ["Qwen/Qwen3.6-27B", "--max-num-seqs", "8", "--speculative-config",
                                   '{"method":"mtp","num_speculative_tokens":1}']
    assert launch.source.display.endswith("override/compose.override.yaml")  # where the command comes from
    assert at(launch.span) == (8, 9)
    assert env(launch) == {"HF_HOME": "/models", "VLLM_USE_V1": "0", "VLLM_LOGGING_LEVEL": "DEBUG"}
    assert launch.env["HF_HOME"].span is not None and launch.env["HF_HOME"].span.file.endswith("override/compose.yaml")

    # linting only one of the two files still sees the merged service
    [only_override] = launches_of(directory, "compose.override.yaml")
    assert values(only_override.args) == values(launch.args)
    [only_base] = launches_of(directory, "compose.yaml")
    assert values(only_base.args) == values(launch.args)


def test_reset_and_override_tags_in_override_files() -> None:
    [launch] = fixture("override-reset", "docker-compose.yml")
    assert launch.entry == "python -m sglang.launch_server"
    assert launch.args == []  # command: !reset []
    assert env(launch) == {"HF_HOME": "/scratch/models"}  # environment: !override


def test_extends_from_another_file_and_the_same_file() -> None:
    qwen, small = fixture("extends")
    assert env(qwen) == {"HF_HOME": "/models", "VLLM_USE_V1": "0"}
    assert qwen.image is not None and qwen.image.span is not None and qwen.image.span.file.endswith("extends/common.yaml")
    assert qwen.gpu is not None and qwen.gpu.count == 4
    assert values(small.args) == ["Qwen/Qwen3.6-35B-A3B", "--max-num-seqs", "16"]
    assert env(small) == env(qwen) and small.gpu is not None and small.gpu.count == 4


def test_services_that_are_not_engines_are_not_launches(tmp_path: Path) -> None:
    project = write(tmp_path, {"compose.yaml": (
        "services:\n  web:\n    image: nginx\n  bench:\n    image: vllm/vllm-openai\n"
        "    entrypoint: [python3, bench.py]\n    command: [--model, Qwen/Qwen3.6-27B]\n"
        "  client:\n    image: python:3.12\n    command: [sh, -c, 'curl localhost:8000']\n")})
    assert launches_of(project) == []


def test_a_service_key_is_the_position_when_only_the_image_runs(tmp_path: Path) -> None:
    project = write(tmp_path, {"compose.yaml": "services:\n  vllm:\n    image: vllm/vllm-openai:v0.11.0\n"})
    [launch] = launches_of(project)
    assert launch.args == [] and at(launch.span) == (2, 3)


def test_gpus_attribute_and_device_count_interpolated(tmp_path: Path) -> None:
    project = write(tmp_path, {".env": "GPUS=4\n", "compose.yaml": (
        "services:\n  a:\n    image: vllm/vllm-openai\n    deploy:\n      resources:\n        reservations:\n"
        "          devices:\n            - capabilities: [gpu]\n              count: ${GPUS}\n"
        "  b:\n    image: vllm/vllm-openai\n    gpus: all\n")})
    first, second = launches_of(project)
    assert first.gpu is not None and first.gpu.count == 4 and at(first.gpu.span) == (9, 22)
    assert second.gpu is not None and second.gpu.count is None


# --- the YAML dispatcher -----------------------------------------------------------------------------

def test_claims_compose_shapes_only() -> None:
    assert compose.claims(load_all(SourceFile.from_text("services:\n  a:\n    image: x\n")))
    assert not compose.claims(load_all(SourceFile.from_text("apiVersion: v1\nkind: Pod\n")))
    assert not compose.claims(load_all(SourceFile.from_text("services: [a, b]\n")))
    assert not compose.claims(load_all(SourceFile.from_text("services:\n  a: 1\n")))


def test_compose_content_in_a_generically_named_file(tmp_path: Path) -> None:
    (tmp_path / "stack.yml").write_text("services:\n  llm:\n    image: vllm/vllm-openai\n    command: [m]\n")
    loader = FileLoader(tmp_path)
    source = loader.load(tmp_path / "stack.yml")
    assert source is not None
    [launch] = yamlfiles.extract(source, ExtractContext(loader))
    assert launch.context == "service llm" and values(launch.args) == ["m"]


# --- malformed input -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "needle"), [
    ("services:\n  a:\n    image: x\n    command: [vllm, serve\n", None),
    ("services:\n  a:\n    image: vllm/vllm-openai\n    command: [\"${1}\"]\n", "${1}"),
    ("services:\n  a:\n    image: vllm/vllm-openai\n    command: serve ${MODEL:x}\n", "${MODEL:x}"),
    ("services:\n  a:\n    image: vllm/vllm-openai\n    command: vllm serve (m)\n", "(m)"),
    ("services:\n  a:\n    image: vllm/vllm-openai\n    command: vllm serve 'm\n", None),
    ("services:\n  a:\n    image: vllm/vllm-openai\n    command: [--port, 8000]\n", "8000"),
    ("services: [a, b]\n", "[a, b]"),
    ("- services\n", "- services"),
])
def test_malformed_compose_raises_with_the_offset(tmp_path: Path, text: str, needle: str | None) -> None:
    project = write(tmp_path, {"compose.yaml": text})
    with pytest.raises(Malformed) as raised:
        launches_of(project)
    if needle is not None:
        assert raised.value.offset == text.index(needle)


def test_a_broken_override_is_reported_on_the_override_once(tmp_path: Path) -> None:
    project = write(tmp_path, {
        "compose.yaml": "services:\n  vllm:\n    image: vllm/vllm-openai\n",
        "compose.override.yaml": "services:\n  vllm:\n    command: [\"${BAD:x}\"]\n",
    })
    loader = FileLoader(project)
    ctx = ExtractContext(loader)
    assert launches_of(project, "compose.yaml", loader=loader, ctx=ctx) == []
    with pytest.raises(Malformed):
        launches_of(project, "compose.override.yaml", loader=loader, ctx=ctx)
    [diagnostic] = ctx.issues.items
    assert diagnostic.code == "MTP001" and diagnostic.span.file.endswith("compose.override.yaml")
    assert (diagnostic.span.line, diagnostic.span.column) == (3, 16)


def test_command_inherited_through_extends_points_at_the_other_file(tmp_path: Path) -> None:
    project = write(tmp_path, {
        "base.yaml": "services:\n  llm:\n    image: vllm/vllm-openai\n    command: [Qwen/Qwen3.6-27B, --port, '8000']\n",
        "compose.yaml": "services:\n  app:\n    extends: {file: base.yaml, service: llm}\n",
    })
    [launch] = launches_of(project)
    assert launch.source.display.endswith("base.yaml") and at(launch.span) == (4, 15)
    assert launch.context == "service app"


def test_sh_c_with_positional_arguments(tmp_path: Path) -> None:
    project = write(tmp_path, {"compose.yaml": (
        "services:\n  vllm:\n    image: vllm/vllm-openai\n"
        "    entrypoint: [/bin/sh, -c, 'exec vllm serve \"$$@\"', vllm-serve]\n"
        "    command: [Qwen/Qwen3.6-27B, --max-num-seqs, '8']\n")})
    [launch] = launches_of(project)
    assert values(launch.args) == ["Qwen/Qwen3.6-27B", "--max-num-seqs", "8"]
    assert all(arg.resolved for arg in launch.args)


def test_inspect_reports_an_override_pair_once(inspect: Callable[..., dict[str, Any]]) -> None:
    base = (FIXTURES / "override" / "compose.yaml").read_text()
    override = (FIXTURES / "override" / "compose.override.yaml").read_text()
    data = inspect({"compose.yaml": base, "compose.override.yaml": override}, "compose.yaml", "compose.override.yaml")
    [launch] = data["launches"]
    assert (launch["file"], launch["line"], launch["column"]) == ("compose.override.yaml", 8, 9)
    assert launch["context"] == "service vllm"
    assert launch["env"] == {"HF_HOME": "/models", "VLLM_USE_V1": "0", "VLLM_LOGGING_LEVEL": "DEBUG"}
    assert data["diagnostics"] == []


MOUNTED_CONFIG = """\
services:
  qwen:
    image: vllm/vllm-openai:v0.29.0
    volumes:
      - hf-cache:/root/.cache/huggingface
      - ./deploy/vllm:/etc/vllm:ro
    command: --config /etc/vllm/qwen.yaml --port 8000
  qwen-long-syntax:
    image: lmsysorg/sglang:v0.5.9-cu129
    working_dir: /srv
    volumes:
      - type: bind
        source: ./deploy/sglang.yaml
        target: /srv/server.yaml
        read_only: true
    command: ["python3", "-m", "sglang.launch_server", "--config", "server.yaml"]
volumes:
  hf-cache:
"""


def test_config_file_is_read_through_the_service_bind_mount(inspect: Callable[..., dict[str, Any]]) -> None:
    """``--config /etc/vllm/qwen.yaml`` is the container's path: the file is the one mounted there."""
    files = {
        "compose.yaml": MOUNTED_CONFIG,
        "deploy/vllm/qwen.yaml": "model: Qwen/Qwen3.6-27B\nspeculative-config:\n  method: mtp\n"
                                 "  num_speculative_tokens: 2\nmax-num-seqs: 8\n",
        "deploy/sglang.yaml": "model-path: Qwen/Qwen3.6-35B-A3B\nspeculative-algorithm: NEXTN\n"
                              "speculative-num-steps: 3\n",
    }
    vllm_launch, sglang_launch = inspect(files, "compose.yaml")["launches"]
    assert vllm_launch["options"]["model"] == "Qwen/Qwen3.6-27B"
    assert vllm_launch["options"]["max_num_seqs"] == 8
    assert vllm_launch["config_files"] == ["deploy/vllm/qwen.yaml"]
    assert "open_ended" not in vllm_launch
    tokens = vllm_launch["effective"]["spec_tokens"]
    assert (tokens["file"], tokens["line"], tokens["column"]) == ("deploy/vllm/qwen.yaml", 4, 27)
    # a relative path is taken from working_dir, inside the file mount
    assert sglang_launch["options"]["model_path"] == "Qwen/Qwen3.6-35B-A3B"
    assert sglang_launch["options"]["speculative_num_steps"] == 3
    assert sglang_launch["cli_errors"] == []


def test_config_file_outside_the_checkout_is_unknown_not_an_error(inspect: Callable[..., dict[str, Any]]) -> None:
    """A path only the container has (a named volume, a ConfigMap) leaves the options open, for both
    engines: the file may well exist when the server starts."""
    files = {"compose.yaml": MOUNTED_CONFIG}
    for launch in inspect(files, "compose.yaml")["launches"]:
        assert launch["cli_errors"] == [], launch["engine"]
        assert launch["open_ended"] is True
        assert any("file not found" in note for note in launch["notes"])


def test_a_string_command_split_into_words_keeps_each_characters_position() -> None:
    """A word built from quoted and escaped pieces maps every character it keeps to where that
    character stands in the file, and its end to just past its last character."""
    text = SourceFile.from_text('vllm serve "org/m"\\ x --port=8000 2>/dev/null').whole()
    words = compose.split_command(text)
    assert [word.text for word in words] == ["vllm", "serve", "org/m x", "--port=8000"]
    quoted = words[2]
    assert list(quoted.offsets) == [12, 13, 14, 15, 16, 19, 20, 21]
    assert [text.text[offset] for offset in quoted.offsets[:-1]] == list("org/m x")
    assert words[3].offsets[-1] == 33  # just past "8000"; the `2>` descriptor is not a word
    with pytest.raises(compose.CommandSyntaxError):
        compose.split_command(SourceFile.from_text("echo (x)").whole())
    backquoted = compose.split_command(SourceFile.from_text("a `b\\ c` $(d\\ e)").whole())
    assert [word.text for word in backquoted] == ["a", "`b\\ c`", "$(d\\ e)"]


@settings(max_examples=300, deadline=None)
@given(command=st.text(alphabet="ab-=/.:0$ \t\r\n", max_size=30))
def test_a_command_of_words_and_blanks_splits_as_the_full_reader_splits_it(command: str) -> None:
    """A command with only blanks to act on is cut at its blanks directly: the same words, each
    character at the same offset, as the full reader gives (it reads the command followed by an
    empty quoted word, which sends it through every rule)."""
    plain = compose.split_command(SourceFile.from_text(command).whole())
    general = compose.split_command(SourceFile.from_text(command + " ''").whole())
    assert general[-1].text == ""
    assert [(word.text, list(word.offsets)) for word in plain] == [(word.text, list(word.offsets)) for word in general[:-1]]
