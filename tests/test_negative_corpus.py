"""Acceptance 4 (issue 3): deployments without speculative decoding get no MTP1xx/2xx/3xx finding.

``tests/data/negative/`` holds one folder per project, each shaped like a real repository's
deployment files: compose for vLLM, SGLang and llama.cpp and an app stack that only talks to a
server elsewhere, shell scripts (plain, ``docker run``, a pinned ``requirements.txt``),
Kubernetes (a Deployment with a GPU product selector, Helm output), Python (``LLM(...)``,
``sgl.Engine(...)``, a ``subprocess`` launcher), a Dockerfile, a systemd unit, a llama-swap
config, ``.env`` interpolation and a ``vllm serve --config`` YAML. None of them turns speculation
on, so every rule about speculation, memory with drafts and throughput must stay silent — with
and without a GPU identity, and whatever the objective.

MTP4xx/5xx are out of scope here (the issue asks for the 1xx-3xx ranges), but the corpus is
written with valid flags only, which the inspect test below checks, so a failure here points
at a rule and not at a broken fixture.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli

CORPUS = Path(__file__).parent / "data" / "negative"
#: folders that launch nothing (they only point at a server running elsewhere)
NO_LAUNCH = {"compose-unrelated"}
RULE_RANGES = ("MTP1", "MTP2", "MTP3")


def _projects() -> list[str]:
    return sorted(p.name for p in CORPUS.iterdir() if p.is_dir())


def check_json(args: list[str]) -> list[dict[str, Any]]:
    exit_code, out, err = run_cli(["check", "--output-format", "json", "--isolated", *args], cwd=CORPUS)
    assert exit_code in (0, 1), err
    findings: list[dict[str, Any]] = json.loads(out)
    return findings


def test_corpus_is_large_and_varied() -> None:
    """At least 15 projects, covering every source kind the issue lists."""
    files = [p for p in CORPUS.rglob("*") if p.is_file()]
    names = {p.name for p in files}
    suffixes = {p.suffix for p in files}
    assert len(_projects()) >= 15
    assert {"Dockerfile", ".env", "config.yaml", "requirements.txt"} <= names
    assert {".sh", ".py", ".service", ".yaml", ".yml"} <= suffixes
    assert any(p.name.startswith(("compose", "docker-compose")) for p in files)


def test_every_project_launches_an_engine_with_valid_flags() -> None:
    """The corpus is only meaningful if mtplint finds the launches and their flags parse."""
    exit_code, out, err = run_cli(["inspect", "--format", "json", "."], cwd=CORPUS)
    assert exit_code == 0, err
    launches = json.loads(out)["launches"]
    projects_with_launches = {Path(launch["file"]).parts[0] for launch in launches}
    assert projects_with_launches == set(_projects()) - NO_LAUNCH
    assert {launch["engine"] for launch in launches} >= {"vllm", "sglang", "llama.cpp"}
    errors = {(launch["file"], error["message"]) for launch in launches for error in launch["cli_errors"]}
    assert errors == set()
    for launch in launches:
        spec = launch["effective"].get("spec_method") or launch["effective"].get("spec_type") or {}
        assert spec.get("value") in (None, "none", False), f"{launch['file']} turns speculation on: {spec}"


@pytest.mark.parametrize(
    "extra",
    [[], ["--gpu", "rtx-4090"], ["--objective", "throughput"], ["--gpu", "h100-sxm", "--objective", "latency"]],
    ids=["plain", "gpu-rtx-4090", "objective-throughput", "gpu-h100-objective-latency"],
)
def test_no_speculation_rule_fires(extra: list[str]) -> None:
    findings = check_json([*extra, "."])
    wrong = [f"{f['filename']}:{f['location']['row']}:{f['location']['column']}: {f['code']} {f['message']}"
             for f in findings if f["code"].startswith(RULE_RANGES)]
    assert wrong == []


@pytest.mark.parametrize("project", _projects())
def test_each_project_alone(project: str) -> None:
    """Linted on its own (as a user would run it in that repository), each project is clean too."""
    findings = check_json(["--gpu", "rtx-4090", "--objective", "throughput", project])
    assert [f["code"] for f in findings if f["code"].startswith(RULE_RANGES)] == []
