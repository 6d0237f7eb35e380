"""``--jobs``: worker processes give the same findings, in the same order, as one process."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from tests.speedtree import build
from tests.test_user_catalog import COMPOSE

# `--jobs` worker processes, some killed on purpose: with the other timed tests, one at a time on one worker (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("timed")


def _check(tree: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli(["check", "--output-format", "json", "--no-cache", *extra, str(tree)], cwd=tree.parent)


def test_two_workers_give_the_output_of_one(tmp_path: Path) -> None:
    tree = build(tmp_path, copies=4)
    one = _check(tree, "--jobs", "1")
    two = _check(tree, "--jobs", "2")
    assert one == two
    findings = json.loads(one[1])
    codes = {finding["code"] for finding in findings}
    # the tree exercises the cross-file parts: the malformed file, the override, the unit's script
    assert {"MTP001", "MTP101", "MTP108"} <= codes
    files = [finding["filename"] for finding in findings]
    assert files == sorted(files)


def test_script_started_by_a_unit_is_read_once_with_the_units_environment(tmp_path: Path) -> None:
    """Workers see different files; the drop of the script's stand-alone reading happens afterwards."""
    tree = build(tmp_path, copies=2)
    one = json.loads(_check(tree, "--jobs", "1")[1])
    two = json.loads(_check(tree, "--jobs", "2")[1])
    script = [f for f in two if f["filename"].endswith("project0/deploy/serve.sh")]
    assert script and script == [f for f in one if f["filename"].endswith("project0/deploy/serve.sh")]


@pytest.mark.parametrize("fmt", ["full", "concise", "sarif", "github"])
def test_every_output_format_is_the_same_with_workers(tmp_path: Path, fmt: str) -> None:
    tree = build(tmp_path, copies=2)
    base = ["check", "--output-format", fmt, str(tree)]
    plain = run_cli([*base, "--no-cache", "--jobs", "1"], cwd=tree.parent)
    assert run_cli([*base, "--no-cache", "--jobs", "2"], cwd=tree.parent) == plain


def test_the_report_of_a_run_with_workers_reads_no_file_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The code frames of findings linted in a worker (or taken from the cache) show the lines their
    records kept, not the files read again: the same frames as a one-process run, without the
    report reading a file per finding."""
    from mtplint.report import findings as formats

    tree = build(tmp_path, copies=4)
    base = ["check", "--output-format", "full", str(tree)]
    plain = run_cli([*base, "--no-cache", "--jobs", "1"], cwd=tree.parent)
    assert plain[1].count(" | ") > 20  # frames with source lines
    read_again: list[str] = []
    monkeypatch.setattr(formats, "_read_lines", lambda file: read_again.append(file) or [])
    assert run_cli([*base, "--no-cache", "--jobs", "2"], cwd=tree.parent) == plain
    assert run_cli([*base, "--jobs", "2"], cwd=tree.parent) == plain  # records stored in the cache
    assert run_cli([*base, "--jobs", "2"], cwd=tree.parent) == plain  # and taken from it
    assert read_again == []


def test_noqa_and_per_file_ignores_apply_across_workers(tmp_path: Path) -> None:
    tree = build(tmp_path, copies=2)
    (tree / "mtplint.toml").write_text('[per-file-ignores]\n"*.py" = ["MTP1"]\n')
    one = _check(tree, "--jobs", "1")
    assert one == _check(tree, "--jobs", "2")
    findings = json.loads(one[1])
    assert not [f for f in findings if f["filename"].endswith(".py") and f["code"].startswith("MTP1")]
    # the unknown code in serve.sh's noqa is reported (MTP002), once per file
    unknown = [f for f in findings if f["code"] == "MTP002" and f["filename"].endswith("serve.sh")]
    assert len(unknown) == 2


def test_jobs_must_be_a_positive_number(tmp_path: Path) -> None:
    assert run_cli(["check", "--jobs", "0", str(tmp_path)])[0] == 2
    assert run_cli(["check", "-j", "many", str(tmp_path)])[0] == 2


def test_default_jobs_follow_the_relevant_work_and_the_idle_cpus() -> None:
    from mtplint.lint import PARALLEL_RELEVANT_BYTES, PARALLEL_RELEVANT_FILES, default_jobs

    few, small = PARALLEL_RELEVANT_FILES - 1, PARALLEL_RELEVANT_BYTES - 1
    # a pre-commit hook's handful, or a large tree whose files the prefilter mostly skips: one process
    assert default_jobs(few, small, cpus=8, others=0) == 1
    # the benchmark's 1k trees on an idle machine: the mixed one's 217 relevant files are done before a
    # worker pays off, the deployment-only one's 750 are not
    assert default_jobs(217, 113_011, cpus=2, others=0) == 1
    assert default_jobs(750, 385_877, cpus=2, others=0) == 2
    # enough files, or a few large ones, on an idle machine: one process per CPU
    assert default_jobs(PARALLEL_RELEVANT_FILES, small, cpus=2, others=0) == 2
    assert default_jobs(3, PARALLEL_RELEVANT_BYTES, cpus=4, others=0) == 4
    # a busy machine: only the CPUs left idle are used, never more than one when none is
    assert default_jobs(5000, 50 << 20, cpus=8, others=6) == 2
    assert default_jobs(5000, 50 << 20, cpus=2, others=1) == 1
    assert default_jobs(5000, 50 << 20, cpus=2, others=4) == 1
    assert default_jobs(5000, 50 << 20, cpus=1, others=0) == 1
    # the one-minute load average where the kernel says nothing of now
    assert default_jobs(5000, 50 << 20, cpus=2, others=0.4) == 2
    assert default_jobs(5000, 50 << 20, cpus=2, others=1.2) == 1


def test_the_tasks_running_now_are_read_from_proc_loadavg_without_this_one() -> None:
    """What the default ``--jobs`` counts as busy: the tasks runnable this instant (the fourth field
    of ``/proc/loadavg``, this process among them), not the one-minute average that a previous run
    of a benchmark or a CI job keeps up on a machine now idle."""
    from mtplint.lint import others_in_loadavg

    assert others_in_loadavg(b"1.00 0.62 0.30 1/345 12345\n") == 0  # just this process: the machine is idle
    assert others_in_loadavg(b"0.00 0.00 0.00 3/345 12345\n") == 2
    assert others_in_loadavg(b"0.00 0.00 0.00 0/345 12345\n") == 0


def test_default_jobs_prefilter_in_this_process_gives_the_same_output(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """On a machine with CPUs to spare, the default ``--jobs`` prefilters files in this process to
    decide: files it rejects are not analysed again, and the output is the one of ``--jobs 1``."""
    from mtplint import analysed as analysed_module
    from mtplint import lint as lint_module

    for number in range(6):
        service = tmp_path / f"svc{number}"
        service.mkdir()
        (service / "compose.yaml").write_text(COMPOSE, encoding="utf-8")
        (service / "ci.yaml").write_text("steps:\n  - run: make test\n", encoding="utf-8")
    expected = run_cli(["check", "--isolated", "--no-cache", "--jobs", "1", "--output-format", "json", "."],
                       cwd=tmp_path)
    monkeypatch.setattr(lint_module, "others_running", lambda: 0)
    monkeypatch.setattr(lint_module, "cpu_count", lambda: 2)
    analysed: list[str] = []
    real = analysed_module.analyse_file  # what a run's analysis of a file (in this process) calls

    def counted(candidate: Any, *args: Any) -> Any:
        analysed.append(Path(candidate.path).name)
        return real(candidate, *args)

    monkeypatch.setattr(analysed_module, "analyse_file", counted)
    assert run_cli(["check", "--isolated", "--no-cache", "--output-format", "json", "."], cwd=tmp_path) == expected
    assert sorted(set(analysed)) == ["compose.yaml"] and len(analysed) == 6


def test_spawned_workers_know_the_configurations_gpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where fork is not available (Windows), workers are spawned and start from nothing: the GPUs
    and models of the configuration must reach them as they reach the in-process run."""
    from mtplint import parallel
    from tests.test_user_catalog import COMPOSE, PYPROJECT

    monkeypatch.setattr(parallel, "_can_fork", lambda: False)
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "compose.yaml").write_text(COMPOSE)
    one = run_cli(["check", "--no-cache", "--jobs", "1", "--output-format", "json", "a", "b"], cwd=tmp_path)
    two = run_cli(["check", "--no-cache", "--jobs", "2", "--output-format", "json", "a", "b"], cwd=tmp_path)
    assert [f["code"] for f in json.loads(one[1])].count("MTP201") == 2
    assert two == one


def test_workers_started_before_the_walk_handle_a_tree_smaller_than_the_pool(tmp_path: Path) -> None:
    """``--jobs N`` over a directory starts its N workers before walking it: with fewer files than
    workers, or none at all, the report is still the one-process report."""
    tree = build(tmp_path, copies=1)
    single = tree / "project0"
    assert _check(single, "--jobs", "4") == _check(single, "--jobs", "1")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _check(empty, "--jobs", "2") == _check(empty, "--jobs", "1") == (0, "[]\n", "")


def test_this_process_lints_part_of_the_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--jobs 2`` is one worker process and this one: the worker lints chunks while this process
    walks, then both lint what is left, this one from the last file back. The report is the
    one-process report either way."""
    from mtplint import analysed, analysis

    tree = build(tmp_path, copies=40)  # ~400 files: several chunks
    log = tmp_path / "linted.log"
    analyse = analysis.analyse_file

    def noting(candidate: Any, *args: Any, **options: Any) -> Any:
        with log.open("a") as out:  # each process, this one and the forked worker, appends its lines
            out.write(f"{os.getpid()} {candidate.path}\n")
        return analyse(candidate, *args, **options)

    monkeypatch.setattr(analysed, "analyse_file", noting)  # in the worker (forked after) and in this process
    two = _check(tree, "--jobs", "2")
    monkeypatch.undo()
    by_process: dict[str, list[str]] = {}
    for line in log.read_text().splitlines():
        pid, path = line.split(" ", 1)
        by_process.setdefault(pid, []).append(path)
    here = by_process.pop(str(os.getpid()), [])
    assert len(by_process) == 1  # one worker
    there = next(iter(by_process.values()))
    assert len(here) > 40 and len(there) > 40  # both lint a fair share of the ~400 files
    assert len(set(here + there)) == len(here) + len(there)  # and no file twice
    one = _check(tree, "--jobs", "1")
    assert two == one
    assert _check(tree, "--jobs", "3") == one


@pytest.mark.parametrize("failure", ["raises", "dies"])
def test_a_failing_worker_loses_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: str) -> None:
    """A chunk a worker cannot lint (an exception there, or the worker killed) is linted by this
    process: the report is still the one-process report."""
    from mtplint import parallel

    tree = build(tmp_path, copies=20)
    one = _check(tree, "--jobs", "1")

    def failing(*args: Any) -> Any:
        if failure == "dies":
            os._exit(1)
        raise RuntimeError("a bug that only shows in a worker")

    monkeypatch.setattr(parallel, "_worker_chunk", failing)  # forked workers inherit it
    assert _check(tree, "--jobs", "2") == one
    assert _check(tree, "--jobs", "3") == one


def test_a_result_crosses_to_this_process_whole(tmp_path: Path) -> None:
    """A worker sends each file's result pickled, its findings' rules by code and a Python edit as
    its recipe: what arrives is the result this process would have had, with this process's rules."""
    from mtplint.analysis import RunGroup, analyse_file
    from mtplint.discover import Candidate
    from mtplint.extract import FileLoader
    from mtplint.lint import LintSettings
    from mtplint.pipeline import Options
    from mtplint.result_pickle import dump_result, load_result

    script = tmp_path / "serve.py"
    script.write_text("from vllm import LLM\n\nllm = LLM(model=\"Qwen/Qwen3-8B\", enable_prefix_caching=False,\n"
                      "          speculative_config={\"method\": \"qwen3_next_mtp\", \"num_speculative_tokens\": 2})\n")
    group = RunGroup(LintSettings(Options(tmp_path)))
    result = analyse_file(Candidate(script, "python"), FileLoader(tmp_path), group)
    findings = [finding for launch in result.launches for finding in launch.findings]
    assert findings and any(finding.fix for finding in findings)
    arrived = load_result(dump_result(result), group)
    assert arrived == result
    assert all(a.rule is group.catalog[a.code] for launch in arrived.launches for a in launch.findings)


def test_the_records_pickled_by_their_slots_take_every_slot_in_order() -> None:
    """A result's records are pickled as the values of their slots and rebuilt by calling their
    class: each one's ``__init__`` must take every slot, in order (a slot added to a record and
    not to its ``__init__``, or the two in another order, would rebuild another record)."""
    import inspect

    from mtplint.records import slot_names
    from mtplint.result_pickle import REBUILT_BY_INIT

    for cls in REBUILT_BY_INIT:
        parameters = list(inspect.signature(cls.__init__).parameters)[1:]
        assert tuple(parameters) == slot_names(cls), cls.__name__


def test_a_result_rebuilt_from_its_slots_is_the_same(tmp_path: Path) -> None:
    """A result with a diagnostic, a finding whose fix has edits, and one span object shared by two
    records arrives equal, its rules the group's, the shared span still one object."""
    from mtplint.analysis import FileResult, LaunchResult, RunGroup
    from mtplint.checks import Edit, Finding, Fix
    from mtplint.lint import LintSettings
    from mtplint.pipeline import Options
    from mtplint.result_pickle import dump_result, load_result
    from mtplint.source import Diagnostic, Span

    group = RunGroup(LintSettings(Options(tmp_path)))
    span = Span("serve.sh", 10, 20, 2, 1, 2, 11)
    fix = Fix("safe", "Remove it", [Edit(span, ""), Edit(Span("serve.sh", 0, 0, 1, 1, 1, 1), "x")])
    finding = Finding(group.catalog["MTP102"], "prefix caching", span, fix, span, severity_override="info")
    launch = LaunchResult(("serve.sh", 10), "script", False, "serve.sh", None, True, ("serve.sh", 10), 3,
                          [finding], [Diagnostic("MTP001", "bad", span)], ["MTP201"], {"serve.sh": [3, {"2": "x"}]})
    result = FileResult(1, [Diagnostic("MTP001", "unreadable", span)], ["serve.sh: error"], [launch],
                        {"serve.sh": [3, {"1": "a"}]})
    arrived = load_result(dump_result(result), group)
    assert arrived == result
    found = arrived.launches[0].findings[0]
    assert found.fix is not None and found.rule is group.catalog["MTP102"]
    assert found.span is found.launch_span is found.fix.edits[0].span


def test_a_worker_sends_back_only_what_the_assembly_keeps(tmp_path: Path) -> None:
    """A run without the cache keeps, of most files, only their count of skipped files: a worker
    sends that count alone (nothing pickled), and of the other files what the assembly reads, unless
    the result offers a fix whose verification takes it whole."""
    from mtplint import parallel
    from mtplint.analysed import analysed_with_dependencies
    from mtplint.analysis import RecordingLoader, RunGroup
    from mtplint.discover import discover
    from mtplint.lint import LintSettings, needed_by_the_assembly
    from mtplint.pipeline import Options
    from mtplint.result_pickle import load_result

    tree = build(tmp_path, copies=2)
    for number in range(3):  # YAML that starts no engine: the prefilter skips it
        (tree / f"ci-{number}.yaml").write_text("jobs:\n  test:\n    runs-on: ubuntu-latest\n")
    group = RunGroup(LintSettings(Options(tree)))
    candidates = discover([tree], tree)
    parallel._start_worker(group, False, needed_by_the_assembly)
    try:
        answers = parallel._worker_chunk([(str(c.path), c.kind, c.explicit, c.group) for c in candidates], {})
    finally:
        parallel._worker = None
    loader = RecordingLoader(tree)
    pickled = 0
    for candidate, (data, deps, requested) in zip(candidates, answers, strict=True):
        result, _, expected_requested = analysed_with_dependencies(candidate, loader, group)
        assert deps is None and requested == expected_requested
        kept = result if requested is not None else needed_by_the_assembly(result)
        if kept is None:
            assert data == result.skipped
        else:
            pickled += 1
            assert load_result(data, group) == kept
    assert 0 < pickled < len(candidates) - 3


def test_this_process_looks_at_the_workers_every_few_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While the workers hold their chunks, this process analyses a few files at a time
    (``OWN_FILES``) and then looks whether a worker finished one: a worker done with its chunks gets
    the next ones within a few files, not after a whole chunk of this process's."""
    from concurrent.futures import Future

    from mtplint import lint, parallel
    from mtplint.pipeline import Options

    tree = build(tmp_path, copies=40)
    in_a_row = [0, 0]  # since the last look, the most
    done = Future.done
    analyse = lint._Run.analyse

    def looking(future: Future[Any]) -> bool:
        in_a_row[0] = 0
        return done(future)

    def analysing(run: Any, index: int, candidate: Any) -> Any:
        in_a_row[0] += 1
        in_a_row[1] = max(in_a_row)
        return analyse(run, index, candidate)

    monkeypatch.setattr(Future, "done", looking)
    monkeypatch.setattr(lint._Run, "analyse", analysing)
    result = lint.lint([tree], lint.LintSettings(Options(tree)), jobs=2)
    assert result.processes == 2 and result.findings
    assert 0 < in_a_row[1] <= parallel.OWN_FILES < parallel.CHUNK_FILES


def _squares(chunk: list[int]) -> list[tuple[int, int]]:
    return [(number * number, os.getpid()) for number in chunk]


def _raises_on_seven(chunk: list[int]) -> list[tuple[int, int]]:
    if 7 in chunk:
        raise RuntimeError("a bug that only shows in a worker")
    return _squares(chunk)


def _dies_on_seven(chunk: list[int]) -> list[tuple[int, int]]:
    if 7 in chunk:
        os._exit(1)
    return _squares(chunk)


@pytest.mark.parametrize("task", [_squares, _raises_on_seven, _dies_on_seven])
def test_work_shared_out_is_done_once_each_failed_chunk_here(task: Any) -> None:
    """The primitive of ``--jobs`` and of the fix verification: consecutive items go to the workers
    in chunks, or are done here while the workers hold theirs; a chunk whose task raised, or whose
    worker died, is done here. Every item once, a chunk's outputs together and in its order, and
    the pool shut down at the end."""
    import multiprocessing
    from concurrent.futures import Future, ProcessPoolExecutor

    from mtplint import parallel

    pool = ProcessPoolExecutor(2, multiprocessing.get_context("fork"))
    submitted: list[list[int]] = []
    done_here: list[list[int]] = []

    def submit(chunk: list[int]) -> Future[list[tuple[int, int]]]:
        submitted.append(chunk)
        return pool.submit(task, chunk)

    def here(chunk: list[int]) -> list[tuple[int, int, int]]:
        done_here.append(chunk)
        return [(number, number * number, os.getpid()) for number in chunk]

    def answered(chunk: list[int], answer: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
        return [(number, *squared) for number, squared in zip(chunk, answer, strict=True)]

    outputs = list(parallel.shared_out(pool, range(40), submit, here, answered, 3, 2, 4))
    assert sorted((number, square) for number, square, _ in outputs) == [(n, n * n) for n in range(40)]
    chunks = sorted(submitted + [chunk for chunk in done_here if chunk not in submitted])
    assert [number for chunk in chunks for number in chunk] == list(range(40))  # consecutive items
    assert submitted[:4] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]]  # the workers hold 4 at first
    for chunk in chunks:  # each chunk's outputs in a row, in its order, from one process
        start = [number for number, _, _ in outputs].index(chunk[0])
        assert [number for number, _, _ in outputs[start:start + len(chunk)]] == chunk
        assert len({pid for _, _, pid in outputs[start:start + len(chunk)]}) == 1
    by_worker = {number for number, _, pid in outputs if pid != os.getpid()}
    if task is _squares:
        assert {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11} <= by_worker
    else:
        assert [6, 7, 8] in done_here and 7 not in by_worker
    if task is _raises_on_seven:  # the pool still works: the other chunks it held were done there
        assert {0, 1, 2, 3, 4, 5, 9, 10, 11} <= by_worker
    with pytest.raises(RuntimeError):
        pool.submit(_squares, [1])
