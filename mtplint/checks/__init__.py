"""Stage 5 of the pipeline: rules.

Each rule is data in ``rules/<CODE>.yaml`` (see :mod:`mtplint.checks.catalog`) plus, for the
built-in rules, a predicate ``check(ctx)`` in ``mtplint/checks/<code>.py`` that reads a launch's
effective settings and yields findings. Predicates are imported only for the rules that run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import lru_cache
from itertools import chain

from mtplint.checks.catalog import Rule, VersionRange
from mtplint.records import Record
from mtplint.settings import default_ranges
from mtplint.source import Diagnostic, SourceFile, Span
from mtplint.versions import EngineVersion

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from mtplint.catalogs import Catalogs
    from mtplint.engines import CliError, OptionValue
    from mtplint.pipeline import LaunchReport
    from mtplint.settings import Setting

SEVERITIES = ("error", "warning", "info")

#: the rule that reports, once per launch, the rules an unpinned version left undecided
UNDECIDED = "MTP004"


class Edit(Record):
    """Replace ``span`` (in its file) with ``content``; an empty span inserts."""

    __slots__ = ("span", "content")
    span: Span
    content: str

    def __init__(self, span: Span, content: str) -> None:
        self.span = span
        self.content = content

    def to_json(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "location": {"row": self.span.line, "column": self.span.column},
            "end_location": {"row": self.span.end_line, "column": self.span.end_column},
        }


class Fix(Record):
    """The edits that resolve a finding, and whether ``--fix`` may apply them on its own."""

    __slots__ = ("applicability", "message", "edits")
    applicability: str  # safe | unsafe | display-only
    message: str
    edits: list[Edit]

    def __init__(self, applicability: str, message: str, edits: list[Edit] | None = None) -> None:
        self.applicability = applicability
        self.message = message
        self.edits = edits if edits is not None else []

    def to_json(self) -> dict[str, Any]:
        return {"applicability": self.applicability, "message": self.message, "edits": [e.to_json() for e in self.edits]}


def applies(fix: Fix | None, unsafe: bool) -> bool:
    """Whether ``--fix`` applies this fix (``unsafe``: ``--unsafe-fixes`` was given)."""
    if fix is None or not fix.edits:
        return False
    return fix.applicability == "safe" or (unsafe and fix.applicability == "unsafe")


class Finding(Record):
    """One rule's verdict on one place in a file."""

    __slots__ = ("rule", "message", "span", "fix", "launch_span", "suppressed", "severity_override")
    rule: Rule
    message: str
    span: Span
    fix: Fix | None
    #: the span of the launch this finding belongs to (a `noqa` on the launch's line also applies)
    launch_span: Span | None
    suppressed: bool
    #: a severity that depends on configuration (MTP301 follows ``objective``); None: the rule's
    severity_override: str | None

    def __init__(self, rule: Rule, message: str, span: Span, fix: Fix | None = None, launch_span: Span | None = None,
                 suppressed: bool = False, severity_override: str | None = None) -> None:
        self.rule = rule
        self.message = message
        self.span = span
        self.fix = fix
        self.launch_span = launch_span
        self.suppressed = suppressed
        self.severity_override = severity_override

    @property
    def code(self) -> str:
        return self.rule.code

    @property
    def severity(self) -> str:
        return self.severity_override or self.rule.severity

    def sort_key(self) -> tuple[str, int, int, str]:
        return self.span.file, self.span.line, self.span.column, self.rule.code

    def identity(self) -> tuple[str, str, int, int, str]:
        """What tells this finding from another: its rule, where it is, and what it says (a launch's
        findings and a fix's verification compare findings by it)."""
        return self.rule.code, self.span.file, self.span.start, self.span.end, self.message

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.rule.code,
            "name": self.rule.name,
            "severity": self.severity,
            "message": self.message,
            "filename": self.span.file,
            "location": {"row": self.span.line, "column": self.span.column},
            "end_location": {"row": self.span.end_line, "column": self.span.end_column},
            "fix": self.fix.to_json() if self.fix else None,
            "url": self.rule.url,
        }


class RuleContext:
    """What a predicate sees: one launch, its effective settings, and its rule."""

    __slots__ = ("rule", "report", "findings")

    def __init__(self, rule: Rule, report: LaunchReport) -> None:
        self.rule = rule
        self.report = report
        self.findings: list[Finding] = []

    # -- reading the launch ---------------------------------------------------------------------
    @property
    def engine(self) -> str:
        return self.report.launch.engine

    @property
    def catalogs(self) -> Catalogs:
        """The GPU and model catalogs of the launch's configuration."""
        return self.report.catalogs

    def setting(self, name: str) -> Setting | None:
        return self.report.effective.get(name)

    def value(self, name: str) -> Any:
        setting = self.report.effective.get(name)
        return None if setting is None or setting.unresolved else setting.value

    def option(self, name: str) -> OptionValue | None:
        return self.report.parsed.options.get(name)

    @property
    def errors(self) -> list[CliError]:
        return self.report.parsed.errors

    @property
    def launch_span(self) -> Span:
        launch = self.report.launch
        return launch.span or launch.source.span(0, 0)

    def rests_on_version_default(self, name: str, fires: Callable[[Any], bool] | None = None,
                                 fires_on: str | None = None) -> bool:
        """The setting is a default that differs across the versions still possible (the README's
        rule families: a finding resting only on such a default fires only when the version is known).

        When it is, the rule's silence is recorded for MTP004 with the versions where the rule would
        fire: ``fires_on`` as the rule words it, else those of the setting's per-version defaults
        that ``fires`` accepts (all of them without ``fires``; none accepted: nothing to record)."""
        setting = self.report.effective.get(name)
        if setting is None or setting.origin != "default" or self.report.version.known:
            return False
        if not (setting.extra.get("depends_on_version") or setting.extra.get("version_dependent")):
            return False
        if fires_on is None:
            firing = [versions for versions, value in default_ranges(setting) if fires is None or fires(value)]
            if not firing:
                return True
            fires_on = ", ".join(firing)
        self.report.undecided.append((self.rule.code, name, fires_on))
        return True

    def span_of(self, *names: str) -> Span:
        """The span of the first named setting that has one, else the launch's."""
        for name in names:
            setting = self.report.effective.get(name)
            if setting is not None and setting.span is not None:
                return setting.span
        return self.launch_span

    def source_for(self, span: Span | None) -> SourceFile | None:
        """The file a span points into (the launch's own file, a ``--config`` file, ...)."""
        return self.report.launch.source if span is None else self.source_named(span.file)

    def source_named(self, file: str) -> SourceFile | None:
        """The file the run read by this name, as findings show it (:attr:`Span.file`)."""
        launch_source = self.report.launch.source
        if file == launch_source.display:
            return launch_source
        loader = self.report.loader
        return loader.by_display(file) if loader is not None else None

    # -- versions -------------------------------------------------------------------------------
    def ranges(self) -> tuple[VersionRange, ...]:
        return self.rule.affected.get(self.engine, ())

    def affected(self, ranges: Iterable[VersionRange] | None = None) -> bool | None:
        """Whether the version in play is affected: True, False, or None (unknown and partly affected)."""
        chosen = tuple(self.ranges() if ranges is None else ranges)
        if not chosen:
            return True
        version = self.report.version
        return _affected(version.version, version.known, version.low, version.high,
                         tuple((r.start, r.below) for r in chosen))

    def version_note(self, ranges: Iterable[VersionRange] | None = None) -> str:
        """`` (affects vLLM ≥0.28; the version in play is not pinned)`` when the version is unknown."""
        chosen = tuple(self.ranges() if ranges is None else ranges)
        version = self.report.version
        if version.known or not chosen:
            return ""
        described = ", ".join(r.describe(self.engine) for r in chosen)
        return f" (affects {described}; the {self.engine} version is not pinned)"

    # -- reporting ------------------------------------------------------------------------------
    def report_finding(self, message: str, span: Span | None = None, fix: Fix | None = None,
                       severity: str | None = None) -> Finding:
        finding = Finding(self.rule, message, span or self.launch_span, fix, self.launch_span,
                          severity_override=severity if severity != self.rule.severity else None)
        self.findings.append(finding)
        return finding


@lru_cache(maxsize=1024)  # asked for each ranged rule of each launch; a tree pins a few dozen versions
def _affected(version: str, known: bool, low: str | None, high: str | None,
              bounds: tuple[tuple[str | None, str | None], ...]) -> bool | None:
    """:meth:`RuleContext.affected` for a version (what :meth:`EngineVersion.in_range` reads of it)."""
    in_play = EngineVersion("", version, known, "", low, high)
    answers = [in_play.in_range(start, below) for start, below in bounds]
    if any(answer is True for answer in answers):
        return True
    if all(answer is False for answer in answers):
        return False
    return None


if TYPE_CHECKING:
    Predicate = Callable[[RuleContext], Iterator[Finding] | None]


#: the built-in rules without a predicate: the run reports them itself (MTP001 a file it cannot read
#: or parse, MTP002 a suppression that suppresses nothing, MTP003 the settings other rules could not
#: resolve; its module holds the functions the run calls, no ``check``). MTP004's ``check`` runs
#: after the launch's other rules (:func:`run_rules`)
REPORTED_BY_THE_RUN = frozenset({"MTP001", "MTP002", "MTP003"})

#: rule code -> the module of its predicate
_PREDICATE_MODULES: dict[str, Any] = {}

#: what a rule's ``only_when`` (``rules/<CODE>.yaml``) may ask of a launch, and how a launch meets it:
#: ``gpu-named``, something names the GPU it runs on (the memory and throughput models need one);
#: ``refused``, the engine refuses its arguments (the rules that explain a refusal). A rule whose
#: condition a launch does not meet finds nothing there, so it is not run and its module not loaded
LAUNCH_CONDITIONS: dict[str, Callable[[LaunchReport], bool]] = {
    "gpu-named": lambda report: report.hardware.gpu is not None,
    "refused": lambda report: bool(report.parsed.errors),
}


def _has_predicate(rule: Rule) -> bool:
    """Whether ``rule`` has code behind it (:func:`predicate_for`): a house rule with conditions, or a
    built-in rule the run does not report itself."""
    return rule.when is not None or (rule.origin == "builtin" and rule.code not in REPORTED_BY_THE_RUN)


def predicate_for(rule: Rule) -> Predicate | None:
    """The code behind a rule: for one declared by its ``when`` conditions, the evaluator of such
    rules (:func:`mtplint.checks.house.check`); for a built-in rule, its module's ``check``
    (``mtplint.checks.mtp102.check``); None for a house rule without conditions and for
    :data:`REPORTED_BY_THE_RUN`. Any other built-in rule whose module is missing or fails to import
    raises here, and the run's error boundary reports it under the rule's code
    (:func:`mtplint.boundary.guarded_rules`): a broken rule is never silently a rule that finds nothing."""
    if not _has_predicate(rule):
        return None
    # a rule runs once per launch: its module is looked up once, not through the import machinery
    # each time (its ``check`` is still read each time)
    try:
        module = _PREDICATE_MODULES[rule.code]
    except KeyError:
        name = "house" if rule.when is not None else rule.code.lower()
        module = _PREDICATE_MODULES[rule.code] = __import__(f"mtplint.checks.{name}", fromlist=("check",))
    check: Predicate = module.check
    return check


def run_rule(rule: Rule, report: LaunchReport) -> list[Finding]:
    """All findings of one rule on one launch."""
    return run_rules((rule,), report)


#: the version ranges a rule affects, for :func:`_affected` (empty: every version)
Bounds = tuple[tuple[str | None, str | None], ...]

#: the conditions of a rule's ``only_when``, by their names in :data:`LAUNCH_CONDITIONS`
Conditions = frozenset[str]


def _unmet_conditions(report: LaunchReport) -> frozenset[str]:
    """The names of the :data:`LAUNCH_CONDITIONS` ``report`` does not meet: weighed once per launch,
    not once per rule that names one (a launch meets or misses a condition whichever rule asks)."""
    return frozenset(name for name, meets in LAUNCH_CONDITIONS.items() if not meets(report))


class _Planned:
    """One rule of a plan (:func:`_plan`): the versions of the engine it affects, the conditions of
    its ``only_when``, and, once its predicate's module is imported, what the module says a launch
    must have for the rule to find anything (kept with the module it was read from). A predicate
    module may say so with ``ONLY_WITH_SETTING``, the name of an effective setting that must be known
    and not None (``spec_method``: half of a tree's launches do not draft, and most rules are about
    drafting), and ``ONLY_WITH_OPTION``, options of which the launch must give one
    (``speculative_config``): weighed here, once per launch, instead of in each predicate called
    to find nothing."""

    __slots__ = ("rule", "bounds", "conditions", "module", "setting", "options")

    def __init__(self, rule: Rule, bounds: Bounds, conditions: Conditions) -> None:
        self.rule = rule
        self.bounds = bounds
        self.conditions = conditions
        self.module: Any = None
        self.setting: str | None = None
        self.options: frozenset[str] = frozenset()

    def learn(self, module: Any) -> None:
        """Keep the rule's predicate module and what it says a launch needs."""
        self.setting = getattr(module, "ONLY_WITH_SETTING", None)
        self.options = frozenset(getattr(module, "ONLY_WITH_OPTION", ()))
        self.module = module


#: (the identities of a list of rules, an engine) -> the list, its rules that check the engine's
#: launches (MTP004 aside) planned (:class:`_Planned`), and MTP004 when listed: worked out once per
#: run, not per launch. The rules are kept with them, so no other rule takes one's identity while
#: the entry lives
_PLANS: dict[tuple[tuple[int, ...], str], tuple[tuple[Rule, ...], list[_Planned], Rule | None]] = {}

#: entries :data:`_PLANS` holds at most (a run has one list of rules per configuration; a fix asks
#: for one rule at a time): a long-lived process (the language server) that reads a configuration's
#: house rules anew for each lint must not gather plans of rules it no longer uses
_MAX_PLANS = 32

#: engine -> the tuple of rules last planned for its launches, and its plan: a run asks again and
#: again with the same tuple (a configuration's rules), which is then known by what it is, not by
#: the identities of its rules (a tuple does not change; holding it keeps its identity its own)
_LAST_PLANS: dict[str, tuple[tuple[Rule, ...], tuple[list[_Planned], Rule | None]]] = {}


def _conditions(rule: Rule) -> Conditions:
    """The conditions of ``rule``'s ``only_when``; a name :data:`LAUNCH_CONDITIONS` does not know
    raises KeyError, as when the rule is planned."""
    unknown = [condition for condition in rule.only_when if condition not in LAUNCH_CONDITIONS]
    if unknown:
        raise KeyError(unknown[0])
    return frozenset(rule.only_when)


def _plan(rules: Sequence[Rule], engine: str) -> tuple[list[_Planned], Rule | None]:
    """The rules that check a launch of ``engine`` (:meth:`Rule.applies_to`) other than MTP004 and
    those without a predicate, in their order, each planned (:class:`_Planned`), and MTP004 when
    among ``rules`` (it runs whatever the engine)."""
    last = _LAST_PLANS.get(engine)
    if last is not None and last[0] is rules:
        return last[1]
    key = (tuple(map(id, rules)), engine)
    plan = _PLANS.get(key)
    if plan is None:
        if len(_PLANS) >= _MAX_PLANS:
            _PLANS.clear()
            _LAST_PLANS.clear()
        applying = [_Planned(rule, tuple((r.start, r.below) for r in rule.affected.get(engine, ())),
                             _conditions(rule)) for rule in rules
                    if rule.code != UNDECIDED and (engine in rule.engines or "any" in rule.engines)
                    and _has_predicate(rule)]
        undecided = [rule for rule in rules if rule.code == UNDECIDED]
        plan = _PLANS[key] = (tuple(rules), applying, undecided[-1] if undecided else None)
    if isinstance(rules, tuple):
        _LAST_PLANS[engine] = (rules, (plan[1], plan[2]))
    return plan[1], plan[2]


def run_rules(rules: Iterable[Rule], report: LaunchReport) -> list[Finding]:
    """All findings of the rules on one launch, rule by rule (one call per launch, not per rule
    and launch: a tree's run asks ~90,000 such pairs, most of which find nothing)."""
    applying, undecided_rule = _plan(rules if isinstance(rules, (list, tuple)) else list(rules),
                                     report.launch.engine)
    found: list[Finding] = []
    report.undecided = []  # what these rules leave undecided (a launch re-linted by a fix is asked again)
    version = report.version
    modules = _PREDICATE_MODULES
    unmet: frozenset[str] | None = None  # weighed when the first rule with an ``only_when`` asks
    for planned in applying:
        conditions = planned.conditions
        if conditions:
            if unmet is None:
                unmet = _unmet_conditions(report)
            if not unmet.isdisjoint(conditions):
                continue
        bounds = planned.bounds
        # most rules affect every version: no range to weigh the version against
        if bounds and _affected(version.version, version.known, version.low, version.high, bounds) is False:
            continue
        rule = planned.rule
        # every planned rule has a predicate (:func:`_plan`): its module, once imported, is looked up
        # here rather than through predicate_for, which a tree's run would call ~130,000 times
        module = modules.get(rule.code)
        if module is None:
            if predicate_for(rule) is None:
                continue
            module = modules[rule.code]
        if module is not planned.module:
            planned.learn(module)
        needed = planned.setting
        if needed is not None:
            setting = report.effective.get(needed)
            if setting is None or setting.unresolved or setting.value is None:
                continue
        if planned.options and planned.options.isdisjoint(report.parsed.options):
            continue
        context = RuleContext(rule, report)
        produced = module.check(context)
        findings = context.findings
        if produced is not None:
            # most predicates yield each finding as RuleContext.report_finding appends it (the last one
            # listed, nothing to add), and most launches give a rule nothing to yield: the first other
            # finding hands the rest to _add_new. Written out here: this runs for every rule and launch
            iterator = iter(produced)
            for finding in iterator:
                if not findings or findings[-1] is not finding:
                    _add_new(findings, chain((finding,), iterator))
                    break
        if findings:
            found.extend(findings)
    if undecided_rule is not None and report.undecided:
        undecided = predicate_for(undecided_rule)
        if undecided is not None:
            context = RuleContext(undecided_rule, report)
            _add_new(context.findings, undecided(context) or ())
            found.extend(context.findings)
    return found


def _add_new(findings: list[Finding], produced: Iterable[Finding]) -> None:
    """Append the findings of ``produced`` not yet in ``findings`` (the same object, or an equal
    one). Predicates return what they reported (already in the list) and sometimes findings built
    otherwise; a rule may report thousands (one per unknown flag), so the list is indexed by place
    and message, not scanned for each: linear time. ``produced`` may report as it is iterated (a
    generator calling :meth:`RuleContext.report_finding`), so the index catches up before each."""
    index: dict[tuple[int, int, str], list[Finding]] = {}
    indexed = 0
    for finding in produced:
        while indexed < len(findings):
            known = findings[indexed]
            index.setdefault((known.span.start, known.span.end, known.message), []).append(known)
            indexed += 1
        same_place = index.setdefault((finding.span.start, finding.span.end, finding.message), [])
        if finding in same_place:
            continue
        same_place.append(finding)
        findings.append(finding)
        indexed += 1


def unparsable_findings(parse_rule: Rule, diagnostics: Iterable[Diagnostic]) -> list[Finding]:
    """MTP001 findings from the run's diagnostics: a file read both on its own and as a launch's
    ``--config`` file is reported once, in the words that say more (``malformed vLLM config file:
    invalid YAML: …``)."""
    unparsable: dict[tuple[str, int], Finding] = {}
    for diagnostic in diagnostics:
        if diagnostic.code != parse_rule.code:
            continue
        key = (diagnostic.span.file, diagnostic.span.start)
        if key not in unparsable or len(diagnostic.message) > len(unparsable[key].message):
            unparsable[key] = Finding(parse_rule, diagnostic.message, diagnostic.span)
    return list(unparsable.values())


def one_finding_per_mistake(findings: list[Finding]) -> list[Finding]:
    """Where a specific rule and a general one flag the same token, keep the specific one; the same
    finding reached twice (one ``--config`` file read by two launches) is reported once."""
    replaced: set[tuple[str, str, int]] = set()
    for finding in findings:
        for code in finding.rule.supersedes:
            replaced.add((code, finding.span.file, finding.span.start))
    seen: set[tuple[str, str, int, int, str]] = set()
    kept = []
    for finding in findings:
        identity = (finding.rule.code, finding.span.file, finding.span.start, finding.span.end, finding.message)
        if (finding.rule.code, finding.span.file, finding.span.start) in replaced or identity in seen:
            continue
        seen.add(identity)
        kept.append(finding)
    return kept
