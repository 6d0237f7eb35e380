"""vLLM conformance: every case of tests/data/conformance/vllm-serve.jsonl, end to end.

Each case becomes a one-line shell script ``vllm <argv>`` (the argv starts with ``serve``) plus the
case's files, run through ``mtplint inspect --format json`` with the parser version the answers were
recorded with (0.33.0). The header's rule is applied: for each compared key, the option mtplint
stores (or the parser default) equals what vLLM's own parser stored, and a rejected argv has
``cli_errors`` (with vLLM's wording, minus the ``prog: error:`` prefix).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import assert_conformance

CASES_FILE = Path(__file__).parent / "data" / "conformance" / "vllm-serve.jsonl"


def _load() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    lines = [json.loads(line) for line in CASES_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
    return lines[0], lines[1:]


HEADER, CASES = _load()
VERSION = ["--engine-version", f"vllm={HEADER['parser_version']}"]


def _launch(case: dict[str, Any], inspect: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    script = "vllm " + shlex.join(case["argv"]) + "\n"
    result = inspect({"serve.sh": script, **case.get("files", {})}, "serve.sh", extra=VERSION)
    launches = [launch for launch in result["launches"] if launch["engine"] == "vllm"]
    assert len(launches) == 1, result
    launch: dict[str, Any] = launches[0]
    assert launch["engine_version"] == HEADER["parser_version"]
    return launch


def test_header_is_the_expected_parser() -> None:
    assert HEADER["engine"] == "vllm"
    assert HEADER["parser_version"] == "0.33.0"


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_case(case: dict[str, Any], inspect: Callable[..., dict[str, Any]]) -> None:
    launch = _launch(case, inspect)
    assert_conformance(case, launch, HEADER)


@pytest.mark.parametrize("case", [c for c in CASES if not c["ok"]], ids=[c["id"] for c in CASES if not c["ok"]])
def test_rejection_wording(case: dict[str, Any], inspect: Callable[..., dict[str, Any]]) -> None:
    errors = _launch(case, inspect)["cli_errors"]
    messages = [error["message"] for error in errors]
    expected = case["error"][-1].split(": error: ", 1)[1]
    prefix = "unrecognized arguments: "
    if expected.startswith(prefix):
        # mtplint reports each unrecognized group at its own token; together they are vLLM's one line
        groups = [m[len(prefix):] for m in messages if m.startswith(prefix)]
        assert prefix + " ".join(groups) == expected
        assert all(error.get("line") == 1 for error in errors if error["message"].startswith(prefix))
        return
    # argparse prints the converter's repr (``<function loads at 0x...>``); mtplint names the function
    expected = expected.split(" cannot be converted to ")[0]
    assert any(message.startswith(expected) for message in messages), messages
