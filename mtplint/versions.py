"""Which engine version a launch runs (``docs/versions.md``).

Evidence, strongest first: ``--engine-version`` / ``engine-versions`` configuration, an image tag,
a pin in the same repository (``requirements*.txt``, ``pyproject.toml``, ``pip install`` in a
Dockerfile). ``==`` fixes the version, ``>=``/``<`` narrow the range. Comments, digests and custom
tags are no evidence. Without a fixed version the newest known one is assumed, and the version is
marked ``assumed`` so rules can reason over every version still possible.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from functools import cache, lru_cache

from mtplint.extract.launch import ENGINES, FLOATING, VersionHint
from mtplint.files import Listing, listing_of
from mtplint.pathtext import is_file, is_symlink, join, parent_dir, path_name, resolved_path
from mtplint.records import Record
from mtplint.source import SourceFile, Span

TYPE_CHECKING = False
if TYPE_CHECKING:
    from packaging.version import Version

    from mtplint.catalogs import Catalogs


#: the version shapes ``engine-versions`` / ``--engine-version`` accept, compiled (by ``re``'s own cache) only for a run that names engine
#: versions: most runs name none (no part of a real version has more than 18 digits; Python refuses
#: to convert 4,300 or more)
_VERSION_SHAPE = r"v?[0-9]{1,18}(\.[0-9]{1,18})*([.-]?(post|rc|dev)[0-9]{0,18})?|b[0-9]{1,18}"


def parse_engine_versions(values: Sequence[str]) -> dict[str, str]:
    """``--engine-version`` values (``vllm=0.11.0``, repeatable, or comma-separated) as engine ->
    version; the last one given for an engine wins. A value without ``ENGINE=VERSION`` raises
    ValueError; the engines and versions themselves are checked by :func:`engine_version_problem`."""
    versions: dict[str, str] = {}
    for value in values:
        for item in value.split(","):
            engine, sep, version = item.partition("=")
            if not sep or not engine.strip() or not version.strip():
                raise ValueError(f"--engine-version expects ENGINE=VERSION (e.g. vllm=0.11.0), got {item!r}")
            versions[engine.strip()] = version.strip()
    return versions


def engine_version_problem(engine: str, version: str) -> str | None:
    """What is wrong with naming ``version`` of ``engine`` as the one in play, or None."""
    if engine not in ENGINES:
        return f"unknown engine {engine!r} (one of {', '.join(ENGINES)})"
    if not re.fullmatch(_VERSION_SHAPE, version):
        shown = repr(version) if len(version) <= 40 else f"{version[:40]!r}… ({len(version)} characters)"
        return f"{shown} is not a version (e.g. 0.11.0, v0.5.9, b9180)"
    return None


PIP_NAMES = {"vllm": "vllm", "sglang": "sglang", "vllm-mlx": "vllm-mlx", "vllm_mlx": "vllm-mlx", "mlx-lm": "mlx-lm", "mlx_lm": "mlx-lm"}


#: digits of one number of a version read as a number: no release has more, and a pin or tag with
#: thousands would pass Python's limit on converting digits (a ValueError)
_MAX_DIGITS = 18


def _plain_release(text: str) -> bool:
    """Whether ``text`` is a plain release number (``0.11.0``, ``0.10.1.1``): ASCII digits in
    dot-separated parts, no epoch, pre-, post-, dev- or local part."""
    return text.isascii() and all(part.isdigit() and len(part) <= _MAX_DIGITS for part in text.split("."))


class VersionKey:
    """Sort key of a PEP 440 version (``0.11.0``, ``v0.10.1.1``, ``0.11.0rc1``); an invalid one
    sorts as ``0``.

    A plain release number -- every shipped table and threshold, and nearly every pin or image tag --
    compares by its numbers with the trailing zeros dropped, as PEP 440 orders releases (``1.0 ==
    1.0.0``), without importing ``packaging`` (which imports ``typing``: start-up time). Any other
    version (pre-, post-, dev-, local) compares through ``packaging.version.Version``, imported the
    first time one does.
    """

    __slots__ = ("_version", "release", "text")

    def __init__(self, text: str) -> None:
        #: as ``Version`` reads it (leading ``v``s dropped)
        self.text = text
        #: the release numbers without trailing zeros; None: not a plain release number
        self.release: tuple[int, ...] | None = None
        if _plain_release(text):
            numbers = [int(part) for part in text.split(".")]
            while numbers and numbers[-1] == 0:
                numbers.pop()
            self.release = tuple(numbers)
        self._version: Version | None = None

    def version(self) -> Version:
        """The ``packaging`` version (``0`` for an invalid one)."""
        if self._version is None:
            from packaging.version import InvalidVersion, Version  # noqa: PLC0415 - only a version that is no plain release

            try:
                self._version = Version(self.text)
            except (InvalidVersion, ValueError):  # ValueError: a number past Python's digit limit
                self._version = Version("0")
        return self._version

    def compare(self, other: VersionKey) -> int:
        """-1, 0 or 1 as this version is older than, the same as or newer than ``other``."""
        if self.release is not None and other.release is not None:
            mine, theirs = self.release, other.release
            return (mine > theirs) - (mine < theirs)
        version, other_version = self.version(), other.version()
        return (version > other_version) - (version < other_version)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, VersionKey):
            return NotImplemented
        return self.compare(other) < 0

    def __le__(self, other: object) -> bool:
        if not isinstance(other, VersionKey):
            return NotImplemented
        return self.compare(other) <= 0

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, VersionKey):
            return NotImplemented
        return self.compare(other) > 0

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, VersionKey):
            return NotImplemented
        return self.compare(other) >= 0

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, VersionKey):
            return NotImplemented
        return self.compare(other) == 0

    def __hash__(self) -> int:
        # equal versions have equal release numbers (trailing zeros dropped); the rest only refines
        release = self.release
        if release is None:
            numbers = list(self.version().release)
            while numbers and numbers[-1] == 0:
                numbers.pop()
            release = tuple(numbers)
        return hash(release)

    def __repr__(self) -> str:
        return f"VersionKey({self.text!r})"


@lru_cache(maxsize=4096)  # a tree's launches compare the same few dozen versions again and again
def version_key(text: str) -> tuple[int, ...] | VersionKey:
    """Sort key: llama.cpp builds (``b9180``) as ints, everything else as PEP 440 versions
    (:class:`VersionKey`). A build and a PEP 440 version do not compare (``compare`` gives 0)."""
    stripped = text.strip()
    if stripped.startswith("b") and stripped[1:].isdecimal() and len(stripped) <= _MAX_DIGITS + 1:
        return (int(stripped[1:]),)
    return VersionKey(stripped.lstrip("v"))


@lru_cache(maxsize=4096)  # the same few pairs (a release and a threshold) again and again
def compare(left: str, right: str) -> int:
    a, b = version_key(left), version_key(right)
    if isinstance(a, VersionKey):
        return a.compare(b) if isinstance(b, VersionKey) else 0
    if isinstance(b, VersionKey):
        return 0
    return (a > b) - (a < b)


def where(span: Span | None) -> str:
    """``file:line:column`` of a span ("" without one)."""
    return f"{span.file}:{span.line}:{span.column}" if span is not None else ""


class Evidence(Record):
    """One piece of evidence about the version a launch runs, and where it comes from.

    ``kind``: ``config`` (``--engine-version`` / ``engine-versions``), ``image`` (a release in the
    image tag), ``tag`` (``latest``/``nightly``: the newest known release or later), ``pin`` (a
    requirements/pyproject/Dockerfile pin), ``flag`` (a flag only some releases accept), ``model``
    (the model's architecture is served from some release on)."""

    __slots__ = ("kind", "spec", "origin", "detail")
    kind: str
    #: what it says of the version: ``==0.11.0``, ``>=0.17.0``, ``<0.8.3``
    spec: str
    #: ``file:line:column``, or what else it comes from (``--engine-version``)
    origin: str
    detail: str

    def __init__(self, kind: str, spec: str, origin: str, detail: str) -> None:
        self.kind = kind
        self.spec = spec
        self.origin = origin
        self.detail = detail

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "spec": self.spec, "origin": self.origin, "detail": self.detail}


class EngineVersion(Record):
    """The version used to model a launch, and how sure that is.

    ``version`` is the one parsing uses; when ``known`` is false it is the newest version still
    possible, and ``low``/``high`` bound what else it could be (``high`` exclusive). ``evidence``
    lists what the version was told from. ``flags_below``: the first release that rejects a flag the
    launch uses (:func:`mtplint.pipeline.narrow_by_flags`); it bounds the range a rule that could
    not decide is told of, not ``high``, which the rules about the removed flag itself weigh.
    """

    __slots__ = ("engine", "version", "known", "source", "low", "high", "span", "evidence", "flags_below")
    engine: str
    version: str
    known: bool
    source: str
    low: str | None
    high: str | None
    span: Span | None
    evidence: tuple[Evidence, ...]
    flags_below: str | None

    def __init__(self, engine: str, version: str, known: bool, source: str, low: str | None = None,
                 high: str | None = None, span: Span | None = None, evidence: tuple[Evidence, ...] = (),
                 flags_below: str | None = None) -> None:
        self.engine = engine
        self.version = version
        self.known = known
        self.source = source
        self.low = low
        self.high = high
        self.span = span
        self.evidence = evidence
        self.flags_below = flags_below

    def possible(self) -> tuple[str | None, str | None]:
        """The range still possible, ``[low, below)``, with a removed flag's bound applied."""
        high = self.high
        if self.flags_below is not None and (high is None or compare(self.flags_below, high) < 0):
            high = self.flags_below
        return self.low, high

    def describe_range(self) -> str:
        """``≥0.17.0``, ``≥0.10.2, <0.28.0``, ``any`` (no bound)."""
        low, high = self.possible()
        parts = [f"≥{low}" if low else "", f"<{high}" if high else ""]
        return ", ".join(part for part in parts if part) or "any"

    @property
    def assumed(self) -> bool:
        return not self.known

    def at_least(self, threshold: str) -> bool | None:
        """Whether the version is ``>= threshold``; ``None`` when it could be either."""
        if self.known:
            return compare(self.version, threshold) >= 0
        if self.low is not None and compare(self.low, threshold) >= 0:
            return True
        if self.high is not None and compare(self.high, threshold) <= 0:
            return False
        return None

    def in_range(self, low: str | None, high: str | None) -> bool | None:
        """Whether the version lies in ``[low, high)``; ``None`` when unknown and partly inside."""
        above = True if low is None else self.at_least(low)
        reaches_high = False if high is None else self.at_least(high)
        below = None if reaches_high is None else not reaches_high
        if above is False or below is False:
            return False
        if above and below:
            return True
        return None

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {"engine_version": self.version, "version_source": self.source}
        if not self.known:
            data["assumed_version"] = True
            low, high = self.possible()
            if low or high:
                data["possible_versions"] = {"min": low, "below": high}
        if self.evidence:
            data["version_evidence"] = [evidence.to_json() for evidence in self.evidence]
        return data


@cache  # compiled the first time a pin file is read (most runs read none)
def _requirement() -> re.Pattern[str]:
    return re.compile(
        r"""(?ix)(?<![\w.-])(vllm[-_]mlx|mlx[-_]lm|vllm|sglang)(?:\[[^\]]*\])?\s*
            ((?:(?:==|>=|<=|~=|<|>)\s*v?[\w.+-]+\s*,?\s*)+)"""
    )


def pins_in_text(text: str, source: SourceFile | None = None) -> list[VersionHint]:
    """Version pins in requirements, pyproject or Dockerfile text."""
    hints = []
    for match in _requirement().finditer(text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        if text[line_start:match.start()].lstrip().startswith("#"):
            continue
        engine = PIP_NAMES[match.group(1).lower().replace("_", "-")]
        span = source.span(match.start(), match.end()) if source else None
        for part in re.split(r"\s*,\s*", match.group(2).strip().rstrip(",")):
            part = part.replace(" ", "")
            if part:
                hints.append(VersionHint(engine, part, "pin", span))
    return hints


PIN_FILES = ("requirements*.txt", "requirements/*.txt", "pyproject.toml", "Dockerfile*", "*.Dockerfile", "constraints*.txt")


if TYPE_CHECKING:
    #: the version hints of some directories, and the pin files read for them
    _Pins = tuple[list[VersionHint], list[str]]


class PinMemo:
    """One run's pin lookups (a tree's launches share their directories; listing and resolving them
    per launch is slow). What it holds stays true while the run's files do not change."""

    __slots__ = ("chains", "roots", "up_to_root", "without_pin_names")

    def __init__(self, without_pin_names: set[str] | None = None) -> None:
        #: the long-listed directories (:data:`LONG_LISTING` names or more) known to hold no name a pin
        #: file may have: kept for the whole run (pass the run's own set) where the rest is forgotten
        #: with the loader's files, so a flat folder of thousands of services is not scanned again
        #: every time the loader forgets
        self.without_pin_names = without_pin_names if without_pin_names is not None else set()
        #: (real directory of a launch file, root as written) -> the pins from it up to the root, and the files read
        self.chains: dict[tuple[str, str], _Pins] = {}
        #: root as written -> ``resolve()`` of it
        self.roots: dict[str, str] = {}
        #: (resolved directory, resolved root) -> the pins from it up to the root, and the files read
        self.up_to_root: dict[tuple[str, str], _Pins] = {}

    @staticmethod
    def directory_of(path: str, real_path: Callable[[str], str]) -> str:
        """The real directory whose pins a launch file reads: its target's for a symlink, else its own."""
        if path_name(path) in ("", ".."):
            return real_path(parent_dir(path))  # not a file's name: the name is not resolved with it
        # realpath of a file that is not a symlink is its directory's real path joined with its name
        return os.path.dirname(real_path(path))


#: the folders of PIN_FILES (lower case, as a listing's names are compared with them)
_PIN_FOLDERS = frozenset(pattern.rpartition("/")[0] for pattern in PIN_FILES if "/" in pattern)


def _literal_ends(pattern: str) -> tuple[str, str]:
    """The text before the first and after the last wildcard of a glob pattern: what every name
    it matches starts and ends with (where ``normcase`` changes nothing, as on POSIX)."""
    head = tail = pattern
    for wildcard in "*?[":
        head = head.partition(wildcard)[0]
    for wildcard in "*?]":
        tail = tail.rpartition(wildcard)[2]
    return head, tail


def _pin_name_ends() -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """A name may be a pin file's only if it starts with one of the first texts or ends with one of
    the second (each pattern's literal start, or its literal end when it starts with a wildcard):
    one test per name, without compiling the patterns. None where ``normcase`` changes names (every
    pattern is then tried), or where a pattern has neither end (any name may match it)."""
    if os.path.normcase("Aa") != "Aa":
        return None
    heads: list[str] = []
    tails: list[str] = []
    for pattern in PIN_FILES:
        if "/" in pattern:
            continue
        head, tail = _literal_ends(pattern)
        if head:
            heads.append(head)
        elif tail:
            tails.append(tail)
        else:
            return None
    return tuple(heads), tuple(tails)


_PIN_NAME_ENDS = _pin_name_ends()


#: the names from which a directory's listing is long enough that :class:`PinMemo` remembers, for
#: the whole run, that none of them is a pin file's (a record per directory of every size would grow
#: with the tree)
LONG_LISTING = 256


def may_hold_pins(listing: Listing) -> bool:
    """Whether a directory so listed may hold a pin file (False: no name is a pin file's, no folder
    to list). True where the names cannot be told apart by their ends (:func:`_pin_name_ends`)."""
    ends = _PIN_NAME_ENDS
    if ends is None or listing is None:
        return True
    heads, tails = ends
    return any(name.startswith(heads) or name.endswith(tails) for name in listing[0]) \
        or not _PIN_FOLDERS.isdisjoint(listing[1])


def _pins_in_directory(directory: str, read: Callable[[str], SourceFile | None],
                       listed_by: Callable[[str], Listing] = listing_of,
                       without_pin_names: set[str] | None = None) -> _Pins:
    """``listed_by``: the directory's :data:`Listing` (the run's loader's, which lists a directory once
    for the pins and the files compose and kustomize look for beside a launch);
    ``without_pin_names``: :attr:`PinMemo.without_pin_names`."""
    path = directory
    if without_pin_names is not None and path in without_pin_names:
        return [], []
    listing = listed_by(path)
    if not may_hold_pins(listing):
        if without_pin_names is not None and listing is not None and len(listing[0]) >= LONG_LISTING:
            without_pin_names.add(path)
        return [], []  # most directories: no name is a pin file's, no folder to list
    hints: list[VersionHint] = []
    seen: list[str] = []
    names: Iterable[str] = listing[0] if listing is not None else ()
    listed: Iterable[str]
    for pattern in PIN_FILES:
        # one listing per directory, matched per pattern (Path.glob lists it again for each one)
        folder, _, name_pattern = pattern.rpartition("/")
        if folder:
            # most directories have no such folder: no listing that fails (unless the directory itself
            # could not be listed, when the folder may still be)
            if listing is not None and folder not in listing[0] and folder not in listing[1]:
                continue
            inside = listed_by(join(directory, folder))
            listed = inside[0] if inside is not None else ()
        else:
            listed = names
        # one folder's paths: sorted by their names, as path objects
        for candidate in sorted(join(directory, folder, name) for name in _matching(listed, name_pattern)):
            if candidate in seen or not is_file(candidate):
                continue
            seen.append(candidate)
            source = read(candidate)
            if source is not None:
                hints.extend(pins_in_text(source.text, source))
    return hints, seen


def pins_in_directory(directory: str, read: Callable[[str], SourceFile | None]) -> list[VersionHint]:
    """The pins in one directory's pin files (a compose build context's ``requirements.txt``)."""
    return _pins_in_directory(directory, read)[0]


#: ``os.path.normcase`` leaves names as they are (POSIX): fnmatch compares them as written
_NAMES_AS_WRITTEN = os.path.normcase("Aa/") == "Aa/"


def _matching(names: Iterable[str], pattern: str) -> list[str]:
    """``fnmatch.filter(names, pattern)``. A pattern with at most one ``*`` and no other wildcard (every
    pin file's) is matched by its two ends where ``normcase`` changes nothing (as on POSIX): fnmatch
    compiles a regular expression per pattern, which cost a check of a Dockerfile (whose directory
    always holds a name of a pin file's) more than the rest of its pin lookup."""
    head, star, tail = pattern.partition("*")
    if _NAMES_AS_WRITTEN and not any(wildcard in head or wildcard in tail for wildcard in "*?["):
        if not star:
            return [name for name in names if name == pattern]
        least = len(head) + len(tail)
        return [name for name in names if len(name) >= least and name.startswith(head) and name.endswith(tail)]
    import fnmatch  # noqa: PLC0415 - only where names are not matched as written

    return fnmatch.filter(names, pattern)


def may_be_pin_file(path: str) -> bool:
    """Whether the file at ``path`` may be one whose pins :func:`pins_near` reads (by its name alone:
    any ``.txt`` may be in a ``requirements`` folder)."""
    name = path_name(path)
    return any(_matching((name,), pattern.rpartition("/")[2]) for pattern in PIN_FILES)


def pins_near(path: str, root: str, read: Callable[[str], SourceFile | None],
              memo: PinMemo | None = None, real_path: Callable[[str], str] = os.path.realpath,
              listed_by: Callable[[str], Listing] = listing_of) -> list[VersionHint]:
    """Pins in the launch file's directory and its parents up to ``root``. ``memo``: one run's
    pin lookups (a tree's launches share their parents; globbing them per launch is slow);
    ``real_path``: ``os.path.realpath``, or the run's loader's, which answers it from the
    directories it already resolved (passed per call: the memo, kept per loader, must not hold it);
    ``listed_by``: a directory's :data:`Listing`, the loader's (passed per call for the same reason)."""
    # a symlinked launch file's pins are those beside its target
    if memo is None:
        start = parent_dir(resolved_path(path)) if is_symlink(path) else parent_dir(path)
        return _pins_up_to_root(resolved_path(start), resolved_path(root), read, None)[0]
    # the whole chain, per launch directory: a tree's launches share directories
    directory = memo.directory_of(path, real_path)
    chain = memo.chains.get((directory, root))
    if chain is None:
        resolved_root = memo.roots.get(root)
        if resolved_root is None:
            resolved_root = memo.roots[root] = resolved_path(root)
        chain = memo.chains[(directory, root)] = _pins_up_to_root(directory, resolved_root, read, memo, listed_by)
    else:
        # read again (the loader has them): whoever records what a launch read -- the cache's
        # dependencies, the fixer's re-lint -- must see every launch below a pin file read it
        for file in chain[1]:
            read(file)
    return list(chain[0])


def _pins_up_to_root(directory: str, root: str, read: Callable[[str], SourceFile | None],
                     memo: PinMemo | None, listed_by: Callable[[str], Listing] = listing_of) -> _Pins:
    """The pins in ``directory`` and its parents up to ``root`` (both resolved), nearest first, and
    the pin files read for them."""
    # the directories to read, nearest first, up to one whose chain the memo already has
    walked: list[str] = []
    tail: _Pins = ([], [])
    # below the root: under it by whole names (resolved paths: no "." or "..", no doubled separator)
    below = root if root.endswith(os.sep) else root + os.sep
    while True:
        if memo is not None:
            known = memo.up_to_root.get((directory, root))
            if known is not None:
                tail = known
                for file in known[1]:
                    read(file)  # as in pins_near: the reader records that this launch read it
                break
        walked.append(directory)
        # stop at the root, at "/", and outside the root
        if directory == root or not directory.startswith(below):
            break
        directory = os.path.dirname(directory)
    without_pin_names = memo.without_pin_names if memo is not None else None
    # read nearest first
    owns = [_pins_in_directory(directory, read, listed_by, without_pin_names) for directory in walked]
    pins = tail
    for directory, (own_hints, own_files) in zip(reversed(walked), reversed(owns), strict=True):
        if own_hints or own_files:  # most directories add nothing: their parent's pins stand for theirs
            pins = (own_hints + pins[0], own_files + pins[1])
        if memo is not None:
            memo.up_to_root[(directory, root)] = pins
    return pins


#: what each kind of version hint is called in the evidence ``inspect`` shows
_HINT_DETAIL = {"image": "release in the image tag", "pin": "version pin", "tag": "floating image tag"}


def resolve(engine: str, known_versions: Sequence[str], hints: Iterable[VersionHint], forced: str | None = None) -> EngineVersion:
    """Combine the evidence into one :class:`EngineVersion`."""
    newest = known_versions[-1] if known_versions else "0"
    if forced:
        version = forced.lstrip("v")
        return EngineVersion(engine, version, True, "config", evidence=(
            Evidence("config", f"=={version}", "--engine-version / engine-versions", "given by the user"),))
    low: str | None = None
    high: str | None = None
    low_span: Span | None = None
    evidence: list[Evidence] = []
    for hint in hints:
        if hint.engine != engine:
            continue
        if hint.spec == FLOATING:
            # `latest` / `nightly`: the newest known release or a later one
            evidence.append(Evidence("tag", f">={newest}", where(hint.span),
                                     "`latest`/`nightly`-style tag: the newest known release or later"))
            if low is None or compare(newest, low) > 0:
                low, low_span = newest, hint.span
            continue
        match = re.match(r"(==|>=|<=|~=|<|>)?\s*v?(.+)", hint.spec)
        if not match:
            continue
        operator, value = match.group(1) or "==", match.group(2)
        evidence.append(Evidence(hint.source, f"{operator}{value}", where(hint.span),
                                 _HINT_DETAIL.get(hint.source, hint.source)))
        if operator == "==" and not value.endswith("*"):
            return EngineVersion(engine, value, True, hint.source, span=hint.span, evidence=(evidence[-1],))
        if operator in (">=", "~=", ">") and (low is None or compare(value, low) > 0):
            low, low_span = value, hint.span
        if operator in ("<", "<=") and (high is None or compare(value, high) < 0):
            high = value
    candidates: Sequence[str] = known_versions
    if low is not None or high is not None:
        candidates = [v for v in known_versions
                      if (low is None or compare(v, low) >= 0) and (high is None or compare(v, high) < 0)]
    assumed = candidates[-1] if candidates else (low or newest)
    source = "pin-range" if low or high else "assumed"
    return EngineVersion(engine, assumed, False, source, low, high, low_span, tuple(evidence))


def narrow_by_model(version: EngineVersion, model: str | None, span: Span | None, drafting: object,
                    known_versions: Sequence[str], catalogs: Catalogs) -> EngineVersion:
    """A model is served only from the first release that supports its architecture (the entry of
    ``catalogs`` for it, ``first_release``), so an unknown version is at least that.
    ``drafting``: the launch's speculative method (a release that is only the first to draft with
    the model's MTP head bounds only a launch drafting with MTP)."""
    if version.known or not model:
        return version
    info = catalogs.find_model(model)
    first = next(((release, source, applies_to) for engine, release, source, applies_to in info.first_release
                  if engine == version.engine and (not applies_to or applies_to == drafting)), None) \
        if info is not None else None
    if first is None:
        return version
    release, source, applies_to = first
    low, high = version.low, version.high
    if (low is not None and compare(release, low) <= 0) or (high is not None and compare(release, high) >= 0):
        return version  # already as narrow, or the pinned range predates the model: the pin stands
    assert info is not None
    evidence = Evidence("model", f">={release}", where(span),
                        f"{info.arch} ({model}) is {'drafted with its MTP head' if applies_to else 'served'} "
                        f"from {version.engine} {release} on ({source})")
    candidates = [v for v in known_versions if compare(v, release) >= 0 and (high is None or compare(v, high) < 0)]
    assumed = candidates[-1] if candidates else version.version
    return EngineVersion(version.engine, assumed, False, "model", release, high, span,
                         (*version.evidence, evidence), version.flags_below)
