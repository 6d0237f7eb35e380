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
script once per path (:mod:`mtplint.extract.shell.paths` has the model and its bounds), so an
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
there (:attr:`ShellCommand.calls`). Calls nest a few deep (the bounds are in
:mod:`~mtplint.extract.shell.interpreter`) and never recurse; beyond that, or for a function from a
``source``\\ d file, the call is not read and the variables the body assigns become unknown. A
function that is never called runs nothing, and ``$(func)`` (a function that computes a command
string) stays unresolved like any command substitution. Commands in ``if``/``while`` bodies,
pipelines, ``&&`` lists, subshells and ``cmd &`` are launches too.

The package, by concern:

* :mod:`~mtplint.extract.shell.scanning` — where quoted parts, ``$(...)``, ``${...}`` and words end;
* :mod:`~mtplint.extract.shell.state` — values, variables and the interpreter's state, merged at branches;
* :mod:`~mtplint.extract.shell.expansion` — quote removal, parameter expansion, field splitting;
* :mod:`~mtplint.extract.shell.interpreter` — the statements of a parsed script, walked with a state;
* :mod:`~mtplint.extract.shell.paths` — the paths through a script's branches.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from mtplint.extract import ExtractContext, build_launch
from mtplint.extract.launch import Launch, recognise
from mtplint.extract.shell.expansion import Expander, Lexer, join_pieces, plain_word
from mtplint.extract.shell.interpreter import SHELL_PROGRAMS, Interpreter, Loader, ShellCommand
from mtplint.extract.shell.paths import describe
from mtplint.extract.shell.scanning import unquoted_word_ranges
from mtplint.extract.shell.state import State, Value, Var
from mtplint.source import EnvEntry, MappedText, SourceFile, Span, Token

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["SHELL_PROGRAMS", "Loader", "ShellCommand", "extract", "launches_from_commands", "launches_in_script",
           "script_commands", "split_words", "substitute_words"]


def split_words(text: MappedText) -> list[MappedText]:
    """Split one command line into words with POSIX quoting rules, without expansion.

    Single quotes are literal; in double quotes a backslash escapes only ``$ ` " \\`` and newline;
    outside quotes a backslash escapes any character; backslash-newline disappears. ``$`` and
    everything after it stay literal. Each word keeps per-character file offsets.
    """
    words: list[MappedText] = []
    lexer = Lexer(text, None)
    for start, end in unquoted_word_ranges(text.text, 0, len(text.text)):
        if plain_word(text.text, start, end):
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
    interpreter = Interpreter(base_dir, load, depth=0)
    state = State.initial(env or {}, positional)
    return interpreter.run_text(text, state, record=True)


def substitute_words(text: MappedText, variables: dict[str, Token | None],
                     *, split: bool = True) -> list[tuple[Token, MappedText]]:
    """Words of ``text`` with quotes removed and ``$VAR``/``${VAR:-d}``/... substituted, without
    field splitting of the results (Dockerfile ``ENV``/``ARG``/``FROM`` semantics). A variable
    mapped to ``None`` is declared with an unknown value; one not in ``variables`` is unknown too
    (``$(...)`` is never run). With ``split=False`` the whole text is one word (blanks kept).
    """
    state = State()
    for name, token in variables.items():
        if token is None:
            state.forget(name)
        else:
            state.variables[name] = Var(Value(token.value, token.unresolved, token.splat))
    lexer = Lexer(text, Expander(state))
    ranges = list(unquoted_word_ranges(text.text, 0, len(text.text))) if split else [(0, len(text.text))]
    words: list[tuple[Token, MappedText]] = []
    for start, end in ranges:
        if plain_word(text.text, start, end):
            word = text.slice(start, end)  # no quotes, escapes or `$`: the word is its text
            words.append((Token(word.text, word.span()), word))
            continue
        pieces = lexer.expand(start, end, quoted=False)
        value = join_pieces(pieces)
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
    interpreter = Interpreter(source.path.parent, ctx.loader.load, depth=0)
    commands = interpreter.run_paths(source, State.initial(env or {}, positional))
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
