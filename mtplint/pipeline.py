"""The pipeline from paths to effective settings: discover -> extract -> engine -> settings.

Extractors are imported on demand, by the kinds of files actually present, so linting one compose
file never loads the Python or shell machinery.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import lru_cache

from mtplint.boundary import report_traceback
from mtplint.catalogs import SHIPPED, Catalogs
from mtplint.discover import Candidate, discover, relevant, relevant_file
from mtplint.engines import CliError, EngineContext, Parsed, engine_for
from mtplint.errors import reason
from mtplint.extract import (
    MAX_FILE_BYTES,
    ExtractContext,
    Extractor,
    FileLoader,
    Malformed,
    decode,
    finish_launches,
)
from mtplint.extract.launch import Launch
from mtplint.hardware import Hardware
from mtplint.pathtext import NO_FILE_ERRNOS, normalized
from mtplint.records import Record
from mtplint.settings import Setting
from mtplint.source import Diagnostic, Issues, ShownLines, SourceFile
from mtplint.startup import DeferredPattern
from mtplint.versions import (
    EngineVersion,
    Evidence,
    PinMemo,
    compare,
    narrow_by_model,
    pins_near,
    resolve,
    where,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from mtplint.engines import Engine

    T = TypeVar("T")

EXTRACTORS = {
    "compose": "mtplint.extract.compose",
    "yaml": "mtplint.extract.yamlfiles",
    "shell": "mtplint.extract.shell.launches",
    "python": "mtplint.extract.python",
    "dockerfile": "mtplint.extract.dockerfile",
    "systemd": "mtplint.extract.systemd",
    "ini": "mtplint.extract.llama_preset",
}

#: the status a buffer that stands for a file not on disk is given: a regular file, of no size on disk
_UNSAVED_BUFFER = os.stat_result((stat.S_IFREG | 0o644, 0, 0, 1, 0, 0, 0, 0, 0, 0))


#: compiled when first used: most files have no such directive
_GPU_DIRECTIVE = DeferredPattern(r"(?:#|//|;)\s*mtplint:\s*gpu\s*=\s*([\w.\-]+(?:\s*[x\*]\s*\d+)?)")


class Options(Record):
    """What the command line / configuration asks of the pipeline."""

    __slots__ = ("root", "excludes", "respect_gitignore", "engine_versions", "gpu", "catalogs")
    root: str
    excludes: tuple[str, ...]
    respect_gitignore: bool
    engine_versions: dict[str, str]
    gpu: str | None
    #: the GPU and model catalogs, with the configuration's entries
    catalogs: Catalogs

    def __init__(self, root: str | os.PathLike[str] | None = None, excludes: tuple[str, ...] = (),
                 respect_gitignore: bool = True,
                 engine_versions: dict[str, str] | None = None, gpu: str | None = None,
                 catalogs: Catalogs = SHIPPED) -> None:
        self.root = normalized(root) if root is not None else os.getcwd()
        self.excludes = excludes
        self.respect_gitignore = respect_gitignore
        self.engine_versions = engine_versions if engine_versions is not None else {}
        self.gpu = gpu
        self.catalogs = catalogs


class LaunchReport(Record):
    __slots__ = ("launch", "version", "parsed", "effective", "hardware", "objective", "loader", "undecided",
                 "catalogs")
    launch: Launch
    version: EngineVersion
    parsed: Parsed
    effective: dict[str, Setting]
    hardware: Hardware
    #: what the user optimises for (configuration ``objective``); some rules' severity follows it
    objective: str
    #: the files read for this run (fixes need the text of a ``--config`` file or a started script)
    loader: FileLoader | None
    #: (rule code, setting, versions where it would fire) of each rule that could not decide
    #: because the setting's default differs across the versions still possible (MTP004)
    undecided: list[tuple[str, str, str]]
    #: the catalogs the launch's model and GPU were looked up in (its configuration's)
    catalogs: Catalogs

    def __init__(self, launch: Launch, version: EngineVersion, parsed: Parsed, effective: dict[str, Setting],
                 hardware: Hardware, objective: str = "latency", loader: FileLoader | None = None,
                 catalogs: Catalogs = SHIPPED) -> None:
        self.launch = launch
        self.version = version
        self.parsed = parsed
        self.effective = effective
        self.hardware = hardware
        self.objective = objective
        self.loader = loader
        self.undecided = []
        self.catalogs = catalogs

    def to_json(self) -> dict[str, Any]:
        launch = self.launch
        span = launch.span
        data: dict[str, Any] = {
            "file": launch.source.display,
            "line": span.line if span else 1,
            "column": span.column if span else 1,
            "context": launch.context,
            "engine": launch.engine,
            "entry": launch.entry,
            **self.version.to_json(),
        }
        if launch.kwargs is not None:
            data["argv"] = []
            data["kwargs"] = {name: arg.value if not arg.unresolved else {"unresolved": str(arg.value)}
                              for name, arg in launch.kwargs.items()}
        else:
            data["argv"] = [token.to_json() for token in launch.argv]
        data["env"] = {name: entry.to_json() for name, entry in launch.env.items()}
        if launch.image is not None:
            data["image"] = launch.image.to_json()
        data["options"] = {name: option.to_json() for name, option in self.parsed.options.items()}
        data["cli_errors"] = [error.to_json() for error in self.parsed.errors]
        if self.parsed.open_ended:
            data["open_ended"] = True
        if self.parsed.config_files:
            data["config_files"] = self.parsed.config_files
        data["effective"] = {name: setting.to_json(launch.source.display) for name, setting in self.effective.items()}
        if launch.notes or self.parsed.notes:
            data["notes"] = [*launch.notes, *self.parsed.notes]
        return data


class Result(Record):
    __slots__ = ("launches", "diagnostics", "internal_errors", "files_seen", "files_skipped", "loader", "shown")
    launches: list[LaunchReport]
    diagnostics: list[Diagnostic]
    internal_errors: list[str]
    files_seen: int
    files_skipped: int
    #: the files read for this run (possibly seeded with texts that stand for them: ``--fix``)
    loader: FileLoader | None
    #: lines around the findings of launches that are not in ``launches`` (a run assembled from records)
    shown: ShownLines

    def __init__(self, launches: list[LaunchReport] | None = None, diagnostics: list[Diagnostic] | None = None,
                 internal_errors: list[str] | None = None, files_seen: int = 0, files_skipped: int = 0,
                 loader: FileLoader | None = None) -> None:
        self.launches = launches if launches is not None else []
        self.diagnostics = diagnostics if diagnostics is not None else []
        self.internal_errors = internal_errors if internal_errors is not None else []
        self.files_seen = files_seen
        self.files_skipped = files_skipped
        self.loader = loader
        self.shown = ShownLines()


def extractor_for(kind: str) -> Extractor | None:
    module_name = EXTRACTORS.get(kind)
    if module_name is None:
        return None
    # __import__, not importlib.import_module: the importlib package is start-up the builtin spares
    module = __import__(module_name, fromlist=("extract",))
    extract: Extractor = module.extract
    return extract


@lru_cache(maxsize=1)  # a file's launches come one after another: its text is searched once, not per launch
def _gpu_directive(text: str) -> re.Match[str] | None:
    # the directive's own words first: a substring search is much faster than the expression's scan
    return _GPU_DIRECTIVE.search(text) if "mtplint:" in text else None


def hardware_for(launch: Launch, options: Options) -> Hardware:
    """GPU identity: ``--gpu``/configuration, then the launch's own hints, then a file directive."""
    if options.gpu:
        gpu, count, name = options.catalogs.parse_gpu_spec(options.gpu)
        hint_count = launch.gpu.count if launch.gpu else None
        return Hardware(gpu, count or hint_count, "config-file", None, name)
    directive = _gpu_directive(launch.source.text)
    hint = launch.gpu
    if hint is not None and hint.product:
        return Hardware(options.catalogs.find_gpu(hint.product), hint.count, hint.origin, hint.span, hint.product)
    if directive:
        gpu, count, name = options.catalogs.parse_gpu_spec(directive.group(1))
        span = launch.source.span(directive.start(1), directive.end(1))
        return Hardware(gpu, count or (hint.count if hint else None), "explicit", span, name)
    if hint is not None:
        return Hardware(None, hint.count, hint.origin, hint.span, None)
    return Hardware()


def gpu_setting(hardware: Hardware) -> Setting:
    value = hardware.gpu.id if hardware.gpu else hardware.product
    extra: dict[str, Any] = {"count": hardware.count}
    if hardware.product and hardware.gpu is None:
        extra["unknown_gpu"] = hardware.product
    return Setting(value, hardware.origin if (value or hardware.count) else "default", hardware.span, extra=extra)


def _unknown_flags(parsed: Parsed) -> dict[int, CliError]:
    """The words the parser rejected as unknown flags, by where they start."""
    return {error.span.start if error.span else -1: error for error in parsed.errors if error.kind == "unknown"}


@lru_cache(maxsize=256)  # a tree's launches ask about the same few ranges
def _older_versions(known: tuple[str, ...], low: str | None, newest: str) -> tuple[str, ...]:
    """The ``known`` versions from ``low`` (when given) up to, not including, ``newest``."""
    return tuple(v for v in known if (low is None or compare(v, low) >= 0) and compare(v, newest) < 0)


#: (engine, what of a launch its readings depend on (:meth:`Engine.reading_key`), the newest version
#: it may run, the lowest) of the launches every older version reads as the newest does: narrowing
#: changes nothing for them. A tree's launches repeat a few hundred lists of options, each read at
#: every older release (the benchmark's deploy 10k tree: 5,384 launches narrowed, 3,382 alike)
_READ_ALIKE: set[tuple[str, object, str, str | None]] = set()

#: entries :data:`_READ_ALIKE` holds at most (a long-lived process, the language server, reads new
#: launches for as long as it runs)
_MAX_READ_ALIKE = 4096


def narrow_by_flags(engine: Engine, launch: Launch, version: EngineVersion, context: EngineContext,
                    parsed: Parsed | None = None) -> EngineVersion:
    """Flags that exist only in some versions narrow the possible range of the engine's version.

    A flag the assumed (newest possible) version knows but older versions reject means the launch
    runs a version that has it: the lower bound moves. A flag the newest version rejects but an
    older one accepts was removed: the first release that rejects it becomes
    :attr:`EngineVersion.flags_below` -- evidence, and a bound on the range a rule that could not
    decide is told of, but not ``high``: saying the flag is gone is the point of the removal rules,
    which weigh every version still possible.
    ``parsed``: the launch already parsed at ``version`` (saves parsing it again here).
    """
    candidates = _older_versions(tuple(engine.known_versions()), version.low, version.version)
    if not candidates:
        return version
    newest_reading = engine.flags_reading(launch, version.version)
    reading_key = engine.reading_key(launch) if newest_reading is not None else None
    alike = (launch.engine, reading_key, version.version, version.low) if reading_key is not None else None
    if alike is not None and alike in _READ_ALIKE:
        return version
    scratch = EngineContext(context.loader, Issues())
    newest_unknown = _unknown_flags(parsed if parsed is not None else engine.parse(launch, version, scratch))
    # versions with the newest one's flags reject the same words: no need to parse at them
    unknown_by_key: dict[object, dict[int, CliError]] = {engine.flags_key(version.version): newest_unknown}
    tried = False  # the launch was parsed at an older version
    evidence = list(version.evidence)
    flags_below: str | None = None
    above = version.version  # the release just newer than the candidate
    low = version.low
    for candidate in reversed(candidates):
        key = engine.flags_key(candidate)
        if key not in unknown_by_key:
            if newest_reading is not None and engine.flags_reading(launch, candidate) == newest_reading:
                # the launch's words read the same at this version: the same words are rejected
                unknown_by_key[key] = newest_unknown
            else:
                trial = EngineVersion(version.engine, candidate, False, version.source, version.low, version.high)
                unknown_by_key[key] = _unknown_flags(engine.parse(launch, trial, scratch))
                tried = True
        rejected = unknown_by_key[key]
        if rejected is newest_unknown:  # most releases read the launch as the newest does: nothing to compare
            above = candidate
            continue
        accepted_again = [newest_unknown[start] for start in newest_unknown.keys() - rejected.keys()]
        if accepted_again and flags_below is None:
            flags_below = above
            flag = accepted_again[0]
            evidence.append(Evidence("flag", f"<{above}", where(flag.span),
                                     f"`{flag.flag}` is not accepted from {version.engine} {above} on"))
        added = rejected.keys() - newest_unknown.keys()
        if added:
            # this release rejects a flag the newer ones accept: the launch runs one of those
            low = above
            flag = rejected[min(added)]
            evidence.append(Evidence("flag", f">={low}", where(flag.span),
                                     f"`{flag.flag}` is not accepted before {version.engine} {low}"))
            break
        above = candidate
    if low == version.low and flags_below is None:
        if alike is not None and not tried:
            # every older version read the launch's words as the newest does
            if len(_READ_ALIKE) >= _MAX_READ_ALIKE:
                _READ_ALIKE.clear()
            _READ_ALIKE.add(alike)
        return version
    return EngineVersion(version.engine, version.version, False, "flags" if low != version.low else version.source,
                         low, version.high, version.span, tuple(evidence), flags_below)


#: the key, in a loader's memos, of the version pins per directory (one run reads each directory's
#: pins once; a loader is a run's view of the files, so the pins it found stay true while it lives)
_PINS = "pipeline.pins"
#: the key, in a loader's memos (kept while the run lives), of :attr:`PinMemo.without_pin_names`
_WITHOUT_PIN_NAMES = "pipeline.without-pin-names"


def share_pin_listings(loader: FileLoader, other: FileLoader) -> None:
    """Let ``loader`` take (and from now on share) what ``other`` found of the long directory
    listings that hold no pin file's name (:attr:`PinMemo.without_pin_names`): for loaders that
    share their answers about paths (:meth:`FileLoader.share_paths`), whose listings are the same.
    A fix's try reads its launches' pins through a loader of its own: without this, each one scans
    again a flat folder of a thousand services on the way up to the root."""
    loader.memos[_WITHOUT_PIN_NAMES] = other.memos.setdefault(_WITHOUT_PIN_NAMES, set())


def share_pins(loader: FileLoader, other: FileLoader) -> None:
    """Let ``loader`` take (and from now on share) the version pins ``other`` found per directory:
    for loaders that share their answers about paths (:meth:`FileLoader.share_paths`) and read
    the same texts of every pin file. A fix's try that changes no pin file then finds its launch's
    pins where the run found them, rather than look through the folders up to the root again."""
    loader.path_memos[_PINS] = _pin_memo(other)


def _pin_memo(loader: FileLoader) -> PinMemo:
    """The version pins ``loader`` found per directory (made the first time it is asked)."""
    memo: PinMemo | None = loader.path_memos.get(_PINS)
    if memo is None:
        memo = loader.path_memos[_PINS] = PinMemo(loader.memos.setdefault(_WITHOUT_PIN_NAMES, set()))
    return memo


def model_launch(launch: Launch, loader: FileLoader, issues: Issues, options: Options) -> LaunchReport:
    engine = engine_for(launch.engine)
    hints = [*launch.version_hints]
    if loader.exists(launch.source.path):
        hints.extend(pins_near(launch.source.path, options.root, loader.load, _pin_memo(loader), loader.real_path,
                               loader.listing))
    version = resolve(launch.engine, engine.known_versions(), hints, options.engine_versions.get(launch.engine))
    hardware = hardware_for(launch, options)
    context = EngineContext(loader, issues)
    # parsing reads only ``version.version``, which narrowing keeps (it moves the lower bound): the
    # launch is parsed once at it, with the run's diagnostics, and narrowing compares against that
    parsed = engine.parse(launch, version, context)
    if not version.known:
        version = narrow_by_flags(engine, launch, version, context, parsed)
    effective = engine.effective(launch, parsed, version, hardware, options.catalogs)
    if not version.known:
        model = effective.get("model")
        if model is not None and isinstance(model.value, str) and not model.unresolved:
            method = effective.get("spec_method")
            narrowed = narrow_by_model(version, model.value, model.span, method.value if method is not None else None,
                                       engine.known_versions(), options.catalogs)
            if narrowed is not version:  # defaults that differ across versions are read again
                version = narrowed
                effective = engine.effective(launch, parsed, version, hardware, options.catalogs)
    effective["gpu"] = gpu_setting(hardware)
    return LaunchReport(launch, version, parsed, effective, hardware, loader=loader, catalogs=options.catalogs)


def modelling_failed(launch: Launch, error: Exception, issues: Issues) -> None:
    """An exception while modelling ``launch``, as an MTP001 finding at it (the other launches go on)."""
    report_traceback(f"modelling a launch in {launch.source.display}")
    issues.add("MTP001", f"internal error while modelling this launch ({reason(error)}); its rules did not run "
               "(please report it; `--verbose` shows the traceback)", launch.span or launch.source.span(0))


def worth_reading(data: bytes, kind: str) -> bool:
    """The prefilter on a file's bytes (:func:`mtplint.discover.relevant`): UTF-16 text is searched
    as its text, the prefilter's words being ASCII."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:  # noqa: SIM105 - contextlib would be start-up nothing else of a run needs
            data = decode(data).encode("utf-8")
        except UnicodeDecodeError:
            pass
    return relevant(data, kind)


def extract_file(candidate: Candidate, loader: FileLoader, issues: Issues, result: Result,
                 prefiltered: bool = False) -> list[Launch]:
    """The launches of one discovered file. ``prefiltered``: the run has read it through ``loader``
    (for its cache key: :meth:`FileLoader.read_regular`) and found it worth reading."""
    path = candidate.path
    if prefiltered:
        return _extract_text(candidate, loader, issues)
    try:
        # a text seeded into the loader (a fix being re-linted in memory) stands for the file's bytes
        seeded = loader.peek(path) if loader.seeded else None
        data: bytes | None = None
        if candidate.explicit or seeded is not None:
            # a file named on the command line may be anything (a FIFO, a device): asked before it is opened
            try:
                status: os.stat_result | None = os.stat(path)
            except OSError as error:
                # what Path.is_file() takes for "no file": a file deleted since discovery, a symlink
                # loop (MTP001 below, unless the candidate was already known to be missing)
                if (candidate.kind != "missing" and seeded is None) or error.errno not in NO_FILE_ERRNOS:
                    raise
                status = None
        else:
            # a walked file was a regular file when listed: opened at once (its bytes unless it no
            # longer is one, or is too large), one look-up of its path instead of two
            status, data = loader.read_regular(path)
        if status is None and seeded is not None:
            # standard input standing for a file not saved yet (``--stdin-filename new/compose.yaml``, ``-``)
            from mtplint.stdin import buffer_kind  # noqa: PLC0415 - only for standard input

            status = _UNSAVED_BUFFER
            candidate = Candidate(path, buffer_kind(path, seeded.text), explicit=True, group=candidate.group)
        if status is None or not stat.S_ISREG(status.st_mode):
            why = "does not exist" if candidate.kind == "missing" else "is not a regular file"
            result.internal_errors.append(f"{loader.display(path)}: {why}")
            return []
        size = status.st_size
        if size > MAX_FILE_BYTES:
            # never loaded whole; one that mentions an engine is reported, so a skipped launch is not silent
            result.files_skipped += 1
            if relevant_file(path, candidate.kind):
                shown = SourceFile(path, loader.display(path), "")
                issues.add("MTP001", f"file is too large to lint ({size / 2**20:.1f} MiB; the limit is "
                           f"{MAX_FILE_BYTES // 2**20} MiB): skipped", shown.span(0))
            return []
        if data is None:
            # without a seeded text, a file already read (a compose override) has those bytes on disk too
            data = seeded.text.encode("utf-8") if seeded is not None else loader.read_bytes(path)
    except OSError as error:
        unreadable = SourceFile(path, loader.display(path), "")
        issues.add("MTP001", f"cannot read file: {error.strerror or error}", unreadable.span(0))
        return []
    if not worth_reading(data, candidate.kind):
        result.files_skipped += 1
        return []
    return _extract_text(candidate, loader, issues)


def _extract_text(candidate: Candidate, loader: FileLoader, issues: Issues) -> list[Launch]:
    """The launches of a file whose bytes passed the prefilter (the loader decodes the bytes it just read)."""
    path = candidate.path
    source = loader.load(path)
    if source is None:
        shown = SourceFile(path, loader.display(path), "")
        issues.add("MTP001", "file is not valid text (binary, or not UTF-8/UTF-16)", shown.span(0))
        return []
    extract = extractor_for(candidate.kind)
    if extract is None:
        return []
    context = ExtractContext(loader, issues)
    try:
        return finish_launches(extract(source, context), context)
    except Malformed as error:
        issues.add("MTP001", str(error), source.span(error.offset, error.offset + 1))
    except RecursionError:
        issues.add("MTP001", "input nested too deeply to read", source.span(0))
    except Exception as error:  # one bad file must not stop the run: a finding for this file
        report_traceback(f"reading {source.display}")
        issues.add("MTP001", f"internal error while reading this file ({reason(error)}); it was not checked "
                   "(please report it; `--verbose` shows the traceback)", source.span(0))
    return []


def _extracted(candidates: list[Candidate], loader: FileLoader, issues: Issues,
               result: Result) -> Iterator[tuple[Launch, bool, int]]:
    """Every launch with whether it was found through another file (a unit's or image's script),
    and the configuration group of the file it was found in."""
    for candidate in candidates:
        result.files_seen += 1
        for launch in extract_file(candidate, loader, issues, result):
            # its rules and fixes read the file again once every file has been read
            loader.parses.keep(launch.source)
            # the same path is the same file: only a launch read through another file needs resolving
            through_another = (launch.source.path != candidate.path
                               and loader.real_path(launch.source.path) != loader.real_path(candidate.path))
            yield launch, through_another, candidate.group


def unique_launches(found: Iterable[tuple[tuple[str, int], str, bool, T]]) -> list[T]:
    """Drop a script's stand-alone reading when the same command was also read through the unit,
    Dockerfile or wrapper that starts it: that reading has the environment the command really gets.

    ``found``: each launch as its key (its file's display name and where it starts there, -1 for
    nowhere), its context, whether it was read through another file, and what to keep of it."""
    items = list(found)
    started = {key for key, _, via_other, _ in items if via_other}
    seen: set[tuple[str, int, str]] = set()
    return [kept for key, context, via_other, kept in items if is_unique(key, context, via_other, started, seen)]


def is_unique(key: tuple[str, int], context: str, via_other: bool, started: set[tuple[str, int]],
              seen: set[tuple[str, int, str]]) -> bool:
    """Whether :func:`unique_launches` keeps a launch, given the keys of those read through another
    file (``started``) and the identities of those kept before it (``seen``, which it adds to)."""
    if not via_other:
        return key not in started
    identity = (*key, context)
    if identity in seen:
        return False
    seen.add(identity)
    return True


def launch_key(launch: Launch) -> tuple[str, int]:
    """What :func:`unique_launches` knows a launch by."""
    return launch.source.display, launch.span.start if launch.span else -1


def run(paths: Sequence[str | os.PathLike[str]], options: Options, loader: FileLoader | None = None, *,
        candidates: list[Candidate] | None = None, activate: Callable[[int], None] | None = None) -> Result:
    """``loader`` may come pre-seeded with texts that stand for files on disk (``--fix`` re-lints
    its edits in memory); by default files are read from disk. ``candidates``: the files to read,
    already discovered (default: :func:`mtplint.discover.discover` of ``paths``). ``activate``:
    called with a candidate's configuration group before the launches found in it are modelled
    when it differs from the last one (``inspect`` under several configurations' GPU catalogs)."""
    loader = loader if loader is not None else FileLoader(options.root)
    result = Result(loader=loader)
    issues = Issues()
    if candidates is None:
        candidates = discover(paths, options.root, options.excludes, options.respect_gitignore)
    active = 0
    found = _extracted(candidates, loader, issues, result)
    for launch, group in unique_launches((launch_key(launch), launch.context, via_other, (launch, group))
                                         for launch, via_other, group in found):
        if activate is not None and group != active:
            activate(group)
            active = group
        try:
            result.launches.append(model_launch(launch, loader, issues, options))
        except Exception as error:  # one bad launch must not stop the run: a finding at the launch
            modelling_failed(launch, error, issues)
    result.diagnostics = issues.items
    return result
