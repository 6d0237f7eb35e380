"""Edit primitives on argv words, in the container the user wrote them in.

A launch's argv reaches the engine through a container: a compose ``command`` list, a compose
string command (plain, quoted, folded ``>`` or literal ``|``; compose-go splits it like a shell),
a k8s ``args`` list (block or flow), a shell command with ``\\`` continuations, a systemd
``ExecStart=``, a Dockerfile ``CMD``/``ENTRYPOINT`` (exec-form JSON or shell form), a Python argv
list (``subprocess.run([...])``) or, for the Python API, the keyword arguments of ``LLM(...)``.
The helpers here turn "rename this flag", "replace this value", "split ``--config=x``", "insert
these words" and "remove these words" into :class:`~mtplint.checks.Edit` s on the original text:

* only the bytes that must change are touched (the token's text, an insertion point), so the
  user's quoting, indentation, comments, ``\\`` continuations and line endings survive;
* inserted text follows the container's style: a new ``- item`` line indented like its siblings
  and quoted like them, a new line at the block's indentation in a folded/literal command, a
  ``\\`` continuation line in a continued shell command, ``, "word"`` in a bracket list;
* where the container cannot be read back exactly (a word assembled from several quoted parts,
  an escape the replacement would need), no edit is produced (``None``): a fix must never write a
  value the user did not mean.

Token spans differ by container: a shell or Python word's span includes its quotes, a YAML word's
span stops inside them (see :func:`locate`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from mtplint.checks import Edit
from mtplint.edits.lines import remove_lines
from mtplint.edits.pyedit import deferred
from mtplint.edits.substitution import forgets_sources, source_kind, substitutions
from mtplint.records import FrozenRecord
from mtplint.source import SourceFile, Span, Token
from mtplint.startup import DeferredPattern
from mtplint.textpos import indentation, line_end, line_start, next_line_start

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

    from yaml.resolver import Resolver

    from mtplint.extract.launch import KwArg, Launch
    from mtplint.extract.yamlpos import YNode

QUOTES = "\"'"
#: text that is the same word in every container (shell bare word, YAML plain scalar, JSON or
#: Python string body): what a fix may write without escaping
_SAFE_WORD = DeferredPattern(r"[A-Za-z0-9_@%+=:,./-]+")
_STR_TAG = "tag:yaml.org,2002:str"
#: YAML 1.1 booleans PyYAML reads as strings but go-yaml v2 (Kubernetes' sigs.k8s.io/yaml) does not
_GO_YAML_BOOLEANS = frozenset({"y", "n"})


# --- containers ------------------------------------------------------------------------------------

class Word(FrozenRecord):
    """Where one argv token is written and what holds it.

    ``start``/``end`` cover the word's whole text in the file, its quotes included. ``container``:

    * ``yaml-item``: an item of a block YAML sequence (compose ``command:`` list, k8s ``args:``)
    * ``yaml-flow-item``: an item of a flow sequence (``args: ["--a", "b"]``)
    * ``yaml-string``: a word inside a YAML string split like a shell command (compose string
      command, a ``sh -c`` script, a llama-swap ``cmd``); ``style`` is the scalar's style
    * ``shell``: a word of a shell script, a systemd ``ExecStart=``, a Dockerfile shell form
    * ``list``: an element of a bracket list (Python argv list, Dockerfile exec-form JSON);
      ``style`` is its quote character
    """

    __slots__ = ("token", "start", "end", "container", "style", "node", "compose", "parent")
    token: Final[Token]
    start: Final[int]
    end: Final[int]
    container: Final[str]
    style: Final[str]
    node: Final[YNode | None]
    compose: Final[bool]
    #: the sequence holding a ``yaml-item`` / ``yaml-flow-item``
    parent: Final[YNode | None]

    def __init__(self, token: Token, start: int, end: int, container: str, style: str = "", node: YNode | None = None,
                 compose: bool = False, parent: YNode | None = None) -> None:
        self.token = token
        self.start = start
        self.end = end
        self.container = container
        self.style = style
        self.node = node
        self.compose = compose
        self.parent = parent


@forgets_sources
def forget_sources() -> None:
    """Forget the files the caches below were asked about. A check's verification of its fixes
    fixes a batch of files at a time, each batch with texts of its own (never asked about again):
    kept past its batch, a file's YAML trees (cycles) outlive the batch's collection of its cycles
    and, pushed out by a later batch's, stay to the end of the run."""
    for cached in (source_kind, _yaml_documents, _yaml_scalars):
        cached.cache_clear()


@lru_cache(maxsize=32)
def _yaml_documents(source: SourceFile) -> tuple[YNode, ...]:
    """The file's YAML trees, the same nodes for every word located in it (two words are items of
    one list when they have the same parent node)."""
    # PyYAML is loaded for a word of a YAML file only: a fix to a script, a Dockerfile, a unit or
    # Python source needs none of it
    from mtplint.extract.yamlpos import YamlError, load_all  # noqa: PLC0415 - PyYAML: a YAML file's word only

    try:
        return tuple(load_all(source))
    except YamlError:
        return ()


@lru_cache(maxsize=32)
def _yaml_scalars(source: SourceFile) -> tuple[tuple[YNode, YNode | None], ...]:
    """Every scalar of a YAML file with the sequence that holds it as an item (if any)."""
    found: list[tuple[YNode, YNode | None]] = []
    seen: set[int] = set()
    for document in _yaml_documents(source):
        _add_scalars(document, None, seen, found)
    return tuple(found)


def _add_scalars(node: YNode, parent: YNode | None, seen: set[int], found: list[tuple[YNode, YNode | None]]) -> None:
    """Add to ``found`` the scalars under ``node`` not in ``seen`` (the ids of the nodes already
    reached: an aliased node is taken with its first parent), in the order of the text. A function
    of the module, not one nested in :func:`_yaml_scalars`: a nested function that calls itself is
    a reference cycle, which held the file's tree until the run's next collection."""
    if id(node) in seen:
        return
    seen.add(id(node))
    if node.is_scalar:
        found.append((node, parent))
        return
    for key, value in node.pairs:
        _add_scalars(key, None, seen, found)
        _add_scalars(value, None, seen, found)
    for item in node.items:
        _add_scalars(item, node, seen, found)


def _scalars_around(source: SourceFile, span: Span) -> list[tuple[YNode, YNode | None]]:
    """The scalars of :func:`_yaml_scalars` whose text holds ``span``, in its order, for a file
    without aliases: there every node is reached once and lies inside its parent's text, so only
    the nodes holding ``span`` lead to one (a walk down one path instead of over the whole file)."""
    start, end = span.start, span.end
    found: list[tuple[YNode, YNode | None]] = []
    # only the nodes holding the span are stacked: a mapping's other entries are passed over unread
    stack: list[tuple[YNode, YNode | None]] = [(document, None) for document in reversed(_yaml_documents(source))
                                               if document.start <= start and end <= document.end]
    while stack:
        node, parent = stack.pop()
        if node.is_scalar:
            found.append((node, parent))
            continue
        children: list[tuple[YNode, YNode | None]] = []
        for key, value in node.pairs:
            if key.start <= start and end <= key.end:
                children.append((key, None))
            if value.start <= start and end <= value.end:
                children.append((value, None))
        children.extend((item, node) for item in node.items if item.start <= start and end <= item.end)
        stack.extend(reversed(children))
    return found


def _yaml_word(source: SourceFile, token: Token, span: Span) -> Word | None:
    # an alias needs both an anchor (``&``) and a reference (``*``): only then is a node shared
    # between parents, and the first parent that reaches it is found by walking the whole file
    aliased = "&" in source.text and "*" in source.text
    best: tuple[YNode, YNode | None] | None = None
    for node, parent in _yaml_scalars(source) if aliased else _scalars_around(source, span):
        if node.start <= span.start and span.end <= node.end and (best is None or node.start >= best[0].start):
            best = (node, parent)
    if best is None:
        return None
    node, parent = best
    compose = source_kind(source) == "compose"
    if parent is not None and node.style not in ("|", ">") and (
            node.str == token.value or _whole_scalar(source, node, span)):
        flow = source.text[parent.start:parent.start + 1] == "["
        return Word(token, node.start, node.end, "yaml-flow-item" if flow else "yaml-item",
                    node.style or "", node, compose, parent)
    start, end = span.start, span.end
    text = source.text
    low = node.start + (1 if (node.style or "") in QUOTES and node.style else 0)
    high = node.end - (1 if (node.style or "") in QUOTES and node.style else 0)
    # the span of a word quoted inside the command stops inside its quotes
    if start - 1 >= low and end < high and text[start - 1] == text[end] and text[end] in QUOTES:
        start, end = start - 1, end + 1
    return Word(token, start, end, "yaml-string", node.style or "", node, compose, parent)


def _whole_scalar(source: SourceFile, node: YNode, span: Span) -> bool:
    """The token written at ``span`` is the whole scalar ``node`` (its quotes aside), though its
    value differs from the text: an item the kubelet (``$(VAR)``) or compose (``${VAR:-8000}``)
    substitutes into, which is still one argument. The token's span may cover only part of a
    reference (the default it took), so it is widened over the references it touches first; a
    word of a ``sh -c`` script item stays a word (the script has others)."""
    quoted = (node.style or "") in ("'", '"')
    low = node.start + (1 if quoted else 0)
    high = node.end - (1 if quoted else 0)
    inner = source.text[low:high]
    if "$" not in inner:
        return False
    start, end = span.start - low, span.end - low
    for reference_start, reference_end in substitutions(inner):
        if reference_start <= end and start <= reference_end:
            start, end = min(start, reference_start), max(end, reference_end)
    return start <= 0 and len(inner) <= end


def locate(source: SourceFile, token: Token) -> Word | None:
    """The word of ``token`` in ``source`` and its container; None when the token is not written
    there (synthetic words of an image's entrypoint, a word from another file)."""
    span = token.span
    if span is None or span.file != source.display or span.end <= span.start:
        return None
    kind = source_kind(source)
    text = source.text
    if kind in ("compose", "yaml"):
        return _yaml_word(source, token, span)
    if kind in ("python", "dockerfile"):
        before = text[:span.start].rstrip(" \t\r\n")
        raw = text[span.start:span.end]
        if before.endswith(("[", ",")) and len(raw) >= 2 and raw[0] in QUOTES and raw[-1] == raw[0]:
            return Word(token, span.start, span.end, "list", raw[0])
        if kind == "python":
            return None
    if kind in ("shell", "systemd", "dockerfile"):
        return Word(token, span.start, span.end, "shell")
    return None


def _python_list(source: SourceFile, word: Word) -> bool:
    """An element of a Python argv list: its edits are placed with libcst (:mod:`mtplint.edits.pycst`)."""
    return word.container == "list" and source_kind(source) == "python"


# --- small text helpers ------------------------------------------------------------------------------

def _first_on_line(text: str, offset: int) -> bool:
    return text[line_start(text, offset):offset].strip() == ""


def _continued_from_above(text: str, offset: int) -> bool:
    """The line holding ``offset`` continues the one above it with a trailing backslash."""
    start = line_start(text, offset)
    if start == 0:
        return False
    above = text[line_start(text, start - 1):start].rstrip("\r\n")
    return above.endswith("\\") and not above.endswith("\\\\")


def _item_dash(text: str, word: Word) -> int | None:
    """Offset of the ``-`` that opens the block sequence item ``word`` (a ``yaml-item``), when
    nothing but indentation precedes it on its line; None otherwise."""
    assert word.node is not None
    before = text[:word.node.start].rstrip(" \t")
    if not before.endswith("-") or not _first_on_line(text, len(before) - 1):
        return None
    return len(before) - 1


def _rest_of_line_blank(text: str, offset: int) -> bool:
    return text[offset:line_end(text, offset)].strip() == ""


def _inner(source: SourceFile, word: Word) -> tuple[int, str]:
    """The word's text without one pair of enclosing quotes, and where it starts."""
    raw = source.text[word.start:word.end]
    if len(raw) >= 2 and raw[0] in QUOTES and raw[-1] == raw[0]:
        return word.start + 1, raw[1:-1]
    return word.start, raw


def _quote_state(raw: str, index: int) -> str:
    """The shell quote open at ``raw[index]`` ("" when none)."""
    quote = ""
    escaped = False
    for char in raw[:index]:
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote:
            if char == quote:
                quote = ""
        elif char in QUOTES:
            quote = char
    return quote


def _is_script(source: SourceFile, word: Word) -> bool:
    """The YAML string holding the word is a shell script (``bash -c``'s argument: an item of a
    list, or a quote inside the command), where a newline ends a command, not a word."""
    node = word.node
    if node is None:
        return False
    return word.parent is not None or _inside_script_quote(source.text, node, word.start)


def _inside_script_quote(text: str, node: YNode, offset: int) -> bool:
    """``offset`` is inside a quote opened earlier in the YAML string (a ``sh -c '...'`` script)."""
    start = node.start
    if node.style in ("|", ">"):
        start = next_line_start(text, node.start)
    elif node.style and node.style in QUOTES:
        start += 1
    return _quote_state(text[start:offset], offset - start) != ""


@lru_cache(maxsize=1024)  # asked of every item of a list a fix adds to (a tree's lists repeat the same words)
def plain_yaml_ok(value: str, flow: bool = False) -> bool:
    """``value`` may be written as a plain YAML scalar and loads back as this string (in a flow
    sequence too, where a comma ends the item, when ``flow``)."""
    if flow and "," in value:
        return False
    if re.fullmatch(r"--?[A-Za-z][\w.-]*", value):
        return True  # a flag: ``- --model`` is a string
    return bool(_SAFE_WORD.fullmatch(value)) and not value.startswith(("-", ":", "@", "%", ",")) \
        and not value.endswith(":") and value.lower() not in _GO_YAML_BOOLEANS and _loads_as_string(value)


def _loads_as_string(plain: str) -> bool:
    from mtplint.startup import yaml  # noqa: PLC0415 - PyYAML: a YAML file's word only (_yaml_documents)

    # types-PyYAML leaves Resolver.resolve unannotated
    tag: str = _plain_resolver().resolve(yaml.ScalarNode, plain, (True, False))  # type: ignore[no-untyped-call]
    return tag == _STR_TAG


@lru_cache(maxsize=1)
def _plain_resolver() -> Resolver:
    """PyYAML's reading of a plain scalar (YAML 1.1, as the safe and C loaders resolve it): a word
    is written plain only when it loads back as a string."""
    from mtplint.startup import yaml  # noqa: PLC0415 - PyYAML: a YAML file's word only (_yaml_documents)

    return yaml.resolver.Resolver()


def sibling_quote(word: Word) -> str:
    """The quoting new items of a YAML sequence should get: the style most items that could be
    plain were written in (JSON words and the like, which need quotes, do not count)."""
    parent = word.parent
    if parent is None:
        return word.style if word.style in QUOTES else ""
    counts: dict[str, int] = {}
    for item in parent.items:
        if item.is_scalar and plain_yaml_ok(item.str):
            style = item.style if item.style and item.style in QUOTES else ""
            counts[style] = counts.get(style, 0) + 1
    if not counts:
        return ""
    return max(counts, key=lambda style: (counts[style], style == ""))


def yaml_item_text(value: str, quote: str, flow: bool = False) -> str:
    """``value`` as a YAML sequence item: plain when ``quote`` is "" and it loads back as itself,
    else in ``quote`` (double quotes by default)."""
    if quote == "" and plain_yaml_ok(value, flow):
        return value
    # a YAML container's quoting: a fix to a script or a Dockerfile has no use for it
    from mtplint.edits.yamledit import quoted  # noqa: PLC0415 - fixing: a YAML file's word only

    return quoted(value, quote or '"')


def _list_item_text(value: str, quote: str) -> str:
    body = value.replace("\\", "\\\\").replace(quote, "\\" + quote)
    return quote + body + quote


def _separator_before(source: SourceFile, word: Word) -> str:
    """The text between the previous list element and this one when they share a line (``, ``)."""
    text = source.text
    before = text[line_start(text, word.start):word.start]
    match = re.search(r",([ \t]*)$", before)
    return "," + match.group(1) if match else ", "


# --- replacing text inside a word ------------------------------------------------------------------

def edit_in_word(source: SourceFile, token: Token, start: int, end: int, new: str) -> Edit | None:
    """Replace ``token.value[start:end]`` with ``new`` where it is written.

    ``new`` must be text every container reads back unchanged (flag names, dtype names, paths)."""
    word = locate(source, token)
    if word is None or not _SAFE_WORD.fullmatch(new or "-"):
        return None
    if _python_list(source, word):
        return deferred(source, "edit_string", word.start, token.value, start, end, new)
    whole = start == 0 and end == len(token.value)
    if word.container == "yaml-item" and word.style == "" and whole and not plain_yaml_ok(new):
        return None
    at, inner = _inner(source, word)
    old = token.value[start:end]
    if inner == token.value:
        return Edit(source.span(at + start, at + end), new)
    # the word is written with quotes or escapes in the middle, or substituted into: edit only a
    # unique verbatim match, and never text a substitution stands in for
    raw = source.text[word.start:word.end]
    if old and raw.count(old) == 1:
        offset = raw.index(old)
        if any(start < offset + len(old) and offset < end
               for start, end in substitutions(raw, source_kind(source) == "systemd")):
            return None
        return Edit(source.span(word.start + offset, word.start + offset + len(old)), new)
    return None


def replace_word(source: SourceFile, token: Token, new: str) -> Edit | None:
    """Replace the whole value of ``token`` (its quotes stay)."""
    return edit_in_word(source, token, 0, len(token.value), new)


def rename_flag(source: SourceFile, token: Token, new_flag: str) -> Edit | None:
    """``--draft-max`` → ``--spec-draft-n-max``; ``--draft-max=8`` keeps its ``=8``."""
    name_end = token.value.find("=")
    return edit_in_word(source, token, 0, len(token.value) if name_end < 0 else name_end, new_flag)


def replace_flag_value(source: SourceFile, tokens: Sequence[Token], span: Span, old: str, new: str) -> Edit | None:
    """Replace the value ``old`` of the option whose value was written at ``span`` (a separate word,
    the ``=value`` part of a ``--flag=value`` word, or an element of a comma list)."""
    token = token_containing(tokens, span)
    if token is None:
        return None
    value = token.value
    first = value.find("=") + 1 if value.startswith("-") else 0
    for match in re.finditer(r"(?<![\w-])" + re.escape(old) + r"(?![\w-])", value):
        if match.start() >= first:
            return edit_in_word(source, token, match.start(), match.end(), new)
    return None


def token_containing(tokens: Sequence[Token], span: Span | None) -> Token | None:
    """The token written at ``span`` (the same span, or the word that holds it)."""
    if span is None:
        return None
    best: Token | None = None
    for token in tokens:
        own = token.span
        if own is None or own.file != span.file:
            continue
        if own.start == span.start and own.end == span.end:
            return token
        if own.start <= span.start and span.end <= own.end and best is None:
            best = token
    return best


def token_index(tokens: Sequence[Token], token: Token) -> int | None:
    for index, candidate in enumerate(tokens):
        if candidate is token:
            return index
    return None


# --- splitting --config=file into two words ------------------------------------------------------------

def split_at_equals(source: SourceFile, token: Token) -> Edit | None:
    """``--config=file.yaml`` → ``--config file.yaml`` written as two words of the same container."""
    word = locate(source, token)
    if word is None or "=" not in token.value:
        return None
    if _python_list(source, word):
        return deferred(source, "split_element", word.start, token.value)
    name, value = token.value.split("=", 1)
    at, inner = _inner(source, word)
    text = source.text
    if inner != token.value:
        raw = text[word.start:word.end]
        if raw.count("=") != 1:
            return None
        equals = word.start + raw.index("=")
    else:
        equals = at + len(name)
    if word.container == "yaml-item":
        dash = _item_dash(text, word)
        if dash is None:
            return None
        indent = text[line_start(text, dash):dash]
        quote = word.style if word.style in QUOTES else ""
        if not quote and not plain_yaml_ok(value):
            return None
        return Edit(source.span(equals, equals + 1), f"{quote}{source.newline}{indent}- {quote}")
    if word.container in ("yaml-flow-item", "list"):
        quote = word.style if word.style in QUOTES else ""
        if word.container == "yaml-flow-item" and not quote and not plain_yaml_ok(value, flow=True):
            return None
        separator = _separator_before(source, word) if word.container == "list" else ", "
        return Edit(source.span(equals, equals + 1), f"{quote}{separator}{quote}")
    # a shell-like word: a space, closing and reopening a quote that is open there
    quote = _quote_state(text[word.start:word.end], equals - word.start)
    return Edit(source.span(equals, equals + 1), f"{quote} {quote}")


# --- inserting words -----------------------------------------------------------------------------------

def written_args(launch: Launch, source: SourceFile) -> list[Token]:
    return [token for token in launch.args if token.span is not None and token.span.file == source.display
            and token.span.end > token.span.start]


def _shell_text(words: Sequence[str]) -> str:
    import shlex  # noqa: PLC0415 - only where words are inserted into shell text: most fixes rename or replace a word

    return " ".join(shlex.quote(word) for word in words)


def insert_args(source: SourceFile, launch: Launch, words: Sequence[str]) -> list[Edit] | None:
    """Add ``words`` at the end of the launch's arguments (before a trailing ``"$@"`` or other word
    that expands to any number of words, so a caller's own arguments still come last and win)."""
    written = written_args(launch, source)
    if not written or not words:
        return None
    trailing = len(written)
    while trailing > 0 and written[trailing - 1].splat:
        trailing -= 1
    if trailing < len(written):
        return insert_before(source, written[trailing], words)
    return insert_after(source, written[-1], words)


def insert_after(source: SourceFile, token: Token, words: Sequence[str]) -> list[Edit] | None:
    """Add ``words`` right after ``token`` in its container's style."""
    word = locate(source, token)
    if word is None:
        return None
    if _python_list(source, word):
        return [deferred(source, "insert_elements", word.start, tuple(words), True)]
    text = source.text
    newline = source.newline
    if word.container == "yaml-item":
        dash = _item_dash(text, word)
        if dash is None:
            return None
        indent = text[line_start(text, dash):dash]
        quote = sibling_quote(word)
        lines = "".join(f"{indent}- {yaml_item_text(w, quote)}{newline}" for w in words)
        at = next_line_start(text, word.end)
        if at >= len(text) and not text.endswith("\n"):
            return [Edit(source.span(len(text)), newline + lines[:-len(newline)])]
        return [Edit(source.span(at), lines)]
    if word.container in ("yaml-flow-item", "list"):
        quote = word.style if word.style in QUOTES else ""
        if word.container == "yaml-flow-item":
            items = [yaml_item_text(w, sibling_quote(word), flow=True) for w in words]
            return [Edit(source.span(word.end), "".join(", " + item for item in items))]
        items = [_list_item_text(w, quote) for w in words]
        after = text[word.end:]
        trailing_comma = re.match(r"[ \t]*,[ \t]*(?:#[^\n]*)?\r?\n", after)
        if trailing_comma and _first_on_line(text, word.start):
            indent = indentation(text, word.start)
            at = word.end + trailing_comma.end()
            return [Edit(source.span(at), "".join(f"{indent}{item},{newline}" for item in items))]
        separator = _separator_before(source, word)
        return [Edit(source.span(word.end), "".join(separator + item for item in items))]
    if not all(_SAFE_WORD.fullmatch(w) for w in words) and word.container == "yaml-string" and word.style in QUOTES:
        return None
    joined = _shell_text(words)
    if word.container == "yaml-string" and not _is_script(source, word):
        # a string the tool splits itself (a compose command, a llama-swap ``cmd``): a new line of
        # a block is one more separator, so the words get a line of their own
        node = word.node
        assert node is not None
        block = node.style in ("|", ">") or (node.style == "" and line_start(text, word.start) > node.start)
        if block and _rest_of_line_blank(text, word.end) and not _continued_from_above(text, word.start):
            indent = indentation(text, word.start)
            at = next_line_start(text, word.end)
            if at >= len(text) and not text.endswith("\n"):
                return [Edit(source.span(len(text)), f"{newline}{indent}{joined}")]
            return [Edit(source.span(at), f"{indent}{joined}{newline}")]
    # shell (or a script inside YAML): a new line would start a new command, so continue a command
    # that already spans lines the same way, or stay on the line
    if _continued_from_above(text, word.start) and _rest_of_line_blank(text, word.end):
        return [Edit(source.span(word.end), f" \\{newline}{indentation(text, word.start)}{joined}")]
    return [Edit(source.span(word.end), " " + joined)]


def insert_before(source: SourceFile, token: Token, words: Sequence[str]) -> list[Edit] | None:
    """Add ``words`` right before ``token`` (a trailing ``"$@"``) in its container's style."""
    word = locate(source, token)
    if word is None:
        return None
    if _python_list(source, word):
        return [deferred(source, "insert_elements", word.start, tuple(words), False)]
    text = source.text
    newline = source.newline
    if word.container == "yaml-item":
        dash = _item_dash(text, word)
        if dash is None:
            return None
        start = line_start(text, dash)
        indent = text[start:dash]
        quote = sibling_quote(word)
        return [Edit(source.span(start), "".join(f"{indent}- {yaml_item_text(w, quote)}{newline}" for w in words))]
    if word.container in ("yaml-flow-item", "list"):
        quote = word.style if word.style in QUOTES else ""
        if word.container == "yaml-flow-item":
            items = [yaml_item_text(w, sibling_quote(word), flow=True) for w in words]
            return [Edit(source.span(word.start), "".join(item + ", " for item in items))]
        items = [_list_item_text(w, quote) for w in words]
        return [Edit(source.span(word.start), "".join(item + _separator_before(source, word).rstrip() + " "
                                                      for item in items))]
    if word.container == "yaml-string" and word.style in QUOTES and not all(_SAFE_WORD.fullmatch(w) for w in words):
        return None
    joined = _shell_text(words)
    if _first_on_line(text, word.start):
        start = line_start(text, word.start)
        indent = text[start:word.start]
        if _continued_from_above(text, word.start):
            return [Edit(source.span(start), f"{indent}{joined} \\{newline}")]
        if word.container == "yaml-string" and word.node is not None and word.node.style in ("|", ">") \
                and not _is_script(source, word):
            return [Edit(source.span(start), f"{indent}{joined}{newline}")]
    return [Edit(source.span(word.start), joined + " ")]


# --- removing words ------------------------------------------------------------------------------------

def _same_container(one: Word, other: Word) -> bool:
    if one.container != other.container:
        return False
    if one.container in ("yaml-item", "yaml-flow-item"):
        return one.parent is other.parent
    if one.container == "yaml-string":
        return one.node is other.node
    return True


def remove_args(source: SourceFile, launch: Launch, first: int, count: int = 1) -> Edit | None:
    """Remove ``count`` consecutive words of ``launch.args`` from index ``first`` (a flag and its value)."""
    tokens = launch.args
    if first < 0 or first + count > len(tokens) or count < 1:
        return None
    removed = [locate(source, token) for token in tokens[first:first + count]]
    if any(word is None for word in removed):
        return None
    words = [word for word in removed if word is not None]
    text = source.text
    head, tail = words[0], words[-1]
    if head.container != tail.container:
        return None
    if _python_list(source, head):
        return deferred(source, "remove_elements", head.start, count)
    if head.container == "yaml-item":
        dash = _item_dash(text, head)
        if dash is None:
            return None
        if text[tail.end:line_end(text, tail.end)].strip() not in ("",) and \
                not text[tail.end:line_end(text, tail.end)].strip().startswith("#"):
            return None
        return remove_lines(source, dash, tail.end)
    following = locate(source, tokens[first + count]) if first + count < len(tokens) else None
    if following is not None and not _same_container(following, head):
        following = None
    # the word before, written in the same container (not an image's entrypoint words, whose span
    # is the image, nor a word of another list or string)
    previous = None
    for candidate in reversed([*launch.program, *tokens[:first]]):
        if launch.image is not None and candidate.span == launch.image.span:
            continue
        found = locate(source, candidate)
        if found is not None:
            previous = found if _same_container(found, head) else None
            break
    if head.container in ("yaml-flow-item", "list"):
        if previous is not None and previous.container == head.container and previous.end <= head.start:
            return Edit(source.span(previous.end, tail.end), "")
        if following is not None and following.container == head.container:
            return Edit(source.span(head.start, following.start), "")
        return None
    # shell-like words
    if following is not None and following.start > tail.end and \
            line_start(text, following.start) == line_start(text, tail.end):
        return Edit(source.span(head.start, following.start), "")
    line_tail = text[tail.end:line_end(text, tail.end)]
    if _first_on_line(text, head.start) and re.fullmatch(r"[ \t]*\\", line_tail):
        return remove_lines(source, head.start, tail.end)
    if previous is not None and previous.end <= head.start:
        return Edit(source.span(previous.end, tail.end), "")
    return None


# --- Python keyword arguments -------------------------------------------------------------------------

def add_keyword(source: SourceFile, call_span: Span | None, name: str, value_code: str) -> Edit | None:
    """Add ``name=value_code`` as the call's last keyword argument, in the layout of the call
    (a new line indented like the arguments of a one-per-line call, else ``, name=value``); placed
    with libcst when the fix is applied (:func:`mtplint.edits.pycst.add_keyword`)."""
    if call_span is None or call_span.file != source.display:
        return None
    return deferred(source, "add_keyword", call_span.start, name, value_code)


def replace_kwarg_value(source: SourceFile, kwarg: KwArg, value_code: str) -> Edit | None:
    """Replace the written value of a keyword argument (``True`` → ``False``): only where the call
    itself says ``name=value`` (a value read from a ``**options`` dict is not the call's to change)."""
    if kwarg.span is None or kwarg.span.file != source.display:
        return None
    return deferred(source, "replace_keyword_value", kwarg.span.start, kwarg.span.end, kwarg.name, value_code)


def replace_kwarg_string(source: SourceFile, kwarg: KwArg, old: str, new: str) -> Edit | None:
    """Replace a keyword argument's string literal ``"old"`` by ``"new"`` (its quotes stay)."""
    span = kwarg.span
    if span is None or span.file != source.display or not _SAFE_WORD.fullmatch(new):
        return None
    return deferred(source, "edit_string", span.start, old, 0, len(old), new)


def rename_keyword(source: SourceFile, kwarg: KwArg, new_name: str) -> Edit | None:
    """Rename ``old_name=`` written before the keyword argument's value."""
    span = kwarg.span
    if span is None or span.file != source.display or not new_name.isidentifier():
        return None
    return deferred(source, "rename_keyword", span.start, kwarg.name, new_name)


# --- fixes shared by several rules -------------------------------------------------------------------

def append_flags(launch: Launch, words: Sequence[str]) -> list[Edit] | None:
    """Add command-line words to a launch (not to a Python API launch: it has no argv)."""
    if launch.kwargs is not None:
        return None
    return insert_args(launch.source, launch, words)


def switch_off_edits(launch: Launch, setting_span: Span | None, flag: str, negative: str,
                     keyword: str) -> list[Edit] | None:
    """Edits that turn a boolean option off: ``--flag`` written in the argv becomes ``--no-flag``;
    a Python ``keyword=True`` becomes ``False`` (added when absent); otherwise ``--no-flag`` is added
    at the end of the arguments, where it wins over a default or a ``--config`` file value."""
    source = launch.source
    if launch.kwargs is not None:
        kwarg = launch.kwargs.get(keyword)
        if kwarg is not None:
            if kwarg.value is not True or kwarg.unresolved:
                return None
            edit = replace_kwarg_value(source, kwarg, "False")
        else:
            edit = add_keyword(source, launch.span, keyword, "False")
        return [edit] if edit is not None else None
    token = token_containing(launch.args, setting_span)
    if token is not None and token.value == flag:
        edit = rename_flag(source, token, negative)
        return [edit] if edit is not None else None
    return append_flags(launch, [negative])
