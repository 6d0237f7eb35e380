"""The SGLang engine model: argv / ``--config`` YAML / ``sglang.Engine(...)`` -> ServerArgs fields.

Facts are from SGLang's sources (``python/sglang/srt/server_args.py`` at the release tag named, "v0.5.9
L2352" being a line of that file at tag v0.5.9) and from the release wheels themselves: the flag
tables in ``data/sglang/<version>.json`` are generated from each wheel by
``tools/gen_sglang_flags.py``, and the version boundaries below name the wheels they were checked in.

``prepare_server_args`` builds a plain ``argparse.ArgumentParser`` (``allow_abbrev`` left at True),
whose option matching :mod:`mtplint.engines.argparse_model` models (exact option, ``--opt=value``,
unique prefix, "ambiguous option" listing candidates in registration order); this module adds type
conversion, ``choices`` after conversion, "unrecognized arguments", and last flag wins.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from functools import cache

from mtplint.engines import CliError, EngineContext, LaunchMemo, OptionValue, Parsed, WordReadings
from mtplint.engines.argparse_model import (
    BOOL_WORDS,
    ArgumentCountError,
    ParserOptions,
    ambiguous_message,
    ignored_explicit_message,
    invalid_choice_message,
    unrecognized_message,
    values_taken,
)
from mtplint.engines.compact import (
    FlagIndex,
    ReleaseNames,
    TableFiles,
    keyed,
    release_options,
    rows_by_option,
)
from mtplint.extract.launch import Launch
from mtplint.hardware import Hardware
from mtplint.models import ModelInfo
from mtplint.records import FrozenRecord, Record
from mtplint.settings import Setting, open_to_config
from mtplint.shipped import package_path
from mtplint.source import Span, Token
from mtplint.versions import EngineVersion, compare

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Container, Mapping
    from typing import Any, Final, Protocol

    from mtplint.catalogs import Catalogs
    from mtplint.engines.compact import ReleaseReading

    class _ReadsWords(Protocol):
        """What reading a word needs of a release: its option strings and each one's action (a
        :class:`FlagTable`, or a :class:`_IndexedRelease` made from the flag index)."""

        @property
        def version(self) -> str: ...

        @property
        def options(self) -> ParserOptions: ...

        @property
        def index(self) -> Mapping[str, Action]: ...

        @property
        def fields(self) -> Container[str]: ...


# --- version boundaries (each checked in the release wheel named) ---------------------------------

#: ``SGLANG_ENABLE_SPEC_V2 = EnvBool(False)`` first appears in srt/environ.py of
#: sglang-0.5.5-py3-none-any.whl (absent in 0.5.4, which has ``--enable-beta-spec`` instead).
SPEC_V2_ENV_ADDED = "0.5.5"
#: default flipped to ``EnvBool(True)`` in sglang-0.5.11 (environ.py; 0.5.10.post1 still False).
SPEC_V2_DEFAULT_TRUE = "0.5.11"
#: the variable is gone from environ.py in sglang-0.5.14 (arg_groups/speculative_hook.py only logs
#: "SGLANG_ENABLE_SPEC_V2 has been removed"); speculation always runs the V2 worker.
SPEC_V2_REMOVED = "0.5.14"
#: ``--mamba-scheduler-strategy {auto,no_buffer,extra_buffer}`` first in sglang-0.5.7 (absent in 0.5.6).
MAMBA_STRATEGY_ADDED = "0.5.7"
#: sglang-0.5.14 adds ``--mamba-radix-cache-strategy`` (field ``mamba_radix_cache_strategy``); the old
#: flag becomes a ``DeprecatedAliasStoreAction`` with that dest; ``auto`` resolves to ``extra_buffer``
#: when overlap scheduling or paging is on (server_args.py ``_handle_mamba_radix_cache``).
MAMBA_STRATEGY_RENAMED = "0.5.14"
#: ``--mamba-scheduler-strategy`` no longer registered at all in sglang-0.5.20.
MAMBA_STRATEGY_ALIAS_REMOVED = "0.5.20"
#: hybrid + speculation + radix cache + no_buffer: <= 0.5.9 silently disables the radix cache;
#: sglang-0.5.10's server_args.py raises "Speculative decoding for {arch} is not compatible with radix
#: cache when using --mamba-scheduler-strategy no_buffer" (``_handle_mamba_radix_cache``; v0.5.9 L1746-1763 warns
#: and disables the radix cache instead).
HYBRID_RADIX_ERROR = "0.5.10"
#: ``--speculative-algorithm`` choices: DFLASH added in sglang-0.5.11; choices removed (value
#: upper-cased, plugin registry) in sglang-0.5.12 (commit 95fb722d).
SPEC_CHOICES_REMOVED = "0.5.12"
#: auto ``mem_fraction_static`` reserve for speculation (v0.5.9 L1017-1069): +2048 MiB EAGLE family /
#: +6144 STANDALONE up to sglang-0.5.9, +4096 / +6144 in 0.5.10 ... 0.5.13, none from 0.5.14.
SPEC_RESERVE_4G = "0.5.10"
SPEC_RESERVE_REMOVED = "0.5.14"
#: ``sglang serve`` (sglang/cli) exists from sglang-0.5.5.
SERVE_ADDED = "0.5.5"
#: ServerArgs is a msgspec Struct (not a dataclass) from sglang-0.5.20: different TypeError wording.
MSGSPEC_SERVER_ARGS = "0.5.20"

EAGLE_FAMILY = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE")
#: algorithms whose launch caps max_running_requests at 48 when unset (v0.5.9 L2361-2366, later
#: ``arg_groups/speculative_hook.py``)
CAPPED_ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "FROZEN_KV_MTP", "DSPARK")
#: architectures whose auto (steps, topk, draft tokens) is (5, 4, 8) (v0.5.9 ``auto_choose_speculative_params``
#: L5741-5775)
WIDE_AUTO_ARCHS = ("LlamaForCausalLM", "Grok1ForCausalLM", "Grok1VForCausalLM")
NORMALISED_METHODS = {"EAGLE3": "eagle3", "NGRAM": "ngram", "STANDALONE": "draft_model", "DFLASH": "dflash"}
BUILTIN_ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "DSPARK", "UNO")

ENV_TRUE = ("true", "1", "yes", "y")
ENV_FALSE = ("false", "0", "no", "n")

#: argparse's own ``-h/--help``, registered first by ``ArgumentParser()``
_HELP_ROW: dict[str, Any] = {"options": ["-h", "--help"], "dest": "help", "kind": "help", "nargs": 0}


# --- flag tables ----------------------------------------------------------------------------------

class Action(FrozenRecord):
    __slots__ = ("options", "dest", "kind", "nargs", "type", "choices", "default", "const", "required", "deprecated",
                 "error_message", "action_class")
    options: Final[tuple[str, ...]]
    dest: Final[str]
    kind: Final[str]
    nargs: Final[int | str | None]
    type: Final[str]
    choices: Final[tuple[Any, ...] | None]
    default: Final[Any]
    const: Final[Any]
    required: Final[bool]
    deprecated: Final[bool]
    error_message: Final[str | None]
    action_class: Final[str]

    def __init__(self, options: tuple[str, ...], dest: str, kind: str, nargs: int | str | None, type: str,
                 choices: tuple[Any, ...] | None, default: Any, const: Any, required: bool, deprecated: bool,
                 error_message: str | None, action_class: str) -> None:
        self.options = options
        self.dest = dest
        self.kind = kind
        self.nargs = nargs
        self.type = type
        self.choices = choices
        self.default = default
        self.const = const
        self.required = required
        self.deprecated = deprecated
        self.error_message = error_message
        self.action_class = action_class

    @property
    def name(self) -> str:
        """How argparse names the action in messages (``--tp-size/--tensor-parallel-size``)."""
        return "/".join(self.options)


class FlagTable:
    """The generated table of one release: its actions, each made when first looked up (a parse
    looks up the few options a launch writes, and the required ones)."""

    __slots__ = ("version", "raw", "index", "fields", "dest_to_field", "options", "required", "_count", "_make",
                 "_made")
    version: str
    raw: dict[str, Any]
    #: each option string's action, in registration order
    index: Mapping[str, Action]
    fields: dict[str, dict[str, Any]]
    dest_to_field: dict[str, str]
    #: how argparse reads an option word against ``index`` (SGLang leaves allow_abbrev at True)
    options: ParserOptions
    #: the actions argparse requires
    required: list[Action]

    def __init__(self, version: str, raw: dict[str, Any], make: Callable[[int], Action],
                 row_options: list[list[str]], required: list[int], fields: dict[str, dict[str, Any]],
                 dest_to_field: dict[str, str]) -> None:
        self.version = version
        self.raw = raw
        #: the number of rows, and what makes the action of the row at a position (when first looked up)
        self._count = len(row_options)
        self._make = make
        self._made: dict[int, Action] = {}
        self.index = keyed(rows_by_option(row_options), self._action_at)
        self.fields = fields
        self.dest_to_field = dest_to_field
        self.options = ParserOptions(self.index)
        self.required = [self._action_at(position) for position in required]

    @property
    def actions(self) -> list[Action]:
        """Every action, in registration order."""
        return [self._action_at(position) for position in range(self._count)]

    def __eq__(self, other: object) -> bool:
        """The same release, data, actions and fields (however many actions each has made yet)."""
        if not isinstance(other, FlagTable):
            return NotImplemented
        return (self.version, self.raw, self.actions, self.fields, self.dest_to_field) == (
            other.version, other.raw, other.actions, other.fields, other.dest_to_field)

    __hash__ = None  # type: ignore[assignment]  # equal by contents

    def __repr__(self) -> str:
        return f"FlagTable({self.version!r})"

    def _action_at(self, position: int) -> Action:
        action = self._made.get(position)
        if action is None:
            action = self._made[position] = self._make(position)
        return action

    @property
    def config_merger(self) -> int:
        return int(self.raw.get("config_merger", 0))


def _action(row: dict[str, Any]) -> Action:
    choices = row.get("choices")
    return Action(
        options=tuple(row["options"]),
        dest=row["dest"],
        kind=row.get("kind", "store"),
        nargs=row.get("nargs"),
        type=row.get("type", "str"),
        choices=None if choices is None or row.get("choices_dynamic") else tuple(choices),
        default=row.get("default"),
        const=row.get("const"),
        required=bool(row.get("required")),
        deprecated=bool(row.get("deprecated")),
        error_message=row.get("error_message"),
        action_class=row.get("action_class", "_StoreAction"),
    )


#: the tables, read one by one or (from the second one a process needs) from one derived file
TABLE_FILES = TableFiles(package_path("engines", "data", "sglang"), package_path("engines", "data", "sglang-tables.json"),
                         ("actions", "fields"), package_path("engines", "data", "sglang-flags.txt"))


@cache
def table_versions() -> tuple[str, ...]:
    return TABLE_FILES.releases()


def load_table(version: str) -> FlagTable:
    """The table for ``version``: the newest generated table not newer than it (oldest if older)."""
    return _table_of(TABLE_FILES.release_for(version))


@cache
def _table_of(chosen: str) -> FlagTable:
    """The generated table of release ``chosen`` (read once, whichever versions map to it)."""
    raw, numbers = TABLE_FILES.read(chosen)
    written: list[dict[str, Any]] = raw["actions"]
    shared = numbers["actions"] if numbers is not None else None

    def make(position: int) -> Action:
        """The action of row ``position`` (0: ``--help``, which argparse adds first)."""
        if position == 0:
            return _help_action()
        if shared is not None:
            return _shared_action(shared[position - 1])
        return _action(written[position - 1])

    row_options = [_HELP_ROW["options"], *(row["options"] for row in written)]
    required = [position for position, row in enumerate(written, start=1) if row.get("required")]
    fields = {entry["name"]: entry for entry in raw["fields"]}
    return FlagTable(chosen, raw, make, row_options, required, fields, dict(raw.get("dest_to_field", {})))


@cache
def _help_action() -> Action:
    return _action(_HELP_ROW)


@cache
def _shared_action(number: int) -> Action:
    """The action of a row several releases share (one for all their tables)."""
    return _action(TABLE_FILES.rows("actions")[number])


def _reading_row(action: Action) -> dict[str, Any]:
    """The parts of an action that decide how a word naming it is read (:func:`_word_reading`)."""
    return {"kind": action.kind, "nargs": action.nargs, "type": action.type,
            "choices": None if action.choices is None else list(action.choices), "const": action.const,
            "deprecated": action.deprecated, "error_message": action.error_message}


def flag_index() -> dict[str, Any]:
    """The flag index of the tables as they are (``tools/regenerate.py`` writes it)."""
    readings: dict[str, ReleaseReading] = {}
    for release in TABLE_FILES.releases():
        table = _table_of(release)
        readings[release] = ({option: _reading_row(action) for option, action in table.index.items()},
                             set(table.fields), {})
    return TABLE_FILES.index_of(readings)


class _IndexedRelease:
    """One release as the flag index tells it: its option strings, each with an action holding
    only what decides how a word is read (no dest, default or help), and its field names; each
    looked up in the index when asked for."""

    __slots__ = ("_index", "_position", "index", "options", "version")

    def __init__(self, version: str, index: FlagIndex, position: int) -> None:
        self.version = version
        self._index = index
        self._position = position
        self.index: Mapping[str, Action] = release_options(index, position, _reading_action)
        self.options = ParserOptions(self.index, known=index.option_strings)

    @property
    def fields(self) -> ReleaseNames:
        return ReleaseNames(self._index, self._position)


def _reading_action(row: dict[str, Any]) -> Action:
    """The action of a reading row of the flag index."""
    return Action((), "", row["kind"], row["nargs"], row["type"], None if row["choices"] is None else tuple(row["choices"]),
                  None, row["const"], False, row["deprecated"], row["error_message"], "")


def _reading_release(version: str) -> _ReadsWords:
    """The release ``version`` is read with, as far as reading words goes (:meth:`TableFiles.reading_release`)."""
    indexed: Callable[[str, FlagIndex, int], _ReadsWords] = _IndexedRelease
    return TABLE_FILES.reading_release(version, indexed, load_table)


# --- words --------------------------------------------------------------------------------------

class Word(Record):
    """One argv word as the parser sees it, with where it came from."""

    __slots__ = ("text", "span", "origin", "unresolved", "splat")
    text: str
    span: Span | None
    origin: str
    unresolved: tuple[str, ...]
    splat: bool

    def __init__(self, text: str, span: Span | None, origin: str = "explicit", unresolved: tuple[str, ...] = (),
                 splat: bool = False) -> None:
        self.text = text
        self.span = span
        self.origin = origin
        self.unresolved = unresolved
        self.splat = splat

    @classmethod
    def of(cls, token: Token, origin: str = "explicit") -> Word:
        return cls(token.value, token.span, origin, token.unresolved, token.splat)

    @property
    def resolved(self) -> bool:
        return not self.unresolved and not self.splat




class _ParseError(Exception):
    def __init__(self, message: str, word: Word | None, kind: str = "invalid-value") -> None:
        super().__init__(message)
        self.message = message
        self.word = word
        self.kind = kind


# --- value conversion (the ``type=`` callables SGLang uses) ---------------------------------------

def _human_readable_int(text: str) -> int:
    """sglang.srt.utils.common.human_readable_int: SI (k, M, G, T; decimals ok) and IEC suffixes."""
    value = text.strip()
    for suffix, multiplier in (("Ki", 2**10), ("Mi", 2**20), ("Gi", 2**30), ("Ti", 2**40)):
        if value.endswith(suffix):
            return int(value[: -len(suffix)]) * multiplier
    for suffix, multiplier in (("k", 10**3), ("M", 10**6), ("G", 10**9), ("T", 10**12)):
        if value.endswith(suffix):
            return int(float(value[:-1]) * multiplier)
    return int(value)


def _convert(action: Action, text: str) -> Any:
    """Apply the action's ``type``; raise ``_ParseError`` with argparse's wording."""
    kind = action.type
    try:
        if kind == "int":
            return int(text)
        if kind == "float":
            return float(text)
        if kind == "json":
            return json.loads(text)
        if kind == "json_list":
            return json.loads(text)
        if kind == "human_readable_int":
            return _human_readable_int(text)
        if kind == "nullable_str":
            return None if not text or text == "None" else text
    except (ValueError, OverflowError, RecursionError):  # JSONDecodeError, too many digits, too deep
        if kind == "json_list":
            raise _ParseError(f"argument {action.name}: Invalid JSON list: {text}. Please provide a valid JSON list.",
                              None, "invalid-json") from None
        type_name = {"json": "loads"}.get(kind, kind)
        raise _ParseError(f"argument {action.name}: invalid {type_name} value: {text!r}", None,
                          "invalid-json" if kind == "json" else "invalid-value") from None
    return text


def _check_choice(action: Action, value: Any) -> None:
    if action.choices is not None and value not in action.choices:
        raise _ParseError(invalid_choice_message(action.name, value, action.choices), None, "invalid-choice")


# --- argparse emulation ---------------------------------------------------------------------------

class _Optional(Record):
    """What ``_parse_optional`` makes of one word."""

    __slots__ = ("action", "option", "explicit")
    action: Action | None
    option: str
    explicit: str | None

    def __init__(self, action: Action | None, option: str, explicit: str | None) -> None:
        self.action = action
        self.option = option
        self.explicit = explicit


class _ParseState(Record):
    __slots__ = ("table", "parsed", "seen")
    table: FlagTable
    parsed: Parsed
    seen: set[str]

    def __init__(self, table: FlagTable, parsed: Parsed, seen: set[str] | None = None) -> None:
        self.table = table
        self.parsed = parsed
        self.seen = seen if seen is not None else set()


def _parse_optional(table: _ReadsWords, text: str) -> _Optional | None:
    """The option ``text`` names with its glued value (``None``: a positional); raises for an
    ambiguous prefix."""
    found = table.options.parse_optional(text)
    if found is None:
        return None
    if found.ambiguous:
        raise _ParseError(ambiguous_message(found), None, "ambiguous")
    return _Optional(table.index[found.option] if found.known else None, found.option, found.explicit)


def _classify(table: _ReadsWords, word: Word) -> _Optional | None:
    """Optional or positional; for a word with an unresolved part, judge by its literal head."""
    if word.resolved:
        return _parse_optional(table, word.text)
    if word.splat or not word.text.startswith("-"):
        return None
    head, equals, _ = word.text.partition("=")
    if equals and "$" not in head and "{" not in head:
        found = _parse_optional(table, head)
        if found is not None:
            return _Optional(found.action, found.option, word.text[len(head) + 1:])
    return _Optional(None, word.text, None)


def argparse_words(words: list[Word], table: FlagTable, parsed: Parsed, field_name: Callable[[str], str]) -> None:
    """Parse ``words`` like ``parser.parse_args`` would; record options and errors on ``parsed``.

    argparse stops at the first error; here parsing continues so every bad argument is reported
    (each rejected argument gets its own entry, which a fix can address one by one).
    """
    kinds: list[_Optional | str | None] = []
    after_double_dash = False
    for word in words:
        if after_double_dash:
            kinds.append(None)
            continue
        if word.resolved and word.text == "--":
            after_double_dash = True
            kinds.append("--")
            continue
        try:
            kinds.append(_classify(table, word))
        except _ParseError as error:
            parsed.errors.append(CliError(error.message, word.span, word.text, error.kind))
            kinds.append("ambiguous")
    index = 0
    seen_required: set[str] = set()
    while index < len(words):
        word, kind = words[index], kinds[index]
        if kind == "--":
            index += 1
            continue
        if kind is None or kind == "ambiguous":
            index += 1
            if kind is None:
                if word.splat:
                    parsed.open_ended = True
                    continue
                if not word.resolved:
                    parsed.open_ended = True
                    parsed.notes.append(f"unresolved word {word.text!r} where an option was expected")
                    continue
                parsed.errors.append(CliError(unrecognized_message([word.text]), word.span, None, "unknown"))
            else:
                while index < len(words) and kinds[index] is None:
                    index += 1
            continue
        assert isinstance(kind, _Optional)
        # values that follow: positional words up to the next optional
        follow = index + 1
        while follow < len(words) and kinds[follow] is None:
            follow += 1
        values = words[index + 1:follow]
        if kind.action is None:
            if not word.resolved:
                parsed.open_ended = True
                parsed.notes.append(f"unresolved option word {word.text!r}: cannot tell which flag it is")
                index = follow
                continue
            parsed.errors.append(CliError(unrecognized_message(w.text for w in [word, *values]), word.span, word.text,
                                          "unknown"))
            index = follow
            continue
        action = kind.action
        try:
            consumed = _consume(action, kind, word, values, parsed, field_name)
        except _ParseError as error:
            parsed.errors.append(CliError(error.message, (error.word or word).span, word.text, error.kind))
            consumed = len(values) if action.nargs in ("*", "+") else min(len(values), 1 if action.nargs != 0 else 0)
        seen_required.add(action.dest)
        leftover = values[consumed:]
        index = index + 1 + consumed
        if leftover:
            unresolved = [w for w in leftover if not w.resolved]
            if unresolved:
                parsed.open_ended = True
            resolved = [w for w in leftover if w.resolved]
            if resolved:
                # ``--enable-torch-compile true``: a boolean word after a switch
                switch = action.nargs == 0 and kind.explicit is None and resolved[0].text.lower() in BOOL_WORDS
                parsed.errors.append(CliError(unrecognized_message(w.text for w in resolved),
                                              resolved[0].span, word.text if switch else None,
                                              "bool-value" if switch else "unknown"))
            index = follow
    _check_required(table, parsed, seen_required, words)


def _check_required(table: FlagTable, parsed: Parsed, seen: set[str], words: list[Word]) -> None:
    if parsed.open_ended or any(not w.resolved for w in words):
        return
    missing = [action.name for action in table.required if action.dest not in seen]
    if missing and not any(e.kind == "ambiguous" for e in parsed.errors):
        first = words[0].span if words else None
        parsed.errors.append(CliError("the following arguments are required: " + ", ".join(missing), first, None,
                                      "missing-value"))


def _consume(action: Action, found: _Optional, word: Word, values: list[Word], parsed: Parsed,
             field_name: Callable[[str], str]) -> int:
    """Store one optional; returns how many following words it took."""
    nargs = action.nargs
    if found.explicit is not None:
        if nargs == 0:
            raise _ParseError(ignored_explicit_message(action.name, found.explicit), word, "bool-value")
        explicit = Word(found.explicit, word.span, word.origin, word.unresolved, False)
        _store(action, found, word, [explicit], parsed, field_name)
        return 0
    if nargs == 0:
        _store(action, found, word, [], parsed, field_name)
        return 0
    try:
        taken = values_taken(nargs, len(values))
    except ArgumentCountError as error:
        raise _ParseError(f"argument {action.name}: {error}", word, "missing-value") from None
    _store(action, found, word, values[:taken], parsed, field_name)
    return taken


def _store(action: Action, found: _Optional, flag: Word, values: list[Word], parsed: Parsed,
           field_name: Callable[[str], str]) -> None:
    kind = action.kind
    if kind == "help":
        parsed.notes.append("--help: the server prints its help and exits")
        return
    if kind == "deprecated":
        if action.error_message:
            raise _ParseError(action.error_message, flag, "removed")
        parsed.notes.append(f"'{found.option}' is deprecated and has no effect")
        return
    name = field_name(action.dest)
    if kind == "store_true":
        value: Any = True
    elif kind == "store_false":
        value = False
    elif kind == "boolean_optional":
        value = not found.option.startswith("--no-")
    elif kind == "store_const" and action.nargs == 0:
        value = action.const
    else:
        converted: list[Any] = []
        unresolved: tuple[str, ...] = ()
        for item in values:
            if not item.resolved:
                unresolved += item.unresolved or (item.text,)
                converted.append(item.text)
                continue
            try:
                result = _convert(action, item.text)
                _check_choice(action, result)
            except _ParseError as error:
                error.word = item
                raise
            converted.append(result)
        if kind == "store_const":
            value = action.const
        elif action.nargs in ("*", "+") or isinstance(action.nargs, int) or kind == "lora":
            value = converted
        elif action.nargs == "?" and not converted:
            value = action.const
        else:
            value = converted[0]
        span = (values[0].span if values and values[0].span is not None and values[0].span != flag.span else flag.span)
        parsed.options[name] = OptionValue(value, span, flag.origin, _written(flag), unresolved)
        if action.deprecated:
            parsed.notes.append(f"'{found.option}' is deprecated")
        return
    parsed.options[name] = OptionValue(value, flag.span, flag.origin, _written(flag))
    if action.deprecated:
        parsed.notes.append(f"'{found.option}' is deprecated")


def _written(flag: Word) -> str:
    """The option as the user wrote it (``--speculative-algo``), for messages and fixes."""
    return flag.text.split("=", 1)[0]


# --- --config YAML merging (``prepare_server_args``; sglang/srt/server_args_config_parser.py) -------

def _config_words(table: FlagTable, launch: Launch, path_word: Word, ctx: EngineContext,
                  parsed: Parsed) -> list[Word] | None:
    """The words a ``--config FILE`` expands to, with spans in that file; ``None`` if not readable."""
    from mtplint.extract.yamlpos import YamlError, load  # noqa: PLC0415 - PyYAML: only for a launch with --config

    path_text = path_word.text
    suffix = ("." + path_text.rsplit(".", 1)[-1].lower()) if "." in path_text.rsplit("/", 1)[-1] else ""
    if suffix not in (".yaml", ".yml"):
        parsed.errors.append(CliError(f"Config file must be YAML format, got: {suffix}", path_word.span, "--config", "invalid-value"))
        return None
    source = ctx.loader.load(ctx.resolve(launch, path_text))
    if source is None:
        # not in the checkout is not "not there when the server starts" (a ConfigMap mount, a file
        # copied at deploy time): its options are unknown, as vLLM's model treats a missing --config
        parsed.open_ended = True
        parsed.unread_configs.append((f"--config {path_text}", path_word.span))
        parsed.notes.append(f"--config {path_text}: file not found; its options are not seen")
        return None
    parsed.config_files.append(source.display)
    try:
        root = load(source)
    except YamlError as error:
        ctx.issues.add("MTP001", str(error), source.span(error.offset, error.offset + 1))
        parsed.open_ended = True
        parsed.unread_configs.append((f"--config {path_text}", path_word.span))
        return None
    if root is None or root.is_null:
        return []
    if not root.is_map:
        parsed.errors.append(CliError("Config file must contain a dictionary at root level", root.span(), "--config", "invalid-value"))
        return None
    generation = table.config_merger
    store_true, unsupported = _config_action_keys(table, generation)
    words: list[Word] = []
    for key, key_node, value_node in root.entries():
        key_span = key_node.span()
        key_norm = key.replace("-", "_")
        if generation >= 2 and key_norm in unsupported:
            parsed.errors.append(CliError(
                f"Unsupported config option '{key_norm}' with action '{unsupported[key_norm]}'", key_span, key, "invalid-value"))
            continue
        try:
            value = value_node.python()
        except YamlError as error:  # nested too deeply, or an alias bomb: unreadable, not a crash
            ctx.issues.add("MTP001", f"malformed SGLang config file: {error}", source.span(error.offset, error.offset + 1))
            parsed.open_ended = True
            parsed.unread_configs.append((f"--config {path_text}", path_word.span))
            continue
        flag = Word(f"--{key}", key_span, "config-file")
        if isinstance(value, bool):
            if generation == 1 or key_norm in store_true:
                if value:
                    words.append(flag)
            else:
                words.extend([flag, Word(str(value).lower(), value_node.span(), "config-file")])
        elif isinstance(value, list):
            if value:
                words.append(flag)
                for item_node, item in zip(value_node.items, value, strict=False):
                    words.append(Word(_python_str(item), item_node.span(), "config-file"))
        elif isinstance(value, dict):
            text = json.dumps(value) if generation >= 3 else _python_str(value)
            words.extend([flag, Word(text, value_node.span(), "config-file")])
        else:
            words.extend([flag, Word(_python_str(value), value_node.span(), "config-file")])
    return words


def _python_str(value: Any) -> str:
    """``str(value)`` as Python prints YAML-loaded data (the merger passes ``str(item)`` to argparse)."""
    # the bound first: it is false for an infinity and for NaN, which int() refuses
    if isinstance(value, float) and abs(value) < 1e16 and value == int(value):
        return repr(value)
    return str(value)


def _config_action_keys(table: FlagTable, generation: int) -> tuple[set[str], dict[str, str]]:
    """Keys the merger treats as store_true flags, and keys it refuses (action class name)."""
    def keys(action: Action) -> set[str]:
        if generation >= 4:
            return {action.dest} | {option[2:].replace("-", "_") for option in action.options if option.startswith("--")}
        return {action.dest}

    actions = [a for a in table.actions if a.kind != "help"]
    store_true = {key for a in actions if a.action_class == "_StoreTrueAction" for key in keys(a)}
    if generation >= 4:
        supported = [a for a in actions if a.action_class in ("_StoreTrueAction", "_StoreAction") or a.nargs is None]
    else:
        supported = [a for a in actions if a.action_class in ("_StoreTrueAction", "_StoreAction")]
    supported_keys = {key for a in supported for key in keys(a)} if generation >= 4 else set()
    unsupported: dict[str, str] = {}
    for action in actions:
        if action in supported or "--config" in action.options:
            continue
        for key in keys(action):
            if key not in supported_keys:
                unsupported[key] = action.action_class
    return store_true, unsupported


# --- the engine -----------------------------------------------------------------------------------


def _word_reading(table: _ReadsWords, word: Word) -> object:
    """How ``table`` classifies one word, for :meth:`SGLangEngine.flags_reading`."""
    try:
        found = _classify(table, word)
    except _ParseError:
        return "ambiguous"
    if found is None:
        return None
    action = found.action
    if action is None:
        return found.option, found.explicit, None
    nargs = action.nargs
    # a value its type or choices refuse changes how many words the option takes (argparse_words
    # then takes what a failed option takes) only for a value glued on with ``=`` or a fixed count
    # above one: elsewhere a release that merely added a choice (a new attention backend) reads the
    # words alike
    checked = () if found.explicit is None and nargs in (None, 0, 1, "?", "*", "+") else (action.type, action.choices)
    return (found.option, found.explicit, (action.kind, nargs, action.const, action.deprecated, action.error_message,
                                           checked))


_WORD_READINGS = WordReadings()


def _reading_words(launch: Launch) -> tuple[tuple[str | None, ...], dict[int, Word]] | None:
    """The words of a launch that decide how a release reads it: the keyword names of a Python API
    launch; or the text of each token up to ``--`` (after it everything is positional, whatever the
    release) that may be an option, None for one mtplint cannot read whole, whose word is given by
    its position (its reading is not the text's alone); None for ``sglang serve`` and with
    ``--config``. A token that does not start with ``-`` (or may stand for several words) is a
    positional at every release."""
    if launch.kwargs is not None:
        return tuple(name for name in launch.kwargs if not name.startswith("*")), {}
    tokens = launch.args
    if launch.entry == "sglang serve" or any(token.value == "--config" and not token.unresolved and not token.splat
                                             for token in tokens):
        return None
    texts: list[str | None] = []
    unread: dict[int, Word] = {}
    for token in tokens:
        text = token.value
        if token.splat or not text.startswith("-"):
            continue
        if token.unresolved:
            unread[len(texts)] = Word.of(token)
            texts.append(None)
        elif text == "--":
            break
        else:
            texts.append(text)
    return tuple(texts), unread


_LAUNCH_WORDS = LaunchMemo()


class SGLangEngine:
    name = "sglang"

    def known_versions(self) -> list[str]:
        return list(table_versions())

    def flags_key(self, version: str) -> object:
        return version  # every known version has a table of its own

    def flags_reading(self, launch: Launch, version: str) -> object | None:
        words = _LAUNCH_WORDS.get(launch, _reading_words)
        if words is None:
            return None  # the serve pre-scan and the config merge depend on the release: only parsing tells
        # an unpinned launch is read at every release: the flag index, not every release's table
        table = _reading_release(version)
        if launch.kwargs is not None:
            # Engine(**kwargs): a keyword is rejected exactly when ServerArgs has no such field
            fields = table.fields
            return tuple(text in fields for text in words[0] if text is not None)
        # argparse_words rejects a word by how each word classifies (an option's action or none, a
        # positional, an ambiguous prefix) and by how many values each option takes, which the
        # action's arity and kind decide, and its type and choices where a refused value takes
        # another number of words (_word_reading)
        texts, unread = words
        readings = _WORD_READINGS.of(table.version, texts, lambda text: _word_reading(table, Word(text, None)))
        if not unread:
            return readings
        # a word mtplint cannot read whole: not remembered, its text is not all of it
        return tuple(_word_reading(table, unread[position]) if position in unread else reading
                     for position, reading in enumerate(readings))

    def reading_key(self, launch: Launch) -> object | None:
        words = _LAUNCH_WORDS.get(launch, _reading_words)
        if words is None or words[1]:
            return None  # a word mtplint cannot read whole is read with its token
        return launch.kwargs is not None, words[0]

    # -- parse --------------------------------------------------------------------------------------

    def parse(self, launch: Launch, version: EngineVersion, ctx: EngineContext) -> Parsed:
        table = load_table(version.version)
        parsed = Parsed()
        if launch.kwargs is not None:
            self._parse_kwargs(launch, version, table, parsed)
            return parsed
        words = [Word.of(token) for token in launch.args]
        if any(word.splat for word in words):
            parsed.open_ended = True
        if launch.entry == "sglang serve":
            words = self._serve_words(words, version, table, parsed)
        words = self._merge_config(words, launch, table, ctx, parsed)

        def field_name(dest: str) -> str:
            return table.dest_to_field.get(dest, dest)

        argparse_words(words, table, parsed, field_name)
        config = parsed.options.get("config")
        if config is not None and not parsed.config_files:
            # argparse accepts ``--config=x.yaml`` / ``--conf x.yaml`` but the merger only looks for the
            # exact token ``--config`` (``"--config" in argv``): the file is silently not merged
            parsed.notes.append(f"config file {config.value!r} is not loaded: only the exact token '--config FILE' is merged")
        self._check_after_parse(parsed, version)
        return parsed

    def _serve_words(self, words: list[Word], version: EngineVersion, table: FlagTable, parsed: Parsed) -> list[Word]:
        """``sglang serve`` pre-scan (sglang/cli/serve.py, cli/utils.py get_model_path)."""
        raw = table.raw
        if not raw.get("serve_command"):
            parsed.errors.append(CliError(f"'sglang serve' does not exist in SGLang {table.version} (added in {SERVE_ADDED})",
                                          None, None, "unknown"))
            return words
        if raw.get("serve_model_type_option"):
            kept: list[Word] = []
            skip = False
            for position, word in enumerate(words):
                if skip:
                    skip = False
                    continue
                if word.resolved and word.text == "--model-type":
                    skip = position + 1 < len(words)
                    continue
                if word.resolved and word.text.startswith("--model-type="):
                    continue
                kept.append(word)
            words = kept
        if raw.get("serve_positional_model") and words and not words[0].splat and not words[0].text.startswith("-"):
            # ``sglang serve MODEL ...`` (cli/serve.py _normalize_positional_model_path)
            first = words[0]
            words = [Word("--model-path", first.span, first.origin), *words]
        flags = tuple(raw.get("serve_model_flags", ["--model-path"]))
        found = False
        for position, word in enumerate(words):
            if not word.resolved:
                if word.splat:
                    found = True  # could be anywhere in the splat
                continue
            if (word.text in flags and position + 1 < len(words)) or any(word.text.startswith(f + "=") for f in flags):
                found = True
                break
        if not found and not any(w.resolved and w.text in ("-h", "--help") for w in words):
            has_unresolved = any(not w.resolved for w in words)
            if not has_unresolved:
                span = words[0].span if words else None
                parsed.errors.append(CliError("Error: --model-path is required. Please provide the path to the model."
                                              + _serve_model_hint(words, flags), span, None, "missing-value"))
        return words

    def _merge_config(self, words: list[Word], launch: Launch, table: FlagTable, ctx: EngineContext,
                      parsed: Parsed) -> list[Word]:
        """``prepare_server_args``: only the exact token ``--config`` triggers the YAML merge."""
        positions = [i for i, word in enumerate(words) if word.resolved and word.text == "--config"]
        if not positions:
            return words
        if len(positions) > 1:
            second = words[positions[1]]
            parsed.errors.append(CliError("Multiple config files specified! Only one allowed.", second.span, "--config",
                                          "conflict"))
            return words
        at = positions[0]
        if at == len(words) - 1:
            parsed.errors.append(CliError("No config file specified after --config flag!", words[at].span, "--config",
                                          "missing-value"))
            return words
        path_word = words[at + 1]
        if not path_word.resolved:
            parsed.open_ended = True
            parsed.unread_configs.append((f"--config {path_word.text}", path_word.span))
            parsed.notes.append(f"--config {path_word.text}: the file name is not resolved; its options are unknown")
            return words[:at] + words[at + 2:]
        config = _config_words(table, launch, path_word, ctx, parsed)
        if config is None:
            return words[:at] + words[at + 2:]
        return [*config, *words[:at], *words[at + 2:]]

    def _check_after_parse(self, parsed: Parsed, version: EngineVersion) -> None:
        algorithm = parsed.options.get("speculative_algorithm")
        if algorithm is not None and not algorithm.unresolved and isinstance(algorithm.value, str) \
                and compare(version.version, SPEC_CHOICES_REMOVED) >= 0 and algorithm.value.upper() not in BUILTIN_ALGORITHMS:
            parsed.notes.append(f"speculative algorithm {algorithm.value!r} is not a builtin: SGLang raises "
                                "'Unknown speculative algorithm name' unless a plugin registers it")

    def _parse_kwargs(self, launch: Launch, version: EngineVersion, table: FlagTable, parsed: Parsed) -> None:
        """``sglang.Engine(**kwargs)`` -> ``ServerArgs(**kwargs)``: field names only (v0.5.9
        ``entrypoints/engine.py`` L139-156)."""
        assert launch.kwargs is not None
        msgspec_struct = compare(table.version, MSGSPEC_SERVER_ARGS) >= 0
        for name, argument in launch.kwargs.items():
            if name.startswith("*"):
                parsed.open_ended = True
                continue
            if name in ("server_args", "log_level") and name not in table.fields:
                if name == "server_args":
                    parsed.open_ended = True
                continue
            if name not in table.fields:
                message = (f"Unexpected keyword argument '{name}'" if msgspec_struct
                           else f"ServerArgs.__init__() got an unexpected keyword argument '{name}'")
                parsed.errors.append(CliError(f"TypeError: {message}", argument.span, name, "unknown"))
                continue
            parsed.options[name] = OptionValue(argument.value, argument.span, "explicit", name, argument.unresolved)
        if "model_path" not in parsed.options and not parsed.open_ended and "model_path" in table.fields:
            message = ("Missing required argument 'model_path'" if msgspec_struct
                       else "ServerArgs.__init__() missing 1 required positional argument: 'model_path'")
            parsed.errors.append(CliError(f"TypeError: {message}", launch.span, None, "missing-value"))
        algorithm = parsed.options.get("speculative_algorithm")
        if algorithm is not None and isinstance(algorithm.value, str) and not algorithm.unresolved \
                and compare(table.version, SPEC_CHOICES_REMOVED) < 0 and algorithm.value not in BUILTIN_ALGORITHMS:
            # no argparse choices and no upper-casing before 0.5.12: the NEXTN alias and the EAGLE block
            # are skipped, then the worker fails (v0.5.9 L2352-2354 and ``spec_info.py`` ``from_string``; inferred)
            parsed.errors.append(CliError(f"ValueError: Unknown speculative algorithm name: {algorithm.value}",
                                          algorithm.span, "speculative_algorithm", "startup"))

    # -- effective ----------------------------------------------------------------------------------

    def effective(self, launch: Launch, parsed: Parsed, version: EngineVersion, hardware: Hardware,
                  catalogs: Catalogs) -> dict[str, Setting]:
        options = parsed.options
        at = version.version

        def given(name: str) -> OptionValue | None:
            return options.get(name)

        def setting(name: str, default: Any, transform: Callable[[Any], Any] = lambda v: v) -> Setting:
            option = given(name)
            if option is None:
                return Setting(default, "default")
            if option.unresolved:
                return Setting(option.value, option.origin, option.span, option.unresolved)
            return Setting(transform(option.value), option.origin, option.span)

        model = setting("model_path", None)
        info = catalogs.find_model(model.value) if isinstance(model.value, str) and not model.unresolved else None
        settings: dict[str, Setting] = {"model": model}

        algorithm_option = given("speculative_algorithm")
        algorithm: str | None = None
        if algorithm_option is not None and isinstance(algorithm_option.value, str) and not algorithm_option.unresolved:
            algorithm = algorithm_option.value
            if compare(at, SPEC_CHOICES_REMOVED) >= 0:
                algorithm = algorithm.upper()
        draft = setting("speculative_draft_model_path", None)
        settings["spec_method"] = self._spec_method(algorithm_option, algorithm, draft, model, info)
        if draft.value is not None:
            settings["spec_model"] = draft
        spec_on = algorithm_option is not None and (algorithm is not None or bool(algorithm_option.unresolved))
        self._draft_shape(settings, algorithm, given, info, model)

        settings["prefix_caching"] = self._prefix_caching(given, version, info, spec_on, algorithm)
        settings["mamba_strategy"] = self._mamba_strategy(given, version, info)
        settings["max_concurrency"] = self._max_concurrency(given, algorithm, spec_on)
        settings["kv_cache_dtype"] = setting("kv_cache_dtype", "auto")
        settings["tensor_parallel"] = setting("tp_size", 1)
        settings["quantization"] = setting("quantization", None)
        settings["max_model_len"] = setting("context_length", None)
        settings["cuda_graphs"] = self._cuda_graphs(given)
        settings["memory_fraction"] = self._memory_fraction(given, version, hardware, algorithm)
        settings["spec_v2"] = self._spec_v2(launch, given, version)
        # SGLANG_ENABLE_SPEC_V2 is read from the environment only; before it, --enable-beta-spec can
        # come from a --config file like any option
        env_only = ("spec_v2",) if compare(at, SPEC_V2_ENV_ADDED) >= 0 else ()
        return open_to_config(dict(settings), parsed.unread_configs,
                              keep=env_only)

    @staticmethod
    def _spec_method(option: OptionValue | None, algorithm: str | None, draft: Setting, model: Setting,
                     info: ModelInfo | None) -> Setting:
        if option is None:
            return Setting(None, "default")
        if option.unresolved:
            return Setting(option.value, option.origin, option.span, option.unresolved)
        assert algorithm is not None
        extra: dict[str, Any] = {"algorithm": option.value}
        if algorithm in ("NEXTN", "EAGLE"):
            separate_draft = draft.value is not None and draft.value != model.value
            if algorithm == "NEXTN" or not separate_draft:
                # NEXTN is an alias of EAGLE; without a separate draft the draft is the model's own MTP
                # head (the draft ModelConfig falls back to --model-path: v0.5.9 ``managers/tp_worker.py`` L309-325)
                method = "mtp"
                if info is not None and info.mtp_layers == 0:
                    extra["model_has_mtp_heads"] = False
            else:
                method = "eagle"
        else:
            method = NORMALISED_METHODS.get(algorithm, algorithm.lower())
        return Setting(method, option.origin, option.span, extra=extra)

    @staticmethod
    def _draft_shape(settings: dict[str, Setting], algorithm: str | None, given: Callable[[str], OptionValue | None],
                     info: ModelInfo | None, model: Setting) -> None:
        """spec_tokens / spec_topk / spec_draft_tokens after SGLang's auto-selection (v0.5.9 L2422-2500)."""
        steps, topk, drafts = given("speculative_num_steps"), given("speculative_eagle_topk"), given("speculative_num_draft_tokens")

        def of(option: OptionValue | None) -> Setting | None:
            if option is None:
                return None
            return Setting(option.value, option.origin, option.span, option.unresolved)

        if algorithm is None:
            for key, option in (("spec_tokens", steps), ("spec_topk", topk), ("spec_draft_tokens", drafts)):
                settings[key] = of(option) or Setting(None, "default")
            return
        if algorithm in ("DFLASH", "DSPARK"):
            settings["spec_tokens"] = Setting(1, "default", extra={"forced": True})
            settings["spec_topk"] = Setting(1, "default", extra={"forced": True})
            settings["spec_draft_tokens"] = of(drafts) or Setting(None, "default")
            return
        if algorithm == "NGRAM":
            settings["spec_tokens"] = of(steps) or Setting(None, "default")
            breadth = given("speculative_ngram_max_bfs_breadth")
            settings["spec_topk"] = of(breadth) or Setting(10, "default")
            settings["spec_draft_tokens"] = of(drafts) or Setting(12, "default")
            return
        if algorithm not in EAGLE_FAMILY and algorithm not in ("FROZEN_KV_MTP",):
            for key, option in (("spec_tokens", steps), ("spec_topk", topk), ("spec_draft_tokens", drafts)):
                settings[key] = of(option) or Setting(None, "default")
            return
        if steps is None:
            if topk is not None or drafts is not None:
                error = "AssertionError at startup: --speculative-eagle-topk / --speculative-num-draft-tokens need --speculative-num-steps"
                settings["spec_tokens"] = Setting(None, "default", extra={"startup_error": error})
                settings["spec_topk"] = of(topk) or Setting(None, "default")
                settings["spec_draft_tokens"] = of(drafts) or Setting(None, "default")
                return
            wide = algorithm != "STANDALONE" and info is not None and info.arch in WIDE_AUTO_ARCHS
            auto = (5, 4, 8) if wide else (3, 1, 4)
            extra: dict[str, Any] = {"auto": True}
            if info is None and algorithm != "STANDALONE":
                extra["auto_depends_on_architecture"] = "(5, 4, 8) for Llama/Grok, else (3, 1, 4)"
            settings["spec_tokens"] = Setting(auto[0], "default", extra=dict(extra))
            settings["spec_topk"] = Setting(auto[1], "default", extra=dict(extra))
            settings["spec_draft_tokens"] = Setting(auto[2], "default", extra=dict(extra))
            return
        settings["spec_tokens"] = of(steps) or Setting(None, "default")
        if topk is None:
            # topk stays None; the next check compares None > 1 -> TypeError at startup (v0.5.9 L2453-2460, inferred)
            settings["spec_topk"] = Setting(None, "default", extra={"startup_error": "TypeError: topk unset with num_steps set"})
        else:
            settings["spec_topk"] = of(topk) or Setting(None, "default")
        draft_setting = of(drafts)
        if topk is not None and topk.value == 1 and not topk.unresolved and not steps.unresolved \
                and isinstance(steps.value, int):
            wanted = steps.value + 1
            if draft_setting is None or (not draft_setting.unresolved and draft_setting.value != wanted):
                adjusted = {"adjusted": True}
                if draft_setting is not None:
                    adjusted["requested"] = draft_setting.value
                draft_setting = Setting(wanted, "inferred", draft_setting.span if draft_setting else None,
                                         extra=adjusted)
        settings["spec_draft_tokens"] = draft_setting or Setting(None, "default")

    @staticmethod
    def _mamba_option(given: Callable[[str], OptionValue | None]) -> OptionValue | None:
        return given("mamba_radix_cache_strategy") or given("mamba_scheduler_strategy")

    def _mamba_strategy(self, given: Callable[[str], OptionValue | None], version: EngineVersion,
                        info: ModelInfo | None) -> Setting:
        option = self._mamba_option(given)
        if option is not None:
            return Setting(option.value, option.origin, option.span, option.unresolved)
        if compare(version.version, MAMBA_STRATEGY_ADDED) < 0:
            return Setting(None, "default")
        extra: dict[str, Any] = {"configured": "auto"}
        value: str | None = "auto"
        if info is not None and info.hybrid:
            radix_off = _flag(given, "disable_radix_cache")
            value = self._auto_mamba(version.version, given, radix_off)
            extra.update(_versions_vary(version, lambda v: self._auto_mamba(v, given, radix_off)))
        return Setting(value, "default", extra=extra)

    @staticmethod
    def _auto_mamba(at: str, given: Callable[[str], OptionValue | None], radix_off: bool) -> str | None:
        """What ``auto`` resolves to on a hybrid model (v0.5.9 ``_handle_missing_default_values``; 0.5.14
        ``_handle_mamba_radix_cache``)."""
        if compare(at, MAMBA_STRATEGY_ADDED) < 0:
            return None
        if compare(at, MAMBA_STRATEGY_RENAMED) < 0:
            return "no_buffer"
        if radix_off:
            return "auto"
        page = given("page_size")
        paging = page is not None and isinstance(page.value, int) and page.value > 1
        overlap = not _flag(given, "disable_overlap_schedule")
        return "extra_buffer" if overlap or paging else "no_buffer"

    def _prefix_caching(self, given: Callable[[str], OptionValue | None], version: EngineVersion, info: ModelInfo | None,
                        spec_on: bool, algorithm: str | None) -> Setting:
        option = given("disable_radix_cache")
        if option is not None:
            if option.unresolved:
                return Setting(None, option.origin, option.span, option.unresolved)
            return Setting(not bool(option.value), option.origin, option.span)
        base = Setting(True, "default")
        if not (info is not None and info.hybrid and spec_on):
            return base
        mamba = self._mamba_option(given)
        explicit = None if mamba is None or mamba.unresolved else mamba.value

        def outcome(at: str) -> str:
            if compare(at, MAMBA_STRATEGY_ADDED) < 0:
                return "unknown"
            strategy = explicit or self._auto_mamba(at, given, False)
            if strategy not in ("no_buffer", None):
                return "on"
            if compare(at, HYBRID_RADIX_ERROR) < 0:
                return "disabled"
            if compare(at, MAMBA_STRATEGY_RENAMED) < 0:
                return "error"
            return "on"

        result = outcome(version.version)
        extra = _versions_vary(version, outcome)
        if result == "disabled":
            extra["note"] = ("SGLang <= 0.5.9 silently disables the radix cache for a hybrid model with speculative "
                             "decoding and mamba no_buffer (server_args.py L1746-1763 at v0.5.9)")
            return Setting(False, "inferred", extra=extra)
        if result == "error":
            extra["startup_error"] = ("ValueError: Speculative decoding for this hybrid model is not compatible with "
                                      "radix cache when using --mamba-scheduler-strategy no_buffer")
        base.extra.update(extra)
        return base

    @staticmethod
    def _max_concurrency(given: Callable[[str], OptionValue | None], algorithm: str | None, spec_on: bool) -> Setting:
        option = given("max_running_requests")
        if option is not None:
            return Setting(option.value, option.origin, option.span, option.unresolved)
        if algorithm in CAPPED_ALGORITHMS or (algorithm is None and spec_on):
            return Setting(48, "default", extra={"reason": "speculative decoding resets max_running_requests to 48"})
        return Setting(None, "default")

    @staticmethod
    def _cuda_graphs(given: Callable[[str], OptionValue | None]) -> Setting:
        for name in ("disable_cuda_graph", "disable_decode_cuda_graph"):
            option = given(name)
            if option is not None:
                return Setting(not bool(option.value), option.origin, option.span, option.unresolved)
        backend = given("cuda_graph_backend_decode")
        if backend is not None:
            return Setting(backend.value != "disabled", backend.origin, backend.span, backend.unresolved)
        return Setting(True, "default")

    @staticmethod
    def _memory_fraction(given: Callable[[str], OptionValue | None], version: EngineVersion, hardware: Hardware,
                         algorithm: str | None) -> Setting:
        option = given("mem_fraction_static")
        if option is not None:
            return Setting(option.value, option.origin, option.span, option.unresolved)
        if hardware.gpu is None:
            return Setting(None, "default")
        value = auto_mem_fraction(hardware.gpu.memory_mib, version.version, algorithm, given)
        extra = {"estimate": "auto mem_fraction_static formula (server_args.py L1017-1069 at v0.5.9); multimodal adjustment not applied"}
        extra.update(_versions_vary(version, lambda v: auto_mem_fraction(hardware.gpu.memory_mib if hardware.gpu else 0,
                                                                           v, algorithm, given)))
        return Setting(value, "default", extra=extra)

    def _spec_v2(self, launch: Launch, given: Callable[[str], OptionValue | None], version: EngineVersion) -> Setting:
        at = version.version
        entry = launch.env.get("SGL_ENABLE_SPEC_V2") or launch.env.get("SGLANG_ENABLE_SPEC_V2")
        extra = _versions_vary(version, lambda v: _spec_v2_default(v, given))
        if compare(at, SPEC_V2_ENV_ADDED) < 0:
            beta = given("enable_beta_spec")
            if beta is not None:
                return Setting(bool(beta.value), beta.origin, beta.span, beta.unresolved, extra)
            if entry is not None:
                extra["env_ignored"] = f"{entry.name} does not exist before SGLang {SPEC_V2_ENV_ADDED}"
            return Setting(False, "default", extra=extra)
        default = _spec_v2_default(at, given)
        if compare(at, SPEC_V2_REMOVED) >= 0:
            if entry is not None:
                extra["env_ignored"] = ("SGLANG_ENABLE_SPEC_V2 has been removed: speculative decoding always runs "
                                        "the V2 worker (only a warning is logged)")
            return Setting(default, "default", extra=extra)
        if entry is None:
            if launch.env_open:
                # an env file mtplint could not read (docker run --env-file, env_file, EnvironmentFile=)
                # may set the variable
                because = tuple(source.value for source in launch.env_open)
                return Setting(None, "env", launch.env_open[0].span, because, {**extra, "default": default})
            return Setting(default, "default", extra=extra)
        span = entry.span or entry.value.span
        if not entry.value.resolved:
            return Setting(entry.value.value, "env", span, entry.value.unresolved or (entry.value.value,), extra)
        text = entry.value.value.lower()
        if text in ENV_TRUE:
            return Setting(True, "env", span, extra=extra)
        if text in ENV_FALSE:
            return Setting(False, "env", span, extra=extra)
        extra["invalid_value"] = entry.value.value
        return Setting(default, "env", span, extra=extra)

def _flag(given: Callable[[str], OptionValue | None], name: str) -> bool:
    option = given(name)
    return bool(option is not None and not option.unresolved and option.value)


def _spec_v2_default(at: str, given: Callable[[str], OptionValue | None]) -> bool:
    """Spec V2 without the variable: off before 0.5.11 (and before the variable existed), on after
    (the default flip, then the V2-only worker from 0.5.14)."""
    del given
    return compare(at, SPEC_V2_DEFAULT_TRUE) >= 0


def _versions_vary(version: EngineVersion, outcome: Callable[[str], Any]) -> dict[str, Any]:
    """When the version is assumed and ``outcome`` differs across the still-possible versions, say how."""
    if version.known:
        return {}
    possible = [v for v in table_versions()
                if (version.low is None or compare(v, version.low) >= 0)
                and (version.high is None or compare(v, version.high) < 0)]
    ranges: list[dict[str, Any]] = []
    for candidate in possible:
        value = outcome(candidate)
        if ranges and ranges[-1]["value"] == value:
            ranges[-1]["to"] = candidate
        else:
            ranges.append({"from": candidate, "to": candidate, "value": value})
    if len(ranges) <= 1:
        return {}
    return {"version_dependent": [{"versions": f"{r['from']}..{r['to']}", "value": r["value"]} for r in ranges]}


def _gpu_defaults(memory_mib: int, tp_size: int) -> tuple[int, int]:
    """(chunked_prefill_size, cuda_graph_max_bs) defaults by GPU memory (v0.5.9 L934-999)."""
    gib = memory_mib / 1024
    small_tp = tp_size < 4
    if gib < 20:
        return 2048, 8
    if gib < 35:
        return 2048, 24 if small_tp else 80
    if gib < 60:
        return 4096, 32 if small_tp else 160
    if gib < 160:
        return 8192, 256 if small_tp else 512
    return 16384, 512


def auto_mem_fraction(memory_mib: int, at: str, algorithm: str | None,
                      given: Callable[[str], OptionValue | None]) -> float | None:
    """SGLang's auto ``mem_fraction_static`` (v0.5.9 server_args.py L1017-1069)."""
    if memory_mib <= 0:
        return None

    def number(name: str, default: int) -> int:
        option = given(name)
        if option is None or option.unresolved or not isinstance(option.value, (int, float)):
            return default
        return int(option.value)

    tp = number("tp_size", 1)
    pp = number("pp_size", 1)
    dp = number("dp_size", 1)
    chunk_default, graph_default = _gpu_defaults(memory_mib, tp)
    chunk = number("chunked_prefill_size", chunk_default)
    graph_bs = number("cuda_graph_max_bs", number("cuda_graph_max_bs_decode", graph_default))
    reserved = 512.0
    reserved += max(chunk if chunk > 0 else 16384, 2048) * 1.5
    reserved += graph_bs * 2
    reserved += tp * pp / 8 * 1024
    if _flag(given, "enable_dp_attention"):
        reserved += graph_bs * dp * 3
        if graph_bs > 300:
            reserved += graph_bs * dp * 1.5
    if memory_mib > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    if algorithm is not None and compare(at, SPEC_RESERVE_REMOVED) < 0:
        if algorithm == "STANDALONE":
            reserved += 6 * 1024
        elif algorithm in ("EAGLE", "EAGLE3", "NEXTN"):
            reserved += (4 if compare(at, SPEC_RESERVE_4G) >= 0 else 2) * 1024
    return round((memory_mib - reserved) / memory_mib, 3)


def _serve_model_hint(words: Iterable[Word], flags: tuple[str, ...]) -> str:
    for word in words:
        if word.resolved and word.text.split("=", 1)[0] in ("--model", "--model-path") and word.text not in flags \
                and word.text.split("=", 1)[0] not in flags:
            return f" ('sglang serve' of this version only looks for {' / '.join(flags)})"
    return ""


ENGINE = SGLangEngine()
