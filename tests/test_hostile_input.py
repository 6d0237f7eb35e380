"""Hostile input (issue 7): every case goes through the real ``mtplint check`` in a subprocess with a
timeout, and must end in a finding (MTP001 with a location) or a quiet skip -- never a traceback, a
hang, a memory blow-up or anything executed. A real broken launch (TurboQuant KV cache + MTP, MTP101)
sits next to each hostile file: it must still be reported, so one bad file never stops the run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from mtplint.extract import MAX_FILE_BYTES
from tests.conftest import write_files

# holds runs to a peak memory and timeouts: with the other timed tests, one at a time on one worker (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("timed")

BROKEN_COMPOSE = textwrap.dedent("""\
    services:
      vllm:
        image: vllm/vllm-openai:v0.30.0
        command: >
          Qwen/Qwen3.6-27B
          --kv-cache-dtype turboquant_4bit_nc
          --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}'
    """)

#: runs ``mtplint check`` and reports the peak resident memory of that process on stderr. VmHWM is the
#: high-water mark of this program's own memory; ru_maxrss would also count the pytest process it was
#: forked from (Linux carries the parent's resident size over the fork and exec)
RUNNER = textwrap.dedent("""\
    import re, resource, sys
    from mtplint.cli import main
    code = main(sys.argv[1:])
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            peak = int(re.search(r"VmHWM:\\s+(\\d+) kB", status.read()).group(1))
    except OSError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    sys.stderr.write(f"\\nMAXRSS_KB={peak}\\n")
    sys.exit(code)
    """)


class Run:
    def __init__(self, code: int, findings: list[dict[str, Any]], stderr: str) -> None:
        self.code = code
        self.findings = findings
        self.stderr = stderr
        self.max_rss_kb = int(stderr.rsplit("MAXRSS_KB=", 1)[1].split()[0])

    def at(self, filename: str, code: str = "MTP001") -> list[dict[str, Any]]:
        return [f for f in self.findings if f["filename"] == filename and f["code"] == code]


def check(project: Path, *paths: str, timeout: float = 30) -> Run:
    """``mtplint check --output-format json`` on ``paths`` (default: the whole project)."""
    args = ["check", "--isolated", "--output-format", "json", "--select", "MTP001,MTP101", *(paths or (".",))]
    completed = subprocess.run([sys.executable, "-c", RUNNER, *args], cwd=project, capture_output=True, text=True,
                               timeout=timeout, env={**os.environ, "MTPLINT_DEBUG": "1"}, stdin=subprocess.DEVNULL)
    assert "Traceback" not in completed.stderr, completed.stderr
    assert "internal error" not in completed.stderr, completed.stderr
    assert completed.returncode in (0, 1), completed.stderr
    return Run(completed.returncode, json.loads(completed.stdout), completed.stderr)


def with_broken_launch(tmp_path: Path, files: dict[str, str | bytes]) -> Path:
    (tmp_path / "compose.yaml").write_text(BROKEN_COMPOSE, encoding="utf-8")
    return write_files(tmp_path, files)


def assert_broken_launch_reported(run: Run) -> None:
    (finding,) = run.at("compose.yaml", "MTP101")
    assert finding["location"] == {"row": 6, "column": 24}
    assert run.code == 1


def alias_bomb(levels: int = 10, width: int = 9, indent: str = "") -> str:
    """"Billion laughs": ``width ** levels`` (3.5e9) scalars once every alias is expanded."""
    lines = [f"{indent}l0: &l0 [" + ", ".join(["lol"] * width) + "]"]
    lines += [f"{indent}l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


# --- YAML ------------------------------------------------------------------------------------------


def test_alias_bomb_in_every_yaml_kind_is_bounded_in_time_and_memory(tmp_path: Path) -> None:
    bomb = alias_bomb(indent="  ")
    project = with_broken_launch(tmp_path, {
        "plain.yaml": alias_bomb() + "vllm: *l9\n",
        "docker-compose.bomb.yml": (f"x-bomb:\n{bomb}services:\n  a:\n    image: vllm/vllm-openai:v0.30.0\n"
                                    "    command: *l9\n    environment: *l9\n"),
        "deploy.yaml": (f"apiVersion: apps/v1\nkind: Deployment\nx:\n{bomb}spec:\n  template:\n    spec:\n"
                        "      containers:\n      - name: v\n        image: vllm/vllm-openai:v0.30.0\n"
                        "        command: [vllm, serve]\n        args: *l9\n        env: *l9\n"),
        "llama-swap.yaml": f"x:\n{bomb}models:\n  m:\n    cmd: *l9\n    env: *l9\n",
        # --config files are read by the engines, which turn values into Python: the expansion is capped
        "vllm-config.yaml": alias_bomb() + "speculative-config: *l9\n",
        "sglang-config.yaml": alias_bomb() + "speculative-algorithm: *l9\n",
        "serve.sh": ("#!/bin/sh\nvllm serve m --config vllm-config.yaml &\n"
                     "python -m sglang.launch_server --model-path m --config sglang-config.yaml\n"),
    })
    run = check(project)
    assert_broken_launch_reported(run)
    assert run.max_rss_kb < 400_000
    for config, engine in (("vllm-config.yaml", "vLLM"), ("sglang-config.yaml", "SGLang")):
        found = run.at(config)
        assert found and all(f"malformed {engine} config file: YAML aliases expand to too many values" in f["message"]
                             for f in found)
        assert all(f["location"]["row"] == 1 for f in found)
    assert run.at("docker-compose.bomb.yml")[0]["message"] == "compose file: command items must be strings"


@pytest.mark.parametrize(("name", "text", "row", "message"), [
    pytest.param("deep-flow.yaml", "vllm: " + "[" * 10_000 + "]" * 10_000 + "\n", 1, "nest", id="flow-seq"),
    pytest.param("deep-map.yaml", "vllm: " + "{a: " * 10_000 + "1" + "}" * 10_000 + "\n", 1, "nest",
                 id="flow-map"),
    pytest.param("compose.deep.yaml",
                 "services:\n  a:\n    image: vllm/vllm-openai\n    command:\n"
                 + "".join("  " * (i + 3) + "-\n" for i in range(2_000)) + "  " * 2_003 + "- vllm\n",
                 None, "nest", id="block-seq"),
])
def test_deep_nesting_is_a_finding_not_a_recursion_error(tmp_path: Path, name: str, text: str, row: int | None,
                                                          message: str) -> None:
    run = check(with_broken_launch(tmp_path, {name: text}))
    assert_broken_launch_reported(run)
    (finding,) = run.at(name)
    assert message in finding["message"]
    if row is not None:
        assert finding["location"]["row"] == row


def test_deeply_nested_vllm_config_value_is_a_finding(tmp_path: Path) -> None:
    project = with_broken_launch(tmp_path, {
        "cfg.yaml": "speculative-config: " + "[" * 400 + "]" * 400 + "\n",
        "serve.sh": "#!/bin/sh\nexec vllm serve m --config cfg.yaml\n",
    })
    run = check(project)
    assert_broken_launch_reported(run)
    (finding,) = run.at("cfg.yaml")
    assert "nesting too deep" in finding["message"] and finding["location"]["row"] == 1


def test_yaml_tags_construct_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    project = with_broken_launch(tmp_path, {
        "compose.tags.yaml": textwrap.dedent(f"""\
            x-evil: !!python/object/apply:os.system ["touch {marker}"]
            services:
              vllm:
                image: !!python/name:os.system vllm/vllm-openai
                command: !!python/object/apply:subprocess.call [["touch", "{marker}"]]
            """),
        "config.yaml": f'speculative-config: !!python/object/apply:os.system ["touch {marker}"]\nvllm: 1\n',
        "serve.sh": "#!/bin/sh\nvllm serve m --config config.yaml\n",
    })
    run = check(project)
    assert_broken_launch_reported(run)
    assert not marker.exists()


# --- bytes and encodings ---------------------------------------------------------------------------


def test_binary_and_invalid_text_are_findings_at_the_file(tmp_path: Path) -> None:
    project = with_broken_launch(tmp_path, {
        "model.gguf.sh": bytes(range(256)) * 64 + b"vllm serve",
        "nul.sh": b"#!/bin/sh\nvllm serve m\x00 --speculative-config '{}'\n",
        "latin1.sh": b"#!/bin/sh\n# caf\xe9\nvllm serve m --tensor-parallel-size 2\n",
        "random.yaml": os.urandom(4096) + b"vllm",
        "noise.bin": os.urandom(4096),  # no engine word, no known kind: skipped without a word
    })
    run = check(project)
    assert_broken_launch_reported(run)
    for name in ("model.gguf.sh", "nul.sh", "latin1.sh"):
        (finding,) = run.at(name)
        assert finding["message"] == "file is not valid text (binary, or not UTF-8/UTF-16)"
        assert finding["location"] == {"row": 1, "column": 1}
    assert len(run.at("random.yaml")) <= 1
    assert not run.at("noise.bin")


UTF16_SCRIPT = ("#!/bin/sh\nvllm serve m \\\n  --kv-cache-dtype turboquant_4bit_nc \\\n"
                "  --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 2}'\n")


@pytest.mark.parametrize("encoded", [
    pytest.param(b"\xff\xfe" + UTF16_SCRIPT.encode("utf-16-le"), id="utf16-le-bom"),
    pytest.param(b"\xfe\xff" + UTF16_SCRIPT.encode("utf-16-be"), id="utf16-be-bom"),
    pytest.param(b"\xef\xbb\xbf" + UTF16_SCRIPT.encode(), id="utf8-bom"),
    pytest.param(UTF16_SCRIPT.replace("\n", "\r\n").encode(), id="crlf"),
])
def test_bom_and_crlf_files_are_read_with_positions(tmp_path: Path, encoded: bytes) -> None:
    project = with_broken_launch(tmp_path, {"serve.sh": encoded})
    run = check(project)
    assert_broken_launch_reported(run)
    (finding,) = run.at("serve.sh", "MTP101")
    assert finding["location"] == {"row": 3, "column": 20}


def test_extremely_long_lines(tmp_path: Path) -> None:
    project = with_broken_launch(tmp_path, {
        # a 2 MB comment, a 1 MB flag value and a 2 MB YAML scalar full of "#" (comment scanning)
        "serve.sh": ("#!/bin/sh\n# " + "x" * 2_000_000 + "\nvllm serve m --served-model-name " + "a" * 1_000_000
                     + " --kv-cache-dtype turboquant_4bit_nc --speculative-config '{\"method\": \"mtp\"}'\n"),
        "notes.yaml": "vllm: '" + "# " * 1_000_000 + "'\n",
        "flags.sh": "#!/bin/sh\nvllm serve m" + " --max-num-seqs 8" * 2_000 + "\n",
    })
    run = check(project, timeout=60)
    assert_broken_launch_reported(run)
    (finding,) = run.at("serve.sh", "MTP101")
    assert finding["location"]["row"] == 3


def test_file_over_the_size_limit_is_skipped_without_loading_it(tmp_path: Path) -> None:
    big = tmp_path / "huge.sh"
    with big.open("wb") as handle:  # 50 MB, written in chunks: the test itself stays small
        handle.write(b"#!/bin/sh\nvllm serve m --kv-cache-dtype turboquant_4bit_nc\n")
        chunk = b"# padding " * 10_000 + b"\n"
        for _ in range(50 * 2**20 // len(chunk)):
            handle.write(chunk)
    irrelevant = tmp_path / "huge-data.yaml"
    with irrelevant.open("wb") as handle:
        for _ in range(10):
            handle.write(b"- row\n" * (2**20 // 6))
    assert big.stat().st_size > 6 * MAX_FILE_BYTES and irrelevant.stat().st_size > MAX_FILE_BYTES
    run = check(with_broken_launch(tmp_path, {}))
    assert_broken_launch_reported(run)
    (finding,) = run.at("huge.sh")
    assert finding["message"].startswith("file is too large to lint (50.")
    assert finding["message"].endswith("the limit is 8 MiB): skipped")
    assert not run.at("huge-data.yaml")  # mentions no engine: skipped like any irrelevant file
    assert run.max_rss_kb < 200_000


# --- the file system -------------------------------------------------------------------------------


def test_symlink_loops_do_not_hang_discovery(tmp_path: Path) -> None:
    project = with_broken_launch(tmp_path, {})
    (project / "a.sh").symlink_to("b.sh")
    (project / "b.sh").symlink_to("a.sh")
    (project / "self.yaml").symlink_to("self.yaml")
    (project / "nested").mkdir()
    (project / "nested" / "up").symlink_to("..")
    (project / "nested" / "root").symlink_to("/")
    run = check(project, timeout=20)
    assert_broken_launch_reported(run)
    assert {f["filename"] for f in run.findings} == {"compose.yaml"}
    # named on the command line, a loop is reported as unreadable
    run = check(project, "a.sh", "compose.yaml")
    (finding,) = run.at("a.sh")
    assert finding["message"] == "cannot read file: Too many levels of symbolic links"
    assert_broken_launch_reported(run)


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_unreadable_file_is_a_finding(tmp_path: Path) -> None:
    project = with_broken_launch(tmp_path, {"secret.sh": "#!/bin/sh\nvllm serve m\n"})
    secret = project / "secret.sh"
    secret.chmod(0)
    try:
        if os.access(secret, os.R_OK):
            pytest.skip("running with privileges that read a mode-000 file (root)")
        run = check(project)
    finally:
        secret.chmod(0o644)
    assert_broken_launch_reported(run)
    (finding,) = run.at("secret.sh")
    assert finding["message"] == "cannot read file: Permission denied"
    assert finding["location"] == {"row": 1, "column": 1}


def test_file_deleted_during_the_run_is_a_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Between discovery and reading, the file disappears (an editor's temporary file, a checkout)."""
    import importlib
    from collections.abc import Iterator

    from mtplint.discover import discover, discover_as_walked
    from tests.conftest import run_cli

    project = with_broken_launch(tmp_path, {"gone.sh": "#!/bin/sh\nvllm serve m\n"})

    def discover_then_delete(*args: Any, **kwargs: Any) -> list[Any]:
        found = discover(*args, **kwargs)
        (project / "gone.sh").unlink(missing_ok=True)
        return found

    def walk_then_delete(*args: Any, **kwargs: Any) -> Iterator[Any]:
        found = list(discover_as_walked(*args, **kwargs))
        (project / "gone.sh").unlink(missing_ok=True)
        yield from found

    # every module that runs discovery (the sequential pipeline and lint, the parallel runner)
    for name in ("mtplint.pipeline", "mtplint.lint", "mtplint.parallel"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if hasattr(module, "discover"):
            monkeypatch.setattr(module, "discover", discover_then_delete)
        if hasattr(module, "discover_as_walked"):
            monkeypatch.setattr(module, "discover_as_walked", walk_then_delete)
    code, out, err = run_cli(["check", "--isolated", "--output-format", "json", "--select", "MTP001,MTP101", "."],
                             cwd=project)
    assert code == 1, err
    findings = json.loads(out)
    gone = [f for f in findings if f["filename"] == "gone.sh"]
    assert [f["message"] for f in gone] == ["cannot read file: No such file or directory"]
    assert [f["code"] for f in findings if f["filename"] == "compose.yaml"] == ["MTP101"]


# --- nothing is executed ---------------------------------------------------------------------------


def test_shell_substitutions_are_parsed_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    project = with_broken_launch(tmp_path, {
        "serve.sh": textwrap.dedent(f"""\
            #!/bin/bash
            MODEL=$(touch {marker}; echo m)
            eval "touch {marker}"
            source <(touch {marker})
            exec vllm serve "$MODEL" --served-model-name `touch {marker}` \\
              --kv-cache-dtype "$(rm -rf {tmp_path}/compose.yaml; touch {marker})" $((1 + $(touch {marker})))
            """),
        "launch.py": textwrap.dedent(f"""\
            import os
            os.system("touch {marker}")
            from vllm import LLM
            llm = LLM(model=__import__("os").system("touch {marker}"), speculative_config={{"method": "mtp"}})
            """),
    })
    run = check(project)
    assert_broken_launch_reported(run)
    assert not marker.exists()
    assert (tmp_path / "compose.yaml").exists()


def test_read_error_after_discovery_is_a_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a mode-000 file gives a non-root user, simulated so it also runs as root (CI)."""
    from tests.conftest import run_cli

    project = with_broken_launch(tmp_path, {"secret.sh": "#!/bin/sh\nvllm serve m\n"})
    read_bytes, os_open = Path.read_bytes, os.open

    def denied(self: Path) -> bytes:
        if self.name == "secret.sh":
            raise PermissionError(13, "Permission denied", str(self))
        return read_bytes(self)

    def open_denied(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if os.path.basename(path) == "secret.sh":
            raise PermissionError(13, "Permission denied", str(path))
        return os_open(path, flags, *args, **kwargs)

    # however the file is read: through pathlib or opened as a descriptor
    monkeypatch.setattr(Path, "read_bytes", denied)
    monkeypatch.setattr(os, "open", open_denied)
    code, out, err = run_cli(["check", "--isolated", "--output-format", "json", "--select", "MTP001,MTP101", "."],
                             cwd=project)
    assert code == 1 and "Traceback" not in err, err
    findings = json.loads(out)
    assert [(f["message"], f["location"]) for f in findings if f["filename"] == "secret.sh"] == [
        ("cannot read file: Permission denied", {"row": 1, "column": 1})]
    assert [f["code"] for f in findings if f["filename"] == "compose.yaml"] == ["MTP101"]
