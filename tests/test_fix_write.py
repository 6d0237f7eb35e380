"""Writing fixes back (issue 4, acceptance 4 and 5): atomic, only when changed, as the file was
stored (encoding, BOM, line endings, mode), never over a file changed since it was read, and a file
that cannot be written is a per-file failure (a finding), not exit 2."""

from __future__ import annotations

import codecs
import json
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mtplint.checks import Finding, RuleContext
from mtplint.extract import FileLoader
from mtplint.fix.write import write_fixed
from mtplint.source import SourceFile
from tests.conftest import run_cli
from tests.test_fix_engine import PIN, SERVE, adds_flags

Predicate = Callable[[RuleContext], Iterator[Finding]]


def _read(path: Path) -> SourceFile:
    source = FileLoader(path.parent).load(path)
    assert source is not None
    return source


@pytest.mark.parametrize(("encoding", "bom"), [
    ("utf-8", b""), ("utf-8", codecs.BOM_UTF8), ("utf-16-le", codecs.BOM_UTF16_LE), ("utf-16-be", codecs.BOM_UTF16_BE),
    ("utf-32-le", codecs.BOM_UTF32_LE),
])
def test_the_encoding_and_bom_are_kept(tmp_path: Path, encoding: str, bom: bytes) -> None:
    path = tmp_path / "serve.sh"
    path.write_bytes(bom + "vllm serve m \\\r\n\t--x 1".encode(encoding))
    source = _read(path)
    assert (source.encoding, source.bom) == (encoding, bom)
    assert write_fixed(source, source.text + " --y é") is None
    assert path.read_bytes() == bom + "vllm serve m \\\r\n\t--x 1 --y é".encode(encoding)


def test_the_mode_is_kept_and_no_temporary_file_is_left(tmp_path: Path) -> None:
    path = tmp_path / "serve.sh"
    path.write_text("vllm serve m\n")
    path.chmod(0o751)
    source = _read(path)
    assert write_fixed(source, "vllm serve m --x\n") is None
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert sorted(p.name for p in tmp_path.iterdir()) == ["serve.sh"]


def test_an_unchanged_text_is_not_written(tmp_path: Path) -> None:
    path = tmp_path / "serve.sh"
    path.write_text("vllm serve m\n")
    os.utime(path, (1_000_000, 1_000_000))
    source = _read(path)
    assert write_fixed(source, source.text) is None
    assert path.stat().st_mtime == 1_000_000


def test_a_symlink_stays_a_link_and_its_target_is_written(tmp_path: Path) -> None:
    target = tmp_path / "real.sh"
    target.write_text("vllm serve m\n")
    link = tmp_path / "serve.sh"
    link.symlink_to(target.name)
    source = _read(link)
    assert write_fixed(source, "vllm serve m --x\n") is None
    assert link.is_symlink()
    assert target.read_text() == "vllm serve m --x\n"


def test_a_file_changed_since_it_was_read_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "serve.sh"
    path.write_text("vllm serve m\n")
    source = _read(path)
    path.write_text("vllm serve other-model\n")
    failure = write_fixed(source, "vllm serve m --x\n")
    assert failure is not None and "changed on disk since it was read" in failure.reason
    assert path.read_text() == "vllm serve other-model\n"


def test_a_read_only_file_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "serve.sh"
    path.write_text("vllm serve m\n")
    path.chmod(0o444)
    source = _read(path)
    failure = write_fixed(source, "vllm serve m --x\n")
    assert failure is not None and "read-only" in failure.reason
    assert path.read_text() == "vllm serve m\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["serve.sh"]


# --- through the command line (acceptance 5) -------------------------------------------------


@pytest.fixture
def rule(monkeypatch: pytest.MonkeyPatch) -> Callable[[Predicate], None]:
    def install(predicate: Predicate) -> None:
        monkeypatch.setattr("mtplint.checks.mtp102.check", predicate)

    return install


def _fix(tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli(["check", "--isolated", "--select", "MTP102", *PIN, "--fix", *extra, "."], cwd=tmp_path)


def test_a_read_only_file_is_left_intact_with_a_finding_and_not_exit_2(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    rule(adds_flags("--enable-chunked-prefill"))
    (tmp_path / "serve.sh").write_text(SERVE)
    (tmp_path / "other.sh").write_text(SERVE.replace("16", "32"))
    (tmp_path / "serve.sh").chmod(0o444)
    code, out, err = _fix(tmp_path, "--output-format", "json")
    assert code == 1, err
    assert (tmp_path / "serve.sh").read_text() == SERVE
    assert (tmp_path / "other.sh").read_text().endswith("32 --enable-chunked-prefill\n"), "the other file is fixed"
    findings: list[dict[str, Any]] = json.loads(out)
    failures = [f for f in findings if f["code"] == "MTP001"]
    assert [(f["filename"], f["message"]) for f in failures] == [
        ("serve.sh", "cannot write fix: the file is read-only; left as it is")]
    assert {f["filename"] for f in findings if f["code"] == "MTP102"} == {"serve.sh"}, "the unfixed finding is still reported"
    assert "serve.sh: cannot write fix: the file is read-only" in err


def test_a_file_changed_between_read_and_write_is_left_intact(tmp_path: Path, rule: Callable[[Predicate], None],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import mtplint.fix.apply as fixing

    rule(adds_flags("--enable-chunked-prefill"))
    (tmp_path / "serve.sh").write_text(SERVE)
    edited_meanwhile = SERVE.replace("16", "8")
    real = fixing.fix_project

    def fix_then_someone_edits(*args: Any, **kwargs: Any) -> fixing.FixRun:
        run = real(*args, **kwargs)
        (tmp_path / "serve.sh").write_text(edited_meanwhile)
        return run

    monkeypatch.setattr(fixing, "fix_project", fix_then_someone_edits)
    code, out, err = _fix(tmp_path, "--output-format", "concise")
    assert code == 1, err
    assert (tmp_path / "serve.sh").read_text() == edited_meanwhile
    assert "serve.sh:1:1: MTP001 cannot write fix: the file changed on disk since it was read" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["serve.sh"]


def test_a_write_failure_with_fix_only_is_reported_and_not_exit_2(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    rule(adds_flags("--enable-chunked-prefill"))
    (tmp_path / "serve.sh").write_text(SERVE)
    (tmp_path / "serve.sh").chmod(0o444)
    code, out, _ = _fix(tmp_path, "--fix-only")
    assert code == 1
    assert "serve.sh: MTP001 cannot write fix: the file is read-only" in out
    assert (tmp_path / "serve.sh").read_text() == SERVE
