"""A long ``check`` shows its progress on standard error when that is a terminal, and nothing when
it is not, with ``--quiet``, or in the report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mtplint.progress import Progress

# a progress line throttled by the clock: with the other timed tests, one at a time on one worker (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("timed")

ROOT = Path(__file__).resolve().parents[1]

LAUNCH = """\
#!/usr/bin/env bash
set -euo pipefail
exec vllm serve Qwen/Qwen3.6-27B-FP8 \\
  --kv-cache-dtype turboquant_4bit_nc \\
  --speculative-config '{{"method": "mtp", "num_speculative_tokens": {k}}}' \\
  --port {port}
"""

HELPER = """\
#!/usr/bin/env bash
set -euo pipefail
echo "rotating logs of shard {n}"
find /var/log/shard{n} -name '*.gz' -mtime +7 -delete
"""


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """5,000 scripts in 100 folders: four in five launch vLLM (MTP101 each), the rest are helpers (a run
    of a second or more: mtplint lints a few thousand small files a second)."""
    root = tmp_path_factory.mktemp("progress") / "fleet"
    for folder in range(100):
        directory = root / f"node{folder:03}"
        directory.mkdir(parents=True)
        for number in range(50):
            n = folder * 50 + number
            text = LAUNCH.format(k=1 + n % 3, port=8000 + n) if n % 5 else HELPER.format(n=n)
            (directory / f"job{number:02}.sh").write_text(text, encoding="utf-8")
    return root


def _run(tree: Path, *args: str, terminal: bool) -> tuple[int, str, str]:
    """``mtplint check`` with standard error on a pseudo-terminal (``terminal``) or a pipe."""
    command = [sys.executable, "-m", "mtplint", "check", "--no-cache", "--exit-zero", *args, str(tree)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm"}
    if not terminal:
        run = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
        return run.returncode, run.stdout, run.stderr
    primary, secondary = os.openpty()
    shown: list[bytes] = []

    def read_terminal() -> None:
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # EIO: the process and its terminal are gone
                return
            if not chunk:
                return
            shown.append(chunk)

    reader = threading.Thread(target=read_terminal)
    reader.start()
    try:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=secondary, env=env)
        os.close(secondary)
        out, _ = process.communicate(timeout=600)
    finally:
        reader.join(timeout=60)
        os.close(primary)
    return process.returncode, out.decode("utf-8"), b"".join(shown).decode("utf-8", "replace")


def test_a_long_run_in_a_terminal_shows_progress_and_a_pipe_shows_none(tree: Path) -> None:
    code, out, terminal = _run(tree, "--output-format", "json", terminal=True)
    assert code == 0
    lines = [part for part in terminal.split("\r") if part.strip()]
    assert lines and all(line.startswith("mtplint: ") and "files linted" in line for line in lines)
    # the counts move: a later line has linted more files than the first one
    counts = [int(line.split()[1].split("/")[0]) for line in lines]
    assert counts == sorted(counts) and counts[-1] > counts[0] and counts[-1] <= 5000
    assert any("findings so far" in line for line in lines)
    assert terminal.endswith("\r") and not terminal.rstrip("\r").split("\r")[-1].strip()  # erased at the end
    findings = json.loads(out)  # the report is untouched
    assert len(findings) >= 4000 and {finding["code"] for finding in findings} >= {"MTP101"}

    piped = _run(tree, "--output-format", "json", terminal=False)
    assert piped == (0, out, "")


def test_quiet_shows_no_progress_and_no_summary(tree: Path) -> None:
    code, out, terminal = _run(tree, "--quiet", "--output-format", "concise", terminal=True)
    assert code == 0 and terminal == ""
    assert out.count("MTP101") >= 4000 and "Found" not in out


class _Terminal:
    def __init__(self) -> None:
        self.written: list[str] = []

    def write(self, text: str) -> int:
        self.written.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    def fileno(self) -> int:
        return 2


def test_the_line_is_throttled_and_fits_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr("mtplint.progress.time.monotonic", lambda: clock[0])
    monkeypatch.setattr("mtplint.progress.os.get_terminal_size", lambda fd: os.terminal_size((30, 24)))
    terminal = _Terminal()
    progress = Progress(terminal)  # type: ignore[arg-type]
    for _ in range(1000):
        progress.add_found()
        progress.add_done(1)
    assert terminal.written == []  # a run shorter than half a second shows nothing
    clock[0] += 0.6
    progress.add_done(2)
    clock[0] += 0.01
    progress.add_done(0)  # within the redraw interval: not drawn
    assert terminal.written == ["\rmtplint: 1001/1000+ files lin"]
    clock[0] += 0.2
    progress.walk_over()
    assert terminal.written[-1].startswith("\rmtplint: 1002/1000 files") and len(terminal.written[-1]) == 30
    progress.finish()
    assert terminal.written[-1] == "\r" + " " * 29 + "\r"
