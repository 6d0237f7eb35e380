"""Command line: ``mtplint check``, ``mtplint inspect``.

Start-up matters (a pre-commit hook runs on every commit): only the standard library and the
pipeline's light modules are imported here; parsers load when a file needs them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from mtplint import __version__

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
COMMANDS = ("check", "inspect", "version")


class UsageError(Exception):
    pass


def _engine_versions(values: Sequence[str]) -> dict[str, str]:
    versions: dict[str, str] = {}
    for value in values:
        for item in value.split(","):
            engine, sep, version = item.partition("=")
            if not sep or not engine.strip() or not version.strip():
                raise UsageError(f"--engine-version expects ENGINE=VERSION (e.g. vllm=0.11.0), got {item!r}")
            versions[engine.strip()] = version.strip()
    return versions


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", type=Path, help="files or directories (default: .)")
    parser.add_argument("--engine-version", action="append", default=[], metavar="ENGINE=VERSION",
                        help="engine version in play, e.g. vllm=0.11.0 (repeatable)")
    parser.add_argument("--gpu", metavar="ID[xN]", help="GPU the launches run on, e.g. rtx-4090x2")
    parser.add_argument("--exclude", action="append", default=[], metavar="PATTERN", help="glob of paths to skip")
    parser.add_argument("--no-respect-gitignore", action="store_true", help="also lint files .gitignore excludes")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mtplint",
        description="Lint the launch configuration of LLM servers that use speculative decoding (MTP).",
    )
    parser.add_argument("--version", action="version", version=f"mtplint {__version__}")
    commands = parser.add_subparsers(dest="command")
    check = commands.add_parser("check", help="lint files (default command)")
    _common(check)
    check.add_argument("--output-format", choices=("full", "concise", "json"),
                       default=os.environ.get("MTPLINT_OUTPUT_FORMAT", "full"))
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    inspect = commands.add_parser("inspect", help="show every launch found and its effective settings")
    _common(inspect)
    inspect.add_argument("--format", "--output-format", dest="format", choices=("text", "json"), default="text")
    commands.add_parser("version", help="print the version")
    return parser


def _pipeline_options(args: argparse.Namespace) -> Any:
    from mtplint.pipeline import Options

    return Options(
        root=Path.cwd(),
        excludes=tuple(args.exclude),
        respect_gitignore=not args.no_respect_gitignore,
        engine_versions=_engine_versions(args.engine_version),
        gpu=args.gpu,
    )


def _report_internal(errors: list[str], err: TextIO) -> None:
    for error in errors:
        first, _, detail = error.partition("\n")
        err.write(f"mtplint: error: {first}\n")
        if os.environ.get("MTPLINT_DEBUG") and detail:
            err.write(detail)


def cmd_inspect(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from mtplint.pipeline import run

    result = run(args.paths or [Path(".")], _pipeline_options(args))
    if args.format == "json":
        payload = {
            "launches": [report.to_json() for report in result.launches],
            "diagnostics": [diagnostic.to_json() for diagnostic in result.diagnostics],
        }
        out.write(json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        from mtplint.report.inspect_text import render

        out.write(render(result))
    _report_internal(result.internal_errors, err)
    return EXIT_ERROR if result.internal_errors else EXIT_CLEAN


def cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from mtplint.pipeline import run

    result = run(args.paths or [Path(".")], _pipeline_options(args))
    findings = result.diagnostics
    if args.output_format == "json":
        out.write(json.dumps([d.to_json() for d in findings], indent=2) + "\n")
    else:
        for diagnostic in findings:
            span = diagnostic.span
            out.write(f"{span.file}:{span.line}:{span.column}: {diagnostic.code} {diagnostic.message}\n")
        launches = len(result.launches)
        if findings:
            out.write(f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''} "
                      f"({launches} launch{'es' if launches != 1 else ''} read).\n")
        else:
            out.write(f"No findings yet: {launches} launch{'es' if launches != 1 else ''} read in "
                      f"{result.files_seen} file{'s' if result.files_seen != 1 else ''} "
                      "(the rule catalog is not built in yet; see `mtplint inspect`).\n")
    _report_internal(result.internal_errors, err)
    if result.internal_errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if findings and not args.exit_zero else EXIT_CLEAN


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not arguments or (arguments[0] not in COMMANDS and arguments[0] not in ("-h", "--help", "--version")):
        arguments = ["check", *arguments]
    parser = build_parser()
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exit_:
        return EXIT_CLEAN if exit_.code == 0 else EXIT_ERROR
    try:
        if args.command == "inspect":
            return cmd_inspect(args, out, err)
        if args.command == "version":
            out.write(f"mtplint {__version__}\n")
            return EXIT_CLEAN
        return cmd_check(args, out, err)
    except UsageError as error:
        err.write(f"mtplint: error: {error}\n")
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_CLEAN


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
