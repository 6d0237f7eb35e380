"""The faster paths of the rules stage give what the plain ones gave.

Each test compares a shortcut with the straightforward reading it replaces (a case-insensitive
regex, a walk over every scalar of a file, an uncached difflib search, a file split line by line)
over many generated inputs.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from types import SimpleNamespace

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplint.checks import RuleContext
from mtplint.checks.catalog import Rule, VersionRange
from mtplint.checks.mtp5xx import closest
from mtplint.checks.selection import _Selectors, specificity
from mtplint.checks.suppress import may_hold_noqa
from mtplint.edits.argv import _scalars_around, _yaml_scalars
from mtplint.edits.jsonvalue import _shell_word, _yaml_single
from mtplint.source import SourceFile, Span
from mtplint.versions import EngineVersion

# letters whose case changes oddly (the Kelvin sign, the long s, dotted capital I, ...)
# next to the word itself in every case
_NOQA_ALPHABET = st.sampled_from([*"nNoOqQaA #:-\n", "\u212a", "\u017f", "\u0130", "\u0149", "\u00f1", "\u1e9e"])


@given(st.lists(st.one_of(_NOQA_ALPHABET, st.characters()), max_size=40).map("".join))
@settings(max_examples=400, deadline=None)
def test_may_hold_noqa_is_a_case_insensitive_search(text: str) -> None:
    assert may_hold_noqa(text) == (re.search("noqa", text, re.IGNORECASE) is not None)


_WORD_PART = st.one_of(
    st.text(alphabet=st.sampled_from(list("ab{}\":,-= \t$\\")), max_size=8).map(lambda body: f"'{body}'"),
    st.text(alphabet=st.sampled_from(list("ab{}':,-= ")), max_size=8).map(lambda body: f'"{body}"'),
    st.text(alphabet=st.sampled_from(list("ab{}:,-=")), min_size=1, max_size=6),
    st.sampled_from(["\\'", '\\"', "\\ ", "\\a"]),
)


@given(st.lists(_WORD_PART, min_size=1, max_size=6).map("".join), st.integers(min_value=0, max_value=50))
@settings(max_examples=400, deadline=None)
def test_shell_word_maps_every_character_to_where_it_is_written(raw: str, base: int) -> None:
    decoded = _shell_word(raw, base)
    assert decoded is not None
    assert [decoded.text] == shlex.split(raw)
    count = len(decoded.text)
    assert len(decoded.offsets) == len(decoded.modes) == len(decoded.starts) == count
    for index in range(count):
        offset, start = decoded.offsets[index], decoded.starts[index]
        assert raw[offset - base] == decoded.text[index]
        quote_state = _open_quote(raw, offset - base)
        assert decoded.modes[index] == {"'": "sq", '"': "dq", "": "bare"}[quote_state]
        # a character is spelled from itself, or from the backslash escaping it
        assert start == offset or (start == offset - 1 and raw[start - base] == "\\")


def _open_quote(raw: str, index: int) -> str:
    quote = ""
    position = 0
    while position < index:
        char = raw[position]
        if quote == "'":
            quote = "" if char == "'" else quote
        elif char == "\\":
            position += 1
        elif quote == '"':
            quote = "" if char == '"' else quote
        elif char in "'\"":
            quote = char
        position += 1
    return quote


def _shell_word_one_character_at_a_time(raw: str, base: int) -> tuple[str, list[int], list[str], list[int]] | None:
    """The reading :func:`_shell_word` gives, decoded a character at a time (as it once was)."""
    chars: list[str] = []
    offsets: list[int] = []
    modes: list[str] = []
    starts: list[int] = []
    index = 0
    while index < len(raw):
        char = raw[index]
        if char == "'":
            close = raw.find("'", index + 1)
            if close < 0:
                return None
            spelled = [(position, position, "sq") for position in range(index + 1, close)]
            index = close + 1
        elif char == '"':
            spelled = []
            index += 1
            while index < len(raw) and raw[index] != '"':
                spelled_from = index
                if raw[index] == "\\" and index + 1 < len(raw) and raw[index + 1] in '\\"$`':
                    index += 1
                elif raw[index] in "$`":
                    return None
                spelled.append((index, spelled_from, "dq"))
                index += 1
            if index >= len(raw):
                return None
            index += 1
        elif char == "\\" and index + 1 < len(raw):
            spelled = [(index + 1, index, "bare")]
            index += 2
        elif char in " \t\n$`":
            return None
        else:
            spelled = [(index, index, "bare")]
            index += 1
        for position, spelled_from, mode in spelled:
            chars.append(raw[position])
            offsets.append(base + position)
            modes.append(mode)
            starts.append(base + spelled_from)
    return "".join(chars), offsets, modes, starts


@given(st.text(alphabet=st.sampled_from(list("ab{}:,=-'\"\\$` \t\nq")), max_size=24), st.integers(min_value=0, max_value=9))
@settings(max_examples=1500, deadline=None)
def test_shell_word_reads_runs_as_it_read_characters(raw: str, base: int) -> None:
    decoded = _shell_word(raw, base)
    expected = _shell_word_one_character_at_a_time(raw, base)
    if expected is None:
        assert decoded is None
    else:
        assert decoded is not None
        assert (decoded.text, decoded.offsets, decoded.modes, decoded.starts) == expected


@given(st.text(alphabet=st.sampled_from(list("ab'\" {}")), max_size=16), st.integers(min_value=0, max_value=9))
@settings(max_examples=800, deadline=None)
def test_yaml_single_quoted_scalar_maps_each_character(body: str, base: int) -> None:
    raw = f"'{body}'"
    decoded = _yaml_single(raw, base)
    try:
        loaded = yaml.safe_load(f"k: {raw}")["k"]
    except yaml.YAMLError:
        loaded = None
    if decoded is None:
        assert "'" in body.replace("''", "")  # a lone quote ends the scalar early
        return
    assert decoded.text == loaded
    for index, char in enumerate(decoded.text):
        offset, start = decoded.offsets[index], decoded.starts[index]
        assert raw[offset - base] == char
        assert start == offset or (char == "'" and start == offset - 1 and raw[start - base] == "'")
    assert decoded.modes == ["ysq"] * len(decoded.text)


_SCALAR = st.one_of(st.sampled_from(["--model", "--max-num-seqs", "8", "mtp", "a b", "x: y", "", "- z", "'q'"]),
                    st.text(alphabet=st.sampled_from(list("abc -:\"'")), max_size=6))
_TREE = st.recursive(_SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(_SCALAR, inner, max_size=4)), max_leaves=14)


@given(_TREE, st.booleans(), st.data())
@settings(max_examples=300, deadline=None)
def test_scalars_around_a_span_are_those_of_the_whole_walk(tree: object, flow: bool, data: st.DataObject) -> None:
    text = yaml.safe_dump({"services": {"vllm": {"command": tree}}}, default_flow_style=flow, allow_unicode=True)
    source = SourceFile.from_text(text, "compose.yaml")
    every = _yaml_scalars(source)
    assert every
    for _ in range(6):
        start = data.draw(st.integers(min_value=0, max_value=len(text) - 1))
        end = data.draw(st.integers(min_value=start + 1, max_value=len(text)))
        span = Span("compose.yaml", start, end, 1, 1, 1, 1)
        holding = [(node, parent) for node, parent in every if node.start <= start and end <= node.end]
        assert _scalars_around(source, span) == holding


def test_closest_gives_the_same_names_however_the_candidates_come() -> None:
    flags = ["--max-num-seqs", "--max-model-len", "--enable-prefix-caching", "--no-enable-prefix-caching",
             "--enable_chunked_prefill", "--enable-chunked-prefill", "--kv-cache-dtype"]
    first = closest("--no-enable-chunked-prefill", flags)
    again = closest("--no-enable-chunked-prefill", list(reversed(flags)) + flags)
    assert first == again == ["--enable-chunked-prefill", "--enable-prefix-caching", "--no-enable-prefix-caching"][:len(first)]
    first.append("changed by the caller")
    assert closest("--no-enable-chunked-prefill", flags) == again
    assert closest("--enable_chunked_prefill", flags) == ["--enable-chunked-prefill"]
    assert closest("zzz", flags) == []


def test_report_lines_come_from_the_text_the_run_read_and_the_disk(tmp_path: Path) -> None:
    from mtplint.checks import Finding
    from mtplint.checks.catalog import load_catalog
    from mtplint.pipeline import Options, run
    from mtplint.report.findings import full

    script = tmp_path / "serve.sh"
    script.write_text("#!/bin/sh\n# a\x0cb\nexec vllm serve m \\\n\t--max-num-seqs 8\n", encoding="utf-8")
    other = tmp_path / "other.env"
    other.write_bytes("\ufeffSEQS=8\r\nKV=fp8\r\n".encode())
    result = run([script], Options(root=tmp_path))
    assert result.launches
    rule = load_catalog()["MTP101"]
    source = result.launches[0].launch.source
    text = source.text
    at = text.index("--max-num-seqs")
    findings = [Finding(rule, "in the launch's file", source.span(at, at + 14)),
                Finding(rule, "in a file read from disk", Span(str(other), 9, 11, 2, 1, 2, 3))]
    lines = text.splitlines()  # a form feed ends a line for the report, as for str.splitlines
    assert lines[2] == "b"
    rendered = full(findings, result)
    shown = rendered.split("\n")
    assert f"4 | {lines[3]}" in shown
    assert f"5 | {lines[4].expandtabs(1)}" in shown
    assert "1 | \ufeffSEQS=8" in shown  # the disk's bytes, the byte-order mark included
    assert "2 | KV=fp8" in shown


_RULES = [Rule(code=code, name=name, severity="warning", engines=("any",), fix="none", summary="s", docs={})
          for code, name in (("MTP001", "unparsable-file"), ("MTP102", "prefix-caching-with-mtp"),
                             ("ACME001", "mtp-above-64-sequences"), ("MTP1", "all"), ("SS001", "ss"))]
_SELECTOR = st.one_of(
    st.sampled_from(["ALL", "all", " All ", "", " ", "MTP", "mtp1", "MTP10", "MTP102", "mtp102 ", "prefix-caching-with-mtp",
                     "Prefix-caching-with-mtp", "ACME", "acme001", "MTP-1", "1MTP", "ß", "ßS", "\u0130", "ss"]),
    st.text(alphabet=st.sampled_from(list("MTPACEmtp0129 -ßs")), max_size=7),
)


@given(st.lists(_SELECTOR, max_size=6))
@settings(max_examples=400, deadline=None)
def test_a_layers_selectors_rank_a_rule_as_the_best_single_selector(selectors: list[str]) -> None:
    read = _Selectors(selectors)
    for rule in _RULES:
        assert read.best(rule) == max((specificity(rule, selector) for selector in selectors), default=-1)


_VERSIONS = st.sampled_from([None, "0.8.5", "0.11.0", "0.28.0", "0.30.0", "0.30.1", "0.33.0", "1.0", "b8955", "b9180"])


@given(st.sampled_from(["0.8.5", "0.28.0", "0.30.0", "0.33.0", "b9000"]), st.booleans(), _VERSIONS, _VERSIONS,
       st.lists(st.tuples(_VERSIONS, _VERSIONS), min_size=1, max_size=3))
@settings(max_examples=400, deadline=None)
def test_whether_a_version_is_affected_is_read_from_each_range(version: str, known: bool, low: str | None,
                                                                high: str | None,
                                                                bounds: list[tuple[str | None, str | None]]) -> None:
    in_play = EngineVersion("vllm", version, known, "test", low, high)
    ranges = [VersionRange(start, below) for start, below in bounds]
    rule = Rule(code="MTP999", name="ranged", severity="warning", engines=("vllm",), fix="none", summary="s", docs={},
                affected={"vllm": tuple(ranges)})
    report = SimpleNamespace(version=in_play, launch=SimpleNamespace(engine="vllm"))
    answers = [in_play.in_range(r.start, r.below) for r in ranges]
    expected = True if True in answers else False if all(a is False for a in answers) else None
    assert RuleContext(rule, report).affected() is expected  # type: ignore[arg-type]


def test_the_rules_of_a_launch_run_together_find_what_each_finds_alone() -> None:
    from mtplint.checks import UNDECIDED, run_rule, run_rules
    from mtplint.checks.catalog import load_catalog
    from mtplint.lint import META_RULES
    from mtplint.pipeline import Options, run

    data = Path(__file__).parent / "data"
    result = run([data / "compose", data / "headline", data / "python", data / "k8s"], Options(root=data))
    # MTP004 reports what the other rules of the same call left undecided: it has no finding of its own alone
    rules = [rule for rule in load_catalog().values() if rule.code not in (*META_RULES, UNDECIDED)]
    assert len(result.launches) > 20
    found = 0
    for report in result.launches:
        together = run_rules(rules, report)
        assert together == [finding for rule in rules for finding in run_rule(rule, report)]
        found += len(together)
    assert found > 20
