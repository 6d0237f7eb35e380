"""Shell scripts: find engine launches and compute the argv/environment each one runs with.

Two layers:

* :func:`split_words` — POSIX word splitting with quote removal and no expansion, for command
  strings other formats hand to a shell-less exec (compose ``command:`` strings, systemd
  ``ExecStart=`` after its own unquoting).
* :func:`script_commands` — a small, static interpreter for a whole script (or an ``sh -c`` string):
  tree-sitter-bash gives the statement structure (lists, pipelines, ``if``/``case``/loops,
  functions); the words themselves are re-read here with bash's quoting and expansion rules, so that
  every character keeps its file offset (through ``\\`` continuations, quote splicing such as
  ``'{"k":'"$N"'}'``, ``$'..'`` strings) and so that tree-sitter quirks in word boundaries do not
  leak into argv.

What the interpreter resolves: assignments (also ``+=``, arrays, ``export``/``declare``/``readonly``,
``set -a`` around ``source .env``), ``VAR=x cmd`` prefixes, ``$VAR``/``${VAR}``, ``${VAR:-d}``,
``${VAR-d}``, ``${VAR:=d}``, ``${VAR:+alt}``, ``${#VAR}``, prefix/suffix removal, ``"${ARR[@]}"``,
word splitting of unquoted expansions, ``set --`` / ``"$@"``. What it never guesses: command
substitution, arithmetic, ``read``, positional parameters of the script — those become unresolved
tokens, and an unquoted unknown expansion or ``"$@"`` becomes a *splat* token (may add any number
of words).

Branches (``if``/``elif``/``else``, ``case`` arms, ``a && b``): :func:`launches_in_script` reads a
script once per path (:mod:`mtplint.extract.shell_paths` has the model and its bounds), so an
array built in steps (``ARGS+=(...)`` in an ``if``) is known on each path. :func:`script_commands`
(an ``sh -c`` string in compose, Kubernetes, Python) reads it once with the branches merged: a value
that differs between them is unknown, and an array keeps the elements all branches start with. A
branch that ends the script (``exit``, ``exec PROGRAM``) is not merged with the rest.

A variable that is never assigned and has a default (``${MODEL:-Qwen/Qwen3-8B}``) takes the default:
that is what the file says the launch runs with unless the caller's environment overrides it.

Functions: a function the script defines is read where it is called (``main "$@"``,
``start_server "$MODEL" 8000``, an arm of ``case "$ENGINE"`` calling ``serve_sglang``), as bash runs
it: ``$1``..``$9``, ``$@``, ``$#`` are the call's words (an unknown word stays unknown), ``local``
variables and ``VAR=x func`` prefixes last for the call, other assignments stay after it, ``return``
ends the call. Commands keep the spans where they are written in the body, plus the calls that led
there (:attr:`ShellCommand.calls`). Calls nest :data:`_MAX_CALLS` deep and never recurse; beyond
that, or for a function from a ``source``\\ d file, the call is not read and the variables the body
assigns become unknown. A function that is never called runs nothing, and ``$(func)`` (a function
that computes a command string) stays unresolved like any command substitution. Commands in
``if``/``while`` bodies, pipelines, ``&&`` lists, subshells and ``cmd &`` are launches too.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from mtplint.extract import ExtractContext, Malformed, build_launch
from mtplint.extract.budget import EXPANSION_DEPTH, ExpansionBudget, over_budget
from mtplint.extract.launch import Launch, recognise
from mtplint.extract.shell_paths import PathChooser, TooManyPaths, all_choices, describe, quote
from mtplint.records import FrozenRecord, Record
from mtplint.source import EnvEntry, MappedText, SourceFile, Span, Token

TYPE_CHECKING = False
if TYPE_CHECKING:  # for the type checker only: `import mtplint.cli` must stay light (tree-sitter is imported lazily)
    from typing import Any, Final

    from tree_sitter import Node

Loader = Callable[[Path], "SourceFile | None"]

SHELL_PROGRAMS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "ash", "busybox"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IFS_WHITESPACE = " \t\n"
_MAX_DEPTH = 6  # nested `sh -c` strings and `source`d files
_MAX_CALLS = 8  # shell functions calling each other (`main` -> `serve` -> `start_vllm`)
#: function bodies read in one reading of a script at most: each function calling the next ten times
#: would otherwise read the innermost body 10**8 times
_MAX_CALLS_READ = 256


# ================================================================================================
# Public API
# ================================================================================================


class ShellCommand(Record):
    """One simple command of a script, after expansion.

    ``conditions``: on which path of the script it ran this way (:mod:`mtplint.extract.shell_paths`),
    each the text of a branch taken earlier (``[[ -n $SPEC ]]``, ``$PROFILE is fast``); empty when
    the script has one path, or it was read with its branches merged.

    ``calls``: the shell functions it ran inside, outermost first, each with where it was called
    (empty at the script's top level)."""

    __slots__ = ("argv", "env", "span", "conditions", "calls")
    argv: list[Token]
    env: dict[str, EnvEntry]
    span: Span | None
    conditions: tuple[str, ...]
    calls: tuple[tuple[str, Span | None], ...]

    def __init__(self, argv: list[Token], env: dict[str, EnvEntry], span: Span | None,
                 conditions: tuple[str, ...] = (), calls: tuple[tuple[str, Span | None], ...] = ()) -> None:
        self.argv = argv
        self.env = env
        self.span = span
        self.conditions = conditions
        self.calls = calls

    @property
    def line(self) -> int:
        return self.span.line if self.span else 1


def split_words(text: MappedText) -> list[MappedText]:
    """Split one command line into words with POSIX quoting rules, without expansion.

    Single quotes are literal; in double quotes a backslash escapes only ``$ ` " \\`` and newline;
    outside quotes a backslash escapes any character; backslash-newline disappears. ``$`` and
    everything after it stay literal. Each word keeps per-character file offsets.
    """
    words: list[MappedText] = []
    lexer = _Lexer(text, None)
    special = _LEXER_SPECIAL.search
    for start, end in _unquoted_word_ranges(text.text, 0, len(text.text)):
        if start < end and special(text.text, start, end) is None:
            words.append(text.slice(start, end))  # no quotes, escapes or `$`: the word is its text
            continue
        pieces = lexer.expand(start, end, quoted=False)
        if not pieces:
            continue
        words.append(MappedText.join([piece.text for piece in pieces]))
    return words


def script_commands(
    text: MappedText,
    env: dict[str, EnvEntry] | None = None,
    base_dir: Path | None = None,
    *,
    load: Loader | None = None,
    positional: list[Token] | None = None,
) -> list[ShellCommand]:
    """Interpret a shell script and return every simple command it runs, with expanded argv.

    ``env`` is the environment the script starts with (exported). ``base_dir`` is where relative
    ``source`` paths are looked up (with ``load`` to read them, default: read the file directly).
    ``positional`` gives the script's arguments when they are known (``"$@"``); by default they are
    unknown. Raises :class:`Malformed` (with a file offset) when the script cannot be read.
    """
    interpreter = _Interpreter(base_dir, load, depth=0)
    state = _State.initial(env or {}, positional)
    return interpreter.run_text(text, state, record=True)


def substitute_words(text: MappedText, variables: dict[str, Token | None],
                     *, split: bool = True) -> list[tuple[Token, MappedText]]:
    """Words of ``text`` with quotes removed and ``$VAR``/``${VAR:-d}``/... substituted, without
    field splitting of the results (Dockerfile ``ENV``/``ARG``/``FROM`` semantics). A variable
    mapped to ``None`` is declared with an unknown value; one not in ``variables`` is unknown too
    (``$(...)`` is never run). With ``split=False`` the whole text is one word (blanks kept).
    """
    state = _State()
    for name, token in variables.items():
        if token is None:
            state.forget(name)
        else:
            state.variables[name] = _Var(_Value(token.value, token.unresolved, token.splat))
    lexer = _Lexer(text, _Expander(state))
    ranges = list(_unquoted_word_ranges(text.text, 0, len(text.text))) if split else [(0, len(text.text))]
    words: list[tuple[Token, MappedText]] = []
    special = _LEXER_SPECIAL.search
    for start, end in ranges:
        if start < end and special(text.text, start, end) is None:
            word = text.slice(start, end)  # no quotes, escapes or `$`: the word is its text
            words.append((Token(word.text, word.span()), word))
            continue
        pieces = lexer.expand(start, end, quoted=False)
        value = _join_pieces(pieces)
        mapped = MappedText.join([piece.text for piece in pieces]) if pieces else text.slice(start, start)
        unresolved = tuple(dict.fromkeys(name for piece in pieces for name in piece.unresolved))
        words.append((Token(value.text, text.slice(start, end).span(), unresolved), mapped))
    return words


def launches_in_script(
    source: SourceFile,
    ctx: ExtractContext,
    env: dict[str, EnvEntry] | None = None,
    positional: list[Token] | None = None,
) -> list[Launch]:
    """The engine launches of a shell script file, run with ``env`` (e.g. from a systemd unit)."""
    interpreter = _Interpreter(source.path.parent, ctx.loader.load, depth=0)
    commands = interpreter.run_paths(source, _State.initial(env or {}, positional))
    return launches_from_commands(commands, source, source.path.parent)


def launches_from_commands(commands: Iterable[ShellCommand], source: SourceFile, base_dir: Path) -> list[Launch]:
    """A launch per engine command; per distinct way it runs when it runs differently on different
    paths of the script, with the branches that lead there (``launch.paths``)."""
    launches: list[Launch] = []
    for variants in _variants_by_command(commands):
        for paths, command in variants:
            recognised = recognise(command.argv)
            if recognised is None:
                continue
            context = f"line {command.line}{_called_from(command.calls)}" + (
                f", when {describe(paths)}" if len(variants) > 1 else "")
            launch = build_launch(recognised, source, base_dir=base_dir, context=context, env=command.env)
            if len(variants) > 1:
                launch.paths = paths
            launches.append(launch)
    return launches


def _variants_by_command(commands: Iterable[ShellCommand]) -> list[list[tuple[list[tuple[str, ...]], ShellCommand]]]:
    """The commands run at each place of the script, in order: each distinct argv and environment
    once, with the paths (conditions) it runs on."""
    by_place: dict[tuple[Any, ...] | int, dict[tuple[Any, ...], tuple[list[tuple[str, ...]], ShellCommand]]] = {}
    for command in commands:
        # a function's command called from two places is two commands, one per call
        place: tuple[Any, ...] | int = (
            (command.span.start, command.span.end, *((span.start if span else -1) for _, span in command.calls))
            if command.span else id(command))
        variants = by_place.setdefault(place, {})
        key = (tuple((token.value, token.unresolved, token.splat) for token in command.argv),
               tuple(sorted((name, entry.value.value, entry.value.unresolved) for name, entry in command.env.items())))
        if key in variants:
            variants[key][0].append(command.conditions)
        else:
            variants[key] = ([command.conditions], command)
    return [list(variants.values()) for variants in by_place.values()]


def _called_from(calls: tuple[tuple[str, Span | None], ...]) -> str:
    """Where a command in a function body was reached from, innermost call first (``, in
    start_server() called at line 12``); nothing at the script's top level."""
    return "".join(f", {'in' if position == 0 else 'from'} {name}() called at line {span.line if span else '?'}"
                   for position, (name, span) in enumerate(reversed(calls)))


def extract(source: SourceFile, ctx: ExtractContext) -> list[Launch]:
    """Launches in a shell script (classified by extension or shebang)."""
    return launches_in_script(source, ctx)


# ================================================================================================
# Values and expansion pieces
# ================================================================================================


class _Value(FrozenRecord):
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
        if not isinstance(other, _Value):
            return NotImplemented
        return (self.text, self.unresolved, self.splat) == (other.text, other.unresolved, other.splat)

    def __hash__(self) -> int:
        return hash((self.text, self.unresolved, self.splat))

    @property
    def resolved(self) -> bool:
        return not self.unresolved and not self.splat


class _Var(FrozenRecord):
    __slots__ = ("scalar", "items", "exported", "entry")
    scalar: Final[_Value]
    items: Final[tuple[_Value, ...] | None]  # an indexed array
    exported: Final[bool]
    entry: Final[EnvEntry | None]

    def __init__(
        self,
        scalar: _Value,
        items: tuple[_Value, ...] | None = None,
        exported: bool = False,
        entry: EnvEntry | None = None,
    ) -> None:
        self.scalar = scalar
        self.items = items
        self.exported = exported
        self.entry = entry

    def with_exported(self, exported: bool) -> _Var:
        return _Var(self.scalar, self.items, exported, self.entry)

    def same_value(self, other: _Var | None) -> bool:
        return other is not None and self.scalar == other.scalar and self.items == other.items

    @property
    def known(self) -> bool:
        if self.items is not None:
            return all(item.resolved for item in self.items)
        return self.scalar.resolved


class _Piece(Record):
    """Part of a word after expansion, before field splitting."""

    __slots__ = ("text", "unresolved", "splittable", "splat", "boundary", "exists", "expression_end")
    text: MappedText
    unresolved: tuple[str, ...]
    splittable: bool  # an unquoted expansion result: IFS splitting applies
    splat: bool  # may be any number of words ("$@", unknown unquoted expansion)
    boundary: bool  # starts a new field ("${ARR[@]}" elements after the first)
    exists: bool  # makes a field exist even when empty ("" or a quoted expansion)
    expression_end: int | None  # file offset just past the expansion that produced it

    def __init__(
        self,
        text: MappedText,
        unresolved: tuple[str, ...] = (),
        splittable: bool = False,
        splat: bool = False,
        boundary: bool = False,
        exists: bool = False,
        expression_end: int | None = None,
    ) -> None:
        self.text = text
        self.unresolved = unresolved
        self.splittable = splittable
        self.splat = splat
        self.boundary = boundary
        self.exists = exists
        self.expression_end = expression_end

    def with_text(self, text: MappedText) -> _Piece:
        return _Piece(text, self.unresolved, self.splittable, self.splat, self.boundary, self.exists,
                      self.expression_end)

    def without_splat(self) -> _Piece:
        return _Piece(self.text, self.unresolved, self.splittable, False, self.boundary, self.exists,
                      self.expression_end)


class _State(Record):
    __slots__ = ("variables", "positional", "allexport", "functions", "conditions", "exited", "returned")
    variables: dict[str, _Var]
    #: None: unknown (the script's own arguments); a splat item: any number of unknown words from there on
    positional: tuple[_Value, ...] | None
    allexport: bool
    #: the functions defined so far: the script that defines each, and its body
    functions: dict[str, tuple[_Script, Node]]
    #: the branches taken so far on this path (see :class:`ShellCommand`)
    conditions: tuple[str, ...]
    #: the script ended here (``exit``, ``exec PROGRAM``): nothing after it runs on this path
    exited: bool
    #: ``exited`` by ``return``: the function call ends, the script goes on after it
    returned: bool

    def __init__(
        self,
        variables: dict[str, _Var] | None = None,
        positional: tuple[_Value, ...] | None = None,
        allexport: bool = False,
        functions: dict[str, tuple[_Script, Node]] | None = None,
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
    def initial(cls, env: dict[str, EnvEntry], positional: list[Token] | None) -> _State:
        state = cls()
        for name, entry in env.items():
            value = _Value(entry.value.value, entry.value.unresolved, entry.value.splat)
            state.variables[name] = _Var(value, exported=True, entry=entry)
        if positional is not None:
            state.positional = tuple(_Value(token.value, token.unresolved, token.splat) for token in positional)
        return state

    def copy(self) -> _State:
        return _State(dict(self.variables), self.positional, self.allexport, dict(self.functions), self.conditions,
                      self.exited, self.returned)

    def same_values(self, other: _State) -> bool:
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
        value = _Value(f"${{{name}}}", (name,))
        entry_span = span or (previous.entry.span if previous and previous.entry else None)
        entry = EnvEntry(name, Token(value.text, entry_span, value.unresolved), entry_span)
        self.variables[name] = _Var(value, None, bool(previous and previous.exported) or self.allexport, entry)


def _merge(states: list[_State]) -> _State:
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
        value = _Value(f"${{{name}}}", (name,))
        span = entry.span if entry else None
        result.variables[name] = _Var(value, _common_items(name, variables), exported,
                                      EnvEntry(name, Token(value.text, span, value.unresolved), span,
                                               entry.origin if entry else "explicit"))
    if any(state.positional != result.positional for state in states):
        result.positional = None
    result.allexport = any(state.allexport for state in states)
    result.conditions = _common_prefix([state.conditions for state in states])
    for state in states[1:]:
        result.functions.update(state.functions)
    return result


def _common_items(name: str, variables: list[_Var | None]) -> tuple[_Value, ...] | None:
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
    return (*prefix, _Value(f"${{{name}[@]:{len(prefix)}}}", (name,), splat=True))


def _common_prefix(sequences: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    shortest = min(sequences, key=len) if sequences else ()
    for position, item in enumerate(shortest):
        if any(sequence[position] != item for sequence in sequences):
            return shortest[:position]
    return shortest


# ================================================================================================
# Word lexer: quoting and expansion on MappedText
# ================================================================================================


def _skip_single_quotes(text: str, index: int) -> int:
    """``index`` is just after an opening ``'``; returns the index of the closing one (or len)."""
    close = text.find("'", index)
    return len(text) if close < 0 else close


#: what :func:`_skip_double_quotes` does more with than step over
_QUOTED_SPECIAL = re.compile(r"[\\\"$`]")


def _skip_double_quotes(text: str, index: int, end: int | None = None) -> int:
    """``index`` is just after an opening ``"``; returns the index of the closing ``"``."""
    end = len(text) if end is None else end
    while index < end:
        # other characters are skipped one by one: jump to the next that is not
        found = _QUOTED_SPECIAL.search(text, index, end)
        if found is None:
            return end
        index = found.start()
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == '"':
            return index
        if char == "$" and text.startswith("$(", index):
            index = _skip_parens(text, index + 2, end) + 1
            continue
        if char == "$" and text.startswith("${", index):
            index = _skip_braces(text, index + 2, end) + 1
            continue
        if char == "`":
            index = _skip_backticks(text, index + 1, end) + 1
            continue
        index += 1
    return end


def _skip_parens(text: str, index: int, end: int | None = None) -> int:
    """``index`` is just after ``$(`` (or ``(``); returns the index of the matching ``)``."""
    end = len(text) if end is None else end
    depth = 1
    while index < end:
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "'":
            index = _skip_single_quotes(text, index + 1) + 1
            continue
        if char == '"':
            index = _skip_double_quotes(text, index + 1, end) + 1
            continue
        if char == "`":
            index = _skip_backticks(text, index + 1, end) + 1
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return end


#: what :func:`_skip_braces` does more with than step over
_BRACED_SPECIAL = re.compile(r"[\\'\"$}]")


def _skip_braces(text: str, index: int, end: int | None = None) -> int:
    """``index`` is just after ``${``; returns the index of the matching ``}``."""
    end = len(text) if end is None else end
    depth = 1
    while index < end:
        # other characters are skipped one by one: jump to the next that is not
        found = _BRACED_SPECIAL.search(text, index, end)
        if found is None:
            return end
        index = found.start()
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "'":
            index = _skip_single_quotes(text, index + 1) + 1
            continue
        if char == '"':
            index = _skip_double_quotes(text, index + 1, end) + 1
            continue
        if text.startswith("$(", index):
            index = _skip_parens(text, index + 2, end) + 1
            continue
        if text.startswith("${", index):
            depth += 1
            index += 2
            continue
        if char == "}":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return end


def _skip_backticks(text: str, index: int, end: int | None = None) -> int:
    end = len(text) if end is None else end
    while index < end:
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == "`":
            return index
        index += 1
    return end


#: what ends or changes the reading of an unquoted word (:func:`_unquoted_word_ranges`)
_WORD_STOP = re.compile(r"[ \t\r\n\\'\"$`]")
#: what :meth:`_Lexer.expand` does more with than step over
_LEXER_SPECIAL = re.compile(r"[\\'\"$`]")


def _unquoted_word_ranges(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Ranges of the words of ``text[start:end]``: separated by unquoted blanks/newlines."""
    index = start
    while index < end:
        while index < end and (text[index] in " \t\r\n" or text.startswith("\\\n", index)):
            index += 2 if text[index] == "\\" else 1
        if index >= end:
            return
        word_start = index
        while index < end:
            # characters other than these only move on by one: jump over them
            stop = _WORD_STOP.search(text, index, end)
            if stop is None:
                index = end
                break
            index = stop.start()
            char = text[index]
            if char in " \t\r\n":
                break
            if char == "\\":
                if text.startswith("\\\n", index) and (index + 2 >= end or text[index + 2] in " \t\r\n"):
                    # `word\<newline><blank>`: the continuation ends the word
                    break
                index += 2
            elif char == "'":
                index = _skip_single_quotes(text, index + 1) + 1
            elif char == '"':
                index = _skip_double_quotes(text, index + 1, end) + 1
            elif text.startswith("$(", index):
                index = _skip_parens(text, index + 2, end) + 1
            elif text.startswith("${", index):
                index = _skip_braces(text, index + 2, end) + 1
            elif char == "`":
                index = _skip_backticks(text, index + 1, end) + 1
            else:
                index += 1
        yield word_start, min(index, end)


_ALL_ELEMENTS = re.compile(r"\$(?:@|\{@\}|\{[A-Za-z_][A-Za-z0-9_]*\[@\]\})")

_ANSI_C_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b",
                   "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


class _Lexer:
    """Expands the characters of one word of ``text`` (quote removal, ``$`` expansions).

    With ``expander=None`` nothing is expanded: ``$...`` stays literal (for :func:`split_words`).
    """

    def __init__(self, text: MappedText, expander: _Expander | None) -> None:
        self.mapped = text
        self.text = text.text
        self.expander = expander

    def literal(self, start: int, end: int) -> MappedText:
        return self.mapped.slice(start, end)

    def char(self, value: str, at: int) -> MappedText:
        offset = self.mapped.offset_at(at)
        return MappedText(value, [offset] * len(value) + [offset + 1], self.mapped.source)

    def expand(self, start: int, end: int, quoted: bool) -> list[_Piece]:
        """Pieces of ``text[start:end]`` read as unquoted word text (``quoted=False``) or as the
        inside of double quotes (``quoted=True``)."""
        pieces: list[_Piece] = []
        text = self.text
        literal_start = start
        index = start

        def flush(upto: int) -> None:
            if upto > literal_start:
                pieces.append(_Piece(self.literal(literal_start, upto), exists=True))

        special = _LEXER_SPECIAL.search
        while index < end:
            # other characters are literal text, taken by ``flush``: jump to the next that is not
            found = special(text, index, end)
            if found is None:
                break
            index = found.start()
            char = text[index]
            if char == "\\":
                flush(index)
                following = text[index + 1] if index + 1 < end else ""
                if following == "\n":
                    index += 2
                elif text.startswith("\r\n", index + 1):
                    index += 3
                elif quoted and following not in ('$', '`', '"', "\\"):
                    pieces.append(_Piece(self.literal(index, min(index + 2, end)), exists=True))
                    index += 2
                elif following:
                    pieces.append(_Piece(self.literal(index + 1, index + 2), exists=True))
                    index += 2
                else:
                    pieces.append(_Piece(self.literal(index, index + 1), exists=True))
                    index += 1
                literal_start = index
                continue
            if char == "'" and not quoted:
                flush(index)
                close = min(_skip_single_quotes(text, index + 1), end)
                pieces.append(_Piece(self.literal(index + 1, close), exists=True))
                index = close + 1
                literal_start = index
                continue
            if char == '"' and not quoted:
                flush(index)
                close = min(_skip_double_quotes(text, index + 1, end), end)
                inner = self.expand(index + 1, close, quoted=True)
                if inner or not _ALL_ELEMENTS.fullmatch(text, index + 1, close):
                    # `"${ARR[@]}"` / `"$@"` of no elements is no word at all, not an empty one
                    pieces.append(_Piece(self.literal(index + 1, index + 1), exists=True))
                pieces.extend(inner)
                index = close + 1
                literal_start = index
                continue
            if char == "$" and not quoted and text.startswith("$'", index):
                flush(index)
                close = index + 2
                while close < end and text[close] != "'":
                    close += 2 if text[close] == "\\" else 1
                close = min(close, end)
                pieces.append(_Piece(self._ansi_c(index + 2, close), exists=True))
                index = close + 1
                literal_start = index
                continue
            if char == "$" and not quoted and text.startswith('$"', index):
                flush(index)
                index += 1  # locale-translated string: read as a plain double-quoted string
                literal_start = index
                continue
            if (char == "$" or char == "`") and self.expander is None:
                # no expansion: keep `$(...)`, `${...}` and backticks whole so quotes inside them
                # are not taken as word quotes
                if text.startswith("$(", index):
                    index = min(_skip_parens(text, index + 2, end) + 1, end)
                elif text.startswith("${", index):
                    index = min(_skip_braces(text, index + 2, end) + 1, end)
                elif char == "`":
                    index = min(_skip_backticks(text, index + 1, end) + 1, end)
                else:
                    index += 1
                continue
            if char == "$" or char == "`":
                assert self.expander is not None
                consumed = self.expander.expansion(self, index, end, quoted, pieces, flush)
                if consumed:
                    index += consumed
                    literal_start = index
                    continue
            index += 1
        flush(end)
        return pieces

    def _ansi_c(self, start: int, end: int) -> MappedText:
        text = self.text
        parts: list[MappedText] = []
        index = start
        while index < end:
            if text[index] == "\\" and index + 1 < end:
                following = text[index + 1]
                if following in _ANSI_C_ESCAPES:
                    parts.append(self.char(_ANSI_C_ESCAPES[following], index))
                    index += 2
                    continue
                match = re.match(r"x([0-9A-Fa-f]{1,2})|([0-7]{1,3})", text[index + 1:end])
                if match:
                    code = int(match.group(1), 16) if match.group(1) else int(match.group(2), 8)
                    parts.append(self.char(chr(code), index))
                    index += 1 + match.end()
                    continue
            parts.append(self.literal(index, index + 1))
            index += 1
        return MappedText.join(parts) if parts else self.literal(start, start)


class _Expander:
    """Parameter expansion against an interpreter state."""

    def __init__(self, state: _State, budget: ExpansionBudget | None = None) -> None:
        self.state = state
        self.budget = budget if budget is not None else ExpansionBudget()
        #: ``${...}`` expressions being expanded, one inside the default of the other
        self.depth = 0

    def expansion(self, lexer: _Lexer, index: int, end: int, quoted: bool, pieces: list[_Piece],
                  flush: Callable[[int], None]) -> int:
        text = lexer.text
        if text[index] == "`":
            close = min(_skip_backticks(text, index + 1, end), end)
            flush(index)
            pieces.append(self._opaque(lexer, index, close + 1, quoted))
            return close + 1 - index
        if text.startswith("$((", index):
            close = min(_skip_parens(text, index + 2, end), end)
            close = close + 1 if close + 1 < end and text[close + 1] == ")" else close
            flush(index)
            pieces.append(self._opaque(lexer, index, close + 1, quoted))
            return close + 1 - index
        if text.startswith("$(", index):
            close = min(_skip_parens(text, index + 2, end), end)
            flush(index)
            pieces.append(self._opaque(lexer, index, close + 1, quoted))
            return close + 1 - index
        if text.startswith("${", index):
            close = _skip_braces(text, index + 2, end)
            if close >= end:
                return 0
            flush(index)
            pieces.extend(self._braced(lexer, index, close, quoted))
            return close + 1 - index
        match = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!\-]").match(text, index + 1, end)
        if match is None:
            return 0
        flush(index)
        pieces.extend(self._parameter(lexer, match.group(0), None, index, match.end(), quoted))
        return match.end() - index

    # --- pieces ---------------------------------------------------------------------------------

    def _opaque(self, lexer: _Lexer, start: int, end: int, quoted: bool) -> _Piece:
        """Command substitution, arithmetic: never resolved."""
        written = lexer.text[start:end]
        return _Piece(lexer.literal(start, end), (written,), splittable=not quoted, exists=quoted,
                      splat=not quoted)

    def _value_piece(self, lexer: _Lexer, value: _Value, start: int, end: int, quoted: bool,
                     written: str) -> _Piece:
        offset = lexer.mapped.offset_at(start)
        expression_end = lexer.mapped.offset_at(end - 1) + 1
        if not self.budget.take(len(value.text)):
            return self._unresolved_piece(lexer, start, end, quoted, (over_budget(written),))
        if not value.resolved:
            return _Piece(lexer.literal(start, end) if value.text == written else
                          MappedText(value.text, [offset] * (len(value.text) + 1), lexer.mapped.source),
                          value.unresolved or (written,), splittable=not quoted, exists=quoted,
                          splat=value.splat or not quoted, expression_end=expression_end)
        # Expanded characters map to the start of the expression; the last one to its end, so a
        # word made of the expansion alone still spans the whole `$NAME` in the file.
        offsets = [offset] * len(value.text) + [expression_end]
        if len(value.text) >= 2:
            offsets[-2] = max(offset, expression_end - 1)
        mapped = MappedText(value.text, offsets, lexer.mapped.source)
        return _Piece(mapped, splittable=not quoted, exists=quoted, expression_end=expression_end)

    def _unresolved_piece(self, lexer: _Lexer, start: int, end: int, quoted: bool, names: tuple[str, ...],
                          splat: bool = False) -> _Piece:
        return _Piece(lexer.literal(start, end), names, splittable=not quoted, exists=quoted,
                      splat=splat or not quoted)

    def _parameter(self, lexer: _Lexer, name: str, index_text: str | None, start: int, end: int,
                   quoted: bool) -> list[_Piece]:
        """``$name`` / ``${name}`` / ``${name[index]}``."""
        written = lexer.text[start:end]
        if name in ("@", "*") or (index_text in ("@", "*")):
            items = self._list_items(name, index_text)
            if items is None:
                label = written if name not in ("@", "*") else f"${name}"
                return [self._unresolved_piece(lexer, start, end, quoted, (label,), splat=True)]
            joined = index_text == "*" or name == "*"
            if quoted and joined:
                return [self._value_piece(lexer, _join_values(items), start, end, True, written)]
            result: list[_Piece] = []
            for position, item in enumerate(items):
                if item.written is not None and item.written.source is lexer.mapped.source:
                    piece = _Piece(item.written, item.unresolved, splittable=not quoted, exists=quoted,
                                   splat=item.splat or (not quoted and not item.resolved))
                else:
                    piece = self._value_piece(lexer, item, start, end, quoted, written)
                piece.boundary = position > 0 and quoted
                result.append(piece)
            if not result and not quoted:
                return []
            return result
        value = self._lookup(name, index_text)
        if value is None:
            return [self._unresolved_piece(lexer, start, end, quoted, (written if not _NAME.fullmatch(name) else name,))]
        return [self._value_piece(lexer, value, start, end, quoted, written)]

    def _list_items(self, name: str, index_text: str | None) -> tuple[_Value, ...] | None:
        if name in ("@", "*"):
            return self.state.positional
        var = self.state.variables.get(name)
        if var is None:
            return None if name not in self.state.variables else ()
        if var.items is not None:
            return var.items
        if not var.scalar.resolved:
            return None
        return (var.scalar,)

    def _lookup(self, name: str, index_text: str | None) -> _Value | None:
        """The value of a parameter; ``None`` when it is unset or unknown."""
        if name.isdigit():
            position = int(name)
            known = _known_positional(self.state.positional)
            if position == 0 or known is None or position > len(known):
                return None
            return known[position - 1]
        if name == "#":
            positional = self.state.positional
            if positional is None or any(item.splat for item in positional):
                return None
            return _Value(str(len(positional)))
        if not _NAME.fullmatch(name):
            return None  # $? $$ $! $-: runtime values
        var = self.state.variables.get(name)
        if var is None:
            return None
        if var.items is not None:
            if index_text is None or index_text == "0":
                return var.items[0] if var.items else _Value("")
            if index_text.isdigit():
                position = int(index_text)
                return var.items[position] if position < len(var.items) else _Value("")
            return _Value(f"${{{name}[{index_text}]}}", (name,))
        if index_text not in (None, "0"):
            return _Value(f"${{{name}[{index_text}]}}", (name,))
        return var.scalar

    def _is_set(self, name: str) -> bool | None:
        """Whether a parameter is set: ``None`` when that cannot be known."""
        if name.isdigit() or name == "@" or name == "*":
            positional, known = self.state.positional, _known_positional(self.state.positional)
            if positional is None or known is None:
                return None
            if name.isdigit():
                return True if int(name) <= len(known) else (False if len(known) == len(positional) else None)
            return True if known else (False if not positional else None)
        var = self.state.variables.get(name)
        if var is None:
            return False
        if var.scalar.unresolved and var.scalar.text == f"${{{name}}}":
            return None  # assigned on some branches only, or by `read`
        return True

    def _braced(self, lexer: _Lexer, start: int, close: int, quoted: bool) -> list[_Piece]:
        """``${...}``: ``start`` is the ``$``, ``close`` the matching ``}``; nested at most
        ``EXPANSION_DEPTH`` deep (``${A:-${B:-…}}``), and unresolved below that."""
        if self.depth >= EXPANSION_DEPTH:
            return [self._unresolved_piece(lexer, start, close + 1, quoted, (over_budget(lexer.text[start:close + 1]),))]
        self.depth += 1
        try:
            return self._braced_expression(lexer, start, close, quoted)
        finally:
            self.depth -= 1

    def _braced_expression(self, lexer: _Lexer, start: int, close: int, quoted: bool) -> list[_Piece]:
        text = lexer.text
        body_start = start + 2
        written = text[start:close + 1]
        end = close + 1
        if text.startswith("#", body_start) and close > body_start + 1:
            name_match = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*]").match(text, body_start + 1, close)
            if name_match and name_match.end() == close:
                value = self._lookup(name_match.group(0), None)
                if value is not None and value.resolved:
                    return [self._value_piece(lexer, _Value(str(len(value.text))), start, end, quoted, written)]
                return [self._unresolved_piece(lexer, start, end, quoted, (written,))]
        if text.startswith("!", body_start):
            return [self._unresolved_piece(lexer, start, end, quoted, (written,))]
        name_match = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!\-]").match(text, body_start, close)
        if name_match is None:
            return [self._unresolved_piece(lexer, start, end, quoted, (written,))]
        name = name_match.group(0)
        cursor = name_match.end()
        index_text: str | None = None
        if cursor < close and text[cursor] == "[":
            bracket = text.find("]", cursor)
            if bracket < 0 or bracket > close:
                return [self._unresolved_piece(lexer, start, end, quoted, (written,))]
            index_text = text[cursor + 1:bracket]
            cursor = bracket + 1
        if cursor == close:
            return self._parameter(lexer, name, index_text, start, end, quoted)
        operator_match = re.compile(r":[-=?+]|[-=?+]|##|#|%%|%|//|/#|/%|/|\^\^|\^|,,|,|:|@").match(text, cursor, close)
        if operator_match is None:
            return [self._unresolved_piece(lexer, start, end, quoted, (written,))]
        operator = operator_match.group(0)
        word_start = operator_match.end()
        if operator in (":-", "-", ":=", "=", ":+", "+", ":?", "?"):
            return self._default(lexer, name, index_text, operator, word_start, close, start, quoted, written)
        value = self._lookup(name, index_text)
        if value is None or not value.resolved:
            return [self._unresolved_piece(lexer, start, end, quoted, (name if value is None else written,))]
        argument = self._word_value(lexer, word_start, close)
        result = _apply_operator(value.text, operator, argument)
        if result is None:
            return [self._unresolved_piece(lexer, start, end, quoted, (written,))]
        return [self._value_piece(lexer, _Value(result), start, end, quoted, written)]

    def _word_value(self, lexer: _Lexer, start: int, end: int) -> _Value | None:
        """The operand of a pattern operator, read like the inside of double quotes."""
        pieces = lexer.expand(start, end, quoted=True)
        value = _join_pieces(pieces)
        return value if value.resolved else None

    def _default(self, lexer: _Lexer, name: str, index_text: str | None, operator: str, word_start: int,
                 close: int, start: int, quoted: bool, written: str) -> list[_Piece]:
        end = close + 1
        is_set = self._is_set(name)
        value = self._lookup(name, index_text) if is_set else None
        if is_set is None or (is_set and value is None) or (value is not None and not value.resolved and
                                                          operator.startswith(":")):
            return [self._unresolved_piece(lexer, start, end, quoted, (written,))]
        null = value is None or value.text == ""
        use_word: bool
        if operator in (":-", ":=", ":?"):
            use_word = null
        elif operator in ("-", "=", "?"):
            use_word = not is_set
        elif operator == ":+":
            use_word = not null
        else:  # "+"
            use_word = bool(is_set)
        if operator in (":+", "+") and not use_word:
            return [] if not quoted else [_Piece(lexer.literal(start, start), exists=True)]
        if not use_word:
            assert value is not None
            return [self._value_piece(lexer, value, start, end, quoted, written)]
        if operator in (":?", "?"):
            return [self._unresolved_piece(lexer, start, end, quoted, (written,))]
        word_pieces = lexer.expand(word_start, close, quoted)
        for piece in word_pieces:
            if piece.expression_end is None:
                piece.expression_end = lexer.mapped.offset_at(close) + 1
        if operator in (":=", "=") and _NAME.fullmatch(name):
            assigned = _join_pieces(word_pieces)
            previous = self.state.variables.get(name)
            span = lexer.literal(start, end).span()
            self.state.variables[name] = _Var(
                assigned, None, bool(previous and previous.exported) or self.state.allexport,
                EnvEntry(name, Token(assigned.text, span, assigned.unresolved, assigned.splat), span))
        if not word_pieces and quoted:
            return [_Piece(lexer.literal(word_start, word_start), exists=True)]
        return word_pieces


def _known_positional(positional: tuple[_Value, ...] | None) -> tuple[_Value, ...] | None:
    """The positional parameters that are known one by one: those before the first that may be any
    number of words (a call's ``"${EXTRA[@]}"`` of unknown length)."""
    if positional is None:
        return None
    return next((positional[:index] for index, item in enumerate(positional) if item.splat), positional)


def _apply_operator(value: str, operator: str, argument: _Value | None) -> str | None:
    """Pattern removal / substitution / case operators on a known value (None: cannot say)."""
    if operator in ("^^", "^", ",,", ","):
        if argument is not None and argument.text not in ("", "?"):
            return None
        if operator == "^^":
            return value.upper()
        if operator == ",,":
            return value.lower()
        if operator == "^":
            return value[:1].upper() + value[1:]
        return value[:1].lower() + value[1:]
    if argument is None:
        return None
    pattern = argument.text
    if operator in ("#", "##"):
        lengths = range(len(value) + 1) if operator == "#" else range(len(value), -1, -1)
        for length in lengths:
            if fnmatch.fnmatchcase(value[:length], pattern):
                return value[length:]
        return value
    if operator in ("%", "%%"):
        lengths = range(len(value), -1, -1) if operator == "%" else range(len(value) + 1)
        for begin in lengths:
            if fnmatch.fnmatchcase(value[begin:], pattern):
                return value[:begin]
        return value
    if operator in ("/", "//", "/#", "/%"):
        search, _, replacement = pattern.partition("/")
        if any(char in search for char in "*?["):
            return None
        if not search:
            return value
        if operator == "/":
            return value.replace(search, replacement, 1)
        if operator == "//":
            return value.replace(search, replacement)
        if operator == "/#":
            return replacement + value[len(search):] if value.startswith(search) else value
        return value[: -len(search)] + replacement if value.endswith(search) else value
    if operator == ":":
        match = re.fullmatch(r"\s*(-?\d+)\s*(?::\s*(-?\d+)\s*)?", pattern)
        if match is None:
            return None
        offset = int(match.group(1))
        offset = max(0, len(value) + offset) if offset < 0 else offset
        if match.group(2) is None:
            return value[offset:]
        length = int(match.group(2))
        return value[offset:offset + length] if length >= 0 else value[offset:len(value) + length]
    return None


def _join_values(items: Iterable[_Value]) -> _Value:
    values = list(items)
    return _Value(" ".join(value.text for value in values),
                  tuple(dict.fromkeys(name for value in values for name in value.unresolved)),
                  any(value.splat for value in values))


def _join_pieces(pieces: Iterable[_Piece]) -> _Value:
    """A word in assignment context: no field splitting, one value."""
    parts = list(pieces)
    return _Value("".join(piece.text.text for piece in parts),
                  tuple(dict.fromkeys(name for piece in parts for name in piece.unresolved)),
                  any(piece.splat and not piece.splittable for piece in parts))


def _fields(pieces: list[_Piece]) -> list[list[_Piece]]:
    """Field splitting (IFS = blank, tab, newline) of unquoted expansion results."""
    fields: list[list[_Piece]] = []
    current: list[_Piece] = []
    exists = False

    def finish() -> None:
        nonlocal current, exists
        if exists or current:
            fields.append(current)
        current, exists = [], False

    only_piece = len(pieces) == 1
    for piece in pieces:
        if piece.boundary:
            finish()
        if piece.splittable and piece.unresolved and _partly_known(piece):
            # `args="--model-path $M --dp $DP"; cmd $args`: the known words stay known
            text = piece.text.text
            ranges = list(_unquoted_word_ranges(text, 0, len(text)))
            if ranges and ranges[0][0] > 0:
                finish()
            for number, (start, end) in enumerate(ranges):
                if number:
                    finish()
                current.append(_split_part(piece, start, end))
                exists = True
            if ranges and ranges[-1][1] < len(text):
                finish()
            continue
        if piece.splittable and (piece.unresolved or piece.splat):
            if only_piece or not piece.text.text:
                current.append(piece)
                exists = True
            else:
                current.append(piece.without_splat())
                exists = True
            continue
        if piece.splittable:
            text = piece.text.text
            run_start = 0
            for position, char in enumerate(text + " "):
                if char in _IFS_WHITESPACE:
                    if position > run_start:
                        current.append(piece.with_text(piece.text.slice(run_start, position)))
                        exists = True
                    if position < len(text):
                        finish()
                    run_start = position + 1
            continue
        current.append(piece)
        exists = exists or piece.exists
    finish()
    return fields


def _partly_known(piece: _Piece) -> bool:
    """An unquoted value that is words around unknown parts (``--dp ${DP}``), not one expansion
    (``$(jq -r .k "$f")``, ``${DP}``): shown as written, an unknown part starts with ``$`` or a backquote."""
    text = piece.text.text
    return text not in piece.unresolved and any(char in _IFS_WHITESPACE for char in text)


def _split_part(piece: _Piece, start: int, end: int) -> _Piece:
    """One word of a partly known value: known unless it holds one of the unknown parts."""
    text = piece.text.slice(start, end)
    if "$" not in text.text and "`" not in text.text:
        return _Piece(text, splittable=True, exists=True, expression_end=piece.expression_end)
    names = tuple(name for name in piece.unresolved if name in text.text) or piece.unresolved
    return _Piece(text, names, splittable=True, splat=text.text.startswith(("$", "`")), exists=True,
                  expression_end=piece.expression_end)


def _field_token(pieces: list[_Piece], whole_word: MappedText | None) -> tuple[Token, MappedText]:
    mapped = MappedText.join([piece.text for piece in pieces]) if pieces else (
        whole_word.slice(0, 0) if whole_word is not None else MappedText("", [0], None))
    unresolved = tuple(dict.fromkeys(name for piece in pieces for name in piece.unresolved))
    splat = any(piece.splat for piece in pieces)
    span: Span | None
    if whole_word is not None:
        span = whole_word.span()
    else:
        span = mapped.span()
        ends = [piece.expression_end for piece in pieces if piece.expression_end is not None]
        if span is not None and ends and mapped.source is not None and max(ends) > span.end:
            span = mapped.source.span(span.start, max(ends))
    return Token(mapped.text, span, unresolved, splat), mapped


# ================================================================================================
# Interpreter
# ================================================================================================


_PARSER: Any = None


def _parse(source_bytes: bytes) -> Any:
    global _PARSER
    if _PARSER is None:
        import tree_sitter_bash
        from tree_sitter import Language, Parser

        _PARSER = Parser(Language(tree_sitter_bash.language()))
    return _PARSER.parse(source_bytes)


_FATAL_ERROR_STARTS = {'"': "unterminated double quote", "'": "unterminated single quote",
                       "`": "unterminated backquote", ")": "unexpected `)`", "}": "unexpected `}`",
                       "fi": "unexpected `fi`", "done": "unexpected `done`", "esac": "unexpected `esac`",
                       "then": "unexpected `then`", "do": "unexpected `do`", "else": "unexpected `else`",
                       "elif": "unexpected `elif`", ";;": "unexpected `;;`", "$(": "unterminated `$(`",
                       "${": "unterminated `${`"}
_STATEMENT_SKIP = {"comment", "test_command", "heredoc_body", "heredoc_start", "heredoc_end", "ERROR",
                   "file_redirect", "heredoc_redirect", "herestring_redirect"}


class _Interpreter:
    def __init__(self, base_dir: Path | None, load: Loader | None, depth: int,
                 sourced: frozenset[Path] = frozenset()) -> None:
        self.base_dir = base_dir
        self.load = load
        self.depth = depth
        self.sourced = sourced
        #: what expansions may still produce in this script (mtplint.extract.budget)
        self.budget = ExpansionBudget()

    # --- entry ----------------------------------------------------------------------------------

    def run_text(self, text: MappedText, state: _State, record: bool, *, whole_file: bool = False) -> list[ShellCommand]:
        script = _Script(text, whole_file)
        script.check()
        runner = _Runner(self, script, record)
        runner.statements(script.root.children, state)
        return runner.commands

    def run_file(self, source: SourceFile, state: _State, record: bool) -> list[ShellCommand]:
        return self.run_text(source.whole(), state, record, whole_file=True)

    def run_paths(self, source: SourceFile, state: _State) -> list[ShellCommand]:
        """The commands of the script on each of its paths (:mod:`mtplint.extract.shell_paths`);
        with more paths than it reads, the commands of one reading with its branches merged."""
        script = _Script(source.whole(), whole_file=True)
        script.check()
        commands: list[ShellCommand] = []

        def read(chooser: PathChooser) -> None:
            runner = _Runner(self, script, record=True, chooser=chooser)
            runner.statements(script.root.children, state.copy())
            commands.extend(runner.commands)

        try:
            all_choices(read)
        except TooManyPaths:
            runner = _Runner(self, script, record=True)
            runner.statements(script.root.children, state)
            return runner.commands
        return commands


_ASTRAL = re.compile("[\U00010000-\U0010FFFF]")


class _Script:
    """A parsed script: the tree plus the mapping from UTF-8 bytes back to characters."""

    def __init__(self, text: MappedText, whole_file: bool = False) -> None:
        self.mapped = text
        #: the text is a file's whole text (:meth:`SourceFile.whole`): character i is at offset i
        self.source = text.source if whole_file else None
        # Carriage returns before newlines (CRLF files) are blanks to bash's reader in practice
        # (`\r` would end up in the last word); tree-sitter trips over them, so parse a copy where
        # they are spaces. Same length, so character positions are unchanged.
        # A `\` before CRLF is read as a continuation too (lenient: bash itself would escape the CR).
        parse_text = text.text.replace("\\\r\n", "\\\n ").replace("\r\n", " \n")
        # Characters outside the Basic Multilingual Plane (emoji, ...) corrupt tree-sitter-bash's memory
        # (a segfault some parses later; found by tests/test_properties.py, tree-sitter 0.24-0.26 with
        # tree-sitter-bash 0.23-0.25). One BMP character for one keeps positions; values are read from
        # the original text, so the emoji survive.
        parse_text = _ASTRAL.sub("\ufffd", parse_text)
        data = parse_text.encode("utf-8")
        if len(data) == len(parse_text):
            self.char_of_byte: list[int] | None = None
        else:
            mapping: list[int] = []
            for index, char in enumerate(parse_text):
                mapping.extend([index] * len(char.encode("utf-8")))
            mapping.append(len(parse_text))
            self.char_of_byte = mapping
        self.tree = _parse(data)
        self.root = self.tree.root_node

    def chars(self, node: Node) -> tuple[int, int]:
        if self.char_of_byte is None:
            return node.start_byte, node.end_byte
        return self.char_of_byte[node.start_byte], self.char_of_byte[node.end_byte]

    def raw(self, node: Node) -> str:
        start, end = self.chars(node)
        return self.mapped.text[start:end]

    def span(self, start: int, end: int) -> Span | None:
        """Where characters ``start:end`` of the script are in the file (``start <= end``)."""
        if self.source is not None:  # as the slice's span, without searching its offsets for the furthest
            return self.source.span(start, end)
        return self.mapped.slice(start, end).span()

    def file_offset(self, index: int) -> int:
        return self.mapped.offset_at(index)

    def check(self) -> None:
        """Raise :class:`Malformed` for what ``bash -n`` would reject and we cannot read around:
        unterminated quotes and compound commands, stray closing keywords. Other tree-sitter ERROR
        nodes (grammar gaps) are skipped where they are."""
        if not self.root.has_error:
            return
        for node in _walk(self.root):
            if node.is_missing:
                start, _ = self.chars(node)
                raise Malformed(f"shell syntax error: missing `{node.type}`", self.file_offset(start))
            if node.type != "ERROR":
                continue
            first = node.children[0] if node.children else None
            start, end = self.chars(node)
            head = self.mapped.text[start:end].lstrip()
            leading = first.type if first is not None else head[:2]
            for token, message in _FATAL_ERROR_STARTS.items():
                if leading == token or (first is None and head.startswith(token)):
                    raise Malformed(f"shell syntax error: {message}", self.file_offset(start))
            if head[:1] in ('"', "'") and not _balanced_quotes(head):
                raise Malformed(f"shell syntax error: {_FATAL_ERROR_STARTS[head[:1]]}", self.file_offset(start))


def _balanced_quotes(text: str) -> bool:
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "'":
            close = text.find("'", index + 1)
            if close < 0:
                return False
            index = close + 1
            continue
        if char == '"':
            close = _skip_double_quotes(text, index + 1)
            if close >= len(text):
                return False
            index = close + 1
            continue
        index += 1
    return True


def _walk(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


class _Runner:
    """Walks the statements of one script with a state, collecting commands.

    With a ``chooser``, branches that leave different states are forks: the runner follows the
    outcome the chooser picks (one path, :mod:`mtplint.extract.shell_paths`); without one, it goes
    on from their merge."""

    def __init__(self, interpreter: _Interpreter, script: _Script, record: bool,
                 chooser: PathChooser | None = None) -> None:
        self.interpreter = interpreter
        self.script = script
        self.record = record
        self.chooser = chooser
        self.commands: list[ShellCommand] = []
        #: the function calls being read, outermost first: the function's name and where it was called
        self.calls: list[tuple[str, Span | None]] = []
        #: per call being read, what its ``local`` variables and ``VAR=x func`` prefixes hid (None: unset)
        self.hidden: list[dict[str, _Var | None]] = []
        #: function bodies read so far (:data:`_MAX_CALLS_READ`)
        self.calls_read = 0

    # --- statements -----------------------------------------------------------------------------

    def statements(self, nodes: Iterable[Node], state: _State) -> None:
        for node in nodes:
            if state.exited:
                return
            self.statement(node, state)

    def statement(self, node: Node, state: _State) -> None:
        kind = node.type
        if not node.is_named or kind in _STATEMENT_SKIP:
            return
        if kind in ("program", "compound_statement", "do_group"):
            self.statements(node.children, state)
        elif kind == "command":
            self.command(node, state)
        elif kind == "variable_assignment":
            self.assign(node, state, export=False)
        elif kind == "variable_assignments":
            for child in node.named_children:
                if child.type == "variable_assignment":
                    self.assign(child, state, export=False)
        elif kind == "declaration_command":
            self.declaration(node, state)
        elif kind == "unset_command":
            self.unset(node, state)
        elif kind == "redirected_statement":
            for child in node.children_by_field_name("body"):
                self.statement(child, state)
        elif kind == "negated_command":
            self.statements(node.named_children, state)
        elif kind == "pipeline":
            for child in node.named_children:
                self.statement(child, state.copy())
        elif kind == "subshell":
            self.statements(node.named_children, state.copy())
        elif kind == "list":
            self.and_or_list(node, state)
        elif kind == "if_statement":
            self.if_statement(node, state)
        elif kind == "case_statement":
            self.case_statement(node, state)
        elif kind in ("while_statement", "until_statement"):
            for condition in node.children_by_field_name("condition"):
                self.statement(condition, state)
            branch = state.copy()
            self.loop_body(node, branch)
            self._adopt(state, _merge([state, branch]))
        elif kind in ("for_statement", "c_style_for_statement", "select_statement"):
            branch = state.copy()
            for variable in node.children_by_field_name("variable"):
                branch.forget(self.script.raw(variable))
            self.loop_body(node, branch)
            self._adopt(state, _merge([state, branch]))
        elif kind == "function_definition":
            names = node.children_by_field_name("name")
            bodies = node.children_by_field_name("body")
            if names and bodies:
                state.functions[self.script.raw(names[0])] = (self.script, bodies[0])

    def loop_body(self, node: Node, state: _State) -> None:
        """A loop's body, read once with its branches merged: what it leaves is merged with not
        running it anyway, so an argument-parsing ``while``/``case`` is no fork per option."""
        chooser, self.chooser = self.chooser, None
        try:
            self.statements(node.children_by_field_name("body"), state)
        finally:
            self.chooser = chooser

    @staticmethod
    def _adopt(state: _State, merged: _State) -> None:
        state.variables = merged.variables
        state.positional = merged.positional
        state.allexport = merged.allexport
        state.functions = merged.functions
        state.conditions = merged.conditions

    def _merge_into(self, state: _State, branches: list[tuple[str, _State]]) -> None:
        self._adopt(state, _merge([branch for _, branch in branches]))
        if all(branch.returned for _, branch in branches):
            state.exited = state.returned = True

    def join(self, node: Node, state: _State, branches: list[tuple[str, _State]]) -> None:
        """Go on after one of ``branches`` (each with the words naming when it runs) ran from
        ``state``: branches that end alike are one outcome; with a chooser, the outcome it picks
        (its label added to the path's conditions), else the merge of all of them."""
        outcomes: list[tuple[list[str], _State]] = []
        if any(not branch.exited for _, branch in branches):
            # a `return` in a function is a path of its own when paths are followed: the script goes
            # on after the call; read with branches merged, it is left out like an `exit`
            branches = [(label, branch) for label, branch in branches
                        if not branch.exited or (branch.returned and self.chooser is not None)]
        if self.chooser is None:  # read with branches merged: no outcome is picked, none need telling apart
            self._merge_into(state, branches)
            return
        for label, branch in branches:
            same = next((outcome for outcome in outcomes if outcome[1].returned == branch.returned
                         and outcome[1].same_values(branch)), None)
            if same is None:
                outcomes.append(([label], branch))
            else:
                same[0].append(label)
        if len(outcomes) == 1:
            self._merge_into(state, branches)
            return
        labels, chosen = outcomes[self.chooser.choose(self.script.file_offset(self.script.chars(node)[0]),
                                                      len(outcomes))]
        before = state.conditions
        self._adopt(state, chosen)
        state.exited = state.returned = chosen.returned
        state.conditions = (*before, " or ".join(labels), *chosen.conditions[len(before):])

    def quoted(self, nodes: Iterable[Node]) -> str:
        """The source text of ``nodes`` (a condition), as a label quotes it."""
        parts = [node for node in nodes if node.is_named]
        if not parts:
            return "``"
        start, _ = self.script.chars(parts[0])
        _, end = self.script.chars(parts[-1])
        return quote(self.script.mapped.text[start:end])

    def and_or_list(self, node: Node, state: _State) -> None:
        """``a && b``, ``a || b``: the left side runs; the right side may not."""
        children = node.children
        operator_index = next((i for i, child in enumerate(children) if child.type in ("&&", "||")), None)
        if operator_index is None:
            self.statements(children, state)
            return
        self.statements(children[:operator_index], state)
        branch = state.copy()
        self.statements(children[operator_index + 1:], branch)
        left = self.quoted(children[:operator_index])
        runs, skips = ("succeeds", "fails") if children[operator_index].type == "&&" else ("fails", "succeeds")
        self.join(node, state, [(f"{left} {runs}", branch), (f"{left} {skips}", state.copy())])

    def if_statement(self, node: Node, state: _State) -> None:
        condition_nodes = node.children_by_field_name("condition")
        conditions = {child.id for child in condition_nodes}
        for child in node.children:
            if child.id in conditions:
                self.statement(child, state)
        branches: list[tuple[str, _State]] = []
        tested = [self.quoted(condition_nodes)]
        then_branch = state.copy()
        has_else = False
        for child in node.children:
            if child.id in conditions or child.type in ("elif_clause", "else_clause"):
                continue
            self.statement(child, then_branch)
        branches.append((tested[0], then_branch))
        remaining = state.copy()
        for child in node.children:
            if child.type == "elif_clause":
                elif_conditions = {c.id for c in child.children_by_field_name("condition")}
                # the first named statement before `then` is the condition in this grammar
                in_condition = True
                branch = remaining
                condition_parts: list[Node] = []
                for part in child.children:
                    if part.type == "then":
                        in_condition = False
                        branch = remaining.copy()
                        continue
                    if in_condition or part.id in elif_conditions:
                        if part.type != "elif":
                            condition_parts.append(part)
                        self.statement(part, remaining)
                    else:
                        self.statement(part, branch)
                tested.append(self.quoted(condition_parts))
                branches.append((tested[-1], branch))
            elif child.type == "else_clause":
                has_else = True
                branch = remaining.copy()
                self.statements(child.children, branch)
                branches.append((_none_of(tested), branch))
        if not has_else:
            branches.append((_none_of(tested), remaining))
        self.join(node, state, branches)

    def case_statement(self, node: Node, state: _State) -> None:
        branches: list[tuple[str, _State]] = []
        exhaustive = False
        subject_nodes = node.children_by_field_name("value")
        subject = quote(self.script.raw(subject_nodes[0]).strip().removeprefix('"').removesuffix('"')) \
            if subject_nodes else "``"
        patterns: list[str] = []
        for item in node.children:
            if item.type != "case_item":
                continue
            value_nodes = item.children_by_field_name("value")
            values = {child.id for child in value_nodes}
            written = "|".join(self.script.raw(child).strip() for child in value_nodes)
            catch_all = any(self.script.raw(child).strip() == "*" for child in value_nodes)
            exhaustive = exhaustive or catch_all
            branch = state.copy()
            for child in item.children:
                if child.id not in values:
                    self.statement(child, branch)
            label = f"{subject} is none of {', '.join(patterns)}" if catch_all and patterns else \
                f"{subject} matches {quote(written)}"
            patterns.append(quote(written))
            branches.append((label, branch))
        if not exhaustive:
            branches.append((f"{subject} is none of {', '.join(patterns)}", state.copy()))
        if branches:
            self.join(node, state, branches)

    # --- words ----------------------------------------------------------------------------------

    def word_ranges(self, nodes: list[Node]) -> list[tuple[int, int]]:
        """Character ranges of the words of ``nodes`` (argument nodes of one command). Adjacent
        nodes separated only by ``\\``-newline are one word: tree-sitter-bash splits them."""
        ranges: list[tuple[int, int]] = []
        text = self.script.mapped.text
        for node in nodes:
            start, end = self.script.chars(node)
            if ranges:
                previous_start, previous_end = ranges[-1]
                gap = text[previous_end:start]
                if gap in ("", "\\\n", "\\\r\n"):
                    ranges[-1] = (previous_start, end)
                    continue
            ranges.append((start, end))
        return ranges

    def expand_words(self, ranges: list[tuple[int, int]], state: _State) -> list[tuple[Token, MappedText]]:
        mapped = self.script.mapped
        text = mapped.text
        special = _LEXER_SPECIAL.search
        lexer: _Lexer | None = None
        result: list[tuple[Token, MappedText]] = []
        for start, end in ranges:
            if start < end and special(text, start, end) is None:
                # most words have no quotes, escapes or `$`: such a word is one field, its own text
                word = mapped.slice(start, end)
                result.append((Token(word.text, self.script.span(start, end)), word))
                continue
            if lexer is None:
                lexer = _Lexer(mapped, _Expander(state, self.interpreter.budget))
            pieces = lexer.expand(start, end, quoted=False)
            fields = _fields(pieces)
            whole = mapped.slice(start, end) if len(fields) == 1 else None
            for field_pieces in fields:
                result.append(_field_token(field_pieces, whole))
        return result

    def expand_value(self, start: int, end: int, state: _State) -> _Value:
        lexer = _Lexer(self.script.mapped, _Expander(state, self.interpreter.budget))
        return _join_pieces(lexer.expand(start, end, quoted=False))

    # --- assignments ----------------------------------------------------------------------------

    def assignment_parts(self, node: Node) -> tuple[str, str | None, bool, int, int, Node | None]:
        """(name, index, append, value start, value end, array node) of ``name[i]+=value``."""
        raw_start, raw_end = self.script.chars(node)
        text = self.script.mapped.text
        match = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[([^\]]*)\])?(\+?)=").match(text, raw_start, raw_end)
        values = node.children_by_field_name("value")
        array = values[0] if values and values[0].type == "array" else None
        if match is None:
            name = self.script.raw(node).split("=", 1)[0]
            return name, None, False, raw_end, raw_end, array
        return match.group(1), match.group(2), bool(match.group(3)), match.end(), raw_end, array

    def assignment(self, node: Node, state: _State) -> tuple[str, _Var, EnvEntry] | None:
        name, index_text, append, value_start, value_end, array = self.assignment_parts(node)
        if not _NAME.fullmatch(name):
            return None
        span = self.script.span(*self.script.chars(node))
        previous = state.variables.get(name)
        exported = bool(previous and previous.exported) or state.allexport
        if array is not None:
            # a `# comment` line between the elements is no element
            words = [child for child in array.named_children if child.type != "comment"]
            items = tuple(_Value(token.value, token.unresolved, token.splat, _as_written(token, mapped))
                          for token, mapped in self.expand_words(self.word_ranges(words), state))
            if append and previous is not None:
                base = previous.items if previous.items is not None else (previous.scalar,)
                items = base + items
            joined = _join_values(items)
            token = Token(joined.text, self.script.span(value_start, value_end), joined.unresolved,
                          joined.splat)
            var = _Var(items[0] if items else _Value(""), items, exported, EnvEntry(name, token, span))
            return name, var, EnvEntry(name, token, span)
        value = self.expand_value(value_start, value_end, state)
        if index_text is not None:
            base_items = previous.items if previous is not None and previous.items is not None else (
                (previous.scalar,) if previous is not None else ())
            if index_text.isdigit():
                position = int(index_text)
                padded = list(base_items) + [_Value("")] * max(0, position + 1 - len(base_items))
                padded[position] = _Value(padded[position].text + value.text, value.unresolved) if append else value
                items = tuple(padded)
                var = _Var(items[0], items, exported, previous.entry if previous else None)
                return name, var, EnvEntry(name, Token(value.text, span, value.unresolved), span)
            state.forget(name)
            return None
        if append and previous is not None:
            if previous.items is not None:
                items = (*previous.items, value)
                var = _Var(items[0], items, exported, previous.entry)
                return name, var, EnvEntry(name, Token(value.text, span, value.unresolved), span)
            value = _Value(previous.scalar.text + value.text,
                           tuple(dict.fromkeys((*previous.scalar.unresolved, *value.unresolved))),
                           previous.scalar.splat or value.splat)
        token = Token(value.text, self.script.span(value_start, value_end) if value_end > value_start
                      else span, value.unresolved, value.splat)
        entry = EnvEntry(name, token, span)
        return name, _Var(value, None, exported, entry), entry

    def assign(self, node: Node, state: _State, export: bool) -> None:
        result = self.assignment(node, state)
        if result is None:
            return
        name, var, _ = result
        if export:
            var = var.with_exported(True)
        state.variables[name] = var

    def declaration(self, node: Node, state: _State) -> None:
        keyword = node.children[0].type if node.children else ""
        options = [self.script.raw(child) for child in node.named_children if child.type == "word"
                   and self.script.raw(child).startswith(("-", "+"))]
        if self.hidden and (keyword == "local" or (keyword in ("declare", "typeset") and
                                                   not any("g" in option for option in options))):
            # in a function, `local`/`declare` make the name the call's own: the caller's value comes back after it
            hidden = self.hidden[-1]
            for child in node.named_children:
                if child.type in ("variable_assignment", "variable_name"):
                    name = self.assignment_parts(child)[0] if child.type == "variable_assignment" else self.script.raw(child)
                    if name not in hidden:
                        hidden[name] = state.variables.get(name)
        export = keyword == "export" or any(option.startswith("-") and "x" in option for option in options)
        unexport = keyword == "export" and "-n" in options
        if keyword == "export" and "-f" in options:
            return
        for child in node.named_children:
            if child.type == "variable_assignment":
                self.assign(child, state, export=export and not unexport)
            elif child.type == "variable_name":
                name = self.script.raw(child)
                previous = state.variables.get(name)
                if previous is not None:
                    state.variables[name] = previous.with_exported(export and not unexport)
                elif export and keyword == "export":
                    # `export NAME` of a variable the script never set: it comes from outside.
                    pass
                elif keyword in ("local", "declare", "typeset"):
                    span = self.script.span(*self.script.chars(child))
                    state.variables[name] = _Var(_Value(""), None, export, EnvEntry(name, Token("", span), span))

    def unset(self, node: Node, state: _State) -> None:
        for child in node.named_children:
            name = self.script.raw(child)
            if name.startswith("-"):
                continue
            state.variables.pop(name, None)
            state.functions.pop(name, None)

    # --- commands -------------------------------------------------------------------------------

    def command(self, node: Node, state: _State) -> None:
        prefix_nodes: list[Node] = []
        word_nodes: list[Node] = []
        for index, child in enumerate(node.children):
            field_name = node.field_name_for_child(index)
            if child.type == "variable_assignment" and not word_nodes:
                prefix_nodes.append(child)
            elif field_name in ("name", "argument"):
                word_nodes.append(child)
        words = self.expand_words(self.word_ranges(word_nodes), state)
        if not words:
            # `A=1 B=2` alone: plain assignments (tree-sitter reads some of these as a command)
            for prefix in prefix_nodes:
                self.assign(prefix, state, export=False)
            return
        environment = state.environment()
        for prefix in prefix_nodes:
            result = self.assignment(prefix, state)
            if result is not None:
                name, _var, entry = result
                environment[name] = entry
        argv = [token for token, _ in words]
        span = argv[0].span
        calls = tuple(self.calls)
        if self.reads_call(argv[0], state):
            if self.record:  # the call, then what its body runs
                self.commands.append(ShellCommand(argv, environment, span, state.conditions, calls))
            self.read_call(words, prefix_nodes, state)
            return
        if argv[0].resolved and argv[0].value == "return" and self.calls:
            state.exited = state.returned = True
            return
        self.builtin(argv, words, state, environment)
        if self.record:
            self.commands.append(ShellCommand(argv, environment, span, state.conditions, calls))
        if argv[0].resolved and (argv[0].value == "exit" or (argv[0].value == "exec" and len(argv) > 1)):
            state.exited = True  # `exec PROGRAM` replaces the shell; `exec >log` only redirects

    def reads_call(self, program: Token, state: _State) -> bool:
        """Whether a command is a call of a function this reader reads at the call: one of this
        script, not already being read (no recursion), not nested deeper than :data:`_MAX_CALLS`,
        within :data:`_MAX_CALLS_READ`."""
        if not program.resolved or len(self.calls) >= _MAX_CALLS or self.calls_read >= _MAX_CALLS_READ:
            return False
        function = state.functions.get(program.value)
        return function is not None and function[0] is self.script and \
            all(name != program.value for name, _ in self.calls)

    def read_call(self, words: list[tuple[Token, MappedText]], prefix_nodes: list[Node], state: _State) -> None:
        """Run a function's body at its call, as bash does: the call's words are ``$1``.. and
        ``$@`` during it; ``local`` variables and ``VAR=x`` prefixes are undone after it."""
        program, arguments = words[0][0], words[1:]
        _, body = state.functions[program.value]
        caller_positional = state.positional
        hidden: dict[str, _Var | None] = {}
        for prefix in prefix_nodes:  # `VAR=x func`: exported to what the body runs, for the call only
            result = self.assignment(prefix, state)
            if result is not None:
                name, var, _ = result
                hidden.setdefault(name, state.variables.get(name))
                state.variables[name] = var.with_exported(True)
        if caller_positional is None and len(arguments) == 1 and arguments[0][0].splat and \
                arguments[0][0].unresolved == ("$@",):
            pass  # `main "$@"`: the function's arguments are the script's, unknown the same way
        else:
            state.positional = tuple(_Value(token.value, token.unresolved, token.splat, _as_written(token, mapped))
                                     for token, mapped in arguments)
        self.calls_read += 1
        self.calls.append((program.value, program.span))
        self.hidden.append(hidden)
        try:
            self.statement(body, state)
        finally:
            self.calls.pop()
            self.hidden.pop()
        if state.returned:
            state.exited = state.returned = False
        if not state.exited:
            state.positional = caller_positional
            for name, previous in hidden.items():
                if previous is None:
                    state.variables.pop(name, None)
                else:
                    state.variables[name] = previous

    def builtin(self, argv: list[Token], words: list[tuple[Token, MappedText]], state: _State,
                environment: dict[str, EnvEntry]) -> None:
        """Effects of builtins on the state, and scripts run through ``sh -c``."""
        program = argv[0].value if argv[0].resolved else ""
        arguments = argv[1:]
        if program == "set":
            self.set_builtin(arguments, state)
        elif program in ("source", ".") and arguments:
            self.source(arguments[0], state)
        elif program in ("read", "mapfile", "readarray", "getopts"):
            for token in arguments:
                if token.resolved and _NAME.fullmatch(token.value) and not token.value.startswith("-"):
                    state.forget(token.value, token.span)
        elif program == "printf" and len(arguments) >= 2 and arguments[0].value == "-v":
            state.forget(arguments[1].value, arguments[1].span)
        elif program == "shift":
            count = int(arguments[0].value) if arguments and arguments[0].value.isdigit() else 1
            known = _known_positional(state.positional)
            if known is not None and state.positional is not None:
                # past an argument of unknown length, which words are left is unknown
                state.positional = state.positional[count:] if count <= len(known) else None
        elif program == "eval" or program in state.functions:
            function = state.functions.get(program)
            if function is not None:  # not read at the call (`reads_call`): what it assigns is unknown after it
                script, body = function
                reader = self if script is self.script else _Runner(self.interpreter, script, record=False)
                for name in reader.assigned_names(body):
                    state.forget(name)
        elif program == "cd":
            return
        self.nested_shell(words, state, environment)

    def set_builtin(self, arguments: list[Token], state: _State) -> None:
        """``set -a``/``set +a``/``set -o allexport`` and ``set -- args`` (new positional parameters)."""
        position = 0
        while position < len(arguments):
            value = arguments[position].value
            if value == "--" or not value.startswith(("-", "+")) or value in ("-", "+"):
                start = position + 1 if value in ("--", "-") else position
                if value == "-" or start < len(arguments) or value == "--":
                    state.positional = tuple(_Value(t.value, t.unresolved, t.splat) for t in arguments[start:])
                return
            flags = value[1:]
            turn_on = value.startswith("-")
            if "a" in flags:
                state.allexport = turn_on
            if "o" in flags:
                position += 1
                if position < len(arguments) and arguments[position].value == "allexport":
                    state.allexport = turn_on
            position += 1

    def assigned_names(self, body: Node) -> set[str]:
        names: set[str] = set()
        for node in _walk(body):
            if node.type == "variable_assignment":
                parent = node.parent
                if parent is not None and parent.type == "declaration_command" and parent.children and \
                        parent.children[0].type == "local":
                    continue
                if parent is not None and parent.type == "command":
                    continue  # `VAR=x cmd` prefix
                names.add(self.assignment_parts(node)[0])
        return names

    def source(self, path_token: Token, state: _State) -> None:
        """``source FILE`` / ``. FILE``: its assignments (and ``export``\\s) apply here; its
        commands are not reported (they belong to another file's launches)."""
        interpreter = self.interpreter
        if not path_token.resolved or interpreter.depth >= _MAX_DEPTH:
            return
        path = Path(path_token.value)
        if not path.is_absolute():
            if interpreter.base_dir is None:
                return
            path = interpreter.base_dir / path
        try:
            resolved = path.resolve()
        except OSError:
            return
        if resolved in interpreter.sourced:
            return
        loaded = _load(path, interpreter.load)
        if loaded is None:
            return
        nested = _Interpreter(interpreter.base_dir, interpreter.load, interpreter.depth + 1,
                              interpreter.sourced | {resolved})
        try:
            nested.run_file(loaded, state, record=False)
        except Malformed:
            return

    def nested_shell(self, words: list[tuple[Token, MappedText]], state: _State,
                     environment: dict[str, EnvEntry]) -> None:
        """``bash -c 'script'`` (also after ``exec``/``nohup``): interpret the string as a script."""
        tokens = [token for token, _ in words]
        index = 0
        while index < len(tokens) and tokens[index].resolved and tokens[index].value in ("exec", "nohup", "setsid", "time"):
            index += 1
        if index >= len(tokens) or not tokens[index].resolved:
            return
        if tokens[index].value.rsplit("/", 1)[-1] not in SHELL_PROGRAMS:
            return
        position = index + 1
        has_c = False
        while position < len(tokens) and tokens[position].resolved and tokens[position].value.startswith(("-", "+")):
            option = tokens[position].value
            position += 1
            if option in ("-o", "+o", "-O", "+O"):
                position += 1
            elif not option.startswith("--") and "c" in option[1:]:
                has_c = True
        if not has_c or position >= len(tokens) or self.interpreter.depth >= _MAX_DEPTH:
            return
        script_text = words[position][1]
        positional = tokens[position + 2:]
        nested = _Interpreter(self.interpreter.base_dir, self.interpreter.load, self.interpreter.depth + 1,
                              self.interpreter.sourced)
        inner_state = _State.initial(environment, positional)
        inner_state.functions = {}
        try:
            self.commands.extend(nested.run_text(script_text, inner_state, record=self.record))
        except Malformed:
            return


def _as_written(token: Token, mapped: MappedText) -> MappedText:
    """An array element's text, spanning its whole word as written (quotes included, as the span of
    the same word on a command line would)."""
    if token.span is None or not mapped.text or mapped.source is None:
        return mapped
    offsets = list(mapped.offsets)
    offsets[0] = min(offsets[0], token.span.start)
    offsets[len(mapped.text) - 1] = max(offsets[len(mapped.text) - 1], token.span.end - 1)
    return MappedText(mapped.text, offsets, mapped.source)


def _none_of(tested: list[str]) -> str:
    return f"not {tested[0]}" if len(tested) == 1 else f"none of {', '.join(tested)}"


def _load(path: Path, load: Loader | None) -> SourceFile | None:
    if load is not None:
        return load(path)
    try:
        return SourceFile(path, path.as_posix(), path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
