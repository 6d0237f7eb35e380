"""A ``check`` verifies its fixes (:func:`mtplint.fix.verify.verified`) a batch of files at a time
(issue 24: time linear and memory bounded at 100k files): the fixing of a large tree's fixes all at
once re-lints, for each try, against every file's texts, and holds them all to its end. Batches
never split files whose fixings may meet, and the fixes marked and refused, and why, are those of
one fixing of everything. Counted, not timed."""

from __future__ import annotations

import contextlib
import os as verify_os
from pathlib import Path
from typing import Any

import pytest

from mtplint.checks import Finding
from mtplint.config import LintSettings
from mtplint.fix import apply as fix_apply
from mtplint.fix import verify
from mtplint.lint import lint
from mtplint.pipeline import Options
from tests.conftest import run_cli, write_files
from tests.test_verify_reuse import TREE

#: the linked projects' files: a compose override pair and its .env, a unit and the script it starts
STACK = {"stack/compose.yaml", "stack/compose.override.yaml", "stack/.env"}


def _shown(findings: list[Finding]) -> list[tuple[object, ...]]:
    return [(f.code, f.span.file, f.span.start, f.fix and (f.fix.applicability, f.fix.message)) for f in findings]


def _verified_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch_files: int,
                 unsafe: bool) -> tuple[list[tuple[object, ...]], list[set[str]]]:
    """The findings as ``check`` shows them after verifying their fixes in batches of at most
    ``batch_files`` files (more when linked files need them), and the files of each fixing."""
    fixings: list[set[str]] = []
    real_fix_project = fix_apply.fix_project

    def fix_project(paths: list[str], *args: Any, **kwargs: Any) -> Any:
        fixings.append({Path(path).relative_to(tmp_path).as_posix() for path in paths})
        return real_fix_project(paths, *args, **kwargs)

    monkeypatch.setattr(fix_apply, "fix_project", fix_project)
    monkeypatch.setattr(verify, "VERIFY_BATCH_FILES", batch_files)
    settings = LintSettings(pipeline=Options(root=tmp_path))
    with contextlib.chdir(tmp_path):
        result = lint([tmp_path], settings, jobs=1)
        shown = _shown(verify.verified(result.findings, settings, unsafe, analysed=result.analysed))
    return shown, fixings


@pytest.mark.parametrize("unsafe", [False, True])
def test_fixes_verified_in_batches_are_marked_as_by_one_fixing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               unsafe: bool) -> None:
    write_files(tmp_path, TREE)
    whole, [everything] = _verified_in(tmp_path, monkeypatch, 10_000, unsafe)
    batched, fixings = _verified_in(tmp_path, monkeypatch, 1, unsafe)
    assert batched == whole
    assert any(fix is not None and "not applied by --fix" in fix[1] for *_, fix in batched)
    # every file once, the linked ones in one fixing, each stand-alone script in one of its own
    assert sorted(name for files in fixings for name in files) == sorted(everything)
    assert len(fixings) >= 3
    stack = [files for files in fixings if not files.isdisjoint(STACK)]
    assert len(stack) == 1 and STACK & everything <= stack[0]
    assert all(len(files) == 1 for files in fixings if files.isdisjoint(STACK))


def test_batches_that_read_the_same_file_are_verified_together(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the run knew too little to link two files (here: it kept no analysis of any, so only a
    finding's file and those its fix edits are linked), the fixings of their batches read the same
    file, and everything is verified again as one fixing."""
    write_files(tmp_path, TREE)
    whole, [everything] = _verified_in(tmp_path, monkeypatch, 10_000, True)
    real_batches = verify._batches
    monkeypatch.setattr(verify, "_batches", lambda linked, root, analysed, *size: real_batches(linked, root, {}, *size))
    split, fixings = _verified_in(tmp_path, monkeypatch, 1, True)
    assert split == whole
    assert len(fixings) > 2 and fixings[-1] == everything == {f for files in fixings[:-1] for f in files}


def test_check_output_is_the_same_whatever_the_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_files(tmp_path, TREE)
    args = ["check", "--isolated", "--no-cache", "--jobs", "1", "--output-format", "full", "--show-fixes", "."]
    expected = run_cli(args, cwd=tmp_path)
    assert expected[0] == 1 and "[*]" in expected[1]
    monkeypatch.setattr(verify, "VERIFY_BATCH_FILES", 1)
    assert run_cli(args, cwd=tmp_path) == expected


def test_a_batch_holds_a_bounded_number_of_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Many stand-alone scripts each offering a fix: the fixings hold at most a batch's files each,
    and every script's fix is still offered."""
    write_files(tmp_path, {f"svc{number:02}/serve.sh": TREE["alone/serve-0.sh"] for number in range(30)})
    shown, fixings = _verified_in(tmp_path, monkeypatch, 8, True)
    assert [len(files) for files in fixings] == [8, 8, 8, 6]
    offered = {file for _, file, _, fix in shown if isinstance(fix, tuple) and fix[0] == "unsafe"}
    assert len(offered) == 30


def test_findings_without_fixes_need_no_fixing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_files(tmp_path, {"serve.sh": "#!/bin/sh\necho hello\n"})
    shown, fixings = _verified_in(tmp_path, monkeypatch, 8, True)
    assert shown == [] and fixings == []


@pytest.mark.parametrize(("batch_files", "collections"), [(10_000, 0), (8, 3)])
def test_the_cycles_of_a_batch_are_collected_only_before_another(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch_files: int, collections: int) -> None:
    """A large tree's batches leave cycles the run's disabled collector would keep to the end: the
    young ones are collected before each next batch. A run's only batch (a pre-commit hook's, a
    one-file check) is followed by no collection: the process's exit frees it."""
    write_files(tmp_path, {f"svc{number:02}/serve.sh": TREE["alone/serve-0.sh"] for number in range(30)})
    collected: list[int] = []
    monkeypatch.setattr(verify.gc, "collect", lambda generation=2: collected.append(generation) or 0)
    _, fixings = _verified_in(tmp_path, monkeypatch, batch_files, True)
    assert len(fixings) == collections + 1
    assert collected == [1] * collections


def test_batching_resolves_each_folder_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Which fixes' files read each other's is asked by real path; a tree's fixes share their
    folders, and each folder is asked of the file system once, not once for every file below it
    (``os.path.realpath`` walks every folder of every path). The batches stay what they were."""
    scripts = {f"deploy/site/region/svc{number:02}/serve.sh": TREE["alone/serve-0.sh"] for number in range(30)}
    write_files(tmp_path, scripts)
    settings = LintSettings(pipeline=Options(root=tmp_path))
    with contextlib.chdir(tmp_path):
        result = lint([tmp_path], settings, jobs=1)
        offered = verify.Offered(result.findings, unsafe=True)
        asked: list[str] = []
        real_lstat = verify_os.lstat

        def lstat(path: Any, *args: Any, **kwargs: Any) -> Any:
            asked.append(str(path))
            return real_lstat(path, *args, **kwargs)

        monkeypatch.setattr(verify_os, "lstat", lstat)
        batches = verify._batches(offered.linked, tmp_path, result.analysed)
        monkeypatch.undo()
    assert sorted(name for batch in batches for name in batch) == sorted(scripts)
    # each script, its folder and the three folders they share once; the folders above the tree
    # also for resolving the root
    assert len(asked) <= 2 * len(scripts) + 3 + 2 * len(tmp_path.parts)


def test_batching_holds_a_bounded_number_of_resolved_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The loader resolving the fixes' files forgets them every so many (a large tree's fixes
    read thousands of files, each path remembered with its real path): the batches stay the same."""
    from mtplint import extract

    scripts = {f"deploy/region{number % 3}/svc{number:02}/serve.sh": TREE["alone/serve-0.sh"] for number in range(30)}
    write_files(tmp_path, scripts)
    settings = LintSettings(pipeline=Options(root=tmp_path))
    held: list[int] = []

    class Loader(extract.FileLoader):
        def real_path(self, path: Path) -> str:
            real = super().real_path(path)
            held.append(len(self._plain_real_paths))
            return real

    with contextlib.chdir(tmp_path):
        result = lint([tmp_path], settings, jobs=1)
        offered = verify.Offered(result.findings, unsafe=True)
        expected = verify._batches(offered.linked, tmp_path, result.analysed)
        monkeypatch.setattr(verify, "FileLoader", Loader)
        monkeypatch.setattr(verify, "RESOLVED_AT_ONCE", 4)
        assert verify._batches(offered.linked, tmp_path, result.analysed) == expected
    # each file's path, and the paths its analysis read (its own), of four files at most
    assert len(held) >= 30 and max(held) <= 4


@pytest.mark.parametrize("cached", [False, True])
def test_the_fixing_holds_the_names_it_read_only_for_a_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              cached: bool) -> None:
    """Whether two batches read the same file is told by digests: the names of the files read are
    kept only for a cache, whose record depends on them. The fixes marked are the same either way."""
    write_files(tmp_path, {f"svc{number:02}/serve.sh": TREE["alone/serve-0.sh"] for number in range(12)})
    fixings: list[Any] = []
    real_fixing = verify._Fixing

    def fixing(*args: Any) -> Any:
        fixings.append(real_fixing(*args))
        return fixings[-1]

    monkeypatch.setattr(verify, "_Fixing", fixing)
    monkeypatch.setattr(verify, "VERIFY_BATCH_FILES", 4)
    args = ["check", "--isolated", "--jobs", "1", "--output-format", "full", "--show-fixes", "--unsafe-fixes", "."]
    monkeypatch.setenv("MTPLINT_CACHE_DIR", str(tmp_path.parent / "cache"))
    code, out, _ = run_cli([*args, *([] if cached else ["--no-cache"])], cwd=tmp_path)
    assert code == 1 and out.count("(applied by --fix)") == 12, out
    [used] = fixings
    assert len(used.read_digests) >= 12 and not used.overlapping
    assert len(used.read) == (len(used.read_digests) if cached else 0)


def test_a_batch_leaves_no_yaml_tree_to_the_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The YAML trees a batch's fixes located their words in are forgotten with the batch: its
    texts are never asked about again, and kept, the trees' cycles would outlive the collection
    that follows the batch and stay to the end of a large run."""
    from mtplint.edits import argv, substitution

    held: list[int] = []
    real = substitution.forget_sources

    def forget_sources() -> None:
        held.append(argv._yaml_documents.cache_info().currsize)
        real()
        assert argv._yaml_documents.cache_info().currsize == 0

    monkeypatch.setattr(substitution, "forget_sources", forget_sources)
    write_files(tmp_path, TREE)
    whole, _ = _verified_in(tmp_path, monkeypatch, 10_000, True)
    batched, fixings = _verified_in(tmp_path, monkeypatch, 1, True)
    assert batched == whole
    assert len(held) == 1 + len(fixings) and any(held)  # the compose stack's YAML files were parsed


#: stand-alone scripts each offering a fix, besides :data:`TREE`: batches enough to share out
SCRIPTS = {f"svc{number:02}/serve.sh": TREE["alone/serve-0.sh"] for number in range(12)}


def _fixed_by(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, processes: int, forked: Any = None,
              batch_files: int = 2, shared_files: int = 2) -> tuple[list[tuple[object, ...]], list[int]]:
    """The findings as ``check`` shows them after verifying their fixes over ``processes``, in
    batches of ``batch_files`` files (``shared_files`` when shared out among processes), and the
    process that fixed each batch. ``forked``: what a forked process does before fixing a batch."""
    pids = tmp_path.parent / f"pids-{processes}"
    pids.write_text("")
    parent = verify_os.getpid()
    real_fix_project = fix_apply.fix_project

    def fix_project(*args: Any, **kwargs: Any) -> Any:
        if forked is not None and verify_os.getpid() != parent:
            forked()
        with pids.open("a") as out:  # appended by whichever process fixes the batch
            out.write(f"{verify_os.getpid()}\n")
        return real_fix_project(*args, **kwargs)

    monkeypatch.setattr(fix_apply, "fix_project", fix_project)
    monkeypatch.setattr(verify, "VERIFY_BATCH_FILES", batch_files)
    monkeypatch.setattr(verify, "SHARED_BATCH_FILES", shared_files)
    settings = LintSettings(pipeline=Options(root=tmp_path))
    with contextlib.chdir(tmp_path):
        result = lint([tmp_path], settings, jobs=1)
        shown = _shown(verify.verified(result.findings, settings, True, analysed=result.analysed, processes=processes))
    monkeypatch.undo()
    return shown, [int(pid) for pid in pids.read_text().split()]


def test_a_run_with_several_processes_shares_its_batches_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With several processes (``--jobs``), the batches are fixed in this process and forked ones
    (they read none of each other's files): each batch once, the fixes marked and refused, and why,
    those of one process."""
    write_files(tmp_path, {**TREE, **SCRIPTS})
    alone, [pid] = (lambda shown, pids: (shown, sorted(set(pids))))(*_fixed_by(tmp_path, monkeypatch, 1))
    shared, pids = _fixed_by(tmp_path, monkeypatch, 2)
    assert shared == alone
    assert any(fix is not None and "not applied by --fix" in fix[1] for *_, fix in shared)
    assert len(set(pids)) == 2 and pid in pids
    assert len(pids) == len(_fixed_by(tmp_path, monkeypatch, 1)[1]) >= 8


def test_batches_shared_out_are_smaller_and_only_past_one_batch(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Shared out among processes, the fixes' files go in smaller batches, so that the processes
    finish close together; no process is forked for the fixes of one batch (a small run's)."""
    write_files(tmp_path, {**TREE, **SCRIPTS})
    alone, one = _fixed_by(tmp_path, monkeypatch, 1, batch_files=8, shared_files=2)
    shared, pids = _fixed_by(tmp_path, monkeypatch, 2, batch_files=8, shared_files=2)
    assert shared == alone and len(set(pids)) == 2 and len(pids) > len(one) + 4
    small, [pid] = _fixed_by(tmp_path, monkeypatch, 2, batch_files=10_000, shared_files=2)
    assert small == alone and pid == verify_os.getpid()


def _fail() -> None:
    raise RuntimeError("a batch that fails in its process")


def _die() -> None:
    verify_os._exit(3)


@pytest.mark.parametrize("forked", [_fail, _die])
def test_a_batch_whose_process_failed_is_fixed_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    forked: Any) -> None:
    """A batch whose forked process raised, or died, is fixed in this process: no batch is lost,
    and the output is the same as one process's."""
    write_files(tmp_path, {**TREE, **SCRIPTS})
    alone, _ = _fixed_by(tmp_path, monkeypatch, 1)
    shared, pids = _fixed_by(tmp_path, monkeypatch, 2, forked)
    assert shared == alone
    assert set(pids) == {verify_os.getpid()} and len(pids) == len(_fixed_by(tmp_path, monkeypatch, 1)[1])


def test_batches_shared_out_read_the_runs_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large run keeps its findings and analyses in a temporary file, which this process and the
    forked ones read at once while they fix their batches: each reads what it asked for."""
    from mtplint import kept

    write_files(tmp_path, {**TREE, **{f"svc{number:02}/serve.sh": TREE["alone/serve-0.sh"] for number in range(40)}})
    args = ["check", "--isolated", "--no-cache", "--output-format", "full", "--show-fixes", "--unsafe-fixes", "."]
    expected = run_cli([*args, "--jobs", "1"], cwd=tmp_path)
    assert expected[0] == 1 and "not applied by --fix" in expected[1]
    monkeypatch.setattr(verify, "VERIFY_BATCH_FILES", 2)
    monkeypatch.setattr(verify, "SHARED_BATCH_FILES", 2)
    monkeypatch.setattr(kept, "HELD_IN_MEMORY", 0)
    monkeypatch.setattr(kept, "FINDINGS_CHUNK", 2)
    assert run_cli([*args, "--jobs", "2"], cwd=tmp_path) == expected
