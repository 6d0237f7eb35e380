"""Linear work (issue #21, acceptance 3): many unknown flags in one launch, many launches in one
file, many files in one directory linted with a cold cache. Each was worse than linear: unknown
flags were looked up in a list of the findings so far (10k flags 46.7 s), each launch rescanned its
whole file (4,000 launches 7.6 s), and each file's cache dependencies hashed its directory's
listing again (10k empty files 182 s).

For each, ``mtplint check`` runs at a tenth of the size and at the size, and the processor time per
item (less a run of nothing, the start-up) may grow at most twofold; the peak memory stays under
300 MB. Processor time (the child's user + system time from ``os.wait4``), not wall time: the
machine running the suite is shared.

The sizes are the issue's where a run takes seconds (10k launches), and a fraction of them where it
would take a minute of CI (100k flags, 200k files; the README's "Budgets" gives the figures at the
issue's sizes).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.test_hostile_input import RUNNER

# measures processor time and peak memory: with the other timed tests, one at a time on one worker (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("timed")

MAX_RSS_KB = 300 * 1024
SPEC = "--speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":2}'"


def unknown_flags(directory: Path, count: int) -> None:
    flags = " \\\n  ".join(f"--unknown-flag-{index} {index}" for index in range(count))
    (directory / "serve.sh").write_text(f"#!/bin/sh\nexec vllm serve Qwen/Qwen3-8B {SPEC} \\\n  {flags}\n")


def launches(directory: Path, count: int) -> None:
    lines = ["#!/usr/bin/env bash", "set -euo pipefail"]
    lines += [f"vllm serve Qwen/Qwen3-8B --port {8000 + index} --kv-cache-dtype fp8 {SPEC} &" for index in range(count)]
    (directory / "serve.sh").write_text("\n".join([*lines, "wait", ""]))


def files(directory: Path, count: int) -> None:
    for index in range(count):
        (directory / f"run-{index:06d}.sh").touch()
    # one real launch among them, so the run has something to cache and to say
    (directory / "serve.sh").write_text(f"#!/bin/sh\nexec vllm serve Qwen/Qwen3-8B {SPEC}\n")


def measure(directory: Path, extra: list[str]) -> tuple[float, int]:
    """Processor seconds and peak resident kB of ``mtplint check`` on ``directory``."""
    with open(directory.parent / f"{directory.name}.out", "wb") as out, \
            open(directory.parent / f"{directory.name}.err", "w+b") as err:
        child = subprocess.Popen([sys.executable, "-c", RUNNER, "check", "--isolated", "-j", "1",
                                  "--output-format", "concise", *extra, str(directory)],
                                 stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                 env={**os.environ, "MTPLINT_CACHE_DIR": str(directory.parent / f"{directory.name}.cache")})
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode()
    assert "Traceback" not in stderr and child.returncode in (0, 1), stderr
    return usage.ru_utime + usage.ru_stime, int(stderr.rsplit("MAXRSS_KB=", 1)[1].split()[0])


@pytest.mark.parametrize(("make", "size", "extra"), [
    (unknown_flags, 30_000, ["--no-cache"]),
    (launches, 10_000, ["--no-cache"]),
    (files, 20_000, []),  # a cold cache: the cache directory is new
], ids=["unknown flags", "launches in one file", "files in one directory, cold cache"])
def test_work_grows_linearly(tmp_path: Path, make: Callable[[Path, int], None], size: int, extra: list[str]) -> None:
    runs = {}
    for count in (0, size // 10, size):
        directory = tmp_path / f"n{count}"
        directory.mkdir()
        make(directory, count)
        runs[count] = measure(directory, extra)
    start_up = runs[0][0]
    small = (runs[size // 10][0] - start_up) / (size // 10)
    large = (runs[size][0] - start_up) / size
    assert large <= 2 * small, f"{small * 1e3:.3f} ms per item at {size // 10}, {large * 1e3:.3f} ms at {size}"
    assert runs[size][1] < MAX_RSS_KB, f"peak {runs[size][1]} kB at {size}"
