"""The engines' flag indexes: an unpinned launch is narrowed across every release without reading
every release's flag table, and an index reads each word as the release's own table does.

Facts the tests rest on (the tables under ``mtplint/engines/data``): ``--attn-dp-size`` is
registered from SGLang 0.5.22 on; 0.5.23 is SGLang's newest release with a table, 0.33.0 vLLM's.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from mtplint.engines import Parsed, sglang, vllm
from mtplint.engines.compact import TableFiles, read_index, written_index
from mtplint.shipped import package_path
from mtplint.versions import compare

EAGLE3_SCRIPT = """#!/usr/bin/env bash
set -euo pipefail
MODEL=${{MODEL:-Qwen/Qwen3-8B}}
exec python3 -m sglang.launch_server --model-path "$MODEL" \\
  --speculative-algorithm EAGLE3 \\
  --speculative-draft-model-path Tengyunw/qwen3_8b_eagle3 \\
  --speculative-num-steps 3 --speculative-eagle-topk 1 \\
  --speculative-num-draft-tokens 4 --tp 2{extra} --port 30000
"""

# runs mtplint on the files named in argv and prints, as JSON, its report and the files under the
# engines' data directory it opened (an audit hook sees every open)
_OPENED = """
import json, sys
from pathlib import Path
from mtplint.cli import main
from mtplint.shipped import package_path

data = str(package_path("engines", "data"))
opened = []
def audit(event, args):
    if event == "open" and isinstance(args[0], str) and args[0].startswith(data):
        opened.append(Path(args[0]).relative_to(data).as_posix())
sys.addaudithook(audit)
code = main(["inspect", "--format", "json", *sys.argv[1:]])
print(json.dumps({"code": code, "opened": opened}))
"""


VLLM_SCRIPT = """#!/usr/bin/env bash
set -euo pipefail
exec vllm serve Qwen/Qwen3-8B \\
  --speculative-config '{"method": "eagle3", "model": "Tengyunw/qwen3_8b_eagle3", "num_speculative_tokens": 3}' \\
  --gpu-memory-utilization 0.9 --max-model-len 32768
"""


def _inspect_in(tmp_path: Path, script: str, program: str) -> tuple[dict[str, object], dict[str, Any]]:
    """The launch ``inspect`` reports of ``script``, run by ``program`` (one of the snippets here) in a
    process of its own, and what the program printed after the report."""
    (tmp_path / "serve.sh").write_text(script, encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", program, "serve.sh"], cwd=tmp_path, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    report_text, _, tail = done.stdout.rstrip("\n").rpartition("\n")
    result: dict[str, Any] = json.loads(tail)
    assert result["code"] == 0
    launch: dict[str, object] = json.loads(report_text)["launches"][0]
    return launch, result


def _inspect_opening(tmp_path: Path, script: str) -> tuple[dict[str, object], list[str]]:
    launch, result = _inspect_in(tmp_path, script, _OPENED)
    return launch, result["opened"]


def test_an_unpinned_launch_reads_only_the_table_it_is_parsed_with(tmp_path: Path) -> None:
    """No pin anywhere: every release is possible, and reading the launch at each of them takes
    the flag index, not twenty tables."""
    launch, opened = _inspect_opening(tmp_path, EAGLE3_SCRIPT.format(extra=""))
    assert (launch["engine_version"], launch["version_source"]) == ("0.5.23", "assumed")
    assert "possible_versions" not in launch  # no flag narrows it: any release may run it
    tables = sorted(name for name in opened if name.startswith("sglang"))
    assert tables == ["sglang-flags.txt", "sglang/0.5.23.json"]


def test_an_unpinned_vllm_launch_reads_only_the_table_it_is_parsed_with(tmp_path: Path) -> None:
    launch, opened = _inspect_opening(tmp_path, VLLM_SCRIPT)
    assert (launch["engine_version"], launch["version_source"]) == ("0.33.0", "assumed")
    tables = sorted(name for name in opened if name.startswith("vllm") and not name.startswith("vllm/speculative/"))
    assert tables == ["vllm-flags.txt", "vllm/0.33.0.json"]


def test_a_flag_that_narrows_reads_the_release_before_it(tmp_path: Path) -> None:
    """A flag added in 0.5.22: the index tells the releases that read the launch alike apart from
    the first that does not, and only that one is parsed to name the flag it rejects."""
    launch, opened = _inspect_opening(tmp_path, EAGLE3_SCRIPT.format(extra=" --attn-dp-size 2"))
    assert launch["possible_versions"] == {"min": "0.5.22", "below": None}
    assert launch["version_evidence"] == [{"kind": "flag", "spec": ">=0.5.22", "origin": "serve.sh:8:43",
                                           "detail": "`--attn-dp-size` is not accepted before sglang 0.5.22"}]
    releases = sorted(name for name in opened if name.startswith("sglang/"))
    assert releases == ["sglang/0.5.21.json", "sglang/0.5.23.json"]


# runs mtplint on the file named in argv and prints, as JSON, its report and how many whole option
# sets of a release each engine's flag index built
_BUILT = """
import json, sys
from mtplint.cli import main
from mtplint.engines import Parsed, sglang, vllm

code = main(["inspect", "--format", "json", *sys.argv[1:]])
built = {engine.__name__.rpartition(".")[2]: engine.TABLE_FILES.index().option_sets_built for engine in (sglang, vllm)}
names = {engine.__name__.rpartition(".")[2]: engine.TABLE_FILES.index()._names_read is not None for engine in (sglang, vllm)}
print(json.dumps({"code": code, "built": built, "names": names}))
"""


def _inspect_building(tmp_path: Path, script: str) -> tuple[dict[str, object], dict[str, int]]:
    launch, result = _inspect_in(tmp_path, script, _BUILT)
    return launch, result["built"]


def test_an_unpinned_launch_of_exact_flags_builds_no_release_option_set(tmp_path: Path) -> None:
    """Every word an exact option string: each release is asked about each word alone, and the
    launch is still narrowed by the flag that only newer releases register."""
    launch, built = _inspect_building(tmp_path, EAGLE3_SCRIPT.format(extra=" --attn-dp-size 2"))
    assert launch["possible_versions"] == {"min": "0.5.22", "below": None}
    assert built["sglang"] == 0


def test_an_argv_launch_leaves_the_index_names_unsplit(tmp_path: Path) -> None:
    """The index's names are what a Python API launch's keywords are checked against: a shell
    launch, read as argv, never splits them (about 2,000 names for SGLang)."""
    _, result = _inspect_in(tmp_path, EAGLE3_SCRIPT.format(extra=" --attn-dp-size 2"), _BUILT)
    assert result["names"] == {"sglang": False, "vllm": False}


def test_only_an_ambiguous_prefix_builds_the_option_sets_it_is_matched_against(tmp_path: Path) -> None:
    """A unique prefix is matched against every release's option strings at once; an ambiguous one
    lists its candidates in the release's order, which takes the release's whole option set: built
    once for each release the prefix is read at."""
    launch, built = _inspect_building(tmp_path, EAGLE3_SCRIPT.format(extra=" --attn-dp-si 2"))
    assert launch["possible_versions"] == {"min": "0.5.22", "below": None}
    assert built["sglang"] == 0
    _, built = _inspect_building(tmp_path, EAGLE3_SCRIPT.format(extra=" --speculative-num 2"))
    assert built["sglang"] == len(sglang.table_versions())


def test_an_unpinned_vllm_launch_of_exact_flags_builds_no_release_option_set(tmp_path: Path) -> None:
    launch, built = _inspect_building(tmp_path, VLLM_SCRIPT)
    assert launch["engine_version"] == "0.33.0"
    assert built["vllm"] == 0


def _vocabulary() -> set[str]:
    """Every option string of every release, some abbreviations of each, glued values, and words
    argparse treats apart (a lone dash, a negative number, a one-letter switch with its value)."""
    options = {option for release in sglang.table_versions() for option in sglang.load_table(release).index}
    words = set(options)
    for option in options:
        words.update({option[:-1], option[: max(3, len(option) // 2)], f"{option}=fp8", f"{option}=2"})
    return words | {"-", "--", "-1", "-0.5", "-x", "-hx", "--not-a-flag", "--not-a-flag=3", "--tp=x"}


def test_the_vllm_index_reads_every_word_as_each_release_table_does() -> None:
    tables = {release: vllm.load_table(release) for release in vllm.table_versions()}
    options = {option for table in tables.values() for option in table.by_option}
    words = set(options)
    for option in options:
        words.update({option[:-1], option[: max(3, len(option) // 2)], f"{option}=x", f"{option[:6]}=1"})
    words |= {"-", "--", "-1", "-O", "-O3", "-x", "--not-a-flag"}
    indexed = vllm.TABLE_FILES.indexed_releases(vllm._IndexedRelease)
    assert indexed is not None and list(indexed) == list(tables)
    for release, view in indexed.items():
        table = tables[release]
        assert (view.keywords, view.has_positional, view.options.allow_abbrev) == (
            table.keywords, table.has_positional, table.allow_abbrev), release
        assert [word for word in sorted(words)
                if vllm._word_reading(view, word) != vllm._word_reading(table, word)] == [], release


def test_the_index_reads_every_word_as_each_release_table_does() -> None:
    indexed = sglang.TABLE_FILES.indexed_releases(sglang._IndexedRelease)
    assert indexed is not None and list(indexed) == list(sglang.table_versions())
    words = sorted(_vocabulary())
    for release, view in indexed.items():
        table = sglang.load_table(release)
        assert view.fields == frozenset(table.fields), release
        differ = [word for word in words
                  if sglang._word_reading(view, sglang.Word(word, None))
                  != sglang._word_reading(table, sglang.Word(word, None))]
        assert differ == [], release


def test_an_index_older_than_a_table_is_not_used(tmp_path: Path) -> None:
    """A table regenerated without regenerating the index: the index is ignored (the tables are
    read instead), as is a missing one."""
    directory = tmp_path / "sglang"
    shutil.copytree(package_path("engines", "data", "sglang"), directory)
    index_path = tmp_path / "sglang-flags.txt"
    shutil.copy(package_path("engines", "data", "sglang-flags.txt"), index_path)
    assert TableFiles(directory, tmp_path / "none.json", ("actions",), index_path).index() is not None

    newest = directory / "0.5.23.json"
    table = json.loads(newest.read_text(encoding="utf-8"))
    table["actions"].append({"options": ["--a-new-flag"], "dest": "a_new_flag"})
    newest.write_text(json.dumps(table), encoding="utf-8")
    stale = TableFiles(directory, tmp_path / "none.json", ("actions",), index_path)
    assert stale.index() is None

    missing = TableFiles(directory, tmp_path / "none.json", ("actions",), tmp_path / "absent.json")
    assert missing.index() is None


def test_a_parse_makes_the_actions_of_only_the_options_it_reads() -> None:
    """A table's actions are made when looked up: parsing a launch makes those of the options it
    writes and the required ones, not the table's hundreds."""
    table = sglang._table_of.__wrapped__("0.5.23")
    parsed = Parsed()
    words = [sglang.Word(text, None) for text in ("--model-path", "Qwen/Qwen3-8B", "--tp", "2",
                                                  "--speculative-num-steps", "3")]
    sglang.argparse_words(words, table, parsed, lambda dest: dest)
    assert parsed.errors == []
    assert {name: option.value for name, option in parsed.options.items()} == {
        "model_path": "Qwen/Qwen3-8B", "tp_size": 2, "speculative_num_steps": 3}
    made = {action.dest for action in table._made.values()}
    assert made == {"model_path", "tp_size", "speculative_num_steps"} | {action.dest for action in table.required}
    assert len(table.actions) > 100 * len(made)


def test_a_vllm_table_makes_the_flags_it_is_asked_for() -> None:
    """Looking up a flag, its dest, the keywords or the positional makes only the flags asked for;
    every flag is still there, in registration order, for whoever iterates them."""
    table = vllm._table_of.__wrapped__("0.33.0")
    assert "--max-model-len" in table.by_option and "max_model_len" in table.keywords
    assert table.by_dest["max_model_len"] is table.by_option["--max-model-len"]
    assert table.positional is not None and table.positional.dest == "model_tag"
    assert {flag.dest for flag in table._made.values()} == {"max_model_len", "model_tag"}
    flags = table.flags
    assert len(flags) > 100 and [flag.dest for flag in flags].index("model_tag") < 5
    assert table.by_option["--max-model-len"] in flags


def test_the_release_a_version_is_read_with_is_the_newest_not_newer_than_it() -> None:
    """A release reads its own table; any other version the newest release not newer than it (the
    oldest for anything older), as a scan of every release in order finds it."""
    for engine in (sglang, vllm):
        releases = engine.TABLE_FILES.releases()
        for version in (*releases, "0.0.1", "0.5.9.post1", "0.5.21rc1", "0.11.1", "0.32.9", "99.0"):
            scanned = releases[0]
            for release in releases:
                if compare(release, version) <= 0:
                    scanned = release
            assert engine.TABLE_FILES.release_for(version) == scanned, (engine.__name__, version)


def test_a_flag_index_file_reads_back_as_the_index_it_was_written_from(tmp_path: Path) -> None:
    """The shipped index file is the index of the tables as they are, and a file that is not one
    (cut short, or a JSON document) is refused, so the tables are read instead."""
    index = sglang.flag_index()
    written = written_index(index)
    assert read_index(written) == index
    assert Path(package_path("engines", "data", "sglang-flags.txt")).read_text(encoding="utf-8") == written
    for broken in (written.rsplit("\n", 3)[0] + "\n", json.dumps(index)):
        path = tmp_path / "sglang-flags.txt"
        path.write_text(broken, encoding="utf-8")
        files = TableFiles(package_path("engines", "data", "sglang"), tmp_path / "none.json", ("actions",), path)
        assert files.index() is None
