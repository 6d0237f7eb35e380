"""The bundled examples produce exactly the findings their header comments promise.

``examples/`` is what the README's first command lints (``mtplint check --exit-zero examples/``);
each file with a launch names its problems by code at its top. This test keeps the three in step:
the codes reported per file, the codes written in the file, and the exit status.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

from tests.conftest import run_cli

ROOT = Path(__file__).parent.parent
EXAMPLES = ROOT / "examples"

EXPECTED: dict[str, set[str]] = {
    "examples/vllm-compose/compose.yaml": {"MTP101", "MTP102", "MTP201", "MTP203", "MTP405"},
    "examples/sglang-compose/docker-compose.yml": {"MTP103", "MTP111", "MTP202"},
    "examples/k8s/qwen3-next-mtp.yaml": {"MTP102", "MTP110", "MTP401"},
    # nothing pins its vLLM (Qwen3-Next: 0.10.2 or later), so MTP102's default-based finding is left
    # undecided and MTP004 says so
    "examples/python/offline_mtp.py": {"MTP004", "MTP302", "MTP401"},
    "examples/scripts/serve-vllm.sh": {"MTP106", "MTP108"},
    "examples/scripts/serve-llama.sh": {"MTP403", "MTP404"},
}
HEADLINE = {"MTP101", "MTP102", "MTP103", "MTP201"}
#: "  MTP101  ..." lines at the top of an example
PROMISED = re.compile(r"^\s*(?:#\s*)?(MTP\d{3})\s{2,}", re.MULTILINE)


def reported_codes(*extra: str) -> dict[str, set[str]]:
    exit_code, out, err = run_cli(["check", "--output-format", "json", *extra, "examples"], cwd=ROOT)
    assert exit_code == 1, err
    codes: dict[str, set[str]] = defaultdict(set)
    for finding in json.loads(out):
        codes[finding["filename"]].add(finding["code"])
    return dict(codes)


def test_every_example_reports_exactly_its_codes() -> None:
    assert reported_codes() == EXPECTED


def test_the_isolated_run_agrees() -> None:
    """No configuration file in the repository changes what the examples show."""
    assert reported_codes("--isolated") == EXPECTED


@pytest.mark.parametrize("path", sorted(EXPECTED))
def test_header_comment_names_the_codes(path: str) -> None:
    text = (ROOT / path).read_text(encoding="utf-8")
    assert set(PROMISED.findall(text)) == EXPECTED[path]


def test_examples_show_every_headline_rule() -> None:
    shown = set().union(*EXPECTED.values())
    assert shown >= HEADLINE


def test_readme_command_exits_zero() -> None:
    exit_code, out, err = run_cli(["check", "--exit-zero", "examples"], cwd=ROOT)
    assert exit_code == 0, err
    assert "MTP101" in out and "Found" in out


def test_every_example_file_with_a_launch_is_listed() -> None:
    exit_code, out, err = run_cli(["inspect", "--format", "json", "examples"], cwd=ROOT)
    assert exit_code == 0, err
    assert {launch["file"] for launch in json.loads(out)["launches"]} == set(EXPECTED)
