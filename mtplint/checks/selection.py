"""Which rules run: ``select`` / ``extend-select`` / ``ignore`` by code, prefix or name (as ruff).

A selector is ``ALL``, a code (``MTP102``), a prefix (``MTP1``, ``MTP``) or a rule name
(``prefix-caching-with-mtp``). Within one layer (the configuration file, then the command line) the
most specific selector wins and a tie goes to ``ignore``; a layer that has ``select`` starts over
from its own selection, a layer without it adds (``extend-select``) or removes (``ignore``) rules —
so ``mtplint check --select MTP102`` runs MTP102 even when the configuration ignores it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from mtplint.checks.catalog import CatalogError, Rule
from mtplint.records import Record

#: a name or a full code names one rule: more specific than any prefix
_EXACT = 100


def specificity(rule: Rule, selector: str) -> int:
    """How specifically ``selector`` names ``rule``: -1 not at all, 0 ALL, a prefix's length, or exact."""
    selector = selector.strip()
    if not selector:
        return -1
    if selector.upper() == "ALL":
        return 0
    if selector == rule.name or selector.upper() == rule.code:
        return _EXACT
    if rule.code.startswith(selector.upper()) and selector[0].isalpha() and "-" not in selector:
        return len(selector)
    return -1


def matches(rule: Rule, selector: str) -> bool:
    return specificity(rule, selector) >= 0


def check_selectors(selectors: Iterable[str], catalog: dict[str, Rule], where: str) -> None:
    for selector in selectors:
        if not any(matches(rule, selector) for rule in catalog.values()):
            raise CatalogError(f"{where}: unknown rule selector {selector!r} (a code, a prefix like MTP1, a rule name, or ALL)")


class Layer(Record):
    """One source of selectors: the configuration file, or the command line."""

    __slots__ = ("select", "extend_select", "ignore")
    select: Sequence[str] | None
    extend_select: Sequence[str]
    ignore: Sequence[str]

    def __init__(self, select: Sequence[str] | None = None, extend_select: Sequence[str] = (),
                 ignore: Sequence[str] = ()) -> None:
        self.select = select
        self.extend_select = extend_select
        self.ignore = ignore


def _best(rule: Rule, selectors: Iterable[str]) -> int:
    return max((specificity(rule, s) for s in selectors), default=-1)


def resolve(catalog: dict[str, Rule], layers: Sequence[Layer]) -> list[Rule]:
    """The rules to run after applying every layer in order (default: every rule, house rules too)."""
    chosen = set(catalog)
    for layer in layers:
        for rule in catalog.values():
            ignored = _best(rule, layer.ignore)
            if layer.select is not None:
                selected = _best(rule, [*layer.select, *layer.extend_select])
                keep = selected >= 0 and selected > ignored
            else:
                extended = _best(rule, layer.extend_select)
                if extended >= 0 and extended > ignored:
                    keep = True
                elif ignored >= 0:
                    keep = False
                else:
                    keep = rule.code in chosen
            if keep:
                chosen.add(rule.code)
            else:
                chosen.discard(rule.code)
    return [catalog[code] for code in sorted(chosen)]


def selected_rules(
    catalog: dict[str, Rule],
    select: Sequence[str] | None,
    extend_select: Sequence[str] = (),
    ignore: Sequence[str] = (),
) -> list[Rule]:
    """One layer: ``--select MTP1 --ignore MTP102`` runs MTP1xx but MTP102."""
    return resolve(catalog, [Layer(select, extend_select, ignore)])
