"""Hostile input, issue 21: error boundaries, tracebacks, output.

The corpus under ``tests/data/hostile/boundaries/`` holds one folder per reproduction of the issue
(its README says what each is). Every case runs through the real ``mtplint check`` in a subprocess,
next to a real broken launch (TurboQuant KV cache + MTP, MTP101) in another file, and must end in
findings -- exit 0/1, the expected MTP001/MTP5xx, the broken launch still reported -- or in exit 2
with a one-line message; never a traceback, and within 300 MB at the peak and 10 s. Cases that need what git cannot hold (a file name that
is not UTF-8, a 2,000-file chain, a full disk) or a crash planted in mtplint itself are built here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATA, run_cli, write_files
from tests.test_hostile_input import BROKEN_COMPOSE

# holds every run to 10 s and 300 MB: with the other timed tests, one at a time on one worker (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("timed")

CORPUS = DATA / "hostile" / "boundaries"


class Run:
    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.code = code
        self.stdout = stdout
        self.stderr = stderr

    @property
    def findings(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = json.loads(self.stdout)
        return found

    def at(self, filename: str, code: str) -> list[dict[str, Any]]:
        return [f for f in self.findings if f["filename"] == filename and f["code"] == code]


#: ``mtplint``'s own entry point (:func:`mtplint.cli.run`: main, flush, hard exit), which first notes
#: the process's peak memory in the file ``MTPLINT_TEST_PEAK`` names (standard error stays the run's)
ENTRY = """\
import os, re, sys
from mtplint.cli import main
code = main()
with open("/proc/self/status", encoding="ascii") as status, open(os.environ["MTPLINT_TEST_PEAK"], "w") as peak:
    peak.write(re.search(r"VmHWM:\\s+(\\d+) kB", status.read()).group(1))
for stream in (sys.stdout, sys.stderr):
    try:
        stream.flush()
    except (OSError, ValueError):
        pass
os._exit(code)
"""
MAX_RSS_KB = 300 * 1024
MAX_SECONDS = 10.0


def mtplint(cwd: Path, *args: str, stdin: bytes | None = None, stdout: Any = subprocess.PIPE,
            env: dict[str, str] | None = None) -> Run:
    """``mtplint ARGS`` in a subprocess, as a user runs it; asserts what holds for every run: no
    traceback, exit 0/1/2 (2 with one line), under 300 MB at the peak and 10 s."""
    peak_file = cwd.parent / f".peak-{os.getpid()}"
    started = time.monotonic()
    completed = subprocess.run([sys.executable, "-c", ENTRY, *args], cwd=cwd, input=stdin, stdout=stdout,
                               stderr=subprocess.PIPE, timeout=60,
                               env={**os.environ, **(env or {}), "MTPLINT_TEST_PEAK": str(peak_file)})
    seconds = time.monotonic() - started
    if os.path.exists("/proc/self/status"):
        peak_kb = int(peak_file.read_text(encoding="ascii"))
        peak_file.unlink()
        assert peak_kb < MAX_RSS_KB, f"peak memory {peak_kb} kB"
    assert seconds < MAX_SECONDS, f"{seconds:.1f} s"
    out = completed.stdout.decode("utf-8") if isinstance(completed.stdout, bytes) else ""
    err = completed.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    assert completed.returncode in (0, 1, 2), err
    if completed.returncode == 2:
        # exit 2 is one line that says what to mend
        assert len(err.strip().splitlines()) == 1 and err.startswith("mtplint: error: "), err
    return Run(completed.returncode, out, err)


def case(name: str, tmp_path: Path) -> Path:
    """The corpus case ``name`` copied into a project beside the broken launch."""
    project = tmp_path / "project"
    shutil.copytree(CORPUS / name, project)
    (project / "other").mkdir()
    (project / "other" / "compose.yaml").write_text(BROKEN_COMPOSE, encoding="utf-8")
    return project


def assert_broken_launch_reported(run: Run) -> None:
    (finding,) = run.at("other/compose.yaml", "MTP101")
    assert finding["location"] == {"row": 6, "column": 24}
    assert run.code == 1


def no_internal_error(run: Run) -> None:
    assert not [f for f in run.findings if "internal error" in f["message"]], run.findings


# --- findings on the token ---------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "file", "row", "says"), [
    pytest.param("spec-tokens-4400-digits", "serve.sh", 4, "value has 4400 digits", id="4400-digit-k"),
    pytest.param("spec-config-10k-deep", "serve.sh", 4, "nested too deeply", id="10k-deep-json"),
    pytest.param("spec-config-deep-dotted", "compose.yaml", 7, "value has 5000 digits", id="dotted-5000-digits"),
])
def test_unreadable_speculative_config_is_mtp503_on_the_token(tmp_path: Path, name: str, file: str, row: int,
                                                               says: str) -> None:
    run = mtplint(case(name, tmp_path), "check", "--no-cache", "--isolated", "--output-format", "json", ".")
    assert_broken_launch_reported(run)
    no_internal_error(run)
    (finding,) = run.at(file, "MTP503")
    assert says in finding["message"] and "vLLM exits before starting" in finding["message"]
    assert finding["location"]["row"] == row
    assert "set_int_max_str_digits" not in finding["message"]  # CPython's advice is not the user's


def test_huge_numbers_in_llama_options_and_version_pins_are_read_without_a_crash(tmp_path: Path) -> None:
    project = case("llama-5000-digit-options", tmp_path)
    shutil.copy(CORPUS / "version-pin-5000-digits" / "compose.yaml", project / "compose.yaml")
    run = mtplint(project, "check", "--no-cache", "--isolated", "--output-format", "json", ".")
    assert_broken_launch_reported(run)
    no_internal_error(run)
    # each refused value is reported on its token (MTP509: the engine rejects the arguments)
    refused = run.at("llama.sh", "MTP509")
    assert [f["location"]["row"] for f in refused] == [2, 3, 3] and all("stoi" in f["message"] for f in refused)
    launches = json.loads(mtplint(project, "inspect", "--format", "json", ".").stdout)["launches"]
    by_file = {(launch["file"], launch["engine"]) for launch in launches}
    assert {("llama.sh", "llama.cpp"), ("compose.yaml", "vllm"), ("compose.yaml", "llama.cpp")} <= by_file
    llama = next(launch for launch in launches if launch["file"] == "llama.sh")
    # llama.cpp's std::stoi throws out_of_range ("stoi"): each huge value is a refused argument
    assert [error["message"] for error in llama["cli_errors"]] == [
        f'error while handling argument "{flag}": stoi' for flag in ("--ctx-size", "--spec-draft-n-max", "-np")]
    pinned = next(launch for launch in launches if launch["file"] == "compose.yaml" and launch["engine"] == "vllm")
    assert pinned["assumed_version"]  # a 5,000-digit tag is no version: the newest possible one is assumed


# --- configuration that cannot be read: exit 2, one line ----------------------------------------------


@pytest.mark.parametrize(("name", "args", "says"), [
    pytest.param("config-utf16", (), "not UTF-8 (UTF-16 text at offset 0); TOML files must be UTF-8", id="toml-utf16"),
    pytest.param("config-invalid-byte", (), "not UTF-8 (byte 0xff at offset 31)", id="toml-invalid-byte"),
    pytest.param("config-5000-digit-int", (), "invalid TOML: ValueError: Exceeds the limit (4300 digits)",
                 id="toml-5000-digit-int"),
    pytest.param("engine-versions-5000-digits", (), "key `engine-versions.vllm`: '0.9999", id="engine-versions"),
    pytest.param("gpu-bandwidth-inf", (), "key `gpus.0.bandwidth_gbs`: inf is not a finite number", id="gpu-inf"),
    pytest.param("gpu-bandwidth-1e308", (), "key `gpus.0.bandwidth_gbs`: 1e+308 is not a finite number",
                 id="gpu-1e308"),
    pytest.param("gpu-tflops-nan", (), "key `gpus.0.bf16_tflops`: nan is not a finite number", id="gpu-nan"),
    pytest.param("house-rule-utf16", ("--extend-rules", "rules"), "cannot read rule file: not UTF-8 text (byte 0xff",
                 id="rule-utf16"),
    pytest.param("house-rule-binary", ("--extend-rules", "rules"), "cannot read rule file: not UTF-8 text",
                 id="rule-binary"),
    pytest.param("house-rule-10k-deep", ("--extend-rules", "rules"), "invalid YAML: nested too deeply to read",
                 id="rule-10k-deep"),
    pytest.param("house-rule-5000-digit-gt", ("--extend-rules", "rules"), "invalid YAML: ValueError: Exceeds the limit",
                 id="rule-5000-digit-gt"),
])
def test_unreadable_configuration_is_exit_2_with_one_line(tmp_path: Path, name: str, args: tuple[str, ...],
                                                           says: str) -> None:
    project = case(name, tmp_path)
    run = mtplint(project, "check", "--no-cache", *args, ".")
    assert run.code == 2 and says in run.stderr, run.stderr
    assert len(run.stderr) < 400  # a 5,000-digit value is not echoed whole
    assert run.stdout == ""


def test_engine_version_on_the_command_line_with_5000_digits_is_a_usage_error(tmp_path: Path) -> None:
    project = write_files(tmp_path, {"compose.yaml": BROKEN_COMPOSE})
    run = mtplint(project, "check", "--no-cache", "--isolated", "--engine-version", "vllm=" + "9" * 5000, ".")
    assert run.code == 2 and "is not a version" in run.stderr and "(5000 characters)" in run.stderr


def test_a_2000_file_extend_chain_is_read(tmp_path: Path) -> None:
    project = write_files(tmp_path, {"other/compose.yaml": BROKEN_COMPOSE})
    chain = project / "chain"
    chain.mkdir()
    for index in range(2000):
        last = index == 1999
        (chain / f"c{index}.toml").write_text('engine-versions = { vllm = "0.30.0" }\n' if last
                                              else f'extend = "c{index + 1}.toml"\n', encoding="utf-8")
    run = mtplint(project, "check", "--no-cache", "--config", "chain/c0.toml", "--output-format", "json", ".")
    assert_broken_launch_reported(run)
    (chain / "c1999.toml").write_text('extend = "c0.toml"\n', encoding="utf-8")
    looped = mtplint(project, "check", "--no-cache", "--config", "chain/c0.toml", ".")
    assert looped.code == 2 and "circular extend chain" in looped.stderr


def test_an_unsearchable_directory_holds_no_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A directory above the file that the user may not search (``chmod 711`` parents, a mode-000
    sibling checkout): as root nothing is refused, so the refusal is simulated where config
    discovery asks."""
    project = write_files(tmp_path, {"locked/inner/compose.yaml": BROKEN_COMPOSE})
    locked = str(project / "locked")
    real_is_file = Path.is_file

    def refusing_is_file(path: Path) -> bool:
        if str(path).startswith(locked + os.sep) and path.name.endswith("toml"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_is_file(path)

    monkeypatch.setattr(Path, "is_file", refusing_is_file)
    code, out, err = run_cli(["check", "--no-cache", "--output-format", "json", "locked/inner/compose.yaml"],
                             cwd=project)
    assert code == 1, err
    assert [f["code"] for f in json.loads(out)].count("MTP101") == 1


# --- output ----------------------------------------------------------------------------------------


def test_control_characters_from_files_are_escaped_in_every_text_format(tmp_path: Path) -> None:
    project = case("control-characters", tmp_path)
    for output_format in ("full", "concise", "github"):
        run = mtplint(project, "check", "--no-cache", "--isolated", "--output-format", output_format, ".")
        assert run.code == 1
        assert "\x1b" not in run.stdout and "\x07" not in run.stdout
        assert "`--evil\\x1b[2J` is not a flag of vLLM" in run.stdout
        assert "--bell\\x07\\x1b]0" in run.stdout
    as_json = mtplint(project, "check", "--no-cache", "--isolated", "--output-format", "json", ".")
    # JSON keeps the text itself (escaped by JSON as \\u001b): a program reads the real flag
    assert any("`--evil\x1b[2J`" in f["message"] for f in as_json.findings)


def non_utf8_project(tmp_path: Path) -> Path:
    project = write_files(tmp_path / "project", {"other/compose.yaml": BROKEN_COMPOSE})
    # the bytes of a Latin-1 name: Python holds them as lone surrogates, which UTF-8 cannot encode
    with open(os.path.join(os.fsencode(project), b"compose.caf\xe9.yaml"), "wb") as handle:
        handle.write(BROKEN_COMPOSE.encode())
    return project


@pytest.mark.parametrize("jobs", ["1", "4"])
def test_a_name_that_is_not_utf8_is_written_in_json_and_sarif(tmp_path: Path, jobs: str) -> None:
    project = non_utf8_project(tmp_path)
    run = mtplint(project, "check", "--no-cache", "-j", jobs, "--output-format", "json", "-o", "out.json", ".")
    assert run.code == 1 and run.stderr == ""
    findings = json.loads((project / "out.json").read_text(encoding="utf-8"))
    assert {f["filename"] for f in findings if f["code"] == "MTP101"} == {"compose.caf\ufffd.yaml",
                                                                           "other/compose.yaml"}
    run = mtplint(project, "check", "--no-cache", "-j", jobs, "--output-format", "sarif", "-o", "out.sarif", ".")
    assert run.code == 1 and run.stderr == ""
    log = json.loads((project / "out.sarif").read_text(encoding="utf-8"))
    uris = {result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for result in log["runs"][0]["results"] if result["ruleId"] == "MTP101"}
    assert uris == {"compose.caf%E9.yaml", "other/compose.yaml"}  # the name's own bytes, percent-encoded
    text = mtplint(project, "check", "--no-cache", "-j", jobs, "--output-format", "concise", ".")
    assert "compose.caf\\xe9.yaml:6:24: MTP101" in text.stdout


def test_invalid_utf8_on_stdin_is_judged_as_the_same_bytes_saved(tmp_path: Path) -> None:
    buffer = BROKEN_COMPOSE.replace("Qwen/Qwen3.6-27B", "Qwen/Qwen3.6-27B-caf\xe9").encode("latin-1")
    project = write_files(tmp_path, {"compose.yaml": BROKEN_COMPOSE})
    (project / "compose.yaml").write_bytes(buffer)
    saved = mtplint(project, "check", "--no-cache", "--isolated", "--output-format", "json", "compose.yaml")
    run = mtplint(project, "check", "--no-cache", "--isolated", "--output-format", "json",
                  "--stdin-filename", "compose.yaml", stdin=buffer)
    # not text (Latin-1 in a UTF-8 file): MTP001 on the file, no traceback, as for the saved file
    assert len(run.at("compose.yaml", "MTP001")) == len(saved.at("compose.yaml", "MTP001")) == 1
    assert run.code == saved.code == 1


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_a_full_disk_on_stdout_is_exit_2_with_a_message(tmp_path: Path) -> None:
    project = write_files(tmp_path, {"compose.yaml": BROKEN_COMPOSE})
    with open("/dev/full", "w") as full:
        run = mtplint(project, "check", "--no-cache", "--isolated", ".", stdout=full)
    assert run.code == 2
    assert run.stderr == "mtplint: error: cannot write the report to standard output: No space left on device\n"


def test_a_closed_stdout_is_exit_2_with_a_message(tmp_path: Path) -> None:
    project = write_files(tmp_path, {"compose.yaml": BROKEN_COMPOSE})
    completed = subprocess.run(
        [sys.executable, "-c", "import os, sys; os.close(1); from mtplint.cli import run; sys.argv[1:] = "
         "['check', '--no-cache', '--isolated', '.']; run()"],
        cwd=project, stderr=subprocess.PIPE, timeout=60, text=True)
    assert completed.returncode == 2, completed.stderr
    assert completed.stderr.startswith("mtplint: error: cannot write the report to standard output")
    assert "Traceback" not in completed.stderr
    # and a report to a file is still written when standard output is closed
    completed = subprocess.run(
        [sys.executable, "-c", "import os, sys; os.close(1); from mtplint.cli import run; sys.argv[1:] = "
         "['check', '--no-cache', '--isolated', '-o', 'report.txt', '.']; run()"],
        cwd=project, stderr=subprocess.PIPE, timeout=60, text=True)
    assert completed.returncode == 1, completed.stderr
    assert "MTP101" in (project / "report.txt").read_text(encoding="utf-8")


# --- one boundary per file, launch and rule -----------------------------------------------------------


def _boom(*_args: Any, **_kwargs: Any) -> Any:
    raise ZeroDivisionError("planted by the test")


@pytest.fixture
def two_launches(tmp_path: Path) -> Path:
    return write_files(tmp_path, {
        "compose.yaml": BROKEN_COMPOSE,
        "serve.sh": "#!/bin/sh\nexec vllm serve Qwen/Qwen3.6-27B --kv-cache-dtype turboquant_4bit_nc \\\n"
                    "  --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 2}'\n",
    })


def in_process(project: Path, *args: str) -> tuple[int, str, str]:
    code, out, err = run_cli(["check", "--no-cache", "--isolated", *args], cwd=project)
    assert "Traceback" not in err
    return code, out, err


@pytest.mark.parametrize("jobs", ["1", "4"])
def test_a_rule_that_raises_is_a_finding_under_its_code_and_the_others_run(
        two_launches: Path, monkeypatch: pytest.MonkeyPatch, jobs: str) -> None:
    import mtplint.checks.mtp102 as mtp102

    monkeypatch.setattr(mtp102, "check", _boom)
    code, _, err = in_process(two_launches, "-j", jobs, "--output-format", "sarif", "-o", "out.sarif", ".")
    assert code == 1 and err == ""
    log = json.loads((two_launches / "out.sarif").read_text(encoding="utf-8"))
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is True
    results = [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], r["message"]["text"])
               for r in log["runs"][0]["results"]]
    # MTP101 still found in both files (worker processes included), MTP102 crashed in both
    assert {(rule, uri) for rule, uri, _ in results if rule == "MTP101"} == {("MTP101", "compose.yaml"),
                                                                              ("MTP101", "serve.sh")}
    crashed = [text for rule, _, text in results if rule == "MTP102"]
    assert len(crashed) == 2 and all(text.startswith("internal error in rule MTP102 (ZeroDivisionError: planted "
                                                     "by the test); this rule did not check this launch")
                                     for text in crashed)


def test_the_traceback_is_shown_only_with_verbose(two_launches: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    import mtplint.checks.mtp102 as mtp102

    monkeypatch.setattr(mtp102, "check", _boom)
    monkeypatch.delenv("MTPLINT_DEBUG", raising=False)
    in_process(two_launches, "--output-format", "concise", "compose.yaml")
    assert "Traceback" not in capsys.readouterr().err
    code, out, _ = in_process(two_launches, "--verbose", "--output-format", "concise", "compose.yaml")
    shown = capsys.readouterr().err  # the traceback goes to the real standard error
    assert code == 1 and "compose.yaml:5:7: MTP102 internal error in rule MTP102" in out
    assert "mtplint: traceback of the internal error in rule MTP102 on compose.yaml" in shown
    assert "ZeroDivisionError: planted by the test" in shown and "Traceback (most recent call last)" in shown


@pytest.mark.parametrize("jobs", ["1", "4"])
def test_an_extractor_that_raises_is_mtp001_for_that_file(two_launches: Path, monkeypatch: pytest.MonkeyPatch,
                                                          jobs: str) -> None:
    import mtplint.extract.shell.launches as shell

    monkeypatch.setattr(shell, "extract", _boom)
    code, out, err = in_process(two_launches, "-j", jobs, "--output-format", "json", ".")
    findings = json.loads(out)
    assert code == 1 and err == ""
    assert [(f["filename"], f["code"]) for f in findings if f["code"] in ("MTP001", "MTP101")] == [
        ("compose.yaml", "MTP101"), ("serve.sh", "MTP001")]
    (crash,) = [f for f in findings if f["code"] == "MTP001"]
    assert crash["message"].startswith("internal error while reading this file (ZeroDivisionError: planted by the "
                                       "test); it was not checked")


@pytest.mark.parametrize("jobs", ["1", "4"])
def test_modelling_that_raises_is_mtp001_at_the_launch(two_launches: Path, monkeypatch: pytest.MonkeyPatch,
                                                       jobs: str) -> None:
    import mtplint.pipeline as pipeline

    real = pipeline.hardware_for

    def failing_for_scripts(launch: Any, options: Any) -> Any:
        if launch.source.display == "serve.sh":
            raise KeyError("planted by the test")
        return real(launch, options)

    monkeypatch.setattr(pipeline, "hardware_for", failing_for_scripts)
    code, out, err = in_process(two_launches, "-j", jobs, "--output-format", "json", ".")
    findings = json.loads(out)
    assert code == 1 and err == ""
    assert [(f["filename"], f["code"], f["location"]["row"]) for f in findings
            if f["code"] in ("MTP001", "MTP101")] == [("compose.yaml", "MTP101", 6), ("serve.sh", "MTP001", 2)]


def test_an_error_outside_every_file_is_exit_2_with_one_line(two_launches: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import mtplint.analysis as analysis

    monkeypatch.setattr(analysis, "selected_rules", _boom)  # choosing the rules fails: nothing can be checked
    code, out, err = run_cli(["check", "--no-cache", "--isolated", "compose.yaml", "serve.sh"], cwd=two_launches)
    assert code == 2 and out == ""
    assert err == ("mtplint: error: internal error, the run did not complete (ZeroDivisionError: planted "
                              "by the test); please report it (`--verbose` shows the traceback)\n")


@pytest.mark.parametrize("jobs", ["1", "4"])
def test_the_unresolved_settings_pass_has_its_own_boundary(two_launches: Path, monkeypatch: pytest.MonkeyPatch,
                                                           jobs: str) -> None:
    import mtplint.checks.mtp003 as mtp003

    monkeypatch.setattr(mtp003, "unresolved_findings", _boom)
    code, out, err = in_process(two_launches, "-j", jobs, "--output-format", "json", ".")
    findings = json.loads(out)
    assert code == 1 and err == ""
    assert sorted((f["filename"], f["code"]) for f in findings if f["code"] in ("MTP003", "MTP101")) == [
        ("compose.yaml", "MTP003"), ("compose.yaml", "MTP101"), ("serve.sh", "MTP003"), ("serve.sh", "MTP101")]
    assert all(f["message"].startswith("internal error in rule MTP003 (ZeroDivisionError")
               for f in findings if f["code"] == "MTP003")


def test_fix_writes_nothing_outside_the_project(tmp_path: Path) -> None:
    """Found by the property test (tests/test_fuzz_cli.py): a launch's ``--config ../outside/…``
    made ``--fix`` rewrite a file outside the folder it was run on."""
    config = "model: Qwen/Qwen3.6-27B\nkv-cache-dtype: turboquant_4bit_nc\nspeculative-config:\n  method: mtp\n"
    write_files(tmp_path, {
        "outside/cfg.yaml": config + "  num_speculative_tokens: 2\n",
        "project/serve.sh": "#!/usr/bin/env bash\nset -euo pipefail\n"
                            "exec vllm serve --config ../outside/cfg.yaml --tensor-parallel-size 2\n",
        "project/cfg.yaml": config + "  num_speculative_tokens: 3\n",
        "project/inside.sh": "#!/bin/sh\nexec vllm serve --config cfg.yaml\n",
    })
    outside = (tmp_path / "outside" / "cfg.yaml").read_bytes()
    code, out, err = run_cli(["check", "--no-cache", "--isolated", "--fix", "--unsafe-fixes", "--output-format",
                              "json", "."], cwd=tmp_path / "project")
    assert (tmp_path / "outside" / "cfg.yaml").read_bytes() == outside
    assert "kv-cache-dtype: fp8_e5m2" in (tmp_path / "project" / "cfg.yaml").read_text(encoding="utf-8")
    assert code == 1
    assert "not among the files being linted" in err
    assert [(f["filename"], f["code"]) for f in json.loads(out) if f["code"] in ("MTP001", "MTP101")] == [
        ("../outside/cfg.yaml", "MTP101")]  # still reported, its fix shown and not applied
    # naming the outside folder puts it in the run: then it is fixed
    code, _, err = run_cli(["check", "--no-cache", "--isolated", "--fix", "--unsafe-fixes", ".", "../outside"],
                           cwd=tmp_path / "project")
    assert "kv-cache-dtype: fp8_e5m2" in (tmp_path / "outside" / "cfg.yaml").read_text(encoding="utf-8"), err


def test_a_rule_that_raises_leaves_the_undecided_note_of_the_others(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # unpinned vLLM: MTP102 cannot decide (prefix caching's default changed in 0.28), which MTP004 says;
    # with MTP401 crashing, the rules run one by one and MTP004 must still see what MTP102 left open
    import mtplint.checks.mtp401 as mtp401

    project = write_files(tmp_path, {"serve.sh": (
        "#!/bin/sh\nexec vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct --tensor-parallel-size 4 \\\n"
        "  --speculative-config '{\"method\": \"qwen3_next_mtp\", \"num_speculative_tokens\": 2}'\n")})
    _, out, _ = in_process(project, "--output-format", "json", ".")
    assert {finding["code"] for finding in json.loads(out)} >= {"MTP004", "MTP401"}
    monkeypatch.setattr(mtp401, "check", _boom)
    _, out, _ = in_process(project, "--output-format", "json", ".")
    found = {finding["code"]: finding["message"] for finding in json.loads(out)}
    assert found["MTP401"].startswith("internal error in rule MTP401") and "MTP102" in found["MTP004"]
