"""How much text variable expansion may produce in one file before mtplint stops expanding.

A few bytes can ask for gigabytes: ``.env`` lines ``B=${A}${A}…`` ten times each, nine levels deep,
make a 357-byte file expand to a billion characters (the shell and compose would try, too; compose-go
and restricted shells bound it). mtplint is static and needs none of that text to judge a launch, so
expansion is bounded in two ways:

* size: the characters that expansions in one file produce, together, at most
  :data:`EXPANSION_CHARS`; an expansion that would go past it is left unexpanded and its value is
  unresolved, named by :func:`over_budget` so that MTP003 can say why;
* depth: defaults nested in defaults (``${A:-${B:-…}}``) at most :data:`EXPANSION_DEPTH` levels.

Real launch settings are far smaller: a ``--speculative-config`` JSON or a model path is tens to
hundreds of characters, and a whole script's expansions rarely reach a few kilobytes.
"""

from __future__ import annotations

#: characters all expansions of one file may produce together (4 MiB: a script of 10k launches
#: that each expand a 100-character variable uses a quarter of it)
EXPANSION_CHARS = 4 << 20
#: expansions nested inside the default of another (``${A:-${B:-x}}`` is two)
EXPANSION_DEPTH = 50

#: how an over-budget value is named among a token's unresolved names (MTP003 recognises it)
OVER_BUDGET_MARK = "beyond mtplint's expansion budget"


def over_budget(written: str) -> str:
    """The unresolved name for an expression (``${I}``) whose expansion was not done (a long one
    cut short: it is shown in a message)."""
    shown = written if len(written) <= 60 else f"{written[:57]}…"
    return f"{shown} ({OVER_BUDGET_MARK})"


def is_over_budget(name: str) -> bool:
    return name.endswith(f"({OVER_BUDGET_MARK})")


class ExpansionBudget:
    """What is left of one file's expansion budget; expanders :meth:`take` from it before producing text."""

    __slots__ = ("left",)

    def __init__(self, chars: int = EXPANSION_CHARS) -> None:
        self.left = chars

    def take(self, size: int) -> bool:
        """Whether ``size`` more characters may be produced (and if so, count them)."""
        if size > self.left:
            return False
        self.left -= size
        return True
