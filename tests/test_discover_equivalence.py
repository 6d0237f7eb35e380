"""Discovery's faster paths answer as the plain ones they replace: the prefilter's searches as one
expression over its words."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from mtplint.discover import mentions_engine

#: the prefilter's words as one expression (what the searches of :func:`mentions_engine` replace)
PREFILTER_WORDS = re.compile(
    rb"vllm|s(?:glang|peculative|pec[-_]type)|llama(?:-server|\.cpp|_cpp)|m(?:lx[-_]lm|odels-preset|(?<![a-z]m)tp)"
    rb"|NEXTN|LLAMA_ARG|draft-m|--draft|\.gguf|hf-repo"
)

WORDS = [b"vllm", b"sglang", b"speculative", b"spec-type", b"spec_type", b"llama-server", b"llama.cpp", b"llama_cpp",
         b"mlx-lm", b"mlx_lm", b"models-preset", b"mtp", b"NEXTN", b"LLAMA_ARG", b"draft-m", b"--draft", b".gguf",
         b"hf-repo"]


def _near_misses(word: bytes) -> set[bytes]:
    """The word cut at either end, with one byte left out, doubled or changed."""
    out = {word[i:] for i in range(len(word))} | {word[:i] for i in range(len(word))}
    for i in range(len(word)):
        out.add(word[:i] + word[i + 1:])
        out.add(word[:i] + word[i:i + 1] * 2 + word[i + 1:])
        for other in b"aemptvxA-_. ":
            out.add(word[:i] + bytes([other]) + word[i + 1:])
    return out


#: the words, their near misses, and the bytes around them that the searches look at
FRAGMENTS = sorted({fragment for word in WORDS for fragment in _near_misses(word) | {word}}
                   | {bytes([c]) for c in b"abcmstpvgfxyzMNLGX019-_.:/ \n\x00\xff"})


def _relevant_by_words(data: bytes) -> bool:
    return PREFILTER_WORDS.search(data) is not None


def test_each_word_and_its_near_misses_in_every_surrounding() -> None:
    around = [b"", b"a", b"z", b"m", b"s", b"S", b"2", b"-", b"_", b".", b" ", b"\n", b"\xff"]
    for fragment in FRAGMENTS:
        for before in around:
            for after in around:
                data = before + fragment + after
                assert mentions_engine(data) is _relevant_by_words(data), data


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.binary(max_size=6)), max_size=12))
def test_the_searches_answer_as_one_expression_over_the_words(parts: list[bytes]) -> None:
    data = b"".join(parts)
    assert mentions_engine(data) is _relevant_by_words(data)
