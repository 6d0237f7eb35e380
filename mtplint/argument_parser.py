"""The command line's parsers, made with argparse: each subcommand's options. Shared by
:mod:`mtplint.cli` and the language server (:mod:`mtplint.server`), which reads ``check`` options
from its client. A plain ``check`` of named files is read without them
(:func:`mtplint.arguments.plain_check`)."""

from __future__ import annotations

import argparse
import os
import sys
from functools import partial

from mtplint import __version__
from mtplint.arguments import OUTPUT_FORMATS, TUNER_ENGINES
from mtplint.pathtext import normalized

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing at start-up
if TYPE_CHECKING:
    from typing import Any


def _jobs(value: str) -> int:
    try:
        jobs = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of processes, got {value!r}") from None
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {jobs}")
    return jobs


def _selectors(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", type=normalized, help="files or directories (default: .)")
    parser.add_argument("--engine-version", action="append", default=[], metavar="ENGINE=VERSION",
                        help="engine version in play, e.g. vllm=0.11.0 (repeatable)")
    parser.add_argument("--gpu", metavar="ID[xN]", help="GPU the launches run on, e.g. rtx-4090x2")
    parser.add_argument("--exclude", action="append", default=[], metavar="PATTERN", help="glob of paths to skip")
    parser.add_argument("--no-respect-gitignore", action="store_true", help="also lint files .gitignore excludes")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print the traceback of an internal error (reported as a finding) on stderr")


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``, without importing shutil (and with it zlib, bz2 and
    lzma, on every run that builds a parser, for argparse's help width): same rules, same fallback."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    try:
        lines = int(os.environ["LINES"])
    except (KeyError, ValueError):
        lines = 0
    if columns <= 0 or lines <= 0:
        try:
            size = os.get_terminal_size(sys.__stdout__.fileno())  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            size = os.terminal_size((80, 24))
        if columns <= 0:
            columns = size.columns or 80
    return columns


class _HelpFormatter(argparse.HelpFormatter):
    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        if width is None:  # as argparse computes it, minus the shutil import
            width = _terminal_columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)


class _ArgumentParser(argparse.ArgumentParser):
    """argparse's parser with :class:`_HelpFormatter`; subcommand parsers are of the same class.

    The help width is read when the parser is made, not for each formatter: argparse makes one
    for every ``add_argument`` (to check the metavar), and each would ask the environment and the
    terminal again, a few dozen times a run for one help text that is seldom printed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", partial(_HelpFormatter, width=_terminal_columns() - 2))
        super().__init__(*args, **kwargs)


def _add_check(commands: Any) -> None:
    check = commands.add_parser("check", help="lint files (default command)")
    _common(check)
    check.add_argument("--output-format", choices=OUTPUT_FORMATS,
                       default=os.environ.get("MTPLINT_OUTPUT_FORMAT") or None)
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("-q", "--quiet", action="store_true",
                       help="print the findings only: no summary, no progress line on a terminal")
    check.add_argument("--exit-non-zero-on-info", action="store_true",
                       help="also exit 1 when the only findings are `info` (by default they are shown but do not fail)")
    check.add_argument("--select", type=_selectors, help="rules to run: codes, prefixes (MTP1), names, or ALL")
    check.add_argument("--extend-select", type=_selectors, default=[], help="rules to run in addition to the selection")
    check.add_argument("--ignore", type=_selectors, default=[], help="rules not to run")
    check.add_argument("--extend-rules", action="append", type=normalized, default=[], metavar="PATH",
                       help="house rule files (YAML) or a directory of them")
    check.add_argument("--objective", choices=("latency", "throughput"), help="what the deployment optimises for")
    check.add_argument("--config", dest="config_file", type=normalized, metavar="FILE",
                       help="one configuration file for every path (default: for each file, the closest "
                            "pyproject.toml / mtplint.toml / .mtplint.toml)")
    check.add_argument("--isolated", action="store_true", help="ignore configuration files")
    check.add_argument("-o", "--output-file", type=normalized, metavar="FILE", help="write the report to FILE, not stdout")
    check.add_argument("--stdin-filename", type=normalized, metavar="PATH",
                       help="lint standard input as the content of PATH (an editor's unsaved buffer; PATH "
                            "need not exist); `-` as the path also reads standard input")
    check.add_argument("-j", "--jobs", type=_jobs, default=None, metavar="N",
                       help="processes that lint files, this one included (default: 1, or one per idle CPU "
                            "when many files need linting)")
    check.add_argument("--no-cache", action="store_true",
                       help="do not read or write the cache (.mtplint_cache, or $MTPLINT_CACHE_DIR)")
    fixing = check.add_argument_group("fixes")
    fixing.add_argument("--fix", action="store_true", help="apply the safe fixes (writes the files)")
    fixing.add_argument("--unsafe-fixes", action="store_true",
                        help="also apply (with --fix) or count (without) the fixes marked unsafe")
    fixing.add_argument("--diff", action="store_true",
                        help="print a unified diff of what --fix would change and write nothing; exit 1 when there is one")
    fixing.add_argument("--fix-only", action="store_true", help="apply the fixes and report nothing else")
    fixing.add_argument("--show-fixes", action="store_true", help="list the fixes applied (with --fix) or available")
    fixing.add_argument("--exit-non-zero-on-fix", action="store_true",
                        help="exit 1 when a fix was applied, even if no finding remains")


def _add_inspect(commands: Any) -> None:
    inspect = commands.add_parser("inspect", help="show every launch found and its effective settings")
    _common(inspect)
    inspect.add_argument("--format", "--output-format", dest="format", choices=("text", "json"), default="text")


def _catalog_options(parser: argparse.ArgumentParser) -> None:
    """Where ``rules`` and ``rule`` find house rules: as ``check`` does, from the working directory."""
    parser.add_argument("--extend-rules", action="append", type=normalized, default=[], metavar="PATH",
                        help="house rule files (YAML) or a directory of them, besides the configuration's")
    parser.add_argument("--config", dest="config_file", type=normalized, metavar="FILE",
                        help="the configuration whose extend-rules to read (default: the closest "
                             "pyproject.toml / mtplint.toml / .mtplint.toml, as check finds it)")
    parser.add_argument("--isolated", action="store_true", help="ignore configuration files")


def _add_rules(commands: Any) -> None:
    rules = commands.add_parser("rules", help="list the rules, house rules included")
    rules.add_argument("--output-format", choices=("text", "json"), default="text")
    _catalog_options(rules)


def _add_rule(commands: Any) -> None:
    rule = commands.add_parser("rule", help="show a rule's documentation (a house rule's too)")
    rule.add_argument("code", help="rule code or name, e.g. MTP102")
    rule.add_argument("--output-format", choices=("text", "json"), default="text")
    _catalog_options(rule)


def _add_version(commands: Any) -> None:
    commands.add_parser("version", help="print the version")


def _add_clean(commands: Any) -> None:
    commands.add_parser("clean", help="remove the cache directory (.mtplint_cache, or $MTPLINT_CACHE_DIR)")


def _add_server(commands: Any) -> None:
    commands.add_parser("server", help="run the language server (LSP, on stdin/stdout; needs mtplint[server])")


def _add_tuner(commands: Any) -> None:
    """``recommend`` and ``crossover`` (run by :mod:`mtplint.cli_tuner`)."""
    recommend = commands.add_parser("recommend", help="should this deployment run MTP, with which k, and how")
    recommend.add_argument("--gpu", metavar="ID[xN]", help="GPU, e.g. rtx-4090, h100-sxm, rtx-4090x2 "
                                                           "(default: `gpu` of the configuration, as check)")
    recommend.add_argument("--model", help="served model, e.g. Qwen/Qwen3.6-27B-FP8 (default: Qwen/Qwen3.6-27B "
                                           "in the largest published format that fits)")
    recommend.add_argument("--use-case", choices=("single-user", "multi-user"), default="single-user")
    recommend.add_argument("--objective", choices=("latency", "throughput"),
                           help="what the deployment optimises for (default: `objective` of the configuration, "
                                "else latency)")
    recommend.add_argument("--engine", choices=TUNER_ENGINES,
                           help="engine (default: vLLM, or llama.cpp when only a 4-bit GGUF fits the GPU)")
    recommend.add_argument("--engine-version", metavar="VERSION",
                           help="engine version (default: the configuration's `engine-versions`, else the newest "
                                "known)")
    recommend.add_argument("--concurrency", type=int, help="sequences decoding together (multi-user; default 64)")
    recommend.add_argument("--kv-cache-dtype", help="KV-cache dtype the server uses")
    recommend.add_argument("--quantization", help="engine --quantization (default: from the model name)")
    recommend.add_argument("--tensor-parallel", type=int, help="tensor-parallel size (default: the GPU count)")
    recommend.add_argument("--max-model-len", type=int, help="context length (default: what fits)")
    recommend.add_argument("--max-k", type=int, default=3, help="largest k considered (default 3)")
    recommend.add_argument("--format", "--output-format", dest="format", choices=("text", "json"), default="text")

    cross = commands.add_parser("crossover", help="speed-up of MTP by batch size, and where it turns into a loss")
    cross.add_argument("--gpu", metavar="ID[xN]", help="GPU, e.g. rtx-3090 (default: `gpu` of the configuration)")
    cross.add_argument("--model", help="served model (default: a dense 8B)")
    cross.add_argument("--engine", choices=TUNER_ENGINES,
                       help="engine (default: vLLM and llama.cpp side by side)")
    cross.add_argument("--weights", help="weight format: bf16, fp8, 4-bit, or a GGUF preset such as Q4_K_M "
                                         "(default: from the model name)")
    cross.add_argument("--tensor-parallel", type=int, default=None, help="tensor-parallel size (default: the GPU count)")
    cross.add_argument("--acceptance", type=float, help="first-draft-token acceptance (default: the catalog's figure)")
    cross.add_argument("--max-k", type=int, default=3, help="rows k = 1 .. max-k (default 3)")
    cross.add_argument("--plot", metavar="FILE.svg", help="also draw the speed-up curves into an SVG file")
    cross.add_argument("--format", "--output-format", dest="format", choices=("text", "json"), default="text")


#: the subcommands' parsers, in the order ``mtplint --help`` lists them
_SUBCOMMANDS: tuple[tuple[tuple[str, ...], Any], ...] = (
    (("check",), _add_check), (("inspect",), _add_inspect), (("rules",), _add_rules), (("rule",), _add_rule),
    (("version",), _add_version), (("clean",), _add_clean), (("recommend", "crossover"), _add_tuner),
    (("server",), _add_server),
)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with ``command``, only that subcommand's parser is built (start-up
    time, every run); the usage line still names every command, as the complete parser's does."""
    parser = _ArgumentParser(
        prog="mtplint",
        description="Lint the launch configuration of LLM servers that use speculative decoding (MTP).",
    )
    parser.add_argument("--version", action="version", version=f"mtplint {__version__}")
    if command is None:
        commands = parser.add_subparsers(dest="command")
    else:  # argparse's own spelling of the choices, which it would derive from all the parsers
        every_name = ",".join(name for names, _ in _SUBCOMMANDS for name in names)
        commands = parser.add_subparsers(dest="command", metavar=f"{{{every_name}}}")
    for names, add in _SUBCOMMANDS:
        if command is None or command in names:
            add(commands)
    return parser
