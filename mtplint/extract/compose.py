"""docker compose files: one launch per service whose container runs an engine.

What a service's container runs, as ``docker compose`` (compose-go v2, checked against
``docker compose config`` v2.40.3 in tests/test_extract_compose_conformance.py) works it out:

* Files: ``compose.yaml`` (or ``compose.yml``, ``docker-compose.yml``, ``docker-compose.yaml``: the
  first that exists) is merged with the first existing ``compose.override.yml``,
  ``compose.override.yaml``, ``docker-compose.override.yml``, ``docker-compose.override.yaml`` next
  to it (compose-go ``cli.DefaultFileNames`` / ``DefaultOverrideFileNames``). Later files replace
  ``image``/``command``/``entrypoint`` and merge ``environment`` by key and append ``env_file``;
  ``!reset`` removes a value, ``!override`` replaces instead of merging. ``extends`` is followed.
* Interpolation (:mod:`mtplint.extract.interpolate`) with the ``.env`` of the project directory (the
  first file's directory) applies to every value before use; the process environment is never read.
* The container's argv is ``entrypoint + command``; without an ``entrypoint`` the image's own
  entrypoint runs (``vllm/vllm-openai`` -> ``vllm serve``, llama.cpp ``server`` images ->
  ``llama-server``, :func:`mtplint.extract.launch.entry_for_image`). A string ``command`` is split into
  words the way compose-go does it (go-shellwords, :func:`split_command`; no shell runs, and it is
  not POSIX: a backslash-newline is an argument); ``sh -c SCRIPT`` runs the script, interpreted by
  :func:`mtplint.extract.shell.launches.script_commands`.
* The environment is ``env_file`` entries (later files win), then ``environment`` on top. A
  variable given without a value (``- KEY`` / ``KEY:``) takes its value from the project
  environment (``.env``; the shell of whoever runs compose wins over it, so one missing from
  ``.env`` is unresolved). ``env_file`` values are interpolated with the project environment
  first, then the file's own earlier keys (compose-go ``dotenv.ParseWithLookup``).
* GPUs: ``deploy.resources.reservations.devices`` (``count``, ``device_ids``), ``gpus:``, or the
  legacy ``runtime: nvidia`` with ``NVIDIA_VISIBLE_DEVICES``. A GPU *model* never comes from here.

A service merged from several files is reported once per run, from whichever of its files is
read first; its launch points at the file its command token comes from.
"""

from __future__ import annotations

import re
from collections import ChainMap
from collections.abc import Iterator, Mapping

from mtplint.digests import DigestSet
from mtplint.extract import ExtractContext, FileLoader, Malformed, build_launch
from mtplint.extract.budget import ExpansionBudget
from mtplint.extract.interpolate import (
    Hole,
    Interpolated,
    InterpolationError,
    holes_in,
    interpolate,
    names_of,
)
from mtplint.extract.launch import GpuHint, Launch, Recognised, entry_for_image, image_entry, recognise
from mtplint.extract.yamlfiles import compose_root, is_compose, parse
from mtplint.extract.yamlpos import YNode
from mtplint.pathtext import join, parent_dir, path_name
from mtplint.records import Record
from mtplint.source import EnvEntry, MappedText, SourceFile, Span, Token

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mtplint.extract.compose_build import BuiltImage

#: compose-go cli.DefaultFileNames / DefaultOverrideFileNames, in the order compose tries them
DEFAULT_FILE_NAMES = ("compose.yaml", "compose.yml", "docker-compose.yml", "docker-compose.yaml")
DEFAULT_OVERRIDE_NAMES = ("compose.override.yml", "compose.override.yaml",
                          "docker-compose.override.yml", "docker-compose.override.yaml")

#: programs whose ``-c`` argument is a script
_SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh", "ksh"})
#: scalar tags compose does not take as strings (YAML 1.1 resolution, as PyYAML gives them)
_NOT_STRINGS = frozenset({"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"})
#: keys whose value a later file replaces (compose-go override merge)
_REPLACED = ("image", "command", "entrypoint", "runtime", "gpus", "working_dir", "build")

#: the key, in a run's loader's memos, of the services (and MTP001s) already reported in the run,
#: so an override pair is reported once: each by its files' real paths and its name, NUL-joined,
#: in a :class:`mtplint.digests.DigestSet` (a large tree's services would be thousands of tuples
#: of path strings held to the run's end: the benchmark's mixed 100k tree, 3,610 and ~1 MB)
_REPORTED = "compose.reported"


class _PartnerError(Exception):
    """A problem in another file of the project (override, ``extends`` target)."""

    def __init__(self, source: SourceFile, message: str, offset: int) -> None:
        super().__init__(message)
        self.source = source
        self.offset = offset


# --- the YAML dispatcher's protocol --------------------------------------------------------------

def claims(documents: list[YNode]) -> bool:
    """A top-level mapping whose ``services`` maps names to mappings (:func:`mtplint.extract.yamlfiles.is_compose`)."""
    return is_compose(documents)


def extract(source: SourceFile, ctx: ExtractContext) -> list[Launch]:
    """A file named like a compose file (``compose*.y*ml``, ``docker-compose*.y*ml``)."""
    documents = parse(source)
    for document in documents:
        if not document.is_map:
            raise Malformed("compose file: the top level must be a mapping", document.start)
        services = document.get("services")
        if services is not None and not (services.is_map or services.is_null):
            raise Malformed("compose file: 'services' must be a mapping", services.start)
    return extract_documents(source, documents, ctx)


def extract_documents(source: SourceFile, documents: list[YNode], ctx: ExtractContext) -> list[Launch]:
    root = next((document for document in documents if compose_root(document)), None)
    if root is None:
        return []
    try:
        project = _Project.open(source, root, ctx)
        return project.launches()
    except _PartnerError as error:
        _report_once(ctx, error.source, str(error), error.offset)
        return []


def resolve_services(source: SourceFile, ctx: ExtractContext) -> list[ComposeService]:
    """Every service of the project ``source`` belongs to, merged and interpolated as compose
    would (``docker compose config``), whether or not it runs an engine."""
    root = next((document for document in parse(source) if compose_root(document)), None)
    if root is None:
        return []
    project = _Project.open(source, root, ctx)
    return [_ServiceLaunches(project, service).resolved() for service in project.services().values()]


def _report_once(ctx: ExtractContext, source: SourceFile, message: str, offset: int) -> None:
    seen: DigestSet = ctx.loader.memos.setdefault(_REPORTED, DigestSet())
    key = f"MTP001\0{source.display}\0{offset}"
    if key in seen:
        ctx.loader.reported_earlier = True
    else:
        seen.add(key)
        ctx.issues.add("MTP001", message, source.span(offset, offset + 1))


# --- files and services --------------------------------------------------------------------------

class _File(Record):
    __slots__ = ("source", "root")
    source: SourceFile
    root: YNode

    def __init__(self, source: SourceFile, root: YNode) -> None:
        self.source = source
        self.root = root

    @property
    def directory(self) -> str:
        return parent_dir(self.source.path)


class _At(Record):
    """A YAML node and the file it sits in."""

    __slots__ = ("node", "file")
    node: YNode
    file: _File

    def __init__(self, node: YNode, file: _File) -> None:
        self.node = node
        self.file = file


class _Service(Record):
    """A service after merging its files and ``extends`` chain."""

    __slots__ = ("name", "key", "fields", "environment", "env_files", "volumes", "devices")
    name: str
    key: _At
    fields: dict[str, _At]
    environment: list[_At]
    env_files: list[_At]
    volumes: list[_At]
    devices: _At | None

    def __init__(self, name: str, key: _At, fields: dict[str, _At] | None = None, environment: list[_At] | None = None,
                 env_files: list[_At] | None = None, volumes: list[_At] | None = None,
                 devices: _At | None = None) -> None:
        self.name = name
        self.key = key
        self.fields = fields if fields is not None else {}
        self.environment = environment if environment is not None else []
        self.env_files = env_files if env_files is not None else []
        self.volumes = volumes if volumes is not None else []
        self.devices = devices


def _project_files(path: str, loader: FileLoader) -> list[str]:
    """The files ``docker compose`` run in this directory would load, when ``path`` is one of them."""
    directory, name = parent_dir(path), path_name(path)
    if not loader.is_file(path):
        return [path]
    base = loader.first_file(directory, DEFAULT_FILE_NAMES)
    override = loader.first_file(directory, DEFAULT_OVERRIDE_NAMES)
    if base is None or override is None or name not in (base, override):
        return [path]
    return [join(directory, base), join(directory, override)]


class _Project:
    def __init__(self, ctx: ExtractContext, current: SourceFile, files: list[_File],
                 variables: dict[str, Token]) -> None:
        self.ctx = ctx
        #: the file being extracted: its problems are MTP001 on it, a partner's stop the extraction
        self.current = current
        self.files = files
        self.variables = variables
        #: what interpolation may still produce in this project's files (mtplint.extract.budget)
        self.budget = ExpansionBudget()
        self.directory = files[0].directory
        #: every file read for this project (compose files, ``extends`` targets), by display name
        self.sources = {f.source.display: f.source for f in files}

    # -- loading ----------------------------------------------------------------------------------
    @classmethod
    def open(cls, source: SourceFile, root: YNode, ctx: ExtractContext) -> _Project:
        files: list[_File] = []
        for path in _project_files(source.path, ctx.loader):
            if path_name(path) == path_name(source.path):
                files.append(_File(source, root))
                continue
            partner = _load(ctx, path)
            if partner is not None:
                files.append(partner)
        variables: dict[str, Token] = {}
        if ctx.loader.is_file(source.path):
            dotenv = ctx.loader.load(join(files[0].directory, ".env"))
            if dotenv is not None:
                from mtplint.extract.dotenv import parse_env_file  # noqa: PLC0415 - only a project with a .env

                variables = dict(parse_env_file(dotenv))
        return cls(ctx, source, files, variables)

    # -- merging ------------------------------------------------------------------------------------
    def services(self) -> dict[str, _Service]:
        merged: dict[str, _Service] = {}
        for compose_file in self.files:
            services = compose_file.root.get("services")
            if services is None or not services.is_map:
                continue
            for name, key, node in services.entries():
                if not node.is_map:
                    continue
                service = merged.get(name)
                if service is None:
                    service = merged[name] = _Service(name, _At(key, compose_file))
                for layer in self._extends_chain(compose_file, node, set()):
                    _merge(service, layer)
        return merged

    def _extends_chain(self, compose_file: _File, node: YNode, seen: set[tuple[str, int]]) -> list[_At]:
        """The layers of a service: what it ``extends`` (recursively), then itself."""
        marker = (compose_file.source.display, node.start)
        if marker in seen:
            raise self.fail(compose_file.source, "compose file: 'extends' cycle", node.start)
        seen = {*seen, marker}
        extends = node.get("extends")
        if extends is None:
            return [_At(node, compose_file)]
        target_file = compose_file
        if extends.is_scalar:
            target_name = self.text(_At(extends, compose_file)).text.text
        else:
            service_node = extends.get("service")
            if service_node is None or not service_node.is_scalar:
                return [_At(node, compose_file)]
            target_name = self.text(_At(service_node, compose_file)).text.text
            file_node = extends.get("file")
            if file_node is not None and file_node.is_scalar:
                relative = self.text(_At(file_node, compose_file)).text.text
                loaded = _load(self.ctx, join(compose_file.directory, relative))
                if loaded is None:
                    return [_At(node, compose_file)]
                self.sources.setdefault(loaded.source.display, loaded.source)
                target_file = loaded
        services = target_file.root.get("services")
        target = services.get(target_name) if services is not None and services.is_map else None
        if target is None or not target.is_map:
            return [_At(node, compose_file)]
        return [*self._extends_chain(target_file, target, seen), _At(node, compose_file)]

    # -- values -------------------------------------------------------------------------------------
    def text(self, at: _At) -> Interpolated:
        if at.node.text is None:
            return Interpolated(MappedText.synthetic("", at.file.source, at.node.start))
        return self.interpolate(at.node.text, at.file.source)

    def interpolate(self, text: MappedText, source: SourceFile, variables: Mapping[str, Token] | None = None
                     ) -> Interpolated:
        try:
            return interpolate(text, self.variables if variables is None else variables, self.budget)
        except InterpolationError as error:
            raise self.fail(source, f"compose file: {error}", error.offset) from error

    def source_of(self, span: Span | None) -> SourceFile | None:
        """The project file a span lies in (launches point at the file their command comes from)."""
        if span is None:
            return None
        return self.sources.get(span.file)

    def fail(self, source: SourceFile, message: str, offset: int) -> Exception:
        """The exception for a problem at ``offset`` of ``source``."""
        if source is self.current:
            return Malformed(message, offset)
        return _PartnerError(source, message, offset)

    # -- launches -----------------------------------------------------------------------------------
    def launches(self) -> list[Launch]:
        reported: DigestSet = self.ctx.loader.memos.setdefault(_REPORTED, DigestSet())
        loader = self.ctx.loader
        identity = tuple(loader.real_path(f.source.path) if loader.exists(f.source.path) else f.source.display
                         for f in self.files)
        result: list[Launch] = []
        for name, service in self.services().items():
            key = "\0".join((*identity, name))
            if key in reported:
                loader.reported_earlier = True
                continue
            found = _ServiceLaunches(self, service).launches()
            if found:
                reported.add(key)
                result.extend(found)
        if len(self.files) > 1:
            related = self.ctx.related.setdefault(self.current.display, [])
            related.extend(f.source.display for f in self.files if f.source is not self.current)
        return result


def _load(ctx: ExtractContext, path: str) -> _File | None:
    source = ctx.loader.load(path)
    if source is None:
        return None
    try:
        documents = parse(source)
    except Malformed as error:
        raise _PartnerError(source, str(error), error.offset) from error
    root = next((document for document in documents if compose_root(document)), None)
    if root is None:
        root = next((document for document in documents if document.is_map), None)
    return _File(source, root) if root is not None else None


def _merge(service: _Service, layer: _At) -> None:
    """Apply one file's (or ``extends`` base's) definition of a service on top of what came before."""
    for key, _, value in layer.node.entries():
        at = _At(value, layer.file)
        reset = value.tag == "!reset"
        if key in _REPLACED:
            if reset or value.is_null:
                service.fields.pop(key, None)
            else:
                service.fields[key] = at
        elif key == "environment":
            if reset or value.tag == "!override":
                service.environment.clear()
            if not reset:
                service.environment.append(at)
        elif key == "env_file":
            if reset or value.tag == "!override":
                service.env_files.clear()
            if not reset:
                service.env_files.append(at)
        elif key == "volumes":  # merged by target: a later file's mount of the same target wins
            if reset or value.tag == "!override":
                service.volumes.clear()
            if not reset:
                service.volumes.append(at)
        elif key == "deploy" and value.is_map:
            devices = _path(value, "resources", "reservations", "devices")
            if devices is not None:
                service.devices = None if devices.tag == "!reset" else _At(devices, layer.file)


def _path(node: YNode, *keys: str) -> YNode | None:
    current: YNode | None = node
    for key in keys:
        if current is None or not current.is_map:
            return None
        current = current.get(key)
    return current


# --- one service -----------------------------------------------------------------------------------

class _Word(Record):
    """One argv word from the compose file, before recognition."""

    __slots__ = ("text", "unresolved", "splat")
    text: MappedText
    unresolved: tuple[str, ...]
    splat: bool

    def __init__(self, text: MappedText, unresolved: tuple[str, ...] = (), splat: bool = False) -> None:
        self.text = text
        self.unresolved = unresolved
        self.splat = splat

    def token(self) -> Token:
        return Token.from_mapped(self.text, self.unresolved, self.splat)


class _StageWord(_Word):
    """A word of a built service's Dockerfile ENTRYPOINT/CMD, as the Dockerfile's extraction reads it."""

    __slots__ = ("read",)
    read: Token

    def __init__(self, read: Token, text: MappedText) -> None:
        super().__init__(text, read.unresolved, read.splat)
        self.read = read

    def token(self) -> Token:
        return self.read


class ComposeService(Record):
    """A service as compose resolves it (merged, interpolated): what its container is given."""

    __slots__ = ("name", "image", "entrypoint", "command", "environment", "gpu")
    name: str
    image: Token | None
    #: ``None`` when not set (the image's own entrypoint / command apply)
    entrypoint: list[Token] | None
    command: list[Token] | None
    environment: dict[str, EnvEntry]
    gpu: GpuHint | None

    def __init__(self, name: str, image: Token | None, entrypoint: list[Token] | None, command: list[Token] | None,
                 environment: dict[str, EnvEntry], gpu: GpuHint | None) -> None:
        self.name = name
        self.image = image
        self.entrypoint = entrypoint
        self.command = command
        self.environment = environment
        self.gpu = gpu


class _ServiceLaunches:
    def __init__(self, project: _Project, service: _Service) -> None:
        self.project = project
        self.service = service
        self.holes: list[Hole] = []
        self.notes: list[str] = []
        #: env_file entries not read (see :attr:`Launch.env_open`)
        self.env_open: list[Token] = []
        fields = service.fields
        self.image = self._image(fields.get("image"))
        #: the Dockerfile a service without ``image`` is built from
        self.built = self._built(fields.get("build")) if self.image is None else None
        self.entrypoint = self._words(fields.get("entrypoint"))
        self.command = self._words(fields.get("command"))
        self.env = self._environment()
        self.gpu = self._gpu(self.env)

    def resolved(self) -> ComposeService:
        def tokens(words: list[_Word] | None) -> list[Token] | None:
            return None if words is None else [word.token() for word in words]

        return ComposeService(self.service.name, self.image, tokens(self.entrypoint), tokens(self.command),
                              self.env, self.gpu)

    def launches(self) -> list[Launch]:
        image, entrypoint, command, env, gpu = self.image, self.entrypoint, self.command or [], self.env, self.gpu
        if self.built is not None:
            image, entrypoint, command = self._built_command()
        argv = [*(entrypoint or []), *command]
        if entrypoint is not None or image is None or not _image_has_entry(image):
            shell = _shell_script(argv)
            if shell is not None:
                return self._script_launches(*shell, env, gpu, image)
        if entrypoint is not None:
            recognised = recognise([word.token() for word in argv])
            if recognised is not None:
                recognised.image = image
        elif image is not None:
            recognised = entry_for_image(image, [word.token() for word in command])
        else:
            recognised = recognise([word.token() for word in command])
        if recognised is None:
            return []
        first = argv[0].text if argv else None
        span = first.span() if first is not None and first.text else None
        return [self._launch(recognised, env, gpu, span, self.project.source_of(span))]

    def _launch(self, recognised: Recognised, env: dict[str, EnvEntry], gpu: GpuHint | None,
                span: Span | None, source: SourceFile | None) -> Launch:
        key = self.service.key
        if span is None or source is None:
            span, source = key.node.span(), key.file.source
        launch = build_launch(recognised, source, base_dir=self.project.directory,
                              context=f"service {self.service.name}", env=env, gpu=gpu, span=span)
        launch.mounts = self._bind_mounts()
        launch.workdir = self._scalar(self.service.fields.get("working_dir"))
        for name in names_of(self.holes):
            launch.notes.append(f"compose variable {name} has no value in .env and no default "
                                "(docker compose would substitute an empty string): left unresolved")
        launch.notes.extend(self.notes)
        launch.env_open.extend(self.env_open)
        if self.built is not None:
            launch.version_hints.extend(self.built.pins)
            self.project.ctx.related.setdefault(key.file.source.display, []).append(self.built.dockerfile.display)
        return launch

    # -- build ------------------------------------------------------------------------------------
    def _built(self, at: _At | None) -> BuiltImage | None:
        """``build: DIR`` or ``build: {context, dockerfile, args, target}``; None for a remote
        context, ``dockerfile_inline`` or a path with an unset variable."""
        if at is None or at.node.is_null:
            return None
        node = at.node
        context: str | None
        dockerfile: str | None
        target: str | None
        args: dict[str, Token]
        if node.is_scalar:
            context, dockerfile, target, args = self._scalar(at), "Dockerfile", None, {}
        elif node.is_map:
            if node.get("dockerfile_inline") is not None:
                return None
            field = node.get("context")
            context = self._scalar(_At(field, at.file)) if field is not None else "."
            field = node.get("dockerfile")
            dockerfile = self._scalar(_At(field, at.file)) if field is not None else "Dockerfile"
            field = node.get("target")
            target = self._scalar(_At(field, at.file)) if field is not None else None
            field = node.get("args")
            args = self._build_args(_At(field, at.file)) if field is not None else {}
        else:
            return None
        if not context or not dockerfile or "://" in context or context.startswith(("git@", "github.com/")):
            return None
        from mtplint.extract.compose_build import built_image  # noqa: PLC0415 - reads Dockerfiles: only a build section

        return built_image(join(at.file.directory, context), dockerfile, args, target, self.project.ctx, at.file.directory)

    def _build_args(self, at: _At) -> dict[str, Token]:
        """``build.args`` as a map or a list of ``NAME=value``. A ``NAME`` without a value comes
        from the environment of whoever runs compose (the project's ``.env`` here, else unknown); a
        value with an unset variable is unknown (so is what the Dockerfile builds with it)."""
        args: dict[str, Token] = {}
        entries: list[tuple[str, _At | None, YNode]] = []
        if at.node.is_map:
            entries = [(name, None if value.is_null else _At(value, at.file), value)
                       for name, _key, value in at.node.entries()]
        elif at.node.is_seq:
            for item in at.node.items:
                if not item.is_scalar or item.is_null:
                    continue
                text = self._scalar(_At(item, at.file))
                name, has_value, value = (item.str if text is None else text).partition("=")
                if text is None:  # an unset variable in the value
                    args[name] = Token("", item.span(), (name,))
                elif has_value:
                    args[name] = Token(value, item.span())
                else:
                    entries.append((name, None, item))
        for name, value_at, node in entries:
            if value_at is None:
                args[name] = self._from_project(name, node.span()).value
                continue
            text = self._scalar(value_at)
            args[name] = Token(text, node.span()) if text is not None else Token("", node.span(), (name,))
        return args

    def _built_command(self) -> tuple[Token | None, list[_Word] | None, list[_Word]]:
        """The image, entrypoint and command of a built service: the service's own ``entrypoint``
        / ``command`` replace the stage's (an ``entrypoint`` also drops the stage's CMD, as
        compose does); a stage without ENTRYPOINT keeps its base image's."""
        from mtplint.extract.compose_build import stage_words  # noqa: PLC0415 - only a service with a build section

        assert self.built is not None
        stage = self.built.stage
        entrypoint, command = self.entrypoint, self.command
        if entrypoint is None:
            stage_entry = stage_words(stage.entrypoint)
            entrypoint = None if stage_entry is None else [_StageWord(*word) for word in stage_entry]
            if command is None:
                stage_cmd = stage_words(stage.cmd)
                command = None if stage_cmd is None else [_StageWord(*word) for word in stage_cmd]
        return self.built.base_image, entrypoint, command or []

    # -- image, command ---------------------------------------------------------------------------
    def _image(self, at: _At | None) -> Token | None:
        if at is None or not at.node.is_scalar:
            return None
        interpolated = self.project.text(at)
        self.holes.extend(interpolated.holes)
        return interpolated.token()

    def _words(self, at: _At | None) -> list[_Word] | None:
        """``command``/``entrypoint`` as words; ``None`` when not given."""
        if at is None or at.node.is_null:
            return None
        node = at.node
        if node.is_seq:
            words: list[_Word] = []
            for item in node.items:
                if not item.is_scalar or item.tag in _NOT_STRINGS:
                    # compose: "services.NAME.command.0 must be a string" (quote numbers in a list)
                    raise self.project.fail(at.file.source, "compose file: command items must be strings", item.start)
                interpolated = self.project.text(_At(item, at.file))
                self.holes.extend(interpolated.holes)
                words.append(_Word(interpolated.text, interpolated.unresolved))
            return words
        if not node.is_scalar:
            raise self.project.fail(at.file.source, "compose file: command must be a string or a list", node.start)
        interpolated = self.project.text(at)
        self.holes.extend(interpolated.holes)
        try:
            split = split_command(interpolated.text)
        except CommandSyntaxError as error:
            offset = interpolated.text.offsets[min(error.index, len(interpolated.text))]
            raise self.project.fail(at.file.source, f"compose file: {error}", offset) from error
        if any(_escaped_newline(word) for word in split):
            self.notes.append("a backslash at the end of a line in a string command is not a line continuation for "
                              "compose: the engine receives an argument holding a newline (use a list, or drop the "
                              "backslashes)")
        holes = interpolated.holes
        if not holes:  # nothing unresolved: no word's span needs looking at
            return [_Word(word) for word in split]
        result: list[_Word] = []
        for word in split:
            names = holes_in(word.span(), holes)
            result.append(_Word(word, names, bool(names) and _only_hole(word, holes)))
        return result

    def _script_launches(self, script: _Word, positional: list[_Word], env: dict[str, EnvEntry],
                         gpu: GpuHint | None, image: Token | None) -> list[Launch]:
        """Launches started by ``sh -c SCRIPT``: the script sees the container's environment."""
        if script.unresolved and not script.text.text:
            return []
        from mtplint.extract.shell.launches import script_commands  # noqa: PLC0415 - the shell interpreter: only `sh -c`

        arguments = [word.token() for word in positional]
        try:
            commands = script_commands(script.text, env, self.project.directory, positional=arguments)
        except Malformed as error:
            source = script.text.source or self.service.key.file.source
            raise self.project.fail(source, f"compose file: shell script: {error}", error.offset) from error
        launches: list[Launch] = []
        for command in commands:
            argv = [_mark(token, self.holes) for token in command.argv]
            recognised = recognise(argv)
            if recognised is None:
                continue
            recognised.image = image
            command_env = {name: EnvEntry(entry.name, _mark(entry.value, self.holes), entry.span, entry.origin)
                           for name, entry in command.env.items()}
            # the engine's first word (`vllm` of `exec vllm serve`), else the command's
            span = (recognised.program[0].span if recognised.program else None) or command.span
            launches.append(self._launch(recognised, command_env, gpu, span, self.project.source_of(span)))
        return launches

    # -- environment --------------------------------------------------------------------------------
    # -- files the container sees ---------------------------------------------------------------
    def _scalar(self, at: _At | None) -> str | None:
        if at is None or not at.node.is_scalar or at.node.is_null:
            return None
        if "$" not in at.node.str:  # nothing to interpolate: the text as written (no positions needed)
            return at.node.str
        interpolated = self.project.text(at)
        return None if interpolated.unresolved else interpolated.text.text

    def _bind_mounts(self) -> dict[str, str]:
        """``volumes`` that bind a host path (``./configs:/configs:ro``, or the long form with
        ``type: bind``): container path -> host path, relative host paths from the compose file's
        directory. Named volumes and paths with unset variables or ``~`` map to nothing readable."""
        mounts: dict[str, str] = {}
        for at in self.service.volumes:
            if not at.node.is_seq:
                continue
            for item in at.node.items:
                source: str | None = None
                target: str | None = None
                if item.is_scalar:
                    text = self._scalar(_At(item, at.file))
                    parts = text.split(":") if text else []
                    if len(parts) >= 2 and parts[0].startswith((".", "/")):
                        source, target = parts[0], parts[1]
                elif item.is_map:
                    kind, source, target = (self._scalar(_At(node, at.file)) if node is not None else None
                                            for node in (item.get("type"), item.get("source"), item.get("target")))
                    if kind != "bind":
                        source = None
                if source and target and target.startswith("/"):
                    mounts[target.rstrip("/") or "/"] = join(at.file.directory, source)
        return mounts

    def _environment(self) -> dict[str, EnvEntry]:
        explicit: dict[str, EnvEntry] = {}
        for at in self.service.environment:
            explicit.update(self._environment_section(at))
        env: dict[str, EnvEntry] = {}
        for at in self.service.env_files:
            for path_at, required in self._env_file_paths(at):
                env.update(self._env_file(path_at, required, explicit))
        env.update(explicit)
        return env

    def _env_file_paths(self, at: _At) -> Iterator[tuple[_At, bool]]:
        node = at.node
        items = node.items if node.is_seq else [node]
        for item in items:
            if item.is_scalar and not item.is_null:
                yield _At(item, at.file), True
            elif item.is_map and (path := item.get("path")) is not None and path.is_scalar:
                required = item.get("required")
                yield _At(path, at.file), not (required is not None and required.python() is False)

    def _env_file(self, at: _At, required: bool, explicit: dict[str, EnvEntry]) -> dict[str, EnvEntry]:
        interpolated = self.project.text(at)
        written = Token(f"env_file {interpolated.text.text}", at.node.span(), interpolated.unresolved)
        if interpolated.unresolved:
            self.holes.extend(interpolated.holes)
            self.notes.append(f"env_file {interpolated.text.text!r} depends on unset variables: not read")
            self.env_open.append(written)
            return {}
        path = join(at.file.directory, interpolated.text.text)
        source = self.project.ctx.loader.load(path)
        if source is None:
            # not in the checkout (often kept out of git, secrets beside settings): on the server it
            # may set anything
            if required:
                self.notes.append(f"env_file {interpolated.text.text!r} not found in the checkout (docker compose "
                                  "refuses to start without it): its variables are unknown")
            self.env_open.append(written)
            return {}
        from mtplint.extract.dotenv import parse_env_file  # noqa: PLC0415 - only a service's env_file

        display = self.project.ctx.related.setdefault(self.service.key.file.source.display, [])
        if source.display not in display:
            display.append(source.display)
        entries: dict[str, EnvEntry] = {}
        own: dict[str, Token] = {}
        for name, token in parse_env_file(source):
            value = self._env_file_value(source, name, token, explicit, own)
            own[name] = value
            entries[name] = EnvEntry(name, value, token.span, "explicit")
        return entries

    def _env_file_value(self, source: SourceFile, name: str, token: Token, explicit: dict[str, EnvEntry],
                        own: dict[str, Token]) -> Token:
        """Re-read a value of an ``env_file`` with compose's lookup order, which parse_env_file (the
        file's own earlier keys only) does not know: the project environment (``.env``) first, then
        the service's ``environment``, then the file's earlier keys (docker compose config v2.40.3,
        see the env-file fixture)."""
        span = token.span
        if span is None:
            return token
        raw = source.text[span.start:span.end]
        bare = token.unresolved == (name,) and raw == name  # a bare `KEY` line
        if not bare and "$" not in raw:  # (most values) nothing to look up
            return token
        service_env = {key: entry.value for key, entry in explicit.items()}
        lookup: ChainMap[str, Token] = ChainMap(self.project.variables, service_env, own)
        if bare:
            known = lookup.get(name)
            return Token(known.value, span, known.unresolved) if known is not None else token
        quote = source.text[span.start - 1] if span.start > 0 else ""
        if quote == "'" or (quote == '"' and "\\" in raw):
            return token
        interpolated = self.project.interpolate(MappedText.of_range(source, span.start, span.end), source, lookup)
        return Token(interpolated.text.text, span, interpolated.unresolved)

    def _environment_section(self, at: _At) -> dict[str, EnvEntry]:
        node = at.node
        entries: dict[str, EnvEntry] = {}
        if node.is_map:
            for name, key_node, value in node.entries():
                if value.is_null:
                    entries[name] = self._from_project(name, key_node.span())
                elif value.is_scalar and value.tag in _NOT_STRINGS:
                    entries[name] = EnvEntry(name, Token(_go_number(value), value.span()), key_node.span())
                elif value.is_scalar:
                    interpolated = self.project.text(_At(value, at.file))
                    self.holes.extend(interpolated.holes)
                    entries[name] = EnvEntry(name, interpolated.token(), key_node.span())
        elif node.is_seq:
            for item in node.items:
                if not item.is_scalar or item.is_null:
                    continue
                interpolated = self.project.text(_At(item, at.file))
                self.holes.extend(interpolated.holes)
                text = interpolated.text
                name, equals, _ = text.text.partition("=")
                if not equals:
                    entries[name] = self._from_project(name, item.span())
                    continue
                value_text = text.slice(len(name) + 1)
                value_span = value_text.span() if value_text.text else item.span()
                names = holes_in(value_span, interpolated.holes) if value_text.text else ()
                entries[name] = EnvEntry(name, Token(value_text.text, value_span, names), item.span())
        return entries

    def _from_project(self, name: str, span: Span) -> EnvEntry:
        """``KEY`` without a value: the project environment's value (``.env``), else unknown."""
        known = self.project.variables.get(name)
        if known is not None:
            return EnvEntry(name, Token(known.value, known.span, known.unresolved), span)
        return EnvEntry(name, Token(f"${{{name}}}", span, (name,)), span)

    # -- GPUs -------------------------------------------------------------------------------------
    def _gpu(self, env: dict[str, EnvEntry]) -> GpuHint | None:
        devices = self.service.devices
        if devices is not None and devices.node.is_seq:
            hint = self._device_requests(devices)
            if hint is not None:
                return hint
        gpus = self.service.fields.get("gpus")
        if gpus is not None:
            if gpus.node.is_seq:
                hint = self._device_requests(gpus)
                if hint is not None:
                    return hint
            return GpuHint(count=None, span=gpus.node.span())
        visible = env.get("NVIDIA_VISIBLE_DEVICES")
        runtime = self.service.fields.get("runtime")
        if visible is not None and (runtime is not None or visible.value.resolved):
            return GpuHint(count=_visible_count(visible.value), span=visible.span)
        if runtime is not None and self.project.text(runtime).text.text == "nvidia":
            # The NVIDIA CUDA images set NVIDIA_VISIBLE_DEVICES=all: every GPU, count unknown.
            return GpuHint(count=None, span=runtime.node.span())
        return None

    def _device_requests(self, at: _At) -> GpuHint | None:
        total: int | None = 0
        span: Span | None = None
        found = False
        for item in at.node.items:
            if not item.is_map or not _is_gpu_request(item):
                continue
            found = True
            count_node, ids_node = item.get("count"), item.get("device_ids")
            if ids_node is not None and ids_node.is_seq:
                span = span or ids_node.span()
                total = None if total is None else total + len(ids_node.items)
            elif count_node is not None and count_node.is_scalar:
                span = span or count_node.span()
                value = self.project.text(_At(count_node, at.file))
                count = value.text.text.strip()
                # `count: all` reserves every GPU of the host (compose spec, deploy): count unknown.
                total = total + int(count) if total is not None and count.isdigit() and not value.unresolved else None
            else:
                span = span or item.span()
                total = None  # neither count nor device_ids: every GPU (compose spec, deploy)
        if not found:
            return None
        return GpuHint(count=total, span=span or at.node.span())


class CommandSyntaxError(Exception):
    """A string ``command`` compose refuses ("invalid command line string"); ``index`` into the text."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index


#: the characters :func:`split_command` reads as more than a character of the current word
_COMMAND_SPECIAL = re.compile(r"[\\ \t\r\n`()\"';&|<>]")


def split_command(text: MappedText) -> list[MappedText]:
    """Split a string ``command``/``entrypoint`` into words as compose does.

    compose-go decodes a string command with mattn/go-shellwords ``Parse`` (no environment, no
    backticks), which is not a POSIX shell: a backslash escapes any character, inside double quotes
    too, so a backslash-newline (a "continuation" in a ``|`` block) becomes a word holding a newline;
    an unquoted ``; & | < >`` ends the command (a digit-only word before ``>`` is dropped); ``$(``
    ... ``)`` stays literal; a ``(`` elsewhere, or an unclosed quote, is an error. Checked against
    ``docker compose config`` v2.40.3 (tests/test_extract_compose_conformance.py).
    """
    raw = text.text
    words: list[MappedText] = []
    blanks = [match.start() for match in _COMMAND_SPECIAL.finditer(raw)]
    if all(raw[blank] in " \t\r\n" for blank in blanks):
        # nothing but blanks to act on (no quote, escape or operator: most commands): the words
        # are the runs between them, as they are written
        start = 0
        for end in [*blanks, len(raw)]:
            if end > start:
                words.append(text.slice(start, end))
            start = end + 1
        return words
    # the current word as the indices of the characters it keeps (quotes and escapes dropped): one
    # MappedText per word, not one per character joined pairwise
    picked: list[int] = []
    started = False
    single = double = backquote = dollar = escaped = False
    length = len(raw)
    index = 0
    while index < length:
        if not escaped:
            # a run of characters none of the rules below look at is kept whole, in any state
            stop = _COMMAND_SPECIAL.search(raw, index)
            run_end = length if stop is None else stop.start()
            if run_end > index:
                picked.extend(range(index, run_end))
                started = True
                index = run_end
                continue
        char = raw[index]
        if escaped:
            escaped = False
            # inside `...` or $(...) the backslash is kept with the character
            if backquote or dollar:
                picked.append(index - 1)
            picked.append(index)
            started = True
            index += 1
            continue
        if char == "\\":
            if single:
                picked.append(index)
            else:
                escaped = True
            index += 1
            continue
        if char in " \t\r\n":
            if single or double or backquote or dollar:
                picked.append(index)
            elif started:
                words.append(_word(text, picked, index))
                picked, started = [], False
            index += 1
            continue
        unquoted = not (single or double or backquote or dollar)
        if char == "`" and not (single or double or dollar):
            backquote = not backquote
        elif char == ")" and not (single or double or backquote):
            if not dollar:
                raise CommandSyntaxError("invalid command line string: unmatched ')'", index)
            dollar = False
        elif char == "(" and not (single or double or backquote):
            if dollar or not (picked and raw[picked[-1]] == "$"):
                raise CommandSyntaxError("invalid command line string: '(' outside '$('", index)
            dollar = True
        elif char == '"' and not (single or dollar or backquote):
            started = started or double
            double = not double
            index += 1
            continue
        elif char == "'" and not (double or dollar or backquote):
            started = started or single
            single = not single
            index += 1
            continue
        elif char in ";&|<>" and unquoted:
            if char == ">" and picked and all(raw[i].isdigit() for i in picked):
                started = False  # `2>file`: the descriptor number is not a word
            break
        picked.append(index)
        started = True
        index += 1
    else:
        if escaped or single or double or backquote or dollar:
            raise CommandSyntaxError("invalid command line string: unclosed quote or escape", len(raw))
    if started:
        words.append(_word(text, picked, len(raw)))
    return words


def _word(text: MappedText, picked: list[int], at: int) -> MappedText:
    """The characters ``picked`` of ``text`` as one word, each at its offset; the end of the word is
    just past its last character (an empty word: at ``at``)."""
    if not picked:
        return text.slice(at, at)
    raw, offsets = text.text, text.offsets
    after = picked[-1] + 1
    tail = offsets[after] if after < len(raw) else offsets[-1]
    return MappedText("".join([raw[index] for index in picked]), [*[offsets[index] for index in picked], tail],
                      text.source)


def _go_number(node: YNode) -> str:
    """A YAML number as compose writes it into the environment (Go formatting: ``0.90`` -> ``0.9``,
    ``010`` -> ``8``, ``1.0e3`` -> ``1000``; docker compose config v2.40.3)."""
    value = node.python()
    if isinstance(value, bool) or not isinstance(value, int | float):
        return node.str
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    return str(value)


def _is_gpu_request(item: YNode) -> bool:
    capabilities = item.get("capabilities")
    driver = item.get("driver")
    if capabilities is not None and capabilities.is_seq:
        return any(cap.is_scalar and cap.str == "gpu" for cap in capabilities.items)
    return driver is not None and driver.is_scalar and driver.str == "nvidia"


def _visible_count(value: Token) -> int | None:
    """``NVIDIA_VISIBLE_DEVICES`` (nvidia-container-toolkit): ``all``, ``none``/``void``, or ids."""
    if not value.resolved:
        return None
    text = value.value.strip()
    if text in ("", "none", "void"):
        return 0
    if text == "all":
        return None
    return len([part for part in text.split(",") if part.strip()])


def _image_has_entry(image: Token) -> bool:
    """Does the image's own entrypoint run (rather than a shell named in ``command``)?"""
    return image.resolved and image_entry(image.value) is not None


def _shell_script(words: list[_Word]) -> tuple[_Word, list[_Word]] | None:
    """The script of ``sh -c SCRIPT [NAME ARGS...]`` / ``bash -lc ...`` / ``/bin/sh -e -c ...``, and
    the script's positional parameters (``$1``... = ARGS; ``$0`` = NAME is not among them)."""
    if not words or words[0].unresolved or words[0].text.text.rsplit("/", 1)[-1] not in _SHELLS:
        return None
    index = 1
    while index < len(words):
        option = words[index].text.text
        if not option.startswith("-") or option == "-" or words[index].unresolved:
            return None
        if not option.startswith("--") and "c" in option[1:]:
            if index + 1 >= len(words):
                return None
            return words[index + 1], words[index + 3:]
        index += 1
    return None


def _escaped_newline(word: MappedText) -> bool:
    source = word.source
    if source is None or "\n" not in word.text:  # most words: no newline to look behind
        return False
    return any(char == "\n" and word.offsets[index] > 0 and source.text[word.offsets[index] - 1] == "\\"
               for index, char in enumerate(word.text))


def _only_hole(word: MappedText, holes: list[Hole]) -> bool:
    """A word made only of an unresolved expansion written unquoted: it may be any number of words."""
    source = word.source
    if source is None or not word.text:
        return False
    offsets = word.offsets[: len(word.text)]
    for hole in holes:
        if all(hole.start <= offset < hole.end for offset in offsets):
            before = source.text[hole.start - 1] if hole.start > 0 else ""
            return before not in ("'", '"')
    return False


def _mark(token: Token, holes: list[Hole]) -> Token:
    """A token cut from text that held an unresolved compose expansion is unresolved too."""
    names = holes_in(token.span, holes)
    if not names:
        return token
    return Token(token.value, token.span, tuple(dict.fromkeys([*token.unresolved, *names])), token.splat)

