"""Findings on launches that run differently on different paths of their script.

A shell script's command that runs one way on some paths and another way on others is one launch per
way (:mod:`mtplint.extract.shell.paths`), each with the branches its paths took
(:attr:`Launch.paths`). Their findings are checked per launch. Here a finding that every launch of
the command has stays as it is (the copies are then dropped as the same finding); one that only
some have names the branches that lead to all of those, once: ``(only when `[[ -n $SPEC ]]`)``.
"""

from __future__ import annotations

from collections.abc import Sequence

from mtplint.checks import Finding
from mtplint.extract.launch import Launch
from mtplint.extract.shell.paths import describe

_Identity = tuple[str, str, int, int, str]


def name_path_conditions(found: Sequence[tuple[Launch, Sequence[Finding]]]) -> None:
    """Add ``(only when ...)`` to the message of each finding that some launches of the same
    command (other paths of its script) do not have."""
    commands: dict[tuple[str, int], list[tuple[Launch, Sequence[Finding]]]] = {}
    for launch, findings in found:
        if launch.paths is not None and launch.span is not None:
            commands.setdefault((launch.source.display, launch.span.start), []).append((launch, findings))
    for group in commands.values():
        holders: dict[_Identity, list[Launch]] = {}
        for launch, findings in group:
            for finding in findings:
                holders.setdefault(finding.identity(), []).append(launch)
        # a command alone in its group runs another program (no engine) on its other paths
        everywhere = {identity for identity, launches in holders.items() if len(launches) == len(group) > 1}
        for _, findings in group:
            for finding in findings:
                identity = finding.identity()
                if identity not in everywhere:
                    paths = [path for launch in holders[identity] for path in launch.paths or ()]
                    finding.message = f"{finding.message} (only when {describe(paths)})"

