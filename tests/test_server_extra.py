"""``mtplint server`` is an extra (issue #25, acceptance 5): ``check`` never loads it, and without
pygls the command says which extra to install."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli, write_files

ROOT = Path(__file__).resolve().parents[1]
SERVER_MODULES = ("pygls", "lsprotocol", "cattrs", "mtplint.server")

COMPOSE = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.32.0
    command: >
      Qwen/Qwen3.6-27B
      --kv-cache-dtype turboquant_4bit_nc
      --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}'
"""


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, env=env,
                          check=False, timeout=120)


def test_check_start_up_loads_nothing_of_the_server(tmp_path: Path) -> None:
    write_files(tmp_path, {"compose.yaml": COMPOSE})
    done = _python("import io, sys\nfrom mtplint.cli import main\n"
                   "code = main(['check', '--no-cache', 'compose.yaml'], out=io.StringIO())\n"
                   "print(code)\nprint('\\n'.join(sys.modules))", tmp_path)
    lines = done.stdout.split()
    assert lines[0] == "1", done.stderr  # MTP101: the run did lint the file
    loaded = {name for name in lines[1:] if name.split(".")[0] in ("pygls", "lsprotocol", "cattrs")
              or name.startswith("mtplint.server")}
    assert loaded == set()


def test_server_without_the_extra_names_it_and_exits_2(tmp_path: Path) -> None:
    # pygls as if not installed: importlib finds no module recorded as None in sys.modules
    done = _python("import sys\nsys.modules['pygls'] = None\nfrom mtplint.cli import main\n"
                   "sys.exit(main(['server']))", tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""  # the protocol's channel: nothing is written there
    assert "pip install 'mtplint[server]'" in done.stderr
    assert "pygls" in done.stderr


def test_server_is_a_listed_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run_cli(["--help"])
    assert code == 0
    words = " ".join(capsys.readouterr().out.split())
    assert "server run the language server (LSP, on stdin/stdout; needs mtplint[server])" in words
