"""What the reports may print of text that comes from the files linted.

A flag such as ``--evil\\x1b[2J`` in a script would clear the terminal of whoever reads the
report; a file name that is not UTF-8 (Python holds its bytes as lone surrogates) cannot be
written as UTF-8 at all. ruff prints control characters escaped for the same reason.
"""

from __future__ import annotations

import re

#: control characters: C0 but tab and newline, DEL, C1 (escaped in the text formats)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: lone surrogates: undecodable bytes of a file name, which JSON and SARIF documents cannot hold as
#: UTF-8. Compiled on first use (the ``re`` module's cache), by a report with such a text: a class
#: reaching that far into Unicode costs more to compile than the rest of this module
_SURROGATES = "[\ud800-\udfff]"


def _has_surrogates(text: str) -> bool:
    """Whether ``text`` holds a surrogate: the only code points UTF-8 cannot encode. Asked of every
    text that is not ASCII (a rule's message with an ellipsis or a ``≥``), which needs no expression."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a name that is not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with control characters and undecodable bytes written as ``\\x1b``, ``\\xff``
    (tabs and newlines kept: the report's own layout)."""
    if _CONTROL.search(text) is None and (text.isascii() or not _has_surrogates(text)):
        return text
    # what escaping writes is ASCII: the second substitution sees only the surrogates of the text
    return re.sub(_SURROGATES, _escaped, _CONTROL.sub(_escaped, text))


def encodable(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD, so that it can be written as UTF-8 (JSON and
    SARIF escape control characters themselves)."""
    if text.isascii() or not _has_surrogates(text):
        return text
    return re.sub(_SURROGATES, "\ufffd", text)
