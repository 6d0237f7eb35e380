r"""Suppressions: ``per-file-ignores`` and ``# noqa`` comments, and MTP002 for unused ones.

``# mtplint: noqa: MTP102`` (or plain ``# noqa: MTP102``) on the line of a finding, on the line
where its launch starts, or on the line where the launch's command ends (the only line of a
``\``-continued shell command that can hold a comment), suppresses it; a comment on the header of a
YAML block scalar (``command: >  # noqa: …``) speaks for every line of the block; without codes it suppresses every finding there. A line
holding only ``# mtplint: noqa`` (optionally ``: codes``) suppresses those codes in the whole file.

Only text that the file's own parser reads as a comment counts, so a ``#`` inside a quoted string
or inside a YAML block scalar (``command: >`` … ) is text, never a suppression:

- YAML (compose, Kubernetes, ``--config`` files, llama-swap): comments are what PyYAML's scanner
  skips — everything outside scalar tokens; the header line of a block scalar (``command: >  # …``)
  is a comment, its body is not.
- Python: ``COMMENT`` tokens of :mod:`tokenize`.
- Shell scripts, ``.env`` files, Dockerfiles: ``#`` at the start of a word outside quotes (bash
  and compose's dotenv parser agree on this; a Dockerfile shell-form ``CMD``/``RUN`` is shell).
- systemd units and INI files: whole-line comments only (``#`` or ``;`` first) — systemd passes an
  inline ``#`` to the program as an argument (systemd.syntax(7), "Comments").
- JSON: no comments.

Files are scanned when they hold a launch *or* a finding, so a ``noqa`` in a ``--config`` YAML or
an ``.env`` file that holds the offending value works too.
"""

from __future__ import annotations

import bisect
import io
import os
import re
from collections.abc import Container, Iterable, Iterator
from fnmatch import fnmatch
from functools import cache, lru_cache

from mtplint.checks import Edit, Finding, Fix
from mtplint.checks.catalog import Rule
from mtplint.checks.selection import matches
from mtplint.discover import classify
from mtplint.extract import MAX_FILE_BYTES, decode
from mtplint.files import read_regular
from mtplint.pathtext import normalized, path_name
from mtplint.pipeline import LaunchReport, Result
from mtplint.source import SourceFile, Span

#: a rule code in a ``noqa`` list, as ruff and flake8 read them (``F401``, ``E501``, ``PLR0913``,
#: ``MTP102``): a plain noqa comment listing E501 names another linter's code -- read as a bare
#: noqa it would silently suppress every mtplint finding on that line
_CODE = r"[A-Za-z]+\d+"


@cache  # compiled on first use: most runs meet no file with "noqa" in it
def _noqa() -> re.Pattern[str]:
    return re.compile(
        rf"[#;]\s*(?P<tool>mtplint:\s*)?noqa(?:(?P<colon>\s*:\s*)(?P<codes>{_CODE}(?:[\s,]+{_CODE})*))?(?![\w-])",
        re.IGNORECASE,
    )



class Suppression:
    """A ``noqa`` comment (or a file-level one): its line, codes (None: every code), and which codes
    it was used for. A plain class: an internal record, not worth a dataclass's start-up cost."""

    __slots__ = ("codes", "file_level", "line", "ours", "span", "used")

    def __init__(self, line: int, codes: frozenset[str] | None, span: Span, file_level: bool,
                 ours: bool = True) -> None:
        self.line = line
        self.codes = codes
        self.span = span
        self.file_level = file_level
        #: the ``mtplint:`` form (every code in it is meant for mtplint), not a plain noqa comment
        self.ours = ours
        self.used: set[str] = set()


# -- which characters are comments -----------------------------------------------------------------

def file_syntax(source: SourceFile) -> str:
    """The comment syntax of a file: yaml, python, shell, systemd, ini, json or unknown."""
    name = path_name(normalized(source.display)).lower()
    if name == ".env" or name.endswith(".env") or name.startswith(".env."):
        return "shell"
    if name.endswith(".json"):
        return "json"
    head = source.text[:200].encode("utf-8", "replace")
    kind = classify(normalized(source.display), head)
    if kind is None and source.display == "-":  # standard input without a name: its kind is in its text
        from mtplint.stdin import kind_of_text  # noqa: PLC0415 - standard input only

        kind = kind_of_text(source.text)
    if kind in ("compose", "yaml"):
        return "yaml"
    if kind in ("shell", "dockerfile"):
        return "shell"
    if kind in ("python", "systemd", "ini"):
        return kind
    if source.text.lstrip().startswith(("{", "[")):
        return "json"
    return "unknown"


def _line_comments(text: str, start: int = 0) -> Iterator[int]:
    """Fallback, line by line: ``#`` at a word start outside quotes (quotes do not span lines)."""
    offset = start
    for line in text[start:].splitlines(keepends=True):
        yield from (offset + i for i in _shell_comments(line, reset_each_line=True))
        offset += len(line)


def _shell_comments(text: str, reset_each_line: bool = False) -> Iterator[int]:
    """Offsets of ``#`` that start a comment in shell syntax (quotes may span lines)."""
    quote: str | None = None
    index = 0
    length = len(text)
    while index < length:
        char = text[index]
        if char == "\n" and reset_each_line:
            quote = None
        if quote == "'":
            if char == "'":
                quote = None
        elif quote == '"':
            if char == "\\":
                index += 1
            elif char == '"':
                quote = None
        elif char == "\\":
            index += 1
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or text[index - 1] in " \t\n;|&("):
            yield index
            end = text.find("\n", index)
            index = length if end < 0 else end
            continue
        index += 1


def yaml_block_headers(text: str) -> list[tuple[int, int]]:
    """(header offset, end offset) of every YAML block scalar (``command: >`` and its body)."""
    from mtplint.startup import yaml  # noqa: PLC0415 - PyYAML: a YAML file's comments only

    blocks: list[tuple[int, int]] = []
    try:
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            if isinstance(token, yaml.ScalarToken) and token.style in (">", "|"):
                blocks.append((token.start_mark.index, token.end_mark.index))
    except yaml.YAMLError:
        pass
    return blocks


def _yaml_comments(text: str) -> Iterator[int]:
    from mtplint.startup import yaml  # noqa: PLC0415 - PyYAML: a YAML file's comments only

    # libyaml's scanner when present: the pure-Python one is quadratic in flow nesting depth
    # and many times slower on long lines
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    covered: list[tuple[int, int]] = []
    scanned_to = 0
    try:
        for token in yaml.scan(text, Loader=loader):
            start, end = token.start_mark.index, token.end_mark.index
            if isinstance(token, yaml.ScalarToken):
                if token.style in (">", "|"):
                    # the header line (``>  # comment``) is a comment; the body is text
                    newline = text.find("\n", start)
                    start = end if newline < 0 else newline + 1
                covered.append((start, end))
            scanned_to = max(scanned_to, end)
    except yaml.YAMLError:
        # the file does not parse (MTP001): trust the tokens scanned so far, read the rest line by line
        limit = text.rfind("\n", 0, scanned_to) + 1
        yield from _line_comments(text, limit)
    else:
        limit = len(text)
    # scalar tokens come in file order and do not overlap: find the one before a ``#`` by bisection
    # (a linear scan per ``#`` made a file of many ``#`` quadratic)
    covered.sort()
    starts = [start for start, _ in covered]
    for match in re.finditer("#", text[:limit]):
        index = match.start()
        if index and text[index - 1] not in " \t\n":
            continue
        before = bisect.bisect_right(starts, index) - 1
        if before >= 0 and index < covered[before][1]:
            continue
        yield index


def _python_comments(source: SourceFile) -> Iterator[int]:
    import tokenize  # noqa: PLC0415 - a Python source's comments only

    emitted_to = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(source.text).readline):
            if token.type == tokenize.COMMENT:
                yield source.line_start(token.start[0]) + token.start[1]
            emitted_to = source.line_start(token.end[0]) + token.end[1]
    except (tokenize.TokenError, SyntaxError):
        yield from _line_comments(source.text, source.line_start(source.position(emitted_to)[0] + 1))


def _whole_line_comments(text: str, markers: str) -> Iterator[int]:
    offset = 0
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip(" \t")
        if stripped[:1] and stripped[0] in markers:
            yield offset + len(line) - len(stripped)
        offset += len(line)


def comment_starts(source: SourceFile) -> list[int]:
    """Offsets where real comments begin (each runs to the end of its line)."""
    syntax = file_syntax(source)
    text = source.text
    if syntax == "yaml":
        return sorted(set(_yaml_comments(text)))
    if syntax == "python":
        return list(_python_comments(source))
    if syntax == "shell":
        return list(_shell_comments(text))
    if syntax == "systemd":
        return list(_whole_line_comments(text, "#;"))
    if syntax == "ini":
        return list(_whole_line_comments(text, "#;"))
    if syntax == "json":
        return []
    return list(_line_comments(text))


@lru_cache(maxsize=1)  # asked for each launch of a file in turn: the text is lowered once, not per launch
def may_hold_noqa(text: str) -> bool:
    """Whether a text can hold a suppression comment at all (most files do not): every match of
    ``_noqa()`` holds the word in some case. Only ASCII letters match n, o, q and a ignoring case,
    and ``lower()`` maps each to its own lowercase letter, so the lowered text holds "noqa" wherever
    the text holds a match (a case-insensitive regex search took ~6x as long)."""
    return "noqa" in text.lower()


def suppressions_in(source: SourceFile) -> list[Suppression]:
    found: list[Suppression] = []
    text = source.text
    if not may_hold_noqa(text):
        return found  # most files: no need to tell comments from strings
    for start in comment_starts(source):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        for match in _noqa().finditer(text, start, end):
            if match.start() != start and text[match.start()] != "#":
                continue
            line, _ = source.position(match.start())
            before = text[source.line_start(line):start]
            file_level = bool(match.group("tool")) and match.start() == start and not before.strip()
            codes_text = match.group("codes")
            codes = frozenset(c.upper() for c in re.split(r"[\s,]+", codes_text.strip())) if codes_text else None
            found.append(Suppression(line, codes, source.span(match.start(), match.end()), file_level,
                                     ours=bool(match.group("tool"))))
    return found


# -- applying them ---------------------------------------------------------------------------------

def _looks_like_ours(code: str, catalog: dict[str, Rule]) -> bool:
    """A code in a plain ``# noqa:`` list that is meant for mtplint: ``MTP…`` or the prefix of a
    house rule (``ACME01`` for ``ACME001``); ``E501``, ``F401``, ``SC2086`` belong to other linters."""
    prefix = code.rstrip("0123456789")
    return prefix == "MTP" or any(known.rstrip("0123456789") == prefix for known in catalog)


def _covers(suppression: Suppression, code: str) -> bool:
    return suppression.codes is None or code in suppression.codes


def _per_file_ignored(file: str, code: str, per_file_ignores: dict[str, list[str]], catalog: dict[str, Rule]) -> bool:
    name = file.rsplit("/", 1)[-1]
    rule = catalog.get(code)
    absolute = None
    for pattern, selectors in per_file_ignores.items():
        matched = fnmatch(file, pattern) or fnmatch(name, pattern) or fnmatch(file, f"*/{pattern}")
        if not matched and os.path.isabs(pattern):
            # a pattern anchored at its configuration file's directory (mtplint.config._anchored)
            absolute = absolute or os.path.realpath(file)
            matched = fnmatch(absolute, pattern)
        if matched and rule is not None and any(matches(rule, selector) for selector in selectors):
            return True
    return False


def _sources(result: Result, findings: Iterable[Finding], launch_sources: dict[str, SourceFile] | None = None,
             without_noqa: Container[str] = frozenset()) -> dict[str, SourceFile]:
    """Files holding a launch or a finding (a ``--config`` YAML, an ``.env``, a malformed file),
    but those known to hold no ``noqa`` (``without_noqa``: not read again for nothing)."""
    sources: dict[str, SourceFile] = dict(launch_sources or {})
    for report in result.launches:
        sources.setdefault(report.launch.source.display, report.launch.source)
    for finding in findings:
        file = finding.span.file
        if file in sources or file in without_noqa:
            continue
        # the text the run read (under --fix, the fixed text not yet written), else the disk's
        known = result.loader.by_display(file) if result.loader is not None else None
        if known is not None:
            sources[file] = known
            continue
        try:
            # bytes as stored (CRLF kept, BOM dropped), so offsets match the file a fix edits; a
            # file over the size limit (skipped by the run) or no longer a regular one is not read
            text = decode(read_regular(file, MAX_FILE_BYTES))
        except (OSError, UnicodeDecodeError):
            continue
        # a file without a suppression is read for nothing more: not held while the others are
        # read (a large tree's findings sit in thousands of .env and --config files)
        sources[file] = SourceFile(normalized(file), file, text if may_hold_noqa(text) else "")
    return sources


def launch_end_line(report: LaunchReport) -> int | None:
    """The last line of a launch's command in its own file (where a trailing ``noqa`` may sit)."""
    launch = report.launch
    if launch.span is None:
        return None
    ends = [t.span.end_line for t in launch.argv if t.span is not None and t.span.file == launch.span.file]
    return max([launch.span.end_line, *ends])


def apply_suppressions(
    findings: list[Finding],
    result: Result,
    per_file_ignores: dict[str, list[str]],
    catalog: dict[str, Rule],
    chosen: set[str],
    *,
    launch_sources: dict[str, SourceFile] | None = None,
    launch_ends: dict[tuple[str, int], int] | None = None,
    without_noqa: Container[str] = frozenset(),
) -> tuple[list[Finding], list[Finding]]:
    """Split findings into kept and suppressed; add MTP002 for suppressions that matched nothing.

    ``launch_sources`` / ``launch_ends``: the files holding launches and the last line of each
    launch (keyed by file and start offset), for a run whose launches were modelled elsewhere (in
    worker processes, or read from the cache: ``result.launches`` is then empty); ``without_noqa``:
    files those workers found no ``noqa`` in."""
    sources = _sources(result, findings, launch_sources, without_noqa)
    kept: list[Finding] = []
    suppressed: list[Finding] = []
    # only the files holding a suppression (few): the others keep every finding in them
    by_file = {name: found for name, source in sources.items() if (found := suppressions_in(source))}
    # a command continued over lines (``\`` in shell) can carry a comment only on its last line
    launch_ends = dict(launch_ends or {})
    for report in result.launches:
        span = report.launch.span
        if span is not None and span.file in by_file:
            end = launch_end_line(report)
            if end is not None:
                launch_ends[(span.file, span.start)] = end
    # a comment cannot sit inside a YAML block scalar: the line of its header (``command: >``) speaks
    # for every line of the block
    header_of: dict[str, dict[int, int]] = {}
    for name in by_file:
        source = sources[name]
        if file_syntax(source) == "yaml":
            body_lines: dict[int, int] = {}
            for start, end in yaml_block_headers(source.text):
                header = source.position(start)[0]
                for line in range(header + 1, source.position(max(start, end - 1))[0] + 1):
                    body_lines[line] = header
            header_of[name] = body_lines

    for finding in findings:
        file = finding.span.file
        if per_file_ignores and _per_file_ignored(file, finding.code, per_file_ignores, catalog):
            finding.suppressed = True
            suppressed.append(finding)
            continue
        file_suppressions = by_file.get(file)
        if file_suppressions is None:
            kept.append(finding)
            continue
        lines = {finding.span.line}
        if finding.launch_span is not None and finding.launch_span.file == file:
            lines.add(finding.launch_span.line)
            lines.add(launch_ends.get((file, finding.launch_span.start), finding.launch_span.line))
        headers = header_of.get(file, {})
        lines |= {headers[line] for line in lines if line in headers}
        matched = False
        for suppression in file_suppressions:
            if (suppression.file_level or suppression.line in lines) and _covers(suppression, finding.code):
                suppression.used.add(finding.code)
                matched = True
        if matched:
            finding.suppressed = True
            suppressed.append(finding)
        else:
            kept.append(finding)

    if "MTP002" in chosen and "MTP002" in catalog:
        unused_rule = catalog["MTP002"]
        for file, suppressions in by_file.items():
            if _per_file_ignored(file, "MTP002", per_file_ignores, catalog):
                continue
            for suppression in suppressions:
                source = sources[file]
                if suppression.codes is None:
                    if not suppression.used:
                        kept.append(Finding(unused_rule, "unused `noqa` comment: it suppresses nothing; remove it",
                                            suppression.span, unused_noqa_fix(source, suppression, None)))
                    continue
                unused = sorted(code for code in suppression.codes
                                if code not in suppression.used and code in chosen and code != "MTP002")
                unknown = sorted(code for code in suppression.codes
                                 if code not in catalog and (suppression.ours or _looks_like_ours(code, catalog)))
                if unused or unknown:
                    parts = []
                    if unused:
                        parts.append(f"unused `noqa` for {', '.join(unused)} (no such finding here)")
                    if unknown:
                        parts.append(f"unknown code {', '.join(unknown)} in `noqa` (see `mtplint rules`)")
                    kept.append(Finding(unused_rule, "; ".join(parts), suppression.span,
                                        unused_noqa_fix(source, suppression, {*unused, *unknown})))
    return kept, suppressed


# -- the fix for MTP002 ----------------------------------------------------------------------------

def unused_noqa_fix(source: SourceFile, suppression: Suppression, codes: set[str] | None) -> Fix | None:
    """Remove ``codes`` from the comment, or the whole comment (and the blanks before it) when none
    would be left; a line holding nothing else goes entirely. ``codes`` None: the comment lists none."""
    text = source.text
    match = _noqa().match(text, suppression.span.start)
    if match is None:
        return None
    line = source.line_start(suppression.line)
    end_of_line = text.find("\n", match.start())
    end_of_line = len(text) if end_of_line < 0 else end_of_line
    if end_of_line > line and text[end_of_line - 1] == "\r":
        end_of_line -= 1
    written = re.findall(_CODE, match.group("codes") or "")
    if not match.group("tool") and file_syntax(source) == "python":
        # a plain ``noqa`` comment in Python speaks for flake8/ruff too: only our own codes go
        if codes is None or not written:
            return None
        codes = {code for code in codes if code.startswith("MTP")}
        if not codes:
            return None
    keep = [code for code in written if codes is None or code.upper() not in codes]
    if keep and codes is not None:
        start, end = match.span("codes")
        separator = re.search(r"[\s,]+", match.group("codes"))
        joined = (separator.group(0) if separator else ", ").join(keep)
        return Fix("safe", f"Remove {', '.join(sorted(codes))} from the `noqa` comment",
                   [Edit(source.span(start, end), joined)])
    start = match.start()
    if not text[line:start].strip():
        # the comment is the whole line: the line goes (its newline with it)
        following = text.find("\n", start)
        stop = len(text) if following < 0 else following + 1
        if following < 0 and line > 0:
            line -= 2 if text[line - 2:line] == "\r\n" else 1
        return Fix("safe", "Remove the unused `noqa` comment", [Edit(source.span(line, stop), "")])
    while start > line and text[start - 1] in " \t":
        start -= 1
    return Fix("safe", "Remove the unused `noqa` comment", [Edit(source.span(start, end_of_line), "")])
