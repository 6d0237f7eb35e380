"""A file's parse is shared by every reader in one run, and by no other run.

One run parses each YAML file once for its extractor, a kustomization or compose project naming
it, an engine reading it as ``--config`` and a fix locating a word in it; the results must be those
of reading it afresh each time, and a later run must see the file as it is then.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplint.extract import FileLoader
from mtplint.extract.yamlpos import YamlError, load_all
from mtplint.source import Parses, SourceFile
from tests.conftest import run_cli, write_files

KUSTOMIZE = Path(__file__).parent / "data" / "k8s" / "kustomize"

COMPOSE = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.11.0
    command: >
      Qwen/Qwen3-8B --speculative-config '{{"method": "mtp", "num_speculative_tokens": {tokens}}}'
      --max-num-seqs {seqs}
"""


def test_one_loader_parses_a_file_once_and_another_loader_parses_it_again(tmp_path: Path) -> None:
    path = write_files(tmp_path, {"deploy.yaml": "a: [1, 2]\n---\nb: {c: d}\n"}) / "deploy.yaml"
    loader = FileLoader(tmp_path)
    source = loader.load(path)
    assert source is not None
    first, again = load_all(source), load_all(source)
    assert first is not again and first == again  # the list is the caller's, the trees are shared
    other = FileLoader(tmp_path).load(path)
    assert other is not None
    assert all(mine is not theirs for mine, theirs in zip(load_all(other), first, strict=True))
    # a text no loader read (an inline kustomize patch, a test's text) is parsed for each reader
    loose = SourceFile.from_text("a: 1\n")
    assert load_all(loose)[0] is not load_all(loose)[0]


def test_a_file_that_is_not_yaml_is_reported_the_same_to_each_reader(tmp_path: Path) -> None:
    path = write_files(tmp_path, {"broken.yaml": "a: [unclosed\n"}) / "broken.yaml"
    source = FileLoader(tmp_path).load(path)
    assert source is not None
    errors = []
    for _ in range(2):
        with pytest.raises(YamlError) as caught:
            load_all(source)
        errors.append((str(caught.value), caught.value.offset))
    assert errors[0] == errors[1]


def test_parses_are_held_for_the_latest_files_and_the_kept_ones_within_a_budget() -> None:
    parses = Parses(recent_files=2, kept_characters=10)
    sources = [SourceFile.from_text(f"text {index}\n", f"f{index}") for index in range(4)]
    for source in sources[:2]:
        parses.put(source, "yaml", source.text)
    parses.keep(sources[0])  # 7 characters: within the budget
    parses.keep(sources[1])  # another 7 would pass it: stays among the latest only
    for source in sources[2:]:
        parses.put(source, "yaml", source.text)
    assert [parses.get(source, "yaml") for source in sources] == [sources[0].text, None, *(s.text for s in sources[2:])]
    assert parses.get(SourceFile.from_text(sources[0].text, "f0"), "yaml") is None  # same text, another file


class _ScanningParses:
    """Parses as they were: :meth:`keep` looked through every recent entry for the source's."""

    def __init__(self, recent_files: int, kept_characters: int) -> None:
        self.recent_files, self.kept_characters = recent_files, kept_characters
        self.recent: dict[tuple[int, str], object] = {}
        self.kept: dict[tuple[int, str], object] = {}
        self.kept_size = 0

    def get(self, source: SourceFile, kind: str) -> object | None:
        key = (id(source), kind)
        if key in self.kept:
            return self.kept[key]
        if key in self.recent:
            self.recent[key] = self.recent.pop(key)  # the most recent again
            return self.recent[key]
        return None

    def put(self, source: SourceFile, kind: str, parsed: object) -> None:
        self.recent[(id(source), kind)] = parsed
        if len(self.recent) > self.recent_files:
            del self.recent[next(iter(self.recent))]

    def keep(self, source: SourceFile) -> None:
        for key in [key for key in self.recent if key[0] == id(source)]:
            if self.kept_size + len(source.text) > self.kept_characters:
                return
            self.kept[key] = self.recent.pop(key)
            self.kept_size += len(source.text)


_SOURCES = [SourceFile.from_text("x" * (index + 1), f"f{index}") for index in range(6)]


@settings(max_examples=300, deadline=None)
@given(operations=st.lists(st.tuples(st.sampled_from(["get", "put", "keep"]), st.integers(0, 5),
                                     st.sampled_from(["yaml", "dotenv"])), max_size=40),
       recent_files=st.integers(1, 4), kept_characters=st.integers(0, 12))
def test_parses_hold_what_a_scan_of_every_recent_entry_held(operations: list[tuple[str, int, str]],
                                                            recent_files: int, kept_characters: int) -> None:
    parses, scanning = Parses(recent_files, kept_characters), _ScanningParses(recent_files, kept_characters)
    for number, (operation, index, kind) in enumerate(operations):
        source = _SOURCES[index]
        if operation == "put":
            parses.put(source, kind, number)
            scanning.put(source, kind, number)
        elif operation == "keep":
            parses.keep(source)
            scanning.keep(source)
        else:
            assert parses.get(source, kind) == scanning.get(source, kind)
        # the count of each source's recent entries, which lets keep() skip the others' files
        assert parses._recent_kinds == Counter(identity for identity, _ in parses._recent)
    assert [parses.get(source, kind) for source in _SOURCES for kind in ("yaml", "dotenv")] == \
        [scanning.get(source, kind) for source in _SOURCES for kind in ("yaml", "dotenv")]


def test_files_read_by_an_overlay_and_on_their_own_give_the_launches_of_separate_runs(
        inspect: Callable[..., dict[str, Any]]) -> None:
    pytest.importorskip("mtplint.engines.vllm")
    files = {path.relative_to(KUSTOMIZE).as_posix(): path.read_text(encoding="utf-8")
             for path in KUSTOMIZE.rglob("*.yaml")}
    together = inspect(files, ".")["launches"]
    alone = [launch for name in sorted(files) for launch in inspect({}, name)["launches"]]
    assert len(together) == 2
    assert sorted(together, key=json.dumps) == sorted(alone, key=json.dumps)


def test_a_run_sees_the_file_as_it_is_then_not_as_an_earlier_run_parsed_it(tmp_path: Path) -> None:
    path = write_files(tmp_path, {"compose.yaml": COMPOSE.format(tokens=2, seqs=8)}) / "compose.yaml"
    first = _inspect(tmp_path)
    path.write_text(COMPOSE.format(tokens=4, seqs=9), encoding="utf-8")  # same length, same name
    second = _inspect(tmp_path)
    assert first["speculative_config"]["num_speculative_tokens"] == 2 and first["max_num_seqs"] == 8
    assert second["speculative_config"]["num_speculative_tokens"] == 4 and second["max_num_seqs"] == 9


def _inspect(cwd: Path) -> dict[str, Any]:
    code, out, err = run_cli(["inspect", "--format", "json", "."], cwd=cwd)
    assert code == 0, err
    (launch,) = json.loads(out)["launches"]
    options: dict[str, Any] = launch["options"]
    return options


def test_an_env_file_is_parsed_once_per_dialect_for_its_readers_and_afresh_for_a_loose_text(
        tmp_path: Path) -> None:
    from mtplint.extract.dotenv import parse_env_file

    path = write_files(tmp_path, {".env": "A=1\nexport B=${A}-x\n; note=1\nC='q ${A}'\n"}) / ".env"
    loader = FileLoader(tmp_path)  # the run's: its parses last as long as it does
    source = loader.load(path)
    assert source is not None
    loose = SourceFile(path, source.display, source.text)  # the same text, read by no loader
    for dialect in ("compose", "systemd"):
        first, again = parse_env_file(source, dialect=dialect), parse_env_file(source, dialect=dialect)
        assert first is not again and first == again == parse_env_file(loose, dialect=dialect)
        assert all(mine is theirs for mine, theirs in zip(first, again, strict=True))
        again.clear()  # a reader's list is its own
        assert parse_env_file(source, dialect=dialect) == first
    assert parse_env_file(source) != parse_env_file(source, dialect="systemd")


def test_a_compose_service_reading_the_project_env_file_gets_the_values_it_got_before(tmp_path: Path) -> None:
    # the project's `.env` is read for compose's variables and again as the service's env_file
    write_files(tmp_path, {
        ".env": "MODEL=Qwen/Qwen3-8B\nSEQS=8\nGREETING=hi $MODEL\n",
        "compose.yaml": "services:\n  vllm:\n    image: vllm/vllm-openai:v0.11.0\n    env_file: .env\n"
                        "    environment:\n      SEQS: '16'\n"
                        "    command: ${MODEL} --max-num-seqs ${SEQS}\n",
    })
    code, out, err = run_cli(["inspect", "--format", "json", "."], cwd=tmp_path)
    assert code == 0, err
    (launch,) = json.loads(out)["launches"]
    assert launch["options"]["max_num_seqs"] == 8
    assert launch["env"]["SEQS"] == "16" and launch["env"]["GREETING"] == "hi Qwen/Qwen3-8B"
