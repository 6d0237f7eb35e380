"""Compose services built from a Dockerfile, kustomize's container order, files named on the command line.

Docker facts: ``build: DIR`` builds ``DIR/Dockerfile``; ``build.dockerfile`` is relative to the
context; ``build.args`` replace ``ARG`` defaults; ``build.target`` stops at a stage, else the last
one is built; a stage without ENTRYPOINT keeps its base image's; a service ``entrypoint`` drops the
image's CMD (compose spec, "build" and "entrypoint"). Kustomize v5 merges a strategic-merge patch's
``containers`` by ``name`` through kyaml's ``merge2.Merge``: the resource's elements keep their
order and the patch's new ones are appended (kustomize ``kyaml/yaml/merge2/merge2.go`` and
``kyaml/yaml/walk/associative_sequence.go``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import run_cli, write_files

SPEC = '\'{"method": "mtp", "num_speculative_tokens": 2}\''


def _argv(launch: dict[str, Any]) -> list[str]:
    return [word if isinstance(word, str) else word["unresolved"] for word in launch["argv"]]


def test_build_dot_runs_the_dockerfile_cmd_on_its_base_image(inspect: Callable[..., Any]) -> None:
    files = {
        "compose.yaml": "services:\n  sglang:\n    build: .\n    environment:\n      SGLANG_ENABLE_SPEC_V2: '1'\n",
        "Dockerfile": ('FROM lmsysorg/sglang:v0.5.9-cu129\nRUN pip install --no-cache-dir prometheus-client\n'
                       'CMD ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", '
                       '"--speculative-algorithm", "EAGLE3", "--port", "30000"]\n'),
    }
    launches = {launch["file"]: launch for launch in inspect(files, "compose.yaml")["launches"]}
    launch = launches["compose.yaml"]
    assert (launch["engine"], launch["engine_version"], launch["version_source"]) == ("sglang", "0.5.9", "image")
    assert launch["image"] == "lmsysorg/sglang:v0.5.9-cu129"
    assert _argv(launch)[:3] == ["python3", "-m", "sglang.launch_server"]
    # the service's environment reaches the Dockerfile's command
    assert launch["env"]["SGLANG_ENABLE_SPEC_V2"] == "1"
    # the words keep their place in the Dockerfile
    assert launch["effective"]["model"]["file"] == "Dockerfile"
    assert launch["version_evidence"][0]["origin"] == "Dockerfile:1:6"


def test_build_args_override_arg_defaults_in_from_and_pins(inspect: Callable[..., Any]) -> None:
    files = {
        "compose.yaml": ("services:\n  llm:\n    build:\n      context: ./docker\n      dockerfile: vllm.Dockerfile\n"
                         "      args:\n        - VLLM_VERSION=0.28.0\n"
                         f"    command: >\n      Qwen/Qwen3.6-27B --speculative-config {SPEC}\n"),
        "docker/vllm.Dockerfile": ("ARG CUDA=12.8.1\nFROM nvidia/cuda:${CUDA}-devel-ubuntu22.04 AS base\n"
                                   "FROM base AS final\nARG VLLM_VERSION=0.20.0\n"
                                   'RUN uv pip install --system "vllm==${VLLM_VERSION}"\n'
                                   'ENTRYPOINT ["vllm", "serve"]\n'),
    }
    (launch,) = inspect(files, "compose.yaml")["launches"]
    assert launch["image"] == "nvidia/cuda:12.8.1-devel-ubuntu22.04"
    assert (launch["engine_version"], launch["version_source"]) == ("0.28.0", "pin")
    assert launch["version_evidence"] == [{"kind": "pin", "spec": "==0.28.0", "origin": "docker/vllm.Dockerfile:5:5",
                                           "detail": "version pin"}]
    assert _argv(launch)[:3] == ["vllm", "serve", "Qwen/Qwen3.6-27B"]


def test_build_target_picks_the_stage_and_range_pins(inspect: Callable[..., Any]) -> None:
    files = {
        "compose.yaml": ("services:\n  vllm:\n    build:\n      context: .\n      target: vllm\n"
                         f"    command: >\n      Qwen/Qwen3.6-27B --speculative-config {SPEC}\n"),
        "Dockerfile": ("ARG VLLM_TAG=v0.27.1\nFROM lmsysorg/sglang:v0.5.12 AS sglang\n"
                       "FROM vllm/vllm-openai:${VLLM_TAG} AS vllm\nFROM python:3.12 AS tools\n"),
    }
    (launch,) = inspect(files, "compose.yaml")["launches"]
    assert (launch["engine"], launch["entry"]) == ("vllm", "image vllm/vllm-openai (vllm serve)")
    assert (launch["engine_version"], launch["version_source"]) == ("0.27.1", "image")


def test_build_context_requirements_pin_the_version(inspect: Callable[..., Any]) -> None:
    files = {
        "compose.yaml": f"services:\n  api:\n    build: ./server\n    command: >\n      vllm serve Qwen/Qwen3-8B --speculative-config {SPEC}\n",
        "server/Dockerfile": "FROM python:3.12-slim\nCOPY requirements.txt .\nRUN pip install -r requirements.txt\n",
        "server/requirements.txt": 'vllm[flashinfer]>=0.20.0\n',
    }
    (launch,) = inspect(files, "compose.yaml")["launches"]
    assert launch["possible_versions"] == {"min": "0.20.0", "below": None}
    assert launch["version_evidence"][0]["origin"] == "server/requirements.txt:1:1"


def test_a_build_context_beside_the_compose_file_gives_its_pin_once(inspect: Callable[..., Any]) -> None:
    files = {
        "compose.yaml": f"services:\n  api:\n    build: .\n    command: >\n      vllm serve Qwen/Qwen3-8B --speculative-config {SPEC}\n",
        "Dockerfile": "FROM python:3.12-slim\nCOPY requirements.txt .\nRUN pip install -r requirements.txt\n",
        "requirements.txt": 'vllm[flashinfer]>=0.20.0\n',
    }
    (launch,) = [launch for launch in inspect(files, "compose.yaml")["launches"] if launch["file"] == "compose.yaml"]
    assert [item["origin"] for item in launch["version_evidence"]] == ["requirements.txt:1:1"]


def test_service_entrypoint_drops_the_stage_cmd(inspect: Callable[..., Any]) -> None:
    files = {
        "compose.yaml": ("services:\n  llm:\n    build: .\n    entrypoint: [vllm, serve, Qwen/Qwen3-8B]\n"),
        "Dockerfile": 'FROM vllm/vllm-openai:v0.30.0\nCMD ["--max-model-len", "4096"]\n',
    }
    (launch,) = [launch for launch in inspect(files, "compose.yaml")["launches"] if launch["file"] == "compose.yaml"]
    assert _argv(launch) == ["vllm", "serve", "Qwen/Qwen3-8B"]
    assert launch["engine_version"] == "0.30.0"


def test_a_missing_or_remote_build_context_is_no_launch_evidence(inspect: Callable[..., Any]) -> None:
    files = {"compose.yaml": ("services:\n  a:\n    build: ./nowhere\n    command: vllm serve Qwen/Qwen3-8B\n"
                              "  b:\n    build: https://github.com/example/serving.git#main\n"
                              "    command: vllm serve Qwen/Qwen3-8B\n")}
    launches = inspect(files, "compose.yaml")["launches"]
    assert [launch["version_source"] for launch in launches] == ["assumed", "assumed"]


def test_an_edited_dockerfile_invalidates_the_cached_result(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.delenv("MTPLINT_CACHE_DIR", raising=False)
    write_files(tmp_path, {
        "compose.yaml": f"services:\n  llm:\n    build: .\n    command: >\n      Qwen/Qwen3.6-27B --speculative-config {SPEC}\n",
        "Dockerfile": "FROM vllm/vllm-openai:v0.27.1\n",
    })

    def codes() -> set[str]:
        code, out, err = run_cli(["check", "--output-format", "json", "--isolated", "compose.yaml"], cwd=tmp_path)
        assert code in (0, 1), err
        return {finding["code"] for finding in json.loads(out)}

    assert "MTP102" not in codes()  # 0.27.1: a hybrid's prefix caching is off by default
    (tmp_path / "Dockerfile").write_text("FROM vllm/vllm-openai:v0.30.0\n")
    assert "MTP102" in codes()  # read again, not the cached answer for 0.27.1
    assert (tmp_path / ".mtplint_cache").is_dir()


def test_kustomize_keeps_container_order_and_appends_new_ones(inspect: Callable[..., Any]) -> None:
    base = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: llm}\nspec:\n  template:\n    spec:\n"
            "      containers:\n        - name: proxy\n          image: envoyproxy/envoy:v1.31.0\n"
            "        - name: vllm\n          image: vllm/vllm-openai:v0.30.0\n          args: [Qwen/Qwen3-8B]\n")
    patch = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: llm}\nspec:\n  template:\n    spec:\n"
             "      containers:\n        - name: exporter\n          image: prom/node-exporter:v1.8.2\n"
             "        - name: vllm\n          resources: {limits: {nvidia.com/gpu: 1}}\n")
    overlay = ("resources: [../base]\npatches:\n  - path: patch.yaml\n"
               "  - target: {kind: Deployment, name: llm}\n    patch: |-\n"
               "      - op: add\n        path: /spec/template/spec/containers/1/args/-\n        value: --speculative-config\n"
               "      - op: add\n        path: /spec/template/spec/containers/1/args/-\n"
               "        value: '{\"method\": \"eagle3\", \"model\": \"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\", "
               "\"num_speculative_tokens\": 3}'\n")
    files = {"base/deployment.yaml": base, "base/kustomization.yaml": "resources: [deployment.yaml]\n",
             "overlay/patch.yaml": patch, "overlay/kustomization.yaml": overlay}
    (launch,) = inspect(files, "overlay/kustomization.yaml")["launches"]
    # proxy, vllm, exporter: index 1 is still vllm, so the speculative config lands on it
    assert launch["context"] == "Deployment/llm container vllm"
    assert launch["options"]["speculative_config"]["method"] == "eagle3"
    assert launch["effective"]["gpu"]["count"] == 1


def test_strategic_merge_order_of_containers() -> None:
    from mtplint.extract.kustomize import strategic_merge
    from mtplint.extract.yamlpos import load_all
    from mtplint.source import SourceFile

    def node(text: str) -> Any:
        (document,) = load_all(SourceFile.from_text(text, "x.yaml"))
        return document

    base = node("containers:\n  - {name: a, image: a:1}\n  - {name: b, image: b:1}\n  - {name: c, image: c:1}\n")
    patch = node("containers:\n  - {name: new, image: n:1}\n  - {name: c, image: c:2}\n  - {name: a, image: a:2}\n")
    merged = strategic_merge(base, patch)
    containers = merged.get("containers")
    assert [(item.get("name").str, item.get("image").str) for item in containers.items] == [
        ("a", "a:2"), ("b", "b:1"), ("c", "c:2"), ("new", "n:1")]


def test_file_named_explicitly_is_classified_by_content(tmp_path: Path) -> None:
    manifest = ("apiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec:\n  containers:\n    - name: vllm\n"
                f"      image: vllm/vllm-openai:v0.30.0\n      args: [Qwen/Qwen3-8B, --speculative-config, {SPEC}]\n")
    write_files(tmp_path, {
        "deploy/vllm.yaml.tpl": manifest,
        "bin/run-server": f"#!/usr/bin/env bash\nset -euo pipefail\nexec vllm serve Qwen/Qwen3-8B --speculative-config {SPEC}\n",
        "conf/serve.conf": f"# sourced by the supervisor\nvllm serve Qwen/Qwen3-8B --speculative-config {SPEC}\n",
        "docker/vllm.containerfile.in": 'FROM vllm/vllm-openai:v0.30.0\nCMD ["Qwen/Qwen3-8B"]\n',
    })
    named = ["deploy/vllm.yaml.tpl", "bin/run-server", "conf/serve.conf", "docker/vllm.containerfile.in"]
    code, out, err = run_cli(["inspect", "--format", "json", *named], cwd=tmp_path)
    assert code == 0, err
    found = {launch["file"]: launch for launch in json.loads(out)["launches"]}
    assert set(found) == set(named)
    assert found["deploy/vllm.yaml.tpl"]["context"] == "Pod/q container vllm"
    assert found["docker/vllm.containerfile.in"]["engine_version"] == "0.30.0"
    # a walk goes by names: the template and the .conf file are not read there
    code, out, err = run_cli(["inspect", "--format", "json", "."], cwd=tmp_path)
    walked = {launch["file"] for launch in json.loads(out)["launches"]}
    assert "deploy/vllm.yaml.tpl" not in walked and "conf/serve.conf" not in walked


def test_explicit_text_without_a_launch_is_not_linted(tmp_path: Path) -> None:
    write_files(tmp_path, {"NOTES": "remember to bump the image\n"})
    code, out, err = run_cli(["inspect", "--format", "json", "NOTES"], cwd=tmp_path)
    assert code == 0, err
    assert json.loads(out) == {"launches": [], "diagnostics": []}


def test_build_args_from_dotenv_and_unset_variables(inspect: Callable[..., Any]) -> None:
    dockerfile = ('FROM vllm/vllm-openai:v0.30.0\nARG VLLM_VERSION=0.20.0\n'
                  'RUN pip install "vllm==${VLLM_VERSION}"\nENTRYPOINT ["vllm", "serve"]\n')
    files = {
        ".env": "VLLM_VERSION=0.28.0\n",
        "from-env/Dockerfile": dockerfile.replace("FROM vllm/vllm-openai:v0.30.0", "FROM python:3.12"),
        "unset/Dockerfile": dockerfile.replace("FROM vllm/vllm-openai:v0.30.0", "FROM python:3.12"),
        "compose.yaml": ("services:\n"
                         "  from-env:\n    build:\n      context: from-env\n      args: [VLLM_VERSION]\n"
                         "    command: [Qwen/Qwen3-8B]\n"
                         "  unset:\n    build:\n      context: unset\n      args:\n        VLLM_VERSION: ${NOT_SET}\n"
                         "    command: [Qwen/Qwen3-8B]\n"),
    }
    launches = {launch["context"]: launch for launch in inspect(files, "compose.yaml")["launches"]}
    # a bare NAME takes the project's .env value, as compose reads it from its environment
    assert launches["service from-env"]["engine_version"] == "0.28.0"
    # an unset variable is no version at all, not the Dockerfile's default
    assert launches["service unset"]["version_source"] == "assumed"


def test_a_compose_file_naming_no_engine_is_read_for_its_build(tmp_path: Path) -> None:
    """The engine may be named only in the Dockerfile: the prefilter passes a compose file that builds."""
    write_files(tmp_path, {
        "app/compose.yaml": ("services:\n  llm:\n    build: ./image\n    ports: ['8000:8000']\n"
                             "    command: [Qwen/Qwen3.6-27B, --speculative-config,\n"
                             "              '{\"method\": \"mtp\", \"num_speculative_tokens\": 2}']\n"),
        "app/image/Dockerfile": "FROM vllm/vllm-openai:v0.30.0\nRUN pip install --no-cache-dir hf_transfer\n",
        # a CI workflow's build job is not a compose file
        ".github/workflows/ci.yml": "on: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n",
    })
    code, out, err = run_cli(["check", "--output-format", "json", "--isolated", "--no-cache", "."], cwd=tmp_path)
    assert code == 1, err
    assert {(finding["filename"], finding["code"]) for finding in json.loads(out)} >= {("app/compose.yaml", "MTP102")}


def test_a_data_file_named_explicitly_is_not_read_as_a_script(tmp_path: Path) -> None:
    # pre-commit names every tracked file its pattern matches: a JSON table or a README that quotes a
    # command is no launch file, whatever it mentions
    write_files(tmp_path, {
        "flags.json": '{"vllm": {"serve": ["--speculative-config", "--enable-prefix-caching"]}}\n',
        "README.md": f"Run `vllm serve Qwen/Qwen3-8B --speculative-config {SPEC}`\n",
    })
    code, out, err = run_cli(["check", "--output-format", "json", "--isolated", "--no-cache", "flags.json", "README.md"],
                             cwd=tmp_path)
    assert (code, json.loads(out)) == (0, []), err
