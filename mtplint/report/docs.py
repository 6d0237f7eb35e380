"""A rule's documentation as ``mtplint rule CODE`` prints it (ruff's shape)."""

from __future__ import annotations

from mtplint.checks.catalog import Rule

_SECTIONS = (("what", "What it does"), ("why", "Why is this bad?"), ("example", "Example"),
             ("use_instead", "Use instead"), ("fix_safety", "Fix safety"))


def render_rule(rule: Rule) -> str:
    lines = [f"# {rule.name} ({rule.code})", "", f"Severity: {rule.severity}. Engines: {', '.join(rule.engines)}. "
             f"Fix: {rule.fix}."]
    if rule.affected:
        ranges = "; ".join(r.describe(engine) + (f" ({r.note})" if r.note else "")
                           for engine, items in rule.affected.items() for r in items)
        lines.append(f"Affected versions: {ranges}.")
    if rule.origin != "builtin":
        lines.append(f"House rule from {rule.origin}.")
    lines.append("")
    if rule.when:
        # a house rule's conditions are its whole logic: show them as written
        lines.append("## When")
        lines.extend(f"- `{name}` {', '.join(f'{op} {value!r}' for op, value in condition.items())}"
                     for name, condition in rule.when.items())
        lines.append("")
    for key, title in _SECTIONS:
        text = rule.docs.get(key)
        if not text:
            continue
        lines.append(f"## {title}")
        if key in ("example", "use_instead"):
            lines.extend(["```", text.rstrip("\n"), "```"])
        else:
            lines.append(text.rstrip("\n"))
        lines.append("")
    lines.append("## References")
    for reference in rule.docs.get("references", []):
        where = reference.get("url") or reference.get("source", "")
        lines.append(f"- {reference['title']}: {where}")
    return "\n".join(lines) + "\n"
