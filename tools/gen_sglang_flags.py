#!/usr/bin/env python3
"""Generate mtplint's SGLang flag table for one release from its unpacked wheel.

Usage::

    pip download sglang==0.5.9 --no-deps -d /tmp/s
    unzip -q /tmp/s/sglang-0.5.9-*.whl 'sglang/*' -d /tmp/s/0.5.9
    python tools/gen_sglang_flags.py /tmp/s/0.5.9 0.5.9 --wheel sglang-0.5.9-py3-none-any.whl

The SGLang CLI is built by ``ServerArgs.add_cli_args(parser)``. Nothing is imported or executed:
the source is read with :mod:`ast`, which works because the registrations are literal:

* up to 0.5.13 every flag is a ``parser.add_argument(...)`` call in ``add_cli_args``
  (``python/sglang/srt/server_args.py``);
* from 0.5.14 most flags are derived from annotated fields (``field: A[T, "help"] = default`` or
  ``A[T, Arg(aliases=..., choices=...)]``) by ``add_cli_args_from_dataclass``
  (``srt/arg_groups/arg_utils.py``); from 0.5.20 the fields live in namespace classes under
  ``srt/arg_groups/fields/`` combined by ``_INPUT_NAMESPACES`` and ordered by
  ``POSITIONAL_FIELD_ORDER``. The few remaining manual ``add_argument`` calls (dynamic choices,
  deprecated spellings, ``--config``) follow in source order.

Order matters: argparse lists the candidates of an ambiguous abbreviation in registration order.
Choices that are computed at run time (plugin registries, environment-dependent sets) are marked
``choices_dynamic`` and not validated by mtplint. The output is a data table (names, types,
defaults, choices), not SGLang code.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path
from typing import Any


class Unknown(Exception):
    """An expression this static reader cannot evaluate."""


# Custom argparse actions SGLang defines, with the argparse shape they have (nargs and storage);
# read from srt/arg_groups/argparse_actions.py (0.5.14+) and server_args.py (<= 0.5.13).
CUSTOM_ACTIONS: dict[str, dict[str, Any]] = {
    "DeprecatedAction": {"kind": "deprecated", "nargs": 0},
    "DeprecatedStoreTrueAction": {"kind": "store_true", "nargs": 0, "deprecated": True},
    "DeprecatedStoreConstAction": {"kind": "store_const", "nargs": 0, "deprecated": True},
    "DeprecatedAliasStoreAction": {"kind": "store", "nargs": None, "deprecated": True},
    "LoRAPathAction": {"kind": "lora", "nargs": None},
    "BooleanOptionalAction": {"kind": "boolean_optional", "nargs": 0},
}
TYPE_NAMES = {
    "int": "int", "float": "float", "str": "str", "json.loads": "json", "loads": "json",
    "json_list_type": "json_list", "human_readable_int": "human_readable_int", "nullable_str": "nullable_str",
}


class Module:
    def __init__(self, name: str, tree: ast.Module) -> None:
        self.name = name
        self.tree = tree
        self.constants: dict[str, ast.expr] = {}
        self.imports: dict[str, tuple[str, str]] = {}
        self.functions: dict[str, ast.FunctionDef] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.constants[target.id] = node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                self.constants[node.target.id] = node.value
            elif isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = (node.module, alias.name)
            elif isinstance(node, ast.FunctionDef):
                self.functions[node.name] = node
            elif isinstance(node, ast.ClassDef):
                self.classes[node.name] = node


class Reader:
    """The modules of one unpacked wheel, with a small constant evaluator."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.modules: dict[str, Module] = {}
        base = root / "sglang" / "srt"
        files = [base / "server_args.py", base / "environ.py"]
        if (base / "arg_groups").is_dir():
            files.extend(sorted((base / "arg_groups").rglob("*.py")))
        for path in files:
            if path.is_file():
                dotted = ".".join(path.relative_to(root).with_suffix("").parts)
                self.modules[dotted] = Module(dotted, ast.parse(path.read_text(encoding="utf-8")))

    def lookup(self, module: Module, name: str, depth: int = 0) -> tuple[Module, ast.expr]:
        if depth > 10:
            raise Unknown(name)
        if name in module.constants:
            return module, module.constants[name]
        if name in module.imports:
            source, original = module.imports[name]
            target = self.modules.get(source)
            if target is not None:
                return self.lookup(target, original, depth + 1)
        raise Unknown(name)

    def evaluate(self, node: ast.expr | None, module: Module, depth: int = 0) -> Any:
        if node is None or depth > 20:
            raise Unknown("none")
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items: list[Any] = []
            for element in node.elts:
                if isinstance(element, ast.Starred):
                    items.extend(self.evaluate(element.value, module, depth + 1))
                else:
                    items.append(self.evaluate(element, module, depth + 1))
            return items
        if isinstance(node, ast.Dict):
            return {self.evaluate(k, module, depth + 1): self.evaluate(v, module, depth + 1)
                    for k, v in zip(node.keys, node.values, strict=True) if k is not None}
        if isinstance(node, ast.Name):
            if node.id in ("None", "True", "False"):
                return {"None": None, "True": True, "False": False}[node.id]
            owner, value = self.lookup(module, node.id)
            return self.evaluate(value, owner, depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left = self.evaluate(node.left, module, depth + 1)
            right = self.evaluate(node.right, module, depth + 1)
            if isinstance(left, list) and isinstance(right, (list, tuple)):
                return [*left, *right]
            return left + right
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            return self.evaluate(node.left, module, depth + 1) * self.evaluate(node.right, module, depth + 1)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self.evaluate(node.operand, module, depth + 1)
        if isinstance(node, ast.JoinedStr):
            raise Unknown("f-string")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("list", "tuple", "sorted", "set") \
                and len(node.args) == 1 and not node.keywords:
            evaluated = self.evaluate(node.args[0], module, depth + 1)
            items = list(evaluated)
            return sorted(items) if node.func.id == "sorted" else items
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "keys" and not node.args:
            return list(self.evaluate(node.func.value, module, depth + 1))
        raise Unknown(ast.dump(node)[:80])


def _name_of(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name_of(node.value)}.{node.attr}"
    return type(node).__name__


def _type_name(node: ast.expr) -> str:
    name = _name_of(node)
    return TYPE_NAMES.get(name, TYPE_NAMES.get(name.rsplit(".", 1)[-1], name.rsplit(".", 1)[-1]))


class Generator:
    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self.server_args = reader.modules["sglang.srt.server_args"]
        self.actions: list[dict[str, Any]] = []
        self.warnings: list[str] = []
        self.class_defaults: dict[str, ast.expr] = {}

    # -- fields -----------------------------------------------------------------------------------

    def field_sources(self) -> list[tuple[Module, ast.ClassDef]]:
        """The classes whose annotated fields make up ServerArgs, in field order."""
        sources: list[tuple[Module, ast.ClassDef]] = []
        namespaces = self.server_args.constants.get("_INPUT_NAMESPACES")
        if isinstance(namespaces, ast.List):
            for element in namespaces.elts:
                name = _name_of(element)
                module = self.server_args
                if name in module.imports:
                    module = self.reader.modules[module.imports[name][0]]
                sources.append((module, module.classes[name]))
        sources.append((self.server_args, self.server_args.classes["ServerArgs"]))
        return sources

    def fields(self) -> list[tuple[str, ast.expr, ast.expr | None, Module]]:
        """(name, annotation, default expression, module) of every ServerArgs field, in order."""
        found: dict[str, tuple[str, ast.expr, ast.expr | None, Module]] = {}
        for module, cls in self.field_sources():
            for node in cls.body:
                if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                    name = node.target.id
                    if name.startswith("_") and name in ("_NS_PATH",):
                        continue
                    if isinstance(node.annotation, ast.Subscript) and _name_of(node.annotation.value) in ("ClassVar", "typing.ClassVar"):
                        continue
                    if name not in found:
                        found[name] = (name, node.annotation, node.value, module)
                    if node.value is not None:
                        self.class_defaults[name] = node.value
        order_node = None
        field_order = self.reader.modules.get("sglang.srt.arg_groups.field_order")
        if field_order is not None:
            order_node = field_order.constants.get("POSITIONAL_FIELD_ORDER")
        if order_node is not None:
            positional = [name for name in self.reader.evaluate(order_node, field_order) if name in found]  # type: ignore[arg-type]
            rest = [name for name in found if name not in set(positional)]
            return [found[name] for name in [*positional, *rest]]
        return list(found.values())

    def default_of(self, expression: ast.expr | None, module: Module) -> tuple[Any, bool]:
        """(value, dynamic): a field/flag default, or (None, True) when computed at run time."""
        if expression is None:
            return None, False
        if isinstance(expression, ast.Call) and _name_of(expression.func) in ("field", "dataclasses.field", "msgspec.field"):
            for keyword in expression.keywords:
                if keyword.arg == "default":
                    return self.default_of(keyword.value, module)
                if keyword.arg == "default_factory":
                    factory = _name_of(keyword.value)
                    if factory in ("list", "dict"):
                        return ([] if factory == "list" else {}), False
                    if isinstance(keyword.value, ast.Lambda):
                        try:
                            return self.reader.evaluate(keyword.value.body, module), False
                        except Unknown:
                            return None, True
            return None, True
        if isinstance(expression, ast.Attribute) and _name_of(expression.value) == "ServerArgs":
            return self.default_of(self.class_defaults.get(expression.attr), self.server_args)
        try:
            return self.reader.evaluate(expression, module), False
        except Unknown:
            return None, True

    # -- registrations ------------------------------------------------------------------------------

    def add(self, options: list[str], dest: str, spec: dict[str, Any], action_class: str | None = None) -> None:
        """Record one registration; ``action_class`` is the argparse Action class the --config merger checks."""
        if action_class is None:
            action_class = {"store": "_StoreAction", "store_true": "_StoreTrueAction", "store_false": "_StoreFalseAction",
                            "store_const": "_StoreConstAction", "append": "_AppendAction", "count": "_CountAction",
                            "append_const": "_AppendConstAction"}.get(spec["kind"], "Action")
        self.actions.append({"options": options, "dest": dest, **spec, "action_class": action_class})

    def from_dataclass(self) -> None:
        """Mirror ``add_cli_args_from_dataclass`` (srt/arg_groups/arg_utils.py)."""
        for name, annotation, default_node, module in self.fields():
            inner, meta = self.unwrap_annotated(annotation, module)
            if meta is None or meta.get("no_cli"):
                continue
            cli_name = meta.get("cli_name") or "--" + name.replace("_", "-")
            options = [cli_name, *(meta.get("aliases") or [])]
            default, dynamic = self.default_of(default_node, module)
            spec: dict[str, Any] = {"default": default}
            if dynamic:
                spec["default_dynamic"] = True
            action = meta.get("action")
            if action is not None:
                spec.update(CUSTOM_ACTIONS.get(action.rsplit(".", 1)[-1], {"kind": "custom", "nargs": None}))
                spec["type"] = None
                if action.rsplit(".", 1)[-1] == "BooleanOptionalAction":
                    options = [*options, *("--no-" + option[2:] for option in options if option.startswith("--"))]
                for key, value in (meta.get("action_kwargs") or {}).items():
                    if key == "const_value":
                        spec["const"] = value
                    elif key in ("nargs", "choices", "type"):
                        spec[key] = value
                self.add(options, name, spec, action.rsplit(".", 1)[-1])
                continue
            inner, optional = self.unwrap_optional(inner)
            literal = self.literal_values(inner, module)
            type_parser = meta.get("type_parser")
            choices = meta.get("choices")
            if literal is not None:
                spec.update(kind="store", nargs=None, choices=choices or literal,
                            type=type_parser or (type(literal[0]).__name__ if literal else "str"))
            elif self.is_list(inner) and type_parser is None:
                element = self.list_element(inner)
                spec.update(kind="store", nargs=meta.get("nargs") or "+", type=element, choices=choices)
            elif _name_of(inner) == "bool":
                spec.update(kind="store_true", nargs=0, type=None)
            else:
                kind_type = type_parser or TYPE_NAMES.get(_name_of(inner), "str")
                spec.update(kind="store", nargs=meta.get("nargs"), type=kind_type, choices=choices)
                required = meta.get("required")
                if required is True or (required is None and default_node is None):
                    spec["required"] = True
            if meta.get("choices_dynamic"):
                spec["choices_dynamic"] = True
            if meta.get("const") is not None:
                spec["const"] = meta["const"]
            del optional
            self.add(options, name, spec)

    def unwrap_annotated(self, annotation: ast.expr, module: Module) -> tuple[ast.expr, dict[str, Any] | None]:
        if not (isinstance(annotation, ast.Subscript) and _name_of(annotation.value) in ("A", "Annotated", "typing.Annotated")):
            return annotation, None
        parts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
        inner = parts[0]
        for extra in parts[1:]:
            if isinstance(extra, ast.Call) and _name_of(extra.func) == "Arg":
                meta: dict[str, Any] = {}
                for keyword in extra.keywords:
                    if keyword.arg is None:
                        continue
                    if keyword.arg == "action_kwargs" and isinstance(keyword.value, ast.Dict):
                        kwargs: dict[str, Any] = {}
                        for key_node, value_node in zip(keyword.value.keys, keyword.value.values, strict=True):
                            key = self.reader.evaluate(key_node, module)
                            kwargs[key] = _type_name(value_node) if key == "type" else self.reader.evaluate(value_node, module)
                        meta["action_kwargs"] = kwargs
                        continue
                    if keyword.arg in ("action", "type_parser"):
                        value = _name_of(keyword.value)
                        meta[keyword.arg] = _type_name(keyword.value) if keyword.arg == "type_parser" else value
                        continue
                    try:
                        meta[keyword.arg] = self.reader.evaluate(keyword.value, module)
                    except Unknown:
                        if keyword.arg == "choices":
                            meta["choices"] = None
                            meta["choices_dynamic"] = True
                        elif keyword.arg in ("help",):
                            pass
                        else:
                            self.warnings.append(f"field {ast.unparse(annotation)[:60]}: cannot read {keyword.arg}")
                return inner, meta
            if (isinstance(extra, ast.Constant) and isinstance(extra.value, str)) or isinstance(extra, ast.JoinedStr):
                return inner, {}
        return inner, None

    @staticmethod
    def unwrap_optional(node: ast.expr) -> tuple[ast.expr, bool]:
        if isinstance(node, ast.Subscript) and _name_of(node.value) in ("Optional", "typing.Optional"):
            return node.slice, True
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            sides = [node.left, node.right]
            others = [side for side in sides if not (isinstance(side, ast.Constant) and side.value is None)]
            if len(others) == 1:
                return others[0], True
        if isinstance(node, ast.Subscript) and _name_of(node.value) in ("Union", "typing.Union") and isinstance(node.slice, ast.Tuple):
            others = [e for e in node.slice.elts if not (isinstance(e, ast.Constant) and e.value is None)]
            if len(others) == 1:
                return others[0], True
        return node, False

    def literal_values(self, node: ast.expr, module: Module) -> list[Any] | None:
        if isinstance(node, ast.Subscript) and _name_of(node.value) in ("Literal", "typing.Literal"):
            parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return [self.reader.evaluate(part, module) for part in parts]
        return None

    @staticmethod
    def is_list(node: ast.expr) -> bool:
        return isinstance(node, ast.Subscript) and _name_of(node.value) in ("List", "list", "typing.List")

    @staticmethod
    def list_element(node: ast.expr) -> str:
        assert isinstance(node, ast.Subscript)
        return TYPE_NAMES.get(_name_of(node.slice), "str")

    def from_call(self, call: ast.Call, module: Module) -> None:
        """Mirror one ``parser.add_argument(...)`` call."""
        options: list[str] = []
        for argument in call.args:
            try:
                options.append(self.reader.evaluate(argument, module))
            except Unknown:
                self.warnings.append(f"line {call.lineno}: option name not literal; skipped")
                return
        keywords = {keyword.arg: keyword.value for keyword in call.keywords if keyword.arg}
        long_options = [option for option in options if option.startswith("--")]
        dest = (long_options or options)[0].lstrip("-").replace("-", "_")
        if "dest" in keywords:
            dest = self.reader.evaluate(keywords["dest"], module)
        spec: dict[str, Any] = {}
        action_node = keywords.get("action")
        action = None if action_node is None else (
            action_node.value if isinstance(action_node, ast.Constant) else _name_of(action_node).rsplit(".", 1)[-1])
        if action in (None, "store"):
            spec.update(kind="store", nargs=None, type="str")
        elif action in ("store_true", "store_false"):
            spec.update(kind=action, nargs=0, type=None, default=action == "store_false")
        elif action in ("store_const", "append", "append_const", "count"):
            spec.update(kind=action, nargs=0 if action in ("store_const", "append_const", "count") else None, type="str")
        else:
            spec.update(CUSTOM_ACTIONS.get(str(action), {"kind": "custom", "nargs": None}))
            spec.setdefault("type", "str" if spec.get("nargs") != 0 else None)
            if action == "BooleanOptionalAction":
                options = [*options, *("--no-" + option[2:] for option in options if option.startswith("--"))]
        for key, node in keywords.items():
            if key in ("help", "dest", "action", "metavar"):
                continue
            if key == "type":
                spec["type"] = _type_name(node)
            elif key == "default":
                value, dynamic = self.default_of(node, module)
                spec["default"] = value
                if dynamic:
                    spec["default_dynamic"] = True
            elif key == "choices":
                try:
                    spec["choices"] = list(self.reader.evaluate(node, module))
                except Unknown:
                    spec["choices"] = None
                    spec["choices_dynamic"] = True
            elif key in ("nargs", "const", "const_value", "required", "error_message", "new_flag"):
                try:
                    spec["const" if key == "const_value" else key] = self.reader.evaluate(node, module)
                except Unknown:
                    spec[key + "_dynamic"] = True
        spec.setdefault("default", None if spec["kind"] != "store_true" else False)
        self.add(options, dest, spec, None if action in (None, "store", "store_true", "store_false", "store_const",
                                                         "append", "append_const", "count") else str(action))

    def walk_add_cli_args(self) -> None:
        method = next(node for node in self.server_args.classes["ServerArgs"].body
                      if isinstance(node, ast.FunctionDef) and node.name == "add_cli_args")
        self.walk(method, self.server_args)

    def walk(self, function: ast.FunctionDef, module: Module) -> None:
        for node in _in_order(function):
            if not isinstance(node, ast.Call):
                continue
            name = _name_of(node.func)
            if name.endswith("add_cli_args_from_dataclass"):
                self.from_dataclass()
            elif name.endswith(".add_argument"):
                self.from_call(node, module)
            elif isinstance(node.func, ast.Name) and node.func.id in module.functions and any(
                    isinstance(a, ast.Name) and a.id == "parser" for a in node.args):
                self.walk(module.functions[node.func.id], module)

    # -- other facts ---------------------------------------------------------------------------------

    def dest_to_field(self) -> dict[str, str]:
        """``from_cli_args`` copies some argparse dests to differently named fields (<= 0.5.13)."""
        mapping: dict[str, str] = {}
        cls = self.server_args.classes["ServerArgs"]
        for node in cls.body:
            if isinstance(node, ast.FunctionDef) and node.name == "from_cli_args":
                for statement in ast.walk(node):
                    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                        target, value = statement.targets[0], statement.value
                        if isinstance(target, ast.Attribute) and isinstance(value, ast.Attribute) \
                                and _name_of(target.value) == "args" and _name_of(value.value) == "args":
                            mapping[value.attr] = target.attr
        return mapping

    def env_defaults(self, names: tuple[str, ...]) -> dict[str, Any]:
        environ = self.reader.modules.get("sglang.srt.environ")
        found: dict[str, Any] = {}
        if environ is None:
            return found
        for node in ast.walk(environ.tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and node.targets[0].id in names and isinstance(node.value, ast.Call):
                call = node.value
                kind = _name_of(call.func)
                try:
                    default = self.reader.evaluate(call.args[0], environ) if call.args else None
                except Unknown:
                    default = None
                found[node.targets[0].id] = {"kind": kind, "default": default}
        return found

    def parser_prog(self) -> str | None:
        function = self.server_args.functions.get("prepare_server_args")
        if function is None:
            return None
        for node in ast.walk(function):
            if isinstance(node, ast.Call) and _name_of(node.func).endswith("ArgumentParser"):
                for keyword in node.keywords:
                    if keyword.arg == "prog" and isinstance(keyword.value, ast.Constant):
                        return str(keyword.value.value)
        return None


def _in_order(function: ast.AST) -> list[ast.AST]:
    """Nodes of a function body in source order (ast.walk is breadth-first)."""
    nodes = [node for node in ast.walk(function) if hasattr(node, "lineno")]
    return sorted(nodes, key=lambda node: (getattr(node, "lineno", 0), getattr(node, "col_offset", 0)))


def config_merger_generation(root: Path) -> int:
    """Which ``--config`` merger the release ships (see mtplint/engines/sglang.py CONFIG_MERGERS)."""
    for relative in ("sglang/srt/utils/server_args_config_parser.py", "sglang/srt/server_args_config_parser.py"):
        path = root / relative
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            if "_config_keys" in text:
                return 4
            if "json.dumps(value)" in text:
                return 3
            if "unsupported_actions" in text:
                return 2
            return 1
    return 0


def generate(root: Path, version: str, wheel: str) -> dict[str, Any]:
    reader = Reader(root)
    generator = Generator(reader)
    generator.fields()  # fills class defaults used by ``default=ServerArgs.x``
    generator.walk_add_cli_args()
    fields = []
    for name, _annotation, default_node, module in generator.fields():
        default, dynamic = generator.default_of(default_node, module)
        entry: dict[str, Any] = {"name": name, "default": default}
        if dynamic:
            entry["default_dynamic"] = True
        if default_node is None:
            entry["required"] = True
        fields.append(entry)
    serve = root / "sglang" / "cli" / "serve.py"
    serve_text = serve.read_text(encoding="utf-8") if serve.is_file() else ""
    cli_utils = root / "sglang" / "cli" / "utils.py"
    utils_text = cli_utils.read_text(encoding="utf-8") if cli_utils.is_file() else ""
    table = {
        "version": version,
        "origin": f"generated by tools/gen_sglang_flags.py from {wheel} "
                  "(sglang/srt/server_args.py ServerArgs.add_cli_args and the annotated fields it registers), "
                  "read with ast; data only",
        "prog": generator.parser_prog(),
        "config_merger": config_merger_generation(root),
        "serve_command": serve.is_file(),
        # ``sglang serve`` looks for the model path in argv before parsing (sglang/cli/utils.py
        # get_model_path / try_get_model_path): exact ``--model-path`` always, exact ``--model``
        # where the tuple names it, a leading positional where serve.py normalises it.
        "serve_model_flags": ["--model-path", "--model"] if '("--model-path", "--model")' in utils_text else ["--model-path"],
        "serve_positional_model": "_normalize_positional_model_path" in serve_text,
        "serve_model_type_option": "--model-type" in serve_text,
        "dest_to_field": generator.dest_to_field(),
        "env": generator.env_defaults(("SGLANG_ENABLE_SPEC_V2",)),
        "actions": generator.actions,
        "fields": fields,
    }
    for warning in generator.warnings:
        print(f"{version}: {warning}", file=sys.stderr)
    return table


#: values a row leaves out (the reader in mtplint/engines/sglang.py applies the same defaults)
ROW_DEFAULTS: dict[str, Any] = {"kind": "store", "type": "str", "nargs": None, "default": None, "choices": None,
                               "action_class": "_StoreAction"}


def _slim(row: dict[str, Any]) -> dict[str, Any]:
    slim = {key: value for key, value in row.items() if key not in ROW_DEFAULTS or ROW_DEFAULTS[key] != value}
    if slim.get("kind") in ("store_true", "deprecated", "boolean_optional", "store_const") and "type" not in slim:
        slim["type"] = "str"  # explicit: these rows had no type, the reader must not assume str
    if row.get("type") is None and row.get("kind", "store") not in ("store",):
        slim.pop("type", None)
    return slim


def dump(table: dict[str, Any]) -> str:
    """JSON with one option / field per line: small, and diffs between releases stay readable."""
    lines = ["{"]
    items = list(table.items())
    for index, (key, value) in enumerate(items):
        comma = "," if index < len(items) - 1 else ""
        if isinstance(value, list) and value and isinstance(value[0], dict):
            rows = [json.dumps(_slim(row), default=str) for row in value]
            lines.append(f" {json.dumps(key)}: [")
            lines.extend(f"  {row}," for row in rows[:-1])
            lines.append(f"  {rows[-1]}")
            lines.append(f" ]{comma}")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value, default=str)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("root", type=Path, help="directory holding the unpacked wheel's sglang/ package")
    parser.add_argument("version")
    parser.add_argument("--wheel", default=None, help="wheel file name, recorded as the table's origin")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    table = generate(args.root, args.version, args.wheel or f"sglang=={args.version}")
    out = args.out or Path(__file__).resolve().parent.parent / "mtplint" / "engines" / "data" / "sglang" / f"{args.version}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(dump(table), encoding="utf-8")
    print(f"{out}: {len(table['actions'])} options, {len(table['fields'])} fields")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
