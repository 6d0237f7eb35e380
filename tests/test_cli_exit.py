"""The ``mtplint`` command ends with a hard exit after flushing its report (``cli.run``): nothing the
report says may be lost, the exit code must be main's, and a reader that goes away is no error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import write_files

COMPOSE = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.11.0
    command: >
      Qwen/Qwen3-8B
      --enable-prefix-caching
      --speculative-config '{"method": "deepseek_mtp", "num_speculative_tokens": 3}'
"""


def _env(root: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    env.pop("MTPLINT_OUTPUT_FORMAT", None)
    return env


def _run(args: list[str], cwd: Path, **kwargs: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "mtplint", *args], cwd=cwd, env=_env(cwd),
                          capture_output=True, check=False, **kwargs)  # type: ignore[call-overload,no-any-return]


def test_the_command_prints_the_whole_report_and_exits_with_mains_code(tmp_path: Path) -> None:
    files = {f"deploy/team-{number:03d}/compose.yaml": COMPOSE for number in range(40)}
    write_files(tmp_path, files)
    from io import StringIO

    from mtplint.cli import main

    expected = StringIO()
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        expected_code = main(["check", "--no-cache", "--output-format", "json", "deploy"], out=expected)
    finally:
        os.chdir(cwd)
    done = _run(["check", "--no-cache", "--output-format", "json", "deploy"], tmp_path)
    assert done.returncode == expected_code == 1
    assert done.stdout.decode() == expected.getvalue()  # ~40 launches of JSON: several buffers' worth
    assert len(done.stdout) > 3 * 8192
    assert done.stderr == b""


def test_a_clean_run_exits_0_and_a_usage_error_2(tmp_path: Path) -> None:
    write_files(tmp_path, {"README.md": "nothing to launch\n"})
    assert _run(["check", "README.md"], tmp_path).returncode == 0
    usage = _run(["check", "--no-such-flag"], tmp_path)
    assert usage.returncode == 2 and b"--no-such-flag" in usage.stderr


def test_a_reader_that_goes_away_is_not_an_error(tmp_path: Path) -> None:
    """``mtplint check | head -1``: no traceback and no "Exception ignored" noise on stderr."""
    # ~175 kB of report: more than a pipe holds, so the writer does meet the closed end
    write_files(tmp_path, {f"deploy/team-{number:03d}/compose.yaml": COMPOSE for number in range(120)})
    process = subprocess.Popen([sys.executable, "-m", "mtplint", "check", "--no-cache", "deploy"], cwd=tmp_path,
                               env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.readline()
    process.stdout.close()
    stderr = process.stderr.read()
    assert process.wait(timeout=60) == 0
    assert b"Traceback" not in stderr and b"Exception ignored" not in stderr
