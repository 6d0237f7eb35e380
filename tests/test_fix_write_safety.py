"""``--fix`` writes what it was given, keeps what the file is, and survives being killed (issue 19).

- a file a launch only refers to (a ``--config`` YAML outside the paths given) is not written: its
  fix is reported as not applied, with the reason, unless the file is named too;
- a fixed file stays the same file: setuid/setgid bits, hard links and extended attributes are kept
  (the file is rewritten in place, as ruff does);
- a run killed with SIGKILL at any moment leaves every file original or fully fixed once the next
  run has started, and its journal is never linted and is removed by that next run.
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import random
import signal
import stat
import tempfile
import time
from pathlib import Path

import pytest

from mtplint.cli import main
from mtplint.digest import sha256_hex
from mtplint.extract import FileLoader
from mtplint.fix.write import recover_interrupted, write_fixed
from mtplint.source import SourceFile
from tests.conftest import run_cli, write_files

#: MTP107's safe fix (tests/fixes/MTP107.yaml): a ``false`` in a ``vllm serve --config`` file is dropped by vLLM
CONFIG = """\
# vLLM serve options
tensor-parallel-size: 2
enable-prefix-caching: false    # MTP drops the last block otherwise
speculative-config:
  method: mtp
  num_speculative_tokens: 1
"""
CONFIG_FIXED = CONFIG.replace("enable-prefix-caching: false", "no-enable-prefix-caching: true")
FIX_ARGS = ["--isolated", "--select", "MTP107", "--engine-version", "vllm=0.12.0"]


def _serve(config: str) -> str:
    return f"""\
#!/usr/bin/env bash
set -euo pipefail
exec vllm serve Qwen/Qwen3-8B \\
  --config {config} \\
  --port 8000
"""


def _read(path: Path) -> SourceFile:
    source = FileLoader(path.parent).load(path)
    assert source is not None
    return source


# --- only the paths being linted are written ---------------------------------------------------------


def test_a_config_outside_the_paths_is_not_written_and_says_why(tmp_path: Path) -> None:
    outside = tmp_path / "shared" / "vllm.yaml"
    write_files(tmp_path, {"repo/serve.sh": _serve(str(outside)), "repo/configs/serve.yaml": CONFIG,
                           "shared/vllm.yaml": CONFIG})
    (tmp_path / "repo" / "local.sh").write_text(_serve("configs/serve.yaml"))
    code, out, err = run_cli(["check", "--fix", *FIX_ARGS, "--output-format", "concise", "repo"], cwd=tmp_path)
    assert code == 1, err
    assert outside.read_text() == CONFIG, "the file outside `repo` is left as it was"
    assert (tmp_path / "repo" / "configs" / "serve.yaml").read_text() == CONFIG_FIXED, "the one inside is fixed"
    assert "shared/vllm.yaml:3:1: MTP107" in out, "its finding is still reported"
    assert "fix not applied" in err and "not among the files being linted (name that file too to fix it)" in err


def test_a_config_outside_is_written_when_it_is_named_too(tmp_path: Path) -> None:
    outside = tmp_path / "shared" / "vllm.yaml"
    write_files(tmp_path, {"repo/serve.sh": _serve(str(outside)), "shared/vllm.yaml": CONFIG})
    code, _, err = run_cli(["check", "--fix", *FIX_ARGS, "repo", "shared/vllm.yaml"], cwd=tmp_path)
    assert code == 0, err
    assert outside.read_text() == CONFIG_FIXED
    assert "fix not applied" not in err


def test_a_launch_named_alone_does_not_get_its_config_rewritten(tmp_path: Path) -> None:
    # pre-commit passes the changed files only: the config it reads is someone else's change
    write_files(tmp_path, {"serve.sh": _serve("vllm.yaml"), "vllm.yaml": CONFIG})
    code, _, err = run_cli(["check", "--fix", *FIX_ARGS, "serve.sh"], cwd=tmp_path)
    assert code == 1, err
    assert (tmp_path / "vllm.yaml").read_text() == CONFIG
    assert "vllm.yaml" in err and "not among the files being linted" in err


# --- the file stays the same file ----------------------------------------------------------------


def _fix_tree(root: Path) -> None:
    code, _, err = run_cli(["check", "--fix", *FIX_ARGS, "."], cwd=root)
    assert code == 0, err


#: MTP504's safe fix: a switch given a value the parser rejects (`--enable-prefix-caching true`)
SETUID_SCRIPT = """\
#!/bin/bash
set -euo pipefail
exec vllm serve Qwen/Qwen3.6-27B \\
  --enable-prefix-caching true \\
  --speculative-config '{"method": "mtp", "num_speculative_tokens": 1}'
"""


def _fix_setuid_script(folder: Path) -> None:
    script = folder / "serve.sh"
    script.write_text(SETUID_SCRIPT)
    script.chmod(0o6755)
    code = main(["check", "--fix", "--isolated", "--select", "MTP504", "--engine-version", "vllm=0.33.0",
                 str(script)], io.StringIO(), io.StringIO())
    assert code == 0
    assert script.read_text() == SETUID_SCRIPT.replace("--enable-prefix-caching true", "--enable-prefix-caching")
    assert stat.S_IMODE(script.stat().st_mode) == 0o6755


@pytest.mark.skipif(not hasattr(os, "fork"), reason="root fixes the script as another user in a forked child")
def test_a_setuid_setgid_script_keeps_its_mode(tmp_path: Path) -> None:
    # the kernel clears setuid/setgid when a process without CAP_FSETID writes the file; root keeps
    # them, so root runs the fix as an ordinary user who owns the script
    _fix_setuid_script(tmp_path)
    if os.geteuid() != 0:
        return
    # root again, as nobody: the modules the fix needs are loaded by now (the interpreter's own
    # files may be out of nobody's reach)
    nobody = 65534
    # pytest's own temporary directories are private to root: the user needs one it can reach
    with tempfile.TemporaryDirectory() as shared:
        folder = Path(shared)
        folder.chmod(0o777)
        child = os.fork()
        if child == 0:  # pragma: no cover - the child process
            status = 1
            try:
                os.setgroups([])
                os.setgid(nobody)
                os.setuid(nobody)
                _fix_setuid_script(folder)
                status = 0
            finally:
                os._exit(status)
        _, status = os.waitpid(child, 0)
        assert os.waitstatus_to_exitcode(status) == 0


def test_a_hard_linked_file_is_fixed_under_every_name(tmp_path: Path) -> None:
    write_files(tmp_path, {"repo/serve.sh": _serve("vllm.yaml"), "repo/vllm.yaml": CONFIG})
    other_name = tmp_path / "elsewhere.yaml"
    os.link(tmp_path / "repo" / "vllm.yaml", other_name)
    _fix_tree(tmp_path / "repo")
    assert other_name.read_text() == CONFIG_FIXED
    assert os.path.samefile(other_name, tmp_path / "repo" / "vllm.yaml")
    assert other_name.stat().st_nlink == 2


def test_extended_attributes_are_kept(tmp_path: Path) -> None:
    write_files(tmp_path, {"serve.sh": _serve("vllm.yaml"), "vllm.yaml": CONFIG})
    config = tmp_path / "vllm.yaml"
    if not hasattr(os, "setxattr"):
        pytest.skip("no extended attributes through os on this system")
    try:
        os.setxattr(config, "user.origin", b"ops-team")
    except OSError as error:
        pytest.skip(f"this filesystem refuses extended attributes: {error}")
    _fix_tree(tmp_path)
    assert config.read_text() == CONFIG_FIXED
    assert os.getxattr(config, "user.origin") == b"ops-team"


def test_the_owner_and_inode_are_kept_and_nothing_is_left_beside(tmp_path: Path) -> None:
    write_files(tmp_path, {"serve.sh": _serve("vllm.yaml"), "vllm.yaml": CONFIG})
    config = tmp_path / "vllm.yaml"
    before = config.stat()
    _fix_tree(tmp_path)
    after = config.stat()
    assert (after.st_ino, after.st_uid, after.st_gid) == (before.st_ino, before.st_uid, before.st_gid)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["serve.sh", "vllm.yaml"]


# --- killed runs -------------------------------------------------------------------------------------


def _journal_for(path: Path, content: bytes) -> Path:
    journal = path.with_name(f".{path.name}.k1ll3d_x.{sha256_hex(content)[:16]}.mtplint-fix")
    journal.write_bytes(content)
    return journal


def test_a_write_cut_short_is_finished_by_the_next_run(tmp_path: Path) -> None:
    write_files(tmp_path, {"serve.sh": _serve("vllm.yaml"), "vllm.yaml": CONFIG_FIXED[:40]})
    journal = _journal_for(tmp_path / "vllm.yaml", CONFIG_FIXED.encode())
    _fix_tree(tmp_path)
    assert (tmp_path / "vllm.yaml").read_text() == CONFIG_FIXED
    assert not journal.exists()


def test_a_journal_cut_short_or_stale_is_removed_and_the_file_left_alone(tmp_path: Path) -> None:
    write_files(tmp_path, {"vllm.yaml": CONFIG, "serve.sh": _serve("vllm.yaml")})
    config = tmp_path / "vllm.yaml"
    cut_short = config.with_name(f".vllm.yaml.aaaa_bbb.{sha256_hex(CONFIG_FIXED.encode())[:16]}.mtplint-fix")
    cut_short.write_bytes(CONFIG_FIXED.encode()[:30])  # its content does not match its digest
    stale = _journal_for(config, CONFIG_FIXED.encode())  # the file is the original: not a prefix of it
    assert recover_interrupted([tmp_path]) == []
    assert config.read_text() == CONFIG
    assert not cut_short.exists() and not stale.exists()


def test_a_leftover_journal_is_never_linted(tmp_path: Path) -> None:
    write_files(tmp_path, {"serve.sh": _serve("vllm.yaml"), "vllm.yaml": CONFIG})
    _journal_for(tmp_path / "serve.sh", b"#!/bin/bash\nexec vllm serve m --config vllm.yaml --speculative-config '{oops'\n")
    _journal_for(tmp_path / "vllm.yaml", CONFIG.encode())
    code, out, err = run_cli(["check", "--isolated", "--output-format", "json", "."], cwd=tmp_path)
    assert code == 1, err
    files = {finding["filename"] for finding in json.loads(out)}
    assert files and not any("mtplint-fix" in name for name in files), files


def _failing_write(monkeypatch: pytest.MonkeyPatch, new: bytes, error: BaseException) -> None:
    """``os.write`` that fails when it is asked to write ``new`` (after the file was truncated)."""
    real = os.write

    def write(descriptor: int, data: bytes | memoryview) -> int:
        if bytes(data) == new:
            raise error
        return real(descriptor, data)

    monkeypatch.setattr(os, "write", write)


def test_a_full_disk_in_the_middle_of_the_write_puts_the_old_bytes_back(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "vllm.yaml"
    path.write_text(CONFIG)
    source = _read(path)
    _failing_write(monkeypatch, CONFIG_FIXED.encode(), OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
    failure = write_fixed(source, CONFIG_FIXED)
    assert failure is not None and failure.reason == "cannot write fix: No space left on device"
    assert path.read_text() == CONFIG
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vllm.yaml"]


def test_an_interrupted_write_keeps_its_journal_and_the_next_run_finishes_it(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "vllm.yaml"
    path.write_text(CONFIG)
    source = _read(path)
    with monkeypatch.context() as patch:
        _failing_write(patch, CONFIG_FIXED.encode(), KeyboardInterrupt())
        with pytest.raises(KeyboardInterrupt):
            write_fixed(source, CONFIG_FIXED)
    assert path.read_bytes() == b"", "cut short right after the truncation"
    [journal] = [p for p in tmp_path.iterdir() if p.name.endswith(".mtplint-fix")]
    assert recover_interrupted([tmp_path]) == [path]
    assert path.read_text() == CONFIG_FIXED
    assert not journal.exists()


def _fix_in_child(root: Path) -> int:
    """Run ``check --fix`` in a forked child (no interpreter start-up: the kill lands in the run)."""
    child = os.fork()
    if child == 0:  # pragma: no cover - the child process
        code = 2
        try:
            os.chdir(root)
            code = main(["check", "--fix", *FIX_ARGS, "."], io.StringIO(), io.StringIO())
        finally:
            os._exit(code)
    return child


@pytest.mark.xdist_group("timed")  # kills runs at moments drawn from a timed run
@pytest.mark.skipif(not hasattr(os, "fork"), reason="runs --fix in forked children")
def test_a_fix_killed_at_any_moment_leaves_every_file_original_or_fixed(tmp_path: Path) -> None:
    originals = {"serve.sh": _serve("configs/a.yaml"), "configs/a.yaml": CONFIG,
                 "other/run.sh": _serve("b.yaml"), "other/b.yaml": CONFIG + "max-model-len: 32768\n" * 40}
    fixed = {name: text.replace("enable-prefix-caching: false", "no-enable-prefix-caching: true")
             for name, text in originals.items()}
    write_files(tmp_path, originals)
    started = time.monotonic()
    os.waitpid(_fix_in_child(tmp_path), 0)
    whole_run = time.monotonic() - started
    assert {name: (tmp_path / name).read_text() for name in originals} == fixed
    chance = random.Random(19)
    kills = attempts = 0
    while kills < 50:
        attempts += 1
        assert attempts < 250, f"only {kills} of {attempts} runs were killed before their end"
        if all((tmp_path / name).read_text() == fixed[name] for name in originals):
            write_files(tmp_path, originals)
        child = _fix_in_child(tmp_path)
        time.sleep(chance.uniform(0, whole_run))
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)
        _, status = os.waitpid(child, 0)
        if os.WIFSIGNALED(status):
            kills += 1
        else:
            whole_run *= 0.9  # the first run was slower than the next ones: aim earlier
        journals = {p.name for p in tmp_path.rglob("*.mtplint-fix")}
        for name in originals:
            now = (tmp_path / name).read_bytes()
            if now in (originals[name].encode(), fixed[name].encode()):
                continue
            # cut short in the middle of the write: the next run finishes it from the journal
            assert fixed[name].encode().startswith(now), name
            assert any(journal.startswith(f".{Path(name).name}.") for journal in journals), name
    # the next run lints no journal, and a --fix removes them all and fixes everything
    code, out, err = run_cli(["check", *FIX_ARGS, "--output-format", "json", "."], cwd=tmp_path)
    assert code in (0, 1), err
    assert not any("mtplint-fix" in finding["filename"] for finding in json.loads(out))
    os.waitpid(_fix_in_child(tmp_path), 0)
    assert {name: (tmp_path / name).read_text() for name in originals} == fixed
    assert list(tmp_path.rglob("*.mtplint-fix")) == []


def test_a_tree_named_through_a_link_has_its_own_config_fixed(tmp_path: Path) -> None:
    # `check --fix /srv/current` where /srv/current links to a release: the config the launch
    # reads is a file of the tree named, whichever path reaches it
    write_files(tmp_path, {"releases/r1/serve.sh": _serve("configs/serve.yaml"),
                           "releases/r1/configs/serve.yaml": CONFIG})
    (tmp_path / "current").symlink_to(tmp_path / "releases" / "r1", target_is_directory=True)
    code, _, err = run_cli(["check", "--fix", *FIX_ARGS, str(tmp_path / "current")], cwd=tmp_path)
    assert code == 0, err
    assert (tmp_path / "releases" / "r1" / "configs" / "serve.yaml").read_text() == CONFIG_FIXED
