"""The verification of a ``check``'s fixes (:func:`mtplint.fix.verify.verified`) starts from the
run's own analyses of the files offering fixes, not from analysing them again (issue 24), with the
same outcome: the fixes marked ``[*]``, the ones shown as not applied and why. Counted by hooking
the analysis, not timed.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mtplint.analysis import FileResult
from mtplint.checks import Edit, Finding, Fix, RuleContext, applies
from mtplint.config import LintSettings
from mtplint.discover import Candidate
from mtplint.edits.pyedit import edit_file
from mtplint.extract import FileLoader
from mtplint.fix import relint
from mtplint.fix.apply import FixRun, fix_project
from mtplint.fix.relint import ProjectLinter
from mtplint.fix.verify import verified
from mtplint.lint import LintResult, lint
from mtplint.pipeline import Options
from tests.conftest import run_cli, write_files
from tests.test_fix_splice import LINKED_PROJECTS, SERVE, serve_scripts

#: a tree whose fixes the verification tries: linked projects (a compose override pair, a unit and
#: the script it starts, a Deployment and its --config), stand-alone scripts, and a script whose
#: fix is refused (MTP403's rename exposing MTP302)
TREE = {
    **LINKED_PROJECTS,
    **{f"alone/serve-{number}.sh": SERVE for number in range(4)},
    "alone/llama.sh": "#!/bin/sh\nllama-server -m /models/GLM-4.7-Flash-Q4_K_M.gguf --spec-type draft-mtp --draft-max 6\n",
    "alone/deprecated.sh": ("#!/bin/sh\nvllm serve Qwen/Qwen3-Next-80B-A3B-Instruct "
                            "--speculative-config '{\"method\": \"qwen3_next_mtp\", \"num_speculative_tokens\": 2}'\n"),
}


def _fixed_files(result: LintResult, root: Path) -> list[Path]:
    """The files the verification of ``result``'s fixes lints, as :func:`verified` picks them."""
    files: set[str] = set()
    for finding in result.findings:
        if applies(finding.fix, True) and finding.fix is not None:
            files.add(finding.span.file)
            files.update(edit_file(edit) for edit in finding.fix.edits)
    return sorted(root / name for name in files if (root / name).is_file())


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_first_lint_of_the_verification_is_the_runs_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            jobs: int) -> None:
    """The first lint of the fixing takes the run's results (in this process or from its workers)
    of the files offering a fix, and is the lint that analysing them again gives. Analysed: the
    files the run kept no analysis of (a ``.env`` a fix edits, the second of a compose override pair,
    which left out the services the first reported), and with them the files that read what they
    read (the pair), together and in order as ever."""
    write_files(tmp_path, TREE)
    settings = LintSettings(pipeline=Options(root=tmp_path))
    analysed: list[str] = []
    real_analyse = relint.analyse_file

    def analyse_file(candidate: Candidate, *args: Any) -> FileResult:
        analysed.append(Path(candidate.path).relative_to(tmp_path).as_posix())
        return real_analyse(candidate, *args)

    monkeypatch.setattr(relint, "analyse_file", analyse_file)
    with contextlib.chdir(tmp_path):
        result = lint([tmp_path], settings, jobs=jobs)
        files = _fixed_files(result, tmp_path)
        fresh = ProjectLinter(files, settings)
        expected, _ = fresh.first()
        everything = list(analysed)
        analysed.clear()
        reusing = ProjectLinter(files, settings, result.analysed)
        first, _ = reusing.first()
    assert len(everything) == len(fresh.candidates) == 11
    assert "stack/compose.override.yaml" in result.analysed
    assert "stack/compose.yaml" not in result.analysed
    assert analysed == ["stack/.env", "stack/compose.yaml",
                        "stack/.env", "stack/compose.override.yaml", "stack/compose.yaml"]
    assert first.by_file == expected.by_file
    assert [[launch.findings for launch in record.launches] for record in first.records] == [
        [launch.findings for launch in record.launches] for record in expected.records]


@pytest.mark.parametrize("unsafe", [False, True])
def test_verification_with_the_runs_analyses_marks_the_same_fixes(tmp_path: Path, unsafe: bool) -> None:
    """The same findings, fixes marked and not, and reasons, whether the verification takes the run's
    analyses or analyses every file again."""
    write_files(tmp_path, TREE)
    settings = LintSettings(pipeline=Options(root=tmp_path))
    with contextlib.chdir(tmp_path):
        result = lint([tmp_path], settings, jobs=1)
        with_run = verified(result.findings, settings, unsafe, analysed=result.analysed)
        alone = verified(result.findings, settings, unsafe)
    shown = [(f.code, f.span.file, f.span.start, f.fix and (f.fix.applicability, f.fix.message)) for f in with_run]
    assert shown == [(f.code, f.span.file, f.span.start, f.fix and (f.fix.applicability, f.fix.message))
                     for f in alone]
    assert any(f.fix is not None and "not applied by --fix" in f.fix.message for f in with_run)
    assert any(applies(f.fix, unsafe) for f in with_run)


def test_check_verifies_its_fixes_without_analysing_the_files_again(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """``mtplint check`` over scripts that each offer a fix: the verification's first lint analyses
    none of them (the run did), and the fixes it tries are analysed once each."""
    scripts = 30
    write_files(tmp_path, serve_scripts(scripts, width=2))
    firsts: list[int] = []
    real_first = ProjectLinter.first

    def first(linter: ProjectLinter, *args: Any) -> Any:
        linted = real_first(linter, *args)
        firsts.append(linter.analysed)
        return linted

    analysed: list[str] = []
    real_analyse = relint.analyse_file

    def analyse_file(candidate: Candidate, *args: Any) -> FileResult:
        analysed.append(str(candidate.path))
        return real_analyse(candidate, *args)

    monkeypatch.setattr(relint.ProjectLinter, "first", first)
    monkeypatch.setattr(relint, "analyse_file", analyse_file)
    code, out, err = run_cli(["check", "--isolated", "--no-cache", "--engine-version", "vllm=0.12.0",
                              "--unsafe-fixes", "--output-format", "concise", "."], cwd=tmp_path)
    assert code == 1, err
    assert out.count("[*]") >= scripts
    assert firsts == [0]
    assert len(analysed) == scripts  # the one pass of fixes, every script's fixed text once


def _two_fixes_rule(ctx: RuleContext) -> Iterator[Finding]:
    """MTP102 for the test below: cap the context (a good fix, reported first) and, where the launch
    serves 32 sequences, turn CUDA graphs off (a bad fix: ``--enforce-eager`` is a finding of its own)."""
    args = ctx.report.launch.args
    eager = next((token for token in args if token.value == "--enforce-eager"), None)
    if eager is not None:
        yield ctx.report_finding("--enforce-eager makes decoding slow", eager.span)
        return
    first, last = args[0], args[-1]
    source = ctx.source_for(last.span)
    assert source is not None and first.span is not None and last.span is not None
    if all(token.value != "--max-model-len=4096" for token in args):
        yield ctx.report_finding("context", first.span, Fix("safe", "Cap the context",
                                                            [Edit(source.span(last.span.end), " --max-model-len=4096")]))
    if any(token.value == "32" for token in args):
        yield ctx.report_finding("graphs", last.span, Fix("safe", "Capture no graphs",
                                                          [Edit(source.span(first.span.start), "--enforce-eager ")]))


def _fix_scripts_with_refused_pairs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], list[int]]:
    """``--fix`` of 20 scripts with two fixes each, three of whose pairs are refused together; per
    try, the records it analysed and the fixed texts its loader took (of those standing for files)."""
    monkeypatch.setattr("mtplint.checks.mtp102.check", _two_fixes_rule)
    analysed: list[int] = []
    taken: list[int] = []
    real_again = ProjectLinter.again
    real_standing_in = FileLoader._standing_in

    def again(linter: ProjectLinter, *args: Any) -> Any:
        taken.append(0)
        before = linter.analysed
        linted = real_again(linter, *args)
        analysed.append(linter.analysed - before)
        return linted

    def standing_in(loader: FileLoader, key: str) -> Any:
        source = real_standing_in(loader, key)
        taken[-1] += source is not None
        return source

    monkeypatch.setattr(relint.ProjectLinter, "again", again)
    monkeypatch.setattr(FileLoader, "_standing_in", standing_in)
    scripts, bad = 20, {3, 11, 17}
    write_files(tmp_path, serve_scripts(scripts, bad, width=2))
    code, _, err = run_cli(["check", "--isolated", "--select", "MTP102", "--engine-version", "vllm=0.12.0",
                            "--fix", "."], cwd=tmp_path)
    assert code == 1
    assert err.count("fix not applied (Capture no graphs): the result has a new finding") == len(bad)
    assert (tmp_path / "serve-03.sh").read_text().endswith("--enable-prefix-caching --max-model-len=4096\n")
    return analysed, taken


def test_a_refused_pairs_second_fix_tried_after_the_first_is_not_analysed_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two fixes of one script refused together: the first tried alone is kept, and the second,
    tried after it, has the texts of the pair, whose analysis the fixing has: each text is analysed
    once."""
    analysed, _ = _fix_scripts_with_refused_pairs(tmp_path, monkeypatch)
    # the pass (every script's fixed text), then each bad script's good fix alone
    assert sum(analysed) == 20 + 3, analysed


def test_a_try_takes_only_the_fixed_texts_its_analyses_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each try of a pass has the texts of every file fixed so far standing for their files; its
    analyses read a few of them, and only those are taken into its loader (a try does not cost
    the number of files fixed before it). Each script reads only itself, so a try takes as many
    texts as it analyses records."""
    analysed, taken = _fix_scripts_with_refused_pairs(tmp_path, monkeypatch)
    # the pass's first try takes every script's new text; a later one, the one script it fixes
    assert len(taken) > 1 + 3
    assert taken == analysed, (taken, analysed)
    assert max(taken[1:]) == 1


def _fixing_outcome(run: FixRun) -> tuple[object, ...]:
    return (run.texts, [(item.finding.code, item.finding.span.file, item.pass_number) for item in run.applied],
            [(item.finding.code, item.finding.span.file, item.reason) for item in run.rejected],
            [(f.code, f.span.file, f.span.start, f.message) for f in run.result.findings])


def _dies(indices: list[int]) -> Any:
    """A forked process killed while it analyses its share (the kernel's out-of-memory killer)."""
    os._exit(9)


@pytest.mark.parametrize("worker_fails", [False, True])
def test_a_large_try_is_shared_with_a_forked_process_with_the_same_outcome(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, worker_fails: bool) -> None:
    """With the run's two processes, the first try of a pass over 60 scripts is analysed half here and
    half in a forked process; the fixing's outcome is the one process's. A share whose process
    dies is analysed here."""
    monkeypatch.setattr("mtplint.checks.mtp102.check", _two_fixes_rule)
    scripts = 60
    write_files(tmp_path, serve_scripts(scripts, {number for number in range(scripts) if number % 7 == 3}, width=2))
    settings = LintSettings(select=["MTP102"], pipeline=Options(root=tmp_path, engine_versions={"vllm": "0.12.0"}))
    shares: list[list[int]] = []
    real_elsewhere = ProjectLinter._analysed_elsewhere

    def elsewhere(linter: ProjectLinter, parts: list[list[int]], *args: Any) -> Any:
        shares.extend(parts)
        return real_elsewhere(linter, parts, *args)

    monkeypatch.setattr(relint.ProjectLinter, "_analysed_elsewhere", elsewhere)
    if worker_fails:
        monkeypatch.setattr(relint, "_analyse_share", _dies)
    with contextlib.chdir(tmp_path):
        alone = fix_project([tmp_path], settings)
        assert not shares
        shared = fix_project([tmp_path], settings, processes=2)
    assert [len(share) for share in shares] == [scripts // 2]
    assert _fixing_outcome(shared) == _fixing_outcome(alone)
    assert len(shared.rejected) == len([number for number in range(scripts) if number % 7 == 3])


def test_the_tries_of_a_fixing_scan_a_long_folder_for_pin_files_once(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Each try of fixes reads its launches' version pins through a loader of its own; that a flat
    folder of hundreds of services holds no pin file is learnt once per fixing, not once per try
    (the folder is the parent of every launch's directory, looked at on the way up to the root)."""
    from mtplint import versions
    from mtplint.fix import relint

    scripts = {**serve_scripts(5), "deprecated.sh": TREE["alone/deprecated.sh"]}
    write_files(tmp_path, {f"services/svc-{name.removesuffix('.sh')}/{name}": text for name, text in scripts.items()})
    write_files(tmp_path, {f"services/notes-{number}.md": "" for number in range(versions.LONG_LISTING)})
    scanned: list[int] = []
    real_may_hold_pins = versions.may_hold_pins

    def may_hold_pins(listing: Any) -> bool:
        if listing is not None and len(listing[0]) >= versions.LONG_LISTING:
            scanned.append(len(listing[0]))
        return real_may_hold_pins(listing)

    monkeypatch.setattr(versions, "may_hold_pins", may_hold_pins)
    tries: list[int] = []
    real_again = relint.ProjectLinter.again

    def again(self: ProjectLinter, *args: Any) -> Any:
        tries.append(1)
        return real_again(self, *args)

    monkeypatch.setattr(relint.ProjectLinter, "again", again)
    settings = LintSettings(pipeline=Options(root=tmp_path))
    with contextlib.chdir(tmp_path):
        run = fix_project([tmp_path], settings, unsafe=True)
    assert tries and len(run.applied) == 6
    assert len(scanned) == 1  # by the fixing's first lint; its tries know
