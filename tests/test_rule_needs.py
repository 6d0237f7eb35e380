"""What a rule's predicate module says a launch must have for the rule to find anything
(``ONLY_WITH_SETTING``, ``ONLY_WITH_OPTION``): a launch without it is not given to the predicate, and no
predicate that says so would have found anything in such a launch."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mtplint.checks import _PREDICATE_MODULES, Finding, RuleContext, predicate_for, run_rules
from mtplint.checks.catalog import Rule, load_catalog
from mtplint.pipeline import Options, run
from mtplint.settings import Setting
from mtplint.source import SourceFile
from mtplint.versions import EngineVersion
from tests.case_files import case_file, case_files

CASES = Path(__file__).parent / "rules"


def _rule(code: str) -> Rule:
    return Rule(code=code, name=code.lower(), severity="warning", engines=("vllm",), fix="none", summary="s", docs={})


def _report(effective: dict[str, Setting], options: dict[str, Any]) -> Any:
    source = SourceFile("serve.sh", "serve.sh", "vllm serve m\n")
    launch = SimpleNamespace(engine="vllm", span=source.span(0, 10), source=source)
    return SimpleNamespace(launch=launch, undecided=[], version=EngineVersion("vllm", "0.11.0", True, "pin"),
                           effective=effective, parsed=SimpleNamespace(options=options))


def test_a_rule_about_drafting_is_not_given_a_launch_that_does_not_draft(monkeypatch: pytest.MonkeyPatch) -> None:
    given: list[object] = []

    def check(ctx: RuleContext) -> Iterator[Finding]:
        given.append(ctx.value("spec_method"))
        yield ctx.report_finding("drafts", ctx.launch_span)

    monkeypatch.setitem(_PREDICATE_MODULES, "MTP981", SimpleNamespace(check=check, ONLY_WITH_SETTING="spec_method"))
    rules = (_rule("MTP981"),)
    assert run_rules(rules, _report({}, {})) == []
    assert run_rules(rules, _report({"spec_method": Setting(None, "default")}, {})) == []
    unresolved = Setting("${METHOD}", "explicit", unresolved=("METHOD",))
    assert run_rules(rules, _report({"spec_method": unresolved}, {})) == []
    found = run_rules(rules, _report({"spec_method": Setting("mtp", "explicit")}, {}))
    assert [finding.message for finding in found] == ["drafts"]
    assert given == ["mtp"]


def test_a_rule_about_an_option_is_given_only_a_launch_that_gives_one_of_its_options(
        monkeypatch: pytest.MonkeyPatch) -> None:
    given: list[list[str]] = []

    def check(ctx: RuleContext) -> None:
        given.append(sorted(ctx.report.parsed.options))

    monkeypatch.setitem(_PREDICATE_MODULES, "MTP982",
                        SimpleNamespace(check=check, ONLY_WITH_OPTION=("spec_draft_model", "spec_draft_hf_repo")))
    rules = (_rule("MTP982"),)
    run_rules(rules, _report({}, {"model": object()}))
    run_rules(rules, _report({}, {"model": object(), "spec_draft_hf_repo": object()}))
    assert given == [["model", "spec_draft_hf_repo"]]


def _needing_rules() -> list[Rule]:
    """The built-in rules whose predicate module says what a launch needs."""
    needing = []
    for rule in load_catalog(()).values():
        if predicate_for(rule) is None:
            continue
        module = _PREDICATE_MODULES[rule.code]
        if getattr(module, "ONLY_WITH_SETTING", None) or getattr(module, "ONLY_WITH_OPTION", ()):
            needing.append(rule)
    return needing


def test_the_rules_about_drafting_say_so() -> None:
    codes = {rule.code for rule in _needing_rules()}
    assert {"MTP102", "MTP105", "MTP301", "MTP302", "MTP304", "MTP406", "MTP501", "MTP108", "MTP113"} <= codes


@pytest.mark.parametrize("path", case_files(CASES), ids=lambda path: path.stem)
def test_a_predicate_finds_nothing_in_a_launch_without_what_its_module_says_it_needs(path: Path,
                                                                                   tmp_path: Path) -> None:
    """Every launch of every rule's cases, given straight to each predicate that says what a launch
    needs, when the launch lacks it: the predicate finds nothing (so not giving it such a launch
    changes no finding)."""
    needing = _needing_rules()
    data = case_file(path)
    for index, case in enumerate([*(data.get("positive") or []), *(data.get("negative") or [])]):
        project = tmp_path / str(index)
        for name, text in case["files"].items():
            target = project / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        for report in run([project], Options(project)).launches:
            for rule in needing:
                if report.launch.engine not in rule.engines and "any" not in rule.engines:
                    continue
                module = _PREDICATE_MODULES[rule.code]
                needed = getattr(module, "ONLY_WITH_SETTING", None)
                setting = report.effective.get(needed) if needed is not None else None
                drafts = needed is None or not (setting is None or setting.unresolved or setting.value is None)
                options = getattr(module, "ONLY_WITH_OPTION", ())
                if drafts and (not options or any(option in report.parsed.options for option in options)):
                    continue
                report.undecided = []
                context = RuleContext(rule, report)
                produced = list(module.check(context) or ())
                assert (produced, context.findings, report.undecided) == ([], [], []), (case["name"], rule.code)


def test_the_rules_a_launch_without_a_named_gpu_leaves_unchecked_are_picked_once_per_selection(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from mtplint.checks import mtp003

    monkeypatch.setattr(mtp003, "_NEEDING_GPU", {})
    catalog = load_catalog(())
    house = Rule(code="HOUSE1", name="house-gpu", severity="warning", engines=("any",), fix="none", summary="s",
                 docs={}, when={"gpu": {"equals": "h100"}}, origin="house")
    selected = [catalog["MTP003"], catalog["MTP102"], catalog["MTP201"], catalog["MTP301"], house]
    drafting = {"spec_method": Setting("mtp", "explicit"), "gpu": Setting(None, "default")}
    for _ in range(3):
        unchecked = mtp003.rules_without_gpu(catalog["MTP003"], _report(dict(drafting), {}), selected)
        assert unchecked == ["MTP201", "MTP301", "HOUSE1"]
    assert len(mtp003._NEEDING_GPU) == 1
    named = {**drafting, "gpu": Setting("h100-sxm", "explicit")}
    assert mtp003.rules_without_gpu(catalog["MTP003"], _report(named, {}), selected) == []
