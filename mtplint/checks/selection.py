"""Which rules run: ``select`` / ``extend-select`` / ``ignore`` by code, prefix or name (as ruff)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from mtplint.checks.catalog import CatalogError, Rule


def _matches(rule: Rule, selector: str) -> bool:
    selector = selector.strip()
    if selector.upper() == "ALL":
        return True
    if selector == rule.name:
        return True
    return rule.code.startswith(selector.upper()) and bool(selector)


def check_selectors(selectors: Iterable[str], catalog: dict[str, Rule], where: str) -> None:
    for selector in selectors:
        if not any(_matches(rule, selector) for rule in catalog.values()):
            raise CatalogError(f"{where}: unknown rule selector {selector!r} (a code, a prefix like MTP1, a rule name, or ALL)")


def selected_rules(
    catalog: dict[str, Rule],
    select: Sequence[str] | None,
    extend_select: Sequence[str] = (),
    ignore: Sequence[str] = (),
) -> list[Rule]:
    """Default: every built-in rule and every house rule. The most specific selector wins, as in
    ruff: ``--select MTP1 --ignore MTP102`` runs MTP1xx but MTP102."""
    chosen_selectors = list(select) if select is not None else ["ALL"]
    chosen_selectors += list(extend_select)
    result = []
    for rule in sorted(catalog.values(), key=lambda r: r.code):
        best_select = max((len(s) for s in chosen_selectors if _matches(rule, s)), default=-1)
        best_ignore = max((len(s) for s in ignore if _matches(rule, s)), default=-1)
        if best_select >= 0 and best_select > best_ignore:
            result.append(rule)
    return result
