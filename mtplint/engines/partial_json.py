"""A JSON object argument with shell expansions nobody can resolve in it, read as far as it is known.

``--speculative-config "{\\"method\\":\\"mtp\\",\\"num_speculative_tokens\\":$(nproc)}"``: the shell
reader keeps an expansion it cannot resolve as it was written (``$(nproc)``, ``${K}``, ``$K``, a
backquoted command). The engine receives a number there; which one is unknown, but ``method`` is
``"mtp"`` whatever it is. :func:`partial_object` reads the literal keys and values of such an object
and names the keys whose value is not known.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_PLACEHOLDER = "\x00unresolved\x00"


class PartialObject:
    """The keys of a JSON object with known values (``known``) and those without (``unknown``)."""

    __slots__ = ("known", "unknown")

    def __init__(self, known: dict[str, Any], unknown: list[str]) -> None:
        self.known = known
        self.unknown = unknown


def partial_object(text: str) -> PartialObject | None:
    """The object ``text`` spells once its expansions are replaced by values; None when it is no
    object then (the expansion is a whole key, or several members, or the text is no JSON)."""
    replaced = _replace_expansions(text)
    if replaced is None:
        return None
    try:
        value = json.loads(replaced, strict=False)
    except ValueError:
        return None
    if not isinstance(value, dict) or any(_PLACEHOLDER in key for key in value):
        return None
    known = {key: item for key, item in value.items() if not _holds_placeholder(item)}
    return PartialObject(known, [key for key in value if key not in known])


def _holds_placeholder(value: Any) -> bool:
    if isinstance(value, str):
        return _PLACEHOLDER in value
    if isinstance(value, dict):
        return any(_holds_placeholder(key) or _holds_placeholder(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_holds_placeholder(item) for item in value)
    return False


def _replace_expansions(text: str) -> str | None:
    """``text`` with each shell expansion replaced: inside a JSON string by the placeholder's
    characters, elsewhere (a value of its own) by the placeholder as a string. None: no expansion."""
    parts: list[str] = []
    index = 0
    in_string = False
    found = False
    while index < len(text):
        char = text[index]
        if in_string and char == "\\":
            parts.append(text[index:index + 2])
            index += 2
            continue
        if char == '"':
            in_string = not in_string
        elif char in "$`":
            end = _expansion_end(text, index)
            if end > index + 1:
                found = True
                parts.append(_PLACEHOLDER if in_string else json.dumps(_PLACEHOLDER))
                index = end
                continue
        parts.append(char)
        index += 1
    return "".join(parts) if found else None


def _expansion_end(text: str, index: int) -> int:
    """Just past the expansion at ``index`` (``$NAME``, ``${...}``, ``$(...)``, backquotes), where
    the shell ends it: a ``)`` or ``}`` in quotes inside it does not close it."""
    # only JSON that holds an expansion gets here: importing the shell package (its interpreter and
    # lexer) for every vLLM launch would load it for a compose file or a manifest too
    from mtplint.extract.shell.scanning import skip_backticks, skip_braces, skip_parens  # noqa: PLC0415 - JSON with an expansion only

    if text[index] == "`":
        return min(skip_backticks(text, index + 1) + 1, len(text))
    if text.startswith("${", index):
        return min(skip_braces(text, index + 2) + 1, len(text))
    if text.startswith("$(", index):
        return min(skip_parens(text, index + 2) + 1, len(text))
    position = index + 1
    while position < len(text) and (text[position].isalnum() or text[position] == "_"):
        position += 1
    return position
