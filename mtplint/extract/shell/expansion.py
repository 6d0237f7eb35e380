"""Words as bash reads them: quote removal, parameter expansion (``$VAR``, ``${VAR:-d}``,
``${ARR[@]}``, pattern operators) against an interpreter state, and field splitting of unquoted
results. Every character keeps its file offset (:class:`mtplint.source.MappedText`); what cannot
be known (command substitution, arithmetic, an unknown variable) stays as written, unresolved.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable

from mtplint.extract.budget import EXPANSION_DEPTH, ExpansionBudget, over_budget
from mtplint.extract.shell.scanning import (
    skip_backticks,
    skip_braces,
    skip_double_quotes,
    skip_parens,
    skip_single_quotes,
    unquoted_word_ranges,
)
from mtplint.extract.shell.state import NAME, State, Value, Var
from mtplint.records import Record
from mtplint.source import EnvEntry, MappedText, Span, Token
from mtplint.startup import DeferredPattern

_IFS_WHITESPACE = " \t\n"
#: what :meth:`Lexer.expand` does more with than step over
_LEXER_SPECIAL = re.compile(r"[\\'\"$`]")
#: what :meth:`Lexer.expand` changes in a word when it expands nothing (:func:`split_words`): there
#: ``$`` and backquotes are left as written, so a word without quotes or escapes is its own text
_QUOTING = re.compile(r"[\\'\"]")


def plain_word(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is a word with no quotes, escapes or ``$``: one field, its own
    text, which readers take as it is without the lexer (most words are)."""
    return start < end and _LEXER_SPECIAL.search(text, start, end) is None


class Piece(Record):
    """Part of a word after expansion, before field splitting."""

    __slots__ = ("text", "unresolved", "splittable", "splat", "boundary", "exists", "expression_end")
    text: MappedText
    unresolved: tuple[str, ...]
    splittable: bool  # an unquoted expansion result: IFS splitting applies
    splat: bool  # may be any number of words ("$@", unknown unquoted expansion)
    boundary: bool  # starts a new field ("${ARR[@]}" elements after the first)
    exists: bool  # makes a field exist even when empty ("" or a quoted expansion)
    expression_end: int | None  # file offset just past the expansion that produced it

    def __init__(
        self,
        text: MappedText,
        unresolved: tuple[str, ...] = (),
        splittable: bool = False,
        splat: bool = False,
        boundary: bool = False,
        exists: bool = False,
        expression_end: int | None = None,
    ) -> None:
        self.text = text
        self.unresolved = unresolved
        self.splittable = splittable
        self.splat = splat
        self.boundary = boundary
        self.exists = exists
        self.expression_end = expression_end

    def with_text(self, text: MappedText) -> Piece:
        return Piece(text, self.unresolved, self.splittable, self.splat, self.boundary, self.exists,
                      self.expression_end)

    def without_splat(self) -> Piece:
        return Piece(self.text, self.unresolved, self.splittable, False, self.boundary, self.exists,
                      self.expression_end)


_ALL_ELEMENTS = DeferredPattern(r"\$(?:@|\{@\}|\{[A-Za-z_][A-Za-z0-9_]*\[@\]\})")
#: the parameter of ``$NAME``, ``$1``, ``$@``, ...
_PARAMETER = DeferredPattern(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!\-]")
#: the parameter whose length ``${#NAME}`` is
_LENGTH_OF = DeferredPattern(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*]")
#: the parameter of ``${NAME...}``
_BRACED_PARAMETER = DeferredPattern(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!\-]")
#: what follows the parameter in ``${NAME:-word}``, ``${NAME%%pattern}``, ...
_BRACED_OPERATOR = DeferredPattern(r":[-=?+]|[-=?+]|##|#|%%|%|//|/#|/%|/|\^\^|\^|,,|,|:|@")

_ANSI_C_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b",
                   "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


class Lexer:
    """Expands the characters of one word of ``text`` (quote removal, ``$`` expansions).

    With ``expander=None`` nothing is expanded: ``$...`` stays literal (for :func:`split_words`).
    """

    def __init__(self, text: MappedText, expander: Expander | None) -> None:
        self.mapped = text
        self.text = text.text
        self.expander = expander

    def literal(self, start: int, end: int) -> MappedText:
        return self.mapped.slice(start, end)

    def char(self, value: str, at: int) -> MappedText:
        offset = self.mapped.offset_at(at)
        return MappedText(value, [offset] * len(value) + [offset + 1], self.mapped.source)

    def expand(self, start: int, end: int, quoted: bool) -> list[Piece]:
        """Pieces of ``text[start:end]`` read as unquoted word text (``quoted=False``) or as the
        inside of double quotes (``quoted=True``)."""
        pieces: list[Piece] = []
        text = self.text
        literal_start = start
        index = start

        def flush(upto: int) -> None:
            if upto > literal_start:
                pieces.append(Piece(self.literal(literal_start, upto), exists=True))

        special = _LEXER_SPECIAL.search
        while index < end:
            # other characters are literal text, taken by ``flush``: jump to the next that is not
            found = special(text, index, end)
            if found is None:
                break
            index = found.start()
            char = text[index]
            if char == "\\":
                flush(index)
                following = text[index + 1] if index + 1 < end else ""
                if following == "\n":
                    index += 2
                elif text.startswith("\r\n", index + 1):
                    index += 3
                elif quoted and following not in ('$', '`', '"', "\\"):
                    pieces.append(Piece(self.literal(index, min(index + 2, end)), exists=True))
                    index += 2
                elif following:
                    pieces.append(Piece(self.literal(index + 1, index + 2), exists=True))
                    index += 2
                else:
                    pieces.append(Piece(self.literal(index, index + 1), exists=True))
                    index += 1
                literal_start = index
                continue
            if char == "'" and not quoted:
                flush(index)
                close = min(skip_single_quotes(text, index + 1), end)
                pieces.append(Piece(self.literal(index + 1, close), exists=True))
                index = close + 1
                literal_start = index
                continue
            if char == '"' and not quoted:
                flush(index)
                close = min(skip_double_quotes(text, index + 1, end), end)
                inner = self.expand(index + 1, close, quoted=True)
                if inner or not _ALL_ELEMENTS.fullmatch(text, index + 1, close):
                    # `"${ARR[@]}"` / `"$@"` of no elements is no word at all, not an empty one
                    pieces.append(Piece(self.literal(index + 1, index + 1), exists=True))
                pieces.extend(inner)
                index = close + 1
                literal_start = index
                continue
            if char == "$" and not quoted and text.startswith("$'", index):
                flush(index)
                close = index + 2
                while close < end and text[close] != "'":
                    close += 2 if text[close] == "\\" else 1
                close = min(close, end)
                pieces.append(Piece(self._ansi_c(index + 2, close), exists=True))
                index = close + 1
                literal_start = index
                continue
            if char == "$" and not quoted and text.startswith('$"', index):
                flush(index)
                index += 1  # locale-translated string: read as a plain double-quoted string
                literal_start = index
                continue
            if (char == "$" or char == "`") and self.expander is None:
                # no expansion: keep `$(...)`, `${...}` and backticks whole so quotes inside them
                # are not taken as word quotes
                if text.startswith("$(", index):
                    index = min(skip_parens(text, index + 2, end) + 1, end)
                elif text.startswith("${", index):
                    index = min(skip_braces(text, index + 2, end) + 1, end)
                elif char == "`":
                    index = min(skip_backticks(text, index + 1, end) + 1, end)
                else:
                    index += 1
                continue
            if char == "$" or char == "`":
                assert self.expander is not None
                consumed = self.expander.expansion(self, index, end, quoted, pieces, flush)
                if consumed:
                    index += consumed
                    literal_start = index
                    continue
            index += 1
        flush(end)
        return pieces

    def _ansi_c(self, start: int, end: int) -> MappedText:
        text = self.text
        parts: list[MappedText] = []
        index = start
        while index < end:
            if text[index] == "\\" and index + 1 < end:
                following = text[index + 1]
                if following in _ANSI_C_ESCAPES:
                    parts.append(self.char(_ANSI_C_ESCAPES[following], index))
                    index += 2
                    continue
                match = re.match(r"x([0-9A-Fa-f]{1,2})|([0-7]{1,3})", text[index + 1:end])
                if match:
                    code = int(match.group(1), 16) if match.group(1) else int(match.group(2), 8)
                    parts.append(self.char(chr(code), index))
                    index += 1 + match.end()
                    continue
            parts.append(self.literal(index, index + 1))
            index += 1
        return MappedText.join(parts) if parts else self.literal(start, start)


class Expander:
    """Parameter expansion against an interpreter state."""

    def __init__(self, state: State, budget: ExpansionBudget | None = None) -> None:
        self.state = state
        self.budget = budget if budget is not None else ExpansionBudget()
        #: ``${...}`` expressions being expanded, one inside the default of the other
        self.depth = 0

    def expansion(self, lexer: Lexer, index: int, end: int, quoted: bool, pieces: list[Piece],
                  flush: Callable[[int], None]) -> int:
        text = lexer.text
        if text[index] == "`":
            close = min(skip_backticks(text, index + 1, end), end)
            flush(index)
            pieces.append(self._opaque(lexer, index, close + 1, quoted))
            return close + 1 - index
        if text.startswith("$((", index):
            close = min(skip_parens(text, index + 2, end), end)
            close = close + 1 if close + 1 < end and text[close + 1] == ")" else close
            flush(index)
            pieces.append(self._opaque(lexer, index, close + 1, quoted))
            return close + 1 - index
        if text.startswith("$(", index):
            close = min(skip_parens(text, index + 2, end), end)
            flush(index)
            pieces.append(self._opaque(lexer, index, close + 1, quoted))
            return close + 1 - index
        if text.startswith("${", index):
            close = skip_braces(text, index + 2, end)
            if close >= end:
                return 0
            flush(index)
            pieces.extend(self._braced(lexer, index, close, quoted))
            return close + 1 - index
        match: re.Match[str] | None = _PARAMETER.match(text, index + 1, end)
        if match is None:
            return 0
        flush(index)
        pieces.extend(self._parameter(lexer, match.group(0), None, index, match.end(), quoted))
        return match.end() - index

    # --- pieces ---------------------------------------------------------------------------------

    def _opaque(self, lexer: Lexer, start: int, end: int, quoted: bool) -> Piece:
        """Command substitution, arithmetic: never resolved."""
        written = lexer.text[start:end]
        return Piece(lexer.literal(start, end), (written,), splittable=not quoted, exists=quoted,
                      splat=not quoted)

    def _value_piece(self, lexer: Lexer, value: Value, start: int, end: int, quoted: bool,
                     written: str) -> Piece:
        offset = lexer.mapped.offset_at(start)
        expression_end = lexer.mapped.offset_at(end - 1) + 1
        if not self.budget.take(len(value.text)):
            return self._unresolved_piece(lexer, start, end, quoted, (over_budget(written),))
        if not value.resolved:
            return Piece(lexer.literal(start, end) if value.text == written else
                          MappedText(value.text, [offset] * (len(value.text) + 1), lexer.mapped.source),
                          value.unresolved or (written,), splittable=not quoted, exists=quoted,
                          splat=value.splat or not quoted, expression_end=expression_end)
        # Expanded characters map to the start of the expression; the last one to its end, so a
        # word made of the expansion alone still spans the whole `$NAME` in the file.
        offsets = [offset] * len(value.text) + [expression_end]
        if len(value.text) >= 2:
            offsets[-2] = max(offset, expression_end - 1)
        mapped = MappedText(value.text, offsets, lexer.mapped.source)
        return Piece(mapped, splittable=not quoted, exists=quoted, expression_end=expression_end)

    def _unresolved_piece(self, lexer: Lexer, start: int, end: int, quoted: bool, names: tuple[str, ...],
                          splat: bool = False) -> Piece:
        return Piece(lexer.literal(start, end), names, splittable=not quoted, exists=quoted,
                      splat=splat or not quoted)

    def _parameter(self, lexer: Lexer, name: str, index_text: str | None, start: int, end: int,
                   quoted: bool) -> list[Piece]:
        """``$name`` / ``${name}`` / ``${name[index]}``."""
        written = lexer.text[start:end]
        if name in ("@", "*") or (index_text in ("@", "*")):
            items = self._list_items(name, index_text)
            if items is None:
                label = written if name not in ("@", "*") else f"${name}"
                return [self._unresolved_piece(lexer, start, end, quoted, (label,), splat=True)]
            joined = index_text == "*" or name == "*"
            if quoted and joined:
                return [self._value_piece(lexer, join_values(items), start, end, True, written)]
            result: list[Piece] = []
            for position, item in enumerate(items):
                if item.written is not None and item.written.source is lexer.mapped.source:
                    piece = Piece(item.written, item.unresolved, splittable=not quoted, exists=quoted,
                                   splat=item.splat or (not quoted and not item.resolved))
                else:
                    piece = self._value_piece(lexer, item, start, end, quoted, written)
                piece.boundary = position > 0 and quoted
                result.append(piece)
            if not result and not quoted:
                return []
            return result
        value = self._lookup(name, index_text)
        if value is None:
            return [self._unresolved_piece(lexer, start, end, quoted, (written if not NAME.fullmatch(name) else name,))]
        return [self._value_piece(lexer, value, start, end, quoted, written)]

    def _list_items(self, name: str, index_text: str | None) -> tuple[Value, ...] | None:
        if name in ("@", "*"):
            return self.state.positional
        var = self.state.variables.get(name)
        if var is None:
            return None if name not in self.state.variables else ()
        if var.items is not None:
            return var.items
        if not var.scalar.resolved:
            return None
        return (var.scalar,)

    def _lookup(self, name: str, index_text: str | None) -> Value | None:
        """The value of a parameter; ``None`` when it is unset or unknown."""
        if name.isdigit():
            position = int(name)
            known = known_positional(self.state.positional)
            if position == 0 or known is None or position > len(known):
                return None
            return known[position - 1]
        if name == "#":
            positional = self.state.positional
            if positional is None or any(item.splat for item in positional):
                return None
            return Value(str(len(positional)))
        if not NAME.fullmatch(name):
            return None  # $? $$ $! $-: runtime values
        var = self.state.variables.get(name)
        if var is None:
            return None
        if var.items is not None:
            if index_text is None or index_text == "0":
                return var.items[0] if var.items else Value("")
            if index_text.isdigit():
                position = int(index_text)
                return var.items[position] if position < len(var.items) else Value("")
            return Value(f"${{{name}[{index_text}]}}", (name,))
        if index_text not in (None, "0"):
            return Value(f"${{{name}[{index_text}]}}", (name,))
        return var.scalar

    def _is_set(self, name: str) -> bool | None:
        """Whether a parameter is set: ``None`` when that cannot be known."""
        if name.isdigit() or name == "@" or name == "*":
            positional, known = self.state.positional, known_positional(self.state.positional)
            if positional is None or known is None:
                return None
            if name.isdigit():
                return True if int(name) <= len(known) else (False if len(known) == len(positional) else None)
            return True if known else (False if not positional else None)
        var = self.state.variables.get(name)
        if var is None:
            return False
        if var.scalar.unresolved and var.scalar.text == f"${{{name}}}":
            return None  # assigned on some branches only, or by `read`
        return True

    def _braced(self, lexer: Lexer, start: int, close: int, quoted: bool) -> list[Piece]:
        """``${...}``: ``start`` is the ``$``, ``close`` the matching ``}``; nested at most
        ``EXPANSION_DEPTH`` deep (``${A:-${B:-…}}``), and unresolved below that."""
        if self.depth >= EXPANSION_DEPTH:
            return [self._unresolved_piece(lexer, start, close + 1, quoted, (over_budget(lexer.text[start:close + 1]),))]
        self.depth += 1
        try:
            return self._braced_expression(lexer, start, close, quoted)
        finally:
            self.depth -= 1

    def _braced_expression(self, lexer: Lexer, start: int, close: int, quoted: bool) -> list[Piece]:
        text = lexer.text
        body_start = start + 2
        written = text[start:close + 1]
        end = close + 1
        if text.startswith("#", body_start) and close > body_start + 1:
            name_match = _LENGTH_OF.match(text, body_start + 1, close)
            if name_match and name_match.end() == close:
                value = self._lookup(name_match.group(0), None)
                if value is not None and value.resolved:
                    return [self._value_piece(lexer, Value(str(len(value.text))), start, end, quoted, written)]
                return [self._unresolved_piece(lexer, start, end, quoted, (written,))]
        if text.startswith("!", body_start):
            return [self._unresolved_piece(lexer, start, end, quoted, (written,))]
        name_match = _BRACED_PARAMETER.match(text, body_start, close)
        if name_match is None:
            return [self._unresolved_piece(lexer, start, end, quoted, (written,))]
        name = name_match.group(0)
        cursor = name_match.end()
        index_text: str | None = None
        if cursor < close and text[cursor] == "[":
            bracket = text.find("]", cursor)
            if bracket < 0 or bracket > close:
                return [self._unresolved_piece(lexer, start, end, quoted, (written,))]
            index_text = text[cursor + 1:bracket]
            cursor = bracket + 1
        if cursor == close:
            return self._parameter(lexer, name, index_text, start, end, quoted)
        operator_match = _BRACED_OPERATOR.match(text, cursor, close)
        if operator_match is None:
            return [self._unresolved_piece(lexer, start, end, quoted, (written,))]
        operator = operator_match.group(0)
        word_start = operator_match.end()
        if operator in (":-", "-", ":=", "=", ":+", "+", ":?", "?"):
            return self._default(lexer, name, index_text, operator, word_start, close, start, quoted, written)
        value = self._lookup(name, index_text)
        if value is None or not value.resolved:
            return [self._unresolved_piece(lexer, start, end, quoted, (name if value is None else written,))]
        argument = self._word_value(lexer, word_start, close)
        result = _apply_operator(value.text, operator, argument)
        if result is None:
            return [self._unresolved_piece(lexer, start, end, quoted, (written,))]
        return [self._value_piece(lexer, Value(result), start, end, quoted, written)]

    def _word_value(self, lexer: Lexer, start: int, end: int) -> Value | None:
        """The operand of a pattern operator, read like the inside of double quotes."""
        pieces = lexer.expand(start, end, quoted=True)
        value = join_pieces(pieces)
        return value if value.resolved else None

    def _default(self, lexer: Lexer, name: str, index_text: str | None, operator: str, word_start: int,
                 close: int, start: int, quoted: bool, written: str) -> list[Piece]:
        end = close + 1
        is_set = self._is_set(name)
        value = self._lookup(name, index_text) if is_set else None
        if is_set is None or (is_set and value is None) or (value is not None and not value.resolved and
                                                          operator.startswith(":")):
            return [self._unresolved_piece(lexer, start, end, quoted, (written,))]
        null = value is None or value.text == ""
        use_word: bool
        if operator in (":-", ":=", ":?"):
            use_word = null
        elif operator in ("-", "=", "?"):
            use_word = not is_set
        elif operator == ":+":
            use_word = not null
        else:  # "+"
            use_word = bool(is_set)
        if operator in (":+", "+") and not use_word:
            return [] if not quoted else [Piece(lexer.literal(start, start), exists=True)]
        if not use_word:
            assert value is not None
            return [self._value_piece(lexer, value, start, end, quoted, written)]
        if operator in (":?", "?"):
            return [self._unresolved_piece(lexer, start, end, quoted, (written,))]
        word_pieces = lexer.expand(word_start, close, quoted)
        for piece in word_pieces:
            if piece.expression_end is None:
                piece.expression_end = lexer.mapped.offset_at(close) + 1
        if operator in (":=", "=") and NAME.fullmatch(name):
            assigned = join_pieces(word_pieces)
            previous = self.state.variables.get(name)
            span = lexer.literal(start, end).span()
            self.state.variables[name] = Var(
                assigned, None, bool(previous and previous.exported) or self.state.allexport,
                EnvEntry(name, Token(assigned.text, span, assigned.unresolved, assigned.splat), span))
        if not word_pieces and quoted:
            return [Piece(lexer.literal(word_start, word_start), exists=True)]
        return word_pieces


def known_positional(positional: tuple[Value, ...] | None) -> tuple[Value, ...] | None:
    """The positional parameters that are known one by one: those before the first that may be any
    number of words (a call's ``"${EXTRA[@]}"`` of unknown length)."""
    if positional is None:
        return None
    return next((positional[:index] for index, item in enumerate(positional) if item.splat), positional)


def _apply_operator(value: str, operator: str, argument: Value | None) -> str | None:
    """Pattern removal / substitution / case operators on a known value (None: cannot say)."""
    if operator in ("^^", "^", ",,", ","):
        if argument is not None and argument.text not in ("", "?"):
            return None
        if operator == "^^":
            return value.upper()
        if operator == ",,":
            return value.lower()
        if operator == "^":
            return value[:1].upper() + value[1:]
        return value[:1].lower() + value[1:]
    if argument is None:
        return None
    pattern = argument.text
    if operator in ("#", "##"):
        lengths = range(len(value) + 1) if operator == "#" else range(len(value), -1, -1)
        for length in lengths:
            if fnmatch.fnmatchcase(value[:length], pattern):
                return value[length:]
        return value
    if operator in ("%", "%%"):
        lengths = range(len(value), -1, -1) if operator == "%" else range(len(value) + 1)
        for begin in lengths:
            if fnmatch.fnmatchcase(value[begin:], pattern):
                return value[:begin]
        return value
    if operator in ("/", "//", "/#", "/%"):
        search, _, replacement = pattern.partition("/")
        if any(char in search for char in "*?["):
            return None
        if not search:
            return value
        if operator == "/":
            return value.replace(search, replacement, 1)
        if operator == "//":
            return value.replace(search, replacement)
        if operator == "/#":
            return replacement + value[len(search):] if value.startswith(search) else value
        return value[: -len(search)] + replacement if value.endswith(search) else value
    if operator == ":":
        match = re.fullmatch(r"\s*(-?\d+)\s*(?::\s*(-?\d+)\s*)?", pattern)
        if match is None:
            return None
        offset = int(match.group(1))
        offset = max(0, len(value) + offset) if offset < 0 else offset
        if match.group(2) is None:
            return value[offset:]
        length = int(match.group(2))
        return value[offset:offset + length] if length >= 0 else value[offset:len(value) + length]
    return None


def join_values(items: Iterable[Value]) -> Value:
    values = list(items)
    return Value(" ".join(value.text for value in values),
                  tuple(dict.fromkeys(name for value in values for name in value.unresolved)),
                  any(value.splat for value in values))


def join_pieces(pieces: Iterable[Piece]) -> Value:
    """A word in assignment context: no field splitting, one value."""
    parts = list(pieces)
    return Value("".join(piece.text.text for piece in parts),
                  tuple(dict.fromkeys(name for piece in parts for name in piece.unresolved)),
                  any(piece.splat and not piece.splittable for piece in parts))


def split_fields(pieces: list[Piece]) -> list[list[Piece]]:
    """Field splitting (IFS = blank, tab, newline) of unquoted expansion results."""
    fields: list[list[Piece]] = []
    current: list[Piece] = []
    exists = False

    def finish() -> None:
        nonlocal current, exists
        if exists or current:
            fields.append(current)
        current, exists = [], False

    only_piece = len(pieces) == 1
    for piece in pieces:
        if piece.boundary:
            finish()
        if piece.splittable and piece.unresolved and _partly_known(piece):
            # `args="--model-path $M --dp $DP"; cmd $args`: the known words stay known
            text = piece.text.text
            ranges = list(unquoted_word_ranges(text, 0, len(text)))
            if ranges and ranges[0][0] > 0:
                finish()
            for number, (start, end) in enumerate(ranges):
                if number:
                    finish()
                current.append(_split_part(piece, start, end))
                exists = True
            if ranges and ranges[-1][1] < len(text):
                finish()
            continue
        if piece.splittable and (piece.unresolved or piece.splat):
            if only_piece or not piece.text.text:
                current.append(piece)
                exists = True
            else:
                current.append(piece.without_splat())
                exists = True
            continue
        if piece.splittable:
            text = piece.text.text
            run_start = 0
            for position, char in enumerate(text + " "):
                if char in _IFS_WHITESPACE:
                    if position > run_start:
                        current.append(piece.with_text(piece.text.slice(run_start, position)))
                        exists = True
                    if position < len(text):
                        finish()
                    run_start = position + 1
            continue
        current.append(piece)
        exists = exists or piece.exists
    finish()
    return fields


def _partly_known(piece: Piece) -> bool:
    """An unquoted value that is words around unknown parts (``--dp ${DP}``), not one expansion
    (``$(jq -r .k "$f")``, ``${DP}``): shown as written, an unknown part starts with ``$`` or a backquote."""
    text = piece.text.text
    return text not in piece.unresolved and any(char in _IFS_WHITESPACE for char in text)


def _split_part(piece: Piece, start: int, end: int) -> Piece:
    """One word of a partly known value: known unless it holds one of the unknown parts."""
    text = piece.text.slice(start, end)
    if "$" not in text.text and "`" not in text.text:
        return Piece(text, splittable=True, exists=True, expression_end=piece.expression_end)
    names = tuple(name for name in piece.unresolved if name in text.text) or piece.unresolved
    return Piece(text, names, splittable=True, splat=text.text.startswith(("$", "`")), exists=True,
                  expression_end=piece.expression_end)


def field_token(pieces: list[Piece], whole_word: MappedText | None) -> tuple[Token, MappedText]:
    mapped = MappedText.join([piece.text for piece in pieces]) if pieces else (
        whole_word.slice(0, 0) if whole_word is not None else MappedText("", [0], None))
    unresolved = tuple(dict.fromkeys(name for piece in pieces for name in piece.unresolved))
    splat = any(piece.splat for piece in pieces)
    span: Span | None
    if whole_word is not None:
        span = whole_word.span()
    else:
        span = mapped.span()
        ends = [piece.expression_end for piece in pieces if piece.expression_end is not None]
        if span is not None and ends and mapped.source is not None and max(ends) > span.end:
            span = mapped.source.span(span.start, max(ends))
    return Token(mapped.text, span, unresolved, splat), mapped


# --- the words of one command line, for the formats that run no shell script ---------------------------


def split_words(text: MappedText) -> list[MappedText]:
    """Split one command line into words with POSIX quoting rules, without expansion.

    Single quotes are literal; in double quotes a backslash escapes only ``$ ` " \\`` and newline;
    outside quotes a backslash escapes any character; backslash-newline disappears. ``$`` and
    everything after it stay literal. Each word keeps per-character file offsets.
    """
    words: list[MappedText] = []
    lexer = Lexer(text, None)
    for start, end in unquoted_word_ranges(text.text, 0, len(text.text)):
        if _QUOTING.search(text.text, start, end) is None:
            words.append(text.slice(start, end))  # no quotes or escapes: the word is its text
            continue
        pieces = lexer.expand(start, end, quoted=False)
        if not pieces:
            continue
        words.append(MappedText.join([piece.text for piece in pieces]))
    return words


def substitute_words(text: MappedText, variables: dict[str, Token | None],
                     *, split: bool = True) -> list[tuple[Token, MappedText]]:
    """Words of ``text`` with quotes removed and ``$VAR``/``${VAR:-d}``/... substituted, without
    field splitting of the results (Dockerfile ``ENV``/``ARG``/``FROM`` semantics). A variable
    mapped to ``None`` is declared with an unknown value; one not in ``variables`` is unknown too
    (``$(...)`` is never run). With ``split=False`` the whole text is one word (blanks kept).
    """
    state = State()
    for name, token in variables.items():
        if token is None:
            state.forget(name)
        else:
            state.variables[name] = Var(Value(token.value, token.unresolved, token.splat))
    lexer = Lexer(text, Expander(state))
    ranges = list(unquoted_word_ranges(text.text, 0, len(text.text))) if split else [(0, len(text.text))]
    words: list[tuple[Token, MappedText]] = []
    for start, end in ranges:
        if plain_word(text.text, start, end):
            word = text.slice(start, end)  # no quotes, escapes or `$`: the word is its text
            words.append((Token(word.text, word.span()), word))
            continue
        pieces = lexer.expand(start, end, quoted=False)
        value = join_pieces(pieces)
        mapped = MappedText.join([piece.text for piece in pieces]) if pieces else text.slice(start, start)
        unresolved = tuple(dict.fromkeys(name for piece in pieces for name in piece.unresolved))
        words.append((Token(value.text, text.slice(start, end).span(), unresolved), mapped))
    return words
