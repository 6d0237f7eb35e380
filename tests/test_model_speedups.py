"""Faster paths of launch modelling against what they replace: each must answer as the slower,
plainer form does, over many inputs (differential and property tests)."""

from __future__ import annotations

import argparse
import fnmatch
import functools
import random
import re
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplint import hardware, versions
from mtplint.catalogs import SHIPPED, Catalogs
from mtplint.engines import engine_for, sglang
from mtplint.extract.launch import Launch
from mtplint.models import search_patterns
from mtplint.pipeline import _older_versions
from mtplint.source import SourceFile, Token
from mtplint.versions import PIN_FILES, compare

# -- GPU names ---------------------------------------------------------------------------------------

_WORDS = st.text(alphabet="ab1 -.", max_size=12)


@given(text=_WORDS, phrase=_WORDS)
@settings(max_examples=1000)
def test_a_phrase_is_contained_as_whole_words_as_the_expression_finds(text: str, phrase: str) -> None:
    expected = bool(phrase) and re.search(rf"(?:^| ){re.escape(phrase)}(?: |$)", text) is not None
    assert hardware._contains(text, phrase) == expected


_OLD_MIG = re.compile(r"[-_ ]mig[-_ ]?(\d+)g\.(\d+)gb$", re.IGNORECASE)
_OLD_SHARED = re.compile(r"[-_ ]shared$", re.IGNORECASE)


def test_every_catalog_name_is_found_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each name of each catalog GPU, and variations of it, maps to the GPU it mapped to with the
    expressions as they were (compiled up front, one per phrase) and nothing remembered."""
    gpus = SHIPPED.gpus()
    names = [name for gpu in gpus for name in (gpu.id, gpu.name, *gpu.names, *gpu.aliases)]
    variations = [f"{prefix}{name}{suffix}" for name in names
                  for prefix, suffix in (("", ""), ("NVIDIA-", ""), ("", " Ti"), ("", "-80GB"), ("x ", " y"))]
    odd = ["", "nvidia", "unknown gpu", "rtx 3090 ti", "h100 nvl", "H100-MIG-1g.10gb", "h100_mig_2g.20gb",
           "A100-SXM4-40GB-SHARED", "A100 shared", "H100-MİG-1g.10gb", "A100-ſHARED", "l4-MIG-1g.5gb-SHARED"]
    every = [*names, *variations, *odd]
    quick = [(hardware._match(name, gpus), SHIPPED.find_gpu(name)) for name in every]

    def without_suffixes(name: str) -> str:
        return _OLD_SHARED.sub("", _OLD_MIG.sub("", name))

    monkeypatch.setattr(hardware, "_without_suffixes", without_suffixes)
    monkeypatch.setattr(hardware, "_mig_profile", _OLD_MIG.search)
    monkeypatch.setattr(hardware, "_normalise", hardware._normalise.__wrapped__)
    monkeypatch.setattr(hardware, "_contains", lambda text, phrase: bool(phrase) and re.search(
        rf"(?:^| ){re.escape(phrase)}(?: |$)", text) is not None)
    # nothing remembered: a fresh catalogs object for each name
    assert [(hardware._match(name, gpus), Catalogs().find_gpu(name)) for name in every] == quick


# -- version pins ------------------------------------------------------------------------------------

_NAMES = st.one_of(
    st.text(alphabet="abDrequimnts.xoyfkl-*", max_size=24),
    st.sampled_from(["requirements.txt", "requirements-dev.txt", "requirements.txt.bak", "requirementstxt",
                     "pyproject.toml", "pyproject.tom", "Dockerfile", "Dockerfile.gpu", "dockerfile", "app.Dockerfile",
                     ".Dockerfile", "constraints.txt", "constraints-cu12.txt", "constraints", "requirements"]),
)


@given(name=_NAMES)
@settings(max_examples=800)
def test_a_name_a_pin_pattern_matches_passes_the_quick_test(name: str) -> None:
    """The quick test may let other names through (they are then matched pattern by pattern),
    never stop one that a pattern matches."""
    ends = versions._PIN_NAME_ENDS
    assert ends is not None
    heads, tails = ends
    if any(fnmatch.fnmatch(name, pattern) for pattern in PIN_FILES if "/" not in pattern):
        assert name.startswith(heads) or name.endswith(tails)


def test_pins_up_to_a_root_walk_the_directories_pathlib_walks(tmp_path: Path) -> None:
    """The walk by path strings reads the directories the walk by ``Path.parts`` read: from the
    directory up to the root, or the directory alone outside the root."""
    def walked_by_parts(directory: Path, root: Path) -> list[str]:
        walked = []
        while True:
            walked.append(str(directory))
            if len(directory.parts) <= len(root.parts) or directory.parts[:len(root.parts)] != root.parts:
                return walked
            directory = directory.parent

    read: list[str] = []

    def listing(directory: str | Path, *_: object) -> tuple[list[object], list[Path]]:
        read.append(str(directory))
        return [], []

    original = versions._pins_in_directory
    versions._pins_in_directory = listing  # type: ignore[assignment]
    try:
        roots = [tmp_path, tmp_path / "a", tmp_path / "ab", Path("/"), tmp_path / "a" / "b" / "c"]
        directories = [tmp_path, tmp_path / "a", tmp_path / "a" / "b", tmp_path / "ab" / "b", tmp_path.parent,
                       Path("/"), tmp_path / "a" / "b" / "c" / "d"]
        for root in roots:
            for directory in directories:
                read.clear()
                versions._pins_up_to_root(str(directory), str(root), lambda path: None, None)
                assert read == walked_by_parts(directory, root), (directory, root)
    finally:
        versions._pins_in_directory = original


# -- version narrowing -------------------------------------------------------------------------------

def test_the_older_versions_are_those_the_range_holds() -> None:
    rng = random.Random(3)
    for engine in ("vllm", "sglang", "llama.cpp"):
        known = tuple(engine_for(engine).known_versions())
        for _ in range(200):
            low = rng.choice([None, *known])
            newest = rng.choice(known)
            expected = [v for v in known if (low is None or compare(v, low) >= 0) and compare(v, newest) < 0]
            assert list(_older_versions(known, low, newest)) == expected


def _launch(engine: str, entry: str, line: str) -> Launch:
    source = SourceFile.from_text(line)
    tokens = []
    offset = 0
    for word in line.split(" "):
        unresolved = ("X",) if word.startswith("$") else ()
        tokens.append(Token(word, source.span(offset, offset + len(word)), unresolved, splat=word == "$@"))
        offset += len(word) + 1
    return Launch(engine, entry, source, None, [], tokens, base_dir=Path("."))


LINES = {
    ("vllm", "vllm serve"): ["m --max-num-seqs 8", "m --max_num_seqs 8 -O3", "m --config c.yaml",
                             "--model m --enforce-eager", "m --speculative-config.method mtp $X", "m --en $@"],
    ("sglang", "python3 -m sglang.launch_server"): ["--model-path m --tp 2", "--model-path m --mem-fraction 0.8 -- x",
                                                    "--config c.yaml", "--model-path $M --enable-d 1 $@"],
    ("llama.cpp", "llama-server"): ["-m m --spec_draft_n_max 2", "-m m --draft-max 3 $X", "-m m --not-a-flag 1 $@"],
}


def test_a_launch_is_read_at_each_release_as_if_it_were_the_only_one() -> None:
    """The launch's own part of a reading is kept for the last launch asked about: asking about
    launches in turn, release by release, gives what asking about each afresh gives."""
    for (engine_name, entry), lines in LINES.items():
        engine = engine_for(engine_name)
        versions_known = engine.known_versions()
        launches = [_launch(engine_name, entry, line) for line in lines]
        interleaved = {(index, version): engine.flags_reading(launch, version)
                       for version in versions_known for index, launch in enumerate(launches)}
        for (index, version), reading in interleaved.items():
            fresh = _launch(engine_name, entry, lines[index])  # another object: worked out again
            assert engine.flags_reading(fresh, version) == reading, (lines[index], version)
        assert any(reading is not None for reading in interleaved.values())



# -- the engines' tables in one file ------------------------------------------------------------------

def test_the_compact_tables_are_the_table_files_compacted() -> None:
    """data/vllm-tables.json and data/sglang-tables.json are what the table files give."""
    import json

    from mtplint.engines import vllm

    for files in (vllm.TABLE_FILES, sglang.TABLE_FILES):
        written = json.loads(Path(files.compact).read_text(encoding="utf-8"))
        assert written == json.loads(json.dumps(files.compacted())), "run: python -m mtplint.engines.compact"


def _described(table: object) -> object:
    """A vLLM table as data (its classes compare by identity); an SGLang table is a record already."""
    from mtplint.engines import vllm

    if isinstance(table, vllm.FlagTable):
        return (table.version, table.allow_abbrev,
                [tuple(getattr(flag, name) for name in vllm.Flag.__slots__) for flag in table.flags])
    return table


def _tables_read(monkeypatch: pytest.MonkeyPatch, module: ModuleType, compact: Path) -> list[object]:
    """Every table of the engine, read as a process reads them (the first from its own file)."""
    from mtplint.engines.compact import TableFiles

    shipped = module.TABLE_FILES
    monkeypatch.setattr(module, "TABLE_FILES", TableFiles(shipped.directory, compact, shipped.shared))
    caches = [module._table_of, getattr(module, "_shared_flag", None) or module._shared_action]
    for cached in caches:
        cached.cache_clear()
    try:
        return [_described(module._table_of(version)) for version in module.table_versions()]
    finally:
        for cached in caches:
            cached.cache_clear()
        monkeypatch.setattr(module, "TABLE_FILES", shipped)


def test_tables_read_from_the_compact_file_are_those_of_their_own_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every table, as its own file gives it (each field, the raw data in its order); a table whose
    file is not the one the compact form was made from is read from its file."""
    import json

    from mtplint.engines import vllm

    for module in (vllm, sglang):
        shipped = Path(module.TABLE_FILES.compact)
        own = _tables_read(monkeypatch, module, tmp_path / "missing.json")
        compact = _tables_read(monkeypatch, module, shipped)
        assert compact == own, module.__name__
        if module is sglang:
            assert [list(table.raw) for table in compact] == [list(table.raw) for table in own]  # type: ignore[attr-defined]
        # a stale entry: made from other bytes than the newest table's file holds now (here, another
        # release's file)
        stale = json.loads(shipped.read_text(encoding="utf-8"))
        newest, older = module.table_versions()[-1], module.table_versions()[1]
        stale["tables"][newest] = stale["tables"][older]
        (tmp_path / "stale.json").write_text(json.dumps(stale))
        assert _tables_read(monkeypatch, module, tmp_path / "stale.json") == own, module.__name__


# -- words and numbers read without expressions --------------------------------------------------------

_VERSION_TEXT = st.text(alphabet="0123456789.bv٣²+-rc ", max_size=10)


@given(text=_VERSION_TEXT)
@settings(max_examples=800)
def test_plain_release_numbers_and_builds_are_told_as_the_expressions_tell(text: str) -> None:
    assert versions._plain_release(text) == bool(re.fullmatch(r"[0-9]+(?:\.[0-9]+)*", text))
    build = re.fullmatch(r"b(\d+)", text.strip())
    key = versions.version_key.__wrapped__(text)
    if build:
        assert key == (int(build.group(1)),)
    else:
        assert isinstance(key, versions.VersionKey)


@given(text=st.text(alphabet="-0123456789.٣x=a ", max_size=8))
@settings(max_examples=800)
def test_a_vllm_word_is_an_option_as_pythons_argparse_says(text: str) -> None:
    """Negative numbers, words with spaces and ``=``, prefixes: as ``_parse_optional`` of a parser
    holding vLLM's options reads them (an ambiguous prefix is an option argparse refuses)."""
    from mtplint.engines import vllm

    table = vllm.load_table("0.33.0")
    try:
        expected = _argparse_of_vllm()._parse_optional(text) is not None
    except _Refused:  # "ambiguous option"
        expected = True
    assert (vllm._option_word(text, True, table) is not None) == expected


class _Refused(Exception):
    pass


@functools.cache
def _argparse_of_vllm() -> argparse.ArgumentParser:
    """A standard-library parser holding vLLM 0.33.0's option strings, raising where it would exit."""
    from mtplint.engines import vllm

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            raise _Refused(message)

    table = vllm.load_table("0.33.0")
    parser = Parser(add_help=False, allow_abbrev=table.allow_abbrev)
    for number, option in enumerate(table.by_option):
        parser.add_argument(option, dest=f"option_{number}")
    return parser


@given(text=st.text(alphabet="0123456789+- \t٣x.", max_size=12))
@settings(max_examples=800)
def test_llama_cpp_integers_are_read_as_the_expression_reads_them(text: str) -> None:
    from mtplint.engines import llamacpp

    match = re.match(r"\s*([+-]?\d+)", text)
    if match is None or not -(2**31) <= int(match.group(1)) < 2**31:
        try:
            llamacpp._stoi(text)
        except llamacpp._HandlerError:
            return
        raise AssertionError(text)
    assert llamacpp._stoi(text) == int(match.group(1))


def test_models_are_found_as_with_every_pattern_compiled_up_front() -> None:
    eager = [(re.compile(pattern, re.IGNORECASE), info) for pattern, info, _ in SHIPPED.model_patterns()]
    names = [*(entry["id"] for entry in SHIPPED.model_entries()),
             *(f"{org}/{entry['id']}{suffix}" for entry in SHIPPED.model_entries()
               for org in ("mlx-community", "Org") for suffix in ("", "-MTP", "-GGUF", "-FP8")),
             "zai-org/GLM-4.6-FP8", "Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B", "unknown", "ſ", "DEEPſEEK-V3"]
    for name in names:
        assert SHIPPED.find_model(name) == next((info for pattern, info in eager if pattern.search(name)), None), name


#: pieces of patterns: literal runs, escapes, sets, groups (with alternation, lookarounds, names),
#: quantifiers and anchors, as model patterns are written
_PATTERN_PIECES = st.sampled_from([
    "qwen", "3", "-", "/", "glm", "4", "a", "B", "k", "s", " ", "_", ":", "\\.", "\\-", "\\/", "\\d", "\\b",
    "[56]", "[a-z]", "[^/]", ".", ".*", "^", "$", "?", "*", "+", "{1,2}", "(^|/)", "(coder-)?", "(?!.*mtp)",
    "(?<![a-z])", "(?:v3|r1)", "(?P<size>\\d+)b", "|", "ſ", "K",
])


@given(pieces=st.lists(_PATTERN_PIECES, min_size=1, max_size=8), data=st.data())
@settings(max_examples=600, deadline=None)
def test_every_match_of_a_pattern_holds_its_required_text(pieces: list[str], data: st.DataObject) -> None:
    """A lookup skips a pattern whose required text an ASCII name lacks: that must never skip a
    pattern that would have matched (names drawn from the pattern itself, so most do match)."""
    from mtplint.models import required_text

    pattern = "".join(pieces)
    try:
        compiled = re.compile(pattern, re.IGNORECASE)
    except re.error:
        return
    required = required_text(pattern)
    assert required == required.lower() and required.isascii()
    name = data.draw(st.from_regex(compiled).filter(str.isascii) | st.text(alphabet="qwen3-/glmaBks._ :", max_size=12))
    if compiled.search(name):
        assert required in name.lower(), (pattern, name, required)


def test_names_are_found_as_every_pattern_would_find_them_with_no_text_required() -> None:
    """The lookup with each pattern's required text against the lookup with none required."""
    names = ["zai-org/GLM-4.6-FP8", "mlx-community/Qwen3.5-27B-4bit", "mlx-community/Qwen3-Coder-Next-8bit",
             "unsloth/DeepSeek-V3-0324-GGUF", "deepseek-ai/DeepSeek-V3.2-Exp", "Qwen/Qwen3.6-35B-A3B",
             "/models/glm-4.7-flash", "moonshotai/Kimi-K2-Instruct", "XiaomiMiMo/MiMo-7B-RL", "DEEPſEEK-V3",
             "Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B", "GLM-4.5V", "glm-4.5-air-fp8", ""]
    gated = [SHIPPED.find_model(name) for name in names]
    without_required = tuple((pattern, info, "") for pattern, info, _ in SHIPPED.model_patterns())
    assert [search_patterns(without_required, name) if name else None for name in names] == gated
    assert gated[0] is not None and gated[0].id == "glm-4.6"


_OLD_NAME_FORMATS = (
    (re.compile(r"nvfp4|mxfp4|(?<![a-z])fp4", re.I), "FP4"),
    (re.compile(r"(?<![a-z])fp8|w8a8-fp8", re.I), "FP8"),
    (re.compile(r"awq|gptq|int4|w4a16|4bit|4-bit|bnb-4bit", re.I), "4-bit"),
    (re.compile(r"int8|w8a8|8bit|8-bit", re.I), "8-bit"),
    (re.compile(r"6bit|6-bit", re.I), "6-bit"),
)


@given(name=st.text(alphabet="aAfFpPwWqQgGtTiInNxXmMvVkKbB48616-/_.ıİſ", max_size=14))
@settings(max_examples=800)
def test_a_weight_format_in_a_name_is_found_as_every_expression_finds_it(name: str) -> None:
    from mtplint.tuner.sizes import _format_in_name

    expected = next((label for pattern, label in _OLD_NAME_FORMATS if pattern.search(name)), None)
    found = _format_in_name(name)
    assert (found.label if found is not None else None) == expected


def test_every_llama_cpp_option_is_spelled_with_a_leading_dash() -> None:
    """Narrowing leaves out the words without one: no build's option could be such a word."""
    from mtplint import llama_options

    for build in llama_options.KNOWN_BUILDS:
        names = llama_options.option_lookup(llama_options.build_number(build)).by_name
        assert names and all(name.startswith("-") for name in names), build


@given(kinds=st.lists(st.sampled_from(["plain", "unresolved", "splat"]), min_size=1, max_size=4),
       option=st.sampled_from(["-m", "--ctx-size", "-np", "--spec-draft-n-max", "--cache-type-k", "--spec-type"]))
@settings(max_examples=300)
def test_a_llama_cpp_option_value_carries_what_its_word_leaves_unread(kinds: list[str], option: str) -> None:
    """An option's value keeps the names its word could not read, and a word that may stand for
    several words makes the launch open-ended (the one-word case is read directly)."""
    from mtplint.engines import EngineContext, llamacpp
    from mtplint.extract import FileLoader
    from mtplint.source import Issues
    from mtplint.versions import EngineVersion

    source = SourceFile.from_text("x")
    tokens = [Token(option, source.span(0, 1))]
    for number, kind in enumerate(kinds):
        word = f"$V{number}" if kind != "plain" else "8"
        tokens.append(Token(word, source.span(0, 1), ("V",) if kind == "unresolved" else (), splat=kind == "splat"))
    launch = Launch("llama.cpp", "llama-server", source, None, [], tokens, base_dir=Path("."))
    parsed = llamacpp.ENGINE.parse(launch, EngineVersion("llama.cpp", "b10470", True, "config"),
                                   EngineContext(FileLoader(Path(".")), Issues()))
    first = tokens[1]
    stored = next(iter(parsed.options.values()), None)
    if first.splat:
        assert parsed.open_ended
    if first.splat or first.unresolved:
        assert stored is not None
        assert stored.unresolved == (*first.unresolved, *((first.value,) if first.splat else ()))
