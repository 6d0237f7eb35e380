"""bench/: the generator is deterministic and realistic, and the runner works end to end.

No timing assertions: timings belong to the benchmark output (bench/RESULTS.md), not to tests.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


generate = _load("generate")
runner = _load("run")
floor = _load("floor")
before_after = _load("before_after")


def test_generator_is_deterministic_and_has_the_requested_size() -> None:
    first = generate.build(200, seed=3)
    again = generate.build(200, seed=3)
    other = generate.build(200, seed=4)
    assert first.files == again.files
    assert first.files != other.files
    # N tracked files; the ignored scratch files under tmp/ come on top
    assert sum(first.kinds.values()) == 200
    tracked = [path for path in first.files if not path.startswith("tmp/")]
    assert len(tracked) == 200


def test_generator_mix_is_about_30_percent_deployment_files() -> None:
    tree = generate.build(2000, seed=1)
    deployment_kinds = {"compose", "dotenv", "shell-launch", "k8s", "kustomize", "dockerfile", "systemd",
                        "python-llm", "llama-swap", "llama-preset"}
    deployment = sum(count for kind, count in tree.kinds.items() if kind in deployment_kinds)
    assert deployment == 600
    assert deployment_kinds <= set(tree.kinds)
    sizes = sorted(len(text) for path, text in tree.files.items() if path.endswith((".py", ".md", ".go", ".js")))
    assert sizes[0] >= 200 and sizes[-1] >= 20_000  # a few hundred bytes to tens of KB


def test_generated_files_are_what_they_claim(tmp_path: Path) -> None:
    import yaml

    tree = generate.build(300, seed=5)
    for path, text in tree.files.items():
        if path.endswith((".yaml", ".yml")):
            list(yaml.safe_load_all(text))  # valid YAML, so peers and mtplint parse the same thing
        elif path.endswith(".json"):
            json.loads(text)
    composes = [text for path, text in tree.files.items() if path.endswith(("compose.yaml", "compose.yml"))]
    assert any("--speculative-config '{" in text for text in composes)
    assert any("speculative" not in text for text in composes)
    generate.write(tree, tmp_path)
    assert (tmp_path / ".gitignore").read_text().count("tmp/") == 1
    assert any((tmp_path / "tmp").rglob("compose.yaml"))


def test_mtplint_finds_launches_and_no_malformed_files(tmp_path: Path) -> None:
    generate.generate(tmp_path, 200, seed=11)
    mtplint = [sys.executable, "-m", "mtplint"]
    result = subprocess.run([*mtplint, "check", ".", "--exit-zero", "--output-format", "json"], cwd=tmp_path,
                            capture_output=True, text=True, check=True, timeout=120)
    findings = json.loads(result.stdout)
    codes = {finding.get("code") for finding in findings} if isinstance(findings, list) else set()
    assert codes, result.stdout[:500]
    assert "MTP001" not in codes  # the generator writes files real tools can parse
    assert not any(str(finding.get("filename", "")).startswith("tmp/") for finding in findings)  # .gitignore'd


@pytest.mark.slow
def test_runner_end_to_end(tmp_path: Path) -> None:
    output = tmp_path / "RESULTS.md"
    # small trees: the runner takes the same paths at any size, and the larger sizes cost only time
    result = subprocess.run([sys.executable, str(BENCH / "run.py"), "--sizes", "40", "80", "--pairs", "2",
                             "--peer-pairs", "1", "--file-pairs", "1", "--trees-dir", str(tmp_path / "trees"),
                             "--profile", "never", "--output", str(output)],
                            capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    report = output.read_text()
    assert "| measure | value | target | result |" in report
    rows = {line.split(" | ")[0].lstrip("| "): line for line in report.splitlines() if line.startswith("| ")}
    # the 10k targets are not judged on an 80-file tree: the row says so instead of passing
    warm = rows["1. warm cache / `--no-cache --jobs 1` (mixed 80)"]
    assert "IQR" in warm and "2 pairs" in warm and "n/a (" in warm and "the target is at 10,000" in warm
    assert "n/a (" in rows["2. `--jobs 1` / honest floor (deploy 80)"]
    for tree in ("mixed 40", "mixed 80", "deploy 40", "deploy 80"):  # every tree size, both trees
        jobs = rows[f"3. default jobs / `--jobs 1` ({tree})"]
        assert "<= 1x" in jobs and (" | PASS" in jobs or " | FAIL" in jobs)
    scaling = rows["6. work(80) / work(40), mixed tree, `--jobs 1`"]
    assert "<= 2.2x" in scaling and ("PASS" in scaling or "FAIL" in scaling)
    assert "5. peak RSS, `--jobs 1` (mixed 80)" in rows
    assert "one compose file: mtplint / `python -c pass`" in rows
    peers = {"yamllint": "4. one compose file: mtplint / yamllint", "shellcheck": "4. one shell script: mtplint / shellcheck",
             "hadolint": "4. one Dockerfile: mtplint / hadolint"}
    for peer, row in peers.items():
        installed = shutil.which(peer) or (Path(sys.executable).parent / peer).exists()
        assert ("not installed" in rows[row]) != bool(installed), rows[row]
    assert "## Ratios per tree" in report and "## Reproduce" in report
    assert "honest floor (bench/floor.py)" in report
    # the trees are kept for the next run
    assert len(list((tmp_path / "trees").glob("*.complete"))) == 4
    assert "| measure | value | target | result |" in result.stdout


@pytest.mark.parametrize("name", ["generate", "run", "floor", "before_after"])
def test_scripts_show_help(name: str) -> None:
    result = subprocess.run([sys.executable, str(BENCH / f"{name}.py"), "--help"], capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 0 and "usage" in result.stdout


def test_deployment_only_tree_holds_only_files_mtplint_lints() -> None:
    tree = generate.build(400, seed=2, deployment_only=True)
    assert sum(tree.kinds.values()) == 400
    unrelated = {"python-source", "js-source", "go-source", "markdown", "readme", "ci-yaml", "helm-values",
                 "generic-yaml", "json", "build-script"}
    assert not unrelated & set(tree.kinds)
    assert {"compose", "dotenv", "shell-launch", "k8s", "dockerfile", "systemd", "python-llm"} <= set(tree.kinds)


def _series(*walls: float) -> object:
    return runner.Series("run", [runner.Run(wall, 10.0, 0.0, 0) for wall in walls])


def test_pair_ratios_divide_the_runs_of_each_round_not_the_medians() -> None:
    # the machine slowed down in the last two rounds: both sides of those pairs are slower
    mtplint = _series(1.0, 1.1, 3.0, 3.2)
    peer = _series(2.0, 2.2, 6.0, 6.4)
    ratios = runner.pair_ratios(mtplint, peer)
    assert ratios == pytest.approx([0.5, 0.5, 0.5, 0.5])
    with pytest.raises(ValueError):  # a series missing a run is no set of pairs
        runner.pair_ratios(_series(1.0, 2.0), _series(1.0))


def test_large_kinds_leave_out_only_the_largest_size_of_the_other_kind() -> None:
    specs = runner.planned_trees([1000, 10000, 100000], ["mixed"])
    assert [(spec.kind, spec.files) for spec in specs] == [
        ("mixed", 1000), ("mixed", 10000), ("mixed", 100000), ("deploy", 1000), ("deploy", 10000)]
    # the deploy tree still scales 1k -> 10k; only the mixed tree goes on to 100k
    assert [(small.label, large.label) for small, large in runner.scaling_pairs(specs)] == [
        ("mixed 1,000", "mixed 10,000"), ("mixed 10,000", "mixed 100,000"), ("deploy 1,000", "deploy 10,000")]
    # one size is measured for both kinds, whatever is asked
    assert len(runner.planned_trees([1000], ["mixed"])) == 2


def test_growth_takes_the_fixed_cost_of_a_run_off_both_sizes() -> None:
    # 0.3 s of start-up and 0.1 ms a file: linear, though t(10N) / t(N) is only 4.3x
    base = _series(0.30, 0.33)
    small = _series(0.40, 0.43)
    large = _series(1.30, 1.33)
    assert runner.growth_ratios(base, small, large) == pytest.approx([10.0, 10.0])
    # 0.1 ms a file at N, 0.2 ms at 10N: twice linear
    assert runner.growth_ratios(_series(0.3), _series(0.4), _series(2.3)) == pytest.approx([20.0])
    # a small run within noise of the fixed cost divides by a floor, not by zero or a negative
    assert runner.growth_ratios(_series(0.40), _series(0.39), _series(0.41)) == pytest.approx([10.0])


def test_spread_has_the_median_quartiles_and_range_of_the_pairs() -> None:
    spread = runner.spread_of([0.9, 0.4, 0.5, 0.6, 0.45])
    assert spread.median == pytest.approx(0.5)
    assert (spread.q1, spread.q3) == (pytest.approx(0.45), pytest.approx(0.6))
    assert (spread.low, spread.high, spread.pairs) == (0.4, 0.9, 5)
    assert spread.text == "0.50x (IQR 0.45-0.60x, range 0.40-0.90x, 5 pairs)"
    one = runner.spread_of([1.25])
    assert (one.median, one.q1, one.q3) == (1.25, 1.25, 1.25) and "1 pair)" in one.text
    with pytest.raises(ValueError):
        runner.spread_of([])


def test_targets_are_judged_on_the_median_and_marginal_when_the_iqr_straddles() -> None:
    at_most = runner.Target(0.5)
    assert runner.judge(at_most, runner.spread_of([0.40, 0.42, 0.45])) == "PASS"
    assert runner.judge(at_most, runner.spread_of([0.55, 0.60, 0.62])) == "FAIL"
    assert runner.judge(at_most, runner.spread_of([0.3, 0.45, 0.48, 0.7, 0.8])) == (
        "PASS (marginal: the IQR straddles the target)")
    at_least = runner.Target(5.0, at_most=False)  # yamllint at least 5x slower
    assert runner.judge(at_least, runner.spread_of([5.5, 6.0, 7.0])) == "PASS"
    assert runner.judge(at_least, runner.spread_of([3.2, 3.3])) == "FAIL"
    assert at_least.text == ">= 5" and at_most.text == "<= 0.5"
    assert runner.judge_value(runner.Target(150.0), 151.0) == "FAIL"


def _tree_result(kind: str, files: int, rss: float, jobs: list[float]) -> object:
    spec = runner.TreeSpec(kind, files)
    result = runner.TreeResult(spec, runner.TreeFiles(Path("."), [], [], []))
    result.series["jobs_jobs1"] = runner.Series("one", [runner.Run(1.0, rss, 0.0, 0)])
    result.series["default_rss"] = runner.Series("summed", [runner.Run(1.0, rss, rss * 2, 0)])
    result.ratios["jobs"] = runner.spread_of(jobs)
    result.ratios["warm"] = runner.spread_of([0.4, 0.45, 0.42])
    return result


def test_target_rows_judge_each_line_only_at_its_tree_size() -> None:
    tools = runner.Tools("python", ["mtplint"], None, "shellcheck", None)
    results = {result.spec: result for result in (
        _tree_result("mixed", 1000, 40.0, [0.9, 0.95]), _tree_result("mixed", 10_000, 90.0, [1.2, 1.3]),
        _tree_result("mixed", 100_000, 120.0, [0.8, 0.9]), _tree_result("deploy", 1000, 45.0, [0.9, 1.0]))}
    scaling = {(runner.TreeSpec("mixed", 1000), runner.TreeSpec("mixed", 10_000)): runner.spread_of([7.0, 8.0]),
               (runner.TreeSpec("mixed", 10_000), runner.TreeSpec("mixed", 100_000)): runner.spread_of([11.5, 12.0])}
    one_file = {"shell": runner.spread_of([5.0, 6.0]), "shell_python": runner.spread_of([4.0])}
    rows = {row.measure: row for row in runner.target_rows(results, scaling, one_file, tools)}
    assert rows["1. warm cache / `--no-cache --jobs 1` (mixed 10,000)"].verdict == "PASS"
    # no floor measured on a deploy tree: judged nowhere, said so
    assert rows["2. `--jobs 1` / honest floor (deploy 10,000)"].verdict == "not measured"
    assert rows["3. default jobs / `--jobs 1` (mixed 10,000)"].verdict == "FAIL"
    assert rows["3. default jobs / `--jobs 1` (deploy 1,000)"].verdict.startswith("PASS")
    assert rows["4. one shell script: mtplint / shellcheck"].verdict == "FAIL"
    assert rows["4. one compose file: mtplint / yamllint"].value == "yamllint not installed"
    assert rows["5. peak RSS, `--jobs 1` (mixed 100,000)"].verdict == "PASS"
    growth = rows["5. peak RSS 100,000 / 10,000 files, `--jobs 1`"]
    assert growth.verdict == "FAIL" and growth.value.startswith("1.33x")
    assert rows["6. work(10,000) / work(1,000), mixed tree, `--jobs 1`"].verdict == "PASS"
    assert rows["6. work(100,000) / work(10,000), mixed tree, `--jobs 1`"].verdict == "FAIL"


def test_target_rows_of_a_quick_run_judge_no_10k_line() -> None:
    tools = runner.Tools("python", ["mtplint"], None, None, None)
    results = {result.spec: result for result in (_tree_result("mixed", 1000, 40.0, [0.9]),)}
    rows = {row.measure: row for row in runner.target_rows(results, {}, {}, tools)}
    warm = rows["1. warm cache / `--no-cache --jobs 1` (mixed 1,000)"]
    assert warm.verdict == "n/a (PASS at 1,000 files; the target is at 10,000)"
    assert rows["5. peak RSS, `--jobs 1` (mixed 1,000)"].verdict.startswith("n/a (PASS at 1,000")
    assert rows["6. linear time 1k -> 10k -> 100k"].verdict == "not measured"


def test_floor_walks_the_candidates_mtplint_discovers(tmp_path: Path) -> None:
    from mtplint.discover import discover

    generate.generate(tmp_path, 300, seed=9)
    # a nested .gitignore and a folder mtplint never enters, beside the root's
    (tmp_path / "deploy" / ".gitignore").write_text("old-*/\n")
    (tmp_path / "deploy" / "old-vllm").mkdir()
    (tmp_path / "deploy" / "old-vllm" / "compose.yaml").write_text("services:\n  a:\n    image: vllm/vllm-openai\n")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "serve.sh").write_text("vllm serve m\n")
    walked = sorted(os.path.relpath(path, tmp_path) for path, name in floor.walk(str(tmp_path))
                    if floor._kind_of(path, name))
    discovered = sorted(os.path.relpath(candidate.path, tmp_path)
                        for candidate in discover([tmp_path], tmp_path))
    assert walked == discovered
    assert not any(path.startswith(("tmp/", "node_modules/", "deploy/old-")) for path in walked)


def test_floor_parses_only_what_the_prefilter_passes(tmp_path: Path) -> None:
    (tmp_path / "serve.sh").write_text("#!/usr/bin/env bash\nset -euo pipefail\nexec vllm serve \\\n  --port 8000\n")
    (tmp_path / "build.sh").write_text("#!/usr/bin/env bash\nmake all\n")
    (tmp_path / "compose.yaml").write_text("services:\n  llm:\n    image: vllm/vllm-openai:v0.11.0\n")
    (tmp_path / ".env").write_text("VLLM_TAG=v0.11.0\n")
    (tmp_path / "values.yaml").write_text("replicaCount: 2\n")
    (tmp_path / "run.py").write_text("from vllm import LLM\nLLM(model='m', speculative_config={'method': 'mtp'})\n")
    (tmp_path / "app.service").write_text("[Service]\nExecStart=/opt/serve.sh\n")
    (tmp_path / "notes.md").write_text("vllm everywhere\n")
    counts = floor.floor(str(tmp_path))
    assert counts["walked"] == 8
    assert counts["read"] == 6  # not notes.md (no kind) nor .env (read beside its compose file)
    assert counts["parsed shell"] == 1 and counts["parsed compose"] == 1 and counts["parsed python"] == 1
    assert counts["parsed systemd"] == 1  # a unit may start a script that holds the launch
    assert counts["read .env"] == 1
    assert "parsed yaml" not in counts  # values.yaml mentions no engine


EARLIER_REPORT = """# mtplint benchmark results

## Summary

| measure | value | target | result |
|---|---|---|---|
| single file: mtplint / yamllint | {single} | <= 0.6x | {verdict} |
| tree: 2 workers / 1 worker | 0.63x (per round: median 0.63x, 0.44-1.21x) | <= 0.65x | PASS |

## All measurements

| run | median wall (s) | min-max (s) | runs | max RSS (MB) |
|---|---|---|---|---|
| tree | 3.0 | 2.9-3.1 | 3 | 89 |
"""


def test_before_after_puts_the_two_summaries_side_by_side() -> None:
    before = before_after.summary_rows(EARLIER_REPORT.format(single="0.57x", verdict="PASS"))
    after = before_after.summary_rows(EARLIER_REPORT.format(single="0.71x", verdict="FAIL"))
    assert [row["measure"] for row in before] == ["single file: mtplint / yamllint", "tree: 2 workers / 1 worker"]
    lines = before_after.side_by_side(before, after)
    assert lines[2] == "| single file: mtplint / yamllint | 0.57x | 0.71x | <= 0.6x | PASS | FAIL |"
    section = before_after.section("241ed99", "abc1234", "241ed99", 10_000,
                                   {"before": EARLIER_REPORT.format(single="0.57x", verdict="PASS"),
                                    "after": EARLIER_REPORT.format(single="0.71x", verdict="FAIL")}, 600.0)
    assert "Targets missed after: single file: mtplint / yamllint." in section


def test_before_after_section_is_replaced_in_place_and_kept_by_a_rewrite() -> None:
    first = before_after.section("241ed99", "abc1234", "241ed99", 1_000,
                                 {"before": EARLIER_REPORT.format(single="0.57x", verdict="PASS"),
                                  "after": EARLIER_REPORT.format(single="0.50x", verdict="PASS")}, 60.0)
    results = before_after.replace_section("# mtplint benchmark results (issue 24)\n\nbody\n", first)
    assert results.count(before_after.BEGIN) == 1 and "Every target of that harness holds after." in results
    second = first.replace("0.50x", "0.52x")
    replaced = before_after.replace_section(results, second)
    assert replaced.count(before_after.BEGIN) == 1 and "0.52x" in replaced and "0.50x" not in replaced
    assert replaced.startswith("# mtplint benchmark results (issue 24)")
    # what bench/run.py appends to its fresh report
    assert before_after.kept_section(replaced) == second
    assert before_after.kept_section("no section here") == ""
