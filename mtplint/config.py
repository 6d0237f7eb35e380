"""Configuration: ``[tool.mtplint]`` in ``pyproject.toml``, ``mtplint.toml`` or ``.mtplint.toml``.

Hierarchical, as ruff's: every file is checked with the configuration closest to it (searching
upwards from the file); in one directory ``.mtplint.toml`` beats ``mtplint.toml`` beats
``pyproject.toml`` with a ``[tool.mtplint]`` table. :class:`ConfigTree` gives each path of a run
its configuration: a file named on the command line, its closest one; in a directory walked, a
subdirectory that holds a configuration file governs everything below it (its ``exclude`` and
``respect-gitignore`` included, :func:`mtplint.discover.discover`). The files of every
configuration are linted in one run (:func:`mtplint.parallel.lint_units`), so what looks across
files -- a script's own reading dropped when a unit starts it, one finding per mistake, ``noqa``
and MTP002 -- works as in a run under one configuration. ``--config FILE`` and ``--isolated``
make one configuration (or none) hold for all. Run-wide settings (the output format) are the
first path's configuration's.

``extend = "../base.toml"`` inherits another file (its keys first, this file's keys on top). Every
file is validated against ``schemas/config.schema.json``; errors name the file and the key.
Command-line options win over every file.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from pathlib import Path

from mtplint.files import MAX_SETTINGS_BYTES, read_regular
from mtplint.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

CONFIG_NAMES = (".mtplint.toml", "mtplint.toml", "pyproject.toml")


class ConfigError(Exception):
    """A configuration file that cannot be used; the message names the file and the key."""


class ConfigFile(Record):
    """A configuration file and its ``[tool.mtplint]`` (or top-level ``mtplint.toml``) values."""

    __slots__ = ("path", "values")
    path: Path
    values: dict[str, Any]

    def __init__(self, path: Path, values: dict[str, Any]) -> None:
        self.path = path
        self.values = values


def _toml() -> Any:
    """tomllib, imported only when there is a configuration file to read (it costs start-up time)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib


def _table(path: Path) -> dict[str, Any] | None:
    try:
        # a FIFO or device named as a configuration is refused unopened (mtplint.files)
        text = read_regular(path, MAX_SETTINGS_BYTES).decode("utf-8")
    except OSError as error:
        raise ConfigError(f"{path}: cannot read configuration: {error.strerror or error}") from error
    except UnicodeDecodeError as error:  # TOML is UTF-8 only (toml.io v1.0.0, "Spec")
        found = "UTF-16 text" if error.object[:2] in (b"\xff\xfe", b"\xfe\xff") else f"byte {error.object[error.start]:#04x}"
        raise ConfigError(f"{path}: cannot read configuration: not UTF-8 ({found} at offset {error.start}); "
                          "TOML files must be UTF-8") from None
    if path.name == "pyproject.toml" and "mtplint" not in text:
        return None  # most projects' pyproject.toml: no [tool.mtplint] table, no need to parse it
    tomllib = _toml()
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from error
    except (ValueError, RecursionError) as error:  # a number past Python's digit limit; nesting too deep
        from mtplint.errors import reason

        raise ConfigError(f"{path}: invalid TOML: {reason(error)}") from None
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        table = tool.get("mtplint") if isinstance(tool, dict) else None
        return table if isinstance(table, dict) else None
    return data


def _config_in(directory: Path) -> Path | None:
    """The configuration file of one directory, if it has one (a ``pyproject.toml`` counts only
    with a ``[tool.mtplint]`` table)."""
    for name in CONFIG_NAMES:
        path = directory / name
        try:
            is_file = path.is_file()
        except OSError:  # a directory that cannot be searched (PermissionError): no configuration seen there
            continue
        if is_file and (name != "pyproject.toml" or _table(path) is not None):
            return path
    return None


def find_config(start: Path) -> Path | None:
    """The configuration file closest to ``start`` (in its directory or above)."""
    return ConfigFinder().closest(start)


class ConfigFinder:
    """:func:`find_config` for many paths of one run: each directory is looked at once (a commit's
    files share their directories and those directories' parents)."""

    def __init__(self) -> None:
        self._closest: dict[str, Path | None] = {}

    def closest(self, start: Path) -> Path | None:
        # realpath, not resolve(): a symlink loop given on the command line must not raise RuntimeError
        real = os.path.realpath(start)
        return self._in_or_above(real if os.path.isdir(real) else os.path.dirname(real))

    def _in_or_above(self, directory: str) -> Path | None:
        if directory in self._closest:
            return self._closest[directory]
        found = _config_in(Path(directory))
        if found is None:
            parent = os.path.dirname(directory)
            found = self._in_or_above(parent) if parent != directory else None
        self._closest[directory] = found
        return found


def load_config(path: Path) -> ConfigFile:
    """``path`` and the files its ``extend`` chain inherits, merged (each file's keys on top of its
    base's). The chain is followed in a loop, not by recursion: it may be as long as a user makes it."""
    chain: list[dict[str, Any]] = []
    seen: set[Path] = set()
    current: Path | None = path
    while current is not None:
        resolved = current.resolve()
        if resolved in seen:
            raise ConfigError(f"{current}: key `extend`: circular extend chain")
        seen.add(resolved)
        values, current = _own_values(current)
        chain.append(values)
    values = chain.pop()
    while chain:
        values = _over_base(chain.pop(), values)
    return ConfigFile(path, values)


def _over_base(values: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """A file's values on top of those of the file it extends."""
    merged = dict(base)
    merged.update(values)
    for key in CATALOG_KEYS:  # entries add up; this file's win over the base's with the same id
        own = values.get(key, [])
        ids = {entry["id"] for entry in own}
        merged[key] = [*own, *(entry for entry in base.get(key, []) if entry["id"] not in ids)]
    return merged


def _own_values(path: Path) -> tuple[dict[str, Any], Path | None]:
    """One configuration file's values (paths in it anchored at its folder), and the file its
    ``extend`` names (None: it extends nothing)."""
    table = _table(path)
    if table is None:
        raise ConfigError(f"{path}: no [tool.mtplint] table")
    from mtplint.checks.catalog import CatalogError, validate

    where = f"{path} [tool.mtplint]" if path.name == "pyproject.toml" else str(path)
    try:
        validate(table, "config.schema.json", where)
    except CatalogError as error:
        raise ConfigError(str(error)) from error
    _check_catalog_entries(table, where)
    values = dict(table)
    for key in ("extend-rules",):
        if key in values:
            values[key] = [str((path.parent / entry).resolve()) for entry in values[key]]
    if "per-file-ignores" in values:
        values["per-file-ignores"] = _anchored(values["per-file-ignores"], path.parent)
    if "exclude" in values:
        values["exclude"] = _anchored_excludes(values["exclude"], path.parent)
    base_path: Path | None = None
    if "extend" in values:
        base_path = (path.parent / values.pop("extend")).resolve()
        if not base_path.is_file():
            raise ConfigError(f"{path}: key `extend`: {base_path} does not exist")
    return values, base_path


def _anchored(per_file_ignores: dict[str, list[str]], directory: Path) -> dict[str, list[str]]:
    """``per-file-ignores`` with every pattern that names a directory (``deploy/*``) also anchored
    at the configuration file's directory, as ruff does: the same file is then ignored whether
    mtplint runs from the repository root or from ``deploy/`` (where its path is ``compose.yaml``).
    The patterns as written stay too (a bare ``*.sh`` matches a file's name anywhere)."""
    anchored = dict(per_file_ignores)
    for pattern, codes in per_file_ignores.items():
        if "/" in pattern and not os.path.isabs(pattern):
            anchored.setdefault(os.path.join(os.path.realpath(directory), pattern.removeprefix("./")), codes)
    return anchored


def _anchored_excludes(excludes: list[str], directory: Path) -> list[str]:
    """``exclude`` with every pattern that names a directory (``legacy/*``) also written relative to
    the working directory the walk's paths are relative to, so a nested configuration's patterns
    mean its own folders whether mtplint runs from the repository root or from beside the file."""
    anchored = list(excludes)
    here = os.path.realpath(os.getcwd())
    for pattern in excludes:
        if "/" in pattern and not os.path.isabs(pattern):
            moved = os.path.relpath(os.path.join(os.path.realpath(directory), pattern.removeprefix("./")), here)
            if moved not in anchored and not moved.startswith(".."):
                anchored.append(moved.replace(os.sep, "/"))
    return anchored


#: configuration keys holding catalog entries (``[[tool.mtplint.gpus]]``, ``[[tool.mtplint.models]]``)
CATALOG_KEYS = ("gpus", "models")


#: the largest figure a GPU or model entry may give (TOML reads ``inf``, ``nan`` and ``1e308`` as
#: numbers, which JSON Schema's ``number`` accepts; the tuner's arithmetic on them divides by zero
#: or overflows). No memory size in MiB, bandwidth in GB/s, TFLOPS or parameter count comes near it.
CATALOG_NUMBER_LIMIT = 1e15


def _check_catalog_numbers(value: Any, where: str) -> None:
    if isinstance(value, dict):
        for name, item in value.items():
            _check_catalog_numbers(item, f"{where}.{name}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_catalog_numbers(item, f"{where}.{index}")
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and not (
            math.isfinite(value) and abs(value) <= CATALOG_NUMBER_LIMIT):
        raise ConfigError(f"{where}`: {value!r} is not a finite number of at most {CATALOG_NUMBER_LIMIT:g}")


def _check_catalog_entries(table: dict[str, Any], where: str) -> None:
    """What the entry schemas cannot say: ids are unique in a file, numbers are finite and of a
    sane size, and model patterns compile."""
    for key in CATALOG_KEYS:
        seen: set[str] = set()
        for index, entry in enumerate(table.get(key, [])):
            if entry["id"] in seen:
                raise ConfigError(f"{where}: key `{key}.{index}.id`: {entry['id']!r} is defined twice")
            seen.add(entry["id"])
            _check_catalog_numbers(entry, f"{where}: key `{key}.{index}")
    for index, entry in enumerate(table.get("models", [])):
        for number, pattern in enumerate(entry["patterns"]):
            try:
                re.compile(pattern)
            except re.error as error:
                raise ConfigError(f"{where}: key `models.{index}.patterns.{number}`: {pattern!r} is not a regular "
                                  f"expression ({error})") from error
            from mtplint.user_patterns import PatternError, compile_user_pattern

            try:
                compile_user_pattern(pattern)
            except PatternError as error:
                raise ConfigError(f"{where}: key `models.{index}.patterns.{number}`: {pattern!r} cannot be matched "
                                  f"in linear time (configured patterns are matched with RE2, which has no lookaround "
                                  f"or backreferences: {error})") from error


def register_catalog(values: dict[str, Any]) -> None:
    """Make the configuration's GPUs and models (or none) part of the catalogs for this run."""
    from mtplint.user_catalog import register_user_catalog

    register_user_catalog(values.get("gpus", []), values.get("models", []))


class _Groups:
    """Configuration files met by a run, numbered in the order met (a file's *group*): the closest
    one for a path given, or the one a walked directory holds. What a group carries is the
    subclass's (:meth:`_read`)."""

    def __init__(self) -> None:
        self._finder = ConfigFinder()
        #: each group's configuration file (None: no file, defaults and the command line)
        self.files: list[Path | None] = []
        self._by_file: dict[str | None, int] = {}

    @property
    def nested(self) -> bool:
        """Whether more than one configuration was met."""
        return len(self.files) > 1

    def group_of(self, path: Path) -> int:
        """The group of a path given on the command line: its closest configuration's."""
        return self._group(self._finder.closest(path))

    def group_at(self, directory: str) -> int | None:
        """The group of a walked directory that holds a file with a configuration name: its
        configuration's, or None when it is not one (a ``pyproject.toml`` without ``[tool.mtplint]``)."""
        found = _config_in(Path(directory))
        return None if found is None else self._group(found)

    def _group(self, path: Path | None) -> int:
        key = None if path is None else os.path.realpath(path)
        group = self._by_file.get(key)
        if group is None:
            self._read(path, load_config(path).values if path is not None else {})
            group = self._by_file[key] = len(self.files)
            self.files.append(path)
        return group

    def _read(self, path: Path | None, values: dict[str, Any]) -> None:
        raise NotImplementedError


class CatalogTree(_Groups):
    """``mtplint inspect``: the groups of :class:`ConfigTree` for the parts of configuration inspect
    uses, those that decide a launch's effective settings as ``check`` sees them: the GPUs and models
    it adds, its ``gpu`` and its ``engine-versions`` (:func:`shared_settings`)."""

    def __init__(self, gpu: str | None = None, engine_versions: Sequence[str] = ()) -> None:
        super().__init__()
        #: the command line's ``--gpu`` and ``--engine-version``, on top of every configuration's
        self._gpu, self._engine_versions = gpu, engine_versions
        self._values: list[dict[str, Any]] = []
        self._settings: list[tuple[str | None, dict[str, str]]] = []

    def _read(self, path: Path | None, values: dict[str, Any]) -> None:
        # checked when the file is met (during discovery), as check's settings are
        where = str(path) if path is not None else "command line"
        self._settings.append(shared_settings(values, where, self._gpu, self._engine_versions))
        self._values.append(values)

    def walk_settings(self, group: int) -> tuple[tuple[str, ...], bool] | None:
        return None  # inspect walks with the command line's exclude patterns only, as it always has

    def activate(self, group: int) -> None:
        register_catalog(self._values[group])

    def settings(self, group: int) -> tuple[str | None, dict[str, str]]:
        """The group's GPU and engine versions, the command line's on top."""
        return self._settings[group]


def shared_settings(values: dict[str, Any], where: str, gpu: str | None,
                    engine_versions: Sequence[str]) -> tuple[str | None, dict[str, str]]:
    """What every command reads from a configuration as ``check`` does: registers its GPUs and models,
    and returns the GPU (``--gpu`` first, else the file's ``gpu``, checked against the catalog with
    them) and the engine versions (the file's ``engine-versions`` with ``--engine-version`` on top).
    ``where`` names the file in errors."""
    from mtplint.cli import _engine_versions

    register_catalog(values)
    versions = _checked_engine_versions(dict(values.get("engine-versions", {})), where)
    versions.update(_checked_engine_versions(_engine_versions(engine_versions), "--engine-version"))
    chosen = gpu or values.get("gpu")
    if chosen:
        _check_gpu(chosen, "--gpu" if gpu else f"{where}: key `gpu`")
    return chosen, versions


def command_configuration(start: Path, gpu: str | None = None,
                          engine_versions: Sequence[str] = ()) -> tuple[str | None, dict[str, str], dict[str, Any]]:
    """For a command that reads no launches (``recommend``, ``crossover``): the configuration
    closest to ``start``, as ``check`` would read it for a file there -- the GPU and engine versions
    (:func:`shared_settings`; its GPUs and models registered) and the file's values."""
    path = find_config(start)
    values = load_config(path).values if path is not None else {}
    where = "command line" if path is None else str(path)
    chosen, versions = shared_settings(values, where, gpu, engine_versions)
    return chosen, versions, values


#: engines ``engine-versions`` / ``--engine-version`` may name, and the version shapes they accept
ENGINES = ("vllm", "sglang", "llama.cpp", "vllm-mlx", "mlx-lm")
#: compiled (by ``re``'s own cache) only for a run that names engine versions: most runs name none
#: (no part of a real version has more than 18 digits; Python refuses to convert 4,300 or more)
_VERSION = r"v?[0-9]{1,18}(\.[0-9]{1,18})*([.-]?(post|rc|dev)[0-9]{0,18})?|b[0-9]{1,18}"


def _checked_engine_versions(versions: dict[str, str], where: str) -> dict[str, str]:
    for engine, version in versions.items():
        if engine not in ENGINES:
            raise ConfigError(f"{where}: key `engine-versions.{engine}`: unknown engine {engine!r} "
                              f"(one of {', '.join(ENGINES)})")
        if not re.fullmatch(_VERSION, version):
            shown = repr(version) if len(version) <= 40 else f"{version[:40]!r}… ({len(version)} characters)"
            raise ConfigError(f"{where}: key `engine-versions.{engine}`: {shown} is not a version "
                              "(e.g. 0.11.0, v0.5.9, b9180)")
    return versions


def _check_gpu(spec: str, where: str) -> None:
    """A GPU the catalog does not know would silently turn the hardware-aware rules off."""
    from mtplint.hardware import catalog, parse_gpu_spec

    gpu, _, name = parse_gpu_spec(spec)
    if gpu is None:
        import difflib

        ids = [entry.id for entry in catalog()]
        close = difflib.get_close_matches(name.lower(), ids, n=3, cutoff=0.4)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ConfigError(f"{where}: unknown GPU {name!r}{hint} (known: {', '.join(ids)}; add a count as in "
                          "rtx-4090x2)")


def _chosen_configuration(args: argparse.Namespace, start: Path) -> tuple[Path | None, dict[str, Any]]:
    """The configuration file a command uses and its values: ``--config FILE``, else the closest to
    ``start``; none with ``--isolated``."""
    if args.isolated:
        return None, {}
    path: Path | None = args.config_file or find_config(start)
    if path is None:
        return None, {}
    if not path.is_file():
        raise ConfigError(f"{path}: configuration file does not exist")
    return path, load_config(path).values


def settings_for(args: argparse.Namespace) -> tuple[Any, str]:
    """The lint settings of the run's first path (or of ``--config FILE``), and the output format.

    Unless ``--isolated`` or ``--config`` makes one configuration hold for everything, the settings
    carry a :class:`ConfigTree` (``settings.configs``) that gives every other path its own.
    The output format (like the cache directory and the root) is one per run: the first path's.
    """
    # standard input is configured as the file it stands for (which need not exist yet)
    first = getattr(args, "stdin_filename", None) or (args.paths[0] if args.paths else Path.cwd())
    path, values = _chosen_configuration(args, first)
    settings = settings_from(values, "command line" if path is None else str(path), args)
    if not args.isolated and args.config_file is None:
        settings.configs = ConfigTree(args, path, settings)
    output_format = args.output_format or values.get("output-format", "full")
    return settings, output_format


def house_rule_paths(values: dict[str, Any], args: argparse.Namespace) -> tuple[Path, ...]:
    """The house-rule files and folders of a configuration's ``extend-rules`` plus ``--extend-rules``."""
    return tuple(Path(p) for p in (*values.get("extend-rules", ()), *map(str, args.extend_rules)))


def run_catalog(args: argparse.Namespace) -> dict[str, Any]:
    """The rule catalog a ``check`` in the working directory runs with (``mtplint rules``, ``mtplint
    rule``): built-in rules and the house rules of the configuration ``check`` would find (or of
    ``--config FILE``; none with ``--isolated``) and of ``--extend-rules``."""
    from mtplint.checks.catalog import load_catalog

    _, values = _chosen_configuration(args, Path.cwd())
    return load_catalog(house_rule_paths(values, args))


def settings_from(values: dict[str, Any], where: str, args: argparse.Namespace) -> Any:
    """Lint settings from one configuration file's values (``where`` names it in errors) plus the
    command line on top: ``--select`` starts a new selection, ``--extend-select`` / ``--ignore``
    add to the file's, lists such as ``exclude`` and ``extend-rules`` add up, scalars (``gpu``,
    ``objective``) are replaced. Registers the file's GPUs and models (the GPU is checked against them).
    """
    from mtplint.checks.catalog import load_catalog
    from mtplint.checks.selection import Layer, check_selectors, resolve
    from mtplint.lint import LintSettings
    from mtplint.pipeline import Options

    gpu, engine_versions = shared_settings(values, where, args.gpu, args.engine_version)
    options = Options(
        root=Path.cwd(),
        excludes=(*values.get("exclude", ()), *args.exclude),
        respect_gitignore=not args.no_respect_gitignore and values.get("respect-gitignore", True),
        engine_versions=engine_versions,
        gpu=gpu,
    )
    extend_rules = house_rule_paths(values, args)
    catalog = load_catalog(extend_rules)
    config_layer = Layer(values.get("select"), values.get("extend-select", ()), values.get("ignore", ()))
    cli_layer = Layer(args.select, args.extend_select, args.ignore)
    for key in ("select", "extend-select", "ignore"):
        check_selectors(values.get(key) or (), catalog, f"{where}: key `{key}`")
        check_selectors(getattr(args, key.replace("-", "_")) or (), catalog, f"--{key}")
    per_file_ignores = dict(values.get("per-file-ignores", {}))
    for pattern, codes in per_file_ignores.items():
        check_selectors(codes, catalog, f"{where}: key `per-file-ignores.{pattern}`")
    return LintSettings(
        pipeline=options,
        select=[rule.code for rule in resolve(catalog, [config_layer, cli_layer])],
        per_file_ignores=per_file_ignores,
        extend_rules=extend_rules,
        objective=args.objective or values.get("objective", "latency"),
        user_gpus=list(values.get("gpus", [])),
        user_models=list(values.get("models", [])),
    )


def activate(settings: Any) -> None:
    """Make ``settings``' configuration GPUs and models the catalogs' (a run with several
    configurations switches between them as it goes from one file to the next)."""
    register_catalog({"gpus": settings.user_gpus, "models": settings.user_models})


class ConfigTree(_Groups):
    """Which configuration governs each file of a run: ruff's hierarchical configuration.

    A file given by name is linted with the configuration closest to it (upwards from its
    directory); in a directory walked, a subdirectory holding its own configuration file governs
    every file below it, its ``exclude`` and ``respect-gitignore`` included. Each configuration's
    settings are its values with the command line on top (:func:`settings_from`). Group 0 is the
    first path's configuration (``settings_for``); the others are read the first time a path
    needs them, so a run under one configuration reads no more than it always did.
    """

    def __init__(self, args: argparse.Namespace, first: Path | None, settings: Any) -> None:
        super().__init__()
        self._args = args
        #: the settings of each configuration met so far (index: the group of a candidate file)
        self.groups: list[Any] = [settings]
        self.files.append(first)
        self._by_file[None if first is None else os.path.realpath(first)] = 0

    def _read(self, path: Path | None, values: dict[str, Any]) -> None:
        self.groups.append(settings_from(values, str(path) if path is not None else "command line", self._args))

    def walk_settings(self, group: int) -> tuple[tuple[str, ...], bool]:
        """What the directory walk needs of a group: its ``exclude`` patterns and ``respect-gitignore``."""
        options = self.groups[group].pipeline
        return options.excludes, options.respect_gitignore

    def group_of_file(self, display: str, known: dict[str, int]) -> int:
        """The group of a file a finding sits in: ``known`` (the run's candidates by display name),
        else its closest configuration's (a script a unit starts, a ``--config`` YAML)."""
        group = known.get(display)
        return group if group is not None else self.group_of(Path(display))
