"""A try of a fix assembles only what it touches (issue 24): :meth:`ProjectLinter.again` analyses the
records the change reaches, assembles those linked to them through the files they touch, and
splices what they report into the previous lint. These tests hold the splice to a whole
re-assembly after every try of real fixing runs, and count what a try assembles.
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Container, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from mtplint.checks import Edit, Finding, Fix, RuleContext
from mtplint.config import LintSettings
from mtplint.fix import relint
from mtplint.fix.relint import ProjectLint, ProjectLinter, problems, problems_by_file
from mtplint.pipeline import Options
from mtplint.source import SourceFile
from tests.conftest import run_cli, write_files

TESTS = Path(__file__).parent
BENCH = TESTS.parent / "bench"

SERVE = (
    "#!/usr/bin/env bash\n"
    "vllm serve meta-llama/Llama-3.1-8B-Instruct \\\n"
    "  --speculative-config '{\"method\": \"eagle3\", \"model\": \"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\", "
    "\"num_speculative_tokens\": 3}' \\\n"
    "  --max-num-seqs 16 --enable-prefix-caching\n"
)

#: projects whose files read each other: a compose file with its .env (its env_file too) and override, a
#: wrapper calling a script a systemd unit also starts, a k8s Deployment and its --config YAML
LINKED_PROJECTS = {
    "stack/compose.yaml": (
        "services:\n"
        "  sglang:\n"
        "    image: lmsysorg/sglang:${SGLANG_TAG}\n"
        "    env_file: .env\n"
        "    command: >\n"
        "      python3 -m sglang.launch_server --model-path ${MODEL}\n"
        "      --speculative-algorithm EAGLE3\n"
        "      --speculative-draft-model-path jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B\n"
        "      --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4\n"
        "  vllm:\n"
        "    image: vllm/vllm-openai:v0.10.1\n"
        "    command: >\n"
        "      --model meta-llama/Llama-3.1-8B-Instruct --num-speculative-tokens 3\n"
        "      --speculative-model yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\n"
    ),
    "stack/.env": "SGLANG_TAG=v0.5.9-cu129\nMODEL=meta-llama/Llama-3.1-8B-Instruct\nSGLANG_ENABLE_SPEC_V2=on\n",
    "stack/compose.override.yaml": (
        "services:\n"
        "  vllm:\n"
        "    command: >\n"
        "      --model meta-llama/Llama-3.1-8B-Instruct --enable-prefix-caching\n"
        "      --speculative-config '{\"method\": \"eagle3\", \"model\": \"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\"}'\n"
    ),
    "scripts/serve.sh": SERVE,
    "scripts/run.sh": "#!/usr/bin/env bash\nset -e\nexec ./serve.sh\n",
    "scripts/serve.service": (
        "[Unit]\nDescription=vLLM\n\n[Service]\nWorkingDirectory=/srv\nExecStart=/srv/scripts/serve.sh\n"
    ),
    "k8s/deployment.yaml": (
        "apiVersion: apps/v1\n"
        "kind: Deployment\n"
        "metadata:\n  name: qwen-eagle\n"
        "spec:\n"
        "  template:\n"
        "    spec:\n"
        "      containers:\n"
        "        - name: server\n"
        "          image: vllm/vllm-openai:v0.12.0\n"
        "          args: [\"--config\", \"/etc/vllm/config.yaml\", \"--enable-prefix-caching\",\n"
        "                 \"--speculative-config\", '{\"method\": \"mtp\", \"num_speculative_tokens\": 4}']\n"
    ),
    "k8s/config.yaml": "model: Qwen/Qwen3-Next-80B-A3B-Instruct\nmax-num-seqs: 512\n",
}


def _fix_cases() -> Iterator[dict[str, str]]:
    for path in sorted((TESTS / "fixes").glob("*.yaml")):
        for case in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("cases") or []:
            yield case["files"]


def serve_scripts(count: int, bad: Container[int] = (), width: int = 3) -> dict[str, str]:
    """``count`` copies of :data:`SERVE` named ``serve-NNN.sh``; those numbered in ``bad`` ask for a
    batch of 32 instead of 16."""
    return {f"serve-{number:0{width}}.sh": SERVE.replace("16", "32") if number in bad else SERVE
            for number in range(count)}


def _bench_generate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_generate_for_splice", BENCH / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def spliced_tries(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Every try of the fixing checked against the lint it stands for: each file's problems, and the
    order of those assembled again, are those of the whole project assembled again after analysing
    every record the change reaches afresh (none taken from an earlier try). Notes (records
    assembled for the try, records that say something) per try."""
    tries: list[tuple[int, int]] = []
    real_again = ProjectLinter.again

    def again(linter: ProjectLinter, before: ProjectLint, texts: dict[str, SourceFile],
              changed: Any) -> ProjectLint:
        changed = list(changed)
        assembled = linter.assembled
        linted = real_again(linter, before, texts, changed)
        part = linter.assembled - assembled
        affected = linter.reaching([source.path for source in changed])
        loader = linter._loader(texts)
        records = list(before.records)
        for index, record in zip(affected, linter._analyse(affected, loader), strict=True):
            records[index] = record
        whole = problems(linter._assemble(range(len(records)), records, loader))
        assert problems(linted.result) == whole
        assert linted.by_file == problems_by_file(whole)
        assert linted.part == [item for item in whole if item[0][1] in linted.reassembled]
        assert before.problems_in(linted.reassembled) == [
            item for item in problems(before.result) if item[0][1] in linted.reassembled]
        tries.append((part, sum(not record.quiet for record in linted.records)))
        return linted

    monkeypatch.setattr(relint.ProjectLinter, "again", again)
    return tries


def test_the_spliced_lint_is_the_whole_assembly_after_every_try(tmp_path: Path,
                                                              spliced_tries: list[tuple[int, int]]) -> None:
    """Over every fix case of the test suite (each in its own directory), projects whose
    files read each other, and a generated tree: the findings, MTP001s and internal errors of
    each file after each try of ``--fix --unsafe-fixes`` (and of ``check``'s verification) are
    those of the whole project assembled again, in the same order."""
    for number, files in enumerate(_fix_cases()):
        write_files(tmp_path / "cases" / f"{number:03}", files)
    write_files(tmp_path / "linked", LINKED_PROJECTS)
    _bench_generate().generate(tmp_path / "generated", files=150, seed=20261122, deployment_only=True)

    # the .env named too: a fix run writes it only then
    code, out, err = run_cli(["check", "--isolated", "--unsafe-fixes", "--diff", ".", "linked/stack/.env"],
                             cwd=tmp_path)
    assert code == 1, err
    assert "+++ linked/stack/.env" in out  # a fix whose edit lands in the env_file
    assert "+++ linked/stack/compose.override.yaml" in out
    assert "fix not applied" in err  # refused fixes: the tries were split
    fixing = len(spliced_tries)
    assert fixing > 10
    # most tries assemble a small part of the project
    assert sum(assembled < saying / 4 for assembled, saying in spliced_tries) > fixing / 2

    code, _, err = run_cli(["check", "--isolated", "--exit-zero", "--no-cache", "."], cwd=tmp_path)
    assert code == 0, err
    assert len(spliced_tries) > fixing


def test_a_try_touching_one_file_assembles_only_that_files_part(tmp_path: Path) -> None:
    """200 scripts, one launch each: a change of one script analyses and assembles that script's
    record alone, and the lint is the whole project's all the same."""
    scripts = 200
    write_files(tmp_path, serve_scripts(scripts))
    settings = LintSettings(pipeline=Options(root=tmp_path, engine_versions={"vllm": "0.12.0"}))
    with contextlib.chdir(tmp_path):
        linter = ProjectLinter([tmp_path], settings)
        first, _ = linter.first()
        assert (linter.analysed, linter.assembled) == (scripts, scripts)
        assert first.result.findings
        target = str(tmp_path / "serve-123.sh")
        changed = SourceFile(target, "serve-123.sh", SERVE.replace(" --enable-prefix-caching", ""))
        linted = linter.again(first, {"serve-123.sh": changed}, [changed])
        assert (linter.analysed, linter.assembled) == (scripts + 1, scripts + 1)
        assert linted.reassembled == {"serve-123.sh"}
        assert linted.by_file == problems_by_file(problems(linted.result))
        assert linted.findings_in(["serve-123.sh"]) != first.findings_in(["serve-123.sh"])
        assert [linted.findings_in([name]) == first.findings_in([name]) for name in sorted(first.by_file)].count(
            False) == 1


def test_a_unit_that_stops_starting_a_script_gives_the_script_its_own_launch_back(tmp_path: Path) -> None:
    """A script a systemd unit starts is reported through the unit (its own reading dropped). When the
    unit's text changes so that it starts something else, the script -- not read by the unit any
    more, and reading nothing that changed -- is assembled again with it, and its own launch is
    reported."""
    unit = "[Unit]\nDescription=vLLM\n\n[Service]\nExecStart=/srv/scripts/serve.sh\nEnvironment=VLLM_USE_V1=0\n"
    write_files(tmp_path, {"scripts/serve.sh": SERVE, "scripts/serve.service": unit})
    settings = LintSettings(pipeline=Options(root=tmp_path, engine_versions={"vllm": "0.12.0"}))
    with contextlib.chdir(tmp_path):
        linter = ProjectLinter([tmp_path], settings)
        first, _ = linter.first()
        assert [launch.via_other for record in first.records for launch in record.launches] == [True, False]
        started = first.findings_in(["scripts/serve.sh"])
        assert started
        moved = SourceFile(str(tmp_path / "scripts" / "serve.service"), "scripts/serve.service",
                           unit.replace("/srv/scripts/serve.sh", "/usr/bin/true"))
        linted = linter.again(first, {moved.display: moved}, [moved])
        assert linter.analysed == 2 + 1  # the unit alone is read again
        assert linted.by_file == problems_by_file(problems(linted.result))
        own = linted.findings_in(["scripts/serve.sh"])
        assert [finding.code for finding in own] == [finding.code for finding in started]
        assert own[0] is not started[0]


def _context_rule(ctx: RuleContext) -> Iterator[Finding]:
    """MTP102 for the test below: cap the context, with a fix that also adds ``--enforce-eager`` (a
    finding of its own: a bad fix, refused) where the launch serves 32 sequences."""
    present = [str(token.value) for token in ctx.report.launch.args]
    if "--enforce-eager" in present:
        yield ctx.report_finding("--enforce-eager makes decoding slow")
    elif "--max-model-len=4096" not in present:
        last = ctx.report.launch.args[-1]
        source = ctx.source_for(last.span)
        assert source is not None and last.span is not None
        added = " --max-model-len=4096" + (" --enforce-eager" if "32" in present else "")
        yield ctx.report_finding("context", fix=Fix("safe", "Cap the context", [Edit(source.span(last.span.end), added)]))


def test_each_try_of_fix_assembles_what_it_changes_and_analyses_each_text_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--fix`` over 200 scripts, 8 of whose fixes are refused: the pass, the good fixes together,
    the bad ones found among the rest -- each try assembles the records of the scripts it changes
    (they read nothing of each other's), not the 200; and a script whose text a try has analysed
    already (in the refused pass) is not analysed again."""
    monkeypatch.setattr("mtplint.checks.mtp102.check", _context_rule)
    tries: list[tuple[int, int, int]] = []
    real_again = ProjectLinter.again

    def again(linter: ProjectLinter, before: ProjectLint, texts: dict[str, SourceFile],
              changed: Any) -> ProjectLint:
        changed = list(changed)
        analysed, assembled = linter.analysed, linter.assembled
        linted = real_again(linter, before, texts, changed)
        tries.append((len(changed), linter.analysed - analysed, linter.assembled - assembled))
        return linted

    monkeypatch.setattr(relint.ProjectLinter, "again", again)
    scripts, bad = 200, {7, 51, 52, 90, 133, 160, 161, 199}
    write_files(tmp_path, serve_scripts(scripts, bad))
    code, _, err = run_cli(["check", "--isolated", "--select", "MTP102", "--engine-version", "vllm=0.12.0",
                            "--fix", "."], cwd=tmp_path)
    assert code == 1
    assert err.count("fix not applied (Cap the context): the result has a new finding") == len(bad)
    assert (tmp_path / "serve-000.sh").read_text().endswith("--enable-prefix-caching --max-model-len=4096\n")
    assert len(tries) > len(bad)
    assert all(changed == assembled for changed, _, assembled in tries), tries
    assert sum(assembled for _, _, assembled in tries) < 3 * scripts
    # the pass analyses every script's fixed text; its parts, tried after it, the same texts
    assert sum(analysed for _, analysed, _ in tries) == scripts, tries
