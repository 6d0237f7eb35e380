"""Python sources: engine API calls and the engine processes a script starts.

Read with the standard :mod:`ast`; nothing is imported or run. Two shapes of launch:

- API launches: ``vllm.LLM(...)``, ``vllm.EngineArgs(...)``/``AsyncEngineArgs(...)`` (what
  ``AsyncLLMEngine.from_engine_args`` is given) and ``sglang.Engine(...)`` — a call counts only when
  its name resolves through the module's imports to one of these classes (docs/vllm.md#python-api,
  docs/sglang.md#python-api). The launch carries ``kwargs``: plain Python values with the span of each
  keyword's value. vLLM's ``LLM(model, *, ...)`` and the ``EngineArgs`` dataclass (``model`` is its
  first field) take the model positionally; ``sglang.Engine(**kwargs)`` takes keywords only.
- Process launches: ``subprocess.run/Popen/call/check_call/check_output``, ``os.exec*``,
  ``asyncio.create_subprocess_exec/_shell`` — the argv list (or, with ``shell=True``, the command
  string, interpreted by :mod:`mtplint.extract.shell.launches`) is recognised like any command line.

Values are resolved the way a reader would: literals, module-level constants, simple assignments
(also inside functions, in statement order), ``+`` of lists and strings, ``*``/``**`` splats of known
values, f-strings, ``json.dumps`` of a known value, ``str()``/``int()``/``float()`` of known values,
``os.environ.get("K", "default")`` (the default, unless the script set ``K``), ``shlex.split`` of a
known string. ``sys.executable`` is taken as ``python`` (it is the interpreter; its path does not
matter to the engine). A name assigned differently on different branches is unresolved; a list
that only grows on some branch keeps its common prefix followed by a splat. Everything else
(function parameters, other calls, attributes of objects) is unresolved, never guessed.

The process environment is ``os.environ`` as the script leaves it before the call
(``os.environ["K"] = "v"``, ``os.environ.update(...)``, ``setdefault``); an explicit ``env=``
replaces it, except for the ``os.environ`` part of ``{**os.environ, ...}`` / ``os.environ.copy()``.
Function bodies see the module as it is after its last statement (they run when called).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterator

from mtplint import pysyntax
from mtplint.extract import ExtractContext, Malformed, build_launch, env_entries
from mtplint.extract.launch import KwArg, Launch, recognise
from mtplint.extract.yamlpos import align
from mtplint.pathtext import parent_dir
from mtplint.records import Record
from mtplint.source import EnvEntry, MappedText, SourceFile, Span, Token
from mtplint.textpos import characters_in

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: fully qualified class -> (engine, entry shown); aliases are where the same class is importable
API_CLASSES: dict[str, tuple[str, str]] = {
    "vllm.LLM": ("vllm", "vllm.LLM"),
    "vllm.entrypoints.llm.LLM": ("vllm", "vllm.LLM"),
    "vllm.EngineArgs": ("vllm", "vllm.EngineArgs"),
    "vllm.engine.arg_utils.EngineArgs": ("vllm", "vllm.EngineArgs"),
    "vllm.AsyncEngineArgs": ("vllm", "vllm.AsyncEngineArgs"),
    "vllm.engine.arg_utils.AsyncEngineArgs": ("vllm", "vllm.AsyncEngineArgs"),
    "sglang.Engine": ("sglang", "sglang.Engine"),
    "sglang.srt.entrypoints.engine.Engine": ("sglang", "sglang.Engine"),
}
#: entries whose first positional parameter is the model
POSITIONAL_MODEL = ("vllm.LLM", "vllm.EngineArgs", "vllm.AsyncEngineArgs")

SUBPROCESS = {"subprocess.run", "subprocess.Popen", "subprocess.call", "subprocess.check_call",
              "subprocess.check_output"}
#: os.exec* with an argv list: name -> index of the env argument (None: inherits os.environ)
EXEC_V = {"os.execv": None, "os.execvp": None, "os.execve": 2, "os.execvpe": 2}
#: os.exec* with argv as varargs: name -> whether the last argument is the environment
EXEC_L = {"os.execl": False, "os.execlp": False, "os.execle": True, "os.execlpe": True}
ASYNC_EXEC = "asyncio.create_subprocess_exec"
ASYNC_SHELL = "asyncio.create_subprocess_shell"

ENVIRON = "<os.environ>"  # scope key of the process environment as the script changed it
MAX_DEPTH = 60


class Value(Record):
    """What an expression evaluates to, as far as it can be known statically.

    ``data`` is plain Python for scalars, ``list[Value]`` for lists/tuples and ``dict[key, Value]``
    for dicts. An unresolved value has ``unresolved`` set and ``data`` = its source text.
    """

    __slots__ = ("data", "span", "unresolved", "splat", "text", "qualname", "environ", "kind")
    data: Any
    span: Span | None
    unresolved: tuple[str, ...]
    splat: bool
    text: MappedText | None
    qualname: str | None
    #: a dict that also holds the inherited process environment (os.environ, a copy, {**os.environ})
    environ: bool
    kind: str  # "list" | "dict" for containers

    def __init__(
        self,
        data: Any,
        span: Span | None,
        unresolved: tuple[str, ...] = (),
        splat: bool = False,
        text: MappedText | None = None,
        qualname: str | None = None,
        environ: bool = False,
        kind: str = "",
    ) -> None:
        self.data = data
        self.span = span
        self.unresolved = unresolved
        self.splat = splat
        self.text = text
        self.qualname = qualname
        self.environ = environ
        self.kind = kind

    @property
    def known(self) -> bool:
        return not self.unresolved and not self.splat and self.qualname is None

    def with_span(self, span: Span | None) -> Value:
        return self._copy(self.data, span, self.unresolved)

    def with_data(self, data: Any) -> Value:
        return self._copy(data, self.span, self.unresolved)

    def with_unresolved(self, unresolved: tuple[str, ...]) -> Value:
        return self._copy(self.data, self.span, unresolved)

    def _copy(self, data: Any, span: Span | None, unresolved: tuple[str, ...]) -> Value:
        return Value(data, span, unresolved, self.splat, self.text, self.qualname, self.environ, self.kind)


def unknown(text: str, span: Span | None, splat: bool = False) -> Value:
    return Value(text, span, (text,), splat=splat)


def plain(value: Value) -> tuple[Any, tuple[str, ...]]:
    """The plain Python data of a value and everything in it that is unresolved (each named by its
    source text, which also stands in for it in the data)."""
    missing: list[str] = list(value.unresolved)
    if value.kind == "list":
        items = []
        for item in value.data:
            data, names = plain(item)
            items.append(data)
            missing.extend(names)
            if item.splat and not item.unresolved:
                missing.append(str(item.data))
        return items, tuple(dict.fromkeys(missing))
    if value.kind == "dict":
        result: dict[Any, Any] = {}
        for key, item in value.data.items():
            data, names = plain(item)
            result[key] = data
            missing.extend(names)
        return result, tuple(dict.fromkeys(missing))
    return value.data, tuple(dict.fromkeys(missing))


def _same(left: Value, right: Value) -> bool:
    if left is right:
        return True
    if left.qualname != right.qualname or left.environ != right.environ:
        return False
    return plain(left) == plain(right) and left.splat == right.splat


def merge_values(name: str, values: list[Value | None], span: Span | None) -> Value | None:
    """One value for a name after branches: kept when every branch agrees, else unresolved (a list
    that differs only at its end keeps the common prefix and ends in a splat)."""
    present = [value for value in values if value is not None]
    if not present:
        return None
    imported = next((value for value in present if value.qualname is not None), None)
    if imported is not None:
        return imported  # `try: from vllm import LLM / except ImportError: LLM = None`
    if len(present) == len(values) and all(_same(present[0], other) for other in present[1:]):
        return present[0]
    if len(present) == len(values) and all(value.kind == "dict" for value in present):
        keys = list(dict.fromkeys(key for value in present for key in value.data))
        merged: dict[Any, Value] = {}
        for key in keys:
            item = merge_values(f"{name}[{key!r}]", [value.data.get(key) for value in present], span)
            if item is not None:
                merged[key] = item
        return Value(merged, present[0].span, kind="dict", environ=any(value.environ for value in present))
    lists = [value for value in values if value is not None and value.kind == "list"]
    if len(lists) == len(values):
        prefix: list[Value] = []
        for items in zip(*(value.data for value in lists), strict=False):
            if not all(_same(items[0], other) for other in items[1:]):
                break
            prefix.append(items[0])
        rest = unknown(f"{name} (changed conditionally)", span, splat=True)
        return Value([*prefix, rest], lists[0].span, kind="list")
    return unknown(name, span)


def merge_scopes(scopes: list[dict[str, Value]], span: Span | None) -> dict[str, Value]:
    result: dict[str, Value] = {}
    for name in dict.fromkeys(key for scope in scopes for key in scope):
        values = [scope.get(name) for scope in scopes]
        first = values[0]
        if first is not None and values.count(first) == len(values):
            # most names hold the same value on every branch (no branch assigned them): the value
            # merge_values keeps for equal values, without comparing them as it does
            result[name] = first
            continue
        merged = merge_values(name, values, span)
        if merged is not None:
            result[name] = merged
    return result


# --- positions ----------------------------------------------------------------------------------

class Positions:
    """ast positions (1-based line, UTF-8 byte column) -> character offsets in the file."""

    def __init__(self, source: SourceFile) -> None:
        self.source = source
        #: line -> (its first character's offset, its UTF-8 bytes)
        self._lines: dict[int, tuple[int, bytes]] = {}
        # a value's span is asked for again by each reader of the node (its statement, its value,
        # the text of an unknown): one Span per written range
        self._spans: dict[tuple[int, int, int, int | None], Span] = {}

    def offset(self, line: int, byte_column: int) -> int:
        known = self._lines.get(line)
        if known is None:
            text = self.source.text
            start = self.source.line_start(line)
            end = text.find("\n", start)
            known = self._lines[line] = (start, text[start:end if end >= 0 else len(text)].encode("utf-8"))
        start, encoded = known
        return start + characters_in(encoded, byte_column)

    def span(self, node: ast.AST) -> Span:
        line: int = node.lineno  # type: ignore[attr-defined]
        column: int = node.col_offset  # type: ignore[attr-defined]
        end_line: int = getattr(node, "end_lineno", None) or line
        end_column: int | None = getattr(node, "end_col_offset", None)
        key = (line, column, end_line, end_column)
        span = self._spans.get(key)
        if span is None:
            start = self.offset(line, column)
            end = self.offset(end_line, end_column) if end_column is not None else start
            span = self._spans[key] = self.source.span(start, end)
        return span

    def string_text(self, node: ast.Constant) -> MappedText:
        """A string literal's value with each character mapped to where it is written."""
        span = self.span(node)
        raw = self.source.text[span.start:span.end]
        index = 0
        while index < len(raw) and raw[index] in "rRbBuUfF":
            index += 1
        quote = raw[index:index + 3] if raw[index:index + 3] in ('"""', "'''") else raw[index:index + 1]
        return align(self.source, str(node.value), span.start + index + len(quote), span.end)


# --- evaluation ---------------------------------------------------------------------------------

def _qualname(node: ast.expr, scope: dict[str, Value]) -> str | None:
    if isinstance(node, ast.Name):
        bound = scope.get(node.id)
        return bound.qualname if bound is not None else None
    if isinstance(node, ast.Attribute):
        base = _qualname(node.value, scope)
        return f"{base}.{node.attr}" if base else None
    return None


_CONVERSIONS: dict[str, type] = {"str": str, "int": int, "float": float, "bool": bool}


class Evaluator:
    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.positions = Positions(source)

    def text_of(self, node: ast.AST) -> str:
        span = self.positions.span(node)
        return self.source.text[span.start:span.end]

    def unknown(self, node: ast.AST, splat: bool = False) -> Value:
        span = self.positions.span(node)
        return unknown(self.source.text[span.start:span.end], span, splat)

    def evaluate(self, node: ast.expr, scope: dict[str, Value], depth: int = 0) -> Value:
        if depth > MAX_DEPTH:
            return self.unknown(node)
        span = self.positions.span(node)
        if isinstance(node, ast.Constant):
            text = self.positions.string_text(node) if isinstance(node.value, str) else None
            return Value(node.value, span, text=text)
        if isinstance(node, ast.Name):
            bound = scope.get(node.id)
            if bound is None:
                return self.unknown(node)
            return bound.with_span(bound.span or span) if bound.qualname is None else bound
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items: list[Value] = []
            for element in node.elts:
                if isinstance(element, ast.Starred):
                    inner = self.evaluate(element.value, scope, depth + 1)
                    if inner.kind == "list" and inner.known:
                        items.extend(inner.data)
                    else:
                        items.append(self.unknown(element, splat=True))
                else:
                    items.append(self.evaluate(element, scope, depth + 1))
            return Value(items, span, kind="list")
        if isinstance(node, ast.Dict):
            return self._dict(node, scope, depth, span)
        if isinstance(node, ast.JoinedStr):
            return self._fstring(node, scope, depth, span)
        if isinstance(node, ast.BinOp):
            return self._binop(node, scope, depth, span)
        if isinstance(node, ast.UnaryOp):
            operand = self.evaluate(node.operand, scope, depth + 1)
            if operand.known and isinstance(operand.data, (int, float)) and not isinstance(operand.data, bool):
                if isinstance(node.op, ast.USub):
                    return Value(-operand.data, span)
                if isinstance(node.op, ast.UAdd):
                    return Value(+operand.data, span)
            if operand.known and isinstance(node.op, ast.Not) and operand.kind == "":
                return Value(not operand.data, span)
            return self.unknown(node)
        if isinstance(node, ast.Attribute):
            qualname = _qualname(node, scope)
            if qualname == "os.environ":
                environ = scope.get(ENVIRON)
                return Value(dict(environ.data) if environ else {}, span, kind="dict", environ=True)
            if qualname == "sys.executable":
                return Value("python", span)
            if qualname is not None:
                return Value(qualname, span, qualname=qualname)
            return self.unknown(node)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, scope, depth, span)
        if isinstance(node, ast.IfExp):
            body = self.evaluate(node.body, scope, depth + 1)
            orelse = self.evaluate(node.orelse, scope, depth + 1)
            return body if _same(body, orelse) else self.unknown(node)
        if isinstance(node, ast.Call):
            return self._call(node, scope, depth, span)
        return self.unknown(node)

    def _dict(self, node: ast.Dict, scope: dict[str, Value], depth: int, span: Span) -> Value:
        data: dict[Any, Value] = {}
        environ = False
        missing: list[str] = []
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            value = self.evaluate(value_node, scope, depth + 1)
            if key_node is None:  # {**other}
                if value.kind == "dict" and not value.unresolved:
                    environ = environ or value.environ
                    data.update(value.data)
                else:
                    missing.append(f"**{self.text_of(value_node)}")
                continue
            key = self.evaluate(key_node, scope, depth + 1)
            if not key.known or key.kind:
                missing.append(self.text_of(key_node))
                continue
            data[key.data] = value
        return Value(data, span, tuple(missing), kind="dict", environ=environ)

    def _fstring(self, node: ast.JoinedStr, scope: dict[str, Value], depth: int, span: Span) -> Value:
        pieces: list[str] = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                pieces.append(str(part.value))
                continue
            if not isinstance(part, ast.FormattedValue):
                return self.unknown(node)
            value = self.evaluate(part.value, scope, depth + 1)
            if not value.known or value.kind:
                return self.unknown(node)
            spec = ""
            if part.format_spec is not None:
                spec_value = self.evaluate(part.format_spec, scope, depth + 1)
                if not spec_value.known:
                    return self.unknown(node)
                spec = str(spec_value.data)
            converted: Any = value.data
            if part.conversion in (115, 114, 97):  # !s, !r, !a
                converted = str(value.data) if part.conversion == 115 else \
                    repr(value.data) if part.conversion == 114 else ascii(value.data)
            try:
                pieces.append(format(converted, spec))
            except (ValueError, TypeError):
                return self.unknown(node)
        text = "".join(pieces)
        return Value(text, span, text=MappedText.synthetic(text, self.source, span.start))

    def _binop(self, node: ast.BinOp, scope: dict[str, Value], depth: int, span: Span) -> Value:
        left = self.evaluate(node.left, scope, depth + 1)
        right = self.evaluate(node.right, scope, depth + 1)
        if isinstance(node.op, ast.Add) and left.kind == "list" and right.kind == "list" \
                and not left.unresolved and not right.unresolved:
            return Value([*left.data, *right.data], span, kind="list")
        if not left.known or not right.known or left.kind or right.kind:
            return self.unknown(node)
        if isinstance(node.op, ast.Add) and isinstance(left.data, str) and isinstance(right.data, str):
            text = (left.text or MappedText.synthetic(left.data, self.source, span.start)) + \
                (right.text or MappedText.synthetic(right.data, self.source, span.start))
            return Value(left.data + right.data, span, text=text)
        numbers = (int, float)
        if isinstance(left.data, numbers) and isinstance(right.data, numbers):
            operations: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
                ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
                ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b}
            operation = operations.get(type(node.op))
            if operation is not None:
                try:
                    return Value(operation(left.data, right.data), span)
                except ZeroDivisionError:
                    pass
        return self.unknown(node)

    def _subscript(self, node: ast.Subscript, scope: dict[str, Value], depth: int, span: Span) -> Value:
        container = self.evaluate(node.value, scope, depth + 1)
        if isinstance(node.slice, ast.Slice):
            return self.unknown(node)
        index = self.evaluate(node.slice, scope, depth + 1)
        if not index.known or index.kind:
            return self.unknown(node)
        if container.kind == "dict" and index.data in container.data:
            return container.data[index.data]  # type: ignore[no-any-return]
        if container.kind == "list" and container.known and isinstance(index.data, int):
            items = container.data
            if -len(items) <= index.data < len(items) and not any(item.splat for item in items):
                return items[index.data]  # type: ignore[no-any-return]
        return self.unknown(node)

    def _environ_get(self, node: ast.Call, scope: dict[str, Value], depth: int) -> Value:
        if not node.args:
            return self.unknown(node)
        key = self.evaluate(node.args[0], scope, depth + 1)
        environ = scope.get(ENVIRON)
        if key.known and environ is not None and key.data in environ.data:
            return environ.data[key.data]  # type: ignore[no-any-return]
        default_node = node.args[1] if len(node.args) > 1 else next(
            (keyword.value for keyword in node.keywords if keyword.arg == "default"), None)
        if default_node is not None:
            default = self.evaluate(default_node, scope, depth + 1)
            if default.known and default.data is not None:
                return default
        return self.unknown(node)

    def _call(self, node: ast.Call, scope: dict[str, Value], depth: int, span: Span) -> Value:
        name = _qualname(node.func, scope)
        if name in ("os.environ.get", "os.getenv"):
            return self._environ_get(node, scope, depth)
        copies_environ = isinstance(node.func, ast.Name) and node.func.id == "dict" and "dict" not in scope \
            and len(node.args) == 1 and _qualname(node.args[0], scope) == "os.environ"
        if name == "os.environ.copy" or copies_environ:
            environ = scope.get(ENVIRON)
            data = dict(environ.data) if environ else {}
            data.update({keyword.arg: self.evaluate(keyword.value, scope, depth + 1)
                         for keyword in node.keywords if keyword.arg})
            return Value(data, span, kind="dict", environ=True)
        arguments = [self.evaluate(argument, scope, depth + 1) for argument in node.args if not isinstance(argument, ast.Starred)]
        if any(isinstance(argument, ast.Starred) for argument in node.args):
            return self.unknown(node)
        if name == "json.dumps" and len(arguments) == 1:
            data, missing = plain(arguments[0])
            options: dict[str, Any] = {}
            for keyword in node.keywords:
                option = self.evaluate(keyword.value, scope, depth + 1)
                if keyword.arg not in ("indent", "separators", "sort_keys", "ensure_ascii") or not option.known:
                    return self.unknown(node)
                options[keyword.arg] = plain(option)[0]
            if missing:
                return self.unknown(node)
            try:
                text = json.dumps(data, **options)
            except (TypeError, ValueError):
                return self.unknown(node)
            return Value(text, span, text=MappedText.synthetic(text, self.source, span.start))
        if isinstance(node.func, ast.Name) and node.func.id in _CONVERSIONS and node.func.id not in scope \
                and len(arguments) == 1 and not node.keywords and arguments[0].known and not arguments[0].kind:
            try:
                return Value(_CONVERSIONS[node.func.id](arguments[0].data), span)
            except (TypeError, ValueError):
                return self.unknown(node)
        if isinstance(node.func, ast.Name) and node.func.id == "dict" and "dict" not in scope and not node.args:
            data = {keyword.arg: self.evaluate(keyword.value, scope, depth + 1) for keyword in node.keywords if keyword.arg}
            splats = tuple(f"**{self.text_of(keyword.value)}" for keyword in node.keywords if keyword.arg is None)
            return Value(data, span, splats, kind="dict")
        if isinstance(node.func, ast.Name) and node.func.id in ("list", "tuple") and node.func.id not in scope \
                and len(arguments) == 1 and arguments[0].kind == "list":
            return arguments[0].with_span(span)
        if name == "shlex.split" and len(arguments) == 1 and arguments[0].known and isinstance(arguments[0].data, str):
            return self._shlex(arguments[0], node, span)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "join" and len(arguments) == 1:
            separator = self.evaluate(node.func.value, scope, depth + 1)
            items = arguments[0]
            if separator.known and isinstance(separator.data, str) and items.kind == "list" and items.known \
                    and all(item.known and isinstance(item.data, str) for item in items.data):
                text = separator.data.join(item.data for item in items.data)
                return Value(text, span, text=MappedText.synthetic(text, self.source, span.start))
        return self.unknown(node)

    def _shlex(self, value: Value, node: ast.Call, span: Span) -> Value:
        from mtplint.extract.shell.expansion import split_words  # noqa: PLC0415 - only for shlex.split

        text = value.text or MappedText.synthetic(str(value.data), self.source, span.start)
        words = [Value(word.text, word.span() or span, text=word) for word in split_words(text)]
        return Value(words, span, kind="list")


# --- the statement walk -------------------------------------------------------------------------

class CallSite(Record):
    __slots__ = ("node", "scope", "function")
    node: ast.Call
    scope: dict[str, Value]
    function: str | None

    def __init__(self, node: ast.Call, scope: dict[str, Value], function: str | None) -> None:
        self.node = node
        self.scope = scope
        self.function = function


class Walker(Record):
    """Runs through statements in order, keeping what each name holds, and collects every call
    with the scope it sees."""

    __slots__ = ("evaluator", "calls", "deferred")
    evaluator: Evaluator
    calls: list[CallSite]
    deferred: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]

    def __init__(
        self,
        evaluator: Evaluator,
        calls: list[CallSite] | None = None,
        deferred: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]] | None = None,
    ) -> None:
        self.evaluator = evaluator
        self.calls = calls if calls is not None else []
        self.deferred = deferred if deferred is not None else []

    def body(self, statements: list[ast.stmt], scope: dict[str, Value], function: str | None) -> dict[str, Value]:
        for statement in statements:
            scope = self.statement(statement, scope, function)
        return scope

    def _collect(self, nodes: list[ast.AST], scope: dict[str, Value], function: str | None) -> None:
        for root in nodes:
            for call in _calls(root):
                self.calls.append(CallSite(call, scope, function))

    def _bind_target(self, target: ast.expr, value: Value, scope: dict[str, Value]) -> dict[str, Value]:
        evaluator = self.evaluator
        if isinstance(target, ast.Name):
            return {**scope, target.id: value}
        if isinstance(target, (ast.Tuple, ast.List)):
            items = value.data if value.kind == "list" and value.known and len(value.data) == len(target.elts) else None
            for index, element in enumerate(target.elts):
                element_value = items[index] if items is not None else evaluator.unknown(element)
                scope = self._bind_target(element.value if isinstance(element, ast.Starred) else element,
                                          element_value, scope)
            return scope
        if isinstance(target, ast.Subscript):
            key = evaluator.evaluate(target.slice, scope) if not isinstance(target.slice, ast.Slice) else None
            owner = _qualname(target.value, scope)
            holder = ENVIRON if owner == "os.environ" else target.value.id if isinstance(target.value, ast.Name) else None
            if holder is None:
                return scope
            current = scope.get(holder) or (Value({}, None, kind="dict", environ=True) if holder == ENVIRON else None)
            if current is None or current.kind != "dict":
                return scope
            if key is None or not key.known or key.kind:
                return {**scope, holder: current.with_unresolved((*current.unresolved, evaluator.text_of(target)))}
            return {**scope, holder: current.with_data({**current.data, key.data: value})}
        return scope

    def _unknown_names(self, target: ast.AST, scope: dict[str, Value]) -> dict[str, Value]:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                scope = {**scope, node.id: self.evaluator.unknown(node)}
        return scope

    def _mutation(self, call: ast.Call, scope: dict[str, Value]) -> dict[str, Value]:
        """``x.append/extend/insert/update/setdefault/pop`` and ``os.environ.update/...`` on known values."""
        func = call.func
        if not isinstance(func, ast.Attribute):
            return scope
        evaluator = self.evaluator
        owner = _qualname(func.value, scope)
        holder = ENVIRON if owner == "os.environ" else func.value.id if isinstance(func.value, ast.Name) else None
        if holder is None or (holder not in scope and holder != ENVIRON):
            return scope
        current = scope.get(holder) or Value({}, None, kind="dict", environ=True)
        arguments = [evaluator.evaluate(argument, scope) for argument in call.args]
        method = func.attr
        if current.kind == "list" and method in ("append", "extend", "insert"):
            if method == "append" and len(arguments) == 1:
                return {**scope, holder: current.with_data([*current.data, arguments[0]])}
            if method == "extend" and len(arguments) == 1:
                added = arguments[0]
                items = added.data if added.kind == "list" and not added.unresolved else [evaluator.unknown(call.args[0], True)]
                return {**scope, holder: current.with_data([*current.data, *items])}
            return {**scope, holder: evaluator.unknown(func.value)}
        if current.kind == "dict" and method in ("update", "setdefault", "pop"):
            data = dict(current.data)
            if method == "update" and len(arguments) == 1 and arguments[0].kind == "dict" and not arguments[0].unresolved:
                data.update(arguments[0].data)
            elif method == "update" and not call.args:
                data.update({keyword.arg: evaluator.evaluate(keyword.value, scope) for keyword in call.keywords if keyword.arg})
            elif method in ("setdefault", "pop") and arguments and arguments[0].known and not arguments[0].kind:
                if method == "pop":
                    data.pop(arguments[0].data, None)
                elif arguments[0].data not in data and len(arguments) > 1:
                    data[arguments[0].data] = arguments[1]
            else:
                return {**scope, holder: current.with_unresolved((*current.unresolved, evaluator.text_of(call)))}
            return {**scope, holder: current.with_data(data)}
        return scope

    def statement(self, statement: ast.stmt, scope: dict[str, Value], function: str | None) -> dict[str, Value]:
        evaluator = self.evaluator
        if isinstance(statement, ast.Assign):
            self._collect([statement.value], scope, function)
            value = evaluator.evaluate(statement.value, scope)
            for target in statement.targets:
                scope = self._bind_target(target, value, scope)
            return scope
        if isinstance(statement, ast.AnnAssign):
            if statement.value is None:
                return scope
            self._collect([statement.value], scope, function)
            return self._bind_target(statement.target, evaluator.evaluate(statement.value, scope), scope)
        if isinstance(statement, ast.AugAssign):
            self._collect([statement.value], scope, function)
            combined = ast.BinOp(left=statement.target, op=statement.op, right=statement.value)
            ast.copy_location(combined, statement)
            return self._bind_target(statement.target, evaluator.evaluate(combined, scope), scope)
        if isinstance(statement, ast.Expr):
            self._collect([statement.value], scope, function)
            if isinstance(statement.value, ast.Call):
                return self._mutation(statement.value, scope)
            return scope
        # only the statements below bind names to it or merge scopes at it (assignments take the value's)
        span = evaluator.positions.span(statement)
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.asname:
                    scope = {**scope, alias.asname: Value(alias.name, span, qualname=alias.name)}
                else:
                    top = alias.name.split(".", 1)[0]
                    scope = {**scope, top: Value(top, span, qualname=top)}
            return scope
        if isinstance(statement, ast.ImportFrom):
            if statement.level == 0 and statement.module:
                for alias in statement.names:
                    qualified = f"{statement.module}.{alias.name}"
                    scope = {**scope, alias.asname or alias.name: Value(qualified, span, qualname=qualified)}
            else:
                for alias in statement.names:
                    scope = {**scope, alias.asname or alias.name: unknown(alias.name, span)}
            return scope
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.deferred.append((statement, statement.name if function is None else f"{function}.{statement.name}"))
            self._collect([*statement.decorator_list], scope, function)
            return {**scope, statement.name: unknown(statement.name, span)}
        if isinstance(statement, ast.ClassDef):
            for item in statement.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.deferred.append((item, f"{statement.name}.{item.name}"))
            others = [item for item in statement.body if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]
            self.body(others, dict(scope), statement.name)
            return {**scope, statement.name: unknown(statement.name, span)}
        if isinstance(statement, ast.If):
            self._collect([statement.test], scope, function)
            if _is_main_guard(statement.test):
                return self.body(statement.body, scope, function)
            branches = [self.body(statement.body, dict(scope), function), self.body(statement.orelse, dict(scope), function)]
            return merge_scopes(branches, span)
        if isinstance(statement, (ast.For, ast.AsyncFor, ast.While)):
            header: list[ast.AST] = [statement.iter] if not isinstance(statement, ast.While) else [statement.test]
            self._collect(header, scope, function)
            inner = self._unknown_names(statement.target, dict(scope)) if not isinstance(statement, ast.While) else dict(scope)
            after = self.body(statement.body, inner, function)
            after = self.body(statement.orelse, after, function)
            return merge_scopes([scope, after], span)
        if isinstance(statement, (ast.With, ast.AsyncWith)):
            self._collect([item.context_expr for item in statement.items], scope, function)
            for with_item in statement.items:
                if with_item.optional_vars is not None:
                    scope = self._unknown_names(with_item.optional_vars, scope)
            return self.body(statement.body, scope, function)
        if isinstance(statement, ast.Try) or type(statement).__name__ == "TryStar":
            handlers_node: list[ast.ExceptHandler] = getattr(statement, "handlers", [])
            body = self.body(getattr(statement, "body", []), dict(scope), function)
            body = self.body(getattr(statement, "orelse", []), body, function)
            outcomes = [body]
            for handler in handlers_node:
                handler_scope = dict(scope)
                if handler.name:
                    handler_scope[handler.name] = unknown(handler.name, span)
                outcomes.append(self.body(handler.body, handler_scope, function))
            return self.body(getattr(statement, "finalbody", []), merge_scopes(outcomes, span), function)
        if isinstance(statement, ast.Match):
            self._collect([statement.subject], scope, function)
            outcomes = [self.body(case.body, self._unknown_names(case.pattern, dict(scope)), function) for case in statement.cases]
            return merge_scopes([scope, *outcomes], span)
        if isinstance(statement, ast.Delete):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    scope = {key: value for key, value in scope.items() if key != target.id}
            return scope
        self._collect([statement], scope, function)
        return scope


def _is_main_guard(test: ast.expr) -> bool:
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


#: children a walk for calls does not enter: nested scopes (lambdas, comprehensions, functions), whose
#: names do not mean what the enclosing scope says, and nodes that hold no call (constants, names,
#: the load/store context of every name, operators). By class: :func:`ast.parse` makes nodes of these
#: exact classes, and a set lookup costs less than ``isinstance`` against a dozen of them.
_NOT_WALKED = frozenset((ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ListComp, ast.SetComp,
                         ast.DictComp, ast.GeneratorExp, ast.Constant, ast.Name, *ast.expr_context.__subclasses__(),
                         *ast.operator.__subclasses__(), *ast.unaryop.__subclasses__(),
                         *ast.boolop.__subclasses__(), *ast.cmpop.__subclasses__()))


def _calls(root: ast.AST) -> Iterator[ast.Call]:
    """The calls of an expression (or simple statement), not entering nested scopes below it.

    The children of each node are those :func:`ast.iter_child_nodes` gives, in its order, read in
    one loop: its two nested generators cost more than the walk itself (and a generator over a
    list field, most of which hold an item or two, more than the loop over it)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call):
            yield node
        for name in node._fields:
            field = getattr(node, name, None)
            if isinstance(field, list):
                for item in field:
                    if isinstance(item, ast.AST) and type(item) not in _NOT_WALKED:
                        stack.append(item)
            elif isinstance(field, ast.AST) and type(field) not in _NOT_WALKED:
                stack.append(field)


# --- launches -----------------------------------------------------------------------------------

class PythonExtractor:
    def __init__(self, source: SourceFile, ctx: ExtractContext) -> None:
        self.source = source
        self.ctx = ctx
        self.evaluator = Evaluator(source)
        self.base_dir = parent_dir(source.path)

    def run(self, tree: ast.Module) -> list[Launch]:
        walker = Walker(self.evaluator)
        module_scope = walker.body(tree.body, {}, None)
        index = 0
        while index < len(walker.deferred):  # functions run after the module body, with its final names
            function, name = walker.deferred[index]
            index += 1
            scope = dict(module_scope)
            arguments = function.args
            for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                             *filter(None, (arguments.vararg, arguments.kwarg))]:
                scope[argument.arg] = unknown(argument.arg, self.evaluator.positions.span(argument))
            walker.body(function.body, scope, name)
        launches: list[Launch] = []
        for site in walker.calls:
            launches.extend(self.launches_at(site))
        launches.sort(key=lambda launch: launch.span.start if launch.span else 0)
        return launches

    def _context(self, what: str, site: CallSite) -> str:
        return f"{what} call" + (f" in {site.function}()" if site.function else "")

    def _environment(self, scope: dict[str, Value]) -> dict[str, EnvEntry]:
        environ = scope.get(ENVIRON)
        return self._env_dict(environ) if environ is not None else {}

    def _env_dict(self, value: Value) -> dict[str, EnvEntry]:
        pairs: list[tuple[str, Token]] = []
        for key, item in value.data.items():
            if not isinstance(key, str):
                continue
            data, missing = plain(item)
            pairs.append((key, Token(str(data) if data is not None else "", item.span, missing)))
        return env_entries(pairs)

    def launches_at(self, site: CallSite) -> list[Launch]:
        name = _qualname(site.node.func, site.scope)
        if name is None:
            return []
        if name in API_CLASSES:
            return [self.api_launch(site, *API_CLASSES[name])]
        if name in SUBPROCESS or name in EXEC_V or name in EXEC_L or name in (ASYNC_EXEC, ASYNC_SHELL):
            return self.process_launches(site, name)
        return []

    # -- API calls ------------------------------------------------------------------------------
    def api_launch(self, site: CallSite, engine: str, entry: str) -> Launch:
        evaluator = self.evaluator
        call, scope = site.node, site.scope
        kwargs: dict[str, KwArg] = {}
        notes: list[str] = []
        for position, argument in enumerate(call.args):
            if isinstance(argument, ast.Starred):
                notes.append(f"`{evaluator.text_of(argument)}` may pass positional arguments: not followed")
            elif position == 0 and entry in POSITIONAL_MODEL:
                kwargs["model"] = self._kwarg("model", evaluator.evaluate(argument, scope), argument)
            else:
                notes.append(f"positional argument `{evaluator.text_of(argument)}` is not read ({entry} takes keywords)")
        for keyword in call.keywords:
            value = evaluator.evaluate(keyword.value, scope)
            if keyword.arg is not None:
                kwargs[keyword.arg] = self._kwarg(keyword.arg, value, keyword.value)
                continue
            if value.kind == "dict" and not value.unresolved and all(isinstance(key, str) for key in value.data):
                for key, item in value.data.items():
                    kwargs[key] = self._kwarg(key, item, keyword.value, span=evaluator.positions.span(keyword.value))
                continue
            splat = f"**{evaluator.text_of(keyword.value)}"
            # a key starting with ** marks keyword arguments we cannot see: the call is open-ended
            kwargs[splat] = KwArg(splat, splat, evaluator.positions.span(keyword.value), (splat,))
            notes.append(f"`{splat}` may pass any keyword arguments")
        launch = Launch(engine=engine, entry=entry, source=self.source, span=evaluator.positions.span(call.func),
                        program=[], args=[], env=self._environment(scope), kwargs=kwargs, base_dir=self.base_dir,
                        context=self._context(entry, site))
        launch.notes.extend(notes)
        return launch

    def _kwarg(self, name: str, value: Value, node: ast.expr, span: Span | None = None) -> KwArg:
        data, missing = plain(value)
        # where the value is written: the literal itself, also when the call names a constant
        return KwArg(name, data, span or value.span or self.evaluator.positions.span(node), missing)

    # -- processes ------------------------------------------------------------------------------
    def process_launches(self, site: CallSite, name: str) -> list[Launch]:
        evaluator = self.evaluator
        call, scope = site.node, site.scope
        keywords = {keyword.arg: keyword.value for keyword in call.keywords if keyword.arg}
        env_node: ast.expr | None = keywords.get("env")
        shell = False
        argv_value: Value | None = None
        if name in SUBPROCESS:
            args_node = call.args[0] if call.args else keywords.get("args")
            if args_node is None:
                return []
            argv_value = evaluator.evaluate(args_node, scope)
            shell_node = keywords.get("shell")
            shell_value = evaluator.evaluate(shell_node, scope) if shell_node is not None else None
            if shell_value is not None and not shell_value.known:
                return []  # shell or not decides what the string means
            shell = bool(shell_value.data) if shell_value is not None else False
        elif name == ASYNC_SHELL:
            if not call.args:
                return []
            argv_value, shell = evaluator.evaluate(call.args[0], scope), True
        elif name in EXEC_V:
            if len(call.args) < 2:
                return []
            argv_value = self._program_and_argv(call.args[0], call.args[1], scope)
            env_index = EXEC_V[name]
            if env_index is not None and len(call.args) > env_index:
                env_node = call.args[env_index]
        else:  # os.execl*, asyncio.create_subprocess_exec: the argv is the positional arguments
            positional = list(call.args)
            if name in EXEC_L and EXEC_L[name] and positional:
                env_node = positional.pop()
            if name in EXEC_L and len(positional) >= 2:
                positional = [positional[0], *positional[2:]]  # the path runs; argv[0] is only its name
            argv_value = evaluator.evaluate(ast.copy_location(ast.List(elts=positional, ctx=ast.Load()), call), scope)
        if argv_value is None or argv_value.unresolved:
            return []
        environment = self._process_env(env_node, scope)
        context = self._context(name, site)
        if shell and isinstance(argv_value.data, str):
            return self._shell_launches(argv_value, environment, context)
        if argv_value.kind == "list":
            tokens = [self._token(item) for item in argv_value.data]
        elif isinstance(argv_value.data, str):
            tokens = [self._token(argv_value)]  # POSIX: a string without shell=True names the program alone
        else:
            return []
        recognised = recognise(tokens)
        if recognised is None:
            return []
        return [build_launch(recognised, self.source, base_dir=self.base_dir, context=context, env=environment,
                             span=evaluator.positions.span(call.func))]

    def _program_and_argv(self, path: ast.expr, argv: ast.expr, scope: dict[str, Value]) -> Value:
        """``os.execv(path, argv)``: ``path`` is what runs, ``argv[0]`` only the name it is given."""
        evaluated = self.evaluator.evaluate(argv, scope)
        if evaluated.kind != "list" or evaluated.unresolved:
            return evaluated
        return Value([self.evaluator.evaluate(path, scope), *evaluated.data[1:]], evaluated.span, kind="list")

    def _token(self, item: Value) -> Token:
        data, missing = plain(item)
        if item.splat:
            return Token(str(item.data), item.span, missing or (str(item.data),), splat=True)
        if item.kind or not isinstance(data, (str, int, float)) or isinstance(data, bool):
            return Token(str(data), item.span, missing or (str(data),))
        return Token(str(data), item.span, missing)

    def _process_env(self, env_node: ast.expr | None, scope: dict[str, Value]) -> dict[str, EnvEntry]:
        inherited = self._environment(scope)
        if env_node is None:
            return inherited
        value = self.evaluator.evaluate(env_node, scope)
        if value.kind != "dict":
            return {}
        explicit = self._env_dict(value)
        return {**inherited, **explicit} if value.environ else explicit

    def _shell_launches(self, command: Value, environment: dict[str, EnvEntry], context: str) -> list[Launch]:
        from mtplint.extract.shell.launches import script_commands  # noqa: PLC0415 - the shell interpreter: only shell=True

        text = command.text or MappedText.synthetic(str(command.data), self.source, command.span.start if command.span else 0)
        launches: list[Launch] = []
        for shell_command in script_commands(text, environment, self.base_dir):
            recognised = recognise(shell_command.argv)
            if recognised is not None:
                launches.append(build_launch(recognised, self.source, base_dir=self.base_dir, context=context,
                                             env=shell_command.env, span=shell_command.span))
        return launches


def _syntax_error_offset(source: SourceFile, error: SyntaxError) -> int:
    if not error.lineno:
        return 0
    return source.offset(error.lineno, max(error.offset or 1, 1))  # Python >= 3.10: offset counts characters


def extract(source: SourceFile, ctx: ExtractContext) -> list[Launch]:
    try:
        tree = pysyntax.parse_module(source.text, source.display)
    except SyntaxError as error:
        raise Malformed(f"invalid Python: {error.msg}", _syntax_error_offset(source, error)) from error
    except ValueError as error:  # e.g. a NUL byte
        raise Malformed(f"invalid Python: {error}", 0) from error
    return PythonExtractor(source, ctx).run(tree)

