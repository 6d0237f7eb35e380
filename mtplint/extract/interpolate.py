"""Compose variable interpolation (``${VAR}``, ``${VAR:-default}``, ``$$``, ...) on positioned text.

This follows compose-go's ``template`` package (the code behind ``docker compose``; checked against
``docker compose config`` v2.40.3, see tests/test_extract_compose_conformance.py):

* ``$$`` is an escaped ``$``; ``$NAME`` and ``${NAME}`` substitute (names are ``[_A-Za-z][_A-Za-z0-9]*``,
  case-sensitive); a ``$`` followed by anything else (``$1``, ``$@``, a trailing ``$``) stays as it is.
* ``${NAME:-default}`` / ``${NAME-default}`` (unset-or-empty / unset), ``${NAME:+alt}`` / ``${NAME+alt}``,
  ``${NAME:?message}`` / ``${NAME?message}`` (compose stops with an error when unset).
* The closing brace is the first ``}`` that balances the ``${`` openings, so defaults nest:
  ``${A:-${B:-x}}``; a plain ``{`` inside a default does not count (``${U:-{x}}`` gives ``{x}``).
* Anything else after ``${`` (``${1}``, ``${A:x}``, an unclosed ``${``) is "invalid interpolation
  format": compose refuses the file, so :class:`InterpolationError` is raised with the offset.

mtplint is static: the variables are the project's ``.env`` (and whatever the caller adds), never
the process environment. A variable without a value and without a default is where compose would
substitute an empty string with a warning (or stop, for ``:?``); here the expression's own text is
kept, mapped to the file, and recorded as a :class:`Hole` so that every word cut from it can be
marked unresolved instead of guessed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from mtplint.extract.budget import ExpansionBudget, over_budget
from mtplint.records import FrozenRecord, Record
from mtplint.source import MappedText, Span, Token

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

_NAME = re.compile(r"[_A-Za-z][_A-Za-z0-9]*")
_OPERATORS = (":-", ":+", ":?", "-", "+", "?")


class InterpolationError(Exception):
    """An expression ``docker compose`` rejects ("invalid interpolation format"); ``offset`` is in the file."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


class Hole(FrozenRecord):
    """An expansion whose value is not known statically: ``names`` are the variables it needs;
    ``file``/``start``/``end`` locate the ``${...}`` expression (file offsets)."""

    __slots__ = ("names", "file", "start", "end")
    names: Final[tuple[str, ...]]
    file: Final[str]
    start: Final[int]
    end: Final[int]

    def __init__(self, names: tuple[str, ...], file: str, start: int, end: int) -> None:
        self.names = names
        self.file = file
        self.start = start
        self.end = end

    def overlaps(self, span: Span | None) -> bool:
        if span is None or span.file != self.file:
            return False
        end = max(span.end, span.start + 1)
        return span.start < self.end and self.start < end


class Interpolated(Record):
    """The result of interpolation: the text compose would use, and what could not be resolved."""

    __slots__ = ("text", "holes")
    text: MappedText
    holes: list[Hole]

    def __init__(self, text: MappedText, holes: list[Hole] | None = None) -> None:
        self.text = text
        self.holes = holes if holes is not None else []

    @property
    def unresolved(self) -> tuple[str, ...]:
        return names_of(self.holes) if self.holes else ()

    def token(self) -> Token:
        return Token.from_mapped(self.text, self.unresolved)


def names_of(holes: Iterable[Hole]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(name for hole in holes for name in hole.names))


def holes_in(span: Span | None, holes: Iterable[Hole]) -> tuple[str, ...]:
    """Names of the holes a token's span overlaps (the token was cut from unresolved text)."""
    return names_of(hole for hole in holes if hole.overlaps(span))


def interpolate(text: MappedText, variables: Mapping[str, Token],
                budget: ExpansionBudget | None = None) -> Interpolated:
    """Interpolate ``text`` as compose does, with ``variables`` as the whole environment; values
    are substituted while ``budget`` (the file's, :mod:`mtplint.extract.budget`) lasts."""
    if "$" not in text.text:  # (most values)
        return Interpolated(text)
    return _Interpolator(variables, budget).run(text)


def closing_brace(text: str, start: int) -> int:
    """Index of the ``}`` closing the ``${`` at ``start`` (compose-go's getFirstBraceClosingIndex), or -1."""
    depth = 0
    index = start
    while index < len(text):
        if text[index] == "}":
            depth -= 1
            if depth == 0:
                return index
        if text.startswith("${", index):
            depth += 1
            index += 1
        index += 1
    return -1


class _Interpolator:
    def __init__(self, variables: Mapping[str, Token], budget: ExpansionBudget | None = None) -> None:
        self.variables = variables
        self.budget = budget if budget is not None else ExpansionBudget()
        self.holes: list[Hole] = []

    def run(self, text: MappedText) -> Interpolated:
        result = self.expand(text, 0)
        return Interpolated(result, self.holes)

    def expand(self, text: MappedText, depth: int) -> MappedText:
        if depth > 50:
            raise InterpolationError("interpolation nested too deeply", text.offsets[0])
        raw = text.text
        if "$" not in raw:
            return text
        parts: list[MappedText] = []
        literal_start = 0
        index = 0
        while index < len(raw):
            index = raw.find("$", index)  # other characters are literal: on to the next `$`
            if index < 0:
                break
            following = raw[index + 1 : index + 2]
            if following == "$":
                parts.append(text.slice(literal_start, index + 1))  # keep one `$`, mapped to the first
                index += 2
                literal_start = index
                continue
            if following == "{":
                close = closing_brace(raw, index)
                if close < 0:
                    raise InterpolationError("invalid interpolation format: unclosed '${'", text.offsets[index])
                parts.append(text.slice(literal_start, index))
                parts.append(self.braced(text, index, close, depth))
                index = close + 1
                literal_start = index
                continue
            name = _NAME.match(raw, index + 1)
            if name is None:
                index += 1  # `$1`, `$@`, a lone `$`: compose leaves it alone
                continue
            parts.append(text.slice(literal_start, index))
            parts.append(self.substitute(text, index, name.end(), name.group(0), "", None, depth))
            index = name.end()
            literal_start = index
        parts.append(text.slice(literal_start))
        return MappedText.join([part for part in parts if part.text] or [text.slice(0, 0)])

    def braced(self, text: MappedText, start: int, close: int, depth: int) -> MappedText:
        body = text.text[start + 2 : close]
        name = _NAME.match(body)
        if name is None:
            raise InterpolationError(f"invalid interpolation format: '${{{body}}}'", text.offsets[start])
        rest = body[name.end():]
        if not rest:
            return self.substitute(text, start, close + 1, name.group(0), "", None, depth)
        operator = next((op for op in _OPERATORS if rest.startswith(op)), None)
        if operator is None:
            raise InterpolationError(f"invalid interpolation format: '${{{body}}}'", text.offsets[start])
        argument_start = start + 2 + name.end() + len(operator)
        argument = text.slice(argument_start, close)
        return self.substitute(text, start, close + 1, name.group(0), operator, argument, depth)

    def substitute(self, text: MappedText, start: int, end: int, name: str, operator: str,
                   argument: MappedText | None, depth: int) -> MappedText:
        value = self.variables.get(name)
        expression = text.slice(start, end)
        if value is not None and not value.resolved and operator in (":-", ":+", ":?"):
            # Whether the value is empty decides the branch, and the value is not known.
            return self.hole(expression, value.unresolved or (name,), value.value, text.offsets[start])
        empty = value is not None and value.value == ""
        if operator in (":+", "+"):
            if value is None or (operator == ":+" and empty):
                return text.slice(start, start)
            assert argument is not None
            return self.expand(argument, depth + 1)
        if operator in (":-", "-") and (value is None or (operator == ":-" and empty)):
            assert argument is not None
            return self.expand(argument, depth + 1)
        if value is None or (operator == ":?" and empty):
            # compose: "" with a warning (plain), or an error (`?`): either way unknown here.
            return self.hole(expression, (name,), expression.text, text.offsets[start])
        if not value.resolved:
            return self.hole(expression, value.unresolved, value.value, text.offsets[start])
        if not self.budget.take(len(value.value)):
            return self.hole(expression, (over_budget(expression.text),), expression.text, text.offsets[start])
        return MappedText.synthetic(value.value, text.source, text.offsets[start])

    def hole(self, expression: MappedText, names: tuple[str, ...], shown: str, at: int) -> MappedText:
        span = expression.span()
        if span is not None:
            self.holes.append(Hole(names, span.file, span.start, span.end))
        else:
            self.holes.append(Hole(names, "", at, at + max(1, len(expression))))
        if shown == expression.text:
            return expression
        return MappedText.synthetic(shown, expression.source, at)
