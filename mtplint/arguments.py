"""The command line's words: its commands, what ``check``'s options set on top of the
configuration files (:class:`mtplint.config.Overrides`), and the reading of a plain ``check`` of
named files without argparse (:func:`plain_check`). The parsers themselves are in
:mod:`mtplint.argument_parser`."""

from __future__ import annotations

import os

from mtplint.pathtext import normalized

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing at start-up
if TYPE_CHECKING:
    from argparse import Namespace
    from typing import Any

    from mtplint.config import Overrides
else:
    # what plain_check returns: attributes, vars() and equality as argparse's Namespace
    from types import SimpleNamespace as Namespace

COMMANDS = ("check", "inspect", "rule", "rules", "version", "recommend", "crossover", "clean", "server")

OUTPUT_FORMATS = ("full", "concise", "json", "sarif", "github")

#: the engines the tuner models
TUNER_ENGINES = ("vllm", "sglang", "llama.cpp")


class UsageError(Exception):
    pass


#: ``check``'s switches (``store_true`` options), each option string with the attribute it sets
#: (``tests/test_arguments_plain.py`` checks this against the parser)
CHECK_SWITCHES = {
    "--no-respect-gitignore": "no_respect_gitignore", "-v": "verbose", "--verbose": "verbose",
    "--exit-zero": "exit_zero", "-q": "quiet", "--quiet": "quiet", "--exit-non-zero-on-info": "exit_non_zero_on_info",
    "--isolated": "isolated", "--no-cache": "no_cache", "--fix": "fix", "--unsafe-fixes": "unsafe_fixes",
    "--diff": "diff", "--fix-only": "fix_only", "--show-fixes": "show_fixes",
    "--exit-non-zero-on-fix": "exit_non_zero_on_fix",
}


def check_defaults() -> dict[str, Any]:
    """What ``check``'s parser sets for the options not given (its switches off)."""
    defaults: dict[str, Any] = dict.fromkeys(CHECK_SWITCHES.values(), False)
    defaults.update(
        engine_version=[], gpu=None, exclude=[], output_format=os.environ.get("MTPLINT_OUTPUT_FORMAT") or None,
        select=None, extend_select=[], ignore=[], extend_rules=[], objective=None, config_file=None,
        output_file=None, stdin_filename=None, jobs=None,
    )
    return defaults


def plain_check(arguments: list[str]) -> Namespace | None:
    """``check``'s arguments as its parser reads them, for the common run of a pre-commit hook or an
    editor: ``check``, switches spelt out whole, and one run of file names not starting with ``-``.
    None for anything else (an option with a value, an abbreviation, ``-h``, ``--``, ``-`` for
    standard input, no path, or paths on both sides of a switch, which argparse refuses), which
    the parser then reads. Importing argparse, building ``check``'s parser (a help formatter and a
    translated help text per option: ``gettext`` and ``locale``) and parsing are a large part of a
    one-file check (``docs/startup.md``)."""
    if not arguments or arguments[0] != "check":
        return None
    paths: list[str] = []
    switches: list[str] = []
    paths_ended = False
    for word in arguments[1:]:
        if word.startswith("-"):
            dest = CHECK_SWITCHES.get(word)
            if dest is None:
                return None
            switches.append(dest)
            paths_ended = bool(paths)
        elif paths_ended:
            return None
        else:
            paths.append(word)
    if not paths:
        return None
    given = check_defaults()
    given.update(dict.fromkeys(switches, True))
    return Namespace(command="check", paths=[normalized(path) for path in paths], **given)


def overrides_from(args: Namespace) -> Overrides:
    """What the command line sets on top of every configuration file (each command has some of
    these options: ``rules`` and ``rule`` only those that find house rules)."""
    from mtplint.config import Overrides  # noqa: PLC0415 - dispatch: only a command that reads settings
    from mtplint.versions import parse_engine_versions  # noqa: PLC0415 - dispatch: only a command that reads settings

    given = vars(args)
    try:
        engine_versions = parse_engine_versions(given.get("engine_version", ()))
    except ValueError as error:
        raise UsageError(str(error)) from None
    return Overrides(
        config_file=given.get("config_file"), isolated=given.get("isolated", False), gpu=given.get("gpu"),
        engine_versions=engine_versions, excludes=tuple(given.get("exclude", ())),
        respect_gitignore=not given.get("no_respect_gitignore", False), select=given.get("select"),
        extend_select=given.get("extend_select"), ignore=given.get("ignore"),
        extend_rules=tuple(given.get("extend_rules", ())), objective=given.get("objective"),
        output_format=given.get("output_format") if args.command == "check" else None,
    )
