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
COMMANDS = ("check", "inspect", "rule", "rules", "version")


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


def _selectors(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


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
                       default=os.environ.get("MTPLINT_OUTPUT_FORMAT") or None)
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("--exit-non-zero-on-info", action="store_true",
                       help="also exit 1 when the only findings are `info` (by default they are shown but do not fail)")
    check.add_argument("--select", type=_selectors, help="rules to run: codes, prefixes (MTP1), names, or ALL")
    check.add_argument("--extend-select", type=_selectors, default=[], help="rules to run in addition to the selection")
    check.add_argument("--ignore", type=_selectors, default=[], help="rules not to run")
    check.add_argument("--extend-rules", action="append", type=Path, default=[], metavar="PATH",
                       help="house rule files (YAML) or a directory of them")
    check.add_argument("--objective", choices=("latency", "throughput"), help="what the deployment optimises for")
    check.add_argument("--config", dest="config_file", type=Path, metavar="FILE",
                       help="configuration file (default: the closest pyproject.toml / mtplint.toml / .mtplint.toml)")
    check.add_argument("--isolated", action="store_true", help="ignore configuration files")
    inspect = commands.add_parser("inspect", help="show every launch found and its effective settings")
    _common(inspect)
    inspect.add_argument("--format", "--output-format", dest="format", choices=("text", "json"), default="text")
    rules = commands.add_parser("rules", help="list the rules")
    rules.add_argument("--output-format", choices=("text", "json"), default="text")
    rule = commands.add_parser("rule", help="show a rule's documentation")
    rule.add_argument("code", help="rule code or name, e.g. MTP102")
    rule.add_argument("--output-format", choices=("text", "json"), default="text")
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
    from mtplint.checks.catalog import CatalogError
    from mtplint.config import ConfigError, settings_for
    from mtplint.lint import lint
    from mtplint.report import findings as formats

    try:
        settings, output_format = settings_for(args)
        result = lint(args.paths or [Path(".")], settings)
    except (CatalogError, ConfigError) as error:
        err.write(f"mtplint: error: {error}\n")
        return EXIT_ERROR
    findings = result.findings
    if output_format == "json":
        out.write(formats.as_json(findings))
    elif output_format == "concise":
        out.write(formats.concise(findings))
        out.write(formats.summary(findings, len(result.suppressed)))
    else:
        out.write(formats.full(findings, result.pipeline))
        out.write(formats.summary(findings, len(result.suppressed)))
    _report_internal(result.pipeline.internal_errors, err)
    if result.pipeline.internal_errors:
        return EXIT_ERROR
    failing = [f for f in findings if f.severity != "info" or args.exit_non_zero_on_info]
    return EXIT_FINDINGS if failing and not args.exit_zero else EXIT_CLEAN


def cmd_rules(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from mtplint.checks.catalog import load_catalog

    catalog = load_catalog()
    if args.output_format == "json":
        out.write(json.dumps([rule.to_json() for rule in catalog.values()], indent=2, ensure_ascii=False) + "\n")
        return EXIT_CLEAN
    for rule in catalog.values():
        out.write(f"{rule.code}  {rule.name:<46} {rule.severity:<8} {','.join(rule.engines):<22} fix: {rule.fix}\n")
    return EXIT_CLEAN


def cmd_rule(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from mtplint.checks.catalog import load_catalog
    from mtplint.report.docs import render_rule

    catalog = load_catalog()
    wanted = args.code.strip()
    rule = catalog.get(wanted.upper()) or next((r for r in catalog.values() if r.name == wanted), None)
    if rule is None:
        err.write(f"mtplint: error: unknown rule {wanted!r} (see `mtplint rules`)\n")
        return EXIT_ERROR
    if args.output_format == "json":
        out.write(json.dumps({**rule.to_json(), "docs": rule.docs}, indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(render_rule(rule))
    return EXIT_CLEAN


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
        if args.command == "rules":
            return cmd_rules(args, out, err)
        if args.command == "rule":
            return cmd_rule(args, out, err)
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
