"""Stage 2 of the pipeline: extract launches from classified files.

One module per source kind. Each exposes ``extract(source, ctx) -> list[Launch]`` and raises
:class:`Malformed` for input it cannot read (reported as MTP001 with the location). YAML-based kinds
share one parse (see :mod:`mtplint.extract.yamlfiles`).
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from mtplint.extract.launch import GpuHint, Launch, Recognised, VersionHint, image_engine, image_version
from mtplint.source import EnvEntry, Issues, SourceFile, Span, Token

MAX_FILE_BYTES = 8 * 1024 * 1024


class Malformed(Exception):
    """Input that cannot be parsed; becomes an MTP001 finding at ``offset``."""

    def __init__(self, message: str, offset: int = 0) -> None:
        super().__init__(message)
        self.offset = offset


_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF8, "utf-8"),
         (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


def decode_with_encoding(data: bytes) -> tuple[str, str, bytes]:
    """(text, encoding, BOM): UTF-8, or UTF-8/16/32 with a BOM. The BOM is not part of the text,
    so offsets count from the first real character; raises ``UnicodeDecodeError``."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data[len(bom):].decode(encoding), encoding, bom
    return data.decode("utf-8"), "utf-8", b""


def decode(data: bytes) -> str:
    """Decode file bytes as the engines would read them (see :func:`decode_with_encoding`)."""
    return decode_with_encoding(data)[0]


class FileLoader:
    """Reads and caches files as :class:`SourceFile`; paths are shown relative to ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._cache: dict[Path, SourceFile | None] = {}
        self.cwd = Path.cwd().resolve()
        # one loader is one run's view of the files: a path resolves (and shows) the same way for
        # as long as it lives, and resolving is a system call per path component
        self._keys: dict[Path, Path] = {}
        self._directories: dict[Path, Path] = {}
        self._displays: dict[Path, str] = {}

    def display(self, path: Path) -> str:
        shown = self._displays.get(path)
        if shown is None:
            shown = self._displays[path] = self._display(path)
        return shown

    def _display(self, path: Path) -> str:
        # realpath, not resolve(): a symlink loop must be shown, not raise RuntimeError
        resolved = Path(os.path.realpath(path if path.is_absolute() else self.cwd / path))
        for base in (self.cwd, self.root):
            try:
                return resolved.relative_to(base).as_posix()
            except ValueError:
                continue
        return path.as_posix()

    def _key(self, path: Path) -> Path:
        key = self._keys.get(path)
        if key is None:
            key = self._keys[path] = self._resolved(path) if path.exists() else path
        return key

    def _resolved(self, path: Path) -> Path:
        """``path.resolve()``, with each directory resolved once for the loader's life: a tree's
        files share a few hundred directories, and resolving costs a system call per component,
        so a file that is not a symlink itself costs one ``lstat`` once its directory is known."""
        if path.name in ("", ".", "..") or path.is_symlink():
            return path.resolve()
        directory = self._directories.get(path.parent)
        if directory is None:
            directory = self._directories[path.parent] = path.parent.resolve()
        return directory / path.name

    def load(self, path: Path) -> SourceFile | None:
        """The file's text, or ``None`` when it does not exist or is not text."""
        key = self._key(path)
        if key in self._cache:
            return self._cache[key]
        source: SourceFile | None = None
        try:
            if path.is_file() and path.stat().st_size <= MAX_FILE_BYTES:
                data = path.read_bytes()
                if b"\x00" not in data[:8192] or data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
                    text, encoding, bom = decode_with_encoding(data)
                    # digest=None: sha256 of these bytes, computed if a fix or the cache asks
                    source = SourceFile(path, self.display(path), text, encoding, bom, None)
        except (OSError, UnicodeDecodeError):
            source = None
        self._cache[key] = source
        return source

    def peek(self, path: Path) -> SourceFile | None:
        """The file's text if it was already read or seeded with :meth:`put` (a fix's new text),
        without touching the disk."""
        return self._cache.get(self._key(path))

    def by_display(self, display: str) -> SourceFile | None:
        """A file already read, by the name findings show for it."""
        for source in self._cache.values():
            if source is not None and source.display == display:
                return source
        return None

    def put(self, source: SourceFile) -> None:
        self._cache[self._key(source.path)] = source


class ExtractContext:
    """What an extractor may use besides its own file: the run's files, where diagnostics go, and
    ``related``: the extra files a launch depends on (``.env``, ``env_file``, a started script), shown
    by ``inspect``. (A plain class, not a dataclass: this module is on every run's start-up path.)"""

    __slots__ = ("issues", "loader", "related")

    def __init__(self, loader: FileLoader, issues: Issues | None = None,
                 related: dict[str, list[str]] | None = None) -> None:
        self.loader = loader
        self.issues = Issues() if issues is None else issues
        self.related: dict[str, list[str]] = {} if related is None else related

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
    base_dir: Path,
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
    hints: list[VersionHint] = []
    if recognised.image is not None and recognised.image.resolved:
        engine = image_engine(recognised.image.value)
        version = image_version(recognised.image.value)
        if engine == recognised.engine and version:
            hints.append(VersionHint(engine, f"=={version}", "image", recognised.image.span))
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
    return launch


def load_host_file(raw: str, base_dir: Path, loader: FileLoader) -> SourceFile | None:
    """The file a launch names on its host, as the checkout has it: relative to ``base_dir``; an
    absolute path as given, then by its name next to the file (the checkout rarely mirrors ``/etc``)."""
    path = Path(raw)
    for candidate in ([path, base_dir / path.name] if path.is_absolute() else [base_dir / path]):
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
    from mtplint.extract.dotenv import DockerEnvFileError, parse_docker_env_file

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
