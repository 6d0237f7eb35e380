"""What the interpreter knows while it reads a script: shell values, variables (scalars and indexed
arrays, exported or not), positional parameters, the functions defined so far and the branches
taken; and how states left by different branches merge (a value that differs becomes unknown).
"""

from __future__ import annotations

from mtplint.records import FrozenRecord, Record
from mtplint.source import EnvEntry, MappedText, Span, Token
from mtplint.startup import DeferredPattern

TYPE_CHECKING = False
if TYPE_CHECKING:  # for the type checker only: tree-sitter is imported when a script is parsed
    from typing import Any, Final

    from tree_sitter import Node

    from mtplint.extract.shell.script import Script

#: a shell variable's name
NAME = DeferredPattern(r"[A-Za-z_][A-Za-z0-9_]*")


class Value(FrozenRecord):
    """A scalar shell value; ``text`` of an unresolved value is how it was written (``$(nproc)``).

    ``written``: an array element's text where the script wrote it (``ARGS=(... --enforce-eager)``),
    so that ``"${ARGS[@]}"`` gives each word the place it was written; not part of the value."""

    __slots__ = ("text", "unresolved", "splat", "written")
    text: Final[str]
    unresolved: Final[tuple[str, ...]]
    splat: Final[bool]
    written: Final[MappedText | None]

    def __init__(self, text: str, unresolved: tuple[str, ...] = (), splat: bool = False,
                 written: MappedText | None = None) -> None:
        self.text = text
        self.unresolved = unresolved
        self.splat = splat
        self.written = written

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Value):
            return NotImplemented
        return (self.text, self.unresolved, self.splat) == (other.text, other.unresolved, other.splat)

    def __hash__(self) -> int:
        return hash((self.text, self.unresolved, self.splat))

    @property
    def resolved(self) -> bool:
        return not self.unresolved and not self.splat


class Var(FrozenRecord):
    __slots__ = ("scalar", "items", "exported", "entry")
    scalar: Final[Value]
    items: Final[tuple[Value, ...] | None]  # an indexed array
    exported: Final[bool]
    entry: Final[EnvEntry | None]

    def __init__(
        self,
        scalar: Value,
        items: tuple[Value, ...] | None = None,
        exported: bool = False,
        entry: EnvEntry | None = None,
    ) -> None:
        self.scalar = scalar
        self.items = items
        self.exported = exported
        self.entry = entry

    def with_exported(self, exported: bool) -> Var:
        return Var(self.scalar, self.items, exported, self.entry)

    def same_value(self, other: Var | None) -> bool:
        return other is not None and self.scalar == other.scalar and self.items == other.items

    @property
    def known(self) -> bool:
        if self.items is not None:
            return all(item.resolved for item in self.items)
        return self.scalar.resolved


class State(Record):
    __slots__ = ("variables", "positional", "allexport", "functions", "conditions", "exited", "returned")
    variables: dict[str, Var]
    #: None: unknown (the script's own arguments); a splat item: any number of unknown words from there on
    positional: tuple[Value, ...] | None
    allexport: bool
    #: the functions defined so far: the script that defines each, and its body
    functions: dict[str, tuple[Script, Node]]
    #: the branches taken so far on this path (see :class:`ShellCommand`)
    conditions: tuple[str, ...]
    #: the script ended here (``exit``, ``exec PROGRAM``): nothing after it runs on this path
    exited: bool
    #: ``exited`` by ``return``: the function call ends, the script goes on after it
    returned: bool

    def __init__(
        self,
        variables: dict[str, Var] | None = None,
        positional: tuple[Value, ...] | None = None,
        allexport: bool = False,
        functions: dict[str, tuple[Script, Node]] | None = None,
        conditions: tuple[str, ...] = (),
        exited: bool = False,
        returned: bool = False,
    ) -> None:
        self.variables = variables if variables is not None else {}
        self.positional = positional
        self.allexport = allexport
        self.functions = functions if functions is not None else {}
        self.conditions = conditions
        self.exited = exited
        self.returned = returned

    @classmethod
    def initial(cls, env: dict[str, EnvEntry], positional: list[Token] | None) -> State:
        state = cls()
        for name, entry in env.items():
            value = Value(entry.value.value, entry.value.unresolved, entry.value.splat)
            state.variables[name] = Var(value, exported=True, entry=entry)
        if positional is not None:
            state.positional = tuple(Value(token.value, token.unresolved, token.splat) for token in positional)
        return state

    def copy(self) -> State:
        return State(dict(self.variables), self.positional, self.allexport, dict(self.functions), self.conditions,
                      self.exited, self.returned)

    def same_values(self, other: State) -> bool:
        """Whether the script goes on the same way from either state (what it has run aside)."""
        if self.positional != other.positional or self.allexport != other.allexport:
            return False
        for name in self.variables.keys() | other.variables.keys():
            mine, theirs = self.variables.get(name), other.variables.get(name)
            if mine is None or theirs is None:
                if mine is not theirs:
                    return False
            elif not mine.same_value(theirs) or mine.exported != theirs.exported:
                return False
        return True

    def environment(self) -> dict[str, EnvEntry]:
        return {name: var.entry for name, var in self.variables.items()
                if var.exported and var.entry is not None and var.items is None}

    def forget(self, name: str, span: Span | None = None) -> None:
        """``name`` now has a value this reader cannot know (``read X``, a branch, a function)."""
        previous = self.variables.get(name)
        value = Value(f"${{{name}}}", (name,))
        entry_span = span or (previous.entry.span if previous and previous.entry else None)
        entry = EnvEntry(name, Token(value.text, entry_span, value.unresolved), entry_span)
        self.variables[name] = Var(value, None, bool(previous and previous.exported) or self.allexport, entry)


def merge(states: list[State]) -> State:
    """The state after one of ``states`` ran; values that differ between them become unknown.
    States that ended the script (``exit``) do not go on: only when all of them did, neither does the merge."""
    running = [state for state in states if not state.exited]
    states = running or states[:1]
    result = states[0].copy()
    names = {name for state in states for name in state.variables}
    for name in names:
        variables = [state.variables.get(name) for state in states]
        first = variables[0]
        exported = any(var is not None and var.exported for var in variables)
        if first is not None and all(first.same_value(var) for var in variables[1:]):
            result.variables[name] = first.with_exported(exported)
            continue
        entry = next((var.entry for var in variables if var is not None and var.entry is not None), None)
        value = Value(f"${{{name}}}", (name,))
        span = entry.span if entry else None
        result.variables[name] = Var(value, _common_items(name, variables), exported,
                                      EnvEntry(name, Token(value.text, span, value.unresolved), span,
                                               entry.origin if entry else "explicit"))
    if any(state.positional != result.positional for state in states):
        result.positional = None
    result.allexport = any(state.allexport for state in states)
    result.conditions = _common_prefix([state.conditions for state in states])
    for state in states[1:]:
        result.functions.update(state.functions)
    return result


def _common_items(name: str, variables: list[Var | None]) -> tuple[Value, ...] | None:
    """An array that ends differently on different branches (``ARGS+=(--flag)`` in an ``if``): the
    elements every branch starts with stay known, the rest is one element of unknown length
    (``"${ARGS[@]}"`` then still shows the program and its first arguments)."""
    if any(var is None or var.items is None for var in variables):
        return None
    lists = [var.items for var in variables if var is not None and var.items is not None]
    prefix = _common_prefix(lists)
    while prefix and prefix[-1].splat and prefix[-1].unresolved == (name,):
        prefix = prefix[:-1]  # one unknown run of elements, however many branches made it
    if not prefix:
        return None
    return (*prefix, Value(f"${{{name}[@]:{len(prefix)}}}", (name,), splat=True))


def _common_prefix(sequences: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    shortest = min(sequences, key=len) if sequences else ()
    for position, item in enumerate(shortest):
        if any(sequence[position] != item for sequence in sequences):
            return shortest[:position]
    return shortest
