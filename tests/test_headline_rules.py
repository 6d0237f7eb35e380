"""Acceptance 2 (issue 3): the headline rules fire from every source kind, on the offending token.

MTP101 (TurboQuant KV with speculation), MTP102 (prefix caching with EAGLE-style drafting),
MTP103 (SGLang spec V2 missing) and MTP201 (VRAM too tight for the draft buffers) are each
checked from compose, shell, Kubernetes, Python and a ``--config`` YAML. Every project lives in
``tests/data/headline/<CODE>-<kind>/`` and looks like what people commit; the expected
line/column is not written down but found by searching the offending token in the fixture's
text, so the fixture can be edited freely as long as the token stays unique.

For MTP201 the GPU comes from the three places RULES.md allows: a ``# mtplint: gpu=...``
directive, ``--gpu``, or a Kubernetes ``nvidia.com/gpu.product`` node selector.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli

HEADLINE = Path(__file__).parent / "data" / "headline"


@dataclass(frozen=True)
class Case:
    code: str
    kind: str
    #: file (relative to the project folder) holding the offending token
    file: str
    #: the offending token as it appears in the file; must occur exactly once (after ``after``)
    token: str
    args: tuple[str, ...] = ()
    #: a unique text the token follows, for tokens that occur more than once (``"3"``)
    after: str | None = None
    #: a substring the message must contain (numbers a user would act on)
    message: str | None = None

    @property
    def project(self) -> Path:
        return HEADLINE / f"{self.code}-{self.kind}"

    @property
    def id(self) -> str:
        return f"{self.code}-{self.kind}"


CASES = (
    # MTP101: the kv-cache dtype value (or the whole `--flag=value` word) is the offending token
    Case("MTP101", "compose", "compose.yaml", "turboquant_4bit_nc", message="#40831"),
    Case("MTP101", "shell", "serve.sh", "--kv-cache-dtype=turboquant_k8v4", message="ngram"),
    Case("MTP101", "k8s", "deployment.yaml", "turboquant_3bit_nc"),
    Case("MTP101", "python", "bench.py", '"turboquant_k8v4"'),
    Case("MTP101", "config", "serve.yaml", "turboquant_4bit_nc"),
    # MTP102: the explicit prefix-caching switch, else (on by default) the speculative method
    Case("MTP102", "compose", "docker-compose.yml", '{"method": "mtp"', message="#38182"),
    Case("MTP102", "shell", "serve.sh", "--enable-prefix-caching"),
    Case("MTP102", "k8s", "deployment.yaml", '{"method": "qwen3_next_mtp"'),
    Case("MTP102", "python", "offline.py", "True"),
    Case("MTP102", "config", "qwen.yaml", "enable-prefix-caching"),
    # MTP103: the speculative algorithm that turns overlap scheduling off
    Case("MTP103", "compose", "docker-compose.yml", "NEXTN", message="SGLANG_ENABLE_SPEC_V2"),
    Case("MTP103", "shell", "launch.sh", "EAGLE"),
    Case("MTP103", "k8s", "sglang.yaml", "EAGLE"),
    Case("MTP103", "python", "engine.py", '"EAGLE"'),
    Case("MTP103", "config", "sglang-config.yaml", "NEXTN"),
    # MTP201: the setting to change first -- the model when weights alone nearly fill the budget,
    # else the draft-token count (the speculative config / --speculative-num-steps value).
    # The GPU: a file directive, --gpu, a k8s node selector.
    Case("MTP201", "compose", "compose.yaml", "Qwen/Qwen3.6-27B-FP8", message="rtx-5090"),
    # (a shell word starts at its opening quote; a YAML scalar and a folded compose word at the text)
    Case("MTP201", "shell", "serve.sh", "'{\"method\": \"mtp\"", args=("--gpu", "rtx-4090x2"),
         message="x 2 GPUs"),
    Case("MTP201", "k8s", "sglang.yaml", "3", after="--speculative-num-steps", message="l40s"),
    Case("MTP201", "python", "generate.py", '{"method": "mtp"', message="rtx-pro-6000"),
    Case("MTP201", "config", "serve.yaml", "3", after="num_speculative_tokens:", args=("--gpu", "a100-80gx2")),
)


def position_of(text: str, token: str, after: str | None = None) -> tuple[int, int]:
    """1-based (line, column) of the only occurrence of ``token`` in ``text`` (or the first one
    following the only occurrence of ``after``)."""
    if after is None:
        assert text.count(token) == 1, f"{token!r} must occur exactly once in the fixture"
        offset = text.index(token)
    else:
        assert text.count(after) == 1, f"{after!r} must occur exactly once in the fixture"
        offset = text.index(token, text.index(after) + len(after))
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def findings_for(case: Case, *extra: str) -> list[dict[str, Any]]:
    exit_code, out, err = run_cli(
        ["check", "--output-format", "json", "--isolated", "--select", case.code, *case.args, *extra, "."],
        cwd=case.project,
    )
    assert exit_code in (0, 1), err
    findings: list[dict[str, Any]] = json.loads(out)
    return [f for f in findings if f["code"] == case.code]


def test_every_headline_rule_from_four_source_kinds() -> None:
    kinds: dict[str, set[str]] = {}
    for case in CASES:
        kinds.setdefault(case.code, set()).add(case.kind)
    for code in ("MTP101", "MTP102", "MTP103", "MTP201"):
        assert {"compose", "shell", "k8s"} <= kinds.get(code, set()), code
        assert kinds[code] & {"python", "config"}, code
        assert len(kinds[code]) >= 4, code


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_headline_rule_on_the_offending_token(case: Case) -> None:
    text = (case.project / case.file).read_text(encoding="utf-8")
    line, column = position_of(text, case.token, case.after)
    findings = findings_for(case)
    assert findings, f"{case.code} not reported for {case.id}"
    where = [(f["filename"], f["location"]["row"], f["location"]["column"]) for f in findings]
    assert (case.file, line, column) in where, f"expected {case.file}:{line}:{column}, got {where}"
    assert len(findings) == 1, [f["message"] for f in findings]
    if case.message:
        assert case.message in findings[0]["message"]


def test_mtp201_is_silent_without_a_gpu_identity() -> None:
    """The shell case without ``--gpu``: no guess from comments ("both 4090s"); the summary says why."""
    (case,) = [c for c in CASES if c.id == "MTP201-shell"]
    exit_code, out, err = run_cli(["check", "--output-format", "json", "--isolated", "."], cwd=case.project)
    assert exit_code in (0, 1), err
    assert "MTP201" not in {f["code"] for f in json.loads(out)}
    exit_code, out, err = run_cli(["check", "--isolated", "."], cwd=case.project)
    assert "1 launch not checked by MTP201" in out and "--gpu" in out
