"""Compose interpolation on positioned text (mtplint.extract.interpolate)."""

from __future__ import annotations

import pytest

from mtplint.extract.interpolate import InterpolationError, interpolate
from mtplint.source import SourceFile, Token

VARIABLES = {"SET": Token("s"), "EMPTY": Token(""), "MODEL": Token("Qwen/Qwen3.6-27B"),
             "HOST_ONLY": Token("${HOST_MODEL}", None, ("HOST_MODEL",))}


def run(text: str) -> tuple[str, tuple[str, ...]]:
    result = interpolate(SourceFile.from_text(text, "compose.yaml").whole(), VARIABLES)
    return result.text.text, result.unresolved


@pytest.mark.parametrize(("text", "expected"), [
    ("${SET}", "s"),
    ("$SET", "s"),
    ("$SET/x", "s/x"),
    ("${SET}x", "sx"),
    ("${U:-d}", "d"),
    ("${EMPTY:-d}", "d"),
    ("${EMPTY-d}", ""),
    ("${U-d}", "d"),
    ("${SET:-d}", "s"),
    ("${SET:+alt}", "alt"),
    ("${EMPTY:+alt}", ""),
    ("${EMPTY+alt}", "alt"),
    ("${U+alt}", ""),
    ("${SET:?need it}", "s"),
    ("${EMPTY?need it}", ""),
    ("$$SET", "$SET"),
    ("$$$SET", "$s"),
    ("$${SET}", "${SET}"),
    ("$1 $@ a$", "$1 $@ a$"),
    ("${U:-${SET}}", "s"),
    ("${U:-${V:-x}}", "x"),
    ("${SET:-${V:-x}}", "s"),
    ("${U:-a}b}", "ab}"),
    ("${U:-{x}}", "{x}"),
    ("${U:-a:b}", "a:b"),
    ("${U:-'q'}", "'q'"),
    ("${U:-$SET}", "s"),
    ("${U:-}", ""),
])
def test_interpolation_matches_compose(text: str, expected: str) -> None:
    assert run(text) == (expected, ())


@pytest.mark.parametrize(("text", "names"), [
    ("${U}", ("U",)),
    ("$U", ("U",)),
    ("${set}", ("set",)),  # names are case-sensitive
    ("$SETx", ("SETx",)),
    ("${U:?need it}", ("U",)),
    ("${EMPTY:?need it}", ("EMPTY",)),
    ("${SET:+${V}}", ("V",)),
    ("${U:-${V}}", ("V",)),
    ("${HOST_ONLY}", ("HOST_MODEL",)),
    ("${HOST_ONLY:-x}", ("HOST_MODEL",)),
])
def test_unknown_values_are_holes_not_empty_strings(text: str, names: tuple[str, ...]) -> None:
    value, unresolved = run(text)
    assert unresolved == names
    assert value  # the expression stays visible instead of compose's ""


@pytest.mark.parametrize("text", ["${1}", "${A:x}", "${", "${A B}", "${A:-x", "a ${} b"])
def test_invalid_expressions_raise_with_the_offset(text: str) -> None:
    source = SourceFile.from_text("xx " + text, "compose.yaml")
    with pytest.raises(InterpolationError) as raised:
        interpolate(source.whole(), VARIABLES)
    assert raised.value.offset == 3 + text.index("$")


def test_positions_survive_interpolation() -> None:
    text = "serve ${MODEL} --n ${N:-3} --x $$HOME ${MISSING}"
    source = SourceFile.from_text(text, "compose.yaml")
    result = interpolate(source.whole(), VARIABLES)
    assert result.text.text == "serve Qwen/Qwen3.6-27B --n 3 --x $HOME ${MISSING}"
    out = result.text.text
    # an expansion maps to its `$`; a default maps to itself; an escaped `$` to the first `$`
    model = out.index("Qwen")
    assert result.text.offsets[model] == text.index("${MODEL}")
    assert result.text.offsets[out.index(" 3 ") + 1] == text.index("3}")
    assert result.text.offsets[out.index("$HOME")] == text.index("$$HOME")
    assert result.text.offsets[out.index("HOME")] == text.index("HOME")
    [hole] = result.holes
    assert hole.names == ("MISSING",)
    assert (hole.start, hole.end) == (text.index("${MISSING}"), len(text))
    missing = result.text.slice(out.index("${MISSING}"))
    span = missing.span()
    assert span is not None and hole.overlaps(span) and span.column == text.index("${MISSING}") + 1


@pytest.mark.parametrize("text", ["", "plain", "a b\tc\n", "{x}", "100%", "$", "a $ b", "$$", "${A}", "x $B y",
                                  "${U:-d}", "${A:+alt}", "$1 $@"])
def test_a_text_is_interpolated_as_the_general_interpolator_does(text: str) -> None:
    """A text without ``$`` is returned as it is without starting the interpolator: the same text,
    offsets and holes as the interpolator gives."""
    from mtplint.extract.interpolate import _Interpolator

    source = SourceFile.from_text(text)
    variables = {"A": Token("a"), "B": Token("b", None, ("B",))}
    quick, general = interpolate(source.whole(), variables), _Interpolator(variables).run(source.whole())
    assert (quick.text, quick.holes) == (general.text, general.holes)
