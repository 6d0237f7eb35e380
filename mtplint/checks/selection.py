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


class _Selectors:
    """A layer's selectors read once, so how specifically they name a rule (the best
    :func:`specificity` among them) takes a few set lookups, not a comparison with each selector
    (a configuration's ``select`` lists every rule: 40 selectors for each of 40 rules)."""

    __slots__ = ("codes", "everything", "names", "prefixes")

    def __init__(self, selectors: Iterable[str]) -> None:
        self.everything = False
        self.names: set[str] = set()
        self.codes: set[str] = set()
        #: (the prefix in capitals, its length as written)
        self.prefixes: list[tuple[str, int]] = []
        for selector in selectors:
            selector = selector.strip()
            if not selector:
                continue
            if selector.upper() == "ALL":
                self.everything = True
                continue
            self.names.add(selector)
            self.codes.add(selector.upper())
            if selector[0].isalpha() and "-" not in selector:
                self.prefixes.append((selector.upper(), len(selector)))

    def best(self, rule: Rule) -> int:
        if rule.name in self.names or rule.code in self.codes:
            return _EXACT
        longest = max((length for prefix, length in self.prefixes if rule.code.startswith(prefix)), default=-1)
        if longest >= 0:
            return longest
        return 0 if self.everything else -1


def resolve(catalog: dict[str, Rule], layers: Sequence[Layer]) -> list[Rule]:
    """The rules to run after applying every layer in order (default: every rule, house rules too)."""
    chosen = set(catalog)
    for layer in layers:
        if layer.select is None and not layer.extend_select and not layer.ignore:
            continue  # most runs' layers: nothing selected or ignored keeps the rules as they are
        ignore = _Selectors(layer.ignore)
        select = _Selectors([*layer.select, *layer.extend_select]) if layer.select is not None else None
        extend = _Selectors(layer.extend_select)
        for rule in catalog.values():
            ignored = ignore.best(rule)
            if select is not None:
                selected = select.best(rule)
                keep = selected >= 0 and selected > ignored
            else:
                extended = extend.best(rule)
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
