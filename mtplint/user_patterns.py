"""Model patterns from the user's configuration, matched in time linear in the name.

Python's ``re`` backtracks: a configured pattern such as ``^(a+)+$`` takes minutes on a long model
name that almost matches. Patterns a configuration adds (``[[models]] patterns``) are therefore
compiled with RE2 (the ``google-re2`` binding of https://github.com/google/re2), which never
backtracks; it has no lookaround and no backreferences, so a pattern using them is refused when the
configuration is loaded. The built-in catalog's patterns ship with mtplint, are reviewed, and stay
with ``re`` (RE2 is imported only for a configured pattern).
"""

from __future__ import annotations

from functools import cache

import re2  # type: ignore[import-untyped]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    class Searcher(Protocol):
        def search(self, text: str) -> object | None: ...


class PatternError(ValueError):
    """A pattern RE2 cannot compile; the message says why, in RE2's words."""


@cache
def compile_user_pattern(pattern: str) -> Searcher:
    """``pattern`` compiled with RE2, ignoring case (as the built-in patterns are matched)."""
    options = re2.Options()
    options.case_sensitive = False
    options.log_errors = False  # RE2 would print its complaint on standard error as well
    try:
        compiled: Searcher = re2.compile(pattern, options)
    except re2.error as error:
        reason = error.args[0].decode("utf-8", "replace") if error.args and isinstance(error.args[0], bytes) \
            else str(error)
        raise PatternError(reason) from None
    return compiled
