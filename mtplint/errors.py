"""An exception told in one line, as findings and error messages quote it.

Below every stage: configuration, rule files, engines and the error boundaries
(:mod:`mtplint.boundary`) all describe the exceptions they catch this way.
"""

from __future__ import annotations

#: the longest reason an exception's message gives in a finding (a ValueError about a 5,000-digit
#: number quotes none of it, but other messages may quote the input they choked on)
REASON_CHARS = 200


def reason(error: BaseException) -> str:
    """``ValueError: the first line of its message``, shortened to :data:`REASON_CHARS`."""
    message = str(error).strip().splitlines()[0] if str(error).strip() else ""
    # CPython's advice to the programmer, not to the user of mtplint
    message = message.split("; use sys.set_int_max_str_digits()", 1)[0]
    if len(message) > REASON_CHARS:
        message = message[: REASON_CHARS - 1] + "…"
    return f"{type(error).__name__}: {message}" if message else type(error).__name__
