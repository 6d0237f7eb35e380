"""The llama-server conformance cases (tests/data/conformance/llama-server.jsonl, answers of the real
parser at build 10470), run end to end: a one-line shell script with ``export`` lines for ``env``."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import DATA

CASES = [json.loads(line) for line in (DATA / "conformance" / "llama-server.jsonl").read_text(encoding="utf-8").splitlines()
         if line.strip()]
HEADER = CASES[0]
assert HEADER["id"] == "__header__" and HEADER["engine"] == "llama.cpp"


@pytest.mark.parametrize("case", CASES[1:], ids=[case["id"] for case in CASES[1:]])
def test_case(case: dict[str, Any], inspect: Callable[..., dict[str, Any]]) -> None:
    exports = "".join(f"export {name}={shlex.quote(value)}\n" for name, value in case.get("env", {}).items())
    script = f"#!/bin/sh\n{exports}llama-server {shlex.join(case['argv'])}\n"
    result = inspect({"serve.sh": script}, "serve.sh", extra=["--engine-version", "llama.cpp=b10470"])
    (launch,) = result["launches"]
    errors = launch["cli_errors"]
    # the header's rule: ok <=> cli_errors empty
    assert (not errors) is case["ok"], errors
    if not case["ok"]:
        assert errors[0]["message"] == case["error"]
