"""``.env`` files and systemd ``EnvironmentFile=``: ``KEY=value`` lines with their positions.

Two readers share this module because the formats are nearly the same:

* ``dialect="compose"`` follows compose-go's dotenv parser (the one ``docker compose`` uses for the
  project ``.env`` and ``env_file:``): optional ``export`` prefix, ``KEY=value`` or ``KEY: value``,
  single quotes literal, double quotes with backslash escapes, unquoted values end at a `` #``
  comment and are trimmed, quoted values may span lines, and ``${VAR}`` / ``${VAR:-default}`` /
  ``$VAR`` in unquoted and double-quoted values are interpolated from the keys defined above them.
  A bare ``KEY`` line takes its value from the environment of whoever runs compose: unresolved.
* ``dialect="systemd"`` follows systemd's ``EnvironmentFile=`` reader (systemd.exec(5)): ``#`` and
  ``;`` comment lines, lines without ``=`` ignored, quotes and a trailing ``\\`` joining lines, and
  no variable expansion.

:func:`parse_docker_env_file` reads a third, simpler format: ``docker run --env-file`` (docker/cli
``opts/file.go`` ``parseKeyValueFile``; documented in the ``docker container run`` reference,
"Set environment variables"): one ``NAME=value`` per line, leading whitespace dropped, lines starting
with ``#`` and blank lines skipped, the value taken verbatim (no quote removal, no trimming, no
interpolation, no inline comments), a bare ``NAME`` copied from the docker client's environment, and
a name with a blank in it refused ("poorly formatted environment").

Every value is a :class:`~mtplint.source.Token` whose span covers the value as written (inside the
quotes); a value that refers to something unknown is marked unresolved, never guessed.
"""

from __future__ import annotations

import re

from mtplint.extract.budget import ExpansionBudget, is_over_budget, over_budget
from mtplint.source import MappedText, SourceFile, Token
from mtplint.startup import DeferredPattern

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    Dialect = Literal["compose", "systemd"]

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
#: compose-go's ``isSpace`` (dotenv/parser.go): the blanks it trims after ``export``
_BLANKS_AFTER_EXPORT = " \t\v\f\r\x85\xa0"
_NAME = DeferredPattern(r"[A-Za-z_][A-Za-z0-9_]*")
#: what a double-quoted value's reader acts on (:meth:`_Parser._quoted`), and an unquoted one's
_QUOTED_STOPS, _UNQUOTED_STOPS = "\\$", "$"
_DOUBLE_QUOTE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "$": "$", "`": "`"}


class _Builder:
    """Accumulates characters with the file offset each one came from, plus unresolved names."""

    def __init__(self) -> None:
        self.chars: list[str] = []
        self.offsets: list[int] = []
        self.unresolved: list[str] = []

    def add(self, text: str, offset: int) -> None:
        self.chars.extend(text)
        self.offsets.extend([offset] * len(text))

    def add_range(self, text: str, start: int, end: int) -> None:
        """``text[start:end]``, each character from its own offset."""
        self.chars.extend(text[start:end])
        self.offsets.extend(range(start, end))

    def add_mapped(self, text: MappedText) -> None:
        self.chars.extend(text.text)
        self.offsets.extend(text.offsets[: len(text.text)])

    def token(self, source: SourceFile, start: int, end: int) -> Token:
        offsets = [*self.offsets, end]
        if not self.chars:
            offsets = [start]
        mapped = MappedText("".join(self.chars), offsets, source)
        span = source.span(start, end) if end > start or not self.chars else mapped.span()
        return Token(mapped.text, span, tuple(dict.fromkeys(self.unresolved)))


class DockerEnvFileError(ValueError):
    """A line ``docker run --env-file`` refuses (the container does not start); ``offset`` in the file."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


def parse_docker_env_file(source: SourceFile) -> list[tuple[Token, Token | None]]:
    """The entries of a ``docker run --env-file`` file, in file order: ``(NAME, value)``, or
    ``(NAME, None)`` for a bare ``NAME`` line (Docker copies it from the client's environment); the
    name is a token too, for its span. Raises :class:`DockerEnvFileError` for a line Docker rejects."""
    entries: list[tuple[Token, Token | None]] = []
    text = source.text
    position = 0
    while position <= len(text):
        line_end = text.find("\n", position)
        line_end = len(text) if line_end < 0 else line_end
        # bufio.ScanLines drops the line feed and one carriage return before it
        content_end = line_end - 1 if line_end > position and text[line_end - 1] == "\r" else line_end
        start = position
        while start < content_end and text[start].isspace():
            start += 1
        position = line_end + 1
        if start >= content_end or text[start] == "#":
            continue
        equals = text.find("=", start, content_end)
        name_end = content_end if equals < 0 else equals
        name = text[start:name_end]
        if " " in name or "\t" in name:  # also a bare ``NAME `` with a trailing blank
            raise DockerEnvFileError(f"poorly formatted environment: variable '{name}' contains whitespaces", start)
        if not name:
            raise DockerEnvFileError(f"poorly formatted environment: no variable name on line '{text[start:content_end]}'",
                                     start)
        name_token = Token(name, source.span(start, name_end))
        if equals < 0:
            entries.append((name_token, None))
            continue
        entries.append((name_token, Token(text[equals + 1:content_end], source.span(equals + 1, content_end))))
    return entries


def parse_env_file(source: SourceFile, *, dialect: Dialect = "compose") -> list[tuple[str, Token]]:
    """The assignments of an env file, in file order (a later duplicate overrides an earlier one
    when the caller builds a dict from the pairs).

    A file the run's loader read is parsed once for all its readers (compose reads a project's
    ``.env`` for its variables, and again when a service names it in ``env_file``): they share the
    tokens, which nobody changes, each getting its own list."""
    parses = source.parses
    if parses is None:
        return _Parser(source, dialect).parse()
    kind = f"env {dialect}"
    pairs = parses.get(source, kind)
    if pairs is None:
        pairs = _Parser(source, dialect).parse()
        parses.put(source, kind, pairs)
    assert isinstance(pairs, list)
    return list(pairs)


def _first_of(text: str, characters: str, start: int, end: int) -> int:
    """Where the first of ``characters`` is in ``text[start:end]``; ``end`` if none is."""
    first = end
    for character in characters:
        found = text.find(character, start, first)
        if found >= 0:
            first = found
    return first


class _Parser:
    def __init__(self, source: SourceFile, dialect: Dialect) -> None:
        self.source = source
        self.text = source.text
        self.dialect = dialect
        self.position = 0
        self.known: dict[str, Token] = {}
        #: what interpolation may still produce in this file (mtplint.extract.budget)
        self.budget = ExpansionBudget()

    def parse(self) -> list[tuple[str, Token]]:
        pairs: list[tuple[str, Token]] = []
        text = self.text
        while self.position < len(text):
            line_end = text.find("\n", self.position)
            line_end = len(text) if line_end < 0 else line_end
            start = self.position
            while start < line_end and text[start] in " \t\r\ufeff":
                start += 1
            self.position = start
            if start >= line_end or text[start] == "#" or (self.dialect == "systemd" and text[start] == ";"):
                self.position = line_end + 1
                continue
            pair = self._assignment(line_end)
            if pair is not None and any(map(is_over_budget, pair[1].unresolved)):
                # a value expanded in part is no value: the variable is unknown, and says why
                span = pair[1].span
                written = self.text[span.start:span.end] if span is not None else ""
                pair = pair[0], Token(written, span, (over_budget(f"${{{pair[0]}}}"),))
            if pair is not None:
                pairs.append(pair)
                self.known[pair[0]] = pair[1]
        return pairs

    def _assignment(self, line_end: int) -> tuple[str, Token] | None:
        text = self.text
        if self.dialect == "compose" and text.startswith("export", self.position, line_end):
            # ``export`` and blanks before the key: what compose-go's dotenv parser trims there
            # (``strings.TrimLeftFunc(..., isSpace)``), a carriage return among them
            blanks_end = after = self.position + len("export")
            while blanks_end < line_end and text[blanks_end] in _BLANKS_AFTER_EXPORT:
                blanks_end += 1
            if blanks_end > after:
                self.position = blanks_end
        key_pattern = _KEY if self.dialect == "compose" else re.compile(r"[^=\s]+")
        match = key_pattern.match(text, self.position, line_end)
        if match is None:
            self.position = line_end + 1
            return None
        key = match.group(0)
        cursor = match.end()
        while cursor < line_end and text[cursor] in " \t":
            cursor += 1
        separators = "=:" if self.dialect == "compose" else "="
        if cursor >= line_end or text[cursor] not in separators or text[cursor:line_end].strip() in ("\r",):
            self.position = line_end + 1
            if self.dialect == "compose" and text[cursor:line_end].strip() == "":
                # ``KEY`` alone: compose takes it from the invoking shell's environment.
                offset = match.start()
                return key, Token(f"${{{key}}}", self.source.span(offset, match.end()), (key,))
            return None
        cursor += 1
        while cursor < line_end and text[cursor] in " \t":
            cursor += 1
        self.position = cursor
        return key, self._value(line_end)

    def _value(self, line_end: int) -> Token:
        text = self.text
        start = self.position
        quote = text[start] if start < line_end and text[start] in ("'", '"', "`") else ""
        if quote and self.dialect == "systemd" and quote == "`":
            quote = ""
        if quote:
            closing = self._closing_quote(start + 1, quote)
            if closing >= 0:
                builder = self._quoted(start + 1, closing, quote)
                token = builder.token(self.source, start + 1, closing)
                after = text.find("\n", closing)
                self.position = len(text) if after < 0 else after + 1
                return token
        return self._unquoted(line_end)

    def _closing_quote(self, start: int, quote: str) -> int:
        text = self.text
        index = start
        while index < len(text):
            char = text[index]
            if char == "\\" and quote != "'" and index + 1 < len(text):
                index += 2
                continue
            if char == quote:
                return index
            index += 1
        return -1

    def _quoted(self, start: int, end: int, quote: str) -> _Builder:
        builder = _Builder()
        text = self.text
        index = start
        while index < end:
            char = text[index]
            if quote == '"' and char == "\\" and index + 1 < end:
                following = text[index + 1]
                if following in _DOUBLE_QUOTE_ESCAPES:
                    builder.add(_DOUBLE_QUOTE_ESCAPES[following], index)
                    index += 2
                    continue
                if following == "\n" and self.dialect == "systemd":
                    index += 2
                    continue
            if quote == '"' and char == "$" and self.dialect == "compose":
                consumed = self._expansion(index, end, builder)
                if consumed:
                    index += consumed
                    continue
            # this character as it is, and with it those up to the next one the loop acts on
            run_end = _first_of(text, _QUOTED_STOPS, index + 1, end) if quote == '"' else end
            builder.add_range(text, index, run_end)
            index = run_end
        return builder

    def _unquoted(self, line_end: int) -> Token:
        text = self.text
        start = self.position
        end = line_end
        if self.dialect == "systemd":
            # A trailing backslash joins the next line (systemd.exec(5), EnvironmentFile=).
            pieces: list[tuple[int, int]] = []
            while True:
                raw_end = end
                while raw_end > start and text[raw_end - 1] == "\r":
                    raw_end -= 1
                if raw_end > start and text[raw_end - 1] == "\\" and end < len(text):
                    pieces.append((start, raw_end - 1))
                    start = end + 1
                    next_end = text.find("\n", start)
                    end = len(text) if next_end < 0 else next_end
                    continue
                pieces.append((start, raw_end))
                break
            builder = _Builder()
            for piece_start, piece_end in pieces:
                builder.add_range(text, piece_start, piece_end)
            self._trim(builder)
            self.position = end + 1
            first = pieces[0][0]
            return builder.token(self.source, first, builder.offsets[-1] + 1 if builder.offsets else first)
        # compose: an inline comment starts at `#` preceded by whitespace.
        comment = text.find("#", start + 1, line_end)
        while comment >= 0 and text[comment - 1] not in " \t":
            comment = text.find("#", comment + 1, line_end)
        if comment >= 0:
            end = comment - 1
        elif text.startswith("#", start):
            end = start
        while end > start and text[end - 1] in " \t\r":
            end -= 1
        builder = _Builder()
        index = start
        while index < end:
            if text[index] == "$":
                consumed = self._expansion(index, end, builder)
                if consumed:
                    index += consumed
                    continue
            # this character as it is, and with it those up to the next `$`
            run_end = _first_of(text, _UNQUOTED_STOPS, index + 1, end)
            builder.add_range(text, index, run_end)
            index = run_end
        self.position = line_end + 1
        return builder.token(self.source, start, end)

    @staticmethod
    def _trim(builder: _Builder) -> None:
        while builder.chars and builder.chars[-1] in " \t":
            builder.chars.pop()
            builder.offsets.pop()

    def _expansion(self, index: int, end: int, builder: _Builder) -> int:
        """Interpolate ``$NAME`` / ``${NAME}`` / ``${NAME:-default}`` / ``${NAME-default}`` at
        ``index`` (compose semantics, from keys defined above); returns characters consumed, 0 if none."""
        text = self.text
        if text.startswith("$$", index):
            builder.add("$", index)
            return 2
        if text.startswith("${", index):
            close = text.find("}", index + 2, end)
            if close < 0:
                return 0
            body = text[index + 2:close]
            name_match: re.Match[str] | None = _NAME.match(body)
            if name_match is None:
                return 0
            name = name_match.group(0)
            operator_match = re.match(r"(:?[-?+])(.*)", body[len(name):], re.S)
            if body[len(name):] and operator_match is None:
                return 0
            operator = operator_match.group(1) if operator_match else ""
            argument = operator_match.group(2) if operator_match else ""
            argument_start = index + 2 + len(name) + len(operator)
            self._substitute(name, operator, argument, argument_start, index, close + 1, builder)
            return close + 1 - index
        name_match = _NAME.match(text, index + 1, end)
        if name_match is None:
            return 0
        self._substitute(name_match.group(0), "", "", index, index, name_match.end(), builder)
        return name_match.end() - index

    def _substitute(self, name: str, operator: str, argument: str, argument_start: int,
                    start: int, end: int, builder: _Builder) -> None:
        value = self.known.get(name)
        empty = value is not None and value.resolved and value.value == ""
        use_default = (operator in ("-", ":-") and value is None) or (operator == ":-" and empty)
        if operator in ("+", ":+"):
            if value is None:
                return
            if operator == ":+" and empty:
                return
            use_default = True
        if use_default:
            builder.add_mapped(MappedText(argument, list(range(argument_start, argument_start + len(argument) + 1)),
                                          self.source))
            return
        if value is None:
            builder.add(self.text[start:end], start)
            builder.unresolved.append(name)
            return
        if any(map(is_over_budget, value.unresolved)) or not self.budget.take(len(value.value)):
            written = self.text[start:end]
            builder.add(written, start)
            builder.unresolved.append(over_budget(written))
            return
        builder.add(value.value, start)
        builder.unresolved.extend(value.unresolved)
