"""Stage 1 of the pipeline: walk the given paths, classify files, skip the irrelevant ones cheaply.

Directories are walked without following symlinks; ``.gitignore`` files (at every level) and the
``exclude`` patterns are respected, and the usual tool/VCS folders are skipped, as ruff does. A file
given by name is always linted. A byte-level prefilter drops files that mention no engine and no
speculative setting before any parser sees them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from fnmatch import fnmatch

from mtplint.files import head_of_listed, head_of_regular, open_regular, read_regular
from mtplint.pathtext import (
    exists,
    is_dir,
    is_file,
    is_symlink,
    name_suffix,
    normalized,
    parent_dir,
    path_name,
    path_parts,
    path_suffix,
    relative_to,
    resolved_path,
)
from mtplint.records import FrozenRecord
from mtplint.startup import DeferredPattern

TYPE_CHECKING = False
if TYPE_CHECKING:  # pathspec is imported only for a tree with a .gitignore
    from typing import Any, Final, Protocol

    import pathspec

    class Configs(Protocol):
        """Which configuration governs a path (:class:`mtplint.config.ConfigTree`)."""

        def group_of(self, path: str) -> int: ...

        def group_at(self, directory: str) -> int | None: ...

        def walk_settings(self, group: int) -> tuple[tuple[str, ...], bool] | None: ...

DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", ".mypy_cache", ".ruff_cache", ".pytest_cache",
    "__pycache__", "node_modules", "site-packages", ".mtplint_cache", "dist", "build", "_build", ".eggs",
)

#: words at least one of which every relevant file contains: vllm, sglang, llama-server, llama.cpp,
#: llama_cpp, speculative, spec-type, spec_type, mlx_lm, mlx-lm, models-preset, mtp (not after a
#: letter: every mail configuration has an ``smtp_host``), NEXTN, LLAMA_ARG, draft-m, --draft,
#: .gguf, hf-repo. Each word is looked for from one of its rarer characters (v, p, f, x), one search
#: per character, the letters before it checked by a look-behind; a word that is one plain string
#: (sglang, NEXTN, LLAMA_ARG) is looked for as bytes (``in``: faster than an expression of the
#: same literal). A search whose every alternative starts with the same character jumps between
#: that character's occurrences; one expression over all the words tests a set of first
#: characters at every byte and tries a match at each common letter, many times slower. Scanning
#: every candidate file is a large part of a large tree's extraction. (tests/test_discover_equivalence.py
#: holds the words as one expression and checks these searches answer the same.)
_PREFILTER_PATTERNS = (
    rb"v(?:llm|e(?<=speculative)|er(?<=llama-server))",
    rb"p(?:e(?<=spec[-_]type)|p(?<=llama[._]cpp)|reset(?<=models-preset)|o(?<=hf-repo)|(?<=mtp)(?<![a-z]mtp))",
    rb"f(?:t(?:-m(?<=draft-m)|(?<=--draft))|(?<=\.gguf))",
    rb"x[-_]lm(?<=mlx[-_]lm)",
)
_PREFILTER_STRINGS = (b"sglang", b"NEXTN", b"LLAMA_ARG")
#: the first search finds most launches (vllm, speculative, llama-server): the others are compiled
#: when a file first gets past it, which a one-file check of such a launch never does
_FIRST_PREFILTER_SEARCH = re.compile(_PREFILTER_PATTERNS[0]).search
_OTHER_PREFILTERS = tuple(DeferredPattern(pattern) for pattern in _PREFILTER_PATTERNS[1:])


def mentions_engine(data: bytes) -> bool:
    """Whether ``data`` holds one of the words every relevant file contains (the prefilter)."""
    if _FIRST_PREFILTER_SEARCH(data) is not None:
        return True
    for word in _PREFILTER_STRINGS:  # not any() over a generator: making one costs more than the searches
        if word in data:
            return True
    for pattern in _OTHER_PREFILTERS:  # noqa: SIM110 - as above
        if pattern.search(data) is not None:
            return True
    return False


SHELLS = ("sh", "bash", "dash", "zsh", "ksh", "ash")

#: names of configuration files (:data:`mtplint.config.CONFIG_NAMES`, not imported: start-up)
CONFIG_NAMES = frozenset((".mtplint.toml", "mtplint.toml", "pyproject.toml"))


class Candidate(FrozenRecord):
    __slots__ = ("path", "kind", "explicit", "group")
    path: Final[str]
    kind: Final[str]
    explicit: Final[bool]
    #: the configuration that governs the file (index into :attr:`mtplint.config.ConfigTree.groups`)
    group: Final[int]

    def __init__(self, path: str, kind: str, explicit: bool = False, group: int = 0) -> None:
        self.path = path
        self.kind = kind
        self.explicit = explicit
        self.group = group


_COMPOSE_NAME = DeferredPattern(r"(docker-)?compose[\w.-]*\.ya?ml")


def _shebang_kind(head: bytes) -> str | None:
    if not head.startswith(b"#!"):
        return None
    line = head.split(b"\n", 1)[0].decode("utf-8", "replace")
    words = line[2:].strip().split()
    if not words:
        return None
    program = words[0].rsplit("/", 1)[-1]
    if program == "env" and len(words) > 1:
        rest = [w for w in words[1:] if not w.startswith("-")]
        program = rest[0].rsplit("/", 1)[-1] if rest else ""
    if program in SHELLS:
        return "shell"
    if program.startswith("python"):
        return "python"
    return None


def classify(path: str, head: bytes = b"") -> str | None:
    """The source kind of a file, by name first and then by its first line."""
    return _classify_name(path_name(path), head)


#: suffixes that wrap a file of another kind: templates, examples, backups (``vllm.yaml.tpl``)
_WRAPPER_SUFFIXES = frozenset(("tpl", "tmpl", "template", "j2", "jinja", "jinja2", "in", "example", "sample",
                               "dist", "orig", "bak", "old", "local", "prod", "dev", "gotmpl"))
#: how much of a file named on the command line is read to tell its kind by content
SNIFF_BYTES = 8192


def classify_explicit(path: str, head: bytes | None = None) -> str | None:
    """The kind of a file named on the command line: by its name, then by the name inside a
    template or backup suffix (``deploy/vllm.yaml.tpl``, ``compose.yaml.example``), then by its
    content (``run-server`` without an extension, ``serve.conf``). A file the user names is linted
    as what it holds; a walk still goes by names, as reading every file would be slow. ``head``:
    the file's first bytes (at least :data:`SNIFF_BYTES` of them, or all), read here when not given
    (an editor's buffer gives its own)."""
    if head is None:
        head = _head(path, SNIFF_BYTES)
    kind = classify(path, head)
    if kind is not None:
        return kind
    inner = path_name(path)
    while True:
        stem, dot, wrapper = inner.rpartition(".")
        if not dot or not stem or wrapper.lower() not in _WRAPPER_SUFFIXES:
            break
        inner = stem
        kind = _classify_name(inner, head)
        if kind is not None:
            return kind
    if name_suffix(inner).lower() in _NOT_SNIFFED:
        return None  # a data or document format by its name: what it mentions is not a command
    return _kind_by_content(head)


#: names whose format is known and is no launch file when :func:`classify` passed them over (a JSON
#: flag table or schema mentions `vllm`, a README shows commands): never read as a script
_NOT_SNIFFED = frozenset({".json", ".jsonl", ".md", ".rst", ".txt", ".toml", ".lock", ".csv", ".html", ".xml",
                          ".ipynb"})


# compiled when first used: a run asks for few of them (what a file named without a known name
# holds, whether a compose file builds an image), and a one-file check need not compile them all
_YAML_KEY = DeferredPattern(rb"^(apiVersion|kind|services|spec|metadata|x-[\w-]+)\s*:", re.MULTILINE)
_DOCKERFILE_LINE = DeferredPattern(rb"^\s*FROM\s+\S", re.MULTILINE | re.IGNORECASE)
_UNIT_SECTION = DeferredPattern(rb"^\s*\[(Unit|Service|Install)\]\s*$", re.MULTILINE)
_PYTHON_LINE = DeferredPattern(rb"^(import \w|from [\w.]+ import )", re.MULTILINE)


def _kind_by_content(head: bytes) -> str | None:
    """The kind a file's first kilobytes show: a Dockerfile's ``FROM``, a unit's sections, the top
    keys of a compose file or Kubernetes manifest, Python imports, else a script that starts an
    engine (a text with neither is not a file mtplint reads)."""
    if _UNIT_SECTION.search(head):
        return "systemd"
    if _YAML_KEY.search(head):
        return "yaml"
    first = next((line.strip() for line in head.splitlines() if line.strip() and not line.lstrip().startswith(b"#")), b"")
    if first.upper().startswith((b"FROM ", b"ARG ")) and _DOCKERFILE_LINE.search(head):
        return "dockerfile"
    if _PYTHON_LINE.search(head):
        return "python"
    return "shell" if mentions_engine(head) else None


def _classify_name(name: str, head: bytes = b"") -> str | None:
    kind = _kind_by_name(name.lower())
    return _shebang_kind(head) if kind is _BY_FIRST_LINE else kind


#: what :func:`_kind_by_name` says of a name that leaves the kind to the file's first line
_BY_FIRST_LINE = "by its first line"


def _kind_by_name(lower: str) -> str | None:
    """The kind a lowercased file name says, :data:`_BY_FIRST_LINE`, or None: not a kind mtplint reads."""
    if lower.startswith(("compose", "docker-compose")) and _COMPOSE_NAME.fullmatch(lower):
        return "compose"
    suffix = name_suffix(lower)
    if suffix in (".yaml", ".yml"):
        return "yaml"
    if suffix in (".sh", ".bash", ".zsh", ".ksh"):
        return "shell"
    if suffix in (".py", ".pyw"):
        return "python"
    if lower in ("dockerfile", "containerfile") or lower.startswith(("dockerfile.", "containerfile.")) or lower.endswith(".dockerfile"):
        return "dockerfile"
    if suffix == ".service":
        return "systemd"
    if suffix == ".ini":
        return "ini"
    return _BY_FIRST_LINE if _may_have_shebang(suffix) else None


#: the suffix of the journal a ``--fix`` keeps next to a file while writing it (:mod:`mtplint.fix.write`):
#: one left by a killed run is never linted
FIX_JOURNAL_SUFFIX = ".mtplint-fix"

#: suffixes of files that are never shell or Python scripts: documents, data, other languages'
#: sources (a monorepo's JavaScript and Go would otherwise each be opened for a first line)
_NOT_SCRIPTS = frozenset((
    ".md", ".rst", ".txt", ".json", ".toml", ".cfg", ".lock", ".env", ".csv", ".tsv", ".xml", ".html", ".htm",
    ".css", ".scss", ".svg", ".png", ".jpg", ".jpeg", ".gif", ".ico", ".pdf", ".ipynb", ".sql", ".proto",
    ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".go", ".mod", ".sum", ".rs", ".java", ".kt", ".scala",
    ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".swift", ".lua", ".php",
    ".zip", ".gz", ".tgz", ".tar", ".whl", ".so", ".o", ".a", ".pyc", ".gguf", ".safetensors", ".bin", ".pt", ".onnx",
    FIX_JOURNAL_SUFFIX,
))


def _may_have_shebang(suffix: str) -> bool:
    """Whether a file whose name did not classify it is worth opening to read its first line."""
    return suffix not in _NOT_SCRIPTS


#: a compose service's ``build:`` key, and a YAML file's top-level ``services:`` (a compose file by
#: its content; a CI workflow's ``build`` job sits under ``jobs:``)
_BUILD_KEY = DeferredPattern(rb"^[ \t]+build[ \t]*:", re.MULTILINE)
_SERVICES_KEY = DeferredPattern(rb"^services[ \t]*:", re.MULTILINE)


def _builds_image(data: bytes, kind: str) -> bool:
    """A compose file that builds a service from a Dockerfile: its engine may be named only there."""
    # each key's word looked for as bytes first: most YAML files have neither (a search for the key
    # at a line's start is much slower than for its word)
    if kind == "compose":
        return b"build" in data and _BUILD_KEY.search(data) is not None
    return (kind == "yaml" and b"services" in data and _SERVICES_KEY.search(data) is not None
            and _BUILD_KEY.search(data) is not None)


def relevant(data: bytes, kind: str) -> bool:
    """The byte-level prefilter. Systemd units may start a script that holds the launch; a compose
    service built from a Dockerfile may name its engine only in the Dockerfile."""
    return kind == "systemd" or mentions_engine(data) or _builds_image(data, kind)


def relevant_file(path: str, kind: str, chunk_size: int = 1 << 20) -> bool:
    """:func:`relevant` for a file read in chunks (one too large to load whole); the chunks
    overlap by more than the longest prefilter word so none is cut in two."""
    if kind == "systemd":
        return True
    overlap = 64
    tail = b""
    try:
        with open_regular(path) as handle:
            while chunk := handle.read(chunk_size):
                if mentions_engine(tail + chunk) or _builds_image(tail + chunk, kind):
                    return True
                tail = chunk[-overlap:]
    except OSError:
        return False
    return False


class _Ignore:
    """``.gitignore`` rules of one directory; ``prefix`` is that directory's walked path plus ``/``,
    so a walked path below it is matched on the rest of its string (no ``Path`` arithmetic: a
    large tree has tens of thousands of entries)."""

    def __init__(self, prefix: str, spec: pathspec.GitIgnoreSpec) -> None:
        from pathspec.util import NORMALIZE_PATH_SEPS  # noqa: PLC0415 - pathspec: only a tree with a .gitignore

        self.prefix = prefix
        self.spec = spec
        # pathspec turns other separators (Windows') into "/" before matching: there, it matches
        self._search = None if NORMALIZE_PATH_SEPS else _any_pattern_search(spec)

    def matches(self, path: str, is_dir: bool) -> bool:
        if not path.startswith(self.prefix):
            return False
        relative = path[len(self.prefix):] + ("/" if is_dir else "")
        if self._search is None:
            return bool(self.spec.match_file(relative))
        if relative.startswith(("/", "./")):  # as pathspec's normalize_file (the walk of "//" lists "//name")
            relative = relative[1:] if relative[0] == "/" else relative[2:]
        return self._search(relative) is not None


#: what makes an expression depend on its groups' numbers or names (joined with others, they change)
_GROUP_REFERENCE = r"\\[1-9]|\(\?P=|\(\?\("


def _any_pattern_search(spec: pathspec.GitIgnoreSpec) -> Callable[[str], re.Match[str] | None] | None:
    """One search that finds a path iff one of the spec's patterns does, or None: the spec has a
    negated pattern (then which pattern matched last decides) or patterns that cannot be joined.

    Without negations, pathspec ignores a path iff any pattern's expression finds it. Each path
    of a walk is asked of every ``.gitignore`` above it, and pathspec asks each pattern in turn:
    pathspec's own expressions, joined into one, are asked once. They each name a group (the
    directory mark), and names must be unique in one expression: each is renamed, and the
    joined expression must hold exactly the renamed groups (a name's text inside a character
    class is no group, and would be changed)."""
    patterns = [pattern for pattern in spec.patterns if pattern.include is not None]
    if any(not pattern.include for pattern in patterns):
        return None
    expressions = [pattern.regex for pattern in patterns if pattern.regex is not None]
    if not expressions:
        return _never
    flags = {expression.flags for expression in expressions}
    sources: list[str] = []
    renamed = 0
    for index, expression in enumerate(expressions):
        source = expression.pattern
        if not isinstance(source, str) or re.search(_GROUP_REFERENCE, source):
            return None
        for name in expression.groupindex:
            renamed += source.count(f"(?P<{name}>")
            source = source.replace(f"(?P<{name}>", f"(?P<{name}_{index}>")
        sources.append(f"(?:{source})")
    flag = flags.pop()
    if flags or flag & re.VERBOSE:  # one set of flags, and no comment that would hide the join's ")"
        return None
    import warnings  # noqa: PLC0415 - only a tree with a .gitignore

    try:
        with warnings.catch_warnings():  # pathspec's compiling warned of what is odd in a pattern already
            warnings.simplefilter("ignore")
            joined = re.compile("|".join(sources), flag)
    except re.error:
        return None
    if len(joined.groupindex) != renamed or renamed != sum(len(e.groupindex) for e in expressions):
        return None
    return joined.search


def _never(path: str) -> None:
    """The search of a ``.gitignore`` without patterns."""
    return None


def _load_gitignore(directory: str) -> _Ignore | None:
    from mtplint.extract import MAX_FILE_BYTES  # noqa: PLC0415 - only a tree with a .gitignore

    try:
        # a FIFO is not waited on; a .gitignore larger than a file mtplint lints is not read
        lines = read_regular(os.path.join(directory, ".gitignore"), MAX_FILE_BYTES).decode("utf-8", "replace") \
            .splitlines()
    except OSError:
        return None
    import pathspec  # noqa: PLC0415 - only a tree with a .gitignore

    try:
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
    except ValueError:
        # pathspec refuses a pattern git accepts and matches nothing with (``foo\``: an escape
        # with nothing after it): leaving such lines out matches as git does, where raising would
        # stop the run over one line of a .gitignore
        spec = pathspec.GitIgnoreSpec.from_lines(line for line in lines if _compiles(pathspec, line))
    return _Ignore(directory.rstrip(os.sep) + os.sep, spec)


def _compiles(pathspec: Any, line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except ValueError:
        return False
    return True


def _excluded(relative: str, name: str, patterns: Sequence[str]) -> bool:
    """``relative``: the path relative to the project root (posix), or the path as given when it
    lies outside the root."""
    return any(fnmatch(relative, pattern) or fnmatch(name, pattern) or relative.startswith(pattern.rstrip("/") + "/")
               for pattern in patterns)


def _relative_base(directory: str, root: str) -> str | None:
    """Where a walked directory lies relative to the root (``""``: the root itself); None outside."""
    try:
        relative = relative_to(resolved_path(directory), root)
    except (ValueError, OSError):
        return None
    return "" if relative == "." else relative


def _listed(directory: str, every_name: bool = False
            ) -> tuple[list[str], list[str], bool, bool, list[str] | None] | None:
    """The names of a directory's subdirectories (not followed when links) and of its files
    (followed), each sorted, last first; whether it holds a configuration file's name, and a
    ``.gitignore``; with ``every_name``, all its names (those of ``os.listdir``) unless there are more
    than :data:`WALK_LISTING_NAMES`, else None. None when it cannot be listed. Names, not the
    scan's entries: each entry holds its path too, and a flat folder of many services is held
    while the walk is below it (the benchmark's mixed 100k tree: 21,000 folders, some 5 MB as
    entries)."""
    directories: list[str] = []
    files: list[str] = []
    #: the names that are neither (a socket, a link to nothing, an entry that cannot be asked)
    others: list[str] = []
    try:
        with os.scandir(directory) as scan:
            for entry in scan:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        directories.append(entry.name)
                    elif entry.is_file(follow_symlinks=True):
                        files.append(entry.name)
                    else:
                        others.append(entry.name)
                except OSError:
                    others.append(entry.name)
    except OSError:
        return None
    # the names asked about once listed, in C, rather than each as the scan gives it (a listing is
    # a set of names: their order is the scan's no longer)
    every = directories + files + others if others else directories + files
    has_config = not CONFIG_NAMES.isdisjoint(every)
    has_gitignore = ".gitignore" in every
    names = every if every_name and len(every) <= WALK_LISTING_NAMES else None
    directories.sort(reverse=True)
    files.sort(reverse=True)
    return directories, files, has_config, has_gitignore, names


#: the names in each directory a walk is in (the one whose files it is handing out, and each one
#: above it), by the directory's real path, for as long as it is in it: what the run's loader
#: would list again for the launches in them (:meth:`mtplint.extract.FileLoader.listing`)
WalkListings = dict[str, list[str]]
#: the most names of a directory :data:`WalkListings` holds: a larger one (a flat folder of
#: thousands of services) is listed again by whoever asks, as its names would be held for as long
#: as the walk is below it (the walk lets each go once walked)
WALK_LISTING_NAMES = 256


def _walk(directory: str, relative: str | None, ignores: list[_Ignore], excludes: Sequence[str],
          respect_gitignore: bool, configs: Configs | None = None, group: int = 0,
          listings: WalkListings | None = None, real: str = "") -> Iterator[tuple[str, str, int]]:
    """Files below ``directory`` (a path string, as joined from the given directory) whose names may
    give a kind, sorted by name, each with what its name gives (:func:`_kind_by_name`) and its
    configuration group; ``relative``: the directory relative to the root, for
    ``exclude`` (None: outside the root). With ``configs``, a directory holding its own
    configuration file starts a group of its own, walked with that configuration's ``exclude``
    and ``respect-gitignore`` (as ruff's hierarchical configuration). With ``listings``, each
    directory's names are there while the walk is in it, by its real path ``real`` (a directory
    walked into is no link: its real path is its parent's and its name)."""
    listed = _listed(directory, listings is not None)
    if listed is None:
        return
    # last name first: each name is popped as it is walked, so a flat folder of many services
    # (thousands of names) is not held whole while the walk is below it
    directories, files, has_config, has_gitignore, names = listed
    if configs is not None and has_config:
        own = configs.group_at(directory)
        if own is not None and own != group:
            group = own
            walk = configs.walk_settings(group)
            if walk is not None:
                excludes, respect_gitignore = walk
                if not respect_gitignore:
                    ignores = []
    local = _load_gitignore(directory) if respect_gitignore and has_gitignore else None
    active = [*ignores, local] if local else ignores
    # the paths the scan's entries had
    prefix = directory if directory.endswith("/") else directory + "/"
    if listings is not None and names is not None:
        listings[real] = names
    while directories or files:
        # the two lists merged: every name in order, whichever its kind
        is_dir = bool(directories) and (not files or directories[-1] < files[-1])
        if is_dir:
            name = directories.pop()
            if name in DEFAULT_EXCLUDES:
                continue
        else:
            name = files.pop()
            # a file whose name gives no kind is no candidate, ignored or not: not matched
            by_name = _kind_by_name(name.lower())
            if by_name is None:
                continue
            kind = by_name
        path = prefix + name
        ignored = False
        for ignore in active:  # not any() over a generator: this runs for every entry of a tree
            if ignore.matches(path, is_dir):
                ignored = True
                break
        if ignored:
            continue
        if excludes or is_dir:
            entry_relative = None if relative is None else (f"{relative}/{name}" if relative else name)
            if excludes and _excluded(normalized(path) if entry_relative is None else entry_relative, name,
                                      excludes):
                continue
            if is_dir:
                inside = "" if listings is None else real + name if real.endswith("/") else f"{real}/{name}"
                yield from _walk(path, entry_relative, active, excludes, respect_gitignore, configs, group,
                                 listings, inside)
                continue
        yield path, kind, group
    if listings is not None:
        listings.pop(real, None)  # (a walk left before its end leaves them in the run's dict, gone with it)


def is_engine_config(path: str) -> bool:
    """:func:`looks_like_engine_config` for a file."""
    try:
        with open_regular(path) as handle:
            return looks_like_engine_config(handle.read(1 << 20))
    except OSError:
        return False


def _kind_of(path: str, name: str) -> str | None:
    """:func:`classify` by name, opening the file for its first line only when that may decide."""
    return _kind_by_first_line(path, _kind_by_name(name.lower()))


def _kind_by_first_line(path: str, kind_by_name: str | None) -> str | None:
    """The kind :func:`_kind_by_name` gave, or the one the file's first line gives when it left that open."""
    return _shebang_kind(head_of_listed(path, 256)) if kind_by_name is _BY_FIRST_LINE else kind_by_name


def _head(path: str, size: int = 256) -> bytes:
    # a FIFO given by name is not opened: that would wait for a writer
    return head_of_regular(path, size)


def is_dotenv(path: str) -> bool:
    """A compose environment file by its name: ``.env``, ``.env.production``, ``.env-prod``, ``sglang.env``."""
    return re.fullmatch(r"\.env([._-].*)?|.+\.env", path_name(path).lower()) is not None


def compose_files_reading(env_file: str) -> list[str]:
    """The compose files next to an environment file, which read it (``.env`` of the project
    directory, or an ``env_file:`` beside them): a commit that changes only the ``.env`` -- a new
    image tag -- changes their launches, so linting that file means linting them."""
    try:
        directory = parent_dir(env_file)
        # Path.iterdir's paths: the directory joined with each name (``x`` in ``.``, not ``./x``)
        siblings = sorted((normalized(os.path.join(directory, entry)) for entry in os.listdir(directory)),
                          key=path_parts)
    except OSError:
        return []
    return [path for path in siblings if classify(path) == "compose" and is_file(path)]


#: a top-level key of a vLLM / SGLang ``--config`` YAML (an option name, dashes or underscores); compiled
#: by the first file given by name that asks it (a run over a tree, or over a compose file, never does)
_ENGINE_CONFIG_KEY = (
    rb"^[\"']?(?:model|model[-_]path|served[-_]model[-_]name|speculative[-_][\w-]+|enable[-_]prefix[-_]caching"
    rb"|no[-_]enable[-_]prefix[-_]caching|kv[-_]cache[-_]dtype|tensor[-_]parallel[-_]size|tp[-_]size"
    rb"|max[-_]num[-_]seqs|max[-_]running[-_]requests|gpu[-_]memory[-_]utilization|mem[-_]fraction[-_]static"
    rb"|max[-_]model[-_]len|context[-_]length|enforce[-_]eager|disable[-_]radix[-_]cache)[\"']?\s*:"
)
#: kinds of file that can start an engine with a ``--config`` file
_LAUNCHING_KINDS = ("compose", "shell", "yaml", "python", "dockerfile", "systemd")


def looks_like_engine_config(data: bytes) -> bool:
    """Whether YAML bytes read like a vLLM/SGLang ``--config`` file: a top-level engine option key."""
    return re.search(_ENGINE_CONFIG_KEY, data, re.MULTILINE) is not None


def launches_naming(config_file: str, root: str) -> list[str]:
    """Files that may start an engine with ``config_file`` as its ``--config``: files of a launching
    kind that mention an engine and the config's file name, in its directory and each parent up to
    ``root``, and one level below each of those (a ``configs/`` folder beside ``scripts/``).

    pre-commit passes only the files a commit changed: a commit that writes ``enable-prefix-caching:
    false`` into a vLLM config (silently ignored, MTP107) must lint the launch that reads it."""
    return [path for path, _ in _launchers_of(config_file, root)]


def _launchers_of(config_file: str, root: str) -> list[tuple[str, str]]:
    """:func:`launches_naming`, each file with its kind (by name, else by its shebang line)."""
    config_name = path_name(config_file).encode()
    config = os.path.realpath(config_file)
    directory = os.path.dirname(config)
    top = os.path.realpath(root)
    folders: list[str] = []
    while True:
        folders.append(directory)
        if directory == top or not directory.startswith(top.rstrip(os.sep) + os.sep):
            break
        directory = os.path.dirname(directory)
    found: list[tuple[str, str]] = []
    listed: set[str] = set()
    for folder in folders:
        for current in [folder, *_subfolders(folder)]:
            if current in listed:
                continue
            listed.add(current)
            for path in _files_in(current):
                kind = classify(path)
                if path == config or (kind is None and not _may_have_shebang(path_suffix(path).lower())):
                    continue
                try:
                    with open_regular(path) as handle:
                        data = handle.read(1 << 20)
                except OSError:
                    continue
                kind = kind or classify(path, data[:256])
                if kind in _LAUNCHING_KINDS and config_name in data and mentions_engine(data):
                    found.append((path, kind))
    return found


def brought_in(given: str, kind: str, root: str) -> list[tuple[str, str]]:
    """The files linting ``given`` (a file named on the command line, of ``kind``) brings in, each
    with its kind: the compose files beside an environment file (:func:`compose_files_reading`),
    the launches of an engine ``--config`` YAML (:func:`launches_naming`)."""
    if kind == "unknown" and is_dotenv(given):
        return [(path, "compose") for path in compose_files_reading(given)]
    if kind == "yaml" and is_engine_config(given):
        return _launchers_of(given, root)
    return []


def _subfolders(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as scan:
            return sorted(entry.path for entry in scan if entry.is_dir(follow_symlinks=False)
                          and entry.name not in DEFAULT_EXCLUDES and not entry.name.startswith("."))
    except OSError:
        return []


def _files_in(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as scan:
            return sorted(entry.path for entry in scan if entry.is_file())  # a linked script counts too
    except OSError:
        return []


def discover(paths: Iterable[str | os.PathLike[str]], root: str | os.PathLike[str], excludes: Sequence[str] = (),
             respect_gitignore: bool = True, configs: Configs | None = None) -> list[Candidate]:
    """Files to lint, in a stable order, each with its kind (before the prefilter). As pre-commit
    passes only the files a commit changed, a file given by name brings in those whose launches it
    changes (:func:`brought_in`).

    ``configs``: each file's configuration group -- for a path given, its closest configuration's;
    in a directory walked, the closest at or above each file (:func:`_walk`). Without it, or
    when a path's group is 0, ``excludes`` and ``respect_gitignore`` hold."""
    given_paths = [normalized(path) for path in paths]
    if len(given_paths) == 1 and is_dir(given_paths[0]):
        # one directory's walk lists each file once: nothing to merge, and no path to compare
        return list(_walked(given_paths[0], resolved_path(root),
                            *_walk_settings(given_paths[0], excludes, respect_gitignore, configs), configs))
    found: dict[str, Candidate] = {}
    root_path = resolved_path(root)
    readers: list[tuple[str, str, int]] = []
    for given in given_paths:
        group, walk_excludes, walk_gitignore = _walk_settings(given, excludes, respect_gitignore, configs)
        if is_dir(given):
            for candidate in _walked(given, root_path, group, walk_excludes, walk_gitignore, configs):
                found.setdefault(candidate.path, candidate)
        elif exists(given) or is_symlink(given):
            kind = classify_explicit(given) or "unknown"
            found[given] = Candidate(given, kind, explicit=True, group=group)
            readers.extend((path, reader_kind, configs.group_of(path) if configs is not None else 0)
                           for path, reader_kind in brought_in(given, kind, root_path))
        else:
            found[given] = Candidate(given, "missing", explicit=True, group=group)
    if readers:
        # realpath, not Path.resolve: a symlink loop given by name must not raise here (it is
        # reported as unreadable by the extraction)
        known = {os.path.realpath(candidate.path) for candidate in found.values()}
        for path, kind, group in readers:
            if os.path.realpath(path) not in known:
                known.add(os.path.realpath(path))
                found[path] = Candidate(path, kind, group=group)
    return list(found.values())


def discover_as_walked(paths: Sequence[str | os.PathLike[str]], root: str | os.PathLike[str],
                       excludes: Sequence[str] = (),
                       respect_gitignore: bool = True, configs: Configs | None = None,
                       listings: WalkListings | None = None) -> Iterator[Candidate]:
    """:func:`discover`'s candidates, in its order, each as soon as the walk reaches it: a run with
    workers starts linting the first files while the parent still walks the rest of a large tree.
    ``listings``: filled with the names of the directories the walk is in (:func:`_walk`).

    Only directories stream. A file given by name can replace a walked candidate of the same path
    (it becomes explicit) and brings in other files at the end, so paths that are not all
    directories are discovered first, then yielded."""
    given_paths = [normalized(path) for path in paths]
    if not all(is_dir(given) for given in given_paths):
        yield from discover(given_paths, root, excludes, respect_gitignore, configs)
        return
    root_path = resolved_path(root)
    if len(given_paths) == 1:  # one walk lists each file once
        yield from _walked(given_paths[0], root_path,
                           *_walk_settings(given_paths[0], excludes, respect_gitignore, configs), configs, listings)
        return
    seen: set[str] = set()
    for given in given_paths:
        group, walk_excludes, walk_gitignore = _walk_settings(given, excludes, respect_gitignore, configs)
        for candidate in _walked(given, root_path, group, walk_excludes, walk_gitignore, configs, listings):
            if candidate.path not in seen:
                seen.add(candidate.path)
                yield candidate


def _walk_settings(given: str, excludes: Sequence[str], respect_gitignore: bool,
                   configs: Configs | None) -> tuple[int, Sequence[str], bool]:
    """A path given's configuration group, and the ``exclude`` and ``respect-gitignore`` its walk follows."""
    group = configs.group_of(given) if configs is not None else 0
    if group and configs is not None:
        walk = configs.walk_settings(group)
        if walk is not None:
            return group, walk[0], walk[1]
    return group, excludes, respect_gitignore


def _not_excluding(base: str | None, excludes: Sequence[str]) -> Sequence[str]:
    """The ``exclude`` patterns that apply below a directory named on the command line: not those
    that exclude the directory itself or a folder above it. As ruff, which lints what it is named
    and applies exclusions to what it finds: ``mtplint check examples/`` lints the examples a
    configuration's ``exclude = ["examples"]`` keeps out of ``mtplint check .``."""
    if not base or not excludes:
        return excludes
    parts = base.split("/")
    above = [("/".join(parts[:end]), parts[end - 1]) for end in range(1, len(parts) + 1)]
    return [pattern for pattern in excludes
            if not any(_excluded(folder, name, (pattern,)) for folder, name in above)]


def _walked(directory: str, root: str, group: int, excludes: Sequence[str], respect_gitignore: bool,
            configs: Configs | None, listings: WalkListings | None = None) -> Iterator[Candidate]:
    base = _relative_base(directory, root)
    # the walk joins each name to the directory as given, normalised: ``normalized`` of its paths
    # drops only the "./" before a walk of "." (a name is never empty, ".", or holds a "/")
    cut = 2 if directory == "." else 0
    real = os.path.realpath(directory) if listings is not None else ""
    for path, kind_by_name, walked_group in _walk(directory, base, [], _not_excluding(base, excludes),
                                                  respect_gitignore, configs, group, listings, real):
        kind = _kind_by_first_line(path, kind_by_name)
        if kind:
            yield Candidate(path[cut:] if cut else path, kind, group=walked_group)
