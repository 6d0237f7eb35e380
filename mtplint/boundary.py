"""Error boundaries: an exception while reading a file, modelling a launch or running one rule is
reported against that file (a finding with the stage's rule code and a one-line reason), and the
rest of the run goes on -- as ruff, shellcheck and yamllint report a crash in one file or check and
keep going. The run exits 2 only when it could not complete (usage, configuration, an unwritable
report); the traceback is printed only with ``--verbose`` (or ``MTPLINT_DEBUG`` set).
"""

from __future__ import annotations

import os
import sys

from mtplint.checks import UNDECIDED, Finding, RuleContext, run_rules
from mtplint.errors import reason

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from mtplint.checks.catalog import Rule
    from mtplint.pipeline import LaunchReport

#: ``--verbose`` was given: tracebacks go to standard error (worker processes are forked with it)
_verbose = False


def set_verbose(on: bool) -> None:
    global _verbose
    _verbose = on


def verbose() -> bool:
    return _verbose or bool(os.environ.get("MTPLINT_DEBUG"))


def report_traceback(where: str) -> None:
    """With ``--verbose``, the traceback of the exception being handled, under ``where``."""
    if not verbose():
        return
    import traceback  # noqa: PLC0415 - only for a crash under --verbose
    from contextlib import suppress  # noqa: PLC0415 - only for a crash under --verbose

    # standard error may be gone: the finding still says what happened
    with suppress(OSError, ValueError, AttributeError):
        sys.stderr.write(f"mtplint: traceback of the internal error in {where}:\n{traceback.format_exc()}")


def guarded_rules(rules: Iterable[Rule], report: LaunchReport) -> list[Finding]:
    """:func:`mtplint.checks.run_rules` with one boundary per rule: a rule that raises gives a finding
    under its own code at the launch (the other rules' findings are kept). The rules run together
    first (one call per launch, the fast path); only when that raises are they run one by one."""
    chosen = rules if isinstance(rules, (list, tuple)) else list(rules)  # a tuple is planned by what it is
    try:
        return run_rules(chosen, report)
    except Exception:
        pass
    found: list[Finding] = []
    # MTP004 reports what the other rules left undecided: each call of run_rules starts that list
    # again, so it is gathered over the rules run one by one and MTP004 runs last, on all of it
    undecided = []
    for rule in chosen:
        if rule.code != UNDECIDED:
            found.extend(guarded_rule(rule, report, run_rules, (rule,), report))
            undecided.extend(report.undecided)
    report.undecided = undecided
    for rule in chosen:
        if rule.code == UNDECIDED and undecided:
            found.extend(guarded_rule(rule, report, _undecided_finding, rule, report))
    return found


def _undecided_finding(rule: Rule, report: LaunchReport) -> list[Finding]:
    from mtplint.checks.mtp004 import undecided_finding  # noqa: PLC0415 - rule lookup: MTP004's module, when it runs

    return [undecided_finding(RuleContext(rule, report))]


def guarded_rule(rule: Rule, report: LaunchReport, produce: Callable[..., Iterable[Finding]],
                 *arguments: Any) -> list[Finding]:
    """The findings ``produce(*arguments)`` gives for ``rule`` on the launch ``report``, or, when it
    raises, one finding under the rule's code at the launch that says so."""
    try:
        return list(produce(*arguments))
    except Exception as error:
        launch = report.launch
        report_traceback(f"rule {rule.code} on {launch.source.display}")
        span = launch.span or launch.source.span(0, 0)
        return [Finding(rule, f"internal error in rule {rule.code} ({reason(error)}); this rule did not check this "
                              "launch (please report it; `--verbose` shows the traceback)",
                        span, launch_span=span, severity_override=None if rule.severity == "error" else "error")]
