"""A shell script's launches: the script interpreted (:mod:`mtplint.extract.shell.interpreter`, on
each path through its branches) and each engine command it runs made a launch. The extractor of the
``shell`` kind (:func:`extract`), and the interpreter for the formats that hand a string to a shell."""

from __future__ import annotations

from collections.abc import Iterable

from mtplint.extract import ExtractContext, build_launch
from mtplint.extract.launch import Launch, recognise
from mtplint.extract.shell.interpreter import Interpreter, Loader, ShellCommand
from mtplint.extract.shell.paths import describe
from mtplint.extract.shell.state import State
from mtplint.pathtext import parent_dir
from mtplint.source import EnvEntry, MappedText, SourceFile, Span, Token

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def script_commands(
    text: MappedText,
    env: dict[str, EnvEntry] | None = None,
    base_dir: str | None = None,
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


def launches_in_script(
    source: SourceFile,
    ctx: ExtractContext,
    env: dict[str, EnvEntry] | None = None,
    positional: list[Token] | None = None,
) -> list[Launch]:
    """The engine launches of a shell script file, run with ``env`` (e.g. from a systemd unit)."""
    base_dir = parent_dir(source.path)
    interpreter = Interpreter(base_dir, ctx.loader.load, depth=0)
    commands = interpreter.run_paths(source, State.initial(env or {}, positional))
    return launches_from_commands(commands, source, base_dir)


def launches_from_commands(commands: Iterable[ShellCommand], source: SourceFile, base_dir: str) -> list[Launch]:
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
