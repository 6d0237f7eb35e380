"""Hierarchical configuration (as ruff's): every file is checked with the configuration closest to
it, in one run with one report -- the pre-commit case of a monorepo whose teams each keep an
``mtplint.toml``, where one hook call passes files of several teams."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli, write_files

# COMPOSE: on vLLM 0.32 with a hybrid model, MTP102 (prefix caching on by default with MTP, fix unsafe);
# without a GPU identity the summary counts the launch as not checked by MTP201/MTP301 (:func:`without_gpu`);
# with one, the VRAM rules run
from tests.test_config import COMPOSE
from tests.test_user_catalog import COMPOSE as CUSTOM_GPU_COMPOSE
from tests.test_user_catalog import PYPROJECT as CUSTOM_GPU_PYPROJECT

# an SGLang launch whose image tag is not pinned: engine-versions decides whether MTP103 fires
SGLANG_COMPOSE = """\
services:
  sglang:
    image: lmsysorg/sglang:latest
    command: >
      python3 -m sglang.launch_server
      --model-path deepseek-ai/DeepSeek-V3-0324
      --tp 8
      --speculative-algorithm NEXTN
      --speculative-num-steps 3
      --speculative-eagle-topk 1
      --speculative-num-draft-tokens 4
"""


def check_json(root: Path, *args: str) -> tuple[int, list[dict[str, Any]], str]:
    code, out, err = run_cli(["check", "--output-format", "json", *args], cwd=root)
    assert code in (0, 1), err
    findings: list[dict[str, Any]] = json.loads(out)
    return code, findings, err


def without_gpu(root: Path, *args: str) -> tuple[int, str]:
    """How many launches the summary says were not checked for want of a GPU identity, and by which rules."""
    code, out, err = run_cli(["check", "--output-format", "concise", *args], cwd=root)
    assert code in (0, 1), err
    notes = [re.match(r"(\d+) launch(?:es)? not checked by ([A-Z0-9, ]+) \(", line) for line in out.splitlines()]
    found = [note for note in notes if note is not None]
    assert len(found) <= 1, out
    return (int(found[0].group(1)), found[0].group(2)) if found else (0, "")


def by_file(findings: list[dict[str, Any]]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for finding in findings:
        found.setdefault(finding["filename"], []).append(finding["code"])
    return found


@pytest.fixture
def two_teams(tmp_path: Path) -> Path:
    """A monorepo: team-a runs on H100s and keeps every rule; team-b silences MTP102 and has no GPU set."""
    return write_files(tmp_path, {
        "team-a/deploy/compose.yaml": COMPOSE,
        "team-a/mtplint.toml": 'gpu = "h100"\n',
        "team-b/compose.yaml": COMPOSE,
        "team-b/mtplint.toml": 'ignore = ["MTP102"]\n',
    })


def test_sibling_projects_in_one_call_each_get_their_own_configuration(two_teams: Path) -> None:
    """The configuration of the first path used to hold for all: b's ignore silenced a's MTP102."""
    for order in (["team-b/compose.yaml", "team-a/deploy/compose.yaml"],
                  ["team-a/deploy/compose.yaml", "team-b/compose.yaml"]):
        _, findings, _ = check_json(two_teams, *order)
        found = by_file(findings)
        assert "MTP102" in found["team-a/deploy/compose.yaml"], order
        assert "MTP201" in found["team-a/deploy/compose.yaml"], order  # gpu = "h100": the VRAM check ran
        assert "MTP003" not in found["team-a/deploy/compose.yaml"], order
        assert "team-b/compose.yaml" not in found, order  # MTP102 ignored
        assert without_gpu(two_teams, *order) == (1, "MTP201, MTP301"), order  # team-b's launch: no GPU
    # each alone gives what it gives in the combined run
    _, alone_a, _ = check_json(two_teams, "team-a/deploy/compose.yaml")
    _, alone_b, _ = check_json(two_teams, "team-b/compose.yaml")
    _, together, _ = check_json(two_teams, "team-b/compose.yaml", "team-a/deploy/compose.yaml")
    assert together == alone_a + alone_b


def test_select_of_each_configuration(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "a/compose.yaml": COMPOSE, "a/mtplint.toml": 'select = ["MTP2", "MTP003"]\n',
        "b/compose.yaml": COMPOSE, "b/mtplint.toml": 'select = ["MTP102"]\n',
    })
    _, findings, _ = check_json(tmp_path, "b/compose.yaml", "a/compose.yaml")
    assert by_file(findings) == {"b/compose.yaml": ["MTP102"]}
    # a's launch went unchecked by the one GPU rule a selects; b selects none of them
    assert without_gpu(tmp_path, "b/compose.yaml", "a/compose.yaml") == (1, "MTP201")


def test_engine_versions_of_each_configuration(tmp_path: Path) -> None:
    """MTP103 (SGLANG_ENABLE_SPEC_V2 missing) holds for SGLang 0.5.9, not 0.5.11 (default on; test_version_awareness)."""
    write_files(tmp_path, {
        "old/compose.yaml": SGLANG_COMPOSE, "old/mtplint.toml": '[engine-versions]\nsglang = "0.5.9"\n',
        "new/compose.yaml": SGLANG_COMPOSE, "new/mtplint.toml": '[engine-versions]\nsglang = "0.5.11"\n',
    })
    _, findings, _ = check_json(tmp_path, "--select", "MTP103", "new/compose.yaml", "old/compose.yaml")
    assert by_file(findings) == {"old/compose.yaml": ["MTP103"]}


def test_command_line_still_wins_over_each_configuration(two_teams: Path) -> None:
    _, findings, _ = check_json(two_teams, "--select", "MTP102", "team-b/compose.yaml", "team-a/deploy/compose.yaml")
    assert by_file(findings) == {"team-a/deploy/compose.yaml": ["MTP102"], "team-b/compose.yaml": ["MTP102"]}
    _, findings, _ = check_json(two_teams, "--gpu", "l40s", "team-b/compose.yaml", "team-a/deploy/compose.yaml")
    assert all("MTP003" not in codes for codes in by_file(findings).values())
    assert without_gpu(two_teams, "--gpu", "l40s", "team-b/compose.yaml", "team-a/deploy/compose.yaml") == (0, "")
    assert "l40s" in json.dumps(findings) and "h100" not in json.dumps(findings)


def test_isolated_and_config_option_mean_one_configuration_for_all(two_teams: Path) -> None:
    _, findings, _ = check_json(two_teams, "--isolated", "team-b/compose.yaml", "team-a/deploy/compose.yaml")
    assert by_file(findings) == {"team-a/deploy/compose.yaml": ["MTP102"], "team-b/compose.yaml": ["MTP102"]}
    assert without_gpu(two_teams, "--isolated", "team-b/compose.yaml", "team-a/deploy/compose.yaml")[0] == 2
    _, findings, _ = check_json(two_teams, "--config", "team-b/mtplint.toml", "team-a/deploy/compose.yaml")
    assert findings == []  # team-b's: MTP102 ignored, no GPU
    assert without_gpu(two_teams, "--config", "team-b/mtplint.toml", "team-a/deploy/compose.yaml")[0] == 1


def test_walked_tree_subdirectory_with_its_own_configuration(tmp_path: Path) -> None:
    """As ruff: a directory walked uses, below a subdirectory holding a configuration, that one --
    its exclude included; a pyproject.toml without [tool.mtplint] starts nothing."""
    write_files(tmp_path, {
        "mtplint.toml": 'exclude = ["scratch"]\n',
        "compose.yaml": COMPOSE,
        "scratch/compose.yaml": COMPOSE,
        "services/chat/mtplint.toml": 'ignore = ["MTP102"]\nexclude = ["legacy"]\n',
        "services/chat/compose.yaml": COMPOSE,
        "services/chat/legacy/compose.yaml": COMPOSE,
        "services/chat/tools/pyproject.toml": '[project]\nname = "chat-tools"\n',
        "services/chat/tools/compose.yaml": COMPOSE,
        "services/embed/compose.yaml": COMPOSE,
        "legacy/compose.yaml": COMPOSE,
    })
    _, findings, _ = check_json(tmp_path, ".")
    assert by_file(findings) == {
        "compose.yaml": ["MTP102"],
        "legacy/compose.yaml": ["MTP102"],  # only the chat service excludes its legacy/
        # services/chat/compose.yaml and services/chat/tools/compose.yaml (governed by
        # services/chat/mtplint.toml) ignore MTP102: linted (the five launches below), nothing found
        "services/embed/compose.yaml": ["MTP102"],
    }
    assert without_gpu(tmp_path, ".")[0] == 5  # scratch/ and services/chat/legacy/ are excluded
    # the same file named explicitly, or its directory walked from inside, gets the same configuration
    _, findings, _ = check_json(tmp_path, "services/chat/tools/compose.yaml", "compose.yaml")
    assert by_file(findings) == {"compose.yaml": ["MTP102"]}
    assert without_gpu(tmp_path, "services/chat/tools/compose.yaml", "compose.yaml")[0] == 2
    _, findings, _ = check_json(tmp_path / "services", ".")
    assert by_file(findings) == {"embed/compose.yaml": ["MTP102"]}
    assert without_gpu(tmp_path / "services", ".")[0] == 3


def test_a_nested_exclude_with_a_folder_means_its_own_folder_from_anywhere(tmp_path: Path) -> None:
    """``exclude = ["legacy/*"]`` in services/chat/mtplint.toml excludes services/chat/legacy/…, whether
    mtplint runs from the repository root, from services/, or from services/chat."""
    write_files(tmp_path, {
        "mtplint.toml": "",
        "services/chat/mtplint.toml": 'exclude = ["legacy/*"]\n',
        "services/chat/compose.yaml": COMPOSE,
        "services/chat/legacy/compose.yaml": COMPOSE,
        "legacy/compose.yaml": COMPOSE,
    })
    for cwd, prefix in ((tmp_path, "services/chat/"), (tmp_path / "services", "chat/"),
                        (tmp_path / "services" / "chat", "")):
        _, findings, _ = check_json(cwd, ".")
        assert f"{prefix}compose.yaml" in by_file(findings), cwd
        assert f"{prefix}legacy/compose.yaml" not in by_file(findings), cwd
    _, findings, _ = check_json(tmp_path, ".")
    assert "legacy/compose.yaml" in by_file(findings)  # the root's own legacy/ is not the chat service's


def test_explicit_file_plus_a_directory(two_teams: Path) -> None:
    write_files(two_teams, {"team-b/k8s/deployment.yaml": COMPOSE.replace("services:", "x-services:"),
                      "team-a/scripts/serve.sh": "#!/bin/sh\nexec vllm serve Qwen/Qwen3.6-35B-A3B "
                      "--speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 2}'\n"})
    _, findings, _ = check_json(two_teams, "team-a/scripts/serve.sh", "team-b")
    found = by_file(findings)
    # team-a's gpu: the hardware-aware rules ran (team-a's launch is not counted as unchecked), MTP301
    # fires for k=2 on an H100, and MTP201 for ~66 GiB of BF16 weights on one 80 GB card even at one
    # sequence (the script pins no vLLM release: MTP004 says MTP102 could not decide)
    assert found["team-a/scripts/serve.sh"] == ["MTP004", "MTP201", "MTP301"]
    assert "team-b/compose.yaml" not in found  # MTP102 ignored; its launch has no GPU:
    assert without_gpu(two_teams, "team-a/scripts/serve.sh", "team-b") == (1, "MTP201, MTP301")


def test_per_file_ignores_are_relative_to_each_configuration(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "a/mtplint.toml": '[per-file-ignores]\n"deploy/*" = ["MTP102"]\n"compose.yaml" = ["MTP003"]\n',
        "a/deploy/compose.yaml": COMPOSE,
        "b/mtplint.toml": 'select = ["MTP1", "MTP2", "MTP3", "MTP003"]\n',
        "b/deploy/compose.yaml": COMPOSE,
    })
    expected = {"a/deploy/compose.yaml": [], "b/deploy/compose.yaml": ["MTP102"]}
    for args in (["b/deploy/compose.yaml", "a/deploy/compose.yaml"], ["b", "a"], ["."]):
        _, findings, _ = check_json(tmp_path, *args)
        found = by_file(findings)
        assert {name: found.get(name, []) for name in expected} == expected, args
    # SARIF says which configuration's per-file-ignores suppressed a finding ("external")
    code, out, err = run_cli(["check", "--output-format", "sarif", "b", "a"], cwd=tmp_path)
    assert code == 1, err
    results = json.loads(out)["runs"][0]["results"]
    suppressed = {(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]):
                  [s["kind"] for s in r.get("suppressions", [])] for r in results}
    assert suppressed[("MTP102", "a/deploy/compose.yaml")] == ["external"]
    assert suppressed[("MTP102", "b/deploy/compose.yaml")] == []


def test_exit_code_and_summary_merge_into_one_report(two_teams: Path) -> None:
    code, out, err = run_cli(["check", "--output-format", "concise", "team-b/compose.yaml",
                              "team-a/deploy/compose.yaml"], cwd=two_teams)
    assert code == 1, err
    lines = out.splitlines()
    assert [line.split(":")[0] for line in lines if ": MTP" in line] == ["team-a/deploy/compose.yaml"] * 3
    assert sum(line.startswith("Found ") for line in lines) == 1
    assert "Found 3 findings (3 warnings)." in lines
    assert sum(" not checked by " in line for line in lines) == 1  # team-b's launch, said once
    # team-b alone has no finding: exit 0; with team-a's warnings in the same call: 1
    assert run_cli(["check", "team-b/compose.yaml"], cwd=two_teams)[0] == 0
    write_files(two_teams, {"team-a/mtplint.toml": 'gpu = "h100"\nselect = ["MTP003"]\n'})
    code, out, _ = run_cli(["check", "team-b/compose.yaml", "team-a/deploy/compose.yaml"], cwd=two_teams)
    assert code == 0 and out.startswith("All checks passed!\n1 launch not checked by MTP201, MTP301")


def test_unused_noqa_follows_the_configuration_of_its_file(tmp_path: Path) -> None:
    """MTP002 ("unused noqa") for a code only where that code is selected."""
    quiet = COMPOSE.replace("--max-num-seqs 16", "--max-num-seqs 16 --no-enable-prefix-caching")
    noqa = quiet.replace("services:\n", "services:  # mtplint: noqa: MTP102\n")
    write_files(tmp_path, {"a/compose.yaml": noqa, "a/mtplint.toml": 'extend-select = ["MTP002"]\n',
                     "b/compose.yaml": noqa, "b/mtplint.toml": 'extend-select = ["MTP002"]\nignore = ["MTP102"]\n'})
    _, findings, _ = check_json(tmp_path, "b/compose.yaml", "a/compose.yaml")
    assert [f["filename"] for f in findings if f["code"] == "MTP002"] == ["a/compose.yaml"]


def test_configuration_gpus_of_each_file(tmp_path: Path) -> None:
    """A GPU one team adds in its configuration is not known to another team's files."""
    write_files(tmp_path, {"a/pyproject.toml": CUSTOM_GPU_PYPROJECT, "a/compose.yaml": CUSTOM_GPU_COMPOSE,
                     "b/mtplint.toml": 'select = ["MTP2", "MTP003"]\n', "b/compose.yaml": CUSTOM_GPU_COMPOSE})
    for order in (["b/compose.yaml", "a/compose.yaml"], ["a/compose.yaml", "b/compose.yaml"]):
        _, findings, _ = check_json(tmp_path, *order)
        a_vram = [f for f in findings if f["filename"] == "a/compose.yaml" and f["code"] == "MTP201"]
        assert a_vram and "16380 MiB" in a_vram[0]["message"], order
        assert not [f for f in findings if f["filename"] == "b/compose.yaml" and f["code"] == "MTP201"], order
    code, out, err = run_cli(["inspect", "--format", "json", "b/compose.yaml", "a/compose.yaml"], cwd=tmp_path)
    assert code == 0, err
    gpus = {launch["file"]: launch["effective"]["gpu"] for launch in json.loads(out)["launches"]}
    assert gpus["a/compose.yaml"]["value"] == "rtx-4060-ti-16g" and "unknown_gpu" not in gpus["a/compose.yaml"]
    assert gpus["b/compose.yaml"]["unknown_gpu"] == "rtx-4060-ti-16g"


def test_jobs_and_cache_give_the_same_report(two_teams: Path) -> None:
    write_files(two_teams, {f"team-{team}/svc{n}/compose.yaml": COMPOSE for team in "ab" for n in range(40)})
    paths = ["team-b", "team-a"]
    _, plain, _ = check_json(two_teams, "--no-cache", "--jobs", "1", *paths)
    _, parallel, _ = check_json(two_teams, "--no-cache", "--jobs", "2", *paths)
    _, cold, _ = check_json(two_teams, "--jobs", "1", *paths)
    _, warm, _ = check_json(two_teams, *paths)
    assert plain == parallel == cold == warm
    assert len(by_file(plain)) == 41 and "team-b/svc7/compose.yaml" not in by_file(plain)
    assert "MTP201" in by_file(plain)["team-a/svc7/compose.yaml"]  # team-a's gpu, in the workers too
    # team-b's 41 launches, in one process, in workers, stored in the cache and read back from it
    for args in (["--no-cache", "--jobs", "1"], ["--no-cache", "--jobs", "2"], [], ["--jobs", "1"]):
        assert without_gpu(two_teams, *args, *paths) == (41, "MTP201, MTP301"), args


def test_fix_and_diff_use_each_files_configuration(two_teams: Path) -> None:
    """team-b ignores MTP102: its file keeps prefix caching; team-a's gets the fix."""
    code, out, err = run_cli(["check", "--diff", "--unsafe-fixes", "team-b/compose.yaml",
                              "team-a/deploy/compose.yaml"], cwd=two_teams)
    assert code == 1, err
    assert "team-a/deploy/compose.yaml" in out and "team-b/compose.yaml" not in out
    code, _, err = run_cli(["check", "--fix", "--unsafe-fixes", "team-b/compose.yaml", "team-a/deploy/compose.yaml"],
                           cwd=two_teams)
    assert code == 1, err  # team-b's MTP003 note does not fail; team-a's VRAM warnings remain
    assert (two_teams / "team-b/compose.yaml").read_text(encoding="utf-8") == COMPOSE
    assert (two_teams / "team-a/deploy/compose.yaml").read_text(encoding="utf-8") != COMPOSE
    _, findings, _ = check_json(two_teams, "team-a/deploy/compose.yaml")
    assert "MTP102" not in by_file(findings)["team-a/deploy/compose.yaml"]


def test_a_broken_configuration_of_a_later_path_is_reported(tmp_path: Path) -> None:
    """Also when the first path has no configuration and the files look like nothing to lint
    (the start-up shortcut must not skip the second file's configuration)."""
    write_files(tmp_path, {"a/README.md": "# a\n", "b/README.md": "# b\n", "b/mtplint.toml": 'selct = ["MTP1"]\n'})
    code, _, err = run_cli(["check", "a/README.md", "b/README.md"], cwd=tmp_path)
    assert code == 2 and "b/mtplint.toml" in err and "key `selct`" in err
    write_files(tmp_path, {"b/compose.yaml": COMPOSE})
    code, _, err = run_cli(["check", "a/README.md", "b/compose.yaml"], cwd=tmp_path)
    assert code == 2 and "key `selct`" in err


def test_a_script_an_image_starts_is_read_once_across_configurations(tmp_path: Path) -> None:
    """The script's stand-alone reading (under docker/'s configuration) is dropped when the
    Dockerfile (under the root's) starts it, as in a run under one configuration: that reading has
    the environment the command really gets (ENV MODEL, the image's version)."""
    write_files(tmp_path, {
        "mtplint.toml": 'gpu = "h100"\n',
        "Dockerfile": "FROM vllm/vllm-openai:v0.11.0\nENV MODEL=Qwen/Qwen3.6-27B\n"
                      "COPY docker/entrypoint.sh /usr/local/bin/\nENTRYPOINT [\"/usr/local/bin/entrypoint.sh\"]\n"
                      'CMD ["--max-num-seqs", "16"]\n',
        "docker/mtplint.toml": 'select = ["MTP1", "MTP003"]\n',
        "docker/entrypoint.sh": '#!/bin/sh\nset -e\nexec vllm serve "$MODEL" --port "${PORT:-8000}" \\\n'
                                "  --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 2}' \"$@\"\n",
    })
    _, alone, _ = check_json(tmp_path, "docker/entrypoint.sh")
    assert [f["code"] for f in alone] == ["MTP003", "MTP102"]  # $MODEL unresolved, version unpinned
    for args in (["docker/entrypoint.sh", "Dockerfile"], ["."], ["--jobs", "2", "--no-cache", "docker", "Dockerfile"]):
        _, findings, _ = check_json(tmp_path, *args)
        assert findings == [], args


def test_editor_buffer_uses_the_configuration_of_its_file(two_teams: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--stdin-filename``: the buffer is linted as the file it stands for, with that file's configuration."""
    monkeypatch.setattr("sys.stdin", io.StringIO(COMPOSE))
    _, findings, _ = check_json(two_teams, "--stdin-filename", "team-b/compose.yaml")
    assert findings == []  # team-b ignores MTP102
    monkeypatch.setattr("sys.stdin", io.StringIO(COMPOSE))
    assert without_gpu(two_teams, "--stdin-filename", "team-b/compose.yaml") == (1, "MTP201, MTP301")
    monkeypatch.setattr("sys.stdin", io.StringIO(COMPOSE))
    _, findings, _ = check_json(two_teams / "team-b", "--stdin-filename", "../team-a/deploy/compose.yaml")
    assert "MTP201" in by_file(findings)["../team-a/deploy/compose.yaml"]


def test_configuration_met_late_in_the_walk_reaches_the_workers(tmp_path: Path) -> None:
    """Workers start linting while the walk goes on: a configuration the walk finds only after
    the first files went out (``zz-team`` sorts last) still governs its files in the workers."""
    from mtplint.parallel import CHUNK_FILES

    files = {f"aa-team/svc{n:03}/compose.yaml": COMPOSE for n in range(CHUNK_FILES * 2)}
    files.update({"zz-team/mtplint.toml": 'ignore = ["MTP102"]\n', "zz-team/svc/compose.yaml": COMPOSE})
    write_files(tmp_path, files)
    _, plain, _ = check_json(tmp_path, "--no-cache", "--jobs", "1", ".")
    _, parallel, _ = check_json(tmp_path, "--no-cache", "--jobs", "2", ".")
    assert parallel == plain
    found = by_file(plain)
    assert "MTP102" in found["aa-team/svc000/compose.yaml"]
    assert found.get("zz-team/svc/compose.yaml", []) == [code for code in found["aa-team/svc000/compose.yaml"]
                                                         if code not in ("MTP102", "MTP003")]
    assert without_gpu(tmp_path, "--no-cache", "--jobs", "2", ".")[0] == CHUNK_FILES * 2 + 1


def test_the_closest_configuration_follows_links_and_resolves_a_folder_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files given by name (a commit's, a fix's batch of hundreds) find the configuration closest to
    where they really are: through a linked folder, a linked file, or as a folder themselves. The
    folders of files given side by side are resolved once, each through its parent's answer: one
    ``lstat`` for each new folder and each file, not one per folder of every file's path."""
    import os

    from mtplint.config_files import ConfigFinder

    write_files(tmp_path, {"a/mtplint.toml": "", "a/x.sh": "", "a/y.sh": "", "a/z.sh": "",
                           "b/mtplint.toml": "", "b/sub/w.sh": ""})
    (tmp_path / "b" / "linked.sh").symlink_to(tmp_path / "a" / "x.sh")
    (tmp_path / "c").symlink_to(tmp_path / "a")
    finder = ConfigFinder()
    assert finder.closest(str(tmp_path / "b" / "linked.sh")) == str(tmp_path / "a" / "mtplint.toml")
    assert finder.closest(str(tmp_path / "c" / "y.sh")) == str(tmp_path / "a" / "mtplint.toml")
    assert finder.closest(str(tmp_path / "b" / "sub")) == str(tmp_path / "b" / "mtplint.toml")
    assert finder.closest(str(tmp_path / "b" / "missing.sh")) == str(tmp_path / "b" / "mtplint.toml")
    asked: list[str] = []
    real_path, lstat = os.path.realpath, os.lstat

    def counted_real_path(path: str, **options: Any) -> str:
        asked.append(f"realpath {path}")
        return real_path(path, **options)

    def counted_lstat(path: str, **options: Any) -> os.stat_result:
        asked.append(f"lstat {path}")
        return lstat(path, **options)

    monkeypatch.setattr(os.path, "realpath", counted_real_path)
    monkeypatch.setattr(os, "lstat", counted_lstat)
    found = {finder.closest(str(tmp_path / "a" / name)) for name in ("x.sh", "y.sh", "z.sh")}
    assert found == {str(tmp_path / "a" / "mtplint.toml")}
    assert asked == [f"lstat {tmp_path / 'a' / 'x.sh'}", f"lstat {tmp_path / 'a'}", f"lstat {tmp_path / 'a' / 'y.sh'}",
                     f"lstat {tmp_path / 'a' / 'z.sh'}"]


def test_the_closest_configuration_holds_a_bounded_number_of_resolved_folders(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The folders resolved for the closest configuration are forgotten every so many (a large
    tree's fixes give thousands of files by name, each in its own folder): the answers stay the same."""
    from mtplint import config_files

    write_files(tmp_path, {"mtplint.toml": "", **{f"svc/s{number}/team/x.sh": "" for number in range(6)},
                           "svc/s5/team/mtplint.toml": ""})
    monkeypatch.setattr(config_files, "REAL_DIRECTORIES_HELD", 3)
    finder = config_files.ConfigFinder()
    found = [finder.closest(str(tmp_path / f"svc/s{number}/team/x.sh")) for number in range(6)]
    assert found == [str(tmp_path / "mtplint.toml")] * 5 + [str(tmp_path / "svc/s5/team/mtplint.toml")]
    assert len(finder._real_directories) <= 3
