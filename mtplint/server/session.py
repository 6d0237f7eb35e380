"""The editor's side of linting: a buffer (saved or not) linted as the file it stands for.

A lint here is ``mtplint check --stdin-filename PATH`` for one open document, with every other
open buffer standing for its file too: a compose file's ``.env``, a ``--config`` YAML or the
script a unit starts is read from the editor when it is open there, else from disk. The files a
lint read are remembered, so a change to one of them re-lints the documents that read it.

Nothing here knows the protocol's types: positions are (0-based line, character) pairs counted in
the client's position encoding, and the results are plain records the protocol layer converts.
"""

from __future__ import annotations

import json
import os
import traceback
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from mtplint.argument_parser import build_parser
from mtplint.arguments import UsageError, overrides_from
from mtplint.checks import Edit, Finding, Fix
from mtplint.checks.catalog import CatalogError
from mtplint.checks.suppress import comment_starts, file_syntax, launch_end_line, yaml_block_headers
from mtplint.config import LintSettings, settings_for
from mtplint.config_files import ConfigError
from mtplint.extract import FileLoader
from mtplint.lint import lint
from mtplint.pathtext import normalized
from mtplint.pipeline import LaunchReport, run
from mtplint.records import Record
from mtplint.source import SourceFile, Span

#: the configuration files ``check`` reads (:mod:`mtplint.config`): a change to one re-lints everything
CONFIG_NAMES = ("mtplint.toml", ".mtplint.toml", "pyproject.toml")

#: fixes the user may apply at the cursor (``display-only`` ones are shown in the message only)
OFFERED_APPLICABILITY = ("safe", "unsafe")


class BufferLoader(FileLoader):
    """A :class:`FileLoader` in which the editor's open buffers stand for their files, noting every
    file a lint asked for (found or not): what the lint's result depends on."""

    def __init__(self, root: str | os.PathLike[str], buffers: Mapping[str, str]) -> None:
        super().__init__(root)
        self.requested: set[str] = set()
        for name, text in buffers.items():
            path = normalized(name)
            self.put(SourceFile(path, self.display(path), text))

    def load(self, path: str) -> SourceFile | None:
        self.requested.add(os.path.abspath(path))
        return super().load(path)


class DocumentLint(Record):
    """One lint of one document at one version."""

    __slots__ = ("path", "version", "findings", "sources", "reads", "launches", "problem")
    path: str
    version: int | None
    findings: list[Finding]
    #: every file the findings, their fixes and the launches name, by the name findings show for it
    sources: dict[str, SourceFile]
    #: absolute paths of the files the lint read (found or not), the document's own included
    reads: frozenset[str]
    launches: list[LaunchReport]
    #: why the lint could not run (a configuration error, an internal error); None: it ran
    problem: str | None

    def __init__(self, path: str, version: int | None, findings: list[Finding], sources: dict[str, SourceFile],
                 reads: frozenset[str], launches: list[LaunchReport], problem: str | None = None) -> None:
        self.path = path
        self.version = version
        self.findings = findings
        self.sources = sources
        self.reads = reads
        self.launches = launches
        self.problem = problem

    def file_of(self, display: str) -> str:
        """The absolute path of the file shown as ``display``."""
        source = self.sources.get(display)
        if source is not None:
            return os.path.abspath(source.path)
        return os.path.abspath(display)

    def source_of(self, path: str, text: str) -> SourceFile | None:
        """The file at absolute ``path`` as this lint read it, if it read ``text`` there (the
        lint's positions in it then hold for that text)."""
        for source in self.sources.values():
            if source.text == text and os.path.abspath(source.path) == path:
                return source
        return None

    def findings_by_file(self) -> dict[str, list[Finding]]:
        """The findings by the absolute path of the file each is in."""
        by_file: dict[str, list[Finding]] = {}
        for finding in self.findings:
            by_file.setdefault(self.file_of(finding.span.file), []).append(finding)
        return by_file


def check_arguments(extra: Sequence[str], path: Path, root: Path | None = None) -> LintSettings:
    """The settings ``mtplint check [extra] --stdin-filename PATH`` would lint with, run in
    ``root`` (the workspace folder that holds the file; None: the working directory): the closest
    configuration to ``path``, read afresh (so an edited ``mtplint.toml`` holds from the next lint),
    and the command-line options ``extra`` (the client's ``initializationOptions.args``).
    Raises :class:`UsageError` for options ``check`` refuses, and what :func:`settings_for` raises."""
    parser = build_parser("check")
    try:
        args = parser.parse_args(["check", *extra, "--stdin-filename", str(path)])
    except SystemExit:
        raise UsageError(f"these options are not `mtplint check` options: {' '.join(extra)}") from None
    settings, _ = settings_for(overrides_from(args), path)
    if root is not None:
        settings.pipeline.root = normalized(root)
    return settings


def lint_document(path: str, buffers: Mapping[str, str], extra: Sequence[str] = (),
                  version: int | None = None, root: Path | None = None) -> DocumentLint:
    """Lint the open document ``path`` (absolute) as ``mtplint check`` run in ``root`` lints the
    file, with ``buffers`` (absolute path -> text, the document's own included) standing for their
    files.

    Never raises: a configuration the run refuses, or an error of the linter itself, is the lint's
    :attr:`DocumentLint.problem`, shown on the document as an MTP001-style diagnostic."""
    file = Path(path)
    text = buffers.get(path, "")
    try:
        settings = check_arguments(extra, file, root)
        loader = BufferLoader(settings.pipeline.root, buffers)
        result = lint([file], settings, loader)
        # a run keeps its launches' findings, not their models: the settings a hover shows (and the
        # launch ends a noqa comment may follow) are modelled again, from the same buffers
        launches = run([file], settings.pipeline, BufferLoader(settings.pipeline.root, buffers)).launches
    except (ConfigError, CatalogError, UsageError) as error:
        return _failed(file, text, version, f"mtplint configuration error: {error}")
    except Exception as error:  # the linter's own failure: reported on the document, the server goes on
        detail = "".join(traceback.format_exception_only(type(error), error)).strip()
        return _failed(file, text, version, f"internal error, this file was not linted ({detail}); please report it")
    sources = _sources(loader, result.findings, launches)
    internal = result.pipeline.internal_errors
    # a launch or file the pipeline could not check: its own finding says so where it can; the
    # run's first such error is shown on the document, as `check` prints it on stderr
    problem = f"internal error: {internal[0].partition(chr(10))[0]}" if internal else None
    return DocumentLint(path, version, list(result.findings), sources, frozenset(loader.requested | {path}),
                        launches, problem)


def _failed(file: Path, text: str, version: int | None, problem: str) -> DocumentLint:
    source = SourceFile(str(file), str(file), text)
    return DocumentLint(str(file), version, [], {source.display: source}, frozenset({str(file)}), [], problem)


def _sources(loader: FileLoader, findings: Iterable[Finding], launches: Iterable[LaunchReport]) -> dict[str, SourceFile]:
    """The texts the findings (and their fixes' edits) and the launches are in, by display name."""
    names: set[str] = set()
    for finding in findings:
        names.add(finding.span.file)
        if finding.launch_span is not None:
            names.add(finding.launch_span.file)
        if finding.fix is not None:
            names.update(edit.span.file for edit in finding.fix.edits)
    sources: dict[str, SourceFile] = {}
    for report in launches:
        sources[report.launch.source.display] = report.launch.source
        # the files a hover may be asked about: an env entry's .env, a --config file's keys
        spans = [entry.span for entry in report.launch.env.values()]
        spans += [setting.span for setting in report.effective.values()]
        spans += [option.span for option in report.parsed.options.values()]
        names.update(span.file for span in spans if span is not None)
    for name in names:
        source = loader.by_display(name)
        if source is not None:
            sources[name] = source
    return sources


# -- positions ----------------------------------------------------------------------------------

#: the position encodings of the protocol, by the name it gives them
ENCODINGS = ("utf-16", "utf-32", "utf-8")


def _units(text: str, encoding: str) -> int:
    if encoding == "utf-32" or text.isascii():
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def position_of(source: SourceFile, offset: int, encoding: str = "utf-16") -> tuple[int, int]:
    """The 0-based (line, character) of a character offset, characters counted in ``encoding``."""
    line, column = source.position(offset)
    start = source.line_start(line)
    return line - 1, _units(source.text[start:start + column - 1], encoding)


def offset_of(source: SourceFile, line: int, character: int, encoding: str = "utf-16") -> int:
    """The character offset of a 0-based (line, character) position counted in ``encoding``
    (clamped to the line, as the protocol asks of a position past its end)."""
    if line >= source.line_count:
        return len(source.text)
    start = source.line_start(line + 1)
    end = source.text.find("\n", start)
    end = len(source.text) if end < 0 else end
    if encoding == "utf-32" or source.text[start:end].isascii():
        return min(start + character, end)
    counted = 0
    for index in range(start, end):
        if counted >= character:
            return index
        counted += _units(source.text[index], encoding)
    return end


Range = tuple[tuple[int, int], tuple[int, int]]


def range_of(span: Span, source: SourceFile, encoding: str = "utf-16") -> Range:
    return position_of(source, span.start, encoding), position_of(source, span.end, encoding)


# -- code actions -------------------------------------------------------------------------------

class TextChange(Record):
    """A replacement of a range in one file (absolute path), as a workspace edit holds it."""

    __slots__ = ("file", "range", "text")
    file: str
    range: Range
    text: str

    def __init__(self, file: str, range_: Range, text: str) -> None:
        self.file = file
        self.range = range_
        self.text = text


def fix_changes(fix: Fix, lint: DocumentLint, encoding: str = "utf-16") -> list[TextChange] | None:
    """A fix's edits as changes to the files as the lint read them; None when a file it edits is
    not known (the fix is then not offered)."""
    changes = []
    for edit in fix.edits:
        source = lint.sources.get(edit.span.file)
        if source is None:
            return None
        changes.append(TextChange(os.path.abspath(source.path), range_of(edit.span, source, encoding), edit.content))
    return changes


def offered(finding: Finding) -> bool:
    """Whether the finding's fix is a quick fix to offer (safe, or unsafe and labelled so)."""
    return finding.fix is not None and finding.fix.applicability in OFFERED_APPLICABILITY and bool(finding.fix.edits)


def fix_title(finding: Finding) -> str:
    fix = finding.fix
    assert fix is not None
    title = f"{finding.code}: {fix.message or 'apply the fix'}"
    return title if fix.applicability == "safe" else f"{title} (unsafe fix)"


#: what a ``noqa`` comment suppresses in each file syntax (:mod:`mtplint.checks.suppress`): a
#: comment after the code on a line, or (systemd and INI files: whole-line comments only) a
#: line of its own, which speaks for the whole file
_INLINE_COMMENTS = ("yaml", "python", "shell")
_WHOLE_LINE_COMMENTS = ("systemd", "ini")


def suppression(finding: Finding, lint: DocumentLint) -> tuple[str, Edit] | None:
    """The title and edit of a ``# mtplint: noqa: CODE`` comment that suppresses ``finding``,
    where the file's syntax allows a comment that mtplint reads as one: at the end of the finding's
    line, of the line where its launch starts, or of the line where the launch's command ends
    (the only line of a ``\\``-continued shell command that can hold a comment), or of the header of
    the YAML block scalar it is in; in systemd units and INI files, a comment line of its own
    before the first line, for the whole file. None: the file has no comments (JSON), or none of
    those lines can take one (each ends a continuation, or holds a noqa comment of the user's)."""
    source = lint.sources.get(finding.span.file)
    if source is None:
        return None
    syntax = file_syntax(source)
    comment = f"# mtplint: noqa: {finding.code}"
    if syntax in _WHOLE_LINE_COMMENTS:
        return f"{finding.code}: suppress in this file", Edit(source.span(0), comment + source.newline)
    if syntax not in _INLINE_COMMENTS:
        return None
    for line in _suppression_lines(finding, lint, source):
        start = source.line_start(line)
        end = source.text.find("\n", start)
        end = len(source.text) if end < 0 else end
        content = source.text[start:end].rstrip("\r")
        if not content.strip() or content.endswith("\\") or "noqa" in content.lower():
            continue  # a comment after a continuation would end the command; an existing noqa is the user's
        at = start + len(content)
        new_text = source.text[:at] + "  " + comment + source.text[at:]
        if at + 2 in comment_starts(SourceFile(source.path, source.display, new_text)):
            return (f"{finding.code}: suppress with `{comment}`",
                    Edit(source.span(at, at), "  " + comment))
    return None


def _suppression_lines(finding: Finding, lint: DocumentLint, source: SourceFile) -> list[int]:
    """The lines a noqa comment for ``finding`` may go on, most specific first: its own, then its
    launch's first and last, then the header of the YAML block scalar it is in (``command: >``)."""
    lines = [finding.span.line]
    launch = finding.launch_span
    if launch is not None and launch.file == finding.span.file:
        lines.append(launch.line)
        for report in lint.launches:
            if report.launch.span == launch:
                end = launch_end_line(report)
                if end is not None:
                    lines.append(end)
    if file_syntax(source) == "yaml":
        for header, end in yaml_block_headers(source.text):
            if header <= finding.span.start < end:
                lines.append(source.position(header)[0])
    return list(dict.fromkeys(line for line in lines if 1 <= line <= source.line_count))


def fix_all_changes(path: str, buffers: Mapping[str, str], extra: Sequence[str] = (),
                    encoding: str = "utf-16", root: Path | None = None) -> list[TextChange]:
    """What ``mtplint check --fix`` would write for the document ``path``, as changes to the texts
    the editor holds: the fix engine (:func:`mtplint.fix.apply.fix_project`) on the open buffers,
    each changed file replaced whole. Nothing is written."""
    from mtplint.fix.apply import fix_project  # noqa: PLC0415 - fixing: only when a fix is asked for

    file = Path(path)
    settings = check_arguments(extra, file, root)
    loader = FileLoader(settings.pipeline.root)
    texts = [SourceFile(normalized(name), loader.display(normalized(name)), text) for name, text in buffers.items()]
    run = fix_project([file], settings, buffers=texts)
    changes = []
    for original, text in run.changed():
        end = position_of(original, len(original.text), encoding)
        changes.append(TextChange(os.path.abspath(original.path), ((0, 0), end), text))
    return changes


# -- hover --------------------------------------------------------------------------------------

def _covers(span: Span | None, display: str, offset: int) -> bool:
    return span is not None and span.file == display and span.start <= offset <= span.end


def hover_text(lints: Iterable[DocumentLint], path: str, text: str, offset: int) -> str | None:
    """Markdown for the setting under ``offset`` in the file at ``path`` (whose text is ``text``):
    a flag (or its value), a key of a JSON value or a keyword argument, an environment entry --
    for each launch that uses it, in any of the ``lints`` (a ``.env`` entry is used by the compose
    launch that reads the file), the effective values it sets, where they come from and the
    engine versions in play."""
    parts = []
    for linted in lints:
        source = linted.source_of(path, text)
        if source is None:
            continue
        for report in linted.launches:
            section = _launch_hover(report, source, offset)
            if section and section not in parts:
                parts.append(section)
    return "\n\n---\n\n".join(parts) if parts else None


def _launch_hover(report: LaunchReport, source: SourceFile, offset: int) -> str | None:
    launch = report.launch
    display = source.display
    lines: list[str] = []
    flag = _flag_at(report, display, offset)
    word = _word_around(source.text, offset)
    options = [(name, option) for name, option in report.parsed.options.items()
               if _covers(option.span, display, offset) or (flag is not None and option.flag == flag)
               or (option.span is not None and option.span.file == display and _overlaps(option.span, word))]
    for name, option in options:
        shown = option.flag or name
        value = "(unresolved)" if option.unresolved else _shown(option.value)
        lines.append(f"`{shown}` = `{value}` ({_origin(option.origin, option.span, launch.source.display)})")
    line = source.position(offset)[0]
    line_text = source.split_lines[line - 1] if line <= len(source.split_lines) else ""
    # an entry's span is its value's: the name before it, on the same line, names it too
    env = [entry for entry in launch.env.values()
           if _covers(entry.span, display, offset) or _covers(entry.value.span, display, offset)
           or (entry.span is not None and entry.span.file == display and entry.span.line == line
               and entry.name in line_text)]
    for entry in env:
        value = "(unresolved)" if entry.value.unresolved else entry.value.value
        lines.append(f"`{entry.name}` = `{value}` ({_origin(entry.origin, entry.span, launch.source.display)})")
    spans = [option.span for _, option in options if option.span is not None]
    spans.extend(entry.span for entry in env if entry.span is not None)
    settings = [(name, setting) for name, setting in report.effective.items()
                if _covers(setting.span, display, offset)
                or (setting.span is not None and any(_inside(setting.span, span) for span in spans))]
    if not lines and not settings:
        return None
    header = f"**{launch.engine}** launch ({launch.entry}) at line {launch.span.line if launch.span else 1}"
    body = [header, "", *(f"- {line}" for line in lines)]
    if settings:
        body += ["", "| setting | effective value | from |", "|---|---|---|"]
        for name, setting in settings:
            where = _origin(setting.origin, setting.span, launch.source.display)
            value = "unknown" if setting.value is None else _shown(setting.value)
            body.append(f"| `{name}` | `{value}` | {where} |")
    body += ["", _version_line(report)]
    return "\n".join(body)


def _origin(origin: str, span: Span | None, launch_file: str) -> str:
    """How a value was set, and the file it is in when that is not the launch's own (a ``.env``,
    a ``--config`` YAML)."""
    if span is None or span.file == launch_file:
        return origin
    return f"{origin}, {span.file}:{span.line}"


def _inside(inner: Span, outer: Span) -> bool:
    return inner.file == outer.file and outer.start <= inner.start and inner.end <= outer.end


def _overlaps(span: Span, bounds: tuple[int, int]) -> bool:
    return span.start < bounds[1] and bounds[0] < max(span.end, span.start + 1)


def _word_around(text: str, offset: int) -> tuple[int, int]:
    """The bounds of the word (text between blanks) at ``offset``: a value written as
    ``${KV_DTYPE:-auto}`` is one word, whatever part of it the value's span names."""
    start = offset
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    end = offset
    while end < len(text) and not text[end].isspace():
        end += 1
    return start, end


def _flag_at(report: LaunchReport, display: str, offset: int) -> str | None:
    """The flag under the cursor (``--speculative-config``, also written ``--flag=value``), read
    from the launch's command-line words."""
    for token in report.launch.argv:
        if _covers(token.span, display, offset) and token.value.startswith("-"):
            return token.value.partition("=")[0]
    return None


def _shown(value: object) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _version_line(report: LaunchReport) -> str:
    version = report.version
    if version.known:
        return f"{version.engine} {version.version} ({version.source})"
    return (f"{version.engine} version not pinned: modelled as {version.version}, "
            f"versions in play {version.describe_range()}")
