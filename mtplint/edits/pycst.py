"""The Python edits of fixes, placed with libcst (imported only here, when a fix is worked out).

libcst's concrete syntax tree keeps every token of the source -- commas, brackets, the whitespace
and comments between them -- with its position, so each operation finds exactly where the user's
call, list or dict is written and what separates its items, and returns span edits on the original
text (never a re-printed tree: the rest of the file stays byte-identical). The operations are
called by name from :class:`mtplint.edits.pyedit.PythonEdit`; each returns its edits, or ``None``
when the code is not written in a way it can edit safely (then the fix is not applied).

- :func:`add_keyword`: ``name=value`` as the last argument of ``LLM(...)`` / ``EngineArgs(...)`` /
  ``sglang.Engine(...)``, on a line of its own in a one-argument-per-line call;
- :func:`rename_keyword`, :func:`replace_keyword_value`, :func:`edit_string`: a keyword's name,
  its value, the text of a string literal (a keyword's value, an element of a ``subprocess`` argv list);
- :func:`insert_elements`, :func:`remove_elements`, :func:`split_element`: words added to an argv
  list beside an element (quoted like it), removed from it, one split at its ``=``;
- :func:`set_env`: a key of the call's ``env={...}`` dict, else ``os.environ["KEY"] = "value"``
  above the statement, and :func:`import_os` where the module's imports are, when it is missing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from mtplint.checks import Edit
from mtplint.edits.lines import insert_line
from mtplint.source import SourceFile
from mtplint.textpos import line_end, line_start, next_line_start

#: text written between quotes that reads back as itself in every Python string literal
_PLAIN = re.compile(r"[A-Za-z0-9_@%+=:,./ -]*")


class _Tree:
    """A module's syntax tree and where each node is written (character offsets)."""

    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.module = cst.parse_module(source.text)
        self.ranges: dict[cst.CSTNode, CodeRange] = dict(
            MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider))

    def start(self, node: cst.CSTNode) -> int:
        position = self.ranges[node].start
        return self.source.line_start(position.line) + position.column

    def end(self, node: cst.CSTNode) -> int:
        position = self.ranges[node].end
        return self.source.line_start(position.line) + position.column

    def nodes(self, kind: type[cst.CSTNode] | tuple[type[cst.CSTNode], ...]) -> Iterator[cst.CSTNode]:
        return (node for node in self.ranges if isinstance(node, kind))


@lru_cache(maxsize=8)
def _tree(source: SourceFile) -> _Tree | None:
    try:
        return _Tree(source)
    except (cst.ParserSyntaxError, RecursionError, ValueError):
        return None


# --- small text helpers ------------------------------------------------------------------------------

def _indent_before(text: str, offset: int) -> str | None:
    """The indentation of the line holding ``offset`` when nothing else precedes it there."""
    before = text[line_start(text, offset):offset]
    return before if not before.strip() else None


def _ends_line(comma: cst.Comma | cst.MaybeSentinel) -> bool:
    """A trailing comma after which the line ends (a comment may follow it)."""
    return isinstance(comma, cst.Comma) and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace)


def _literal(node: cst.CSTNode) -> cst.SimpleString | None:
    """A plain string literal whose text between the quotes is its value (no escapes, no prefix
    but ``r``/``u``): what an edit may change character for character."""
    if not isinstance(node, cst.SimpleString) or node.prefix.lower() not in ("", "r", "u"):
        return None
    if len(node.quote) != 1 or "\\" in node.raw_value:
        return None
    return node


# --- keyword arguments ---------------------------------------------------------------------------------

def _arg_range(tree: _Tree, arg: cst.Arg) -> tuple[int, int]:
    """Where an argument is written, its ``*``/``**`` or keyword included, its comma not."""
    start = tree.start(arg.keyword) if arg.keyword is not None else tree.start(arg.value) - len(arg.star)
    return start, tree.end(arg.value)


def _call_at(tree: _Tree, offset: int) -> cst.Call | None:
    """The call a launch's span starts in: the innermost one whose callee (``LLM``,
    ``sglang.Engine``) holds ``offset``, or that starts there."""
    best: cst.Call | None = None
    best_start = -1
    for node in tree.nodes(cst.Call):
        assert isinstance(node, cst.Call)
        start, end = tree.start(node), tree.end(node)
        if not start <= offset < end or (offset >= tree.end(node.func) and offset != start):
            continue
        if start > best_start or (start == best_start and best is not None and end < tree.end(best)):
            best, best_start = node, start
    return best


def add_keyword(source: SourceFile, call_offset: int, name: str, value_code: str) -> list[Edit] | None:
    """Add ``name=value_code`` as the call's last argument, in the call's layout: a new line
    indented like the arguments of a one-per-line call with a trailing comma, else ``, name=value``."""
    tree = _tree(source)
    call = _call_at(tree, call_offset) if tree is not None else None
    if tree is None or call is None:
        return None
    text = source.text
    keyword = f"{name}={value_code}"
    if not call.args:
        opening = text.find("(", tree.end(call.func))
        closing = tree.end(call) - 1
        if opening < 0 or text[opening + 1:closing].strip():
            return None  # a comment between the brackets: no place that is surely right
        return [Edit(source.span(opening + 1, closing), keyword)]
    last = call.args[-1]
    if last.star == "**":
        return None  # after ``**kwargs`` a keyword may repeat one of them: a TypeError at run time
    start, end = _arg_range(tree, last)
    indent = _indent_before(text, start)
    if _ends_line(last.comma) and indent is not None:
        assert isinstance(last.comma, cst.Comma)
        return [Edit(source.span(next_line_start(text, tree.end(last.comma) - 1)),
                     f"{indent}{keyword},{source.newline}")]
    return [Edit(source.span(end), ", " + keyword)]


def _keyword_at(tree: _Tree, value_offset: int, name: str) -> cst.Arg | None:
    for node in tree.nodes(cst.Arg):
        assert isinstance(node, cst.Arg)
        if node.keyword is not None and node.keyword.value == name and tree.start(node.value) == value_offset:
            return node
    return None


def rename_keyword(source: SourceFile, value_offset: int, old_name: str, new_name: str) -> list[Edit] | None:
    """``old_name=`` → ``new_name=`` for the keyword argument whose value is written at ``value_offset``."""
    tree = _tree(source)
    arg = _keyword_at(tree, value_offset, old_name) if tree is not None and new_name.isidentifier() else None
    if tree is None or arg is None or arg.keyword is None:
        return None
    return [Edit(source.span(tree.start(arg.keyword), tree.end(arg.keyword)), new_name)]


def replace_keyword_value(source: SourceFile, value_offset: int, value_end: int, name: str,
                          value_code: str) -> list[Edit] | None:
    """``name=old`` → ``name=value_code`` where the call writes the keyword with its value at
    ``value_offset``..``value_end``."""
    tree = _tree(source)
    arg = _keyword_at(tree, value_offset, name) if tree is not None else None
    if tree is None or arg is None or tree.end(arg.value) != value_end:
        return None
    return [Edit(source.span(value_offset, value_end), value_code)]


def _string_at(tree: _Tree, offset: int) -> cst.SimpleString | None:
    for node in tree.nodes(cst.SimpleString):
        if tree.start(node) == offset:
            return _literal(node)
    return None


def edit_string(source: SourceFile, literal_offset: int, value: str, start: int, end: int,
                new: str) -> list[Edit] | None:
    """Replace ``value[start:end]`` with ``new`` in the string literal at ``literal_offset``, whose
    value must be ``value``, written without escapes (its prefix and quotes stay)."""
    tree = _tree(source)
    literal = _string_at(tree, literal_offset) if tree is not None else None
    if tree is None or literal is None or literal.raw_value != value or not _PLAIN.fullmatch(new) \
            or literal.quote in new:
        return None
    at = tree.start(literal) + len(literal.prefix) + len(literal.quote)
    return [Edit(source.span(at + start, at + end), new)]


# --- argv lists ------------------------------------------------------------------------------------

def _element_at(tree: _Tree, offset: int) -> tuple[cst.List | cst.Tuple, int] | None:
    """The list (or tuple) holding an element written at ``offset``, and the element's index."""
    for node in tree.nodes((cst.List, cst.Tuple)):
        assert isinstance(node, cst.List | cst.Tuple)
        for index, element in enumerate(node.elements):
            if tree.start(element.value) == offset:
                return node, index
    return None


def _quoted(word: str, quote: str) -> str:
    return quote + word.replace("\\", "\\\\").replace(quote, "\\" + quote) + quote


def insert_elements(source: SourceFile, element_offset: int, words: Sequence[str], after: bool) -> list[Edit] | None:
    """Add ``words`` to the argv list right after (or before) the string element written at
    ``element_offset``, quoted like it: on lines of their own in a one-element-per-line list with
    trailing commas, else separated as the list separates its elements."""
    tree = _tree(source)
    found = _element_at(tree, element_offset) if tree is not None else None
    if tree is None or found is None or not words:
        return None
    holder, index = found
    element = holder.elements[index]
    if not isinstance(element, cst.Element) or not isinstance(element.value, cst.SimpleString):
        return None
    quote = element.value.quote if len(element.value.quote) == 1 else '"'
    items = [_quoted(word, quote) for word in words]
    text = source.text
    separator = _separator(holder, index)
    start, end = tree.start(element.value), tree.end(element.value)
    if not after:
        return [Edit(source.span(start), "".join(item + ", " for item in items))]
    indent = _indent_before(text, start)
    if _ends_line(element.comma) and indent is not None:
        assert isinstance(element.comma, cst.Comma)
        at = next_line_start(text, tree.end(element.comma) - 1)
        return [Edit(source.span(at), "".join(f"{indent}{item},{source.newline}" for item in items))]
    if isinstance(holder, cst.Tuple) and len(holder.elements) == 1 and not isinstance(element.comma, cst.Comma):
        return None  # ``("vllm")`` is no tuple: nothing to add to
    return [Edit(source.span(end), "".join(separator + item for item in items))]


def remove_elements(source: SourceFile, element_offset: int, count: int) -> list[Edit] | None:
    """Remove ``count`` elements of an argv list from the one written at ``element_offset`` (a flag
    and its value), with the comma that separated them from the rest."""
    tree = _tree(source)
    found = _element_at(tree, element_offset) if tree is not None else None
    if tree is None or found is None:
        return None
    holder, index = found
    elements = holder.elements
    if count < 1 or index + count > len(elements):
        return None
    last = elements[index + count - 1]
    if index > 0:
        # from the end of the element before: ``"a", "--x", "b"`` → ``"a", "b"``, and a trailing comma stays
        return [Edit(source.span(tree.end(elements[index - 1].value), tree.end(last.value)), "")]
    if index + count < len(elements):
        return [Edit(source.span(tree.start(elements[index].value), tree.start(elements[index + count].value)), "")]
    return None  # the list would be empty: not an argv any more


def split_element(source: SourceFile, element_offset: int, value: str) -> list[Edit] | None:
    """``"--config=x.yaml"`` → ``"--config", "x.yaml"``: one string element of an argv list made two."""
    tree = _tree(source)
    found = _element_at(tree, element_offset) if tree is not None else None
    if tree is None or found is None or "=" not in value:
        return None
    holder, index = found
    literal = _literal(holder.elements[index].value)
    if literal is None or literal.raw_value != value:
        return None
    equals = tree.start(literal) + len(literal.prefix) + len(literal.quote) + value.index("=")
    quote = literal.quote
    return [Edit(source.span(equals, equals + 1), f"{quote}{_separator(holder, index)}{literal.prefix}{quote}")]


def _separator(holder: cst.List | cst.Tuple, index: int) -> str:
    """How the list separates two elements on one line (``, `` or ``,``)."""
    for element in (*holder.elements[index - 1:index], *holder.elements):
        comma = element.comma
        if isinstance(comma, cst.Comma) and isinstance(comma.whitespace_after, cst.SimpleWhitespace) \
                and isinstance(comma.whitespace_before, cst.SimpleWhitespace) and not comma.whitespace_before.value:
            return "," + comma.whitespace_after.value
    return ", "


# --- the environment of a call ---------------------------------------------------------------------

def _env_call(tree: _Tree, call_offset: int) -> tuple[cst.Call, cst.Arg | None] | None:
    """The call written at ``call_offset`` and its ``env=`` argument."""
    call = next((node for node in tree.nodes(cst.Call) if tree.start(node) == call_offset), None)
    if not isinstance(call, cst.Call):
        return None
    return call, next((arg for arg in call.args if arg.keyword is not None and arg.keyword.value == "env"), None)


def set_env(source: SourceFile, call_offset: int, name: str, value: str) -> list[Edit] | None:
    """Give the process a call starts ``name=value``: a key of the call's ``env={...}`` dict, or,
    without ``env=``, ``os.environ["name"] = "value"`` just above the statement holding the call
    (``import os`` with it when the module has no import block to put it in: :func:`import_os`)."""
    tree = _tree(source)
    found = _env_call(tree, call_offset) if tree is not None else None
    if tree is None or found is None:
        return None
    call, env = found
    if env is not None:
        return _dict_add(tree, env.value, name, value) if isinstance(env.value, cst.Dict) else None
    return _environ_above(tree, call, name, value)


def import_os(source: SourceFile, call_offset: int) -> list[Edit] | None:
    """``import os`` in the module's first import block, for :func:`set_env`'s ``os.environ`` line
    (no edit when the call has ``env=``, the module imports ``os`` already, or has no such block)."""
    tree = _tree(source)
    found = _env_call(tree, call_offset) if tree is not None else None
    if tree is None or found is None:
        return None
    call, env = found
    statement = _statement_holding(tree, call)
    if env is not None or statement is None:
        return []
    line = tree.ranges[statement].start.line
    if _imports_os(tree, line):
        return []
    header = _import_os_line(tree, line)
    if header is None or header == line:
        return []
    return [insert_line(source, source.line_start(header), "import os")]


def _dict_add(tree: _Tree, node: cst.Dict, name: str, value: str) -> list[Edit] | None:
    source = tree.source
    text = source.text
    close = tree.end(node) - 1
    elements = node.elements
    if not elements:
        opening = tree.start(node)
        if text[opening + 1:close].strip():
            return None
        return [Edit(source.span(opening + 1, close), f'"{name}": "{value}"')]
    keys = [element.key for element in elements
            if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString)]
    quote = keys[-1].quote if keys and len(keys[-1].quote) == 1 else '"'
    entry = f"{quote}{name}{quote}: {quote}{value}{quote}"
    last = elements[-1]
    start = tree.start(last.key) if isinstance(last, cst.DictElement) else tree.start(last.value) - 2
    last_end = tree.end(last.value)
    trailing_comma = isinstance(last.comma, cst.Comma)
    if "\n" in text[last_end:close] and tree.ranges[last.value].end.line != tree.ranges[node].end.line:
        # one entry per line: a new line like the last one
        indent = _indent_before(text, start)
        if indent is None:
            return None
        if trailing_comma:
            assert isinstance(last.comma, cst.Comma)
            comma_end = tree.end(last.comma)
            at = line_end(text, comma_end)
            if at >= close:
                return None
            return [Edit(source.span(at), f"{source.newline}{indent}{entry},")]
        at = line_end(text, last_end)
        if at >= close:
            return None
        return [Edit(source.span(last_end), ","), Edit(source.span(at), f"{source.newline}{indent}{entry}")]
    if trailing_comma:
        assert isinstance(last.comma, cst.Comma)
        return [Edit(source.span(tree.end(last.comma)), f" {entry},")]
    return [Edit(source.span(last_end), f", {entry}")]


def _statement_holding(tree: _Tree, call: cst.Call) -> cst.CSTNode | None:
    """The innermost simple statement line (or compound statement header) holding the call."""
    call_start, call_end = tree.start(call), tree.end(call)
    best: cst.CSTNode | None = None
    for node in tree.ranges:
        if not isinstance(node, cst.SimpleStatementLine | cst.BaseCompoundStatement):
            continue
        if tree.start(node) <= call_start and call_end <= tree.end(node) \
                and (best is None or tree.start(node) >= tree.start(best)):
            best = node
    return best


def _environ_above(tree: _Tree, call: cst.Call, name: str, value: str) -> list[Edit] | None:
    source = tree.source
    text = source.text
    statement = _statement_holding(tree, call)
    if statement is None:
        return None
    at = tree.start(statement)
    indent = _indent_before(text, at)
    if indent is None:
        return None
    lines = [f'{indent}os.environ["{name}"] = "{value}"']
    statement_line = tree.ranges[statement].start.line
    if not _imports_os(tree, statement_line):
        header = _import_os_line(tree, statement_line)
        if header is None or header == statement_line:
            lines.insert(0, f"{indent}import os")
    return [insert_line(source, line_start(text, at), source.newline.join(lines))]


def _imports_os(tree: _Tree, before_line: int) -> bool:
    for node in tree.nodes(cst.Import):
        assert isinstance(node, cst.Import)
        if tree.ranges[node].start.line < before_line and any(
                isinstance(alias.name, cst.Name) and alias.name.value == "os" and alias.asname is None
                for alias in node.names):
            return True
    return False


def _import_os_line(tree: _Tree, before_line: int) -> int | None:
    """The line where ``import os`` goes among the module's first block of imports (the standard
    library's, by convention), in name order among its plain ``import x`` lines, as isort/ruff keep
    it; ``None`` when the module has no such block before ``before_line`` (then it goes just above
    the statement). An import placed by the statement, at module level, would be ruff's E402."""
    block: list[tuple[cst.SimpleStatementLine, cst.Import | cst.ImportFrom]] = []
    for line in tree.module.body:
        small = line.body[0] if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else None
        if not block and isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString | cst.ConcatenatedString):
            continue  # the module docstring
        if isinstance(small, cst.ImportFrom) and isinstance(small.module, cst.Name) and small.module.value == "__future__":
            continue
        if not isinstance(line, cst.SimpleStatementLine) or not isinstance(small, cst.Import | cst.ImportFrom):
            break
        if block and (line.leading_lines or tree.ranges[line].start.line != tree.ranges[block[-1][0]].end.line + 1):
            break  # a blank line or a comment: the next section
        block.append((line, small))
    if not block or tree.ranges[block[-1][0]].end.line >= before_line:
        return None
    plain = [(line, small) for line, small in block if isinstance(small, cst.Import)]
    later = next((line for line, small in plain if isinstance(small, cst.Import)
                  and _dotted(small.names[0].name) > "os"), None)
    if later is not None:
        return tree.ranges[later].start.line
    if plain:
        return tree.ranges[plain[-1][0]].end.line + 1
    return tree.ranges[block[0][0]].start.line


def _dotted(name: cst.Attribute | cst.Name) -> str:
    if isinstance(name, cst.Name):
        return name.value
    assert isinstance(name.value, cst.Attribute | cst.Name)
    return f"{_dotted(name.value)}.{name.attr.value}"
