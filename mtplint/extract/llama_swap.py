"""llama-swap configuration files (``config.yaml`` with ``models: NAME: cmd: ...``).

llama-swap starts one upstream server per model from its ``cmd``. What it does to that string
before running it, and what this extractor reproduces:

* lines whose first non-blank character is ``#`` are dropped (comments inside a ``|`` block);
* ``${name}`` macros are replaced: the top-level ``macros:`` map, a model's own ``macros:`` (which
  win), macros inside macros; ``${MODEL_ID}`` is the model's name; ``${PORT}`` (assigned at run
  time) and ``${env.VAR}`` (the proxy's environment) stay unresolved;
* the result is split into words with shell quoting rules, without running a shell;
* ``env:`` (a list of ``NAME=value``) is added to the process environment.

Words that come from a macro point at the macro's definition; everything else at its place in the
``cmd`` block (folded, literal or plain).
"""

from __future__ import annotations

import re

from mtplint.extract import ExtractContext, build_launch
from mtplint.extract.budget import ExpansionBudget
from mtplint.extract.launch import Launch, recognise
from mtplint.extract.yamlfiles import parse
from mtplint.extract.yamlpos import YNode
from mtplint.pathtext import parent_dir
from mtplint.source import EnvEntry, MappedText, SourceFile, Token

_MACRO = re.compile(r"\$\{([A-Za-z0-9_.\-]+)\}")
#: built-in macros only known when llama-swap runs
_RUNTIME_MACROS = ("PORT",)
_MAX_MACRO_DEPTH = 8


def claims(documents: list[YNode]) -> bool:
    """A map with ``models:`` whose entries are maps with a ``cmd``."""
    for document in documents:
        if not document.is_map:
            continue
        models = document.get("models")
        if models is None or not models.is_map:
            continue
        if any(model.is_map and model.get("cmd") is not None for _, _, model in models.entries()):
            return True
    return False


def extract(source: SourceFile, ctx: ExtractContext) -> list[Launch]:
    documents = parse(source)
    return extract_documents(source, documents, ctx) if claims(documents) else []


def extract_documents(source: SourceFile, documents: list[YNode], ctx: ExtractContext) -> list[Launch]:
    launches: list[Launch] = []
    base_dir = parent_dir(source.path)
    for document in documents:
        if not document.is_map:
            continue
        models = document.get("models")
        if models is None or not models.is_map:
            continue
        global_macros = _macros(document.get("macros"))
        for name, _, model in models.entries():
            if not model.is_map:
                continue
            command = model.get("cmd")
            if command is None or not command.is_scalar or command.text is None:
                continue
            macros = {**global_macros, **_macros(model.get("macros"))}
            macros.setdefault("MODEL_ID", MappedText.synthetic(name, source, command.start))
            text = _expand(_strip_comment_lines(command.text), macros, ctx.budget)
            argv = _tokens(text)
            recognised = recognise(argv)
            if recognised is None:
                continue
            launches.append(build_launch(recognised, source, base_dir=base_dir, context=f"model {name}",
                                         env=_env(model.get("env"))))
    return launches


def _macros(node: YNode | None) -> dict[str, MappedText]:
    if node is None or not node.is_map:
        return {}
    return {name: value.text for name, _, value in node.entries() if value.is_scalar and value.text is not None}


def _strip_comment_lines(text: MappedText) -> MappedText:
    """``text`` without the lines that start with ``#`` (leading blanks allowed)."""
    if "#" not in text.text:
        return text
    parts: list[MappedText] = []
    start = 0
    while start <= len(text.text):
        end = text.text.find("\n", start)
        end = len(text.text) if end < 0 else end + 1
        line = text.slice(start, end)
        if not line.text.lstrip().startswith("#"):
            parts.append(line)
        if end >= len(text.text):
            break
        start = end
    return MappedText.join(parts) if parts else text.slice(0, 0)


def _expand(text: MappedText, macros: dict[str, MappedText], budget: ExpansionBudget | None = None, depth: int = 0,
            expansions: dict[str, MappedText] | None = None) -> MappedText:
    """Replace known ``${macro}`` references; unknown and runtime ones stay as written, and so does
    one whose text would take the file's expansion ``budget`` past its end (macros of macros ten
    times each, nine deep, are a billion characters). Each macro is expanded once (``expansions``),
    not once per reference."""
    budget = ExpansionBudget() if budget is None else budget
    expansions = {} if expansions is None else expansions
    if depth > _MAX_MACRO_DEPTH:
        return text
    parts: list[MappedText] = []
    position = 0
    for match in _MACRO.finditer(text.text):
        name = match.group(1)
        if name in _RUNTIME_MACROS or name.startswith("env.") or name not in macros:
            continue
        expanded = expansions.get(name)
        if expanded is None:
            expanded = expansions[name] = _expand(macros[name], macros, budget, depth + 1, expansions)
        if not budget.take(len(expanded.text)):
            continue  # left as written: unresolved
        parts.append(text.slice(position, match.start()))
        parts.append(expanded)
        position = match.end()
    if not parts:  # nothing to replace
        return text
    parts.append(text.slice(position))
    return MappedText.join(parts)


def _tokens(text: MappedText) -> list[Token]:
    from mtplint.extract.shell.expansion import split_words  # noqa: PLC0415 - only a cmd: any unclaimed YAML loads this module

    tokens = []
    for word in split_words(text):
        # each name once: a macro left unexpanded (the expansion budget) may repeat thousands of times
        unresolved = tuple(dict.fromkeys(match.group(1) for match in _MACRO.finditer(word.text))) if "${" in word.text else ()
        tokens.append(Token.from_mapped(word, unresolved))
    return tokens


def _env(node: YNode | None) -> dict[str, EnvEntry]:
    """``env: ["NAME=value", ...]`` as the upstream process sees it."""
    entries: dict[str, EnvEntry] = {}
    if node is None or not node.is_seq:
        return entries
    for item in node.items:
        if not item.is_scalar or item.text is None or "=" not in item.str:
            continue
        name, _, _ = item.str.partition("=")
        value = item.text.slice(len(name) + 1)
        unresolved = tuple(match.group(1) for match in _MACRO.finditer(value.text))
        token = Token.from_mapped(value, unresolved)
        entries[name] = EnvEntry(name, token, item.text.span(0, len(name)))
    return entries
