"""CPython's ``argparse`` as the vLLM and SGLang servers run it: which argv words are options, which
registered option a word names, and how many of the words after an option it takes.

Both servers build their command line with ``argparse.ArgumentParser`` (vLLM through its
``FlexibleArgumentParser``, which rewrites argv and then calls ``ArgumentParser.parse_args``). The
rules below are those of CPython 3.11's ``Lib/argparse.py`` (``_parse_optional``,
``_get_option_tuples``, ``_match_argument`` and their error messages), the interpreter both engines'
conformance answers were recorded with (SGLang ships ``cp311`` wheels). What differs between the
engines is data: the option strings each release registers, in registration order (generated from
its wheel), and its parser's ``allow_abbrev``; each engine keeps its own value conversion and how it
stores a value.

The model keeps going where argparse exits on the first error, so that every rejected word is
reported: an ambiguous prefix is a :class:`OptionWord` with candidates instead of an exit. Not
modelled: one-letter switches written together (``-xyz``; the only one-letter switch either engine
registers is SGLang's ``-h``, and ``-hx`` is refused with "ignored explicit argument" both ways), and
the changes Python 3.12 made to single-dash prefixes (both engines' answers were recorded under 3.11).
"""

from __future__ import annotations

import bisect
import re
from functools import cache

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

#: words people write after a switch meaning a boolean (argparse takes them as stray arguments)
BOOL_WORDS = frozenset({"true", "false", "1", "0", "yes", "no", "on", "off"})


@cache
def _negative_number() -> re.Pattern[str]:
    """``ArgumentParser._negative_number_matcher`` (compiled when a parse first needs it, not at import)."""
    return re.compile(r"^-\d+$|^-\d*\.\d+$")


class OptionWord:
    """What ``_parse_optional`` makes of a word that is an option: the registered option string it
    names and the value glued to it (after ``=``, or after a one-letter option), or for an option
    argparse does not know the word itself (``known`` false), with the registered options an
    ambiguous prefix could stand for (``candidates``, in registration order)."""

    __slots__ = ("candidates", "explicit", "known", "option")

    def __init__(self, option: str, explicit: str | None, known: bool = True,
                 candidates: tuple[str, ...] = ()) -> None:
        self.option = option
        self.explicit = explicit
        self.known = known
        self.candidates = candidates

    @property
    def ambiguous(self) -> bool:
        return bool(self.candidates)


class ParserOptions:
    """The option strings one parser registered, as ``_option_string_actions`` holds them.

    ``registered`` iterates in registration order (a later registration of the same string keeps
    the first one's place, as a dict does); only membership and that order are read from it.
    ``known``, when given, is every option string ``registered`` may hold (more is allowed), in
    sorted order: a prefix or a negative number is then matched against it with membership tests,
    and ``registered`` is iterated only to order the candidates of an ambiguous prefix (a flag
    index's release answers membership without building its whole option set).
    """

    __slots__ = ("_exact", "_negative_number_like", "_sorted", "allow_abbrev", "registered")

    def __init__(self, registered: Mapping[str, object], allow_abbrev: bool = True,
                 known: Sequence[str] | None = None) -> None:
        self.registered = registered
        self.allow_abbrev = allow_abbrev
        #: the option strings in order (or more of them): those a prefix may stand for are one run of them
        self._sorted = known
        #: whether ``_sorted`` holds only registered option strings
        self._exact = known is None
        self._negative_number_like: bool | None = None

    def __eq__(self, other: object) -> bool:
        """The same option strings in the same order, read with the same ``allow_abbrev`` (what
        the reading depends on; the actions they name are the owner's)."""
        if not isinstance(other, ParserOptions):
            return NotImplemented
        return self.allow_abbrev == other.allow_abbrev and list(self.registered) == list(other.registered)

    __hash__ = None  # type: ignore[assignment]  # equal by contents, which a table may still change

    def parse_optional(self, text: str) -> OptionWord | None:
        """``ArgumentParser._parse_optional``: None when argparse takes ``text`` for an argument
        (a positional or an option's value), else the option it names."""
        registered = self.registered
        if not text or text[0] != "-":
            return None
        if text in registered:
            return OptionWord(text, None)
        if len(text) == 1:
            return None
        if "=" in text:
            option, _, explicit = text.partition("=")
            if option in registered:
                return OptionWord(option, explicit)
        matches = self._option_tuples(text)
        if len(matches) > 1:
            return OptionWord(text, None, False, tuple(option for option, _ in matches))
        if matches:
            return OptionWord(*matches[0])
        if _negative_number().match(text) and not self.negative_number_like():
            return None
        if " " in text:
            return None
        return OptionWord(text, None, False)

    def negative_number_like(self) -> bool:
        """``_has_negative_number_optionals``: some option string itself looks like a negative number
        (then such a word is an option, else an argument)."""
        if self._negative_number_like is None:
            options = self.registered if self._sorted is None else self._sorted
            self._negative_number_like = any(_negative_number().match(option) and option in self.registered
                                             for option in options)
        return self._negative_number_like

    def _option_tuples(self, text: str) -> list[tuple[str, str | None]]:
        """``ArgumentParser._get_option_tuples``: the options ``text`` may abbreviate, each with the
        value glued to it, in registration order."""
        if text[1] == "-":
            if not self.allow_abbrev:
                return []
            prefix, equals, explicit = text.partition("=")
            glued = explicit if equals else None
            return [(option, glued) for option in self._starting_with(prefix)]
        # a one-letter option takes the rest of the word as its value (``-q<value>``); a longer
        # single-dash option may be abbreviated whatever allow_abbrev says
        short = text[:2]
        matches = self._starting_with(text)
        if short not in self.registered:
            return [(option, None) for option in matches]
        return [(option, text[2:] if option == short else None) for option in self._in_order({short, *matches})]

    def _starting_with(self, prefix: str) -> list[str]:
        """The registered options that start with ``prefix``, in registration order."""
        ordered = self._sorted
        if ordered is None:
            ordered = self._sorted = sorted(self.registered)
        at = bisect.bisect_left(ordered, prefix)
        found: list[str] = []
        while at < len(ordered) and ordered[at].startswith(prefix):
            if self._exact or ordered[at] in self.registered:
                found.append(ordered[at])
            at += 1
        return found if len(found) < 2 else self._in_order(found)

    def _in_order(self, options: Iterable[str]) -> list[str]:
        wanted = set(options)
        if len(wanted) < 2:
            return list(wanted)
        return [option for option in self.registered if option in wanted]


class ArgumentCountError(ValueError):
    """An option followed by fewer arguments than its ``nargs`` needs; ``str()`` is argparse's reason."""


def values_taken(nargs: int | str | None, available: int) -> int:
    """How many of the ``available`` argument words right after an option (up to the next option or
    ``--``) the option takes (``_match_argument`` of an optional); raises :class:`ArgumentCountError`
    when they are too few."""
    if nargs is None:
        if not available:
            raise ArgumentCountError("expected one argument")
        return 1
    if nargs == "?":
        return min(1, available)
    if nargs == "*":
        return available
    if nargs == "+":
        if not available:
            raise ArgumentCountError("expected at least one argument")
        return available
    count = int(nargs)
    if available < count:
        raise ArgumentCountError(f"expected {count} argument{'' if count == 1 else 's'}")
    return count


def ambiguous_message(word: OptionWord) -> str:
    return f"ambiguous option: {word.option} could match {', '.join(word.candidates)}"


def ignored_explicit_message(name: str, explicit: str) -> str:
    """A switch written with a value (``--enforce-eager=false``)."""
    return f"argument {name}: ignored explicit argument {explicit!r}"


def invalid_choice_message(name: str, value: object, choices: Iterable[object]) -> str:
    listed = ", ".join(repr(choice) for choice in choices)
    return f"argument {name}: invalid choice: {value!r} (choose from {listed})"


def unrecognized_message(words: Iterable[str]) -> str:
    return "unrecognized arguments: " + " ".join(words)
