"""Text edits on YAML files that keep everything around them byte-identical.

The positioned node tree of :mod:`mtplint.extract.yamlpos` says where a node starts and ends; the
edits here (and those of :mod:`mtplint.edits.lines`) work on whole lines of the original text so
that indentation, quoting, comments on other lines and line endings stay as the user wrote them. New lines copy the indentation and the
quoting of their siblings. Nothing is ever re-serialised.
"""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Edit
from mtplint.textpos import line_end, line_start

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mtplint.extract.yamlpos import YNode

# -- nodes ---------------------------------------------------------------------------------------


def walk(node: YNode, _seen: set[int] | None = None) -> Iterator[YNode]:
    """Every node of a tree, parents before children (shared alias nodes once)."""
    seen = _seen if _seen is not None else set()
    if id(node) in seen:
        return
    seen.add(id(node))
    yield node
    for key, value in node.pairs:
        yield from walk(key, seen)
        yield from walk(value, seen)
    for item in node.items:
        yield from walk(item, seen)


def is_flow(node: YNode) -> bool:
    return not node.is_scalar and node.source.text[node.start:node.start + 1] in ("{", "[")


def inside(node: YNode, child: YNode) -> bool:
    """``child`` is written inside ``node`` (not merged in with ``<<`` or shared through an alias)."""
    return node.start <= child.start and child.end <= node.end


def own_pairs(node: YNode) -> list[tuple[YNode, YNode]]:
    """The pairs written in this mapping, not those merged in with ``<<``."""
    return [(key, value) for key, value in node.pairs if inside(node, key)]


def has_merge(node: YNode) -> bool:
    return len(own_pairs(node)) != len(node.pairs) or "<<" in node.source.text[node.start:node.end]


def content_end(node: YNode) -> int:
    """Offset just past the last character that belongs to the node (block collections end where the
    next token starts, after trailing comments and blank lines; this stops at the node's own text)."""
    text = node.source.text
    if node.is_scalar or is_flow(node):
        end = node.end
        if node.style in ("|", ">"):
            while end > node.start and text[end - 1] in " \t\r\n":
                end -= 1
        return end
    children = [value for _, value in own_pairs(node)] if node.is_map else node.items
    if children:
        return max(content_end(child) for child in children)
    # only a merge key (``<<: *x``): the end of its line
    return line_end(text, node.start)


def sole_on_line(node: YNode, lead: str = "") -> bool:
    """Only whitespace (and ``lead``, e.g. ``-`` of a sequence item) precedes the node on its line."""
    text = node.source.text
    before = text[line_start(text, node.start):node.start].strip()
    return before == lead


def quote_style(nodes: list[YNode]) -> str:
    """The quote character the user's scalars use (``"``, ``'``, or ``""`` for plain)."""
    styles = [node.style for node in nodes if node.is_scalar]
    for style in reversed(styles):
        if style in ('"', "'"):
            return style
    return ""


def quoted(value: str, quote: str) -> str:
    if quote == "'":
        return "'" + value.replace("'", "''") + "'"
    if quote == '"':
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return value


def flow_separator(node: YNode) -> str:
    """The text between two items of a flow collection as the user wrote it (``, `` by default)."""
    children = [key for key, _ in own_pairs(node)] if node.is_map else node.items
    text = node.source.text
    if len(children) >= 2:
        previous_end = content_end(node.pairs[0][1]) if node.is_map else content_end(children[0])
        between = text[previous_end:children[1].start]
        if "\n" not in between and "," in between:
            return between
    return ", "


def flow_inner_padding(node: YNode) -> tuple[str, str]:
    """Spaces just inside the brackets of a flow collection (``{ a: 1 }`` → (" ", " "))."""
    text = node.source.text
    inner = text[node.start + 1:node.end - 1]
    return inner[:len(inner) - len(inner.lstrip(" "))], inner[len(inner.rstrip(" ")):]


# -- edits ---------------------------------------------------------------------------------------


def append_to_flow(node: YNode, item_text: str) -> Edit:
    """Add an item at the end of a flow collection (``[A=1]`` → ``[A=1, B=2]``, ``{}`` → ``{B: 2}``)."""
    source = node.source
    children = [value for _, value in own_pairs(node)] if node.is_map else node.items
    if not children:
        return Edit(source.span(node.start + 1, node.end - 1), item_text)
    end = max(content_end(child) for child in children)
    return Edit(source.span(end), flow_separator(node) + item_text)


def remove_from_flow(node: YNode, index: int) -> Edit | None:
    """Remove item ``index`` (a pair of a flow mapping, an item of a flow sequence) with one separator."""
    source = node.source
    if node.is_map:
        pairs = own_pairs(node)
        starts = [key.start for key, _ in pairs]
        ends = [content_end(value) for _, value in pairs]
    else:
        starts = [item.start for item in node.items]
        ends = [content_end(item) for item in node.items]
    if not 0 <= index < len(starts):
        return None
    if len(starts) == 1:
        return Edit(source.span(node.start + 1, node.end - 1), "")
    if index + 1 < len(starts):
        return Edit(source.span(starts[index], starts[index + 1]), "")
    return Edit(source.span(ends[index - 1], ends[index]), "")
