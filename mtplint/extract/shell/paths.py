"""The paths through a shell script's branches, for reading each launch as it runs on each.

A script often builds its command in steps, some of them conditional::

    ARGS=(vllm serve "$MODEL" --enforce-eager)
    if [[ -n ${SPEC:-} ]]; then ARGS+=(--speculative-config "$SPEC"); fi
    case "$PROFILE" in fast) ARGS+=(--max-num-seqs 8) ;; *) ARGS+=(--max-num-seqs 64) ;; esac
    exec "${ARGS[@]}"

The model: **one reading of the script per path**. Where branches (``if``/``elif``/``else`` arms,
``case`` arms, the right side of ``a && b`` / ``a || b``) leave the script's variables in different
states, each distinct outcome is a fork; the interpreter reads the script once for every combination
of choices (depth first), and every command it runs is recorded with the branches its path took
(:attr:`ShellCommand.conditions`). Branches that leave the same variables (an ``echo`` and ``exit``,
a ``mkdir``) are no fork. Conditions are never evaluated: every arm is a possible path, as the
caller's environment and arguments decide them.

A command that runs the same way on every path is one launch, plainly. A command that runs
differently on different paths is one launch per distinct argv/environment, each named by the
branches that lead to it (the ones all of its paths share). A finding that holds on every path of
a command is therefore reported once; one that holds on some paths only names them (see
:func:`mtplint.checks.paths.name_path_conditions`).

The number of readings is bounded (:data:`MAX_PATHS`). Beyond it, the script is read once with its
branches merged: a variable that differs between branches is unknown (MTP003 names it), and an array
keeps the elements all branches start with, followed by one element of unknown length.

Only the script's own branches fork; a ``source``\\ d file and an ``sh -c`` string inside the script
are read with their branches merged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

#: readings of one script at most; a script with more paths is read once, branches merged
MAX_PATHS = 16
#: how much of a condition's text a label quotes
_LABEL_CHARS = 60

ForkKey = tuple[int, int]


class TooManyPaths(Exception):
    """The script has more than :data:`MAX_PATHS` paths."""


class PathChooser:
    """The choices of one reading: at each fork (by where it is in the script and how often it was
    reached), which outcome to follow; forks not chosen yet take their first outcome."""

    __slots__ = ("choices", "trace", "_reached")

    def __init__(self, choices: dict[ForkKey, int] | None = None) -> None:
        self.choices = choices if choices is not None else {}
        #: every fork reached in this reading: (key, number of outcomes, outcome taken)
        self.trace: list[tuple[ForkKey, int, int]] = []
        self._reached: dict[int, int] = {}

    def choose(self, offset: int, outcomes: int) -> int:
        occurrence = self._reached.get(offset, 0)
        self._reached[offset] = occurrence + 1
        key = (offset, occurrence)
        chosen = min(self.choices.get(key, 0), outcomes - 1)
        self.trace.append((key, outcomes, chosen))
        return chosen

    def next_choices(self) -> list[dict[ForkKey, int]]:
        """The readings still to do after this one: at each fork this reading reached first (not
        forced by its choices), every other outcome, with the choices before it kept."""
        pending: list[dict[ForkKey, int]] = []
        for position, (key, outcomes, _) in enumerate(self.trace):
            if key in self.choices:
                continue
            before = {earlier: chosen for earlier, _, chosen in self.trace[:position]}
            pending.extend({**before, key: alternative} for alternative in range(1, outcomes))
        return pending


def all_choices(read: Callable[[PathChooser], None]) -> list[PathChooser]:
    """Read the script (``read``) once per path, depth first; raises :class:`TooManyPaths`."""
    done: list[PathChooser] = []
    pending: list[dict[ForkKey, int]] = [{}]
    while pending:
        if len(done) >= MAX_PATHS:
            raise TooManyPaths
        chooser = PathChooser(pending.pop())
        read(chooser)
        done.append(chooser)
        alternatives = chooser.next_choices()
        if len(done) + len(pending) + len(alternatives) > MAX_PATHS:
            raise TooManyPaths  # each one still to read is at least one more path: stop before reading them
        pending.extend(reversed(alternatives))
    return done


def quote(text: str) -> str:
    """A condition's source text as a label shows it: blanks folded, long text cut."""
    folded = " ".join(text.split()).rstrip(";").rstrip()
    if len(folded) > _LABEL_CHARS:
        folded = folded[:_LABEL_CHARS - 1].rstrip() + "…"
    return f"`{folded}`"


def describe(paths: Sequence[tuple[str, ...]]) -> str:
    """What the paths that run a command one way have in common, as words for a message: the
    branches all of them took (``[[ -n $SPEC ]] and $PROFILE is fast``), else each path's."""
    distinct = list(dict.fromkeys(paths))
    common = [label for label in distinct[0] if all(label in path for path in distinct[1:])]
    if common:
        return " and ".join(common)
    return " or ".join(f"({' and '.join(path)})" if len(path) > 1 else path[0] for path in distinct if path) or "always"
