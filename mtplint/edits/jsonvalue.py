"""Rewriting a speculative-config value where the user wrote it.

The value of vLLM's ``--speculative-config`` reaches the parser through a container: a shell word
(``'{"method":"mtp"}'``, ``"{\\"method\\":\\"mtp\\"}"``), a YAML scalar (a k8s ``args`` item, a
word of a compose folded command), a Python string literal, a Python dict literal
(``LLM(speculative_config={...})`` or a constant it names), or a ``speculative-config:`` mapping in
the YAML given to ``--config``. A :class:`JsonSite` finds the object inside its container and turns
"set this key", "rename that key", "add a key" or "rewrite the whole object" into
:class:`~mtplint.checks.Edit` s on the original text:

* the smallest edit that does it (the value's text, the key's text, an insertion before ``}``), so
  the user's spacing, key order and comments survive;
* text inserted or replaced is written in the style already there: the key/value separator
  (``": "`` or ``":"``), the item separator (``", "``, ``","``, a newline and indent), the string
  quote (``"`` in JSON, the user's quote in a Python dict), and the escaping of the container (a
  JSON inside a double-quoted shell or YAML string gets ``\\"``; a single-quoted shell word cannot
  hold ``'`` and gets ``'\\''``).

Where the container cannot be read back exactly (two quoting layers, an escape we do not model), a
site is not built and the caller offers no fix: a fix must never produce a value the user did not
mean. Argv-level edits (removing a flag and its value, inserting words) are
:mod:`mtplint.edits.argv`'s; the few word helpers at the end are the JSON-specific ones (the quoted
extent of a word, whether two words are items of a list).
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache

from mtplint.checks import Edit
from mtplint.extract.yamlpos import YamlError, load_all
from mtplint.records import FrozenRecord, Record
from mtplint.source import SourceFile, Span
from mtplint.startup import DeferredPattern
from mtplint.textpos import ast_offset, line_start

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

    from mtplint.checks import RuleContext
    from mtplint.engines import OptionValue
    from mtplint.extract.launch import Launch
    from mtplint.source import Token

    #: a dict literal's entries: (key, and the key's and the value's start and end as offsets into
    #: the literal's text, the key's quote character)
    _DictEntries = tuple[tuple[str, int, int, int, int, str], ...]


# --- quoting modes ---------------------------------------------------------------------------------
#: how a decoded character was written, which decides how replacement text is escaped:
#: ``raw`` nothing to escape (Python source, a YAML plain/block scalar without shell quoting);
#: ``sq``/``dq``/``bare`` a shell word's single-quoted, double-quoted, unquoted part (also the
#: shell-like splitting of compose string commands); ``ysq``/``ydq`` a YAML quoted scalar;
#: ``py'``/``py"`` a Python string literal with that quote.
SHELL_BARE_SPECIAL = set(" \t\n\"'\\$`|&;<>()*?[]#~!{}")


def encode(text: str, mode: str) -> str:
    """``text`` written so that the container in ``mode`` reads it back unchanged."""
    if mode == "sq":
        return text.replace("'", "'\\''")
    if mode == "dq":
        return re.sub(r'([\\"$`])', r"\\\1", text)
    if mode == "ydq":
        return re.sub(r'([\\"])', r"\\\1", text)
    if mode == "ysq":
        return text.replace("'", "''")
    if mode == "bare":
        return "".join("\\" + char if char in SHELL_BARE_SPECIAL else char for char in text)
    if mode in ("py'", 'py"'):
        return text.replace("\\", "\\\\").replace(mode[2], "\\" + mode[2])
    return text


class Decoded(Record):
    """Text read out of a container: each character with its file offset and quoting mode."""

    __slots__ = ("text", "offsets", "modes", "starts")
    text: str
    #: file offset of each decoded character (of the character itself, after any escape)
    offsets: list[int]
    modes: list[str]
    #: file offset where each decoded character's spelling starts (its backslash when escaped)
    starts: list[int]

    def __init__(self, text: str, offsets: list[int], modes: list[str], starts: list[int] | None = None) -> None:
        self.text = text
        self.offsets = offsets
        self.modes = modes
        self.starts = starts if starts else list(offsets)

    def raw_range(self, start: int, end: int) -> tuple[int, int] | None:
        """The file range written for decoded ``[start, end)`` when it starts and ends in the same
        quoting mode: text written in that mode then replaces the range, quotes closed and reopened
        inside it included (``"'\\''"`` in a single-quoted word)."""
        if end <= start or self.modes[start] != self.modes[end - 1]:
            return None
        return self.starts[start], self.offsets[end - 1] + 1

    def insert_at(self, index: int) -> tuple[int, str]:
        """File offset to insert before decoded ``index``, and the mode there."""
        return self.starts[index], self.modes[index]


#: what ends a run of characters written as themselves in a double-quoted part, and in a bare part
_DOUBLE_QUOTED_SPECIAL = DeferredPattern(r'["\\$`]')
_BARE_SPECIAL = DeferredPattern(r"['\"\\ \t\n$`]")


def _shell_word(raw: str, base: int) -> Decoded | None:
    """A shell word (quotes, backslashes) as the shell (or compose's shlex splitting) reads it."""
    out = Decoded("", [], [], [])
    chars: list[str] = []

    def take_run(start: int, stop: int, mode: str) -> None:
        # characters written as themselves, taken a run at a time: each is read from its own offset
        written = range(base + start, base + stop)
        chars.append(raw[start:stop])
        out.offsets.extend(written)
        out.modes.extend([mode] * len(written))
        out.starts.extend(written)

    def take_escaped(position: int, mode: str) -> None:
        # a character spelled with the backslash before it
        chars.append(raw[position])
        out.offsets.append(base + position)
        out.modes.append(mode)
        out.starts.append(base + position - 1)

    index = 0
    length = len(raw)
    while index < length:
        char = raw[index]
        if char == "'":
            close = raw.find("'", index + 1)
            if close < 0:
                return None
            take_run(index + 1, close, "sq")
            index = close + 1
        elif char == '"':
            index += 1
            while True:
                special = _DOUBLE_QUOTED_SPECIAL.search(raw, index)
                if special is None:
                    return None  # the quote is not closed
                take_run(index, special.start(), "dq")
                index = special.start()
                found = raw[index]
                if found == '"':
                    break
                if found in "$`":
                    return None  # an expansion: not text we can rewrite
                if index + 1 < length and raw[index + 1] in '\\"$`':
                    take_escaped(index + 1, "dq")
                    index += 2
                else:  # a backslash before another character stands for itself
                    take_run(index, index + 1, "dq")
                    index += 1
            index += 1
        elif char == "\\" and index + 1 < length:
            take_escaped(index + 1, "bare")
            index += 2
        elif char in " \t\n$`":
            return None
        else:
            special = _BARE_SPECIAL.search(raw, index + 1)
            stop = length if special is None else special.start()
            take_run(index, stop, "bare")
            index = stop
    out.text = "".join(chars)
    return out


def _escaped_string(raw: str, base: int, quote: str, mode: str, escapes: str) -> Decoded | None:
    """A quoted string whose backslash escapes ``escapes`` stand for themselves."""
    if len(raw) < 2 or raw[0] != quote or raw[-1] != quote:
        return None
    chars: list[str] = []
    offsets: list[int] = []
    starts: list[int] = []
    index = 1
    while index < len(raw) - 1:
        spelled_from = index
        char = raw[index]
        if char == "\\":
            if index + 1 >= len(raw) - 1 or raw[index + 1] not in escapes:
                return None
            index += 1
        elif char == quote or char == "\n":
            return None
        chars.append(raw[index])
        offsets.append(base + index)
        starts.append(base + spelled_from)
        index += 1
    return Decoded("".join(chars), offsets, [mode] * len(chars), starts)


def _yaml_single(raw: str, base: int) -> Decoded | None:
    if len(raw) < 2 or raw[0] != "'" or raw[-1] != "'" or "\n" in raw:
        return None
    chars: list[str] = []
    offsets: list[int] = []
    starts: list[int] = []
    index = 1
    last = len(raw) - 1
    while index < last:
        # a run up to the next quote is written as itself; a quote is written twice
        quote = raw.find("'", index, last)
        stop = last if quote < 0 else quote
        written = range(base + index, base + stop)
        chars.append(raw[index:stop])
        offsets.extend(written)
        starts.extend(written)
        if quote < 0:
            break
        if quote + 1 >= last or raw[quote + 1] != "'":
            return None
        chars.append("'")
        offsets.append(base + quote + 1)
        starts.append(base + quote)
        index = quote + 2
    return Decoded("".join(chars), offsets, ["ysq"] * len(offsets), starts)


def _python_string(raw: str, base: int) -> Decoded | None:
    if raw[:1] in ("u", "U"):
        raw, base = raw[1:], base + 1
    if not raw or raw[0] not in "'\"" or raw.startswith(("'''", '"""')):
        return None
    return _escaped_string(raw, base, raw[0], "py" + raw[0], "\\'\"")


def _identity(raw: str, base: int) -> Decoded:
    return Decoded(raw, list(range(base, base + len(raw))), ["raw"] * len(raw))


# --- reading a top-level object --------------------------------------------------------------------

class Entry(Record):
    """One ``key: value`` of an object, as decoded-text positions (key and value include quotes)."""

    __slots__ = ("key", "key_start", "key_end", "value_start", "value_end", "quote")
    key: str
    key_start: int
    key_end: int
    value_start: int
    value_end: int
    quote: str

    def __init__(self, key: str, key_start: int, key_end: int, value_start: int, value_end: int, quote: str) -> None:
        self.key = key
        self.key_start = key_start
        self.key_end = key_end
        self.value_start = value_start
        self.value_end = value_end
        self.quote = quote


class ObjectShape(Record):
    __slots__ = ("open", "close", "entries")
    open: int
    close: int
    entries: list[Entry]

    def __init__(self, open: int, close: int, entries: list[Entry] | None = None) -> None:
        self.open = open
        self.close = close
        self.entries = entries if entries is not None else []

    def entry(self, key: str) -> Entry | None:
        wanted = key.replace("-", "_")
        for entry in self.entries:
            if entry.key.replace("-", "_") == wanted:
                return entry
        return None


_WS = " \t\r\n"


def _skip_ws(text: str, index: int, comments: bool) -> int:
    while index < len(text):
        if text[index] in _WS:
            index += 1
        elif comments and text[index] == "#":
            while index < len(text) and text[index] != "\n":
                index += 1
        else:
            break
    return index


def _string_end(text: str, index: int) -> int:
    quote = text[index]
    index += 1
    while index < len(text) and text[index] != quote:
        index += 2 if text[index] == "\\" else 1
    if index >= len(text):
        raise ValueError("unterminated string")
    return index + 1


def _value_end(text: str, index: int, comments: bool) -> int:
    depth = 0
    while index < len(text):
        char = text[index]
        if char in "\"'":
            index = _string_end(text, index)
            continue
        if comments and char == "#":
            return index
        if char in "{[(":
            depth += 1
        elif char in "}])":
            if depth == 0:
                return index
            depth -= 1
        elif char == "," and depth == 0:
            return index
        index += 1
    raise ValueError("unterminated object")


def scan_object(text: str, start: int = 0, comments: bool = False) -> ObjectShape | None:
    """The top-level entries of a JSON object (or a Python-literal dict) starting at ``start``."""
    try:
        index = _skip_ws(text, start, comments)
        if index >= len(text) or text[index] != "{":
            return None
        shape = ObjectShape(index, -1)
        index += 1
        while True:
            index = _skip_ws(text, index, comments)
            if index < len(text) and text[index] == "}":
                shape.close = index
                return shape
            if index >= len(text) or text[index] not in "\"'":
                return None
            key_end = _string_end(text, index)
            key_text = text[index:key_end]
            key = json.loads(key_text) if key_text[0] == '"' else key_text[1:-1]
            colon = _skip_ws(text, key_end, comments)
            if colon >= len(text) or text[colon] != ":":
                return None
            value_start = _skip_ws(text, colon + 1, comments)
            value_end = _value_end(text, value_start, comments)
            trimmed = value_end
            while trimmed > value_start and text[trimmed - 1] in _WS:
                trimmed -= 1
            if trimmed <= value_start:
                return None
            shape.entries.append(Entry(key, index, key_end, value_start, trimmed, key_text[0]))
            index = _skip_ws(text, value_end, comments)
            if index < len(text) and text[index] == ",":
                index += 1
    except (ValueError, json.JSONDecodeError):
        return None


# --- the style of an object ------------------------------------------------------------------------

class Style(FrozenRecord):
    __slots__ = ("key_separator", "item_separator", "quote", "python")
    key_separator: Final[str]
    item_separator: Final[str]
    quote: Final[str]
    #: Python spelling (``True``/``None``, the user's quote) instead of JSON
    python: Final[bool]

    def __init__(self, key_separator: str = ": ", item_separator: str = ", ", quote: str = '"', python: bool = False) -> None:
        self.key_separator = key_separator
        self.item_separator = item_separator
        self.quote = quote
        self.python = python

    def literal(self, value: Any) -> str:
        if self.python:
            return _python_literal(value, self.quote)
        if isinstance(value, dict):
            return "{" + self.item_separator.join(
                json.dumps(str(k)) + self.key_separator + self.literal(v) for k, v in value.items()) + "}"
        return json.dumps(value)

    def key(self, name: str) -> str:
        return _python_literal(name, self.quote) if self.python else json.dumps(name)

    def item(self, name: str, value: Any) -> str:
        return self.key(name) + self.key_separator + self.literal(value)

    def render(self, obj: dict[str, Any]) -> str:
        return "{" + self.item_separator.join(self.item(k, v) for k, v in obj.items()) + "}"


def _python_literal(value: Any, quote: str) -> str:
    if isinstance(value, str):
        body = value.replace("\\", "\\\\").replace(quote, "\\" + quote)
        return quote + body + quote
    if isinstance(value, dict):
        return "{" + ", ".join(_python_literal(str(k), quote) + ": " + _python_literal(v, quote)
                               for k, v in value.items()) + "}"
    return repr(value)


def detect_style(text: str, shape: ObjectShape, python: bool = False) -> Style:
    """The separators and quote the user wrote (defaults from the first separator seen)."""
    key_separator = ": "
    item_separator: str | None = None
    quote = '"'
    if shape.entries:
        first = shape.entries[0]
        key_separator = text[first.key_end:first.value_start]
        quote = first.quote
        if len(shape.entries) > 1:
            item_separator = text[first.value_end:shape.entries[1].key_start]
    if item_separator is None or item_separator.count(",") != 1 or "#" in item_separator:
        item_separator = ", " if key_separator.endswith(" ") else ","
    if "#" in key_separator or "\n" in key_separator:
        key_separator = ": "
    return Style(key_separator, item_separator, quote, python)


# --- a site: where a speculative config was written ------------------------------------------------

class JsonSite:
    """Edits to one speculative-config object, in the file and container it was written in."""

    source: SourceFile

    def value(self) -> dict[str, Any]:
        raise NotImplementedError

    def set_value(self, key: str, value: Any) -> list[Edit] | None:
        raise NotImplementedError

    def rename_key(self, old: str, new: str) -> list[Edit] | None:
        raise NotImplementedError

    def add_key(self, key: str, value: Any) -> list[Edit] | None:
        raise NotImplementedError

    def replace_object(self, obj: dict[str, Any], strict_json: bool = False) -> list[Edit] | None:
        raise NotImplementedError

    def update(self, changes: dict[str, Any]) -> list[Edit] | None:
        """Set every key of ``changes`` (existing keys in place, new ones added at the end)."""
        edits: list[Edit] = []
        added: dict[str, Any] = {}
        current = {k.replace("-", "_") for k in self.value()}
        for key, value in changes.items():
            if key.replace("-", "_") in current:
                found = self.set_value(key, value)
                if found is None:
                    return None
                edits.extend(found)
            else:
                added[key] = value
        if added:
            found = self.add_keys(added)
            if found is None:
                return None
            edits.extend(found)
        return edits

    def add_keys(self, added: dict[str, Any]) -> list[Edit] | None:
        edits: list[Edit] = []
        for key, value in added.items():
            found = self.add_key(key, value)
            if found is None:
                return None
            edits.extend(found)
        return _merge_inserts(edits)


def _merge_inserts(edits: list[Edit]) -> list[Edit]:
    """Insertions at one offset as one edit (in order), so they cannot be applied apart."""
    merged: list[Edit] = []
    for edit in edits:
        last = merged[-1] if merged else None
        if (last is not None and edit.span.start == edit.span.end == last.span.start == last.span.end
                and edit.span.file == last.span.file):
            merged[-1] = Edit(last.span, last.content + edit.content)
        else:
            merged.append(edit)
    return merged


class TextSite(JsonSite):
    """An object written as text: JSON (or a Python-literal dict) in a string, or Python source."""

    def __init__(self, source: SourceFile, decoded: Decoded, shape: ObjectShape, python_source: bool = False) -> None:
        self.source = source
        self.decoded = decoded
        self.shape = shape
        self.python_source = python_source
        self.text = decoded.text
        self.style = detect_style(self.text, shape, python=python_source or self._is_python_literal())

    def _is_python_literal(self) -> bool:
        return any(entry.quote == "'" for entry in self.shape.entries)

    def object_text(self) -> str:
        return self.text[self.shape.open:self.shape.close + 1]

    def value(self) -> dict[str, Any]:
        text = self.object_text()
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            from mtplint import pysyntax  # noqa: PLC0415 - ast: a Python dict's text only

            try:
                parsed = pysyntax.literal(text)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                return {}
        return {str(k): v for k, v in parsed.items()} if isinstance(parsed, dict) else {}

    def _replace(self, start: int, end: int, content: str) -> list[Edit] | None:
        found = self.decoded.raw_range(start, end)
        if found is None:
            return None
        return [Edit(self.source.span(*found), encode(content, self.decoded.modes[start]))]

    def _insert(self, index: int, content: str) -> list[Edit]:
        offset, mode = self.decoded.insert_at(index)
        return [Edit(self.source.span(offset, offset), encode(content, mode))]

    def set_value(self, key: str, value: Any) -> list[Edit] | None:
        entry = self.shape.entry(key)
        if entry is None:
            return None
        style = self.style
        if style.python and isinstance(value, str):
            quote = self.text[entry.value_start]
            style = Style(style.key_separator, style.item_separator, quote if quote in "'\"" else style.quote, True)
        return self._replace(entry.value_start, entry.value_end, style.literal(value))

    def rename_key(self, old: str, new: str) -> list[Edit] | None:
        entry = self.shape.entry(old)
        if entry is None:
            return None
        quoted = _python_literal(new, entry.quote) if entry.quote == "'" or self.python_source else json.dumps(new)
        return self._replace(entry.key_start, entry.key_end, quoted)

    def add_key(self, key: str, value: Any) -> list[Edit] | None:
        item = self.style.item(key, value)
        if not self.shape.entries:
            return self._insert(self.shape.close, item)
        last = self.shape.entries[-1]
        text = self.text
        close_line = line_start(text, self.shape.close)
        key_line = line_start(text, last.key_start)
        indent = text[key_line:last.key_start]
        if close_line > last.value_end and not text[close_line:self.shape.close].strip() and not indent.strip():
            # one entry per line, ``}`` on its own line: a new line like the last entry's, keeping a
            # trailing comma when the user writes one
            trailing = text[last.value_end:close_line].lstrip(" \t").startswith(",")
            newline = "\r\n" if text[close_line - 2:close_line] == "\r\n" else "\n"
            line = indent + item + ("," if trailing else "") + newline
            edits = [] if trailing else self._insert(last.value_end, ",")
            return edits + self._insert(close_line, line)
        return self._insert(last.value_end, self.style.item_separator + item)

    def replace_object(self, obj: dict[str, Any], strict_json: bool = False) -> list[Edit] | None:
        style = Style(self.style.key_separator, self.style.item_separator, '"', False) if strict_json else self.style
        return self._replace(self.shape.open, self.shape.close + 1, style.render(obj))


class YamlMappingSite(JsonSite):
    """A ``speculative-config:`` block mapping in the YAML given to ``vllm serve --config``."""

    def __init__(self, source: SourceFile, node: Any) -> None:
        self.source = source
        self.node = node

    def value(self) -> dict[str, Any]:
        found = self.node.python()
        return {str(k): v for k, v in found.items()} if isinstance(found, dict) else {}

    def _pair(self, key: str) -> tuple[Any, Any] | None:
        wanted = key.replace("-", "_")
        for key_node, value_node in self.node.pairs:
            if key_node.is_scalar and key_node.str.replace("-", "_") == wanted:
                return key_node, value_node
        return None

    def set_value(self, key: str, value: Any) -> list[Edit] | None:
        pair = self._pair(key)
        if pair is None or not pair[1].is_scalar or pair[1].style in ("|", ">"):
            return None
        node = pair[1]
        raw = self.source.text[node.start:node.end]
        quote = raw[:1] if raw[:1] in ("'", '"') else ""
        text = _yaml_scalar(value, quote)
        if text is None:
            return None
        return [Edit(self.source.span(node.start, node.end), text)]

    def rename_key(self, old: str, new: str) -> list[Edit] | None:
        pair = self._pair(old)
        if pair is None or pair[0].style not in (None, ""):
            return None
        return [Edit(self.source.span(pair[0].start, pair[0].end), new)]

    def add_key(self, key: str, value: Any) -> list[Edit] | None:
        if not self.node.pairs or self.source.text[self.node.start:self.node.start + 1] in "{[":
            return None
        first_key = self.node.pairs[0][0]
        indent = self.source.text[line_start(self.source.text, first_key.start):first_key.start]
        if indent.strip():
            return None
        last_value = self.node.pairs[-1][1]
        end = self.source.text.find("\n", last_value.end - 1 if last_value.end > 0 else 0)
        text = _yaml_scalar(value, "")
        if text is None:
            return None
        newline = self.source.newline
        line = f"{indent}{key}: {text}"
        if end < 0:
            at = len(self.source.text)
            return [Edit(self.source.span(at, at), newline + line)]
        if self.source.text[end - 1:end] == "\r":
            end -= 1
        return [Edit(self.source.span(end, end), newline + line)]

    def replace_object(self, obj: dict[str, Any], strict_json: bool = False) -> list[Edit] | None:
        return None


def _yaml_scalar(value: Any, quote: str) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        if quote == '"':
            return json.dumps(value)
        if quote == "'":
            return "'" + value.replace("'", "''") + "'"
        if re.fullmatch(r"[A-Za-z_][\w./-]*", value) and value.lower() not in ("true", "false", "null", "yes", "no",
                                                                                "on", "off", "y", "n", "~"):
            return value
        return json.dumps(value)
    return None


# --- Python dict literals -------------------------------------------------------------------------

@lru_cache(maxsize=32)
def _python_dict_entries(snippet: str) -> _DictEntries | None:
    """The entries of ``snippet``, a dict literal whose keys are all plain string literals, read
    with :mod:`ast` (the parser the extractor already ran); None for anything else: a ``**``
    entry, a key that is no string literal, or one written as bytes, an f-string, a raw string or
    several literals side by side."""
    # only a Python file's dict gets here: a JSON fix in a compose file or a shell script (a check
    # of one such file builds it) does not load ast
    import ast  # noqa: PLC0415 - a Python file's dict only

    from mtplint import pysyntax  # noqa: PLC0415 - ast: a Python file's dict only

    try:
        tree = pysyntax.parse_expression(snippet)
    except (SyntaxError, ValueError):
        return None
    if not isinstance(tree, ast.Dict) or ast_offset(snippet, tree.lineno, tree.col_offset) != 0:
        return None
    entries = []
    for key, value in zip(tree.keys, tree.values, strict=True):
        if not isinstance(key, ast.Constant) or not isinstance(key.value, str):
            return None
        key_start = ast_offset(snippet, key.lineno, key.col_offset)
        key_end = ast_offset(snippet, key.end_lineno or key.lineno, key.end_col_offset or 0)
        quote = _single_literal_quote(snippet[key_start:key_end])
        if quote is None:
            return None
        entries.append((key.value, key_start, key_end, ast_offset(snippet, value.lineno, value.col_offset),
                        ast_offset(snippet, value.end_lineno or value.lineno, value.end_col_offset or 0), quote))
    return tuple(entries)


def _single_literal_quote(literal: str) -> str | None:
    """The quote character of ``literal`` when it is one plain (or ``u``) string literal."""
    import tokenize  # noqa: PLC0415 - a Python file's dict only, as ast above

    body = literal[1:] if literal[:1] in "uU" else literal
    if body[:1] not in ("'", '"'):
        return None  # b"", r"", f"" and the like: their text is not the key as written
    try:
        tokens = [token for token in tokenize.generate_tokens(io.StringIO(literal).readline)
                  if token.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER)]
    except (tokenize.TokenError, SyntaxError):
        return None
    return body[0] if len(tokens) == 1 and tokens[0].type == tokenize.STRING else None


def python_dict_site(source: SourceFile, span: Span) -> TextSite | None:
    """The dict literal at ``span`` in Python source (comments, trailing commas and the user's
    formatting are kept: the edits touch only the keys and values they change).

    ``span`` covers the literal (the extractor found it with :mod:`ast`), so only the literal is
    parsed again, for the positions of its keys and values."""
    entries = _python_dict_entries(source.text[span.start:span.end])
    if entries is None:
        return None
    shape = ObjectShape(span.start, span.end - 1)
    shape.entries.extend(Entry(key, span.start + key_start, span.start + key_end, span.start + value_start,
                               span.start + value_end, quote)
                         for key, key_start, key_end, value_start, value_end, quote in entries)
    return TextSite(source, _identity(source.text, 0), shape, python_source=True)


# --- finding a site --------------------------------------------------------------------------------

def _candidates(source: SourceFile, span: Span) -> Iterator[Decoded]:
    """The readings of the word at ``span``, the outer container's first; produced one at a time
    (the first reading that fits is taken, and decoding a word is a loop over its characters)."""
    text = source.text
    raw = text[span.start:span.end]
    yaml_file = source.display.lower().endswith((".yaml", ".yml"))
    python_file = source.display.lower().endswith((".py", ".pyw"))
    before = text[span.start - 1] if span.start > 0 else ""
    after = text[span.end] if span.end < len(text) else ""
    if before and before == after and before in "'\"":
        outer = text[span.start - 1:span.end + 1]
        outer_decoders: list[Callable[[str, int], Decoded | None]] = [_shell_word]
        if yaml_file:
            yaml_decoder: Callable[[str, int], Decoded | None] = (
                (lambda r, b: _escaped_string(r, b, '"', "ydq", '\\"/')) if before == '"' else _yaml_single)
            outer_decoders.insert(0, yaml_decoder)
        for decoder in outer_decoders:
            decoded = decoder(outer, span.start - 1)
            if decoded is not None:
                yield decoded
    decoded = (_python_string if python_file else _shell_word)(raw, span.start)
    if decoded is not None:
        yield decoded
    yield _identity(raw, span.start)


def text_site(source: SourceFile, span: Span, expected: str | None = None) -> TextSite | None:
    """The JSON (or Python-literal) object written in the word or string at ``span``.

    ``expected`` is the text the engine's parser received (the token's value); a reading of the
    container is used only when it gives exactly that text back."""
    for decoded in _candidates(source, span):
        text = decoded.text
        if expected is not None and text != expected:
            continue
        start = 0
        if text.startswith("-") and "=" in text:
            start = text.index("=") + 1
        shape = scan_object(text, start)
        if shape is None or text[shape.close + 1:].strip():
            continue
        if decoded.modes and decoded.modes[0] == "raw" and (source.display.lower().endswith((".py", ".pyw"))):
            continue  # Python source: the dict-literal reader handles it
        return TextSite(source, decoded, shape)
    return None


def yaml_mapping_site(source: SourceFile, span: Span) -> YamlMappingSite | None:
    try:
        documents = load_all(source)
    except YamlError:
        return None
    stack = list(documents)
    while stack:
        node = stack.pop()
        if node.is_map and node.start == span.start:
            return YamlMappingSite(source, node)
        stack.extend(node.items)
        for key_node, value_node in node.pairs:
            stack.append(key_node)
            stack.append(value_node)
    return None


def site_for(source: SourceFile | None, span: Span | None, expected: str | None = None) -> JsonSite | None:
    """The speculative-config object written at ``span`` (a token, a kwarg value, a YAML mapping)."""
    if source is None or span is None or span.end <= span.start:
        return None
    head = source.text[span.start:span.end].lstrip()
    lower = source.display.lower()
    if lower.endswith((".py", ".pyw")) and head.startswith("{"):
        return python_dict_site(source, span)
    found = text_site(source, span, expected)
    if found is not None:
        return found
    if lower.endswith((".yaml", ".yml")) and not head.startswith(("{", "'", '"')):
        return yaml_mapping_site(source, span)
    return None


def spec_site(ctx: RuleContext, option: OptionValue | None) -> JsonSite | None:
    """The site of a speculative-config option of a launch (its JSON word, its Python dict, its
    ``--config`` YAML mapping); None when the value was not written as one object we can edit."""
    if option is None or option.unresolved or option.span is None:
        return None
    token = token_at(ctx.report.launch.args, option.span)
    if token is not None and not token.resolved:
        return None
    return site_for(ctx.source_for(option.span), option.span, token.value if token is not None else None)


def token_at(tokens: Sequence[Token], span: Span | None) -> Token | None:
    if span is None:
        return None
    for token in tokens:
        if token.span is not None and token.span.file == span.file and token.span.start == span.start \
                and token.span.end == span.end:
            return token
    return None


# --- argv words: what the JSON fixes need to know about the word holding the value ----------------

def quoted_extent(source: SourceFile, span: Span) -> tuple[int, int]:
    """The word's file range including quotes that enclose the span (YAML spans stop inside them)."""
    text = source.text
    start, end = span.start, span.end
    if start > 0 and end < len(text) and text[start - 1] == text[end] and text[end] in "'\"":
        return start - 1, end + 1
    return start, end


def word_quote(source: SourceFile, span: Span) -> str:
    """The quote enclosing the span in the file ('' when the span's own text carries its quotes)."""
    start, _ = quoted_extent(source, span)
    return source.text[start] if start < span.start else ""


def replace_word_text(source: SourceFile, span: Span, old: str, new: str) -> Edit | None:
    """Replace the one occurrence of ``old`` inside the word at ``span`` (quotes and the ``--flag=``
    part stay as written)."""
    raw = source.text[span.start:span.end]
    if raw.count(old) != 1:
        return None
    at = span.start + raw.index(old)
    return Edit(source.span(at, at + len(old)), new)


def list_form(source: SourceFile, first: Span, second: Span) -> bool:
    """Two consecutive words are separate items of a YAML list (not words of one command line)."""
    _, first_end = quoted_extent(source, first)
    second_start, _ = quoted_extent(source, second)
    between = source.text[first_end:second_start]
    return between.replace("\\\r\n", " ").replace("\\\n", " ").strip() != ""


def remove_argv_words(source: SourceFile, launch: Launch, first: int, count: int) -> Edit | None:
    """:func:`mtplint.edits.argv.remove_args`, keeping a file's missing final newline missing: when
    the removed lines are the file's last and it has no final newline, the line break before them
    goes too (else the newline that ended the previous line would become the file's last byte)."""
    # the argv edits (and the shell word readers they import) only for a fix that removes words:
    # most fixes built here rewrite a value inside a word
    from mtplint.edits.argv import remove_args  # noqa: PLC0415 - fixing: only a fix that removes words

    edit = remove_args(source, launch, first, count)
    text = source.text
    if edit is None or edit.content or edit.span.end != len(text) or text.endswith("\n"):
        return edit
    start = edit.span.start
    if start > 0 and text[start - 1] == "\n":
        start -= 2 if start > 1 and text[start - 2] == "\r" else 1
        return Edit(source.span(start, edit.span.end), "")
    return edit


def remove_argv_groups(source: SourceFile, launch: Launch, groups: Sequence[tuple[int, int]]) -> list[Edit] | None:
    """Remove groups of words (``(first index in launch.args, count)``, in order); groups next to
    each other are removed as one, so two removals never claim the same separator."""
    runs: list[list[int]] = []
    for first, count in groups:
        if runs and runs[-1][0] + runs[-1][1] == first:
            runs[-1][1] += count
        else:
            runs.append([first, count])
    edits: list[Edit] = []
    for first, count in runs:
        removal = remove_argv_words(source, launch, first, count)
        if removal is None:
            return None
        edits.append(removal)
    return edits
