"""The faster paths of the rules stage give what the plain ones gave.

Each test compares a shortcut with the straightforward reading it replaces (a case-insensitive
regex, a walk over every scalar of a file, an uncached difflib search, a file split line by line)
over many generated inputs.
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from mtplint.checks.mtp5xx import closest
from mtplint.checks.suppress import may_hold_noqa
from mtplint.source import Span

# letters whose case changes oddly (the Kelvin sign, the long s, dotted capital I, ...)
# next to the word itself in every case
_NOQA_ALPHABET = st.sampled_from([*"nNoOqQaA #:-\n", "\u212a", "\u017f", "\u0130", "\u0149", "\u00f1", "\u1e9e"])


@given(st.lists(st.one_of(_NOQA_ALPHABET, st.characters()), max_size=40).map("".join))
@settings(max_examples=400, deadline=None)
def test_may_hold_noqa_is_a_case_insensitive_search(text: str) -> None:
    assert may_hold_noqa(text) == (re.search("noqa", text, re.IGNORECASE) is not None)


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
