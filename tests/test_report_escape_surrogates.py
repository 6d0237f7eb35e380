"""The reports' escaping of text from the files linted (:mod:`mtplint.report.escape`): lone
surrogates (the undecodable bytes of a file name) are found without an expression, as the class of
every surrogate finds them."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from mtplint.report.escape import _has_surrogates, encodable, printable

#: characters around the edges that matter: ASCII, control characters, C1, the surrogates
#: (surrogateescape's bytes among them), the last code point before and the first after them
TEXT = st.text(st.one_of(st.characters(min_codepoint=0, max_codepoint=0x2FF),
                         st.sampled_from(["\ud7ff", "\ud800", "\udbff", "\udc00", "\udc80", "\udcff", "\udfff",
                                          "\ue000", "…", "≥", "\U0001f600", "\x1b", "\x85"])))


@given(TEXT)
def test_surrogates_are_found_as_their_class_finds_them(text: str) -> None:
    assert _has_surrogates(text) == (re.search("[\ud800-\udfff]", text) is not None)


@given(TEXT)
def test_escaped_text_is_as_the_expressions_escape_it(text: str) -> None:
    control = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")

    def escaped(match: re.Match[str]) -> str:
        code = ord(match.group())
        if 0xDC80 <= code <= 0xDCFF:
            return f"\\x{code - 0xDC00:02x}"
        return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"

    assert printable(text) == re.sub("[\ud800-\udfff]", escaped, control.sub(escaped, text))
    assert encodable(text) == re.sub("[\ud800-\udfff]", "\ufffd", text)


def test_a_file_name_that_is_not_utf8_is_written_escaped() -> None:
    name = b"serve-\xff.sh".decode("utf-8", "surrogateescape")
    assert printable(f"{name}: MTP507 … ≥ 4\n") == "serve-\\xff.sh: MTP507 … ≥ 4\n"
    assert encodable(name) == "serve-\ufffd.sh"
