"""The command line: `inspect` contract, MTP001 for malformed files, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli

COMPOSE = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.11.0
    environment:
      VLLM_USE_V1: "1"
    command:
      - Qwen/Qwen3.6-27B
      - --speculative-config
      - '{"method":"mtp","num_speculative_tokens":2}'
"""


def test_inspect_json_follows_the_contract(inspect: Callable[..., Any]) -> None:
    data = inspect({"compose.yaml": COMPOSE}, "compose.yaml")
    [launch] = data["launches"]
    assert (launch["file"], launch["line"], launch["column"]) == ("compose.yaml", 7, 9)
    assert launch["engine"] == "vllm" and launch["engine_version"] == "0.11.0"
    assert launch["argv"] == ["vllm", "serve", "Qwen/Qwen3.6-27B", "--speculative-config",
                              '{"method":"mtp","num_speculative_tokens":2}']
    assert launch["env"] == {"VLLM_USE_V1": "1"}
    assert launch["options"]["model"] == "Qwen/Qwen3.6-27B"
    assert launch["options"]["speculative_config"] == {"method": "mtp", "num_speculative_tokens": 2}
    assert launch["cli_errors"] == []
    effective = launch["effective"]
    assert effective["model"] == {"value": "Qwen/Qwen3.6-27B", "origin": "explicit", "line": 7, "column": 9}
    assert effective["spec_method"]["value"] == "mtp" and effective["spec_method"]["line"] == 9
    assert effective["spec_tokens"]["value"] == 2
    for name in ("prefix_caching", "kv_cache_dtype", "memory_fraction", "max_concurrency", "tensor_parallel", "gpu"):
        assert name in effective, name
        assert effective[name]["origin"] in ("explicit", "config-file", "env", "default", "inferred")


def test_malformed_file_is_mtp001_and_others_are_still_read(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text(COMPOSE)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "compose.yaml").write_text("services:\n  vllm:\n    command: [vllm, serve\n")
    (tmp_path / "broken" / "launch.py").write_text("from vllm import LLM\nLLM(model='m', speculative_config={\n")
    code, out, err = run_cli(["inspect", "--format", "json", "."], cwd=tmp_path)
    assert code == 0, err
    data = json.loads(out)
    assert [launch["file"] for launch in data["launches"]] == ["compose.yaml"]
    problems = {(d["file"], d["code"]) for d in data["diagnostics"]}
    assert problems == {("broken/compose.yaml", "MTP001"), ("broken/launch.py", "MTP001")}
    for diagnostic in data["diagnostics"]:
        assert diagnostic["line"] >= 2

    code, out, _ = run_cli(["check", "--select", "MTP001", "."], cwd=tmp_path)
    assert code == 1
    assert "broken/compose.yaml:" in out and "MTP001" in out


def test_binary_and_undecodable_files_do_not_crash(tmp_path: Path) -> None:
    (tmp_path / "serve.sh").write_bytes(b"#!/bin/sh\nvllm serve \xff\xfe\x00 model\n")
    (tmp_path / "compose.yaml").write_bytes("\ufeffservices:\r\n  v:\r\n    image: vllm/vllm-openai\r\n"
                                            "    command: [Qwen/Qwen3.6-27B]\r\n".encode())
    code, out, err = run_cli(["inspect", "--format", "json", "."], cwd=tmp_path)
    assert code == 0, err
    data = json.loads(out)
    assert [launch["file"] for launch in data["launches"]] == ["compose.yaml"]
    assert data["launches"][0]["effective"]["model"]["line"] == 4
    assert [d["file"] for d in data["diagnostics"]] == ["serve.sh"]


def test_check_on_clean_tree_exits_zero_and_usage_errors_exit_two(tmp_path: Path) -> None:
    plain = COMPOSE.replace('      VLLM_USE_V1: "1"\n', '      HF_HOME: /models\n')
    (tmp_path / "compose.yaml").write_text(plain.replace("      - --speculative-config\n", "").replace(
        "      - '{\"method\":\"mtp\",\"num_speculative_tokens\":2}'\n", ""))
    code, out, _ = run_cli(["check", "."], cwd=tmp_path)
    assert code == 0 and "All checks passed!" in out, out
    (tmp_path / "compose.yaml").write_text(plain)
    # an info finding (no GPU identity: MTP003) is shown but does not fail the run unless asked
    code, out, _ = run_cli(["check", "."], cwd=tmp_path)
    assert code == 0 and "MTP003" in out, out
    code, _, _ = run_cli(["check", "--exit-non-zero-on-info", "."], cwd=tmp_path)
    assert code == 1
    code, _, err = run_cli(["check", "--engine-version", "vllm", "."], cwd=tmp_path)
    assert code == 2 and "ENGINE=VERSION" in err
    code, _, _ = run_cli(["check", "--no-such-flag"], cwd=tmp_path)
    assert code == 2
    code, _, err = run_cli(["check", "missing.yaml"], cwd=tmp_path)
    assert code == 2 and "missing.yaml" in err


def test_engine_version_flag_overrides_the_image_tag(inspect: Callable[..., Any]) -> None:
    data = inspect({"compose.yaml": COMPOSE}, "compose.yaml", extra=["--engine-version", "vllm=0.33.0"])
    assert data["launches"][0]["engine_version"] == "0.33.0"


def test_gpu_flag_and_directive(inspect: Callable[..., Any]) -> None:
    data = inspect({"compose.yaml": "# mtplint: gpu=rtx-4090x2\n" + COMPOSE}, "compose.yaml")
    gpu = data["launches"][0]["effective"]["gpu"]
    assert (gpu["value"], gpu["count"], gpu["line"]) == ("rtx-4090", 2, 1)
    data = inspect({"compose.yaml": COMPOSE}, "compose.yaml", extra=["--gpu", "h100-sxm"])
    assert data["launches"][0]["effective"]["gpu"]["value"] == "h100-sxm"


def test_text_inspect_is_readable(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text(COMPOSE)
    code, out, _ = run_cli(["inspect", "compose.yaml"], cwd=tmp_path)
    assert code == 0
    assert out.startswith("compose.yaml:7:9: vllm 0.11.0")
    assert "spec_method" in out and "mtp" in out


def test_console_script_starts_without_heavy_imports() -> None:
    completed = subprocess.run([sys.executable, "-X", "importtime", "-c", "import mtplint.cli"],
                               capture_output=True, text=True, check=True)
    imported = {line.rsplit("|", 1)[-1].strip() for line in completed.stderr.splitlines() if "|" in line}
    assert not imported & {"libcst", "jsonschema", "ruamel.yaml", "tree_sitter", "yaml"}


def test_flags_of_some_versions_narrow_an_unpinned_version(inspect: Callable[..., Any]) -> None:
    script = ("python3 -m sglang.launch_server --model-path Qwen/Qwen3.6-27B --speculative-algorithm NEXTN "
              "--mamba-radix-cache-strategy extra_buffer\n")
    launch = inspect({"serve.sh": script}, "serve.sh")["launches"][0]
    # --mamba-radix-cache-strategy exists from SGLang 0.5.14: older releases are ruled out
    assert launch["assumed_version"] is True and launch["version_source"] == "flags"
    assert launch["possible_versions"]["min"] == "0.5.14"
    assert launch["cli_errors"] == []


def test_removed_flags_do_not_pull_the_version_down(inspect: Callable[..., Any]) -> None:
    script = "vllm serve Qwen/Qwen3-8B --speculative-model '[ngram]' --num-speculative-tokens 4\n"
    launch = inspect({"serve.sh": script}, "serve.sh")["launches"][0]
    assert launch["assumed_version"] is True and launch["engine_version"] == "0.33.0"
    assert {e["kind"] for e in launch["cli_errors"]} == {"unknown"}


LLAMA_SCRIPTS = {
    # flags every known build reads: nothing to narrow
    "plain.sh": "llama-server -m /models/q.gguf --port 8080 -c 8192\n",
    # --spec-draft-* names exist from b8955
    "renamed.sh": "llama-server -m /models/q.gguf --spec-type draft-mtp --spec-draft-n-max 3\n",
    # --spec-draft-backend-sampling from b9261: the first known build with it is b9464
    "sampling.sh": "llama-server -m /models/q.gguf --spec-draft-backend-sampling --spec-draft-n-max 2\n",
    # llama-server ignores a variable it does not know: no narrowing, whatever the table
    "env.sh": "LLAMA_ARG_SPEC_DRAFT_BACKEND_SAMPLING=1 llama-server -m /models/q.gguf\n",
    # a flag removed at b8955 (a stub that takes no value since), a word no build knows, an
    # underscore spelling, and arguments mtplint cannot see
    "removed.sh": "llama-server -m /models/q.gguf --draft-max 3 --port 8080\n",
    "typo.sh": 'llama-server -m /models/q.gguf --not-a-flag 3 --spec_draft_n_max 2 "$@"\n',
}


def test_llama_cpp_builds_that_read_the_same_flags_narrow_as_if_each_were_tried(
        inspect: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """Narrowing parses a launch once per distinct llama.cpp option table (four tables for ten
    builds), and not at all at a table that reads the launch's words as the newest one does; it
    must find the versions that parsing at every build finds."""
    from mtplint.engines.llamacpp import LlamaCppEngine

    grouped = inspect(LLAMA_SCRIPTS, *LLAMA_SCRIPTS)["launches"]
    monkeypatch.setattr(LlamaCppEngine, "flags_key", lambda self, version: version)
    monkeypatch.setattr(LlamaCppEngine, "flags_reading", lambda self, launch, version: None)
    one_by_one = inspect(LLAMA_SCRIPTS, *LLAMA_SCRIPTS)["launches"]
    assert grouped == one_by_one
    lows = {launch["file"]: (launch["version_source"], launch.get("possible_versions", {}).get("min"))
            for launch in grouped}
    assert lows["renamed.sh"] == ("flags", "b8955")
    assert lows["sampling.sh"] == ("flags", "b9464")
    assert lows["env.sh"] == ("assumed", None)
    assert lows["plain.sh"] == ("assumed", None)


def test_an_unpinned_launch_is_parsed_once_per_version_it_could_run(
        inspect: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The parse at the assumed version serves both the report and narrowing; each older release is
    tried once, and a malformed ``--config`` file is reported once."""
    from mtplint.engines.vllm import VllmEngine, table_versions

    parsed_at: list[str] = []
    parse = VllmEngine.parse

    def counting(self: VllmEngine, launch: Any, version: Any, ctx: Any) -> Any:
        parsed_at.append(version.version)
        return parse(self, launch, version, ctx)

    monkeypatch.setattr(VllmEngine, "parse", counting)
    files = {"serve.sh": "vllm serve Qwen/Qwen3-8B --config bad.yaml --max-num-seqs 8\n", "bad.yaml": "a: [1\n"}
    [launch] = inspect(files, "serve.sh")["launches"]
    assert launch["version_source"] == "assumed" and launch["engine_version"] == table_versions()[-1]
    assert sorted(parsed_at) == sorted(table_versions())
    _, out, _ = run_cli(["check", "--output-format", "concise", "--no-cache", "serve.sh"], cwd=tmp_path)
    assert out.count("MTP001") == 1, out


PYTHON_API_SCRIPTS = {
    # keywords every release takes
    "plain.py": 'from vllm import LLM\nllm = LLM(model="Qwen/Qwen3-8B", max_num_seqs=8)\n',
    # attention_config from 0.16.0
    "newer.py": 'from vllm import LLM\nllm = LLM(model="Qwen/Qwen3-8B", attention_config={})\n',
    # a keyword no release takes, one removed at 0.33.0, and arguments mtplint cannot see
    "typo.py": ('from vllm import LLM\nextra = {}\n'
                'llm = LLM(model="Qwen/Qwen3-8B", not_a_keyword=1, enable_mamba_fine_grained_prefix_cache=True, **extra)\n'),
    "sglang.py": 'import sglang as sgl\nengine = sgl.Engine(model_path="Qwen/Qwen3-8B", not_a_field=1, mem_fraction_static=0.8)\n',
}


def test_python_api_launches_narrow_as_if_each_version_were_parsed(
        inspect: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """Keyword arguments are rejected by name alone: narrowing tells without parsing at each release,
    and finds what parsing at each finds."""
    from mtplint.engines.sglang import SGLangEngine
    from mtplint.engines.vllm import VllmEngine

    quick = inspect(PYTHON_API_SCRIPTS, *PYTHON_API_SCRIPTS)["launches"]
    for engine in (VllmEngine, SGLangEngine):
        monkeypatch.setattr(engine, "flags_reading", lambda self, launch, version: None)
    parsed_each = inspect(PYTHON_API_SCRIPTS, *PYTHON_API_SCRIPTS)["launches"]
    assert quick == parsed_each
    found = {launch["file"]: (launch["version_source"], launch.get("possible_versions", {}).get("min"))
             for launch in quick}
    assert found["plain.py"] == ("assumed", None)
    assert found["newer.py"] == ("flags", "0.16.0")
    assert found["typo.py"] == ("assumed", None)
    assert found["sglang.py"][0] == "assumed"


SGLANG_LAUNCH = "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B"
SGLANG_SCRIPTS = {
    # --mamba-radix-cache-strategy from 0.5.14
    "newer.sh": f"{SGLANG_LAUNCH} --mamba-radix-cache-strategy extra_buffer --quantization fp8\n",
    # --cuda-graph-bs is gone at 0.5.20 (the newest rejects it: no narrowing); --enable-hicache from 0.5.23
    "gone.sh": f"{SGLANG_LAUNCH} --cuda-graph-bs 8 --enable-hicache\n",
    # an abbreviation, an ambiguous prefix, a boolean word after a switch, words after --
    "abbrev.sh": f"{SGLANG_LAUNCH} --mem-fraction 0.8 --enable-d 1 --disable-cuda-graph true -- --tp 2\n",
    # a word no release knows, an explicit value, arguments mtplint cannot see
    "typo.sh": f'{SGLANG_LAUNCH} --not-a-flag 3 --context-length=4096 --speculative-algorithm NEXTN "$@"\n',
    # the serve pre-scan: always parsed at each release
    "serve.sh": "sglang serve --model-path Qwen/Qwen3-8B --enable-hicache\n",
}


def test_sglang_command_lines_narrow_as_if_each_version_were_parsed(
        inspect: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """A release that classifies every word alike (same actions, arities, types and choices) rejects
    the same words: narrowing need not parse there, and must find what parsing at each finds."""
    from mtplint.engines.sglang import SGLangEngine

    parses: list[str] = []
    parse = SGLangEngine.parse

    def counting(self: SGLangEngine, launch: Any, version: Any, ctx: Any) -> Any:
        parses.append(launch.source.display)
        return parse(self, launch, version, ctx)

    monkeypatch.setattr(SGLangEngine, "parse", counting)
    quick = inspect(SGLANG_SCRIPTS, *SGLANG_SCRIPTS)["launches"]
    quick_parses = len(parses)
    monkeypatch.setattr(SGLangEngine, "flags_reading", lambda self, launch, version: None)
    parses.clear()
    parsed_each = inspect(SGLANG_SCRIPTS, *SGLANG_SCRIPTS)["launches"]
    assert quick == parsed_each
    assert quick_parses < len(parses)
    found = {launch["file"]: (launch["version_source"], launch.get("possible_versions", {}).get("min"))
             for launch in quick}
    assert found["newer.sh"] == ("flags", "0.5.14")
    # --enable-hicache exists only in the newest release: that is the release in play (the removed
    # --cuda-graph-bs is then the removal rules' business)
    assert found["gone.sh"] == ("flags", "0.5.23")
    assert found["typo.sh"] == ("assumed", None)
