"""A run's memory does not grow with the files that say nothing (issue 24: peak RSS at 100k files
within 20% of 10k): a file the prefilter skips, or whose launches are clean, costs nothing once
linted, and the run's loader does not hold every text it read."""

from __future__ import annotations

import contextlib
import gc
import json
import tracemalloc
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli, write_files

#: a launch with no finding under ARGS
CLEAN = """#!/usr/bin/env bash
exec vllm serve Qwen/Qwen3.6-27B \\
  --kv-cache-dtype fp8_e5m2 \\
  --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}' \\
  --no-enable-prefix-caching
"""
DIRTY = CLEAN.replace("fp8_e5m2", "turboquant_4bit_nc")
ARGS = ["--isolated", "--engine-version", "vllm=0.30.0", "--select", "MTP101", "--no-cache", "--jobs", "1"]


def _tree(root: Path, services: int) -> Path:
    """``services`` folders, each with a clean launch script and a YAML file the prefilter skips,
    and one folder whose script has a finding. Twenty folders to a team's folder: the walk holds
    the listing of each folder it is in, which grows with the folder, not with the tree."""
    files: dict[str, str] = {"bad/serve.sh": DIRTY}
    for number in range(services):
        folder = f"team{number // 20:02}/svc{number:04}"
        files[f"{folder}/serve.sh"] = CLEAN
        files[f"{folder}/ci.yaml"] = f"steps:\n  - run: make test-{number}\n"
    return write_files(root, files)


def _peak(tree: Path) -> tuple[int, str]:
    """The peak of the memory a ``check`` of ``tree`` allocated (bytes), and its output."""
    tracemalloc.start()
    try:
        code, out, _ = run_cli(["check", "--output-format", "json", *ARGS, "."], cwd=tree)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 1
    return peak, out


def _least_peak(tree: Path) -> tuple[int, str]:
    """:func:`_peak` of the lesser of two runs. A table of the interpreter's own may grow once, in
    whichever run passes its threshold: the interned strings, which pathlib adds each part of a
    path to, grew by 1.9 MB in a 200-folder run when the tests before had filled it (the run's
    folder names are interned all the same, and freed with it). What the run itself keeps per file
    shows in both runs."""
    first, second = _peak(tree), _peak(tree)
    return min(first, second, key=lambda measured: measured[0])


def test_clean_and_skipped_files_cost_no_memory_per_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mtplint import lint as lint_module

    # the loader forgets what it holds every 16 files, so both trees pass that point many times
    monkeypatch.setattr(lint_module, "FORGET_EVERY", 16)
    small, large = _tree(tmp_path / "small", 40), _tree(tmp_path / "large", 200)
    _peak(small)  # the first run imports the extractors, engines and rules
    small_peak, small_out = _least_peak(small)
    large_peak, large_out = _least_peak(large)
    assert json.loads(small_out) == json.loads(large_out)  # the one finding, in bad/serve.sh
    per_file = (large_peak - small_peak) / ((200 - 40) * 2)
    # a launch script's text, its parse and its result are some kilobytes: none of it may stay
    assert per_file < 200, f"{per_file:.0f} bytes per file"


def test_a_clean_launch_is_not_kept_for_the_assembly() -> None:
    from mtplint.analysis import FileResult, LaunchResult
    from mtplint.lint import needed_by_the_assembly

    def launch(**said: object) -> LaunchResult:
        item = LaunchResult(("serve.sh", 0), "script", False, "/tree/serve.sh", None, False, ("serve.sh", 0))
        for name, value in said.items():
            setattr(item, name, value)
        return item

    assert needed_by_the_assembly(FileResult(launches=[launch()])) is None
    # what the assembly needs: a launch another file starts (it drops the script's own reading), a
    # rule left unchecked for want of the GPU (counted in the summary), a noqa comment (MTP002)
    for said in ({"via_other": True}, {"without_gpu": ["MTP201"]}, {"noqa": True}):
        kept = needed_by_the_assembly(FileResult(launches=[launch(), launch(**said)]))
        assert kept is not None and [item.display for item in kept.launches] == ["serve.sh"]
        assert len(kept.launches) == 1
    diagnosed = FileResult(errors=["serve.sh: does not exist"], launches=[launch()])
    assert needed_by_the_assembly(diagnosed) == FileResult(errors=["serve.sh: does not exist"])


def test_a_run_that_forgets_its_files_after_each_one_reports_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """The loader forgetting the texts and paths it read changes no finding, no frame, no order."""
    from mtplint import lint as lint_module

    examples = Path(__file__).resolve().parent.parent / "examples"
    args = ["check", "--exit-zero", "--no-cache", "--jobs", "1", "--output-format", "full", "."]
    expected = run_cli(args, cwd=examples)
    monkeypatch.setattr(lint_module, "FORGET_EVERY", 1)
    assert run_cli(args, cwd=examples) == expected


def test_a_worker_holds_no_text_of_a_chunk_it_finished(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``--jobs`` worker forgets what its loader read once a chunk is done, as the run does every
    so many files: its memory does not grow with the tree either."""
    from mtplint import parallel
    from mtplint.analysis import RunGroup
    from mtplint.config import LintSettings
    from mtplint.lint import needed_by_the_assembly
    from mtplint.pipeline import Options

    tree = _tree(tmp_path, 3)
    monkeypatch.setattr(parallel, "_worker", None)
    parallel._start_worker(RunGroup(LintSettings(Options(tree), select=["MTP101"])), False, needed_by_the_assembly)
    chunk = [(str(path), "shell", False, 0) for path in sorted(tree.glob("*/*/serve.sh"))]
    assert len(parallel._worker_chunk(chunk, {})) == 3
    state = parallel._worker
    assert state is not None
    assert all(state.loader.peek(Path(path)) is None for path, *_ in chunk)
    assert not state.loader.path_memos


def test_a_cached_run_that_forgets_its_hashes_after_each_file_reports_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache's hashes of files and folders, forgotten every so many files, are worked out
    again: a cold and a warm run still give the output of a run without the cache, and the warm
    run's entries are all hits."""
    from mtplint import analysed as analysed_module
    from mtplint import lint as lint_module

    tree = _tree(tmp_path / "tree", 6)
    args = ["check", "--output-format", "json", *(arg for arg in ARGS if arg != "--no-cache"), "."]
    expected = run_cli(["check", "--output-format", "json", *ARGS, "."], cwd=tree)
    monkeypatch.setenv("MTPLINT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(lint_module, "FORGET_EVERY", 1)
    assert run_cli(args, cwd=tree) == expected  # cold: every entry written
    analysed: list[str] = []
    real = analysed_module.analyse_file  # what a run's analysis of a file calls
    monkeypatch.setattr(analysed_module, "analyse_file", lambda candidate, *rest: analysed.append(Path(candidate.path).name)
                        or real(candidate, *rest))
    assert run_cli(args, cwd=tree) == expected  # warm
    assert analysed == []


def _dirty_tree(root: Path, services: int) -> Path:
    """``services`` folders whose launch script has a finding (each its own file, as a tree's copied
    deployments are), twenty to a team's folder."""
    return write_files(root, {f"team{number // 20:02}/svc{number:04}/serve.sh": DIRTY for number in range(services)})


def test_a_finding_costs_a_bounded_amount_of_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a run keeps of each finding until its report (the finding, its launch's record, the
    lines shown around it) and what the report builds of it stay within a budget: a run's peak
    grows with its findings by no more than that."""
    from mtplint import lint as lint_module

    monkeypatch.setattr(lint_module, "FORGET_EVERY", 16)
    # measured with Python 3.11: about 2.9 KB a finding, most of it the in-memory fixing that
    # checks the findings' fixes (MTP101 offers one)
    budgets = {"full": 4_000}
    small, large = _dirty_tree(tmp_path / "small", 100), _dirty_tree(tmp_path / "large", 500)
    report = tmp_path / "report.txt"  # the report's text is not the run's memory
    for output_format, budget in budgets.items():
        args = ["check", "--output-format", output_format, "--output-file", str(report), *ARGS, "."]
        run_cli(args, cwd=small)  # the first run imports the extractors, engines and rules
        peaks: dict[Path, int] = {}
        # each tree twice, the lesser taken: a table of the interpreter's own may grow once (_least_peak)
        for tree in (small, small, large, large):
            tracemalloc.start()
            try:
                code, _, _ = run_cli(args, cwd=tree)
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            peaks[tree] = min(peaks.get(tree, peak), peak)
            assert code == 1 and report.read_text().count("MTP101") >= {small: 100, large: 500}[tree]
        per_finding = (peaks[large] - peaks[small]) / (500 - 100)
        assert per_finding < budget, f"{output_format}: {per_finding:.0f} bytes per finding"


def test_a_records_shown_lines_are_taken_not_copied_nor_changed() -> None:
    """The assembly takes the lines each kept record shows (most files are in one record) as they
    are; a file in two records gets lines of its own, and neither record's changes."""
    from mtplint.source import ShownLines

    first = {"a.sh": [4, {"1": "one", "2": "two"}]}
    second = {"a.sh": [4, {"3": "three", "4": "four"}]}
    shown = ShownLines()
    shown.add(first)
    assert shown._files["a.sh"][1] is first["a.sh"][1]
    shown.add(second)
    shown.add({"a.sh": [4, {"2": "two"}]})
    assert first["a.sh"][1] == {"1": "one", "2": "two"} and second["a.sh"][1] == {"3": "three", "4": "four"}
    lines = shown.lines("a.sh", 3)
    assert lines is not None and [lines[index] for index in range(4)] == ["one", "two", "three", "four"]


def test_the_suppressions_read_no_file_twice_and_hold_no_text_without_noqa(tmp_path: Path) -> None:
    """Findings in files the run did not keep (an ``.env``, a ``--config`` YAML) are read once for
    their ``noqa`` comments; a text without one is not held while the others are read."""
    from mtplint.checks.suppress import _sources
    from mtplint.pipeline import Result
    from mtplint.source import Span

    write_files(tmp_path, {"quiet.env": "A=1\n" * 100, "loud.env": "A=1  # noqa: MTP101\n"})

    class Found:
        def __init__(self, file: str) -> None:
            self.span = Span(file, 0, 0, 1, 1, 1, 1)

    findings = [Found(str(tmp_path / name)) for name in ("quiet.env", "loud.env", "quiet.env")]
    sources = _sources(Result(), findings)  # type: ignore[arg-type]
    assert {Path(name).name: source.text for name, source in sources.items()} == {
        "quiet.env": "", "loud.env": "A=1  # noqa: MTP101\n"}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_run_whose_results_go_to_a_temporary_file_reports_the_same(
        monkeypatch: pytest.MonkeyPatch, jobs: str) -> None:
    """Every result written to the temporary file from the first one, and read back for the
    assembly and the verification of fixes: the same output in every format, the same exit code."""
    from mtplint import kept
    from mtplint import lint as lint_module

    examples = Path(__file__).resolve().parent.parent / "examples"
    runs = [["check", "--no-cache", "--jobs", jobs, "--output-format", output_format, "."]
            for output_format in ("full", "concise", "json", "sarif", "github")]
    runs.append(["check", "--no-cache", "--jobs", jobs, "--output-format", "json", "--unsafe-fixes", "."])
    expected = [run_cli(args, cwd=examples) for args in runs]
    monkeypatch.setattr(kept, "HELD_IN_MEMORY", 0)
    monkeypatch.setattr(lint_module, "FORGET_EVERY", 1)
    # the findings too: sorted a few at a time, merged back from many runs, read back in small chunks
    monkeypatch.setattr(kept, "FINDINGS_RUN", 3)
    monkeypatch.setattr(kept, "FINDINGS_CHUNK", 2)
    monkeypatch.setattr(kept, "SHOWN_RUN", 2)  # the lines shown too, merged back from many runs
    assert [run_cli(args, cwd=examples) for args in runs] == expected


def test_the_walk_holds_no_finding_past_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the results a run holds in memory, a file's findings (and the run's analysis of it,
    whose fix the verification checks) leave memory once the file is done: at the end of a walk
    over 500 files with a finding each, what the run holds does not grow with them."""
    from mtplint import kept
    from mtplint import lint as lint_module

    monkeypatch.setattr(lint_module, "FORGET_EVERY", 16)
    monkeypatch.setattr(kept, "HELD_IN_MEMORY", 16)
    at_assembly: list[int] = []
    real = lint_module._Run.assemble

    def assemble(run: lint_module._Run) -> lint_module.LintResult:
        at_assembly.append(tracemalloc.get_traced_memory()[0])
        return real(run)

    monkeypatch.setattr(lint_module._Run, "assemble", assemble)
    small, large = _dirty_tree(tmp_path / "small", 100), _dirty_tree(tmp_path / "large", 500)
    args = ["check", "--output-format", "concise", *ARGS, "."]
    run_cli(args, cwd=small)  # the first run imports the extractors, engines and rules
    # each tree twice, the lesser taken: a table of the interpreter's own may grow once (_least_peak)
    for tree in (small, small, large, large):
        tracemalloc.start()
        try:
            code, out, _ = run_cli(args, cwd=tree)
        finally:
            tracemalloc.stop()
        assert code == 1 and out.count("MTP101") >= {small: 100, large: 500}[tree]
    per_finding = (min(at_assembly[3:5]) - min(at_assembly[1:3])) / (500 - 100)
    # measured with Python 3.11: about 450 bytes a finding, where its result and the analysis of
    # its file are found in the temporary file; the result itself, held until the assembly, was
    # about 1.6 KB more
    assert per_finding < 800, f"{per_finding:.0f} bytes per finding"


def test_a_long_listed_folder_without_pin_files_is_scanned_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The names of a flat folder of many services are searched for a pin file's name once in a run,
    not again each time the loader forgets its files (the pins found stay the same)."""
    from mtplint import lint as lint_module
    from mtplint import versions

    tree = write_files(tmp_path, {f"services/svc{number:03}/serve.sh": CLEAN for number in range(40)}
                       | {"services/svc039/serve.sh": DIRTY})
    args = ["check", "--output-format", "json", *ARGS, "."]
    expected = run_cli(args, cwd=tree)
    monkeypatch.setattr(lint_module, "FORGET_EVERY", 4)
    monkeypatch.setattr(versions, "LONG_LISTING", 30)
    scanned: list[int] = []
    real = versions.may_hold_pins

    def may_hold_pins(listing: versions.Listing) -> bool:
        if listing is not None and "svc000" in listing[0]:
            scanned.append(len(listing[0]))
        return real(listing)

    monkeypatch.setattr(versions, "may_hold_pins", may_hold_pins)
    assert run_cli(args, cwd=tree) == expected
    assert scanned == [40]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_findings_suppressed_a_file_at_a_time_report_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: str) -> None:
    """A large run's findings go through the temporary file, and are deduplicated and suppressed a
    file at a time: on a tree with ``noqa`` comments used and unused (MTP002, also in a file with no
    finding), per-file-ignores, a ``--config`` file two launches share and a malformed file, every
    format and exit code is the in-memory assembly's, and the findings are not all held."""
    from mtplint import kept
    from mtplint import lint as lint_module
    from tests import speedtree

    tree = speedtree.build(tmp_path, copies=4)
    unused_noqa = CLEAN.replace("--no-enable-prefix-caching", "--no-enable-prefix-caching  # mtplint: noqa: MTP101")
    write_files(tree, {"quiet/serve.sh": unused_noqa, "mtplint.toml": '[per-file-ignores]\n"project1/*" = ["MTP102"]\n'})
    runs = [["check", "--no-cache", "--jobs", jobs, "--output-format", output_format, "."]
            for output_format in ("full", "concise", "json", "sarif", "github")]
    runs.append(["check", "--no-cache", "--jobs", jobs, "--output-format", "json", "--unsafe-fixes", "."])
    expected = [run_cli(args, cwd=tree) for args in runs]
    assert "MTP002" in expected[1][1] and "MTP001" in expected[1][1]
    stores: list[object] = []
    real = lint_module.assemble

    def assemble(*args: object, **options: object) -> lint_module.LintResult:
        result = real(*args, **options)  # type: ignore[arg-type]
        stores.append(type(result.findings))
        return result

    monkeypatch.setattr(lint_module, "assemble", assemble)
    monkeypatch.setattr(kept, "HELD_IN_MEMORY", 0)
    monkeypatch.setattr(kept, "FINDINGS_RUN", 5)
    monkeypatch.setattr(kept, "FINDINGS_CHUNK", 3)
    monkeypatch.setattr(kept, "SHOWN_RUN", 2)
    assert [run_cli(args, cwd=tree) for args in runs] == expected
    assert kept.FindingStore in stores


def test_a_large_binary_a_unit_starts_is_told_by_its_head(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An ExecStart naming a large binary (the host's interpreter) is not read whole to find it is
    not a script; a large script it names is, as before."""
    from mtplint import extract

    binary = tmp_path / "bin" / "python3"
    binary.parent.mkdir()
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00" + b"x" * 200_000)
    script = tmp_path / "bin" / "serve.sh"
    script.write_text(DIRTY + "# padding\n" * 20_000)
    unit = "[Service]\nExecStart={program}\n\n[Install]\nWantedBy=multi-user.target\n"
    write_files(tmp_path, {"ops/python.service": unit.format(program=f"{binary} -m sync.worker"),
                           "ops/serve.service": unit.format(program=f"/bin/bash {script}")})
    read: list[str] = []
    real = extract.read_file
    monkeypatch.setattr(extract, "read_file", lambda path: read.append(Path(path).name) or real(path))
    code, out, _ = run_cli(["check", "--output-format", "concise", *ARGS, "ops"], cwd=tmp_path)
    assert code == 1 and "MTP101" in out  # the script the other unit starts is read, and checked
    assert "python3" not in read and "serve.sh" in read


def test_a_large_runs_frames_come_from_the_shown_lines_it_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lines a large run shows around its findings wait in the temporary file, a few files in
    memory at a time, and the full report takes them from there: the same frames, no file read
    again for them."""
    from mtplint import kept
    from mtplint.report import findings as report

    tree = _dirty_tree(tmp_path, 30)
    args = ["check", "--output-format", "full", *ARGS, "."]
    expected = run_cli(args, cwd=tree)
    monkeypatch.setattr(kept, "HELD_IN_MEMORY", 0)
    monkeypatch.setattr(kept, "SHOWN_RUN", 4)
    read: list[str] = []
    real = report._read_lines
    monkeypatch.setattr(report, "_read_lines", lambda file: read.append(file) or real(file))
    assert run_cli(args, cwd=tree) == expected
    assert expected[1].count(" | ") >= 30 * 3 and read == []


def test_the_verification_holds_only_its_batchs_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large run's findings are in its temporary file, and the verification of their fixes reads
    back a batch's at a time: while a batch is fixed, the findings in memory are that batch's (and
    a chunk of the store), not every finding offering a fix (200 here, one a script)."""
    import gc

    from mtplint import kept
    from mtplint import lint as lint_module
    from mtplint.checks import Finding
    from mtplint.fix import apply as fix_apply
    from mtplint.fix import verify

    monkeypatch.setattr(lint_module, "FORGET_EVERY", 16)
    monkeypatch.setattr(kept, "HELD_IN_MEMORY", 16)
    monkeypatch.setattr(kept, "FINDINGS_CHUNK", 4)
    monkeypatch.setattr(verify, "VERIFY_BATCH_FILES", 8)
    tree = _dirty_tree(tmp_path, 200)
    args = ["check", "--output-format", "concise", "--unsafe-fixes", *ARGS, "."]
    expected = run_cli(args, cwd=tree)
    live: list[int] = []
    real_fix_project, real_verified = fix_apply.fix_project, verify.verified

    def findings_in_memory() -> int:
        return sum(type(item) is Finding for item in gc.get_objects())

    def fix_project(*args: Any, **kwargs: Any) -> Any:
        live.append(findings_in_memory())
        return real_fix_project(*args, **kwargs)

    def verified(*args: Any, **kwargs: Any) -> Any:
        live.append(findings_in_memory())
        return real_verified(*args, **kwargs)

    monkeypatch.setattr(fix_apply, "fix_project", fix_project)
    monkeypatch.setattr(verify, "verified", verified)
    assert run_cli(args, cwd=tree) == expected
    assert expected[1].count("MTP101") == 200 and len(live) == 1 + 25
    # a batch's findings (one a file) and the store's chunk read last; all 200 before
    assert max(live[1:]) - live[0] <= 8 + 4, live


def test_a_flat_folder_is_walked_from_its_names(tmp_path: Path) -> None:
    """The walk holds a folder's listing while it is below it: a flat folder of many services
    costs the names of its entries, not the scan's entries (each with its path)."""
    from mtplint.discover import discover_as_walked

    services = 2_000
    for number in range(services):
        (tmp_path / "services" / f"svc-{number:05}").mkdir(parents=True)
        (tmp_path / "services" / f"svc-{number:05}" / "serve.sh").write_text(CLEAN)
    tracemalloc.start()
    try:
        walk = discover_as_walked([tmp_path], tmp_path)
        first = next(walk)
        held = tracemalloc.get_traced_memory()[0]
        assert sum(1 for _ in walk) == services - 1
    finally:
        tracemalloc.stop()
    assert Path(first.path).name == "serve.sh"
    per_folder = held / services
    # measured with Python 3.11: about 70 bytes a folder (its name, its place in a list); the
    # scan's entries held some 270
    assert per_folder < 150, f"{per_folder:.0f} bytes per folder"


def test_batching_the_verification_reads_back_no_analysis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large run's analyses of the files offering fixes are in its temporary file: batching their
    verification asks each only which files it read, without reading back its result (each fixing
    then reads its own batch's)."""
    from mtplint import kept, result_pickle
    from mtplint import lint as lint_module
    from mtplint.fix import verify

    monkeypatch.setattr(lint_module, "FORGET_EVERY", 16)
    monkeypatch.setattr(kept, "HELD_IN_MEMORY", 16)
    tree = _dirty_tree(tmp_path, 60)
    loaded: list[str] = []
    real_load_result, real_batches = result_pickle.load_result, verify._batches

    def load_result(*args: Any, **kwargs: Any) -> Any:
        loaded.append("result")
        return real_load_result(*args, **kwargs)

    def batches(*args: Any, **kwargs: Any) -> Any:
        loaded.append("batching")
        found = real_batches(*args, **kwargs)
        loaded.append("batched")
        return found

    monkeypatch.setattr(result_pickle, "load_result", load_result)
    monkeypatch.setattr(verify, "_batches", batches)
    code, out, _ = run_cli(["check", "--output-format", "concise", "--unsafe-fixes", *ARGS, "."], cwd=tree)
    assert code == 1 and out.count("MTP101") == 60
    start = loaded.index("batching")
    assert loaded[start + 1] == "batched" and "result" in loaded[start:]


#: a compose service launching CLEAN's command
CLEAN_COMPOSE = """services:
  vllm:
    image: vllm/vllm-openai:v0.30.0
    command: ["--model", "Qwen/Qwen3.6-27B", "--kv-cache-dtype", "fp8_e5m2",
              "--speculative-config", '{"method": "mtp", "num_speculative_tokens": 2}',
              "--no-enable-prefix-caching"]
"""


def test_the_compose_services_a_run_reported_cost_no_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run remembers the compose services it reported (an override pair's service is reported
    once) by digests, not as their files' real paths and names: a tree of many compose projects
    costs no more memory per project than its other launch files."""
    from mtplint import lint as lint_module

    monkeypatch.setattr(lint_module, "FORGET_EVERY", 16)

    def tree(root: Path, services: int) -> Path:
        files = {"bad/serve.sh": DIRTY}
        for number in range(services):
            files[f"team{number // 20:02}/svc{number:04}/compose.yaml"] = CLEAN_COMPOSE
        return write_files(root, files)

    small, large = tree(tmp_path / "small", 40), tree(tmp_path / "large", 200)
    _peak(small)  # the first run imports the extractors, engines and rules
    small_peak, small_out = _least_peak(small)
    large_peak, large_out = _least_peak(large)
    assert json.loads(small_out) == json.loads(large_out)  # the one finding, in bad/serve.sh
    per_file = (large_peak - small_peak) / (200 - 40)
    # measured with Python 3.11: some 250 bytes a compose file (a folder's pins looked for, among
    # others); its service's files' real paths and its name, as a tuple in a set, were 230 more
    assert per_file < 350, f"{per_file:.0f} bytes per compose file"


def _held_at_suppression(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, args: list[str]) -> float:
    """What a large run's assembly holds when it starts suppressing, per launch file it kept: trees
    of 100 and 500 scripts of ``text`` (each tree twice, the lesser taken: :func:`_least_peak`)."""
    from mtplint import kept
    from mtplint import lint as lint_module

    monkeypatch.setattr(lint_module, "FORGET_EVERY", 16)
    monkeypatch.setattr(kept, "HELD_IN_MEMORY", 16)
    monkeypatch.setattr(kept, "FINDINGS_RUN", 16)
    monkeypatch.setattr(kept, "SHOWN_RUN", 16)
    held: list[int] = []
    real = lint_module._suppressed_by_file

    def suppressed_by_file(*args: Any) -> Any:
        held.append(tracemalloc.get_traced_memory()[0])
        return real(*args)

    monkeypatch.setattr(lint_module, "_suppressed_by_file", suppressed_by_file)
    # long folder names, as a real tree's: a name held costs its length
    files = {f"team{number // 20:02}/deployment-of-the-inference-service-{number:04}/serve.sh": text
             for number in range(500)}
    small, large = write_files(tmp_path / "small", dict(list(files.items())[:100])), write_files(tmp_path / "large", files)
    run_cli(args, cwd=small)  # the first run imports the extractors, engines and rules
    outputs = []
    for tree in (small, small, large, large):
        tracemalloc.start()
        try:
            outputs.append(run_cli(args, cwd=tree))
        finally:
            tracemalloc.stop()
    assert outputs[0] == outputs[1] and outputs[2] == outputs[3] and len(held) == 5
    return (min(held[3:5]) - min(held[1:3])) / (500 - 100)


def test_the_assembly_holds_no_name_of_the_files_without_noqa(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large run's assembly knows which files hold a launch without a ``noqa`` comment (not read
    again for the suppressions) by digests: what it holds when it starts suppressing grows with
    those files by a few bytes each, not by their names."""
    per_file = _held_at_suppression(tmp_path, monkeypatch, DIRTY, ["check", "--output-format", "concise", *ARGS, "."])
    # measured with Python 3.11: some 430 bytes a file (its finding's message and the lines shown
    # around it, among others); the names in a set were some 170 bytes more
    assert per_file < 520, f"{per_file:.0f} bytes per file"


def test_the_assembly_counts_the_launches_left_unchecked_without_holding_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The launches whose rules needing the GPU went unchecked (the summary counts them, and names
    those rules) are counted as the assembly goes, not each one's list of rules held to its end."""
    args = ["check", "--output-format", "concise", *(arg for arg in ARGS if arg not in ("--select", "MTP101")), "."]
    per_file = _held_at_suppression(tmp_path, monkeypatch, CLEAN, args)
    # measured with Python 3.11: some 160 bytes a file; the lists of rules held were some 240 more
    assert per_file < 280, f"{per_file:.0f} bytes per file"


class _Cyclic:
    """An object in a reference cycle, as a parsed YAML tree or a fix's edits are."""

    def __init__(self) -> None:
        self.itself = self


def _old_cycle() -> weakref.ref[_Cyclic]:
    """A cycle no longer in use that a young collection saw in use: it sits in the oldest
    generation, which the young collections never look at. With the collector off, as a run has
    it, only a full collection frees it."""
    cycle = _Cyclic()
    gc.collect(1)  # in use: moved to the oldest generation
    return weakref.ref(cycle)


@contextlib.contextmanager
def _collector_off() -> Iterator[None]:
    """The cyclic collector off, as a run has it, and back as it was."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def test_a_long_run_frees_the_cycles_its_young_collections_saw_in_use(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A run collects all its cycles every few thousand files (its collector is off), the old
    ones too: a cycle a collection saw in use (a file's parse a later file's launch read) would
    otherwise stay to the end of the run, and such cycles grew with the tree (the benchmark's
    mixed 100k tree: 2 MB at the peak)."""
    from mtplint import lint as lint_module

    monkeypatch.setattr(lint_module, "FORGET_EVERY", 1)
    monkeypatch.setattr(lint_module, "FULL_COLLECTION_EVERY", 4)
    tree = _tree(tmp_path, 6)
    with _collector_off():
        cycle = _old_cycle()
        assert cycle() is not None
        code, _, _ = run_cli(["check", *ARGS, "."], cwd=tree)
        assert code == 1
        assert cycle() is None


def test_a_short_run_leaves_the_oldest_generation_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of fewer files than a full collection is due after (a pre-commit hook's) pays for no
    walk over everything the process holds."""
    from mtplint import lint as lint_module

    monkeypatch.setattr(lint_module, "FORGET_EVERY", 1)
    tree = _tree(tmp_path, 2)
    with _collector_off():
        cycle = _old_cycle()
        code, _, _ = run_cli(["check", *ARGS, "."], cwd=tree)
        assert code == 1
        assert cycle() is not None


def test_a_large_run_writes_each_result_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the results a run holds in memory, a file whose findings offer a fix keeps its result
    for the assembly and its analysis for the verification of the fix: both read the one copy of
    the result in the temporary file, not a copy each."""
    from mtplint import kept, result_pickle
    from mtplint import lint as lint_module

    monkeypatch.setattr(lint_module, "FORGET_EVERY", 16)
    monkeypatch.setattr(kept, "HELD_IN_MEMORY", 16)
    tree = _dirty_tree(tmp_path, 60)
    args = ["check", "--output-format", "concise", "--unsafe-fixes", *ARGS, "."]
    dumped: list[object] = []  # the objects themselves: an id could be reused once one is freed
    real_dump_result = result_pickle.dump_result

    def dump_result(result: Any) -> bytes:
        dumped.append(result)
        return real_dump_result(result)

    monkeypatch.setattr(result_pickle, "dump_result", dump_result)
    code, out, _ = run_cli(args, cwd=tree)
    assert code == 1 and out.count("MTP101") == 60
    # every result past the first ones held in memory is written, each once
    assert len(dumped) >= 60 - 16 - 1
    assert len({id(result) for result in dumped}) == len(dumped)


def test_demoting_a_large_runs_fix_writes_only_its_chunk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large run's findings are in its temporary file, a chunk at a time: the verification's
    demotion of a refused fix writes again the chunk holding that finding, not every finding; the
    others read back as they were."""
    from mtplint import kept, result_pickle
    from mtplint import lint as lint_module
    from mtplint.config import LintSettings
    from mtplint.fix.verify import _demoted_at
    from mtplint.pipeline import Options

    monkeypatch.setattr(lint_module, "FORGET_EVERY", 16)
    monkeypatch.setattr(kept, "HELD_IN_MEMORY", 0)
    monkeypatch.setattr(kept, "FINDINGS_CHUNK", 4)
    tree = _dirty_tree(tmp_path, 20)
    settings = LintSettings(select=["MTP101"], pipeline=Options(root=tree, engine_versions={"vllm": "0.30.0"}))
    findings = lint_module.lint([str(tree)], settings).findings
    assert isinstance(findings, kept.FindingStore) and len(findings) == 20
    before = list(findings)
    written: list[int] = []
    real_dump_findings = result_pickle.dump_findings

    def dump_findings(chunk: Any) -> bytes:
        written.append(len(chunk))
        return real_dump_findings(chunk)

    monkeypatch.setattr(result_pickle, "dump_findings", dump_findings)
    demoted = _demoted_at(findings, {9: before[9]}, {})
    assert written == [4]
    after = list(demoted)
    assert after[:9] + after[10:] == before[:9] + before[10:]
    fix = after[9].fix
    assert fix is not None and fix.applicability == "display-only" and "not applied by --fix" in fix.message
    assert list(findings) == before


def test_the_verification_reads_a_large_runs_findings_back_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large run's findings are in its temporary file, a chunk at a time: the verification of
    their fixes goes through them once, to find those offering a fix, and its batches tell which of
    their fixes the fixing left in place by digests of the findings' code, file and message, without
    reading any finding back. The fixes are marked as the in-memory run marks them."""
    from mtplint import kept, result_pickle
    from mtplint import lint as lint_module
    from mtplint.checks import applies
    from mtplint.config import LintSettings
    from mtplint.fix import verify
    from mtplint.pipeline import Options

    tree = _dirty_tree(tmp_path, 20)
    settings = LintSettings(select=["MTP101"], pipeline=Options(root=tree, engine_versions={"vllm": "0.30.0"}))
    monkeypatch.setattr(verify, "VERIFY_BATCH_FILES", 2)
    with contextlib.chdir(tree):
        in_memory = lint_module.lint([str(tree)], settings)
        expected = [finding.fix for finding in verify.verified(in_memory.findings, settings, True,
                                                               analysed=in_memory.analysed)]
        monkeypatch.setattr(lint_module, "FORGET_EVERY", 16)
        monkeypatch.setattr(kept, "HELD_IN_MEMORY", 0)
        monkeypatch.setattr(kept, "FINDINGS_CHUNK", 4)
        result = lint_module.lint([str(tree)], settings)
        assert isinstance(result.findings, kept.FindingStore) and len(result.findings) == 20
        assert all(applies(finding.fix, True) for finding in result.findings)
        chunks_read: list[int] = []
        real_load_findings = result_pickle.load_findings

        def load_findings(*args: Any) -> Any:
            chunks_read.append(1)
            return real_load_findings(*args)

        monkeypatch.setattr(result_pickle, "load_findings", load_findings)
        shown = verify.verified(result.findings, settings, True, analysed=result.analysed)
        assert len(chunks_read) == 20 // 4
        monkeypatch.undo()
        assert [finding.fix for finding in shown] == expected


def test_merging_a_large_runs_shown_lines_writes_only_the_files_of_several_runs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The lines a large run shows wait in its temporary file in sorted runs, merged into one record
    per file when the report first asks: a file in one run keeps that run's record, only a file in
    several is written again, with the lines of each."""
    from mtplint import kept

    monkeypatch.setattr(kept, "SHOWN_RUN", 2)
    store = kept.KeptResults([])
    shown = kept.ShownOnDisk(store)
    for file, lines in (("b.sh", {"1": "b1", "2": "b2"}), ("a.sh", {"1": "a1", "2": "a2"}),
                        ("c.sh", {"1": "c1", "2": "c2"}), ("a.sh", {"3": "a3"})):
        shown.add({file: [3, lines]})
    written: list[object] = []
    real_write_value = kept.KeptResults.write_value

    def write_value(self: kept.KeptResults, value: object) -> tuple[int, int]:
        written.append(value)
        return real_write_value(self, value)

    monkeypatch.setattr(kept.KeptResults, "write_value", write_value)
    a, b, c = shown.lines("a.sh", 2), shown.lines("b.sh", 1), shown.lines("c.sh", 1)
    assert a is not None and b is not None and c is not None and shown.lines("d.sh", 1) is None
    assert [a[0], a[1], a[2], b[0], b[1], c[0], c[1]] == ["a1", "a2", "a3", "b1", "b2", "c1", "c2"]
    # both runs were written as the files came; of the merge, only a.sh's record (in both runs)
    assert [value[0] for value in written if isinstance(value, tuple)] == ["a.sh"]


def test_the_last_runs_of_shown_lines_and_findings_are_not_written_to_be_read_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A large run's shown lines, and its findings, go to the temporary file a sorted run at a time;
    what is still in memory when the report (or the merge of the findings) asks is taken from there:
    the same lines and findings, in the same order, and nothing written for them."""
    from mtplint import kept
    from mtplint.analysis import RunGroup
    from mtplint.checks import Finding
    from mtplint.checks.catalog import load_catalog
    from mtplint.config import LintSettings
    from mtplint.source import Span

    written: list[object] = []
    real_write = kept.KeptResults.write

    def write(self: kept.KeptResults, data: bytes) -> tuple[int, int]:
        written.append(data)
        return real_write(self, data)

    monkeypatch.setattr(kept.KeptResults, "write", write)
    store = kept.KeptResults([RunGroup(LintSettings())])
    shown = kept.ShownOnDisk(store)
    for file, lines in (("b.sh", {"1": "b1", "2": "b2"}), ("a.sh", {"1": "a1", "2": "a2"}), ("a.sh", {"3": "a3"})):
        shown.add({file: [3, lines]})
    a, b = shown.lines("a.sh", 2), shown.lines("b.sh", 1)
    assert a is not None and b is not None and shown.lines("d.sh", 1) is None
    assert [a[0], a[1], a[2], b[0], b[1]] == ["a1", "a2", "a3", "b1", "b2"]
    assert written == []

    monkeypatch.setattr(kept, "FINDINGS_RUN", 3)
    rule = load_catalog()["MTP102"]
    findings = [Finding(rule, f"m{number}", Span(file, number, number + 1, number + 1, 1, number + 1, 2))
                for number, file in enumerate(["b.sh", "a.sh", "b.sh", "a.sh", "c.sh"])]
    runs = kept.FindingRuns(store)
    runs.extend(findings)
    assert len(written) == 1  # the first three, one sorted run
    by_file = [(file, [finding.message for _, finding in numbered]) for file, numbered in runs.by_file()]
    assert by_file == [("a.sh", ["m1", "m3"]), ("b.sh", ["m0", "m2"]), ("c.sh", ["m4"])]
    assert len(written) == 1
