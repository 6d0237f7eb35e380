"""Version evidence: each kind shown by ``inspect`` with its origin, and MTP004 for what stays undecided.

Facts the tests rest on: vLLM registers Qwen3.5/3.6 (``Qwen3_5MoeForConditionalGeneration``) from
0.17.0 (the 0.17.0 wheel's ``model_executor/models/registry.py`` lists it, 0.16.0's does not);
SGLang has ``--mamba-radix-cache-strategy`` from 0.5.14 and dropped ``--mamba-scheduler-strategy``
in 0.5.20 (the flag tables under ``mtplint/engines/data/sglang``); vLLM turns prefix caching on by
default for hybrid models from 0.28 (PR #50991).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import run_cli, write_files

MTP_JSON = '\'{"method": "mtp", "num_speculative_tokens": 2}\''
QWEN36_SCRIPT = ("#!/usr/bin/env bash\nset -euo pipefail\n"
                 f"exec vllm serve Qwen/Qwen3.6-35B-A3B \\\n  --speculative-config {MTP_JSON}\n")


def _evidence(launch: dict[str, Any], kind: str) -> list[dict[str, str]]:
    return [item for item in launch.get("version_evidence", []) if item["kind"] == kind]


def _inspect_text(root: Path, *paths: str, extra: tuple[str, ...] = ()) -> str:
    code, out, err = run_cli(["inspect", *extra, *paths], cwd=root)
    assert code == 0, err
    return out


def test_image_tag_evidence(inspect: Callable[..., Any], tmp_path: Path) -> None:
    compose = ("services:\n  llm:\n    image: vllm/vllm-openai:v0.30.0\n    command: >\n"
               f"      Qwen/Qwen3.6-27B --speculative-config {MTP_JSON}\n")
    (launch,) = inspect({"compose.yaml": compose}, "compose.yaml")["launches"]
    assert (launch["engine_version"], launch["version_source"]) == ("0.30.0", "image")
    assert _evidence(launch, "image") == [{"kind": "image", "spec": "==0.30.0", "origin": "compose.yaml:3:12",
                                           "detail": "release in the image tag"}]
    assert "version evidence   image ==0.30.0: release in the image tag  @ compose.yaml:3:12" in _inspect_text(
        tmp_path, "compose.yaml")


def test_pin_evidence_bounds_both_ways(inspect: Callable[..., Any], tmp_path: Path) -> None:
    files = {"requirements.txt": "# serving\nvllm>=0.20.0,<0.28\nfastapi==0.115.6\n", "serve.sh": QWEN36_SCRIPT}
    (launch,) = inspect(files, "serve.sh")["launches"]
    assert launch["possible_versions"] == {"min": "0.20.0", "below": "0.28"}
    assert [(item["spec"], item["origin"]) for item in _evidence(launch, "pin")] == [
        (">=0.20.0", "requirements.txt:2:1"), ("<0.28", "requirements.txt:2:1")]
    text = _inspect_text(tmp_path, "serve.sh")
    assert "version range      ≥0.20.0, <0.28" in text
    assert "version evidence   pin <0.28: version pin  @ requirements.txt:2:1" in text


def test_flag_evidence_added_and_removed(inspect: Callable[..., Any], tmp_path: Path) -> None:
    script = ("#!/bin/sh\npython3 -m sglang.launch_server --model-path Qwen/Qwen3-8B \\\n"
              "  --mamba-radix-cache-strategy extra_buffer --port 30000\n")
    removed = ("#!/bin/sh\npython3 -m sglang.launch_server --model-path Qwen/Qwen3-8B \\\n"
               "  --mamba-scheduler-strategy extra_buffer --port 30000\n")
    added_launch, removed_launch = inspect({"added.sh": script, "removed.sh": removed}, "added.sh", "removed.sh")["launches"]
    # a flag that exists from 0.5.14 on: the launch runs 0.5.14 or later
    assert _evidence(added_launch, "flag") == [{
        "kind": "flag", "spec": ">=0.5.14", "origin": "added.sh:3:3",
        "detail": "`--mamba-radix-cache-strategy` is not accepted before sglang 0.5.14"}]
    assert added_launch["possible_versions"]["min"] == "0.5.14"
    # a flag removed in 0.5.20 bounds the range above (the removal rules still report the flag)
    assert _evidence(removed_launch, "flag") == [{
        "kind": "flag", "spec": "<0.5.20", "origin": "removed.sh:3:3",
        "detail": "`--mamba-scheduler-strategy` is not accepted from sglang 0.5.20 on"}]
    assert removed_launch["possible_versions"]["below"] == "0.5.20"
    assert "version evidence   flag <0.5.20" in _inspect_text(tmp_path, "removed.sh")


def test_model_architecture_evidence(inspect: Callable[..., Any], tmp_path: Path) -> None:
    (launch,) = inspect({"serve.sh": QWEN36_SCRIPT}, "serve.sh")["launches"]
    (model,) = _evidence(launch, "model")
    assert model["spec"] == ">=0.17.0" and model["origin"] == "serve.sh:3:17"
    assert "Qwen3_5MoeForConditionalGeneration" in model["detail"] and "0.16.0 does not" in model["detail"]
    assert launch["possible_versions"] == {"min": "0.17.0", "below": None}
    assert "version evidence   model >=0.17.0" in _inspect_text(tmp_path, "serve.sh")


def test_model_evidence_for_mtp_only_applies_to_mtp_launches(inspect: Callable[..., Any]) -> None:
    """llama.cpp serves Qwen3.6 GGUFs before b9180, but drafts with their MTP head only from it."""
    files = {"mtp.sh": "#!/bin/sh\nexec llama-server -m /models/Qwen3.6-27B-MTP-Q4_K_M.gguf --spec-type draft-mtp -np 1\n",
             "plain.sh": "#!/bin/sh\nexec llama-server -m /models/Qwen3.6-27B-Q4_K_M.gguf -np 1\n"}
    mtp, plain = inspect(files, "mtp.sh", "plain.sh")["launches"]
    assert [item["spec"] for item in _evidence(mtp, "model")] == [">=b9180"]
    assert _evidence(plain, "model") == []


def test_floating_tag_evidence(inspect: Callable[..., Any]) -> None:
    files = {"k8s.yaml": ("apiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec:\n  containers:\n"
                          "    - name: sglang\n      image: lmsysorg/sglang:nightly-dev-cu13\n"
                          "      command: [python3, -m, sglang.launch_server]\n"
                          "      args: [--model-path, Qwen/Qwen3-8B]\n"),
             "compose.yaml": "services:\n  llm:\n    image: vllm/vllm-openai\n    command: Qwen/Qwen3-8B\n"}
    launches = {launch["file"]: launch for launch in inspect(files, "k8s.yaml", "compose.yaml")["launches"]}
    (sglang,) = _evidence(launches["k8s.yaml"], "tag")
    assert sglang["spec"] == ">=0.5.23" and sglang["origin"] == "k8s.yaml:7:14"
    # an image without a tag is `latest` to docker
    (vllm,) = _evidence(launches["compose.yaml"], "tag")
    assert vllm["spec"] == ">=0.33.0"
    assert launches["compose.yaml"]["possible_versions"] == {"min": "0.33.0", "below": None}


def test_engine_version_is_config_evidence(inspect: Callable[..., Any]) -> None:
    (launch,) = inspect({"serve.sh": QWEN36_SCRIPT}, "serve.sh", extra=["--engine-version", "vllm=0.30.0"])["launches"]
    assert launch["version_evidence"] == [{"kind": "config", "spec": "==0.30.0",
                                           "origin": "--engine-version / engine-versions", "detail": "given by the user"}]


def _check(root: Path, *extra: str) -> list[dict[str, Any]]:
    code, out, err = run_cli(["check", "--output-format", "json", "--isolated", "--no-cache", *extra, "."], cwd=root)
    assert code in (0, 1), err
    findings: list[dict[str, Any]] = json.loads(out)
    return findings


def test_undecided_info_names_rules_and_range_and_engine_version_silences_it(tmp_path: Path) -> None:
    write_files(tmp_path, {"serve.sh": QWEN36_SCRIPT})
    unpinned = _check(tmp_path)
    (info,) = [finding for finding in unpinned if finding["code"] == "MTP004"]
    assert "MTP102" not in {finding["code"] for finding in unpinned}
    message = info["message"]
    assert "possible: ≥0.17.0; told from: model" in message
    assert "MTP102 (default `prefix_caching`) would fire on vLLM 0.28.0 … <0.33.0" in message
    assert "`--engine-version vllm=0.33.0`" in message and "configuration `engine-versions`" in message
    assert "requirements.txt pin (`vllm==0.33.0`)" in message and "`vllm/vllm-openai:v0.33.0`" in message
    # a release in the range where it fires: the rule decides, and there is nothing left to say
    pinned = {finding["code"] for finding in _check(tmp_path, "--engine-version", "vllm=0.30.0")}
    assert "MTP004" not in pinned and "MTP102" in pinned
    older = {finding["code"] for finding in _check(tmp_path, "--engine-version", "vllm=0.27.1")}
    assert "MTP004" not in older and "MTP102" not in older


def test_configuration_engine_versions_silences_the_info(tmp_path: Path) -> None:
    write_files(tmp_path, {"serve.sh": QWEN36_SCRIPT,
                           "pyproject.toml": '[tool.mtplint]\nengine-versions = {vllm = "0.30.0"}\n'})
    code, out, err = run_cli(["check", "--output-format", "json", "--no-cache", "."], cwd=tmp_path)
    assert code == 1, err
    codes = {finding["code"] for finding in json.loads(out)}
    assert "MTP004" not in codes and "MTP102" in codes, err


def test_a_pinned_range_older_than_the_model_stands(inspect: Callable[..., Any]) -> None:
    """vllm<0.17 cannot serve Qwen3.6: the pin is kept (the launch then fails, which the engine's own
    error says); the model does not move the range outside what the repository pins."""
    files = {"requirements.txt": "vllm>=0.11.0,<0.17\n", "serve.sh": QWEN36_SCRIPT}
    (launch,) = inspect(files, "serve.sh")["launches"]
    assert launch["possible_versions"] == {"min": "0.11.0", "below": "0.17"}
    assert _evidence(launch, "model") == []


def test_catalog_first_releases_are_known_versions_or_older() -> None:
    """Every first release the catalog records compares with the engine's release numbers."""
    from mtplint.catalogs import SHIPPED
    from mtplint.engines import engine_for
    from mtplint.versions import compare

    for entry in SHIPPED.model_entries():
        for engine, first in (entry.get("first_release") or {}).items():
            newest = engine_for(engine).known_versions()[-1]
            assert compare(first["version"], newest) <= 0, (entry["id"], engine)
            assert first["source"], entry["id"]


def test_which_tags_follow_the_newest_build() -> None:
    from mtplint.extract.launch import image_floating

    floating = ["vllm/vllm-openai", "vllm/vllm-openai:latest", "vllm/vllm-openai:cu130-nightly",
                "lmsysorg/sglang:dev-cu13", "ghcr.io/ggml-org/llama.cpp:server-cuda", "localhost:5000/vllm-openai"]
    pinned_or_custom = ["ghcr.io/ggml-org/llama.cpp:server-cuda-b9180", "vllm/vllm-openai:v0.30.0", "myorg/vllm:v2-dev",
                        "vllm/vllm-openai@sha256:" + "ab" * 32]
    assert [image for image in floating if not image_floating(image)] == []
    assert [image for image in pinned_or_custom if image_floating(image)] == []


def test_pin_file_names_are_matched_as_fnmatch_matches_them() -> None:
    """A pin file's name pattern is matched by its ends, without compiling it (a Dockerfile's
    directory always holds a name of a pin file's): the same names as ``fnmatch.filter``."""
    import fnmatch

    from mtplint.versions import PIN_FILES, _matching

    names = ["Dockerfile", "Dockerfile.cuda", "dockerfile", "x.Dockerfile", ".Dockerfile", "Dockerfile.Dockerfile",
             "requirements.txt", "requirements-dev.txt", "requirements.txt.bak", "requirementstxt", "requirements",
             "pyproject.toml", "pyproject.tomlx", "apyproject.toml", "constraints.txt", "constraints-2.txt",
             "a\nDockerfile", "Dockerfile\n", ""]
    for pattern in (*(pattern.rpartition("/")[2] for pattern in PIN_FILES), "*", "*.txt", "a*b", "[ab]*", "?.txt",
                    "*a*", "requirements*.txt"):
        assert _matching(names, pattern) == fnmatch.filter(names, pattern), pattern
