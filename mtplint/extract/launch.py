"""What a launch is, and how an argv is recognised as one (docs/launches.md).

Extractors find candidate command lines in their files and hand each one, as positioned tokens, to
:func:`recognise`. Only an argv whose program is an engine entry point becomes a :class:`Launch`;
wrappers (``exec``, ``env``, ``nohup``, ``uv run``, ``docker run IMAGE``) are looked through, and
anything else (a benchmark client, the user's own script) is not a launch.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from functools import lru_cache

from mtplint.pathtext import join
from mtplint.records import FrozenRecord, Record
from mtplint.source import EnvEntry, SourceFile, Span, Token

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

ENGINES = ("vllm", "sglang", "llama.cpp", "vllm-mlx", "mlx-lm")


class GpuHint(Record):
    """What the deployment says about its GPUs: a product name (as written) and a count."""

    __slots__ = ("product", "count", "span", "origin")
    product: str | None
    count: int | None
    span: Span | None
    origin: str

    def __init__(self, product: str | None = None, count: int | None = None, span: Span | None = None,
                 origin: str = "explicit") -> None:
        self.product = product
        self.count = count
        self.span = span
        self.origin = origin


class VersionHint(Record):
    """Evidence of an engine version: ``spec`` is a PEP 440-style specifier (``==0.11.0``, ``>=0.10``)."""

    __slots__ = ("engine", "spec", "source", "span")
    engine: str
    spec: str
    source: str
    span: Span | None

    def __init__(self, engine: str, spec: str, source: str, span: Span | None = None) -> None:
        self.engine = engine
        self.spec = spec
        self.source = source
        self.span = span


class KwArg(Record):
    """A keyword argument of a Python API launch (``LLM(model=...)``); value is plain Python data."""

    __slots__ = ("name", "value", "span", "unresolved")
    name: str
    value: Any
    span: Span | None
    unresolved: tuple[str, ...]

    def __init__(self, name: str, value: Any, span: Span | None, unresolved: tuple[str, ...] = ()) -> None:
        self.name = name
        self.value = value
        self.span = span
        self.unresolved = unresolved


class Launch(Record):
    """One engine invocation found in a file.

    ``args`` are the words the engine's own parser receives (after the entry point); ``program``
    are the words that name the entry point (possibly synthetic, for an image's entrypoint).
    Python API launches (``vllm.LLM(...)``) have ``kwargs`` instead of ``args``.
    """

    __slots__ = ("engine", "entry", "source", "span", "program", "args", "env", "kwargs", "image", "gpu",
                 "base_dir", "version_hints", "context", "notes", "mounts", "workdir", "env_files",
                 "client_env", "env_open", "paths")
    engine: str
    entry: str
    source: SourceFile
    span: Span | None
    program: list[Token]
    args: list[Token]
    env: dict[str, EnvEntry]
    kwargs: dict[str, KwArg] | None
    image: Token | None
    gpu: GpuHint | None
    base_dir: str
    version_hints: list[VersionHint]
    context: str
    notes: list[str]
    #: bind mounts of the container the launch runs in: container path -> host path (compose
    #: ``volumes``), so that ``--config /configs/x.yaml`` is read from the file mounted there
    mounts: dict[str, str]
    #: the container's working directory (compose ``working_dir``), for relative paths it is given
    workdir: str | None
    #: ``docker run --env-file FILE`` paths as written, in order; read (relative to ``base_dir``) into
    #: ``env`` by :func:`mtplint.extract.read_docker_env_files`, below the ``-e`` flags
    env_files: list[Token]
    #: the docker client's environment, for a bare ``NAME`` line of an env file (copied from it)
    client_env: dict[str, EnvEntry]
    #: environment sources that could not be read -- ``docker run --env-file``, compose ``env_file``,
    #: systemd ``EnvironmentFile=`` missing from the checkout, its path unknown, or malformed -- each
    #: as written (``--env-file ./sglang.env``): the environment may hold any variable, so an engine
    #: setting read from a variable the launch does not set is unknown
    env_open: list[Token]
    #: when the same command of its script runs differently on other paths: the branches each path
    #: to this launch took (:mod:`mtplint.extract.shell.paths`); None: it runs this way on every path
    paths: list[tuple[str, ...]] | None

    def __init__(
        self,
        engine: str,
        entry: str,
        source: SourceFile,
        span: Span | None,
        program: list[Token],
        args: list[Token],
        env: dict[str, EnvEntry] | None = None,
        kwargs: dict[str, KwArg] | None = None,
        image: Token | None = None,
        gpu: GpuHint | None = None,
        base_dir: str | None = None,
        version_hints: list[VersionHint] | None = None,
        context: str = "",
        notes: list[str] | None = None,
        mounts: dict[str, str] | None = None,
        workdir: str | None = None,
        env_files: list[Token] | None = None,
        client_env: dict[str, EnvEntry] | None = None,
        env_open: list[Token] | None = None,
    ) -> None:
        self.engine = engine
        self.entry = entry
        self.source = source
        self.span = span
        self.program = program
        self.args = args
        self.env = env if env is not None else {}
        self.kwargs = kwargs
        self.image = image
        self.gpu = gpu
        self.base_dir = base_dir if base_dir is not None else "."
        self.version_hints = version_hints if version_hints is not None else []
        self.context = context
        self.notes = notes if notes is not None else []
        self.mounts = mounts if mounts is not None else {}
        self.workdir = workdir
        self.env_files = env_files if env_files is not None else []
        self.client_env = client_env if client_env is not None else {}
        self.env_open = env_open if env_open is not None else []
        self.paths = None

    @property
    def argv(self) -> list[Token]:
        return [*self.program, *self.args]

    def host_path(self, path: str) -> str:
        """Where the file the engine opens as ``path`` is in the checkout: through the container's
        bind mounts when one covers it, else relative to ``base_dir``."""
        inside = path if path.startswith("/") else posixpath.join(self.workdir, path) if self.workdir else None
        if inside is not None and self.mounts:
            inside = posixpath.normpath(inside)
            covering = [target for target in self.mounts if inside == target or inside.startswith(target.rstrip("/") + "/")]
            if covering:
                target = max(covering, key=len)
                rest = inside[len(target):].lstrip("/")
                return join(self.mounts[target], rest) if rest else self.mounts[target]
        return join(self.base_dir, path)


class Recognised(Record):
    __slots__ = ("engine", "entry", "program", "args", "env", "image", "docker_env", "gpu_count", "container",
                 "docker_inherit", "host_env", "docker_env_files", "docker_hidden")
    engine: str
    entry: str
    program: list[Token]
    args: list[Token]
    env: list[tuple[str, Token]]
    image: Token | None
    docker_env: list[tuple[str, Token]]
    gpu_count: int | None
    #: runs inside a container (``docker run``): the caller's environment does not reach the engine;
    #: only ``docker_env`` does, and ``docker_inherit`` (``-e NAME``: NAME copied from the caller)
    container: bool
    docker_inherit: list[tuple[str, Token]]
    #: ``env VAR=x docker run …``: the docker client's environment, seen only through ``-e NAME``
    host_env: list[tuple[str, Token]]
    #: ``--env-file FILE`` / ``--env-file=FILE``, in order (Docker reads them before the ``-e`` flags)
    docker_env_files: list[Token]
    #: ``docker run`` options that cannot be seen (``"${opts[@]}"``): they may set any variable
    docker_hidden: list[Token]

    def __init__(
        self,
        engine: str,
        entry: str,
        program: list[Token],
        args: list[Token],
        env: list[tuple[str, Token]] | None = None,
        image: Token | None = None,
        docker_env: list[tuple[str, Token]] | None = None,
        gpu_count: int | None = None,
        container: bool = False,
        docker_inherit: list[tuple[str, Token]] | None = None,
        host_env: list[tuple[str, Token]] | None = None,
        docker_env_files: list[Token] | None = None,
        docker_hidden: list[Token] | None = None,
    ) -> None:
        self.engine = engine
        self.entry = entry
        self.program = program
        self.args = args
        self.env = env if env is not None else []
        self.image = image
        self.docker_env = docker_env if docker_env is not None else []
        self.gpu_count = gpu_count
        self.container = container
        self.docker_inherit = docker_inherit if docker_inherit is not None else []
        self.host_env = host_env if host_env is not None else []
        self.docker_env_files = docker_env_files if docker_env_files is not None else []
        self.docker_hidden = docker_hidden if docker_hidden is not None else []


# --- images -------------------------------------------------------------------------------------

class ImageEntry(FrozenRecord):
    """What an engine image runs when only arguments are given (its ENTRYPOINT)."""

    __slots__ = ("engine", "entrypoint", "entry")
    engine: Final[str]
    entrypoint: Final[tuple[str, ...]]
    entry: Final[str]

    def __init__(self, engine: str, entrypoint: tuple[str, ...], entry: str) -> None:
        self.engine = engine
        self.entrypoint = entrypoint
        self.entry = entry


def _image_name(image: str) -> tuple[str, str]:
    """Split ``registry/name:tag@digest`` into (name without registry, tag)."""
    reference = image.split("@", 1)[0]
    name, tag = reference, ""
    last = reference.rsplit("/", 1)[-1]
    if ":" in last:
        name, tag = reference.rsplit(":", 1)
    for registry in ("docker.io/", "index.docker.io/"):
        if name.startswith(registry):
            name = name[len(registry):]
    return name.lower(), tag


#: vLLM's OpenAI server images (and their ROCm and CPU builds), with or without the Docker Hub owner
_VLLM_IMAGES = frozenset(f"{owner}vllm-openai{build}" for owner in ("", "vllm/") for build in ("", "-rocm", "-cpu"))


@lru_cache(maxsize=256)  # asked for each container (and again for its launch), of the same few images
def image_entry(image: str) -> ImageEntry | None:
    """The engine entrypoint of a known engine image, or ``None`` (unknown image, or no entrypoint)."""
    name, tag = _image_name(image)
    base = name.rsplit("/", 1)[-1]
    if name in _VLLM_IMAGES or name.endswith("/vllm-openai"):
        return ImageEntry("vllm", ("vllm", "serve"), f"image {name} (vllm serve)")
    if base == "llama.cpp" and (tag.startswith("server") or "server" in tag.split("-")):
        return ImageEntry("llama.cpp", ("/app/llama-server",), f"image {name}:{tag} (llama-server)")
    return None


def image_engine(image: str) -> str | None:
    """Which engine an image ships, even when it has no entrypoint (``lmsysorg/sglang``)."""
    name, _ = _image_name(image)
    entry = image_entry(image)
    if entry:
        return entry.engine
    if name.endswith("sglang") or "/sglang" in name:
        return "sglang"
    if "vllm" in name:
        return "vllm"
    if name.rsplit("/", 1)[-1] == "llama.cpp":
        return "llama.cpp"
    return None


def image_version(image: str) -> str | None:
    """The engine version an image tag states (``v0.11.0``, ``v0.5.9-cu129``, ``server-b9180``).

    Read with string methods, not regular expressions (compiling those was a tenth of a millisecond
    of a one-file run): ``\\d`` is :meth:`str.isdecimal`, and a tag's end may be before a final
    newline, as ``$`` matches there."""
    _, tag = _image_name(image)
    if not tag:
        return None
    # a llama.cpp build: `b` and 3 to 6 digits, between `-`/`_` separators or the tag's ends
    pieces = tag.replace("_", "-").split("-")
    pieces[-1] = pieces[-1].removesuffix("\n")
    for piece in pieces:
        if 4 <= len(piece) <= 7 and piece[0] == "b" and piece[1:].isdecimal():
            return piece
    # a release: [v]N.N[.N][.postN|rcN], up to a `-`/`_`/`+` suffix or the tag's end
    release = tag[1:] if tag.startswith("v") else tag
    version = release.replace("_", "-").replace("+", "-").partition("-")[0]
    if len(version) == len(release):
        version = version.removesuffix("\n")
    numbers, marker, suffix = version.partition(".post")
    if not marker:
        numbers, marker, suffix = version.partition("rc")
    parts = numbers.split(".")
    if 2 <= len(parts) <= 3 and all(part.isdecimal() for part in parts) and (not marker or suffix.isdecimal()):
        return version
    return None


#: the spec of a version hint from a floating tag: the newest known release or a later one
FLOATING = "latest"
#: tags that follow the newest build rather than name a release (the first word before `-`)
_FLOATING_TAGS = frozenset({"latest", "nightly", "dev", "main", "server", "full", "light"})


def image_floating(image: str) -> bool:
    """Whether an image's tag follows the newest build (``:latest``, ``:nightly``, ``cu130-nightly``,
    ``dev-cu13``, llama.cpp's ``server-cuda``; no tag is ``latest`` to docker), not a release. A digest pins an
    image, but to no release mtplint can name: no evidence either way."""
    if "@" in image:
        return False
    _, tag = _image_name(image)
    pieces = tag.removesuffix("\n").lower().split("-")
    if not tag:
        return True
    # `nightly-cu130`, `cu130-nightly`, `dev-cu13`, `server-cuda`; not a custom `v2-dev`
    return image_version(image) is None and (pieces[0] in _FLOATING_TAGS or pieces[-1] in ("latest", "nightly"))


def image_version_hint(engine: str, image: Token | None) -> VersionHint | None:
    """What an image says of ``engine``'s version: its release tag (``==0.30.0``, origin ``image``)
    or a floating tag (:data:`FLOATING`, origin ``tag``); None for another engine's image, a custom
    tag, a digest or an image only known at run time."""
    if image is None or not image.resolved:
        return None
    image_engine_name, version, floating = _image_reading(image.value)
    if image_engine_name != engine:
        return None
    if version:
        return VersionHint(engine, f"=={version}", "image", image.span)
    return VersionHint(engine, FLOATING, "tag", image.span) if floating else None


@lru_cache(maxsize=256)  # every launch of a tree asks, of the same few images
def _image_reading(image: str) -> tuple[str | None, str | None, bool]:
    """(:func:`image_engine`, :func:`image_version`, :func:`image_floating`) of an image."""
    version = image_version(image)
    return image_engine(image), version, not version and image_floating(image)


# --- entry points -------------------------------------------------------------------------------

#: the programs that read their arguments as a shell script (``sh -c '...'``, ``bash serve.sh``)
SHELL_PROGRAMS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "ash", "busybox"})

_MODULE_ENTRIES = {
    "vllm.entrypoints.openai.api_server": ("vllm", "python -m vllm.entrypoints.openai.api_server"),
    "sglang.launch_server": ("sglang", "python -m sglang.launch_server"),
    "mlx_lm.server": ("mlx-lm", "python -m mlx_lm.server"),
}
_PROGRAM_SUBCOMMANDS = {
    "vllm": ("serve", "vllm", "vllm serve"),
    "sglang": ("serve", "sglang", "sglang serve"),
    "vllm-mlx": ("serve", "vllm-mlx", "vllm-mlx serve"),
}
_DOCKER_VALUE_OPTIONS = {
    "--name", "-p", "--publish", "-v", "--volume", "--mount", "--network", "--net", "--ipc", "--shm-size",
    "--runtime", "--gpus", "-w", "--workdir", "-u", "--user", "--restart", "--entrypoint", "--platform",
    "--label", "-l", "--hostname", "-h", "--device", "--ulimit", "--cpus", "--memory", "-m",
    "--log-driver", "--log-opt", "--add-host", "--cap-add", "--security-opt", "--pid", "--env-file",
    "--pull", "--cidfile", "--dns", "--expose", "--group-add", "--health-cmd", "--stop-signal",
    "--tmpfs", "--uts", "--cgroupns", "--memory-swap", "--cpuset-cpus", "--init-path",
}


def _is_env_name(word: str) -> bool:
    """``[A-Za-z_][A-Za-z0-9_]*`` (string methods: no pattern to compile at start-up)."""
    return word.isascii() and word.isidentifier()


def _is_python(program: str) -> bool:
    """``python``, ``python3`` or ``python3.N``, in any directory: what the pattern
    ``^(?:.*/)?python(?:3(?:\\.\\d+)?)?$`` matches (no newline, unless a final one)."""
    program = program.removesuffix("\n")
    if "\n" in program:
        return False
    name = program.rsplit("/", 1)[-1]
    return name in ("python", "python3") or (name.startswith("python3.") and name[8:].isdecimal())


def _basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _gpus_count(value: str) -> int | None:
    if value in ("all",):
        return None
    match = re.search(r"(?:^|count=)(\d+)$", value)
    if match:
        return int(match.group(1))
    device = re.search(r"device=([\d,]+)", value)
    return len(device.group(1).split(",")) if device else None


def recognise(argv: Sequence[Token], _depth: int = 0) -> Recognised | None:
    """Find the engine entry point in ``argv``, looking through launch wrappers."""
    words = list(argv)
    env: list[tuple[str, Token]] = []
    index = 0
    while index < len(words) and _depth < 8:
        word = words[index]
        if not word.resolved and not _named_program(words, index):
            return None
        value = word.value
        name = _basename(value)
        if name in ("exec", "nohup", "time", "command", "stdbuf", "setsid", "nice", "unbuffer"):
            index += 1
            continue
        if name in ("timeout", "sudo"):
            # `timeout [options] DURATION cmd`, `sudo [-E] [-u user] cmd`
            index += 1
            while index < len(words) and words[index].value.startswith("-"):
                option = words[index].value
                index += 1
                if option in ("-s", "--signal", "-k", "--kill-after", "-u", "--user", "-g", "--group") and "=" not in option:
                    index += 1
            if name == "timeout":
                index += 1
            continue
        if name == "env":
            index += 1
            while index < len(words) and words[index].value.startswith("-"):
                index += 1
            while index < len(words):
                key, equals, rest = words[index].value.partition("=")
                if not equals or not _is_env_name(key):
                    break
                env.append((key, Token(rest, words[index].span, words[index].unresolved)))
                index += 1
            continue
        if (name in ("uv", "uvx", "pipx") and index + 1 < len(words) and words[index + 1].value == "run") or name == "uvx":
            index += 1 if name == "uvx" else 2
            while index < len(words) and words[index].value.startswith("-"):
                option = words[index].value
                index += 1
                if option in ("--with", "--python", "-p", "--from", "--project", "--directory", "--env-file"):
                    index += 1
            continue
        if name in ("docker", "podman", "nerdctl") and index + 1 < len(words):
            return _recognise_docker(words, index + 1, env, _depth)
        if name in ("apptainer", "singularity") and index + 1 < len(words) and words[index + 1].value == "exec":
            return _recognise_apptainer(words, index + 2, env, _depth)
        found = _entry_at(words, index)
        if found is None:
            return None
        engine, entry, length = found
        return Recognised(engine, entry, words[index:index + length], words[index + length:], env)
    return None


def _named_program(words: Sequence[Token], index: int) -> bool:
    """Whether a program word only partly known still names its program: its directory is unknown
    but its name is written (``"${VENV}/bin/vllm"``, ``"$SCRIPT_DIR/.venv/bin/python3"``), or it
    runs a known engine module (``"$PY" -m vllm.entrypoints.openai.api_server``: only Python takes
    ``-m`` and such a module). An unknown part is shown as written (``$VENV``, ``$(...)``)."""
    value = words[index].value
    directory, slash, name = value.rpartition("/")
    if slash and name and "$" not in name and "`" not in name and directory:
        return True
    if index + 2 < len(words) and words[index + 1].value == "-m" and words[index + 2].resolved:
        return words[index + 2].value in _MODULE_ENTRIES or words[index + 2].value == "vllm.entrypoints.cli.main"
    return False


def _entry_at(words: list[Token], index: int) -> tuple[str, str, int] | None:
    value = words[index].value
    name = _basename(value)
    following = words[index + 1].value if index + 1 < len(words) and words[index + 1].resolved else None
    if name in _PROGRAM_SUBCOMMANDS:
        subcommand, engine, entry = _PROGRAM_SUBCOMMANDS[name]
        if following == subcommand:
            return engine, entry, 2
        return None
    if name == "llama-server":
        return "llama.cpp", "llama-server", 1
    if name in ("mlx_lm.server",):
        return "mlx-lm", "mlx_lm.server", 1
    if _is_python(value) or not words[index].resolved:  # an unknown program: only with `-m MODULE`
        position = index + 1
        while position < len(words) and words[position].resolved and words[position].value in ("-u", "-O", "-B", "-E", "-s"):
            position += 1
        if position + 1 < len(words) and words[position].value == "-m" and words[position + 1].resolved:
            module = words[position + 1].value
            if module in _MODULE_ENTRIES:
                engine, entry = _MODULE_ENTRIES[module]
                return engine, entry, position + 2 - index
            if module == "vllm.entrypoints.cli.main" and position + 2 < len(words) and words[position + 2].value == "serve":
                return "vllm", "vllm serve", position + 3 - index
    return None


def _recognise_docker(words: list[Token], index: int, env: list[tuple[str, Token]], depth: int) -> Recognised | None:
    if index >= len(words) or words[index].value not in ("run", "create"):
        return None
    index += 1
    docker_env: list[tuple[str, Token]] = []
    docker_inherit: list[tuple[str, Token]] = []
    env_files: list[Token] = []
    gpu_count: int | None = None
    entrypoint: Token | None = None
    hidden: int | None = None  # where the first options that cannot be seen are (`"${opts[@]}"`, `$DOCKER_ARGS`)
    hidden_words: list[Token] = []
    while index < len(words):
        word = words[index]
        value = word.value
        if word.splat and word.unresolved:
            hidden = index if hidden is None else hidden
            hidden_words.append(word)
            index += 1
            continue
        if not value.startswith("-") or value == "-":
            break
        option, has_inline, inline = value.partition("=")
        takes_value = option in _DOCKER_VALUE_OPTIONS or option in ("-e", "--env")
        argument: Token | None = None
        if has_inline:
            argument = Token(inline, word.span, word.unresolved)
            index += 1
        elif takes_value and index + 1 < len(words):
            argument = words[index + 1]
            index += 2
        elif len(option) > 2 and option[0] == "-" and option[1] in "evp" and option[1] != "-":
            argument = Token(option[2:], word.span, word.unresolved)
            option = option[:2]
            index += 1
        else:
            index += 1
        if argument is None:
            continue
        if option in ("-e", "--env") and "=" in argument.value:
            key, _, env_value = argument.value.partition("=")
            docker_env.append((key, Token(env_value, argument.span, argument.unresolved)))
        elif option in ("-e", "--env") and argument.resolved and _is_env_name(argument.value):
            docker_inherit.append((argument.value, argument))
        elif option == "--env-file":
            env_files.append(argument)
        elif option == "--gpus":
            gpu_count = _gpus_count(argument.value.strip("\"'"))
        elif option == "--entrypoint":
            entrypoint = argument
    result: Recognised | None = None
    if hidden is not None and entrypoint is None:
        # any of the words from the hidden options on may be the image: the first that is an engine
        # image, or that is followed by an engine's own command line
        for index in range(hidden, len(words)):
            if words[index].resolved and image_entry(words[index].value) is not None:
                break
            if not words[index].value.startswith("-") and recognise(words[index + 1:], depth + 1) is not None:
                break
        else:
            return None
    if index >= len(words) or (entrypoint is not None and not words[index].resolved):
        return None
    image = words[index]
    rest = words[index + 1:]
    if entrypoint is not None:
        result = recognise([entrypoint, *rest], depth + 1)
    else:
        result = entry_for_image(image, rest)
    if result is None:
        return None
    result.image = image
    result.docker_env = docker_env
    result.docker_inherit = docker_inherit
    result.docker_env_files = env_files
    result.docker_hidden = [word for word in hidden_words if word is not image]
    result.gpu_count = gpu_count
    result.container = True
    # `env VAR=x docker run …` sets the docker client's environment, not the container's
    result.host_env = env
    return result


def _recognise_apptainer(words: list[Token], index: int, env: list[tuple[str, Token]],
                         depth: int) -> Recognised | None:
    """``apptainer exec [options] IMAGE command...`` (Singularity alike): the image is the first word
    after the options that is followed by an engine's command line. The container gets most of the
    caller's environment (unlike docker; https://apptainer.org/docs/user/main/environment_and_metadata.html),
    so the launch's environment is the script's -- unless ``--cleanenv``/``-e`` keeps it out."""
    for position in range(index, len(words)):
        if words[position].value.startswith("-"):
            continue
        found = recognise(words[position + 1:], depth + 1)
        if found is not None:
            found.image = words[position]
            found.env = [*env, *found.env]
            found.container = any(word.value in ("--cleanenv", "-e") for word in words[index:position])
            return found
    return None


def entry_for_image(image: Token, command: Sequence[Token]) -> Recognised | None:
    """A container's launch when only its command (CMD/``args``) is given.

    An engine image with an entrypoint runs that entrypoint with ``command`` appended -- also when
    ``command`` itself starts with ``vllm serve``: the container then really runs ``vllm serve vllm
    serve ...``, and the engine model reports what its parser makes of that. Other images run
    ``command`` as it is.
    """
    known = image_entry(image.value) if image.resolved else None
    if known is None:
        direct = recognise(command) if command else None
        if direct is not None:
            direct.image = image
        return direct
    program = [Token(part, image.span) for part in known.entrypoint]
    return Recognised(known.engine, known.entry, program, list(command), image=image)
