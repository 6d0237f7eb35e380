"""``mtplint check``: the pipeline's launches through the selected rules, then suppressions."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mtplint.checks import Finding, one_finding_per_mistake, run_rule
from mtplint.checks.catalog import Rule, load_catalog
from mtplint.checks.selection import selected_rules
from mtplint.pipeline import Options, Result, run

#: rules about the input itself, produced by the pipeline or by suppression handling, not by predicates
META_RULES = ("MTP001", "MTP002", "MTP003")


@dataclass
class LintSettings:
    pipeline: Options = field(default_factory=Options)
    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    extend_rules: tuple[Path, ...] = ()
    objective: str = "latency"


@dataclass
class LintResult:
    findings: list[Finding]
    suppressed: list[Finding]
    pipeline: Result
    rules: list[Rule]


def lint(paths: list[Path], settings: LintSettings) -> LintResult:
    catalog = load_catalog(settings.extend_rules)
    rules = selected_rules(catalog, settings.select, settings.extend_select, settings.ignore)
    chosen = {rule.code for rule in rules}
    pipeline_result = run(paths, settings.pipeline)
    findings: list[Finding] = []
    for report in pipeline_result.launches:
        report.objective = settings.objective
        for rule in rules:
            if rule.code not in META_RULES:
                findings.extend(run_rule(rule, report))
    if "MTP001" in chosen:
        parse_rule = catalog["MTP001"]
        findings.extend(Finding(parse_rule, d.message, d.span) for d in pipeline_result.diagnostics if d.code == "MTP001")
    findings = one_finding_per_mistake(findings)

    from mtplint.checks.suppress import apply_suppressions

    kept, suppressed = apply_suppressions(findings, pipeline_result, settings.per_file_ignores, catalog, chosen)
    kept.sort(key=Finding.sort_key)
    return LintResult(kept, suppressed, pipeline_result, rules)
