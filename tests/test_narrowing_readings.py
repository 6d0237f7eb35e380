"""Version narrowing's shortcut: an engine says how a release reads a launch's words
(``flags_reading``); two releases that read them alike must reject the same words, so narrowing
need not parse at the second. Differential tests over many random command lines: what the shortcut
decides is what parsing at every release decides."""

from __future__ import annotations

import bisect
import random
from pathlib import Path

import pytest

from mtplint.engines import EngineContext, Parsed, WordReadings
from mtplint.engines.vllm import ENGINE as VLLM
from mtplint.engines.vllm import VllmEngine, load_table, table_versions
from mtplint.extract import FileLoader
from mtplint.extract.launch import Launch
from mtplint.pipeline import narrow_by_flags
from mtplint.source import Issues, SourceFile, Token
from mtplint.versions import EngineVersion

VLLM_ENTRIES = ("vllm serve", "python -m vllm.entrypoints.openai.api_server")


def _matches(options: list[str], prefix: str) -> int:
    """How many of the sorted ``options`` start with ``prefix`` (0, 1, or 2 for several)."""
    at = bisect.bisect_left(options, prefix)
    return sum(1 for option in options[at:at + 2] if option.startswith(prefix))


def _vllm_vocabulary() -> tuple[list[str], list[str]]:
    """Words a vLLM command line is made of: options every release knows, options only some know
    (added, removed), abbreviations, ``_`` spellings, values, and words argparse treats apart; and
    the words releases read differently: prefixes that stand for no option, one or several by
    release, options whose action or arity changed, dotted keys, ``-O`` levels, ``--model``."""
    tables = [load_table(version) for version in table_versions()]
    every = set.intersection(*(set(table.by_option) for table in tables))
    some = set.union(*(set(table.by_option) for table in tables)) - every
    rng = random.Random(7)
    common = sorted(every - {"--config"})
    varying = sorted(some - {"--config"})
    spelled = [option.replace("-", "_").replace("__", "--", 1) for option in rng.sample(common + varying, 10)]
    abbreviated = [option[: max(3, len(option) - rng.randint(1, 8))] for option in rng.sample(common + varying, 15)]
    prefixes = {option[:cut] for option in varying if option.startswith("--") for cut in range(4, len(option))}
    sorted_options = [sorted(table.by_option) for table in tables]
    shifting = sorted(prefix for prefix in prefixes
                      if len({_matches(options, prefix) for options in sorted_options}) > 1)
    changed = sorted(option for option in every
                     if len({(table.by_option[option].action, table.by_option[option].nargs) for table in tables}) > 1)
    plain = [
        *rng.sample(common, 30), *rng.sample(varying, 40), *spelled, *abbreviated,
        "--max-num-seqs", "--max-num-seqs=8", "--max_num_seqs", "--tensor-parallel-size", "-tp", "-tp2", "-q",
        "-qfp8", "--enforce-eager", "--enforce-eager=true", "--no-enable-prefix-caching", "--served-model-name",
        "--served_model_name", "--kv-cache-dtype", "--gpu-memory-utilization=0.9", "--en", "--enable", "--d", "--",
        "-", "-1", "-x", "--not-a-flag", "--not-a-flag=1", "--with space", "--max-num-seqs=a b",
        "Qwen/Qwen3-8B", "8", "0.9", "2", "3", "true", "false", "on", "auto", "fp8", '{"method": "mtp"}', "32k",
    ]
    tricky = [
        *rng.sample(shifting, 40), *changed, "--speculative-config", "--speculative-config.method",
        "--speculative-config.num_speculative_tokens=2", "--speculative_config.method", "--compilation-config.level=3",
        "-cc.mode", "-O", "-O3", "-O0", "-O.level=2", "-O=1", "--optimization-level", "--model",
        "--model=Qwen/Qwen3-8B", "-0.5", "--x.y", "--x_y.z_w=1",
    ]
    return plain, tricky


def _random_launch(rng: random.Random, vocabulary: tuple[list[str], list[str]], entry: str,
                   engine: str = "vllm") -> Launch:
    plain, tricky = vocabulary
    # short lines mostly: two releases then often read every word alike
    # half of them of tricky words and a few values alone
    pool = [*tricky, "8", "true", "x", "auto"] if rng.random() < 0.5 else plain + tricky
    words = [rng.choice(pool) for _ in range(rng.choice((0, 1, 2, 2, 3, 3, 4, 5, 8, 12)))]
    if words and rng.random() < 0.5:
        words.insert(0, "Qwen/Qwen3-8B")
    text = " ".join(words)
    source = SourceFile.from_text(text)
    tokens: list[Token] = []
    offset = 0
    for word in words:
        span = source.span(offset, offset + len(word))
        roll = rng.random()
        if roll < 0.04:
            tokens.append(Token("$EXTRA", span, ("EXTRA",), splat=True))
        elif roll < 0.08:
            tokens.append(Token(word, span, ("VALUE",)))  # a word mtplint cannot see
        else:
            tokens.append(Token(word, span))
        offset += len(word) + 1
    return Launch(engine, entry, source, None, [], tokens, base_dir=Path("."))


def _context() -> EngineContext:
    return EngineContext(FileLoader(Path(".")), Issues())


def _unknown(parsed: Parsed) -> set[int]:
    return {error.span.start if error.span else -1 for error in parsed.errors if error.kind == "unknown"}


#: lines where one part of a reading decides (an option's arity, its action, an ambiguous prefix,
#: the preprocessing by release), at the entry without a positional argument and at ``serve``
HAND_WRITTEN = (
    "--api-key x y", "--ignore-patterns a b", "--collect-detailed-traces a b", "--enable-chunked-prefill x",
    "--enable-chunked-prefill true", "--enforce-eager x", "--trust-remote-code true", "--en x", "--enable-l 1",
    "--model m x", "x --model m", "--model=m x", "-O3 x", "-O 3 x", "-O.level=3", "-O=3", "-O0 --enforce-eager",
    "--speculative-config.method mtp x", "--speculative_config.method mtp", "--x.y 1", "-0.5 x",
    "--max_num_seqs 8 x", "--max-num-seqs=8 x", "-tp 2 x", "-tp=2", "-qfp8", "-- --max-num-seqs 8",
)


def _written_launch(line: str, entry: str, engine: str = "vllm") -> Launch:
    source = SourceFile.from_text(line)
    tokens = []
    offset = 0
    for word in line.split(" "):
        tokens.append(Token(word, source.span(offset, offset + len(word))))
        offset += len(word) + 1
    return Launch(engine, entry, source, None, [], tokens, base_dir=Path("."))


def _random_vllm_launches(count: int) -> list[Launch]:
    vocabulary = _vllm_vocabulary()
    rng = random.Random(2026)
    written = [_written_launch(line, entry) for line in HAND_WRITTEN for entry in VLLM_ENTRIES]
    return written + [_random_launch(rng, vocabulary, rng.choice(VLLM_ENTRIES)) for _ in range(count)]


def test_vllm_releases_that_read_a_command_line_alike_reject_the_same_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """And how a table reads a word is remembered per table without changing a reading."""
    from mtplint.engines import vllm

    versions = table_versions()
    launches = _random_vllm_launches(1500)
    remembered = [{version: VLLM.flags_reading(launch, version) for version in versions} for launch in launches]
    monkeypatch.setattr(vllm, "_WORD_READINGS", WordReadings(kept=0))
    assert remembered == [{version: VLLM.flags_reading(launch, version) for version in versions}
                          for launch in launches]
    shared = 0
    for launch, readings in zip(launches, remembered, strict=True):
        unknown: dict[str, set[int]] = {}
        for version in versions:
            unknown[version] = _unknown(VLLM.parse(launch, EngineVersion("vllm", version, False, "assumed"),
                                                   _context()))
        for first in versions:
            for second in versions:
                if first < second and readings[first] is not None and readings[first] == readings[second]:
                    shared += 1
                    words = [token.value for token in launch.args]
                    assert unknown[first] == unknown[second], (launch.entry, words, first, second)
    assert shared > 5000  # the shortcut is taken often: the test is not vacuous


def test_vllm_narrowing_finds_what_parsing_at_every_release_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    versions = table_versions()
    launches = _random_vllm_launches(600)
    rng = random.Random(11)
    bounds = [rng.choice([None, *versions[:-1]]) for _ in launches]

    def narrowed() -> list[tuple[str, str | None, str]]:
        found = []
        for launch, low in zip(launches, bounds, strict=True):
            version = EngineVersion("vllm", versions[-1], False, "pin-range" if low else "assumed", low)
            result = narrow_by_flags(VLLM, launch, version, _context())
            found.append((result.version, result.low, result.source))
        return found

    quick = narrowed()
    monkeypatch.setattr(VllmEngine, "flags_reading", lambda self, launch, version: None)
    assert quick == narrowed()
    assert sum(1 for _, low, source in quick if source == "flags" and low) > 10


def _sglang_vocabulary() -> list[str]:
    from mtplint.engines.sglang import load_table as sglang_table
    from mtplint.engines.sglang import table_versions as sglang_versions

    tables = [sglang_table(version) for version in sglang_versions()]
    every = set.intersection(*(set(table.index) for table in tables))
    some = set.union(*(set(table.index) for table in tables)) - every
    rng = random.Random(5)
    options = rng.sample(sorted(every - {"--config"}), 30) + rng.sample(sorted(some - {"--config"}), 40)
    abbreviated = [option[: max(3, len(option) - rng.randint(1, 8))] for option in options[:30]]
    return [*options, *abbreviated, "--model-path", "--tp", "--tp-size=2", "--mem-fraction", "--enable-d", "--",
            "--disable-cuda-graph", "--speculative-algorithm", "NEXTN", "-1", "-x", "--not-a-flag", "8", "true",
            "0.8", "Qwen/Qwen3-8B", "--context-length=4096", "--cuda-graph-bs"]


def test_sglang_releases_that_read_a_command_line_alike_reject_the_same_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """As for vLLM; and how a table reads a word is remembered per table without changing a reading."""
    from mtplint.engines import sglang

    versions = sglang.table_versions()
    vocabulary = _sglang_vocabulary()
    rng = random.Random(3)
    entry = "python3 -m sglang.launch_server"
    # a choice only newer releases have, as a glued value (refused: the option takes the next word
    # too) and as the next word, and an option with a glued value the switch does not take
    written = ["--attention-backend=dsa x", "--attention-backend=dsa --tp 2", "--attention-backend dsa x",
               "--attention-backend=triton x", "--kv-cache-dtype=fp8_e4m3 x", "--quantization=fp8 x",
               "--enable-hicache=1 x", "--tp=2 x", "--tp=x y", "--cuda-graph-bs 8 x", "--cuda-graph-bs=8 x"]
    launches = [_written_launch(line, entry, "sglang") for line in written]
    launches += [_random_launch(rng, (vocabulary, vocabulary), entry, "sglang") for _ in range(300)]
    remembered = [[sglang.ENGINE.flags_reading(launch, version) for version in versions] for launch in launches]
    monkeypatch.setattr(sglang, "_WORD_READINGS", WordReadings(kept=0))
    assert remembered == [[sglang.ENGINE.flags_reading(launch, version) for version in versions]
                          for launch in launches]
    shared = 0
    for launch, readings in zip(launches, remembered, strict=True):
        unknown = [_unknown(sglang.ENGINE.parse(launch, EngineVersion("sglang", version, False, "assumed"), _context()))
                   for version in versions]
        for first in range(len(versions)):
            for second in range(first + 1, len(versions)):
                if readings[first] is not None and readings[first] == readings[second]:
                    shared += 1
                    assert unknown[first] == unknown[second], ([token.value for token in launch.args],
                                                               versions[first], versions[second])
    assert shared > 1000


def _moved(launch: Launch) -> Launch:
    """The launch's words written further into another file (other spans, the same words)."""
    text = "    " + launch.source.text
    source = SourceFile("elsewhere.sh", "elsewhere.sh", text)
    tokens = [Token(token.value, source.span(token.span.start + 4, token.span.end + 4) if token.span else None,
                    token.unresolved, splat=token.splat) for token in launch.args]
    return Launch(launch.engine, launch.entry, source, None, [], tokens, base_dir=Path("."))


def test_launches_with_the_same_reading_key_read_alike_at_every_release() -> None:
    """What narrowing remembers of a launch (:meth:`reading_key`) decides its readings: the same
    words elsewhere read as they do here, at every release; a launch whose reading depends on more
    (preprocessing by release, words mtplint cannot read) has no key."""
    from mtplint.engines.sglang import ENGINE as SGLANG
    from mtplint.engines.sglang import table_versions as sglang_versions

    rng = random.Random(5)
    sglang_words = _sglang_vocabulary()
    cases = [(VLLM, table_versions(), launch) for launch in _random_vllm_launches(400)]
    cases += [(SGLANG, sglang_versions(), _random_launch(rng, (sglang_words, sglang_words),
                                                         "python3 -m sglang.launch_server", "sglang"))
              for _ in range(300)]
    # launches with one key (the random ones often differ in their values alone), and each moved
    readings: dict[tuple[str, object], list[object]] = {}
    for engine, versions, launch in cases:
        key = engine.reading_key(launch)
        moved = _moved(launch)
        assert key == engine.reading_key(moved)
        if key is None:
            continue
        for copy in (launch, moved):
            reading = [engine.flags_reading(copy, version) for version in versions]
            assert readings.setdefault((engine.name, key), reading) == reading, (copy, key)
    assert len(readings) > 300


def test_a_launch_whose_words_an_earlier_one_had_is_not_read_release_by_release_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Narrowing an unpinned launch reads its words at every older release; the same words in
    another file, at the same possible versions, are known to read alike at each (counted)."""
    launch = _written_launch("Qwen/Qwen3-8B --max-num-seqs 8 --enforce-eager --gpu-memory-utilization 0.9",
                             "vllm serve")
    reads: list[str] = []
    real_reading = VllmEngine.flags_reading

    def counted(self: VllmEngine, launch: Launch, version: str) -> object | None:
        reads.append(version)
        return real_reading(self, launch, version)

    monkeypatch.setattr(VllmEngine, "flags_reading", counted)
    version = EngineVersion("vllm", table_versions()[-1], False, "assumed", "0.10.0")
    assert narrow_by_flags(VLLM, launch, version, _context()) is version
    assert len(reads) > 3
    reads.clear()
    assert narrow_by_flags(VLLM, _moved(launch), version, _context()) is version
    assert reads == [version.version]  # the newest release's reading, which tells the shortcut applies
