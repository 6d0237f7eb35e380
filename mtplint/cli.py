"""Command line: ``mtplint check``, ``mtplint inspect``.

Start-up matters (a pre-commit hook runs on every commit): only the standard library and the
pipeline's light modules are imported here; parsers load when a file needs them.
"""

from __future__ import annotations

import codecs
import gc
import os
import sys
from collections.abc import Sequence

from mtplint import __version__
from mtplint.arguments import COMMANDS, OUTPUT_FORMATS, UsageError, overrides_from, plain_check
from mtplint.pathtext import is_dir, is_file, parent_dir

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing at start-up
if TYPE_CHECKING:
    import argparse
    from typing import Any, NoReturn, TextIO

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def cmd_clean(out: TextIO, err: TextIO) -> int:
    """``mtplint clean``: remove the cache directory, as ``ruff clean``."""
    from mtplint.cache import clean  # noqa: PLC0415 - subcommand dispatch: clean

    try:
        removed = clean(os.getcwd())
    except OSError as error:
        err.write(f"mtplint: error: {error}\n")
        return EXIT_ERROR
    for path in removed:
        out.write(f"Removing cache at: {path}\n")
    if not removed:
        out.write("No cache found.\n")
    return EXIT_CLEAN


def _report_internal(errors: list[str], err: TextIO) -> None:
    if not errors:
        return
    from mtplint.report.escape import printable  # noqa: PLC0415 - subcommand dispatch: a report's escaping

    for error in errors:
        first, _, detail = error.partition("\n")
        err.write(f"mtplint: error: {printable(first)}\n")
        if os.environ.get("MTPLINT_DEBUG") and detail:
            err.write(detail)


def cmd_inspect(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from mtplint.config import CatalogTree  # noqa: PLC0415 - subcommand dispatch: inspect
    from mtplint.discover import discover  # noqa: PLC0415 - subcommand dispatch: inspect
    from mtplint.pipeline import Options, run  # noqa: PLC0415 - subcommand dispatch: inspect

    paths = args.paths or ["."]
    overrides = overrides_from(args)
    options = Options(root=os.getcwd(), excludes=overrides.excludes, respect_gitignore=overrides.respect_gitignore,
                      engine_versions=overrides.engine_versions, gpu=overrides.gpu)
    # GPUs and models added in configuration, its gpu and engine-versions: each file's own
    # configuration's, as `check`
    tree = CatalogTree(overrides)

    def use_group(group: int) -> None:
        shared = tree.settings(group)
        options.gpu, options.engine_versions, options.catalogs = shared.gpu, shared.engine_versions, shared.catalogs

    first = tree.group_of(paths[0])
    candidates = discover(paths, options.root, options.excludes, options.respect_gitignore, tree)
    use_group(first)
    result = run(paths, options, candidates=candidates, activate=use_group if tree.nested else None)
    if args.format == "json":
        import json  # noqa: PLC0415 - output format: inspect's JSON

        payload = {
            "launches": [report.to_json() for report in result.launches],
            "diagnostics": [diagnostic.to_json() for diagnostic in result.diagnostics],
        }
        out.write(json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        from mtplint.report.escape import printable  # noqa: PLC0415 - output format: inspect's text
        from mtplint.report.inspect_text import render  # noqa: PLC0415 - output format: inspect's text

        out.write(printable(render(result)))
    _report_internal(result.internal_errors, err)
    return EXIT_ERROR if result.internal_errors else EXIT_CLEAN


def _nothing_to_lint(args: argparse.Namespace) -> bool:
    """Whether this ``check`` is over named files none of which can hold a launch (the pre-commit
    case of a commit that touches only a README or CI workflows), so the run would report nothing,
    decided without loading the pipeline, most of a one-file check's start-up.

    Only a plain run qualifies: no configuration file, no option that needs validating against the
    rule catalog or the GPU catalog, no fix, SARIF or stdin. Each file must be a readable regular
    file that the pipeline would skip on the same test (:func:`mtplint.discover.relevant_file`, the
    byte prefilter); anything else -- a directory, a missing or unreadable file, UTF-16 text, whose
    words the prefilter can only see decoded -- takes the full path."""
    if (not args.paths or args.stdin_filename is not None or args.fix or args.fix_only or args.diff
            or args.show_fixes or args.select is not None or args.extend_select or args.ignore or args.extend_rules
            or args.engine_version or args.gpu or args.config_file is not None
            or (args.output_format or "full") not in ("full", "concise", "json", "github")):
        return False
    from mtplint.discover import brought_in, classify, relevant_file  # noqa: PLC0415 - subcommand dispatch: check's prefilter

    for path in args.paths:
        try:
            if not is_file(path):
                return False
            with open(path, "rb") as handle:
                head = handle.read(4)
        except OSError:
            return False
        if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            return False
        kind = classify(path) or "unknown"
        if relevant_file(path, kind) or brought_in(path, kind, os.getcwd()):
            return False  # a launch in it, or in a file it brings in (compose beside a .env, a --config's launch)
    if not args.isolated:
        # any file's configuration may say something about an empty run (its output format, an error in it)
        from mtplint.config_files import ConfigError, ConfigFinder  # noqa: PLC0415 - subcommand dispatch: check's prefilter

        finder = ConfigFinder()
        try:
            if any(finder.closest(path) is not None for path in args.paths):
                return False
        except ConfigError:
            return False  # reported by the full path, as it always is
    return True


def _report_nothing(args: argparse.Namespace, out: TextIO) -> int:
    """What :func:`cmd_check` writes for a run without findings, in the chosen format."""
    from mtplint.report import findings as formats  # noqa: PLC0415 - subcommand dispatch: check's report

    output_format = args.output_format or "full"
    if output_format == "json":
        out.write(formats.as_json([]))
    elif output_format == "github":
        from mtplint.report import github  # noqa: PLC0415 - output format: github

        out.write(github.render([]))
    else:
        out.write(formats.concise([]) if output_format == "concise" else formats.full([]))
        if not args.quiet:
            out.write(formats.summary([], 0, unsafe_fixes=args.unsafe_fixes))
    return EXIT_CLEAN


def cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.output_format is not None and args.output_format not in OUTPUT_FORMATS:
        # argparse checks `choices` for a given flag, not for a default: the value came from the
        # environment, and a typo there (a CI variable) must not turn a SARIF report into text
        raise UsageError(f"MTPLINT_OUTPUT_FORMAT={args.output_format!r} is not an output format "
                         f"(choose from {', '.join(OUTPUT_FORMATS)})")
    _standard_input_path(args)
    if args.output_file is None and _nothing_to_lint(args):
        return _report_nothing(args, out)
    from mtplint.checks.catalog import remembering_valid_documents  # noqa: PLC0415 - subcommand dispatch: check, past the prefilter

    if args.output_file is not None:
        return _check_to_file(args, err)
    # as the findings cache: not for --no-cache, and not for runs that write nothing there (--fix,
    # --diff and an editor's buffer on standard input lint in memory)
    if not (args.no_cache or args.fix or args.fix_only or args.diff or args.stdin_filename is not None):
        from mtplint.cache_directory import cache_dir, unusable_reason  # noqa: PLC0415 - the cache's modules, for a run that uses it

        directory = cache_dir(os.getcwd())
        refused = unusable_reason(directory)
        if refused is None:
            with remembering_valid_documents(directory):
                return _check(args, out, err)
        # never write into a folder of the user's ($MTPLINT_CACHE_DIR=., $HOME): lint without the cache
        err.write(f"mtplint: warning: not using the cache: {refused} (point MTPLINT_CACHE_DIR at a "
                  "path that does not exist yet; mtplint creates it)\n")
        args.no_cache = True
    return _check(args, out, err)


def _standard_input_path(args: argparse.Namespace) -> None:
    """``-`` among the paths: standard input is linted, as the file ``--stdin-filename`` names or,
    without one, as ``-`` (its kind then read from its text, :func:`mtplint.stdin.kind_of_text`)."""
    if "-" not in args.paths:  # mtplint.stdin.STDIN_PATH, without importing it
        return
    if len(args.paths) > 1:
        raise UsageError("`-` (standard input) cannot be combined with other paths")
    if args.stdin_filename is None:
        args.stdin_filename = "-"
    args.paths = []


def _check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``check`` itself: the settings, the lint, the report (:func:`cmd_check` chose the output and
    whether documents that passed their schema are remembered)."""
    from mtplint.checks import applies  # noqa: PLC0415 - subcommand dispatch: check, past the prefilter
    from mtplint.config import settings_for  # noqa: PLC0415 - subcommand dispatch: check, past the prefilter
    from mtplint.lint import lint  # noqa: PLC0415 - subcommand dispatch: check, past the prefilter

    # standard input is configured as the file it stands for (which need not exist yet)
    first = args.stdin_filename or (args.paths[0] if args.paths else os.getcwd())
    settings, output_format = settings_for(overrides_from(args), first)
    if args.fix or args.fix_only or args.diff:
        if args.stdin_filename is not None:
            raise UsageError("--stdin-filename cannot be combined with --fix, --fix-only or --diff")
        return _check_and_fix(args, settings, output_format, out, err)
    stdin = _stdin_buffer(args, settings) if args.stdin_filename is not None else None
    progress = _progress(args, err) if stdin is None else None
    try:
        result = lint([args.stdin_filename] if stdin else args.paths or ["."], settings,
                      stdin[0] if stdin else None, jobs=args.jobs, cache=not args.no_cache, progress=progress)
    finally:
        if progress is not None:
            progress.finish()
    findings = result.findings
    if stdin is None and any(applies(finding.fix, args.unsafe_fixes) for finding in findings):
        from mtplint.fix.verify import verified  # noqa: PLC0415 - fixing: only a run with a fix to verify

        findings = verified(findings, settings, args.unsafe_fixes, result.cache, result.analysed, result.processes)
    if stdin is not None and stdin[2]:
        findings = _not_text_finding(findings, stdin[0], args.stdin_filename, result.rules)
    _write_findings(findings, result, output_format, out, unsafe_fixes=args.unsafe_fixes, settings=settings,
                    texts=stdin[1] if stdin else None, quiet=args.quiet)
    if args.show_fixes and output_format != "json":
        from mtplint.report.fixes import available_list  # noqa: PLC0415 - subcommand dispatch: check --show-fixes

        out.write(available_list(findings, args.unsafe_fixes))
    _report_internal(result.pipeline.internal_errors, err)
    if result.pipeline.internal_errors:
        return EXIT_ERROR
    failing = any(f.severity != "info" or args.exit_non_zero_on_info for f in findings)
    return EXIT_FINDINGS if failing and not args.exit_zero else EXIT_CLEAN


def _progress(args: argparse.Namespace, err: TextIO) -> Any:
    """A progress line for a run whose standard error is a terminal that can redraw a line (not
    ``TERM=dumb``), unless ``--quiet`` (:mod:`mtplint.progress`)."""
    if args.quiet or os.environ.get("TERM") == "dumb":
        return None
    try:
        if not err.isatty():
            return None
    except (AttributeError, ValueError, OSError):  # a closed or unusual stream: no terminal to draw on
        return None
    from mtplint.progress import Progress  # noqa: PLC0415 - a terminal's progress line only

    return Progress(err)


def _check_to_file(args: argparse.Namespace, err: TextIO) -> int:
    """``-o FILE``: the report goes to FILE (its folder is created); messages stay on stderr."""
    path: str = args.output_file
    args.output_file = None
    try:
        os.makedirs(parent_dir(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as handle:
            return cmd_check(args, _ReportStream(handle, path), err)  # type: ignore[arg-type]
    except OSError as error:
        err.write(f"mtplint: error: cannot write {path}: {error.strerror or error}\n")
        return EXIT_ERROR


def _stdin_buffer(args: argparse.Namespace, settings: Any) -> tuple[Any, dict[str, str], bool]:
    """``--stdin-filename PATH`` (or ``-``): a file loader in which standard input stands for PATH,
    whether or not PATH exists, and the buffer's text by the name findings show for it (SARIF
    fingerprints hash that text); and whether standard input was not text (then the buffer is empty)."""
    from mtplint.extract import FileLoader  # noqa: PLC0415 - subcommand dispatch: check of standard input
    from mtplint.source import SourceFile  # noqa: PLC0415 - subcommand dispatch: check of standard input

    path: str = args.stdin_filename
    if is_dir(path):
        raise UsageError(f"--stdin-filename {path}: is a directory (name the file the buffer stands for)")
    # a file not saved yet is fine: its folder (or the nearest one that exists) holds the
    # configuration and the files a launch reads, as for the saved file
    text = _stdin_text()
    loader = FileLoader(settings.pipeline.root)
    display = loader.display(path)
    loader.put(SourceFile(path, display, text if text is not None else ""))
    return loader, {display: text if text is not None else ""}, text is None


def _stdin_text() -> str | None:
    """Standard input's text, decoded as a file's bytes are (UTF-8, or UTF-8/16/32 with a BOM);
    None when it is not text (binary data, another encoding)."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream that is not a terminal's or a pipe's (a caller's StringIO)
        text: str = sys.stdin.read()
        return text
    from mtplint.extract import decode  # noqa: PLC0415 - subcommand dispatch: check of standard input

    try:
        return decode(buffer.read())
    except UnicodeDecodeError:
        return None


def _not_text_finding(findings: Sequence[Any], loader: Any, path: str, rules: Any) -> Sequence[Any]:
    """The findings of a run over standard input that is not text: MTP001 for it, as for such a file
    (``rules``: those the run selected)."""
    from mtplint.checks import Finding  # noqa: PLC0415 - subcommand dispatch: check of standard input

    unparsable = next((rule for rule in rules if rule.code == "MTP001"), None)
    if unparsable is None:
        return findings
    source = loader.peek(path)
    unreadable = Finding(unparsable, "standard input is not valid text (binary, or not UTF-8/UTF-16)",
                         source.span(0))
    return sorted([*findings, unreadable], key=Finding.sort_key)


def _suppression_kind_by_file(configs: Any, kind_for: Any) -> Any:
    """SARIF's suppression kind under several configurations: by the per-file-ignores of the
    configuration governing the finding's file (as the suppression pass decided)."""
    kinds: dict[int, Any] = {}

    def kind(finding: Any) -> str:
        group: int = configs.group_of_file(finding.span.file, {})
        if group not in kinds:
            kinds[group] = kind_for(configs.groups[group].per_file_ignores)
        result: str = kinds[group](finding)
        return result

    return kind


def _run_notes(result: Any) -> list[str]:
    """What the summary says once for the whole run: launches no rule needing the GPU checked."""
    launches, rules = result.without_gpu
    if not launches:
        return []
    from mtplint.checks.mtp003 import gpu_note  # noqa: PLC0415 - rule lookup: MTP003's note, for a launch without a GPU

    return [gpu_note(launches, rules)]


def _write_findings(findings: Any, result: Any, output_format: str, out: TextIO, *, fixed: int = 0,
                    unsafe_fixes: bool = False, settings: Any = None, texts: dict[str, str] | None = None,
                    quiet: bool = False) -> None:
    from mtplint.report import findings as formats  # noqa: PLC0415 - subcommand dispatch: check's report

    notes = _run_notes(result)
    if output_format not in ("sarif", "json"):  # JSON and SARIF escape control characters themselves
        out = _Printable(out)  # type: ignore[assignment]
    if output_format == "sarif":
        from mtplint.report import sarif  # noqa: PLC0415 - output format: sarif

        per_file_ignores = settings.per_file_ignores if settings is not None else {}
        kind = sarif.suppression_kind(per_file_ignores)
        if settings is not None and settings.configs is not None and settings.configs.nested:
            kind = _suppression_kind_by_file(settings.configs, sarif.suppression_kind)
        for piece in sarif.render_pieces(findings, result.suppressed, texts=texts, suppression_kind=kind,
                                         internal_errors=result.pipeline.internal_errors, notes=notes):
            out.write(piece)
        return
    if output_format == "github":
        from mtplint.report import github  # noqa: PLC0415 - output format: github

        out.write(github.render(findings, notes=() if quiet else notes))
        return
    # the summary's counts, taken as the report goes through the findings (JSON has no summary)
    tally = None if output_format == "json" else formats.FindingTally()
    if output_format == "json":
        pieces = formats.json_pieces(findings)
    elif output_format == "concise":
        pieces = formats.concise_lines(findings, unsafe_fixes, tally)
    else:
        pieces = formats.full_blocks(findings, result.pipeline, unsafe_fixes, tally)
    for piece in pieces:  # a finding at a time: a report of many findings is never one string
        out.write(piece)
    if quiet or output_format == "json":
        return
    out.write(formats.summary(findings, len(result.suppressed), fixed=fixed, unsafe_fixes=unsafe_fixes,
                              errors=len(result.pipeline.internal_errors), tally=tally))
    out.write("".join(note + "\n" for note in notes))


def _check_and_fix(args: argparse.Namespace, settings: Any, output_format: str, out: TextIO, err: TextIO) -> int:
    """``--fix`` / ``--fix-only`` / ``--diff``, with ruff's exit codes: ``--diff`` exits 1 when there
    is a diff; ``--fix`` exits 1 when findings remain; ``--fix-only`` exits 0; with
    ``--exit-non-zero-on-fix`` also 1 when something was fixed. A file that cannot be written is a
    finding (MTP001 "cannot write fix: ..."), not an error of the run."""
    from mtplint.checks import Finding, applies  # noqa: PLC0415 - fixing: --fix, --fix-only, --diff
    from mtplint.checks.catalog import load_catalog  # noqa: PLC0415 - fixing: --fix, --fix-only, --diff
    from mtplint.edits.pyedit import edit_file  # noqa: PLC0415 - fixing: --fix, --fix-only, --diff
    from mtplint.fix import apply as fixing  # noqa: PLC0415 - fixing: --fix, --fix-only, --diff
    from mtplint.fix.write import recover_interrupted, write_all  # noqa: PLC0415 - fixing: --fix, --fix-only, --diff
    from mtplint.lint import lint  # noqa: PLC0415 - fixing: --fix, --fix-only, --diff
    from mtplint.report import fixes as fix_report  # noqa: PLC0415 - fixing: --fix, --fix-only, --diff

    paths = args.paths or ["."]
    if not args.diff:
        # a run killed while writing left journals: finish or drop them before reading the files
        recover_interrupted(paths)
    run = fixing.fix_project(paths, settings, unsafe=args.unsafe_fixes)
    err.write(fix_report.rejected_list(run.rejected))
    if not run.converged:
        err.write(f"mtplint: warning: fixes did not settle after {run.passes} passes; "
                  "the files are written as they stand (run --fix again to continue)\n")
    changed = run.changed()
    internal = run.initial.pipeline.internal_errors
    if args.diff:
        out.write(fix_report.unified_diff(changed))
        err.write(fix_report.would_fix(len(run.applied) if changed else 0))
        _report_internal(internal, err)
        if internal:
            return EXIT_ERROR
        return EXIT_FINDINGS if changed else EXIT_CLEAN
    failures = write_all(changed)
    err.write(fix_report.write_failures(failures))
    result = run.result
    unwritten = {failure.source.display for failure in failures}
    fixed = [item for item in run.applied
             if item.finding.fix is None or not {edit_file(e) for e in item.finding.fix.edits} & unwritten]
    if failures:
        # what is on disk now: the fixed files and, for those left alone, their old text
        result = lint(paths, settings)
    write_rule = load_catalog(settings.extend_rules)["MTP001"]
    remaining = result.findings
    if run.converged:
        from mtplint.fix.verify import demote  # noqa: PLC0415 - fixing: --fix, --fix-only, --diff

        # what is left with an applicable fix was refused (or its file could not be written, which
        # its own finding says): shown, not counted as fixable
        remaining = demote(remaining, [f for f in remaining if applies(f.fix, args.unsafe_fixes)
                                       and f.span.file not in unwritten], run.rejected)
    findings = sorted([*remaining, *(Finding(write_rule, failure.reason, failure.source.span(0))
                                     for failure in failures)], key=Finding.sort_key)
    internal = result.pipeline.internal_errors
    if args.fix_only:
        from mtplint.report.escape import printable  # noqa: PLC0415 - fixing: --fix-only's text

        if output_format != "json":
            out.write(f"Fixed {len(fixed)} finding{'s' if len(fixed) != 1 else ''}.\n" if fixed
                      else "No findings fixed.\n")
            for finding in findings:
                if finding.span.start == 0 and finding.message.startswith("cannot write fix:"):
                    out.write(printable(f"{finding.span.file}: {finding.code} {finding.message}\n"))
    else:
        _write_findings(findings, result, output_format, out, fixed=len(fixed), unsafe_fixes=args.unsafe_fixes,
                        settings=settings, quiet=args.quiet)
    if args.show_fixes and output_format != "json":
        out.write(fix_report.applied_list(fixed))
    _report_internal(internal, err)
    if internal:
        return EXIT_ERROR
    if args.exit_non_zero_on_fix and fixed:
        return EXIT_FINDINGS
    if args.fix_only:
        return EXIT_FINDINGS if failures and not args.exit_zero else EXIT_CLEAN
    failing = any(f.severity != "info" or args.exit_non_zero_on_info for f in findings)
    return EXIT_FINDINGS if failing and not args.exit_zero else EXIT_CLEAN


def _run_catalog(args: argparse.Namespace) -> Any:
    """The catalog ``check`` would run with here."""
    from mtplint.config import run_catalog  # noqa: PLC0415 - subcommand dispatch: rules, rule

    return run_catalog(overrides_from(args))


def cmd_rules(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    catalog = _run_catalog(args)
    if args.output_format == "json":
        import json  # noqa: PLC0415 - output format: rules' JSON

        out.write(json.dumps([rule.to_json() for rule in catalog.values()], indent=2, ensure_ascii=False) + "\n")
        return EXIT_CLEAN
    for rule in catalog.values():
        house = "" if rule.origin == "builtin" else f"  (house rule: {rule.origin})"
        out.write(f"{rule.code}  {rule.name:<46} {rule.severity:<8} {','.join(rule.engines):<22} fix: {rule.fix}"
                  f"{house}\n")
    return EXIT_CLEAN


def cmd_rule(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from mtplint.report.docs import render_rule  # noqa: PLC0415 - subcommand dispatch: rule

    catalog = _run_catalog(args)
    wanted = args.code.strip()
    rule = catalog.get(wanted.upper()) or next((r for r in catalog.values() if r.name == wanted), None)
    if rule is None:
        err.write(f"mtplint: error: unknown rule {wanted!r} (see `mtplint rules`)\n")
        return EXIT_ERROR
    if args.output_format == "json":
        import json  # noqa: PLC0415 - output format: rule's JSON

        out.write(json.dumps({**rule.to_json(), "docs": rule.docs}, indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(render_rule(rule))
    return EXIT_CLEAN


class OutputError(Exception):
    """The report could not be written (a full disk, a closed standard output)."""


class _ReportStream:
    """The stream the report goes to (standard output, or ``-o FILE``): a write error becomes
    :class:`OutputError` (exit 2 with a message, not a traceback); a reader gone away (``mtplint
    check | head``) stays a BrokenPipeError, which ends the run quietly. Names that are not UTF-8
    are written with U+FFFD for their undecodable bytes (:func:`mtplint.report.escape.encodable`)."""

    def __init__(self, stream: TextIO | None, where: str = "standard output") -> None:
        self._stream = stream
        self._where = where

    def _failed(self, error: Exception) -> OutputError:
        why = getattr(error, "strerror", None) or str(error)
        return OutputError(f"cannot write the report to {self._where}: {why}")

    def write(self, text: str) -> int:
        if self._stream is None:
            raise OutputError(f"cannot write the report to {self._where}: it is closed")
        if not text.isascii():
            from mtplint.report.escape import encodable  # noqa: PLC0415 - a report's text that is not ASCII only

            text = encodable(text)
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as error:  # ValueError: "I/O operation on closed file"
            raise self._failed(error) from None

    def flush(self) -> None:
        if self._stream is None:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as error:
            raise self._failed(error) from None


class _Printable:
    """A text report's stream: control characters and undecodable bytes from the files are written
    escaped (:func:`mtplint.report.escape.printable`)."""

    def __init__(self, stream: TextIO) -> None:
        from mtplint.report.escape import printable  # noqa: PLC0415 - output format: the text reports

        self._stream = stream
        # a report is written a finding at a time: the function is looked up once, not per write
        self._printable = printable

    def write(self, text: str) -> int:
        return self._stream.write(self._printable(text))


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    # A run builds many small objects that live to its end (node trees, launches, findings) and
    # frees the rest by reference counting (a loader's texts hold its parses only weakly, so a
    # loader goes with all it read): the cyclic collector, at its default thresholds, walks them
    # over and over and finds next to nothing to free. So it is off for the run (forked workers
    # inherit that; spawned ones keep it on), which collects the few cycles it leaves itself, once
    # every few thousand files (mtplint.lint._Run.analyse); a caller that runs mtplint in its own
    # process gets the collector back.
    was_enabled = gc.isenabled()
    gc.disable()
    report: Any = out if out is not None else _ReportStream(sys.stdout)
    errors: Any = err if err is not None else (sys.stderr or _ReportStream(None))
    try:
        code = _main(argv, report, errors)
        if out is None:
            report.flush()  # a full disk shows at the flush of what is buffered: still this run's error
        return code
    except OutputError as error:
        _say(errors, f"mtplint: error: {error}\n")
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_CLEAN
    finally:
        if was_enabled:
            gc.enable()


def _say(err: Any, text: str) -> None:
    """A message on standard error, when there is still one to write to."""
    try:  # noqa: SIM105 - contextlib is start-up no run needs
        err.write(text)
    except (OSError, ValueError, OutputError):
        pass


def _main(argv: Sequence[str] | None, out: TextIO, err: TextIO) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not arguments or (arguments[0] not in COMMANDS and arguments[0] not in ("-h", "--help", "--version")):
        arguments = ["check", *arguments]
    # `--version` needs no subcommand's options; `--help` lists them all
    command = "version" if arguments[0] == "--version" else arguments[0] if arguments[0] in COMMANDS else None
    args = plain_check(arguments) if command == "check" else None
    if args is None:
        from mtplint.argument_parser import build_parser  # noqa: PLC0415 - subcommand dispatch: argparse for what plain_check cannot read

        try:
            args = build_parser(command).parse_args(arguments)
        except SystemExit as exit_:
            return EXIT_CLEAN if exit_.code == 0 else EXIT_ERROR
    verbose = bool(getattr(args, "verbose", False))
    if verbose:
        from mtplint.boundary import set_verbose  # noqa: PLC0415 - --verbose only

        set_verbose(True)
    try:
        return _run_command(args, out, err)
    finally:
        if verbose:
            set_verbose(False)


def _run_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        if args.command == "inspect":
            return cmd_inspect(args, out, err)
        if args.command == "rules":
            return cmd_rules(args, out, err)
        if args.command == "rule":
            return cmd_rule(args, out, err)
        if args.command in ("recommend", "crossover"):
            from mtplint.cli_tuner import run as run_tuner  # noqa: PLC0415 - subcommand dispatch: recommend, crossover

            return run_tuner(args, out, err)
        if args.command == "clean":
            return cmd_clean(out, err)
        if args.command == "server":
            from mtplint.server import run as run_server  # noqa: PLC0415 - subcommand dispatch: server

            return run_server(err)
        if args.command == "version":
            out.write(f"mtplint {__version__}\n")
            return EXIT_CLEAN
        return cmd_check(args, out, err)
    except UsageError as error:
        err.write(f"mtplint: error: {error}\n")
        return EXIT_ERROR
    except (BrokenPipeError, OutputError):
        raise
    except Exception as error:
        # an error of a configuration or of the rule catalog, wherever the command met it (a
        # configuration may be first read late in a run, for a finding's file), is the user's to
        # fix: said as it is, not as an internal error
        from mtplint.checks.catalog import CatalogError  # noqa: PLC0415 - subcommand dispatch: the error types of the command that failed
        from mtplint.config_files import ConfigError  # noqa: PLC0415 - subcommand dispatch: the error types of the command that failed

        if isinstance(error, (ConfigError, CatalogError)):
            err.write(f"mtplint: error: {error}\n")
            return EXIT_ERROR
        # the run itself could not complete (each file's and rule's own errors are findings):
        # one line, the traceback only with --verbose, and exit 2 -- never 1, which means findings
        from mtplint.boundary import report_traceback  # noqa: PLC0415 - subcommand dispatch: an internal error only
        from mtplint.errors import reason  # noqa: PLC0415 - subcommand dispatch: an internal error only

        report_traceback("this run")
        err.write(f"mtplint: error: internal error, the run did not complete ({reason(error)}); "
                  "please report it (`--verbose` shows the traceback)\n")
        return EXIT_ERROR


def run() -> NoReturn:
    """The ``mtplint`` command: :func:`main`, then a hard exit once the report is flushed.

    Tearing the interpreter down (freeing every module, table and parsed file) is a sizeable share
    of a one-file pre-commit run, and nothing is left to do by then: files are written
    and closed inside ``main`` and worker processes are joined before it returns. mypy ends its
    runs the same way. Callers of :func:`main` in their own process keep a normal exit, and so does a
    run under a profiler or a tracer (cProfile, coverage, a debugger): they write their results after
    the program returns.
    """
    code = main()
    if sys.getprofile() is not None or sys.gettrace() is not None:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # the reader went away (``mtplint check | head``), or a full disk
            pass  # (main flushed the report and said so): nothing more to say
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    run()
