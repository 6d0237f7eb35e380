"""House rules: conditions on effective settings, written as data (``when:`` in a rule file).

``when: {spec_method: {in: [mtp]}, max_concurrency: {gt: 64}}`` fires when every condition holds;
the finding points at the *last* named setting that has a span (write the general condition
first and the offending setting last: the ``--max-num-seqs 128`` token, not the speculative
config), so a ``noqa`` on that line — or on the launch's first or last line — works. A condition on
an unresolved setting makes the rule skip the launch (MTP003 reports it).
"""

from __future__ import annotations

from mtplint.checks import RuleContext
from mtplint.checks.mtp003 import unresolved_inputs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _holds(value: Any, explicit: bool, condition: dict[str, Any]) -> bool:
    for operator, expected in condition.items():
        if operator == "set":
            if explicit != bool(expected):
                return False
            continue
        if operator == "eq" and value != expected:
            return False
        if operator == "ne" and value == expected:
            return False
        if operator == "in" and value not in expected:
            return False
        if operator == "not_in" and value in expected:
            return False
        if operator in ("gt", "ge", "lt", "le"):
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                return False
            if operator == "gt" and not value > expected:
                return False
            if operator == "ge" and not value >= expected:
                return False
            if operator == "lt" and not value < expected:
                return False
            if operator == "le" and not value <= expected:
                return False
    return True


def check(ctx: RuleContext) -> None:
    """A rule declared by its ``when`` conditions (a house rule's YAML): one finding when the
    launch's settings meet them all."""
    conditions = ctx.rule.when or {}
    # a flag whose value the parser could not read (compose ``--max-num-seqs ${SEQS}`` with SEQS unset)
    # leaves the setting at its default: that default is not what the server runs with
    unknown = {item.setting for item in unresolved_inputs(ctx.report)}
    values: dict[str, Any] = {}
    for name, condition in conditions.items():
        setting = ctx.setting(name)
        if setting is None or setting.unresolved or name in unknown:
            return
        if name == "gpu" and setting.value is None:
            return  # no GPU identity: unknown, not "some other GPU" (the run's summary says so)
        explicit = setting.origin in ("explicit", "config-file", "env")
        if not _holds(setting.value, explicit, condition):
            return
        values[name] = setting.value
    template = ctx.rule.message or ctx.rule.summary
    try:
        message = template.format(**values)
    except (KeyError, IndexError, ValueError, TypeError):  # a spec for numbers given a name: the template
        message = template
    ctx.report_finding(message, ctx.span_of(*reversed(list(conditions))))
