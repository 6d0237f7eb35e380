"""How :func:`mtplint.checks.run_rules` runs a launch's rules: each rule's findings once, the rules
of another engine never asked, and the matching of rules to an engine done once per run."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from mtplint.checks import _PREDICATE_MODULES, UNDECIDED, Finding, RuleContext, run_rules
from mtplint.checks.catalog import Rule, VersionRange
from mtplint.source import SourceFile
from mtplint.versions import EngineVersion


class _CountedEngines(tuple[str, ...]):
    """A rule's engines that count how often a launch's engine is looked up in them."""

    asked = 0

    def __contains__(self, engine: object) -> bool:
        type(self).asked += 1
        return super().__contains__(engine)


def _rule(code: str, engines: tuple[str, ...] = ("vllm",)) -> Rule:
    return Rule(code=code, name=code.lower(), severity="warning", engines=engines, fix="none", summary="s", docs={})


def _report(engine: str = "vllm", version: EngineVersion | None = None) -> Any:
    source = SourceFile("serve.sh", "serve.sh", "vllm serve m --max-num-seqs 512\n")
    launch = SimpleNamespace(engine=engine, span=source.span(0, 10), source=source)
    return SimpleNamespace(launch=launch, undecided=[], version=version)


Install = Callable[[str, Any], None]


@pytest.fixture
def install(monkeypatch: pytest.MonkeyPatch) -> Install:
    """Makes a function the ``check`` the run calls for a rule code (as if ``mtplint.checks.<code>`` held it)."""

    def installed(code: str, check: Any) -> None:
        monkeypatch.setitem(_PREDICATE_MODULES, code, SimpleNamespace(check=check))

    return installed


def test_a_finding_a_rule_yields_again_is_reported_once(install: Install) -> None:
    def check(ctx: RuleContext) -> Iterator[Finding]:
        first = ctx.report_finding("too many sequences", ctx.launch_span)
        yield first
        second = ctx.report_finding("the draft model is missing", ctx.launch_span)
        yield second
        yield first  # reported before the last one
        # built otherwise, equal to a reported one
        yield Finding(ctx.rule, "too many sequences", ctx.launch_span, None, ctx.launch_span)
        yield Finding(ctx.rule, "a third mistake", ctx.launch_span, None, ctx.launch_span)

    install("MTP991", check)
    found = run_rules([_rule("MTP991")], _report())
    assert [finding.message for finding in found] == [
        "too many sequences", "the draft model is missing", "a third mistake"]


def test_a_rule_returning_findings_it_did_not_report_has_them_listed(install: Install) -> None:
    def check(ctx: RuleContext) -> list[Finding]:
        return [Finding(ctx.rule, "listed", ctx.launch_span), Finding(ctx.rule, "listed", ctx.launch_span)]

    install("MTP992", check)
    assert [finding.message for finding in run_rules([_rule("MTP992")], _report())] == ["listed"]


def test_rules_of_another_engine_are_not_run_and_mtp004_runs_for_any(install: Install) -> None:
    ran: list[str] = []

    def check_for(code: str) -> Any:
        def check(ctx: RuleContext) -> None:
            ran.append(code)
            ctx.report.undecided.append((code, "max_concurrency", "vllm <0.9"))

        return check

    def undecided(ctx: RuleContext) -> Iterator[Finding]:
        ran.append(UNDECIDED)
        yield ctx.report_finding("undecided", ctx.launch_span)

    install("MTP993", check_for("MTP993"))
    install("MTP994", check_for("MTP994"))
    install(UNDECIDED, undecided)
    rules = [_rule(UNDECIDED, ("sglang",)), _rule("MTP993", ("sglang",)), _rule("MTP994", ("any",))]
    found = run_rules(rules, _report("llama.cpp"))
    # MTP004 is listed first but runs last, on what the others left undecided
    assert ran == ["MTP994", UNDECIDED]
    assert [finding.rule.code for finding in found] == [UNDECIDED]


def test_a_runs_rules_are_matched_to_an_engine_once_not_per_launch(install: Install, monkeypatch: pytest.MonkeyPatch) -> None:
    # the plans of earlier tests in this process would otherwise count towards the bound on them,
    # and clear this test's plan part-way when it is reached
    monkeypatch.setattr("mtplint.checks._PLANS", {})
    install("MTP995", lambda ctx: None)
    rules = [_rule("MTP995", _CountedEngines(("vllm",)))]
    _CountedEngines.asked = 0
    for _ in range(5):
        run_rules(rules, _report("vllm"))
    assert _CountedEngines.asked == 1
    run_rules(rules, _report("sglang"))  # another engine: matched once more
    assert _CountedEngines.asked == 3  # "sglang", then "any"
    # the same rules in another list are the same rules
    run_rules(list(rules), _report("vllm"))
    assert _CountedEngines.asked == 3


def test_plans_are_bounded_and_a_plan_is_matched_again_after_they_are_cleared(install: Install,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A long-lived process (the language server) must not gather plans of rules it no longer uses."""
    from mtplint import checks

    monkeypatch.setattr(checks, "_PLANS", {})
    install("MTP995", lambda ctx: None)
    kept = [[_rule("MTP995")] for _ in range(checks._MAX_PLANS + 5)]
    for rules in kept:
        run_rules(rules, _report("vllm"))
        assert len(checks._PLANS) <= checks._MAX_PLANS
    counted = [_rule("MTP995", _CountedEngines(("vllm",)))]
    _CountedEngines.asked = 0
    run_rules(counted, _report("vllm"))
    for rules in kept:  # enough other lists to clear the plans
        run_rules(rules, _report("vllm"))
    run_rules(counted, _report("vllm"))
    assert _CountedEngines.asked == 2


def test_a_rule_runs_only_at_the_versions_it_affects(install: Install) -> None:
    ran: list[str] = []
    install("MTP996", lambda ctx: ran.append(ctx.report.version.version))
    rule = Rule(code="MTP996", name="ranged", severity="warning", engines=("vllm",), fix="none", summary="s",
                docs={}, affected={"vllm": (VersionRange("0.10.0", "0.12.0"),)})
    for version in ("0.9.2", "0.10.1", "0.12.0"):
        run_rules([rule], _report("vllm", EngineVersion("vllm", version, True, "pin")))
    # unpinned, the newest possible version is outside but older ones are in: it may be affected
    run_rules([rule], _report("vllm", EngineVersion("vllm", "0.12.0", False, "default", "0.9.0")))
    assert ran == ["0.10.1", "0.12.0"]


def test_the_plans_of_rules_no_longer_used_are_not_gathered(install: Install) -> None:
    from mtplint.checks import _MAX_PLANS, _PLANS

    install("MTP997", lambda ctx: None)
    # a server reading a configuration's house rules anew for each lint: new rules every time
    for _ in range(3 * _MAX_PLANS):
        run_rules([_rule("MTP997")], _report("vllm"))
    assert len(_PLANS) <= _MAX_PLANS
