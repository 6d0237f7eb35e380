"""YAML read with positions: PyYAML's C composer, turned into a small node tree.

The composer (not the constructor) is used so every scalar keeps its marks; nothing is ever
constructed from a tag, so ``!!python/object`` and friends are inert. Aliases share the node they
point at (no expansion, so an alias bomb stays small) and ``<<`` merge keys are applied here, with
explicit keys winning as in YAML's merge-key spec. Each scalar's value is a :class:`MappedText`
aligned character by character with its raw text, so positions survive folded (``>``) and
literal (``|``) blocks, quoting and escapes.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Iterable, Iterator

from mtplint.source import MappedText, SourceFile, Span
from mtplint.startup import DeferredPattern, yaml

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_ScalarNode, _SequenceNode = yaml.ScalarNode, yaml.SequenceNode

try:  # the C composer is much faster; fall back where libyaml is missing
    from yaml import CSafeLoader as _SafeLoader
    from yaml._yaml import CParser as _Composer
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _Composer  # type: ignore[assignment]
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]

_TAG_PREFIX = "tag:yaml.org,2002:"
_STR_TAG, _SEQ_TAG, _MAP_TAG = _TAG_PREFIX + "str", _TAG_PREFIX + "seq", _TAG_PREFIX + "map"


class _Loader(_Composer):
    """The safe composer with a quicker tag resolver: the composer asks for every node's tag, and
    PyYAML's resolver (Python, a third of composing) concatenates lists and tries its regular
    expressions anew for each scalar. A plain scalar's tag depends on its text alone: a text whose
    first character no expression starts with (most) is a string at once, and the others are
    resolved once for many files (a tree's files say the same numbers, flags and words over and
    over): by string tests where they can tell (:func:`_quick_tag`, which spares compiling the
    expressions), else by the same expressions in the same order; the default tags need no lookup.

    Only the composer is set up (nothing is ever constructed), and with no path resolvers the
    composer's calls on entering and leaving each node have nothing to do: they go to C functions
    that ignore their arguments, which spares a Python call per node each."""

    yaml_implicit_resolvers = _SafeLoader.yaml_implicit_resolvers

    descend_resolver = staticmethod(operator.is_)  # (parent, index): the answer is ignored
    ascend_resolver = staticmethod(tuple)  # (): the answer is ignored

    def resolve(self, kind: type[yaml.Node], value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is not _ScalarNode:
            return _SEQ_TAG if kind is _SequenceNode else _MAP_TAG
        if not implicit[0]:  # quoted or block text: a string
            return _STR_TAG
        candidates = self.yaml_implicit_resolvers.get(value[:1])
        if candidates is None:
            return _STR_TAG
        tag = _PLAIN_TAGS.get(value)
        if tag is None:
            tag = _quick_tag(value) if _STOCK_RESOLVERS else None
            if tag is None:  # compiles the expressions tried (mtplint.startup defers them)
                tag = next((candidate for candidate, expression in candidates if expression.match(value)), _STR_TAG)
            if len(_PLAIN_TAGS) >= _PLAIN_TAGS_HELD:  # a bound on memory: start again
                _PLAIN_TAGS.clear()
            _PLAIN_TAGS[value] = tag
        return tag


#: the tags of plain texts :meth:`_Loader.resolve` has resolved (those an expression may match)
_PLAIN_TAGS: dict[str, str] = {}
_PLAIN_TAGS_HELD = 4096
#: whether tags follow from a scalar's text and first character alone (PyYAML's safe resolvers,
#: with no path resolvers and none for any first character); if not, PyYAML's own loader resolves
_RESOLVES_BY_TEXT = not _SafeLoader.yaml_path_resolvers and None not in _SafeLoader.yaml_implicit_resolvers
_COMPOSER: type[_Loader] | type[_SafeLoader] = _Loader if _RESOLVES_BY_TEXT else _SafeLoader
_MERGE_TAG, _NULL_TAG = _TAG_PREFIX + "merge", _TAG_PREFIX + "null"
_SKIPPABLE = set(" \t\r\n\\\"'")
_BLANK = DeferredPattern(r"[ \t\n]")
_ESCAPE_LENGTHS = {"x": 4, "u": 6, "U": 10}
#: values :meth:`YNode.python` may build for one call (aliases expanded)
MAX_PYTHON_VALUES = 10_000


# -- plain scalars' tags without PyYAML's expressions ------------------------------------------
# Compiling the float, int, bool and null expressions (mtplint.startup defers it to their first use)
# costs more than the rest of telling a scalar's tag (docs/startup.md). The texts most files hold (ports, counts, words)
# are told apart below by string tests that give PyYAML's own answer; a text they cannot tell is
# left to the expressions.

#: PyYAML's safe implicit resolvers (YAML 1.1): each tag's name and the first characters it is
#: tried for, in the order they are tried (the first expression that matches gives the tag)
_STOCK_ORDER = (("bool", "yYnNtTfFoO"), ("float", "-+0123456789."), ("int", "-+0123456789"), ("merge", "<"),
                ("null", ("~", "n", "N", "")), ("timestamp", "0123456789"), ("value", "="), ("yaml", "!&*"))
#: the tags whose expressions match a finite set of words, each word with its tag (no word
#: starts with a character a number may start with, and no two tags share a word)
_WORD_TAGS = {
    **dict.fromkeys(("yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE",
                     "on", "On", "ON", "off", "Off", "OFF"), _TAG_PREFIX + "bool"),
    **dict.fromkeys(("~", "null", "Null", "NULL", ""), _NULL_TAG),
    "<<": _MERGE_TAG, "=": _TAG_PREFIX + "value", **dict.fromkeys("!&*", _TAG_PREFIX + "yaml"),
}
_INT_TAG, _FLOAT_TAG = _TAG_PREFIX + "int", _TAG_PREFIX + "float"
_NUMBER_FIRSTS = frozenset("-+.0123456789")
_DIGITS = frozenset("0123456789")  # (the expressions' [0-9]: str.isdigit would take "١" and "²" too)
_NONZERO = frozenset("123456789")
_DECIMAL = frozenset("0123456789_")  # a decimal int's characters after its first digit
#: every character any float alternative may hold: a text with another is not a float
_FLOAT_CHARS = frozenset("0123456789_.:+-eEiInNfFaA")


def _stock_resolvers(resolvers: dict[Any, list[tuple[str, Any]]]) -> bool:
    """Whether ``resolvers`` are PyYAML's own safe ones, which :func:`_quick_tag` answers for: the
    same tags in the same order for each first character, and the very expressions PyYAML's
    resolver module registered (a loader given other expressions for the same tags, say YAML 1.2's
    booleans, gets a table of its own)."""
    expected: dict[str, list[str]] = {}
    for name, firsts in _STOCK_ORDER:
        for first in firsts:
            expected.setdefault(first, []).append(_TAG_PREFIX + name)
    tags = {first: [tag for tag, _ in group] for first, group in resolvers.items()}
    return tags == expected and resolvers == yaml.resolver.Resolver.yaml_implicit_resolvers


def _quick_tag(value: str) -> str | None:
    """The tag PyYAML's safe resolvers give the plain text ``value`` (whose first character some
    expression is tried for), or None where these tests cannot tell."""
    if value.endswith("\n"):  # `$` matches before a final newline too: the expressions decide
        return None
    tag = _WORD_TAGS.get(value)
    if tag is not None:
        return tag
    if value[0] not in _NUMBER_FIRSTS:  # only the words' expressions are tried for this character
        return _STR_TAG
    return _number_tag(value)


def _number_tag(value: str) -> str | None:
    """:func:`_quick_tag` for a text starting with a sign, a dot or a digit: float is tried first,
    then int, then (for a digit) timestamp."""
    body = value[1:] if value[0] in "+-" else value  # every float and int may take a sign
    if "." in value:
        whole, _, fraction = body.partition(".")
        if whole and _DIGITS.issuperset(whole) and _DIGITS.issuperset(fraction):
            return _FLOAT_TAG  # [-+]?[0-9]+\.[0-9]* is a float
        # each float alternative holds exactly one dot and only certain characters (no int holds a dot)
        if value.count(".") == 1 and _FLOAT_CHARS.issuperset(value):
            return None
    else:  # (no float without a dot)
        lead = body[:1]
        if lead == "0":  # 0, or maybe 0b..., 0x... or octal
            return _INT_TAG if body == "0" else None
        if lead in _NONZERO:  # only the decimal and the sexagesimal alternatives start so
            head, colon, rest = body.partition(":")
            if not colon:
                if _DECIMAL.issuperset(head):
                    return _INT_TAG  # int is tried before timestamp
            elif _DECIMAL.issuperset(head) and all(_base_60_digit(part) for part in rest.split(":")):
                return None  # a sexagesimal int (e.g. 22:22): left to the expression
        # (else no int: each starts with a digit after the sign, and 1-9 only the two above)
    # neither float nor int: a timestamp starts with four digits and a "-"
    if value[4:5] == "-" and _DIGITS.issuperset(value[:4]):
        return None
    return _STR_TAG


def _base_60_digit(part: str) -> bool:
    """Whether ``part`` may follow a colon in a sexagesimal int: one digit, or two starting 0-5."""
    return 0 < len(part) <= 2 and _DIGITS.issuperset(part) and (len(part) == 1 or part[0] <= "5")


#: whether :func:`_quick_tag` may answer for the loader's resolvers
_STOCK_RESOLVERS = _RESOLVES_BY_TEXT and _stock_resolvers(_Loader.yaml_implicit_resolvers)


class YamlError(Exception):
    """A YAML document that cannot be read; carries the offset of the problem."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


_NO_ITEMS: list[YNode] = []
_NO_PAIRS: list[tuple[YNode, YNode]] = []


class YNode:
    """A YAML node: ``kind`` is ``map``, ``seq`` or ``scalar``.

    A scalar read from a file aligns its value with the raw text (:func:`align`) only when a
    position inside it is first asked for: most scalars of a large manifest are never reported, and
    the alignment is the costliest step of reading. (A plain class: tens of thousands are built per
    large file.)"""

    __slots__ = ("_text", "_value", "end", "items", "kind", "pairs", "source", "start", "style", "tag")

    def __init__(self, kind: str, tag: str, start: int, end: int, source: SourceFile, text: MappedText | None = None,
                 style: str | None = None, items: list[YNode] | None = None,
                 pairs: list[tuple[YNode, YNode]] | None = None, value: builtins.str | None = None) -> None:
        self.kind = kind
        self.tag = tag
        self.start = start
        self.end = end
        self.source = source
        self.style = style
        # a node without children shares one empty list (tens of thousands of scalars per large
        # file): the trees are shared by their readers, who build new nodes, never change lists
        self.items: list[YNode] = _NO_ITEMS if items is None else items
        self.pairs: list[tuple[YNode, YNode]] = _NO_PAIRS if pairs is None else pairs
        self._text = text
        # ``value``: a scalar read from a file, aligned with its raw text on first use of ``text``
        self._value: builtins.str | None = text.text if text is not None else value

    @property
    def text(self) -> MappedText | None:
        """The scalar's value with the offset of each character (None for a map or a sequence)."""
        if self._text is None and self._value is not None:
            self._text = align(self.source, self._value, _content_start(self.source, self.start, self.style), self.end)
        return self._text

    @text.setter
    def text(self, value: MappedText | None) -> None:
        self._text = value
        self._value = value.text if value is not None else None

    # -- reading ------------------------------------------------------------------------------
    @property
    def is_map(self) -> bool:
        return self.kind == "map"

    @property
    def is_seq(self) -> bool:
        return self.kind == "seq"

    @property
    def is_scalar(self) -> bool:
        return self.kind == "scalar"

    @property
    def str(self) -> builtins.str:
        return self._value if self._value is not None else ""

    # the readers' most frequent calls: they look at the slots, not through ``is_scalar``/``str``
    def get(self, key: builtins.str) -> YNode | None:
        if key:  # only a scalar has a text (a collection's is None)
            for key_node, value in self.pairs:
                if key_node._value == key:
                    return value
            return None
        for key_node, value in self.pairs:
            if key_node.kind == "scalar" and not key_node._value:
                return value
        return None

    def key_node(self, key: builtins.str) -> YNode | None:
        for key_node, _ in self.pairs:
            if key_node.kind == "scalar" and (key_node._value or "") == key:
                return key_node
        return None

    def entries(self) -> Iterator[tuple[builtins.str, YNode, YNode]]:
        for key_node, value in self.pairs:
            if key_node.kind == "scalar":
                yield key_node._value or "", key_node, value

    def span(self) -> Span:
        return self.source.span(self.start, self.end)

    @property
    def is_null(self) -> bool:
        return self.kind == "scalar" and self.tag == _NULL_TAG

    def python(self, _depth: int = 0, _budget: list[int] | None = None) -> Any:
        """The plain Python value (YAML 1.1 core types); maps keep their order.

        Aliases are expanded here (the tree shares them), so the number of values built is
        capped: a "billion laughs" document raises :class:`YamlError` instead of eating memory.
        """
        budget = [MAX_PYTHON_VALUES] if _budget is None else _budget
        budget[0] -= 1
        if budget[0] < 0:
            raise YamlError("YAML aliases expand to too many values", self.start)
        if _depth > 200:
            raise YamlError("YAML nesting too deep", self.start)
        if self.kind == "map":
            return {k: v.python(_depth + 1, budget) for k, _, v in self.entries()}
        if self.kind == "seq":
            return [item.python(_depth + 1, budget) for item in self.items]
        return scalar_value(self.str, self.tag)


def scalar_text(node: YNode | None) -> str | None:
    """The text of a scalar that is not null; None for a null, a collection or no node. (The
    extractors ask it of most nodes they read.)"""
    if node is None or node.kind != "scalar" or node.tag == _NULL_TAG:
        return None
    return node._value if node._value is not None else ""


def scalar_value(text: str, tag: str) -> Any:
    """Construct a scalar the way PyYAML's SafeLoader would, without its constructor."""
    kind = tag[len(_TAG_PREFIX):] if tag.startswith(_TAG_PREFIX) else "str"
    if kind == "null":
        return None
    if kind == "bool":
        return text.lower() in ("yes", "true", "on", "y")
    if kind == "int":
        cleaned = text.replace("_", "")
        try:
            if cleaned.lower().startswith(("0x", "-0x", "+0x")):
                return int(cleaned, 16)
            if cleaned.lower().startswith(("0o",)):
                return int(cleaned[2:], 8)
            if len(cleaned) > 1 and cleaned.startswith("0") and cleaned.isdigit():
                return int(cleaned, 8)
            return int(cleaned)
        except ValueError:
            return text
    if kind == "float":
        cleaned = text.replace("_", "").lower()
        if cleaned in (".inf", "+.inf"):
            return float("inf")
        if cleaned == "-.inf":
            return float("-inf")
        if cleaned == ".nan":
            return float("nan")
        try:
            return float(cleaned)
        except ValueError:
            return text
    return text


def align(source: SourceFile, value: str, raw_start: int, raw_end: int) -> MappedText:
    """Map each character of ``value`` to the raw characters it was read from.

    Walks the raw text in order; a value character is matched to the next raw character equal to
    it as long as only quoting, escapes and whitespace lie in between. Anything else (an escape
    that produced a different character, a folded line break) maps to the current raw position.
    """
    raw = source.text
    length = len(value)
    if raw_start + length <= raw_end and raw.startswith(value, raw_start):
        # the value is its raw text (a plain scalar, or a quoted one without escapes: nine in ten
        # scalars): the walk below would map each character to the next raw one. A range, as for
        # any text read straight from a file: its slices and spans need no list of offsets
        return MappedText(value, range(raw_start, raw_start + length + 1), source)
    return MappedText(value, _walk_offsets(raw, value, raw_start, raw_end), source)


def _walk_offsets(raw: str, value: str, raw_start: int, raw_end: int) -> list[int]:
    """:func:`align`'s offsets, by walking the raw text character by character."""
    offsets: list[int] = []
    pointer = raw_start
    index = 0
    length = len(value)
    # where a word's shortcut (below) last failed: the rest of that word is walked
    walk_until = 0
    while index < length:
        char = value[index]
        index += 1
        if char in " \t\n":
            if pointer < raw_end and raw[pointer] in " \t\r\n":
                offsets.append(pointer)
                pointer += 1
            else:
                offsets.append(min(pointer, raw_end))
            continue
        probe = pointer
        while probe < raw_end and raw[probe] != char and raw[probe] in _SKIPPABLE:
            probe += 1
        if probe < raw_end and raw[probe] == char:
            offsets.append(probe)
            pointer = probe + 1
            if index >= walk_until:
                # A character equal to the raw one at the pointer maps to it and moves the pointer
                # on by one, so a run of equal characters maps in one step: the rest of the raw
                # line if the value goes on with it (a line of a block), else the rest of the word
                # if the raw text goes on with it (a folded command's words; each word is tried once).
                line_end = raw.find("\n", pointer, raw_end)
                run = raw[pointer:raw_end if line_end < 0 else line_end]
                if not value.startswith(run, index):
                    word_end = _BLANK.search(value, index)
                    walk_until = length if word_end is None else word_end.start()
                    run = value[index:walk_until]
                    if not raw.startswith(run, pointer, raw_end):
                        continue
                offsets.extend(range(pointer, pointer + len(run)))
                pointer += len(run)
                index += len(run)
        elif pointer < raw_end and raw[pointer] == "\\":
            # an escape such as \u00e9 produced this character: consume the whole sequence
            offsets.append(pointer)
            pointer += _ESCAPE_LENGTHS.get(raw[pointer + 1 : pointer + 2], 2)
        else:
            offsets.append(min(pointer, raw_end))
    offsets.append(min(pointer, raw_end))
    return offsets


def _content_start(source: SourceFile, start: int, style: str | None) -> int:
    if style in ("|", ">"):
        newline = source.text.find("\n", start)
        return len(source.text) if newline < 0 else newline + 1
    if style in ("'", '"'):
        return start + 1
    return start


_new_node = object.__new__


def _scalar_node(node: yaml.ScalarNode, source: SourceFile) -> YNode:
    """:class:`YNode` of a composed scalar, its slots set directly: most nodes are scalars, and
    this is quicker than ``YNode(...)`` with its defaults."""
    result: YNode = _new_node(YNode)
    result.kind = "scalar"
    result.tag = node.tag
    result.start = node.start_mark.index
    result.end = node.end_mark.index
    result.source = source
    result.style = node.style
    result.items = _NO_ITEMS
    result.pairs = _NO_PAIRS
    result._text = None
    result._value = node.value
    return result


def _collection_node(kind: str, node: yaml.Node, source: SourceFile) -> YNode:
    """:class:`YNode` of a composed sequence or mapping (``kind``), its children not set yet: as
    :func:`_scalar_node`, its slots set directly."""
    result: YNode = _new_node(YNode)
    result.kind = kind
    result.tag = node.tag
    result.start = node.start_mark.index
    result.end = node.end_mark.index
    result.source = source
    result.style = None
    result.items = _NO_ITEMS
    result.pairs = _NO_PAIRS
    result._text = None
    result._value = None
    return result


def _with_merged(pairs: list[tuple[YNode, YNode]], merged: list[tuple[YNode, YNode]]) -> list[tuple[YNode, YNode]]:
    """``pairs`` and then the merged (``<<``) pairs: explicit keys win over merged ones, an earlier
    merged map over a later one."""
    names = {k.str for k, _ in pairs if k.kind == "scalar"}
    for key_node, value_node in merged:
        if key_node.kind == "scalar" and key_node.str not in names:
            names.add(key_node.str)
            pairs.append((key_node, value_node))
    return pairs


#: (the key node whose value is never read, the key node of the same name after it in the mapping)
DuplicateKey = tuple[YNode, YNode]


def _last_of_each_key(pairs: list[tuple[YNode, YNode]], dead: list[DuplicateKey]) -> list[tuple[YNode, YNode]]:
    """``pairs`` with only the last pair of each scalar key: YAML readers (PyYAML, compose-go, the
    engines' ``yaml.safe_load``) keep the last value of a key given twice, so the earlier ones are
    dead. Each dead key is noted in ``dead`` with the key that replaces it."""
    # every mapping but a mistaken one has as many texts as keys (a collection key's is None: two
    # of them fall through to the count below, which leaves them out)
    if len(pairs) < 2 or len({key._value for key, _ in pairs}) == len(pairs):
        return pairs
    last: dict[str | None, int] = {}
    for index, (key, _) in enumerate(pairs):
        if key.kind == "scalar":
            last[key._value] = index
    kept = []
    for index, pair in enumerate(pairs):
        key = pair[0]
        if key.kind == "scalar" and last[key._value] != index:
            dead.append((key, pairs[last[key._value]][0]))
            continue
        kept.append(pair)
    return kept


class _Converter:
    """PyYAML's nodes as :class:`YNode` trees, an alias sharing the node of its anchor; a text
    nested too deep or with too many nodes is a :class:`YamlError` at the node where the limit is
    passed."""

    def __init__(self, source: SourceFile, max_nodes: int) -> None:
        self.source = source
        self.seen: dict[int, YNode] = {}
        self.budget = max_nodes
        self.duplicates: list[DuplicateKey] = []

    def convert(self, node: yaml.Node, depth: int = 0) -> YNode:
        cached = self.seen.get(id(node))
        if cached is not None:
            return cached
        if depth > 500:
            raise YamlError("YAML nesting too deep", node.start_mark.index)
        self.budget -= 1
        if self.budget < 0:
            raise YamlError("YAML document too large (too many nodes)", node.start_mark.index)
        if node.__class__ is _ScalarNode:
            result = self.seen[id(node)] = _scalar_node(node, self.source)
            return result
        convert = self.convert
        depth += 1
        if node.__class__ is _SequenceNode:
            result = self.seen[id(node)] = _collection_node("seq", node, self.source)
            result.items = [convert(item, depth) for item in node.value]
            return result
        result = self.seen[id(node)] = _collection_node("map", node, self.source)
        pairs: list[tuple[YNode, YNode]] = []
        merged: list[tuple[YNode, YNode]] = []
        for key, value in node.value:
            if key.tag == _MERGE_TAG:
                sources = value.value if value.__class__ is _SequenceNode else [value]
                for merge_source in sources:
                    converted = convert(merge_source, depth)
                    if converted.kind == "map":
                        merged.extend(converted.pairs)
                continue
            pairs.append((convert(key, depth), convert(value, depth)))
        pairs = _last_of_each_key(pairs, self.duplicates)
        result.pairs = _with_merged(pairs, merged) if merged else pairs
        return result


class _Unusual(Exception):
    """A tree :class:`_TreeBuilder` leaves to :class:`_Converter`."""


#: nesting up to which :class:`_TreeBuilder` builds (far more than real files have, far less than
#: the limit :class:`_Converter` reports at)
_BUILDER_DEPTH = 100


class _TreeBuilder:
    """:class:`_Converter` for a text without anchors, where every node is reached once (no alias
    to share): a collection makes its scalar children itself and counts its children at once.
    Nesting deeper than :data:`_BUILDER_DEPTH` or more nodes than the budget raise
    :class:`_Unusual`, and :class:`_Converter` tells where the limit is passed."""

    def __init__(self, source: SourceFile, max_nodes: int) -> None:
        self.source = source
        self.budget = max_nodes
        self.duplicates: list[DuplicateKey] = []

    def documents(self, nodes: list[yaml.Node]) -> list[YNode]:
        self.budget -= len(nodes)
        documents = [self.build(node) for node in nodes]
        # checked on the way only when a collection is entered: a merge's count comes after
        if self.budget < 0:
            raise _Unusual
        return documents

    def build(self, node: yaml.Node, depth: int = 0) -> YNode:
        """The tree of ``node``, which its caller has counted."""
        source = self.source
        if node.__class__ is _ScalarNode:  # a document or a merged node that is a scalar
            return _scalar_node(node, source)
        if depth >= _BUILDER_DEPTH:
            raise _Unusual
        children: list[Any] = node.value
        self.budget -= len(children) if node.__class__ is _SequenceNode else 2 * len(children)
        if self.budget < 0:
            raise _Unusual
        build = self.build
        depth += 1
        result = _collection_node("seq" if node.__class__ is _SequenceNode else "map", node, source)
        if node.__class__ is _SequenceNode:
            result.items = [_scalar_node(item, source) if item.__class__ is _ScalarNode else build(item, depth)
                            for item in children]
            return result
        pairs: list[tuple[YNode, YNode]] = []
        merged: list[tuple[YNode, YNode]] = []
        for key, value in children:
            if key.tag == _MERGE_TAG:
                sources = value.value if value.__class__ is _SequenceNode else [value]
                # neither the merge key nor its value is a node of the tree, each merged node is
                self.budget += 2 - len(sources)
                for merge_source in sources:
                    converted = build(merge_source, depth)
                    if converted.kind == "map":
                        merged.extend(converted.pairs)
                continue
            pairs.append((_scalar_node(key, source) if key.__class__ is _ScalarNode else build(key, depth),
                          _scalar_node(value, source) if value.__class__ is _ScalarNode else build(value, depth)))
        pairs = _last_of_each_key(pairs, self.duplicates)
        result.pairs = _with_merged(pairs, merged) if merged else pairs
        return result


def load_all(source: SourceFile, max_nodes: int = 200_000) -> list[YNode]:
    """Every document of a YAML stream, as positioned node trees (empty documents skipped).

    A file the run's loader read is parsed once for all its readers (a manifest that a
    kustomization, a launch's ``--config`` and a fix all read; see :class:`~mtplint.source.Parses`):
    they share the trees, which they read and build new nodes from rather than change."""
    return list(_parsed(source, max_nodes))


def duplicate_keys(source: SourceFile, max_nodes: int = 200_000) -> list[DuplicateKey]:
    """The keys of ``source``'s mappings given more than once, each (dead key, the key that replaces
    it); the trees :func:`load_all` returns hold only the last of them. Raises :class:`YamlError`."""
    return _parsed(source, max_nodes).duplicates


class _Documents(list[YNode]):
    """A stream's document trees and the duplicate keys met while building them."""

    def __init__(self, documents: Iterable[YNode], duplicates: list[DuplicateKey]) -> None:
        super().__init__(documents)
        self.duplicates = duplicates


def _parsed(source: SourceFile, max_nodes: int) -> _Documents:
    parses = source.parses
    kind = f"yaml {max_nodes}"
    parsed = parses.get(source, kind) if parses is not None else None
    if parsed is None:
        try:
            parsed = _load_all(source, max_nodes)
        except YamlError as error:
            parsed = error
        if parses is not None:
            parses.put(source, kind, parsed)
    if isinstance(parsed, YamlError):
        raise YamlError(str(parsed), parsed.offset)
    assert isinstance(parsed, _Documents)
    return parsed


def _load_all(source: SourceFile, max_nodes: int) -> _Documents:
    try:
        # (the stubs know only PyYAML's own loaders, not a composer without a constructor)
        nodes = list(yaml.compose_all(source.text, Loader=_COMPOSER))  # type: ignore[arg-type]
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        offset = mark.index if mark is not None else 0
        problem = error.problem or str(error)
        raise YamlError(f"invalid YAML: {problem}", offset) from error
    except (yaml.YAMLError, ValueError, RecursionError) as error:
        raise YamlError(f"invalid YAML: {error}", 0) from error
    nodes = [node for node in nodes if node is not None]
    # a node reached twice is an alias of an anchored one: without an anchor in the text every
    # node is reached once, and remembering each (most of them scalars) is wasted work
    if "&" not in source.text:
        builder = _TreeBuilder(source, max_nodes)
        try:
            return _Documents(builder.documents(nodes), builder.duplicates)
        except _Unusual:
            pass
    converter = _Converter(source, max_nodes)
    return _Documents([converter.convert(node) for node in nodes], converter.duplicates)


def load(source: SourceFile) -> YNode | None:
    """The first document, or ``None`` for an empty file."""
    documents = load_all(source)
    return documents[0] if documents else None
