"""Stage 3 of the pipeline: engine models.

One module per engine. Each turns a launch's argv (or Python keyword arguments) and environment
into the options the engine's own parser would store, keyed by the engine's destination names,
and lists what that parser would reject. Flag sets and defaults depend on the engine version.
"""

from __future__ import annotations

from mtplint.extract import FileLoader
from mtplint.extract.launch import Launch
from mtplint.hardware import Hardware
from mtplint.records import Record
from mtplint.settings import Setting
from mtplint.source import Issues, Span
from mtplint.versions import EngineVersion

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any, Protocol, TypeVar

    from mtplint.catalogs import Catalogs

    T = TypeVar("T")


_UNREAD = object()


class LaunchMemo:
    """What an engine works out from a launch alone, kept for the launch it was last asked about:
    narrowing asks how each release reads one launch, release after release, and the launch's own
    part of the answer is the same at each (launches are not changed once extracted)."""

    __slots__ = ("_launch", "_value")

    def __init__(self) -> None:
        self._launch: Launch | None = None
        self._value: Any = None

    def get(self, launch: Launch, work: Callable[[Launch], T]) -> T:
        """``work(launch)``, worked out again only for another launch than the last one."""
        if launch is not self._launch:
            self._value = work(launch)
            self._launch = launch
        value: T = self._value
        return value


class WordReadings:
    """How each release's option table reads known words, for version narrowing: a tree's launches
    repeat a few hundred words over and over, and a few dozen lists of options (their values left
    out). A reading depends only on the table and the word's text; at most ``kept`` words, and
    ``kept`` lists of words, are remembered per table."""

    __slots__ = ("_kept", "_lists", "_tables")

    def __init__(self, kept: int = 4096) -> None:
        self._kept = kept
        self._tables: dict[str, dict[str, object]] = {}
        self._lists: dict[str, dict[tuple[str | None, ...], tuple[object, ...]]] = {}

    def of(self, version: str, texts: tuple[str | None, ...], read: Callable[[str], object]) -> tuple[object, ...]:
        """The reading of each of ``texts`` by the table of ``version`` (None for None: a word
        mtplint cannot read); ``read(text)`` works out one that is not known."""
        lists = self._lists.get(version)
        if lists is None:
            lists = self._lists[version] = {}
        found = lists.get(texts)
        if found is None:
            found = tuple(self._read(version, texts, read))
            if len(lists) < self._kept and len(texts) <= self._kept:  # a list this long is no repeating one
                lists[texts] = found
        return found

    def _read(self, version: str, texts: tuple[str | None, ...], read: Callable[[str], object]) -> Iterator[object]:
        known = self._tables.get(version)
        if known is None:
            known = self._tables[version] = {}
        for text in texts:
            if text is None:
                yield None
                continue
            found = known.get(text, _UNREAD)
            if found is _UNREAD:
                found = read(text)
                if len(known) < self._kept:
                    known[text] = found
            yield found


class OptionValue(Record):
    """One stored option: the parsed value and the token that set it."""

    __slots__ = ("value", "span", "origin", "flag", "unresolved")
    value: Any
    span: Span | None
    origin: str
    flag: str
    unresolved: tuple[str, ...]

    def __init__(self, value: Any, span: Span | None, origin: str = "explicit", flag: str = "",
                 unresolved: tuple[str, ...] = ()) -> None:
        self.value = value
        self.span = span
        self.origin = origin
        self.flag = flag
        self.unresolved = unresolved

    def to_json(self) -> Any:
        if self.unresolved:
            return {"unresolved": self.value if isinstance(self.value, str) else str(self.value)}
        return self.value


class CliError(Record):
    """An argument the engine's parser would reject, in the engine's own words where known.

    ``kind`` is one of (every engine model uses this set; rules select on it):

    * ``unknown``: a flag (or keyword argument) the parser does not know
    * ``ambiguous``: an abbreviation that is the prefix of several flags (argparse ``allow_abbrev``)
    * ``removed``: a removed flag the engine still registers, only to fail with a removal message
    * ``bool-value``: a value given to a boolean switch (``--x=false``, or ``--x true`` where the
      value is left over as a stray argument); ``flag`` is the switch, ``span`` the value's word
    * ``invalid-choice``: a value outside the flag's ``choices``
    * ``invalid-json``: a value that is not the JSON (or Python literal) the flag needs
    * ``invalid-value``: a value its type conversion refuses (int, float, a file that must be YAML, ...)
    * ``missing-value``: a flag, positional or file without its value
    * ``conflict``: two arguments that exclude each other
    * ``startup``: a check that runs when the server starts, after the parser accepted the arguments
    """

    __slots__ = ("message", "span", "flag", "kind")
    message: str
    span: Span | None
    flag: str | None
    kind: str

    def __init__(self, message: str, span: Span | None, flag: str | None = None, kind: str = "invalid-value") -> None:
        self.message = message
        self.span = span
        self.flag = flag
        self.kind = kind

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"message": self.message, "kind": self.kind}
        if self.flag:
            data["flag"] = self.flag
        if self.span is not None:
            data.update({"file": self.span.file, "line": self.span.line, "column": self.span.column})
        return data


class Parsed(Record):
    """What an engine's parser makes of a launch."""

    __slots__ = ("options", "errors", "open_ended", "config_files", "unread_configs", "notes")
    options: dict[str, OptionValue]
    errors: list[CliError]
    #: the launch may receive arguments mtplint cannot see (``"$@"``, an extra-args variable)
    open_ended: bool
    #: files the launch reads (``--config``), display paths
    config_files: list[str]
    #: ``--config`` files whose options mtplint could not see (path unknown, not in the checkout,
    #: unreadable): how each is written and the span of its path; the launch is also ``open_ended``
    unread_configs: list[tuple[str, Span | None]]
    notes: list[str]

    def __init__(self, options: dict[str, OptionValue] | None = None, errors: list[CliError] | None = None,
                 open_ended: bool = False, config_files: list[str] | None = None,
                 unread_configs: list[tuple[str, Span | None]] | None = None, notes: list[str] | None = None) -> None:
        self.options = options if options is not None else {}
        self.errors = errors if errors is not None else []
        self.open_ended = open_ended
        self.config_files = config_files if config_files is not None else []
        self.unread_configs = unread_configs if unread_configs is not None else []
        self.notes = notes if notes is not None else []


class EngineContext(Record):
    """What an engine's parser may use besides the launch: the run's files and its diagnostics."""

    __slots__ = ("loader", "issues")
    loader: FileLoader
    issues: Issues

    def __init__(self, loader: FileLoader, issues: Issues) -> None:
        self.loader = loader
        self.issues = issues

    def resolve(self, launch: Launch, path: str) -> str:
        return launch.host_path(path)


if TYPE_CHECKING:  # a type only: pipeline.py imports it under TYPE_CHECKING too
    class Engine(Protocol):
        name: str

        def known_versions(self) -> list[str]:
            """Versions the model knows, oldest first; the last one is assumed when unknown."""
            ...

        def flags_key(self, version: str) -> object:
            """Equal for versions that accept exactly the same flags and variables (narrowing a
            launch's version by its flags parses it once per key)."""
            ...

        def flags_reading(self, launch: Launch, version: str) -> object | None:
            """What of ``version``'s flag table decides which of the launch's words are rejected,
            when the engine can tell without parsing: two versions with equal readings reject the
            same words. None: only parsing tells."""
            ...

        def reading_key(self, launch: Launch) -> object | None:
            """What of the launch :meth:`flags_reading` reads, when that is all it reads: two launches
            with equal keys have equal readings at every version. None: none such (only the launch
            itself tells)."""
            ...

        def parse(self, launch: Launch, version: EngineVersion, ctx: EngineContext) -> Parsed: ...

        def effective(self, launch: Launch, parsed: Parsed, version: EngineVersion, hardware: Hardware,
                  catalogs: Catalogs) -> dict[str, Setting]:
            ...


#: the engines already asked for, by name
_ENGINES: dict[str, Engine] = {}


def engine_for(name: str) -> Engine:
    """The model of one engine (imported on demand: a launch of one engine loads only its module)."""
    engine = _ENGINES.get(name)
    if engine is None:
        engine = _ENGINES[name] = _import_engine(name)
    return engine


#: engine -> the module that models it, and that module's model of it (``ENGINE``) or models by
#: engine name (``ENGINES``); the modules build on this one, which looks them up by name
_MODELS = {
    "vllm": ("mtplint.engines.vllm", "ENGINE"),
    "sglang": ("mtplint.engines.sglang", "ENGINE"),
    "llama.cpp": ("mtplint.engines.llamacpp", "ENGINE"),
    "vllm-mlx": ("mtplint.engines.mlx", "ENGINES"),
    "mlx-lm": ("mtplint.engines.mlx", "ENGINES"),
}


def _import_engine(name: str) -> Engine:
    module, attribute = _MODELS[name]  # KeyError: not an engine
    model = getattr(__import__(module, fromlist=(attribute,)), attribute)
    found: Engine = model[name] if attribute == "ENGINES" else model
    return found
