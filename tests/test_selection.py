"""Rule selection by code, prefix and name, in layers (configuration, then command line), as ruff."""

from __future__ import annotations

from mtplint.checks.catalog import Rule
from mtplint.checks.selection import Layer, resolve, selected_rules, specificity


def rule(code: str, name: str) -> Rule:
    return Rule(code=code, name=name, severity="warning", engines=("any",), fix="none", summary="s", docs={})


CATALOG = {r.code: r for r in (
    rule("MTP001", "unparsable-file"), rule("MTP002", "unused-suppression"),
    rule("MTP101", "turboquant-with-speculative-decoding"), rule("MTP102", "prefix-caching-with-mtp"),
    rule("MTP201", "vram-tight-draft-buffers"), rule("ACME001", "mtp-above-64-sequences"),
)}


def codes(rules: list[Rule]) -> list[str]:
    return [r.code for r in rules]


def test_default_runs_everything_including_house_rules() -> None:
    assert codes(selected_rules(CATALOG, None)) == sorted(CATALOG)


def test_prefix_code_and_name_selectors() -> None:
    assert codes(selected_rules(CATALOG, ["MTP1"])) == ["MTP101", "MTP102"]
    assert codes(selected_rules(CATALOG, ["prefix-caching-with-mtp", "MTP0"])) == ["MTP001", "MTP002", "MTP102"]
    assert codes(selected_rules(CATALOG, ["mtp2"])) == ["MTP201"]
    assert codes(selected_rules(CATALOG, ["ACME"])) == ["ACME001"]


def test_more_specific_selector_wins_and_ties_go_to_ignore() -> None:
    assert codes(selected_rules(CATALOG, ["MTP1"], ignore=["MTP102"])) == ["MTP101"]
    assert codes(selected_rules(CATALOG, ["MTP102"], ignore=["MTP1"])) == ["MTP102"]
    assert codes(selected_rules(CATALOG, ["MTP102"], ignore=["MTP102"])) == []
    # a name is as specific as a code
    assert codes(selected_rules(CATALOG, ["prefix-caching-with-mtp"], ignore=["MTP1"])) == ["MTP102"]
    assert codes(selected_rules(CATALOG, ["ALL"], ignore=["MTP"])) == ["ACME001"]


def test_command_line_select_starts_over_and_ignores_add_up() -> None:
    config = Layer(select=["MTP1"], ignore=["MTP102"])
    assert codes(resolve(CATALOG, [config, Layer()])) == ["MTP101"]
    assert codes(resolve(CATALOG, [config, Layer(select=["MTP102"])])) == ["MTP102"]
    assert codes(resolve(CATALOG, [config, Layer(extend_select=["MTP2"])])) == ["MTP101", "MTP201"]
    assert codes(resolve(CATALOG, [config, Layer(ignore=["MTP101"])])) == []
    assert codes(resolve(CATALOG, [Layer(ignore=["MTP1"]), Layer(extend_select=["MTP102"])])) == [
        "ACME001", "MTP001", "MTP002", "MTP102", "MTP201"]


def test_specificity() -> None:
    prefix_caching = CATALOG["MTP102"]
    assert specificity(prefix_caching, "ALL") == 0
    assert specificity(prefix_caching, "MTP1") == 4 < specificity(prefix_caching, "MTP10") < specificity(prefix_caching, "MTP102")
    assert specificity(prefix_caching, "prefix-caching-with-mtp") == specificity(prefix_caching, "MTP102")
    assert specificity(prefix_caching, "MTP2") == -1
    assert specificity(prefix_caching, "prefix") == -1  # names match whole, never as prefixes
