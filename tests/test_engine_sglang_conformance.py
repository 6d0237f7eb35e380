"""SGLang conformance: every case of tests/data/conformance/sglang-launch.jsonl, end to end.

Each case becomes a one-line shell script ``python -m sglang.launch_server <argv>`` (plus the case's
files), run through ``mtplint inspect --format json`` with the parser version the answers were
recorded with (0.5.23); the header's rule is then applied: for each compared key, the option
mtplint stores (or the parser default) equals what SGLang's own parser stored, and a rejected
argv has ``cli_errors``.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import assert_conformance

CASES_FILE = Path(__file__).parent / "data" / "conformance" / "sglang-launch.jsonl"


def _load() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    lines = [json.loads(line) for line in CASES_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
    return lines[0], lines[1:]


HEADER, CASES = _load()


def test_header_is_the_expected_parser() -> None:
    assert HEADER["engine"] == "sglang"
    assert HEADER["parser_version"] == "0.5.23"


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_case(case: dict[str, Any], inspect: Callable[..., dict[str, Any]]) -> None:
    script = "python -m sglang.launch_server " + shlex.join(case["argv"]) + "\n"
    files = {"serve.sh": script, **case.get("files", {})}
    result = inspect(files, "serve.sh", extra=["--engine-version", f"sglang={HEADER['parser_version']}"])
    launches = [launch for launch in result["launches"] if launch["engine"] == "sglang"]
    assert len(launches) == 1, result
    launch = launches[0]
    assert launch["engine_version"] == HEADER["parser_version"]
    assert_conformance(case, launch, HEADER)


@pytest.mark.parametrize("case", [c for c in CASES if not c["ok"]], ids=[c["id"] for c in CASES if not c["ok"]])
def test_rejection_wording(case: dict[str, Any], inspect: Callable[..., dict[str, Any]]) -> None:
    """The message is SGLang's (argparse's) own, after the ``prog: error:`` prefix."""
    script = "python -m sglang.launch_server " + shlex.join(case["argv"]) + "\n"
    result = inspect({"serve.sh": script, **case.get("files", {})}, "serve.sh",
                     extra=["--engine-version", "sglang=0.5.23"])
    messages = [error["message"] for error in result["launches"][0]["cli_errors"]]
    expected = case["error"][-1].split(": error: ", 1)[1]
    assert expected in messages
