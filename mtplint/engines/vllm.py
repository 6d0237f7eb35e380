"""The vLLM engine model: what ``vllm serve`` (or ``LLM(...)``) stores, and what it runs with.

Parsing emulates vLLM's ``FlexibleArgumentParser`` (vLLM 0.33.0 ``vllm/utils/argparse_utils.py``
``parse_args`` L313-500, ``_pull_args_from_config`` L516-604, ``load_config_file`` L606-673) in
front of Python's ``argparse`` (:mod:`mtplint.engines.argparse_model`), over the flag table generated
from each release's wheel (``mtplint/engines/data/vllm/<version>.json``, see ``tools/gen_vllm_flags.py``).
The preprocessing changed across releases; each difference is keyed to the first release (of those
read) that has it:

* ``--model`` under ``serve``: 0.8.2 stores it and ``serve`` then refuses it; 0.8.3-0.11.0 raise at
  parse time; from 0.11.1 it is moved to the positional slot (checked in the 0.11.1 wheel).
* ``_`` -> ``-`` in long option names: the whole name up to 0.8.x, only before the first ``.`` from 0.11.
* dotted JSON keys (``--speculative-config.method mtp``): from 0.11; their values also accept
  human-readable ints (``32k``) from 0.20 (absent in the 0.19.0 wheel).
* ``-O3``: ``-O 3`` up to 0.8.x, ``-O.level=3`` in 0.11.x, ``--optimization-level 3`` from 0.12.0.
* ``--config``: 0.8.2 needs the positional model right after ``serve``; lists are written with
  ``str()`` up to 0.8.x; dicts with ``str()`` (then not JSON) up to 0.15.x, as JSON from 0.16.0; ``key: false`` is
  dropped under ``serve`` in every release read (0.8-0.27 only emit ``true``; from 0.28 the
  ``--no-key`` lookup runs on the top-level ``vllm`` parser, which has none of the serve options).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import cache, lru_cache, partial

from mtplint.engines import CliError, EngineContext, LaunchMemo, OptionValue, Parsed, WordReadings
from mtplint.engines.argparse_model import (
    BOOL_WORDS,
    ArgumentCountError,
    OptionWord,
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
from mtplint.engines.partial_json import partial_object
from mtplint.errors import reason
from mtplint.extract import FileLoader
from mtplint.extract.launch import Launch
from mtplint.hardware import Hardware
from mtplint.settings import Setting, open_to_config
from mtplint.shipped import package_path
from mtplint.source import Issues, SourceFile, Span, Token
from mtplint.versions import EngineVersion, compare

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Container, Mapping
    from typing import Any, Protocol

    from mtplint.catalogs import Catalogs
    from mtplint.engines.compact import ReleaseReading

    class _ReadsWords(Protocol):
        """What reading a launch's words needs of a release (a :class:`FlagTable`, or an
        :class:`_IndexedRelease` made from the flag index)."""

        @property
        def version(self) -> str: ...

        @property
        def options(self) -> ParserOptions: ...

        @property
        def by_option(self) -> Mapping[str, Flag]: ...

        @property
        def keywords(self) -> Container[str]: ...

        @property
        def has_positional(self) -> bool: ...


# --- flag tables ----------------------------------------------------------------------------------


# Flag, FlagTable, Word and _Run are internal records (never compared, copied or printed): plain
# classes, as dataclass() would cost start-up time for each, generating methods by exec.
class Flag:
    """One argparse action of the ``vllm serve`` parser, as generated from a wheel."""

    __slots__ = ("action", "choices", "const", "default", "dest", "nargs", "negative", "options", "required", "type")

    def __init__(self, options: tuple[str, ...], dest: str, nargs: Any, action: str, type: str, default: Any,
                 choices: tuple[Any, ...] | None, negative: frozenset[str], const: Any = None,
                 required: bool = False) -> None:
        self.options = options
        self.dest = dest
        self.nargs = nargs
        self.action = action
        self.type = type
        self.default = default
        self.choices = choices
        self.negative = negative
        self.const = const
        self.required = required

    @property
    def takes_value(self) -> bool:
        return self.action in ("store", "append", "extend")

    def label(self) -> str:
        return "/".join(self.options) if self.options else self.dest


class FlagTable:
    """The ``vllm serve`` flags of one release, indexed by option string and by dest; each flag is
    made when first looked up (a parse looks up the few a launch writes and their defaults)."""

    __slots__ = ("_made", "_rows", "allow_abbrev", "by_dest", "by_option", "keywords", "options", "positional",
                 "version")

    def __init__(self, version: str, rows: list[Callable[[], Flag]], row_options: list[list[str]],
                 row_dests: list[str], allow_abbrev: bool) -> None:
        self.version = version
        self._rows = rows
        self._made: dict[int, Flag] = {}
        self.allow_abbrev = allow_abbrev
        self.by_option: Mapping[str, Flag] = keyed(rows_by_option(row_options), self._flag_at)
        #: how argparse reads an option word against these flags
        self.options = ParserOptions(self.by_option, allow_abbrev)
        # a later registration of the same dest wins
        by_dest = {dest: position for position, dest in enumerate(row_dests)}
        self.by_dest: Mapping[str, Flag] = keyed(by_dest, self._flag_at)
        #: the keyword arguments ``EngineArgs``/``LLM`` take (a flag's dest; not the CLI-only ones)
        self.keywords: frozenset[str] = frozenset(by_dest) - {"model_tag", "config"}
        #: the positional argument (the model tag)
        self.positional: Flag | None = next((self._flag_at(position) for position, options in enumerate(row_options)
                                             if not options), None)

    @property
    def flags(self) -> tuple[Flag, ...]:
        """Every flag, in registration order."""
        return tuple(self._flag_at(position) for position in range(len(self._rows)))

    def _flag_at(self, position: int) -> Flag:
        flag = self._made.get(position)
        if flag is None:
            flag = self._made[position] = self._rows[position]()
        return flag

    @property
    def has_positional(self) -> bool:
        return self.positional is not None


#: the tables, read one by one or (from the second one a process needs) from one derived file
TABLE_FILES = TableFiles(package_path("engines", "data", "vllm"), package_path("engines", "data", "vllm-tables.json"),
                         ("actions",), package_path("engines", "data", "vllm-flags.txt"))


@cache
def table_versions() -> tuple[str, ...]:
    return TABLE_FILES.releases()


def load_table(version: str) -> FlagTable:
    """The table of ``version``, or of the nearest older release (the oldest for anything older)."""
    return _table_of(TABLE_FILES.release_for(version))


@cache
def _table_of(chosen: str) -> FlagTable:
    """The table generated from release ``chosen`` (read once, whichever versions map to it)."""
    data, numbers = TABLE_FILES.read(chosen)
    kept = [(position, entry) for position, entry in enumerate(data["actions"]) if entry["action"] != "exit"]
    rows: list[Callable[[], Flag]]
    if numbers is None:
        rows = [partial(_flag, entry) for _, entry in kept]
    else:  # a row several releases share is one Flag for all their tables
        rows = [partial(_shared_flag, numbers["actions"][position]) for position, _ in kept]
    return FlagTable(chosen, rows, [entry["options"] for _, entry in kept], [entry["dest"] for _, entry in kept],
                     bool(data.get("allow_abbrev", True)))


def flag_index() -> dict[str, Any]:
    """The flag index of the tables as they are (``tools/regenerate.py`` writes it): for each
    option string what decides how a word naming it is read (:func:`_word_reading`)."""
    readings: dict[str, ReleaseReading] = {}
    for release in TABLE_FILES.releases():
        table = _table_of(release)
        readings[release] = ({option: {"action": flag.action, "nargs": flag.nargs}
                              for option, flag in table.by_option.items()},
                             set(table.keywords),
                             {"allow_abbrev": table.allow_abbrev, "positional": table.has_positional})
    return TABLE_FILES.index_of(readings)


class _IndexedRelease:
    """One release as the flag index tells it: its option strings, each with a flag holding only
    what decides how a word is read (its action and arity), its keywords, and its parser's facts;
    each looked up in the index when asked for."""

    __slots__ = ("_index", "_position", "by_option", "has_positional", "options", "version")

    def __init__(self, version: str, index: FlagIndex, position: int) -> None:
        self.version = version
        self._index = index
        self._position = position
        self.by_option: Mapping[str, Flag] = release_options(index, position, _reading_flag)
        facts = index.facts[position]
        self.options = ParserOptions(self.by_option, bool(facts["allow_abbrev"]), known=index.option_strings)
        self.has_positional = bool(facts["positional"])

    @property
    def keywords(self) -> ReleaseNames:
        return ReleaseNames(self._index, self._position)


def _reading_flag(row: dict[str, Any]) -> Flag:
    """The flag of a reading row of the flag index."""
    return Flag((), "", row["nargs"], row["action"], "str", None, None, frozenset())


def _reading_release(version: str) -> _ReadsWords:
    """The release ``version`` is read with, as far as reading words goes (:meth:`TableFiles.reading_release`)."""
    indexed: Callable[[str, FlagIndex, int], _ReadsWords] = _IndexedRelease
    return TABLE_FILES.reading_release(version, indexed, load_table)


def _flag(entry: dict[str, Any]) -> Flag:
    choices = entry.get("choices")
    return Flag(
        options=tuple(entry["options"]), dest=entry["dest"], nargs=entry.get("nargs"), action=entry["action"],
        type=entry.get("type", "str"), default=entry.get("default"),
        choices=tuple(choices) if choices is not None else None, negative=frozenset(entry.get("negative", ())),
        const=entry.get("const"), required=bool(entry.get("required")),
    )


@cache
def _shared_flag(number: int) -> Flag:
    return _flag(TABLE_FILES.rows("actions")[number])


# --- words ----------------------------------------------------------------------------------------


class Word:
    """One argv word on its way through the preprocessing, with where it came from.

    ``key_spans``: for a synthesised ``--x <json>`` from dotted keys / a YAML dict, where each
    top-level key was set; ``synthetic``: the value is Python data already (a YAML dict), kept to
    give values their own spans; ``dotted``: the ``--x <json>`` vLLM assembles from dotted
    ``--x.key`` flags (it replaces any full ``--x`` value)."""

    __slots__ = ("dotted", "key_spans", "origin", "resolved", "span", "synthetic", "text", "unresolved")

    def __init__(self, text: str, span: Span | None, origin: str = "explicit", unresolved: tuple[str, ...] = (),
                 key_spans: dict[str, Span | None] | None = None, synthetic: bool = False,
                 dotted: bool = False) -> None:
        self.text = text
        self.span = span
        self.origin = origin
        self.unresolved = unresolved
        #: nothing in it is unresolved (kept, not worked out: the parser asks for each word, often)
        self.resolved = not unresolved
        self.key_spans: dict[str, Span | None] = {} if key_spans is None else key_spans
        self.synthetic = synthetic
        self.dotted = dotted


class _Abort(Exception):
    """The real parser stops here (a ValueError / assertion before argparse runs)."""


class _Run:
    """One parse of one launch: where errors and notes go while the argv is read."""

    __slots__ = ("ctx", "launch", "parsed", "serve", "version")

    def __init__(self, launch: Launch, version: str, ctx: EngineContext | None, parsed: Parsed, serve: bool) -> None:
        self.launch = launch
        self.version = version
        self.ctx = ctx
        self.parsed = parsed
        self.serve = serve

    def error(self, message: str, span: Span | None, flag: str | None = None, kind: str = "invalid-value") -> None:
        self.parsed.errors.append(CliError(message, span, flag, kind))


@cache
def _pattern(expression: str) -> re.Pattern[str]:
    """The expression compiled the first time a launch needs it (at import, every run would pay
    for all of them)."""
    return re.compile(expression)


@lru_cache(maxsize=1024)  # a parse asks about the same few releases and thresholds again and again
def _at_least(version: str, threshold: str) -> bool:
    return compare(version, threshold) >= 0


# --- human-readable ints (vLLM 0.33.0 argparse_utils.human_readable_int L28-70) ---------------------

_HUMAN = r"(\d+(?:\.\d+)?)([kKmMgGtT])"


def human_readable_int(text: str) -> int:
    value = text.strip()
    match = _pattern(_HUMAN).fullmatch(value)
    if match:
        number, suffix = match.groups()
        if suffix in "kmgt":
            return int(float(number) * 10 ** (3 * ("kmgt".index(suffix) + 1)))  # decimal multiplier
        try:
            binary: int = int(number) * 2 ** (10 * ("KMGT".index(suffix) + 1))
            return binary
        except ValueError:
            raise ValueError(f"Decimals are not allowed with binary suffixes like {suffix}. "
                             f"Did you mean to use {number}{suffix.lower()} instead?") from None
    return int(value)


def _convert(kind: str, text: str, version: str) -> Any:
    """Apply an action's ``type``; raises ``ValueError`` with argparse's reason on failure."""
    if kind == "str":
        return text  # the most common type, and none of those below
    if kind.startswith("optional:"):
        if text in ("", "None"):
            return None
        return _convert(kind[len("optional:"):], text, version)
    if kind == "int":
        return int(text)
    if kind == "float":
        return float(text)
    if kind == "human_int":
        return human_readable_int(text)
    if kind == "human_int_or_auto":
        stripped = text.strip()
        return -1 if stripped == "-1" or stripped.lower() == "auto" else human_readable_int(stripped)
    if kind in ("json", "json_config"):
        return json.loads(text)
    if kind == "json_or_str":
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text
    if kind == "bool_str":
        if text.lower() in ("true", "false"):
            return text.lower() == "true"
        raise ValueError(f"Invalid boolean value: {text}. Expected 'true' or 'false'.")
    if kind == "nullable_str":
        return None if not text or text == "None" else text
    return text


_TYPE_WORDS = {"int": "int", "float": "float", "human_int": "human_readable_int",
               "human_int_or_auto": "human_readable_int_or_auto", "json": "loads", "json_config": "loads"}


def _option_word(text: str, resolved: bool, table: FlagTable) -> OptionWord | None:
    """The option argparse takes the word for, or None when it takes it for an argument (a
    positional or an option's value)."""
    if not resolved:
        # ``--max-num-seqs=$(SEQS)``: the kubelet, compose or the shell substitutes the value only,
        # so argparse sees this option with some value (the name part is written as it is)
        name, equals, _ = text.partition("=")
        if not (equals and name.startswith("--") and name in table.by_option):
            return None
    return table.options.parse_optional(text)


# --- the parser -----------------------------------------------------------------------------------

SERVE_ENTRIES = ("vllm serve",)
PYTHON_ENTRIES = ("LLM", "EngineArgs", "AsyncEngineArgs")


#: ``--model`` / ``--model=X``, which ``vllm serve`` moves or refuses depending on the release
_MODEL_OPTION = r"--model(=.+|$)"
_CONFIG_OPTION = r"--config(=.+|$)"
_SERVED_NAME_OPTION = r"--served[-_]model[-_]name(=.+|$)"


def _plain(words: list[tuple[str, bool]]) -> bool:
    """Whether vLLM's preprocessing (without ``--config``) leaves these words (text, known) alike at
    every release: no ``--model`` (moved from 0.11.1, refused before), no ``-O`` (three spellings),
    and no dot in an option's name (dotted keys from 0.11; ``_`` -> ``-`` before the first dot only
    from 0.11). Then it only spells long option names with ``-`` (:func:`_normalised`)."""
    for text, resolved in words:
        if resolved and text.startswith("-") and (text.startswith("-O") or "." in text.split("=", 1)[0]
                                                  or _pattern(_MODEL_OPTION).match(text)):
            return False
    return True


def _normalised(text: str) -> str:
    """What ``_normalise_names`` makes of a long option with no dot in its name, at any release."""
    key, has_value, value = text.partition("=")
    if "_" not in key:
        return text
    return "--" + key[2:].replace("_", "-") + (("=" + value) if has_value else "")


def _word_reading(table: _ReadsWords, text: str) -> object:
    """How ``table`` reads one known word, for :meth:`VllmEngine.flags_reading`."""
    found = table.options.parse_optional(text)
    if found is None:
        return None
    return (text.split("=", 1)[0] in table.by_option, "ambiguous" if found.ambiguous else None if not found.known
            else (table.by_option[found.option].action, table.by_option[found.option].nargs, found.explicit is None))


_WORD_READINGS = WordReadings()

#: a launch whose words vLLM's preprocessing treats by release (:func:`_plain`)
_NOT_PLAIN: tuple[str, ...] = ("not plain",)


def _may_be_options(words: Iterable[tuple[str, bool]]) -> tuple[str, ...]:
    """The words (text, known) argparse may take for an option at some release: every other word
    (not known, or not starting with ``-``) is none at any release, and reads alike at all."""
    return tuple(text for text, resolved in words if resolved and text.startswith("-") and text != "-")


def _reading_words(launch: Launch) -> tuple[str, ...] | None:
    """The words of a launch that decide how a release reads it, the same at every release: the
    keyword names of a Python API launch; or the words that may be options, as the parser receives
    them when the preprocessing leaves them alike at every release, else ``_NOT_PLAIN``; None with
    ``--config``."""
    if launch.kwargs is not None:
        return tuple(name for name in launch.kwargs if not name.startswith("**"))
    written = [(token.value, not token.unresolved) for token in launch.args if not token.splat]
    if any(resolved and text == "--config" for text, resolved in written):
        return None
    if not _plain(written):
        return _NOT_PLAIN
    return tuple(_normalised(text) if text.startswith("--") else text for text in _may_be_options(written))


_LAUNCH_WORDS = LaunchMemo()


def _is_python_entry(launch: Launch) -> bool:
    return launch.kwargs is not None


class VllmEngine:
    name = "vllm"

    def known_versions(self) -> list[str]:
        return list(table_versions())

    def flags_key(self, version: str) -> object:
        return version  # every known version has a table of its own

    def flags_reading(self, launch: Launch, version: str) -> object | None:
        words = _LAUNCH_WORDS.get(launch, _reading_words)
        if words is None:
            return None  # --config: the file's options are written per release (and looked up in its table)
        # an unpinned launch is read at every release: the flag index, not every release's table,
        # unless the preprocessing (which needs the whole table) treats a word by release
        table = load_table(version) if words is _NOT_PLAIN else _reading_release(version)
        if launch.kwargs is not None:
            # Python API: a keyword is rejected exactly when the table has no such argument
            keywords = table.keywords
            return tuple(name in keywords for name in words)
        serve = not launch.entry.startswith("python -m")
        # argparse sees the words the preprocessing leaves: the same ones at every release when no
        # word is one that preprocessing treats by release, else those this release leaves
        preprocessed: object = "as written"
        if words is _NOT_PLAIN:
            assert isinstance(table, FlagTable)
            run = _Run(launch, version, None, Parsed(), serve)
            argv = [Word(token.value, token.span, "explicit", token.unresolved)
                    for token in launch.args if not token.splat]
            try:
                argv = self._preprocess(run, argv, table)
            except _Abort:
                return "abort"  # parse() stops before argparse: nothing is rejected as unknown
            preprocessed = tuple((word.text, word.resolved, word.span.start if word.span else None) for word in argv)
            words = _may_be_options((word.text, word.resolved) for word in argv)
        # _argparse rejects a word by whether each word is an option, which flag it sets (or that it
        # is ambiguous) and whether a value is glued to it; where it goes on depends only on the
        # flag's action and arity. The words and their spans are the same at both releases.
        return (preprocessed, serve and table.has_positional,
                *_WORD_READINGS.of(table.version, words, lambda text: _word_reading(table, text)))

    def reading_key(self, launch: Launch) -> object | None:
        words = _LAUNCH_WORDS.get(launch, _reading_words)
        if words is None or words is _NOT_PLAIN:
            return None  # read through a --config file, or preprocessed by release with the words' places
        return launch.kwargs is not None, not launch.entry.startswith("python -m"), words

    # .. parse ......................................................................................
    def parse(self, launch: Launch, version: EngineVersion, ctx: EngineContext) -> Parsed:
        parsed = Parsed()
        table = load_table(version.version)
        if _is_python_entry(launch):
            self._parse_kwargs(launch, table, parsed)
            return parsed
        run = _Run(launch, version.version, ctx, parsed, serve=not launch.entry.startswith("python -m"))
        words: list[Word] = []
        for token in launch.args:
            if token.splat:
                parsed.open_ended = True
                continue
            words.append(Word(token.value, token.span, "explicit", token.unresolved))
        try:
            words = self._preprocess(run, words, table)
        except _Abort:
            return parsed
        self._argparse(run, words, table)
        self._finish(run, table)
        if parsed.open_ended:
            # a word that expands to any number of words (``${ARGS}`` unquoted, ``"$@"``) may be the
            # value or the argument that looks missing here: not a rejection mtplint can know
            parsed.errors = [error for error in parsed.errors if error.kind != "missing-value"]
        return parsed

    def parse_words(self, argv: Iterable[Token], version: str, ctx: EngineContext | None = None,
                    launch: Launch | None = None) -> Parsed:
        """Parse bare tokens as ``vllm serve`` would (used by tests and by callers without a launch)."""
        if launch is None:
            launch = Launch("vllm", "vllm serve", SourceFile.from_text(""), None, [], list(argv), base_dir=".")
        return self.parse(launch, EngineVersion("vllm", version, True, "config"), ctx or _null_context())

    # -- stage 1: vLLM's own preprocessing ---------------------------------------------------------
    def _preprocess(self, run: _Run, words: list[Word], table: FlagTable) -> list[Word]:
        version = run.version
        if run.serve:
            words = self._model_option(run, words)
        if any(w.resolved and w.text == "--config" for w in words):
            words = self._pull_config(run, words, table)
        words = self._normalise_names(run, words)
        if _at_least(version, "0.11"):
            words = self._collect_dotted(run, words)
        return words

    def _model_option(self, run: _Run, words: list[Word]) -> list[Word]:
        version = run.version
        if _at_least(version, "0.11.1"):
            # vLLM 0.33.0 argparse_utils.py L324-356: the first --model/--model=X moves to the positional slot
            for index, word in enumerate(words):
                if word.resolved and _pattern(_MODEL_OPTION).match(word.text):
                    if word.text == "--model":
                        if index + 1 >= len(words):
                            run.error("list index out of range (--model without a value)", word.span, "--model", kind="missing-value")
                            raise _Abort
                        tag, rest = words[index + 1], index + 2
                    else:
                        tag = Word(word.text[len("--model="):], word.span, word.origin)
                        rest = index + 1
                    return [tag, *words[:index], *words[rest:]]
            if (words and words[0].text.startswith("-")
                    and not any(_pattern(_CONFIG_OPTION).match(w.text) for w in words)
                    and any(_pattern(_SERVED_NAME_OPTION).match(w.text) for w in words)):
                run.error("`model` should be provided as the first positional argument when using `vllm serve`. "
                          "i.e. `vllm serve <model> --<arg> <value>`.", words[0].span, kind="startup")
            return words
        for word in words:
            if word.resolved and word.text == "--model":
                # 0.8.3-0.11.0 parse_args; 0.8.2 ServeSubcommand.cmd (model != default)
                run.error("With `vllm serve`, you should provide the model as a positional argument or in a "
                          "config file instead of via the `--model` option.", word.span, "--model", kind="startup")
                break
        return words

    def _pull_config(self, run: _Run, words: list[Word], table: FlagTable) -> list[Word]:
        """``--config file.yaml`` (the exact word only): the file's options go after ``serve <model>``."""
        positions = [i for i, w in enumerate(words) if w.resolved and w.text == "--config"]
        if len(positions) > 1:
            run.error("More than one config file specified!", words[positions[1]].span, "--config", kind="conflict")
            raise _Abort
        index = positions[0]
        if index == len(words) - 1:
            run.error("No config file specified! Please check your command-line arguments.", words[index].span, "--config",
                      kind="missing-value")
            raise _Abort
        path_word = words[index + 1]
        if not path_word.resolved:
            run.parsed.notes.append(f"--config {path_word.text}: the path is not known; its options are not seen")
            run.parsed.open_ended = True
            run.parsed.unread_configs.append((f"--config {path_word.text}", path_word.span))
            return [*words[:index], *words[index + 2:]]
        extension = path_word.text.split(".")[-1]
        if extension not in ("yaml", "yml"):
            run.error(f"Config file must be of a yaml/yml type. {extension} supplied", path_word.span, "--config")
            raise _Abort
        config_words = self._load_config(run, path_word, table)
        if config_words is None:
            return [*words[:index], *words[index + 2:]]
        before, after = words[:index], words[index + 2:]
        if not run.serve:
            return [*config_words, *before, *after] if not before or before[0].text.startswith("-") else \
                [before[0], *config_words, *before[1:], *after]
        model_in_cli = bool(before) and not before[0].text.startswith("-")
        if not _at_least(run.version, "0.8.3"):
            if index == 0:
                run.error("No model_tag specified! Please check your command-line arguments.", words[0].span, "--config",
                          kind="missing-value")
                raise _Abort
            return [before[0], *config_words, *before[1:], *after]
        model_in_config = any(w.text == "--model" for w in config_words)
        if not model_in_cli and not model_in_config:
            run.error("No model specified! Please specify model either as a positional argument or in a config file.",
                      words[index].span, "--config", kind="startup")
            raise _Abort
        if model_in_cli:
            return [before[0], *config_words, *before[1:], *after]
        return [*config_words, *before, *after]

    def _load_config(self, run: _Run, path_word: Word, table: FlagTable) -> list[Word] | None:
        from mtplint.extract.yamlpos import YamlError, load_all  # noqa: PLC0415 - PyYAML: only for a launch with --config

        ctx = run.ctx
        run.parsed.config_files.append(path_word.text)
        if ctx is None:
            return None
        path = ctx.resolve(run.launch, path_word.text)
        source = ctx.loader.load(path)
        if source is None:
            run.parsed.notes.append(f"--config {path_word.text}: file not found; its options are not seen")
            run.parsed.open_ended = True
            run.parsed.unread_configs.append((f"--config {path_word.text}", path_word.span))
            return None
        run.parsed.config_files[-1] = source.display
        try:
            documents = load_all(source)
        except YamlError as error:
            ctx.issues.add("MTP001", f"malformed vLLM config file: {error}", source.span(error.offset, error.offset + 1))
            run.error(f"cannot read config file {path_word.text}", path_word.span, "--config", kind="startup")
            raise _Abort from None
        root = documents[0] if documents else None
        if root is None or root.is_null:
            run.error("'NoneType' object has no attribute 'items' (empty config file)", path_word.span, "--config",
                      kind="startup")
            raise _Abort
        if not root.is_map:
            ctx.issues.add("MTP001", "malformed vLLM config file: the top level must be a mapping", root.span())
            raise _Abort
        version = run.version
        words: list[Word] = []
        origin = "config-file"
        for key, key_node, value_node in root.entries():
            key_span = key_node.span()
            try:
                value = value_node.python()
            except YamlError as error:
                ctx.issues.add("MTP001", f"malformed vLLM config file: {error}", source.span(error.offset, error.offset + 1))
                continue
            value_span = value_node.span()
            if isinstance(value, bool):
                if value:
                    words.append(Word("--" + key, key_span, origin))
                elif not run.serve and _at_least(version, "0.28") and f"--no-{key}" in table.by_option:
                    words.append(Word(f"--no-{key}", key_span, origin))
                else:
                    run.parsed.notes.append(
                        f"{source.display}: '{key}: false' is ignored by vLLM {version} (the option keeps its default)")
            elif isinstance(value, list) and _at_least(version, "0.11"):
                if value:
                    words.append(Word("--" + key, key_span, origin))
                    for item, item_node in zip(value, value_node.items, strict=False):
                        words.append(Word(str(item), item_node.span(), origin))
            elif isinstance(value, dict) and _at_least(version, "0.16.0"):
                spans: dict[str, Span | None] = {k: v.span() for k, _, v in value_node.entries()}
                words.append(Word("--" + key, key_span, origin))
                words.append(Word(json.dumps(value), value_span, origin, key_spans=spans))
            else:
                words.append(Word("--" + key, key_span, origin))
                words.append(Word(str(value), value_span, origin))
        return words

    def _normalise_names(self, run: _Run, words: list[Word]) -> list[Word]:
        modern = _at_least(run.version, "0.11")
        result: list[Word] = []
        for index, word in enumerate(words):
            text = word.text
            if not word.resolved:
                result.append(word)
                continue
            if text.startswith("--"):
                key, has_value, value = text.partition("=")
                if "_" not in key:
                    result.append(word)  # spelled with "-" already (words here have no dotted keys yet)
                    continue
                if modern:
                    name, dot, rest = key[2:].partition(".")
                    key = "--" + name.replace("_", "-") + dot + rest
                else:
                    key = "--" + key[2:].replace("_", "-")
                result.append(Word(key + (("=" + value) if has_value else ""), word.span, word.origin, word.unresolved,
                                   word.key_spans, word.synthetic))
            elif text.startswith("-O") and text != "-O" and _at_least(run.version, "0.12.0"):
                level = text[3:] if text[2:3] == "=" else text[2:]
                result.append(Word("--optimization-level", word.span, word.origin))
                result.append(Word(level, word.span, word.origin))
            elif text == "-O" and _at_least(run.version, "0.12.0") and index + 1 < len(words) \
                    and words[index + 1].text in ("0", "1", "2", "3"):
                result.append(Word("--optimization-level", word.span, word.origin))
            elif text.startswith("-O") and text != "-O" and modern and text[2:3] != ".":
                level = text[3:] if text[2:3] == "=" else text[2:]
                result.append(Word(f"-O.level={level}", word.span, word.origin))
            elif text == "-O" and modern and index + 1 < len(words) and words[index + 1].text in ("0", "1", "2", "3"):
                result.append(Word("-O.level", word.span, word.origin))
            elif text.startswith("-O") and len(text) == 2 + 1 and not modern:
                result.append(Word("-O", word.span, word.origin))
                result.append(Word(text[2:], word.span, word.origin))
            else:
                result.append(word)
        return result

    def _collect_dotted(self, run: _Run, words: list[Word]) -> list[Word]:
        """``--x.key value`` words become one ``--x <json>`` at the end (vLLM 0.33.0 argparse_utils.py L447-500)."""
        delete: set[int] = set()
        collected: dict[str, dict[str, Any]] = {}
        first_span: dict[str, Span | None] = {}
        key_spans: dict[str, dict[str, Span | None]] = {}
        origins: dict[str, str] = {}
        human = _at_least(run.version, "0.20")
        for index, word in enumerate(words):
            if index in delete or not word.resolved:
                continue
            text = word.text
            if text.startswith("--") and "." not in text:
                continue
            if not (text.startswith("-") and "." in text):
                continue
            value_span = word.span
            if "=" in text:
                text, value_text = text.split("=", 1)
                if "." not in text:
                    continue
            else:
                if index + 1 >= len(words):
                    run.error("list index out of range (dotted option without a value)", word.span, text, kind="missing-value")
                    raise _Abort
                value_word = words[index + 1]
                if not value_word.resolved:
                    run.parsed.notes.append(f"{text}: value {value_word.text} is not known")
                value_text = value_word.text
                value_span = value_word.span
                delete.add(index + 1)
            if text.endswith("+"):
                text = text[:-1]
                value_text = json.dumps(value_text.split(","))
            key, *keys = text.split(".")
            value: Any
            try:
                value = json.loads(value_text)
            except json.JSONDecodeError:
                value = value_text
                if human:
                    try:
                        value = human_readable_int(value_text)
                    except ValueError:
                        value = value_text
            except (ValueError, RecursionError) as error:
                # vLLM catches only JSONDecodeError here (0.30.0 utils/argparse_utils.py L423-431): a
                # number past Python's digit limit or a value nested too deeply stops it at start-up
                run.error(f"{text}: {reason(error)}", value_span, key, kind="invalid-json")
                value = value_text
            nested: Any = value
            for part in reversed(keys):
                nested = {part: nested}
            target = collected.setdefault(key, {})
            _merge(target, nested)
            first_span.setdefault(key, word.span)
            origins.setdefault(key, word.origin)
            if keys:
                key_spans.setdefault(key, {})[keys[0]] = value_span
            delete.add(index)
        result = [w for i, w in enumerate(words) if i not in delete]
        for key, value in collected.items():
            result.append(Word(key, first_span[key], origins[key]))
            result.append(Word(json.dumps(value), first_span[key], origins[key], key_spans=key_spans.get(key, {}),
                               dotted=True))
        return result

    # -- stage 2: argparse ------------------------------------------------------------------------
    def _argparse(self, run: _Run, words: list[Word], table: FlagTable) -> None:
        by_option = table.by_option
        positional = table.positional if run.serve else None
        positional_done = False
        index = 0
        extras: list[list[Word]] = []
        #: ``--enforce-eager true``: a boolean word right after a switch (argparse: unrecognized arguments)
        bool_values: list[tuple[Word, str]] = []
        switch: str | None = None  # the option of the switch just stored, if the previous word was one

        def is_option(word: Word) -> bool:
            return _option_word(word.text, word.resolved, table) is not None

        # each word read once: the loop asks about a word as a value of the option before it, and
        # again as itself
        option_words = [_option_word(word.text, word.resolved, table) for word in words]
        while index < len(words):
            word = words[index]
            if word.resolved and word.text == "--":
                for rest in words[index + 1:]:
                    extras.append([rest])
                break
            after_switch, switch = switch, None
            found = option_words[index]
            if found is None:
                if after_switch is not None and word.resolved and word.text.lower() in BOOL_WORDS \
                        and (positional is None or positional_done):
                    bool_values.append((word, after_switch))
                    index += 1
                    continue
                if positional is not None and not positional_done:
                    self._store(run, positional, word.text, word, word.text)
                    positional_done = True
                elif extras and extras[-1] and is_option(extras[-1][0]) and extras[-1][0].text.split("=")[0] not in by_option:
                    extras[-1].append(word)
                else:
                    extras.append([word])
                index += 1
                continue
            if found.ambiguous:
                run.error(ambiguous_message(found), word.span, word.text.partition("=")[0], kind="ambiguous")
                index += 1
                continue
            if not found.known:
                extras.append([word])
                index += 1
                continue
            flag, option, explicit = by_option[found.option], found.option, found.explicit
            if not flag.takes_value:
                if explicit is not None:
                    run.error(ignored_explicit_message(flag.label(), explicit), word.span, option, kind="bool-value")
                else:
                    value = (option not in flag.negative) if flag.action == "bool_pair" else flag.const
                    if flag.action == "count":
                        previous = run.parsed.options.get(flag.dest)
                        value = (previous.value if previous else 0) + 1
                    run.parsed.options[flag.dest] = OptionValue(value, word.span, word.origin, option)
                    switch = option
                index += 1
                continue
            if explicit is not None:
                self._store(run, flag, explicit, word, option)
                stored = run.parsed.options.get(flag.dest)
                if flag.nargs in ("*", "+") and stored is not None and not isinstance(stored.value, list):
                    stored.value = [stored.value]  # argparse: ``--x=a`` with nargs="+" stores ['a']
                index += 1
                continue
            wanted = flag.nargs
            # the arguments up to the next option or ``--``, as many as the option could take
            most = 1 if wanted in (None, "?") else int(wanted) if isinstance(wanted, int) else len(words)
            cursor = index + 1
            while cursor < len(words) and cursor - index <= most and option_words[cursor] is None and not (
                    words[cursor].resolved and words[cursor].text == "--"):
                cursor += 1
            try:
                taken = values_taken(wanted, cursor - index - 1)
            except ArgumentCountError as error:
                run.error(f"argument {flag.label()}: {error}", word.span, option, kind="missing-value")
                index = cursor
                continue
            values = words[index + 1:index + 1 + taken]
            cursor = index + 1 + taken
            if wanted in ("*", "+") or (isinstance(wanted, int) and wanted > 1):
                try:
                    converted = [self._convert_value(run, flag, v.text, v, option) for v in values]
                except ValueError:  # recorded as a CliError by _convert_value (``--cudagraph-capture-sizes ''``)
                    index = cursor
                    continue
                run.parsed.options[flag.dest] = OptionValue(
                    list(converted), values[0].span if values else word.span, word.origin, option,
                    tuple(name for v in values for name in v.unresolved))
            elif values:
                self._store(run, flag, values[0].text, values[0], option, flag_word=word)
            else:
                run.parsed.options[flag.dest] = OptionValue(flag.const, word.span, word.origin, option)
            index = cursor
        if positional is not None and positional.required and not positional_done:
            run.error(f"the following arguments are required: {positional.dest}", None, kind="missing-value")
        for word, switch_option in bool_values:
            run.error(unrecognized_message([word.text]), word.span, switch_option, kind="bool-value")
        for group in extras:
            run.error(unrecognized_message(w.text for w in group), group[0].span,
                      group[0].text if is_option(group[0]) else None, kind="unknown")

    def _convert_value(self, run: _Run, flag: Flag, text: str, word: Word, option: str | None) -> Any:
        if not word.resolved:
            return text
        try:
            value = _convert(flag.type, text, run.version)
        except RecursionError:
            # argparse catches only TypeError/ValueError: vLLM stops with this traceback at start-up
            run.error(f"argument {flag.label()}: value nested too deeply for Python's JSON reader "
                      "(RecursionError)", word.span, option, kind="invalid-json")
            raise ValueError("nested too deeply") from None
        except (ValueError, OverflowError) as error:  # OverflowError: int() of an infinite float
            kind = flag.type.removeprefix("optional:")
            if flag.type.startswith("optional:") or kind in ("json", "json_config"):
                message = f"argument {flag.label()}: Value {text} cannot be converted to {_TYPE_WORDS.get(kind, kind)}."
            elif kind in ("human_int", "human_int_or_auto") and "Decimals" in str(error):
                message = f"argument {flag.label()}: {error}"
            else:
                message = f"argument {flag.label()}: invalid {_TYPE_WORDS.get(kind, kind)} value: {text!r}"
            run.error(message, word.span, option,
                      kind="invalid-json" if kind in ("json", "json_config") else "invalid-value")
            raise
        if flag.choices is not None and value is not None and value not in flag.choices:
            run.error(invalid_choice_message(flag.label(), value, flag.choices), word.span, option, kind="invalid-choice")
            raise ValueError("invalid choice")
        return value

    def _store(self, run: _Run, flag: Flag, text: str, word: Word, option: str | None,
               flag_word: Word | None = None) -> None:
        origin = word.origin if flag_word is None else flag_word.origin
        if not word.resolved:
            run.parsed.options[flag.dest] = OptionValue(text, word.span, origin, option or "", word.unresolved)
            return
        try:
            value = self._convert_value(run, flag, text, word, option)
        except (ValueError, OverflowError):
            return
        if flag.action in ("append", "extend"):
            previous = run.parsed.options.get(flag.dest)
            items = list(previous.value) if previous and isinstance(previous.value, list) else []
            items.extend(value if flag.action == "extend" and isinstance(value, list) else [value])
            value = items
        if word.key_spans or word.dotted:
            # the dotted keys' JSON comes last and replaces a full value of the same flag (MTP106)
            replaced = run.parsed.options.get(flag.dest) if word.dotted else None
            run.parsed.options[flag.dest] = JsonOptionValue(value, word.span, origin, option or "",
                                                            key_spans=dict(word.key_spans), replaced=replaced)
        else:
            run.parsed.options[flag.dest] = OptionValue(value, word.span, origin, option or "")

    # -- stage 3: after argparse --------------------------------------------------------------------
    def _finish(self, run: _Run, table: FlagTable) -> None:
        options = run.parsed.options
        tag = options.pop("model_tag", None)
        if tag is not None and tag.value is not None:
            if run.serve:
                options["model"] = tag  # ServeSubcommand.cmd: args.model = args.model_tag
            else:
                run.parsed.notes.append(f"positional argument {tag.value!r} is ignored by the api_server entry point")
        spec = options.get("speculative_config")
        if spec is not None and not spec.unresolved and isinstance(spec.value, str):
            # 0.8.2 stored the text and read it with ast.literal_eval when building the engine (its engine/arg_utils.py)
            from mtplint import pysyntax  # noqa: PLC0415 - ast: only for these old releases

            try:
                literal = pysyntax.literal(spec.value)
                spec.value = literal
            except (ValueError, SyntaxError):
                run.error(f"malformed node or string in --speculative-config: {spec.value!r}", spec.span,
                          spec.flag, kind="invalid-json")
        self._shortcut_conflicts(run)

    def _shortcut_conflicts(self, run: _Run) -> None:
        """``--spec-method/--spec-model/--spec-tokens`` vs the same key in the JSON (vLLM 0.33.0 engine/arg_utils.py L2119)."""
        options = run.parsed.options
        spec = options.get("speculative_config")
        spec_dict = spec.value if spec is not None and isinstance(spec.value, dict) else {}
        for dest, key, flag in (("spec_method", "method", "--spec-method"), ("spec_model", "model", "--spec-model"),
                                ("spec_tokens", "num_speculative_tokens", "--spec-tokens")):
            shortcut = options.get(dest)
            if shortcut is None or shortcut.value is None:
                continue
            normalised = {k.replace("-", "_"): v for k, v in spec_dict.items()}
            if key in normalised:
                run.error(f"{flag} and --speculative-config['{key}'] are mutually exclusive", shortcut.span, flag,
                          kind="conflict")

    # -- Python API -------------------------------------------------------------------------------
    def _parse_kwargs(self, launch: Launch, table: FlagTable, parsed: Parsed) -> None:
        known = table.keywords
        owner = launch.entry.split(".")[-1].split("(")[0] or "EngineArgs"
        for name, kwarg in (launch.kwargs or {}).items():
            if name.startswith("**"):
                parsed.open_ended = True
                continue
            if name not in known:
                cls = "EngineArgs" if owner == "LLM" else owner
                parsed.errors.append(CliError(f"{cls}.__init__() got an unexpected keyword argument '{name}'",
                                              kwarg.span, name, "unknown"))
                continue
            value = kwarg.value
            if name == "speculative_config" and isinstance(value, dict):
                value = {str(k).replace("-", "_"): v for k, v in value.items()}
            if isinstance(value, str) and name == "max_model_len" and not kwarg.unresolved:
                try:  # noqa: SIM105 - contextlib would be start-up nothing else of a run needs
                    value = human_readable_int(value)
                except ValueError:
                    pass
            parsed.options[name] = OptionValue(value, kwarg.span, "explicit", name, kwarg.unresolved)

    # .. effective ...................................................................................
    def effective(self, launch: Launch, parsed: Parsed, version: EngineVersion, hardware: Hardware,
                  catalogs: Catalogs) -> dict[str, Setting]:
        return open_to_config(_effective(launch, parsed, version, hardware, catalogs), parsed.unread_configs)


class JsonOptionValue(OptionValue):
    """A JSON option assembled from parts (dotted keys, a YAML mapping): each top-level key keeps
    the span of the word or YAML value that set it."""

    __slots__ = ("key_spans", "replaced")
    key_spans: dict[str, Span | None]
    #: the full value (``--x '{...}'``, a ``x:`` mapping in the --config YAML) that the dotted
    #: ``--x.key`` flags replaced: vLLM keeps only the dotted keys (0.33.0 argparse_utils.py L447-500)
    replaced: OptionValue | None

    def __init__(self, value: Any, span: Span | None, origin: str = "explicit", flag: str = "",
                 unresolved: tuple[str, ...] = (), key_spans: dict[str, Span | None] | None = None,
                 replaced: OptionValue | None = None) -> None:
        super().__init__(value, span, origin, flag, unresolved)
        self.key_spans = key_spans if key_spans is not None else {}
        self.replaced = replaced


def key_span(option: OptionValue, key: str) -> Span | None:
    if isinstance(option, JsonOptionValue):
        return option.key_spans.get(key) or option.span
    return option.span


def _merge(original: dict[str, Any], update: dict[str, Any]) -> None:
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(original.get(key), dict):
            _merge(original[key], value)
        elif isinstance(value, list) and isinstance(original.get(key), list):
            original[key] += value
        else:
            original[key] = value


def _null_context() -> EngineContext:
    return EngineContext(FileLoader("."), Issues())


# --- effective settings ---------------------------------------------------------------------------

#: vLLM's MTP method names (0.33.0 ``vllm/config/speculative.py`` ``MTPModelTypes``); ``__post_init__``
#: replaces every one by ``mtp`` with a deprecation warning
def normalise_method(method: Any) -> Any:
    if isinstance(method, str) and (method == "mtp" or method.endswith("_mtp")):
        return "mtp"
    if method == "[ngram]":
        return "ngram"
    return method


def _infer_method(model: Any) -> str | None:
    """The method vLLM infers from a draft model name when ``method`` is unset (0.33.0
    ``vllm/config/speculative.py`` ``__post_init__``: ``ngram``, the ``eagle``/``dflash``/``dspark``
    names L1433-1502, a dotted import path, else ``draft_model``)."""
    if not isinstance(model, str):
        return None
    lowered = model.lower()
    if model in ("ngram", "[ngram]"):
        return "ngram"
    if "eagle3" in lowered:
        return "eagle3"
    if "eagle-" in lowered:
        return "eagle"
    if "dflash" in lowered:
        return "dflash"
    if "dspark" in lowered:
        return "dspark"
    if re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_]\w*)+", model) and "/" not in model:
        return "custom_class"
    return "draft_model"


_GIB_MIB = 1024


def _effective(launch: Launch, parsed: Parsed, version: EngineVersion, hardware: Hardware,
               catalogs: Catalogs) -> dict[str, Setting]:
    options = parsed.options
    table = load_table(version.version)
    defaults = table.by_dest
    result: dict[str, Setting] = {}

    def from_option(dest: str, value: Any = None, use_value: bool = False) -> Setting | None:
        option = options.get(dest)
        if option is None:
            return None
        return Setting(value if use_value else option.value, option.origin, option.span, option.unresolved)

    def default(dest: str, fallback: Any = None) -> Any:
        flag = defaults.get(dest)
        value = flag.default if flag is not None else fallback
        return None if isinstance(value, dict) and "object" in value else value

    # model
    model_setting = from_option("model") or Setting(default("model"), "default")
    result["model"] = model_setting
    model_name = model_setting.value if not model_setting.unresolved else None

    # speculative decoding
    spec_option = options.get("speculative_config")
    spec = spec_option.value if spec_option is not None and isinstance(spec_option.value, dict) else None
    spec = {str(k).replace("-", "_"): v for k, v in spec.items()} if spec else spec
    shortcut = {dest: options[dest] for dest in ("spec_method", "spec_model", "spec_tokens")
                if dest in options and options[dest].value is not None}
    unknown_keys: list[str] = []
    if spec_option is not None and spec_option.unresolved and isinstance(spec_option.value, str):
        # `{"method":"mtp","num_speculative_tokens":$(nproc)}`: the literal keys are still known
        partial = partial_object(spec_option.value)
        if partial is not None:
            spec = {str(k).replace("-", "_"): v for k, v in partial.known.items()}
            unknown_keys = [str(k).replace("-", "_") for k in partial.unknown]
    if spec_option is not None and spec_option.unresolved and spec is None:
        for key in ("spec_method", "spec_tokens", "spec_model"):
            result[key] = Setting(None, spec_option.origin, spec_option.span, spec_option.unresolved)
    elif spec or shortcut or unknown_keys:
        spec = dict(spec or {})
        spans: dict[str, tuple[str, Span | None, tuple[str, ...]]] = {}
        for key in spec:
            assert spec_option is not None
            spans[key] = (spec_option.origin, key_span(spec_option, key), ())
        for key in unknown_keys:
            assert spec_option is not None
            spec[key] = None
            spans[key] = (spec_option.origin, spec_option.span, spec_option.unresolved)
        for dest, key in (("spec_method", "method"), ("spec_model", "model"), ("spec_tokens", "num_speculative_tokens")):
            if dest in shortcut:
                spec.setdefault(key, shortcut[dest].value)
                spans.setdefault(key, (shortcut[dest].origin, shortcut[dest].span, shortcut[dest].unresolved))
        method = spec.get("method")
        if "method" in unknown_keys:
            result["spec_method"] = Setting(None, *spans["method"])
        elif method is not None:
            origin, span, unresolved = spans["method"]
            result["spec_method"] = Setting(normalise_method(method), origin, span, unresolved,
                                            extra={"raw": method} if normalise_method(method) != method else {})
        else:
            inferred = _infer_method(spec.get("model"))
            origin, span, unresolved = spans.get("model", spans.get("num_speculative_tokens", ("inferred", None, ())))
            result["spec_method"] = Setting(inferred, "inferred", span, unresolved)
        if "num_speculative_tokens" in spec:
            origin, span, unresolved = spans["num_speculative_tokens"]
            result["spec_tokens"] = Setting(spec["num_speculative_tokens"], origin, span, unresolved)
        else:
            result["spec_tokens"] = Setting(None, "default", spec_option.span if spec_option else None,
                                            extra={"note": "n_predict of the draft (MTP layers) when unset"})
        if spec.get("model") is not None or "model" in unknown_keys:
            origin, span, unresolved = spans["model"]
            result["spec_model"] = Setting(spec["model"], origin, span, unresolved)
        elif normalise_method(spec.get("method")) == "mtp":
            result["spec_model"] = Setting(model_name, "inferred", None,
                                           extra={"note": "MTP uses the target model's own weights"})
        else:
            result["spec_model"] = Setting(None, "default")
    else:
        result["spec_method"] = Setting(None, "default")
        result["spec_tokens"] = Setting(None, "default")
        result["spec_model"] = Setting(None, "default")

    # prefix caching: on for plain decoders; hybrids (Qwen3-Next/3.5/3.6) from 0.28
    # (https://github.com/vllm-project/vllm/pull/50991)
    info = catalogs.find_model(model_name)
    explicit_prefix = from_option("enable_prefix_caching")
    if explicit_prefix is not None and explicit_prefix.value is not None:
        result["prefix_caching"] = explicit_prefix
    elif info is not None and info.hybrid:
        on = version.at_least("0.28.0")
        extra: dict[str, Any] = {"reason": "hybrid model: prefix caching default ON from vLLM 0.28 (PR #50991), OFF before"}
        if on is None:
            extra["depends_on_version"] = True
            on = compare(version.version, "0.28.0") >= 0
        result["prefix_caching"] = Setting(on, "default", extra=extra)
    elif info is None and model_name is not None:
        result["prefix_caching"] = Setting(True, "default", extra={"note": "unknown model: assumed not hybrid"})
    else:
        result["prefix_caching"] = Setting(True, "default")

    # chunked prefill (V1 engine: on unless disabled; engine/arg_utils.py
    # _set_default_chunked_prefill_and_prefix_caching_args)
    chunked = from_option("enable_chunked_prefill")
    result["chunked_prefill"] = chunked if chunked is not None and chunked.value is not None else Setting(True, "default")

    result["kv_cache_dtype"] = from_option("kv_cache_dtype") or Setting(default("kv_cache_dtype", "auto"), "default")

    # memory fraction: 0.90 up to 0.19.0, 0.92 from 0.20.0 (config/cache.py of the 0.8.2-0.19.0 and 0.20.0 wheels)
    memory = from_option("gpu_memory_utilization")
    if memory is None:
        value = default("gpu_memory_utilization", 0.92)
        extra = {}
        if not version.known and version.in_range(None, "0.20.0") is None:
            extra["depends_on_version"] = True
        memory = Setting(value, "default", extra=extra)
    result["memory_fraction"] = memory

    result["max_concurrency"] = _max_num_seqs(launch, options, hardware)
    result["tensor_parallel"] = from_option("tensor_parallel_size") or Setting(default("tensor_parallel_size", 1), "default")

    eager = options.get("enforce_eager")
    level = options.get("optimization_level")
    compilation = options.get("compilation_config")
    if eager is not None and eager.value is True:
        result["cuda_graphs"] = Setting(False, eager.origin, eager.span, eager.unresolved, extra={"reason": "enforce_eager"})
    elif level is not None and str(level.value) == "0":
        result["cuda_graphs"] = Setting(False, level.origin, level.span, level.unresolved, extra={"reason": "-O0"})
    elif compilation is not None and isinstance(compilation.value, dict) and \
            str(compilation.value.get("cudagraph_mode", "")).upper() == "NONE":
        result["cuda_graphs"] = Setting(False, compilation.origin, compilation.span, extra={"reason": "cudagraph_mode NONE"})
    else:
        result["cuda_graphs"] = Setting(True, "default")

    result["quantization"] = from_option("quantization") or Setting(None, "default")
    result["max_model_len"] = from_option("max_model_len") or Setting(None, "default",
                                                                      extra={"note": "derived from the model config"})
    return result


def _max_num_seqs(launch: Launch, options: dict[str, OptionValue], hardware: Hardware) -> Setting:
    """``max_num_seqs`` when unset (0.33.0 engine/arg_utils.py ``get_batch_defaults`` L2940-3039; 0.11.0
    L1605-1651, the same thresholds).

    GPU known: 256 below 70 GiB or on an A100, 1024 at >=70 GiB. GPU unknown: 256 (the small-GPU
    default, the most common) with ``{"gpu_unknown": true}`` -- the value is a guess, rules must not
    treat it as fact.
    """
    option = options.get("max_num_seqs")
    if option is not None and option.value is not None:
        return Setting(option.value, option.origin, option.span, option.unresolved)
    gpu = hardware.gpu
    if gpu is None:
        return Setting(256, "default", extra={"gpu_unknown": True, "note": "256 below 70 GiB or A100, 1024 above"})
    large = gpu.memory_mib >= 70 * _GIB_MIB and "a100" not in gpu.id and gpu.id != "dgx-spark"
    return Setting(1024 if large else 256, "default", extra={"by_gpu": gpu.id})


ENGINE = VllmEngine()
