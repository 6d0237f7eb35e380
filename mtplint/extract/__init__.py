"""Stage 2 of the pipeline: extract launches from classified files.

One module per source kind. Each exposes ``extract(source, ctx) -> list[Launch]`` and raises
:class:`Malformed` for input it cannot read (reported as MTP001 with the location). YAML-based kinds
share one parse (see :mod:`mtplint.extract.yamlfiles`).
"""

from __future__ import annotations

import codecs
import os
import stat
from collections.abc import Callable, Iterable, Mapping

from mtplint.extract.budget import ExpansionBudget
from mtplint.extract.launch import GpuHint, Launch, Recognised, VersionHint, image_version_hint
from mtplint.files import READ_FLAGS, Listing, listing_from, listing_of
from mtplint.pathtext import (
    exists,
    is_file,
    join,
    normalized,
    path_name,
    read_bytes,
    real_directory,
    relative_to,
    resolved_path,
)
from mtplint.source import EnvEntry, Issues, Parses, SourceFile, Span, Token

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_FILE_BYTES = 8 * 1024 * 1024


class Malformed(Exception):
    """Input that cannot be parsed; becomes an MTP001 finding at ``offset``."""

    def __init__(self, message: str, offset: int = 0) -> None:
        super().__init__(message)
        self.offset = offset


_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF8, "utf-8"),
         (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


#: every BOM, asked at once: most files have none
_ANY_BOM = tuple(bom for bom, _ in _BOMS)


def decode_with_encoding(data: bytes) -> tuple[str, str, bytes]:
    """(text, encoding, BOM): UTF-8, or UTF-8/16/32 with a BOM. The BOM is not part of the text,
    so offsets count from the first real character; raises ``UnicodeDecodeError``."""
    if data.startswith(_ANY_BOM):
        for bom, encoding in _BOMS:
            if data.startswith(bom):
                return data[len(bom):].decode(encoding), encoding, bom
    return data.decode("utf-8"), "utf-8", b""


def decode(data: bytes) -> str:
    """Decode file bytes as the engines would read them (see :func:`decode_with_encoding`)."""
    return decode_with_encoding(data)[0]


#: what :meth:`FileLoader._plain_real_path` has not asked yet (None is an answer: not a plain path)
_UNKNOWN: Any = object()

#: a file is read without waiting for a writer (see :meth:`FileLoader.read_regular`)
_NO_FOLLOW: int = getattr(os, "O_NOFOLLOW", 0)


def _read_to_end(descriptor: int, size: int) -> bytes:
    """What ``FileIO.readall`` reads (``Path.read_bytes``): up to the end, as the file may have
    grown since ``size`` was asked; without a buffered reader around it. A regular file's read
    that returns less than it asked for stopped at the end (POSIX ``read``): the read that
    ``readall`` adds to see nothing more come is left out, one system call a file of a tree;
    a file grown past ``size`` fills the first read, and is read on."""
    data = os.read(descriptor, size + 1)
    if len(data) <= size:
        return data
    more = os.read(descriptor, max(size, 1 << 16))
    if not more:
        return data
    parts = [data, more]
    while more := os.read(descriptor, 1 << 16):
        parts.append(more)
    return b"".join(parts)


def read_file(path: str | os.PathLike[str]) -> bytes:
    """``path.read_bytes()`` of a regular file, without a buffered file object around the reads."""
    descriptor = os.open(path, READ_FLAGS)
    try:
        return _read_to_end(descriptor, os.fstat(descriptor).st_size)
    finally:
        os.close(descriptor)


class FileLoader:
    """Reads and caches files as :class:`SourceFile`; paths are shown relative to ``root``.

    One loader is one run's view of the files: a path resolves (and shows) the same way for as long
    as it lives. Resolving costs a system call per path component, and a tree's files sit in
    thousands of directories, so each directory is resolved once, through its parent's answer."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        cwd = os.getcwd()
        #: the working directory as the system gives it, ending in a slash: what ``os.path.abspath``
        #: joins a relative path to, without asking the system at every call
        self.working_directory = os.path.join(cwd, "")
        self.cwd = resolved_path(cwd)
        #: what a relative path is joined to (``os.path.join(self.cwd, path)``), as a prefix: a
        #: run resolves tens of thousands of paths
        self._in_cwd = self.cwd if self.cwd.endswith("/") else self.cwd + "/"
        root = normalized(root)
        # most runs' root is the working directory: resolved once, not twice (a run makes several loaders)
        self.root = self.cwd if root == cwd else resolved_path(root)
        #: by each file's key (:meth:`_key`)
        self._cache: dict[str, SourceFile | None] = {}
        #: the texts of :attr:`_cache` by the name findings show for them
        self._by_display: dict[str, SourceFile] = {}
        self._keys: dict[str, str] = {}
        #: directory as written (absolute) -> its real path; None: not a plain existing directory
        self._directories: dict[str, str | None] = {}
        self._displays: dict[str, str] = {}
        self._plain_real_paths: dict[str, str | None] = {}
        self._is_file: dict[str, bool] = {}
        #: directory -> (its names, the names lowercased); None: not listable
        self._listings: dict[str, Listing] = {}
        #: the names of the directories a walk in this process is in, by real path
        #: (:data:`mtplint.discover.WalkListings`): listed already, not listed again
        self.walk_listings: Mapping[str, list[str]] = {}
        #: whether :meth:`put` or :meth:`stand_in` gave the loader a text that stands for a file (a fix's new text)
        self.seeded = False
        #: :meth:`stand_in`'s texts (by display name) and the key of each display name
        self._stand_ins: Mapping[str, SourceFile] = {}
        self._stand_in_displays: Mapping[str, str] = {}
        # the bytes extract_file just read to prefilter a file (with the status of the open file, if
        # it was asked, and whether it was opened as no link), so loading it does not read it, or
        # ask what it is, again
        self._just_read: tuple[str, os.stat_result | None, bytes, bool] | None = None
        #: what the run's readers parse from the files it read, shared among them
        self.parses = Parses()
        #: what a stage remembers for as long as the run (the loader) lives, by the stage's own key
        self.memos: dict[str, Any] = {}
        #: set by a stage that left out what an earlier analysis through this loader reported (a
        #: compose service, a malformed file's MTP001): the analysis then depends on those before
        #: it, and its result is not what an analysis of its file alone gives. Cleared by whoever
        #: reads it (:func:`mtplint.analysed.analysed_with_dependencies`)
        self.reported_earlier = False
        #: what a stage works out from the files and directories it read (version pins up the tree),
        #: by its own key: forgotten with them (:meth:`forget_files`)
        self.path_memos: dict[str, Any] = {}

    def display(self, path: str) -> str:
        shown = self._displays.get(path)
        if shown is None:
            shown = self._displays[path] = self._display(path)
        return shown

    def known_display(self, path: str) -> str | None:
        """:meth:`display` of ``path`` if this loader has worked it out already (and not forgotten
        it), else None: asks nothing of the file system."""
        return self._displays.get(path)

    def _display(self, path: str) -> str:
        resolved = self._plain_real_path(path)
        if resolved is None:
            # realpath, not resolve(): a symlink loop must be shown, not raise RuntimeError
            resolved = os.path.realpath(path if os.path.isabs(path) else os.path.join(self.cwd, path))
        if resolved.startswith("//"):  # the one root POSIX keeps doubled: compared component by component
            return self._display_by_parts(normalized(resolved), path)
        for base in (self.cwd, self.root):
            if resolved == base:
                return "."
            prefix = base if base.endswith("/") else base + "/"
            if resolved.startswith(prefix):
                return resolved[len(prefix):]
        return path

    def _display_by_parts(self, resolved: str, path: str) -> str:
        for base in (self.cwd, self.root):
            try:
                return relative_to(resolved, base)
            except ValueError:
                continue
        return path

    def _key(self, path: str, not_a_link: bool = False) -> str:
        """What identifies the file: the text of its real path (``Path.resolve``), as a path
        object would compare (``normcase``: Windows' paths compare without case). ``not_a_link``:
        the path was just opened without following a symbolic link (:meth:`read_regular`)."""
        key = self._keys.get(path)
        if key is None:
            plain = self._plain_real_path(path, not_a_link)
            # otherwise (a symlink, a missing file, a name such as ``..``) as pathlib says
            key = self._keys[path] = os.path.normcase(
                plain if plain is not None else resolved_path(path) if exists(path) else path)
        return key

    def _plain_real_path(self, path: str, not_a_link: bool = False) -> str | None:
        """``os.path.realpath(path)`` when ``path`` exists and is not itself a symbolic link, from
        its directory's remembered real path and one ``lstat`` (none when it is known not to be a
        link); None otherwise (the caller then asks the file system the long way, with its own
        error handling)."""
        # one look-up of the path, a miss told by its default
        real: str | None = self._plain_real_paths.get(path, _UNKNOWN)
        if real is _UNKNOWN:
            real = self._plain_real_paths[path] = self._find_plain_real_path(path, not_a_link)
        return real

    def _find_plain_real_path(self, path: str, not_a_link: bool = False) -> str | None:
        absolute = os.fspath(path)  # a path object too, as os.path took it
        if not absolute.startswith("/"):
            absolute = self._in_cwd + absolute
        directory, name = os.path.split(absolute)
        if name in ("", ".", ".."):
            return None
        real_directory = self._real_directory(directory)
        if real_directory is None:
            return None
        if not not_a_link:
            try:
                if stat.S_ISLNK(os.lstat(absolute).st_mode):
                    return None
            except OSError:
                return None
        return real_directory + name if real_directory.endswith("/") else f"{real_directory}/{name}"

    def _real_directory(self, directory: str) -> str | None:
        """:func:`mtplint.pathtext.real_directory`, with what this loader knows of directories."""
        return real_directory(directory, self._directories)

    def resolve(self, path: str) -> str:
        """``path.resolve()`` (a symlink loop still raises RuntimeError), by the directories
        already resolved where it can."""
        plain = self._plain_real_path(path)
        return plain if plain is not None else resolved_path(path)

    def exists(self, path: str) -> bool:
        """``path.exists()``, answered without a system call for a path already resolved."""
        return self._plain_real_path(path) is not None or exists(path)

    def is_file(self, path: str) -> bool:
        """``path.is_file()``, asked of the file system once per run (compose and kustomize look
        for the same few names in a directory for each file in it)."""
        known = self._is_file.get(path)
        if known is None:
            known = self._is_file[path] = is_file(path)
        return known

    def first_file(self, directory: str, names: tuple[str, ...]) -> str | None:
        """The first of ``names`` that :meth:`is_file` says is a file in ``directory``.

        Compose and kustomize look for a few fixed names next to every file they read, and most are
        missing: the directory is listed once per run, and only a name it holds is asked of the
        file system. (A name listed under another case may be the same file on a case-insensitive
        file system; a directory that cannot be listed: each name is asked.)"""
        # by its real path, the listing the version pins of the launches in it read too
        real = self._real_directory(directory if os.path.isabs(directory) else os.path.join(self.cwd, directory))
        listing = self.listing(real if real is not None else directory)
        for name in names:
            if listing is not None and name not in listing[0] and name.lower() not in listing[1]:
                continue
            if self.is_file(join(directory, name)):
                return name
        return None

    def listing(self, directory: str) -> Listing:
        """The names in ``directory`` and the same names lowercased, listed once per run (until
        :meth:`forget_files`); None when it cannot be listed (not a directory, or not readable:
        its files may still be). Pass a real path (:meth:`real_path`) where one is known, so that
        every reader of a directory shares one listing."""
        if directory in self._listings:
            return self._listings[directory]
        walked = self.walk_listings.get(directory)
        listing = listing_of(directory) if walked is None else listing_from(walked)
        self._listings[directory] = listing
        return listing

    def real_path(self, path: str) -> str:
        """``os.path.realpath(path)``, by the directories already resolved where it can."""
        plain = self._plain_real_path(path)
        return plain if plain is not None else os.path.realpath(path)

    def read_bytes(self, path: str) -> bytes:
        """The file's bytes; the next :meth:`load` of the same path uses them instead of reading
        the file again."""
        data = read_bytes(path)
        self._just_read = (path, None, data, False)
        return data

    def read_regular(self, path: str) -> tuple[os.stat_result, bytes | None]:
        """The file's status and, for a regular file within :data:`MAX_FILE_BYTES`, its bytes, as
        ``os.stat`` and :meth:`read_bytes` give them (raising what they raise), from one opening:
        the file is asked what it is once open. The next :meth:`load` of the same path uses them.

        Opened without waiting for a writer, so a walked file replaced by a FIFO is told apart, not
        waited on; a path that cannot be opened is asked of ``os.stat``: a regular file's reading
        fails with the opening's error, anything else is answered by its status."""
        try:
            # not following a link at the end of the path: opened, it is known to be no link
            descriptor, not_a_link = os.open(path, READ_FLAGS | _NO_FOLLOW), bool(_NO_FOLLOW)
        except OSError:
            try:  # a symbolic link, or an error the plain opening gives again
                descriptor, not_a_link = os.open(path, READ_FLAGS), False
            except OSError:
                status = os.stat(path)
                if stat.S_ISREG(status.st_mode) and status.st_size <= MAX_FILE_BYTES:
                    raise
                return status, None
        try:
            status = os.fstat(descriptor)
            if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_FILE_BYTES:
                return status, None
            data = _read_to_end(descriptor, status.st_size)
        finally:
            os.close(descriptor)
        self._just_read = (path, status, data, not_a_link)
        return status, data

    def load(self, path: str) -> SourceFile | None:
        """The file's text, or ``None`` when it does not exist or is not text."""
        just_read, self._just_read = self._just_read, None
        if just_read is not None and just_read[0] != path:
            just_read = None
        key = self._key(path, just_read is not None and just_read[3])
        if key in self._cache:
            return self._cache[key]
        if self._stand_ins:
            standing = self._standing_in(key)
            if standing is not None:
                return standing
        source: SourceFile | None = None
        try:
            if just_read is not None:
                _, status, data, _ = just_read
                if status is None:  # read without being asked what it is
                    status = os.stat(path)
            else:
                status, data = os.stat(path), None
            if stat.S_ISREG(status.st_mode) and status.st_size <= MAX_FILE_BYTES:
                if data is None:
                    # a large binary (the host's interpreter an ExecStart names, some megabytes) is
                    # told by its head, not read whole
                    data = read_file(path) if status.st_size <= _TEXT_HEAD or _may_be_text(path) else None
                if data is not None and _is_text(data):
                    text, encoding, bom = decode_with_encoding(data)
                    # digest=None: sha256 of these bytes, computed if a fix or the cache asks
                    source = SourceFile(path, self.display(path), text, encoding, bom, None)
                    source.parses = self.parses
                    self._by_display.setdefault(source.display, source)
        except (OSError, UnicodeDecodeError):
            source = None
        self._cache[key] = source
        return source

    def peek(self, path: str) -> SourceFile | None:
        """The file's text if it was already read or seeded with :meth:`put` (a fix's new text),
        without touching the disk."""
        key = self._key(path)
        if key in self._cache:
            return self._cache[key]
        return self._standing_in(key) if self._stand_ins else None

    def by_display(self, display: str) -> SourceFile | None:
        """A file already read, by the name findings show for it."""
        standing = self._stand_ins.get(display)
        if standing is not None:
            return standing
        return self._by_display.get(display)

    def share_paths(self, other: FileLoader) -> None:
        """Take (and from now on share) ``other``'s answers about paths: real paths, display names,
        which names are files, directory listings. For loaders over the same files at different
        points of ``--fix``, which edits files but never creates or deletes one."""
        self._keys = other._keys
        self._directories = other._directories
        self._displays = other._displays
        self._plain_real_paths = other._plain_real_paths
        self._is_file = other._is_file
        self._listings = other._listings

    def forget_files(self) -> None:
        """Forget the texts read and the answers about paths and directories, as a new loader
        would not know them (a run over a large tree calls this every so many files, so that its
        memory does not grow with the tree). What is asked again is read again; a loader seeded
        with texts that stand for files (:meth:`put`) keeps everything. :attr:`memos` stay: what
        the run has reported, not a view of files."""
        if self.seeded:
            return
        # cleared, not replaced: loaders that share these answers (:meth:`share_paths`) keep sharing them
        for remembered in (self._cache, self._by_display, self._keys, self._directories, self._displays,
                           self._plain_real_paths, self._is_file, self._listings, self.path_memos):
            remembered.clear()

    def put(self, source: SourceFile) -> None:
        self.seeded = True
        source.parses = self.parses
        self._cache[self._key(source.path)] = source
        self._by_display[source.display] = source

    def key_of(self, source: SourceFile) -> str:
        """What identifies ``source``'s file in this loader (:meth:`_key`), for :meth:`stand_in`."""
        return self._key(source.path)

    def stand_in(self, texts: Mapping[str, SourceFile], displays: Mapping[str, str]) -> None:
        """Let ``texts`` (by display name) stand for their files, as :meth:`put` of each would, but
        each taken only when asked for: a fix's try seeds the texts of every file fixed so far, and
        reads a few of them. ``displays``: the key (:meth:`key_of`) of each text's file -> its
        display name, for every text (the caller keeps it across loaders: files do not move). Called
        once, before anything is read."""
        self.seeded = True
        self._stand_ins = texts
        self._stand_in_displays = displays

    def _standing_in(self, key: str) -> SourceFile | None:
        display = self._stand_in_displays.get(key)
        source = self._stand_ins.get(display) if display is not None else None
        if source is not None:
            source.parses = self.parses
            self._cache[key] = source
            self._by_display[source.display] = source
        return source


class ExtractContext:
    """What an extractor may use besides its own file: the run's files, where diagnostics go, and
    ``related``: the extra files a launch depends on (``.env``, ``env_file``, a started script), shown
    by ``inspect``. (A plain class, not a dataclass: this module is on every run's start-up path.)"""

    __slots__ = ("budget", "issues", "loader", "related")

    def __init__(self, loader: FileLoader, issues: Issues | None = None,
                 related: dict[str, list[str]] | None = None) -> None:
        self.loader = loader
        self.issues = Issues() if issues is None else issues
        self.related: dict[str, list[str]] = {} if related is None else related
        #: what variable expansion may still produce in the file being extracted
        self.budget = ExpansionBudget()

    def malformed(self, source: SourceFile, message: str, offset: int = 0) -> None:
        self.issues.add("MTP001", message, source.span(offset, offset + 1 if source.text else offset))


def env_entries(pairs: Iterable[tuple[str, Token]], origin: str = "explicit") -> dict[str, EnvEntry]:
    return {name: EnvEntry(name, value, value.span, origin) for name, value in pairs}


def docker_client_environment(recognised: Recognised, host: dict[str, EnvEntry]) -> dict[str, EnvEntry]:
    """The environment the ``docker`` client runs with: the file's (``host``) plus ``env VAR=x``."""
    return {**host, **env_entries(recognised.host_env)}


def _container_environment(recognised: Recognised, host: dict[str, EnvEntry]) -> dict[str, EnvEntry]:
    """What ``docker run -e NAME`` copies into the container from the docker client's environment
    (``host`` plus ``env VAR=x`` before ``docker``). The rest of that environment stays outside: a
    shell's ``export`` before ``docker run`` does not reach the engine. A NAME the file does not set
    comes from whoever runs it: unresolved."""
    client = docker_client_environment(recognised, host)
    return {name: EnvEntry(name, _from_client(client, name, flag_value.span), flag_value.span)
            for name, flag_value in recognised.docker_inherit}


def _from_client(client: dict[str, EnvEntry], name: str, span: Span | None) -> Token:
    """The value ``docker`` copies for a bare ``NAME`` (``-e NAME``, a ``NAME`` line of an env file)
    from its own environment; unresolved when the file does not set it (whoever runs it does)."""
    known = client.get(name)
    return known.value if known is not None else Token(f"${{{name}}}", span, (name,))


def build_launch(
    recognised: Recognised,
    source: SourceFile,
    *,
    base_dir: str,
    context: str,
    env: dict[str, EnvEntry] | None = None,
    gpu: GpuHint | None = None,
    span: Span | None = None,
) -> Launch:
    """Turn a recognised argv into a :class:`Launch`, merging environment and image evidence.

    ``env`` is the environment the surrounding file gives the command; assignments in the argv
    itself (``env VAR=x``, ``docker run -e``) are added on top, as they would be at run time.
    """
    environment = _container_environment(recognised, env or {}) if recognised.container else dict(env or {})
    environment.update(env_entries(recognised.env))
    environment.update(env_entries(recognised.docker_env))
    hint = image_version_hint(recognised.engine, recognised.image)
    hints: list[VersionHint] = [hint] if hint is not None else []
    if gpu is None and recognised.gpu_count is not None:
        gpu = GpuHint(count=recognised.gpu_count, origin="explicit", span=recognised.image.span if recognised.image else None)
    first = recognised.program[0].span if recognised.program else None
    launch = Launch(
        engine=recognised.engine,
        entry=recognised.entry,
        source=source,
        span=span or first,
        program=recognised.program,
        args=recognised.args,
        env=environment,
        image=recognised.image,
        gpu=gpu,
        base_dir=base_dir,
        version_hints=hints,
        context=context,
    )
    if recognised.docker_env_files:
        launch.env_files = list(recognised.docker_env_files)
        launch.client_env = docker_client_environment(recognised, env or {})
    for hidden in recognised.docker_hidden:
        launch.notes.append(f"docker run {hidden.value}: options not known; the container's environment is not fully known")
        launch.env_open.append(Token(f"docker run {hidden.value}", hidden.span, hidden.unresolved))
    return launch


#: the bytes at the start of a file that tell a binary (a NUL among them) from a text
_TEXT_HEAD = 8192


def _is_text(data: bytes) -> bool:
    """Whether a file's bytes are loaded as a text: no NUL in their head, or a UTF-16 text's BOM."""
    return b"\x00" not in data[:_TEXT_HEAD] or data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))


def _may_be_text(path: str) -> bool:
    """:func:`_is_text` of the file's head."""
    descriptor = os.open(path, READ_FLAGS)
    try:
        return _is_text(os.read(descriptor, _TEXT_HEAD))
    finally:
        os.close(descriptor)


def load_host_file(raw: str, base_dir: str, loader: FileLoader) -> SourceFile | None:
    """The file a launch names on its host, as the checkout has it: relative to ``base_dir``; an
    absolute path as given, then by its name next to the file (the checkout rarely mirrors ``/etc``)."""
    path = normalized(raw)
    for candidate in ([path, join(base_dir, path_name(path))] if os.path.isabs(path) else [join(base_dir, path)]):
        loaded = loader.load(candidate)
        if loaded is not None:
            return loaded
    return None


def read_docker_env_files(launch: Launch, ctx: ExtractContext) -> None:
    """Put the variables of ``docker run --env-file FILE`` into the launch's environment.

    Docker reads every ``--env-file`` first, in order (a later file wins), then the ``-e`` flags on
    top, wherever they stand on the command line (docker/cli ``opts/parse.go`` ``readKVStrings``:
    "parse the '-e' and '--env' after, to allow override"). A relative path is relative to where
    ``docker`` runs: the launch's ``base_dir`` (a script's directory). A file mtplint cannot read --
    a path only known at run time, not in the checkout, or refused by Docker -- leaves the
    container's environment open (``launch.env_open``): its variables are unknown, never assumed unset.
    """
    from mtplint.extract.dotenv import DockerEnvFileError, parse_docker_env_file  # noqa: PLC0415 - only a launch with --env-file

    from_files: dict[str, EnvEntry] = {}
    for path_token in launch.env_files:
        shown = Token(f"--env-file {path_token.value}", path_token.span, path_token.unresolved)
        if not path_token.resolved:
            launch.notes.append(f"{shown.value}: the path is not known; the container's environment is not fully known")
            launch.env_open.append(shown)
            continue
        loaded = load_host_file(path_token.value, launch.base_dir, ctx.loader)
        if loaded is None:
            launch.notes.append(f"{shown.value}: file not found; the container's environment is not fully known")
            launch.env_open.append(shown)
            continue
        try:
            entries = parse_docker_env_file(loaded)
        except DockerEnvFileError as error:
            ctx.issues.add("MTP001", f"{error} (docker run refuses this env file)",
                           loaded.span(error.offset, error.offset + 1))
            launch.env_open.append(shown)
            continue
        ctx.related.setdefault(launch.source.display, []).append(loaded.display)
        for name, value in entries:
            if value is None:  # a bare NAME: copied from the docker client's environment
                value = _from_client(launch.client_env, name.value, name.span)
            from_files[name.value] = EnvEntry(name.value, value, name.span)
    if from_files:
        launch.env = {**from_files, **launch.env}


def finish_launches(launches: list[Launch], ctx: ExtractContext) -> list[Launch]:
    """What every extractor's launches still need from the run's files (``docker run --env-file``)."""
    for launch in launches:
        if launch.env_files:
            read_docker_env_files(launch, ctx)
    return launches


Extractor = Callable[[SourceFile, ExtractContext], list[Launch]]
