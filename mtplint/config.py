"""Configuration as a run uses it: the settings of each configuration, the command line on top.

Hierarchical, as ruff's: every file is checked with the configuration closest to it (searching
upwards from the file; :mod:`mtplint.config_files` finds and reads the files). :class:`ConfigTree`
gives each path of a run its configuration: a file named on the command line, its closest one; in
a directory walked, a subdirectory that holds a configuration file governs everything below it (its
``exclude`` and ``respect-gitignore`` included, :func:`mtplint.discover.discover`). The files of
every configuration are linted in one run (:func:`mtplint.parallel.lint_units`), so what looks
across files -- a script's own reading dropped when a unit starts it, one finding per mistake,
``noqa`` and MTP002 -- works as in a run under one configuration. ``--config FILE`` and
``--isolated`` make one configuration (or none) hold for all. Run-wide settings (the output format)
are the first path's configuration's.

The command line arrives as an :class:`Overrides` record (:func:`mtplint.arguments.overrides_from` builds it from its
arguments) and wins over every file. Each configuration's settings carry its GPU and model catalogs
(:class:`mtplint.catalogs.Catalogs`, in :attr:`mtplint.pipeline.Options.catalogs`): nothing is
switched globally when a run moves from the files of one configuration to another's.
"""

from __future__ import annotations

import os

from mtplint.catalogs import Catalogs, catalogs_of
from mtplint.checks.catalog import load_catalog
from mtplint.checks.selection import Layer, check_selectors, resolve
from mtplint.config_files import ConfigError, ConfigFinder, config_in, find_config, load_config
from mtplint.pathtext import is_file, normalized
from mtplint.records import Record
from mtplint.versions import engine_version_problem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from mtplint.checks.catalog import Rule
    from mtplint.pipeline import Options


class Overrides(Record):
    """What the command line sets on top of every configuration file. :func:`mtplint.arguments.overrides_from` builds it
    from its arguments; the defaults are a command line that sets nothing."""

    __slots__ = ("config_file", "isolated", "gpu", "engine_versions", "excludes", "respect_gitignore", "select",
                 "extend_select", "ignore", "extend_rules", "objective", "output_format")
    #: ``--config FILE``: one configuration for every path
    config_file: str | None
    #: ``--isolated``: no configuration file at all
    isolated: bool
    gpu: str | None
    #: ``--engine-version``, parsed (:func:`mtplint.versions.parse_engine_versions`)
    engine_versions: dict[str, str]
    excludes: tuple[str, ...]
    #: False with ``--no-respect-gitignore``
    respect_gitignore: bool
    #: ``--select`` (None: the configuration's selection stands)
    select: list[str] | None
    extend_select: list[str]
    ignore: list[str]
    extend_rules: tuple[str, ...]
    objective: str | None
    output_format: str | None

    def __init__(self, *, config_file: str | os.PathLike[str] | None = None, isolated: bool = False,
                 gpu: str | None = None,
                 engine_versions: Mapping[str, str] | None = None, excludes: tuple[str, ...] = (),
                 respect_gitignore: bool = True, select: list[str] | None = None,
                 extend_select: list[str] | None = None, ignore: list[str] | None = None,
                 extend_rules: tuple[str | os.PathLike[str], ...] = (), objective: str | None = None,
                 output_format: str | None = None) -> None:
        self.config_file = normalized(config_file) if config_file is not None else None
        self.isolated = isolated
        self.gpu = gpu
        self.engine_versions = dict(engine_versions or {})
        self.excludes = excludes
        self.respect_gitignore = respect_gitignore
        self.select = select
        self.extend_select = extend_select if extend_select is not None else []
        self.ignore = ignore if ignore is not None else []
        self.extend_rules = tuple(map(normalized, extend_rules))
        self.objective = objective
        self.output_format = output_format


class LintSettings(Record):
    """The settings files of one configuration are linted with (the command line on top)."""

    __slots__ = ("pipeline", "select", "extend_select", "ignore", "per_file_ignores", "extend_rules", "objective",
                 "configs")
    #: what the pipeline needs, the configuration's GPU and model catalogs included
    pipeline: Options
    select: list[str] | None
    extend_select: list[str]
    ignore: list[str]
    per_file_ignores: dict[str, list[str]]
    extend_rules: tuple[str, ...]
    objective: str
    #: the configuration of every other path of the run (None: these settings hold for all)
    configs: ConfigTree | None

    def __init__(self, pipeline: Options | None = None, select: list[str] | None = None,
                 extend_select: list[str] | None = None, ignore: list[str] | None = None,
                 per_file_ignores: dict[str, list[str]] | None = None, extend_rules: tuple[str, ...] = (),
                 objective: str = "latency", configs: ConfigTree | None = None) -> None:
        if pipeline is None:
            from mtplint.pipeline import Options  # noqa: PLC0415 - dispatch: `rules` and `rule` need no pipeline

            pipeline = Options()
        self.pipeline = pipeline
        self.select = select
        self.extend_select = extend_select if extend_select is not None else []
        self.ignore = ignore if ignore is not None else []
        self.per_file_ignores = per_file_ignores if per_file_ignores is not None else {}
        self.extend_rules = extend_rules
        self.objective = objective
        self.configs = configs

    def without_configs(self) -> LintSettings:
        """These settings on their own, without the run's other configurations (what a worker
        process is sent: the tree holds the command line)."""
        return LintSettings(self.pipeline, self.select, self.extend_select, self.ignore, self.per_file_ignores,
                            self.extend_rules, self.objective, None)


class _Groups:
    """Configuration files met by a run, numbered in the order met (a file's *group*): the closest
    one for a path given, or the one a walked directory holds. What a group carries is the
    subclass's (:meth:`_read`)."""

    def __init__(self, finder: ConfigFinder | None = None) -> None:
        self._finder = finder if finder is not None else ConfigFinder()
        #: each group's configuration file (None: no file, defaults and the command line)
        self.files: list[str | None] = []
        self._by_file: dict[str | None, int] = {}

    @property
    def nested(self) -> bool:
        """Whether more than one configuration was met."""
        return len(self.files) > 1

    def group_of(self, path: str) -> int:
        """The group of a path given on the command line: its closest configuration's."""
        return self._group(self._finder.closest(path))

    def group_at(self, directory: str) -> int | None:
        """The group of a walked directory that holds a file with a configuration name: its
        configuration's, or None when it is not one (a ``pyproject.toml`` without ``[tool.mtplint]``)."""
        found = config_in(directory)
        return None if found is None else self._group(found)

    def _group(self, path: str | None) -> int:
        key = None if path is None else os.path.realpath(path)
        group = self._by_file.get(key)
        if group is None:
            self._read(path, load_config(path).values if path is not None else {})
            group = self._by_file[key] = len(self.files)
            self.files.append(path)
        return group

    def _read(self, path: str | None, values: dict[str, Any]) -> None:
        raise NotImplementedError


class SharedSettings(Record):
    """What every command reads from a configuration as ``check`` does (:func:`shared_settings`)."""

    __slots__ = ("gpu", "engine_versions", "catalogs")
    #: ``--gpu``, else the configuration's ``gpu`` (checked against its catalogs)
    gpu: str | None
    #: the configuration's ``engine-versions`` with ``--engine-version`` on top
    engine_versions: dict[str, str]
    #: the GPU and model catalogs with the configuration's entries
    catalogs: Catalogs

    def __init__(self, gpu: str | None, engine_versions: dict[str, str], catalogs: Catalogs) -> None:
        self.gpu = gpu
        self.engine_versions = engine_versions
        self.catalogs = catalogs


class CatalogTree(_Groups):
    """``mtplint inspect``: the groups of :class:`ConfigTree` for the parts of configuration inspect
    uses, those that decide a launch's effective settings as ``check`` sees them: the GPUs and models
    it adds, its ``gpu`` and its ``engine-versions`` (:func:`shared_settings`)."""

    def __init__(self, overrides: Overrides) -> None:
        super().__init__()
        #: the command line's ``--gpu`` and ``--engine-version``, on top of every configuration's
        self._overrides = overrides
        self._settings: list[SharedSettings] = []

    def _read(self, path: str | None, values: dict[str, Any]) -> None:
        # checked when the file is met (during discovery), as check's settings are
        where = path if path is not None else "command line"
        self._settings.append(shared_settings(values, where, self._overrides))

    def walk_settings(self, group: int) -> tuple[tuple[str, ...], bool] | None:
        return None  # inspect walks with the command line's exclude patterns only, as it always has

    def settings(self, group: int) -> SharedSettings:
        """The group's GPU, engine versions and catalogs, the command line's on top."""
        return self._settings[group]


def shared_settings(values: dict[str, Any], where: str, overrides: Overrides) -> SharedSettings:
    """What every command reads from a configuration as ``check`` does: the catalogs with its GPUs
    and models, the GPU (``--gpu`` first, else the file's ``gpu``, checked against those catalogs)
    and the engine versions (the file's ``engine-versions`` with ``--engine-version`` on top).
    ``where`` names the file in errors."""
    catalogs = catalogs_of(values.get("gpus", ()), values.get("models", ()))
    versions = _checked_engine_versions(dict(values.get("engine-versions", {})), where)
    versions.update(_checked_engine_versions(dict(overrides.engine_versions), "--engine-version"))
    chosen = overrides.gpu or values.get("gpu")
    if chosen:
        _check_gpu(chosen, "--gpu" if overrides.gpu else f"{where}: key `gpu`", catalogs)
    return SharedSettings(chosen, versions, catalogs)


def command_configuration(start: str | os.PathLike[str], overrides: Overrides) -> tuple[SharedSettings, dict[str, Any]]:
    """For a command that reads no launches (``recommend``, ``crossover``): the configuration
    closest to ``start``, as ``check`` would read it for a file there -- its shared settings
    (:func:`shared_settings`) and the file's values."""
    path = find_config(start)
    values = load_config(path).values if path is not None else {}
    where = "command line" if path is None else path
    return shared_settings(values, where, overrides), values


def _checked_engine_versions(versions: dict[str, str], where: str) -> dict[str, str]:
    for engine, version in versions.items():
        problem = engine_version_problem(engine, version)
        if problem is not None:
            raise ConfigError(f"{where}: key `engine-versions.{engine}`: {problem}")
    return versions


def _check_gpu(spec: str, where: str, catalogs: Catalogs) -> None:
    """A GPU the catalog does not know would silently turn the hardware-aware rules off."""
    gpu, _, name = catalogs.parse_gpu_spec(spec)
    if gpu is None:
        ids = [entry.id for entry in catalogs.gpus()]
        close = catalogs.close_gpu_ids(name)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ConfigError(f"{where}: unknown GPU {name!r}{hint} (known: {', '.join(ids)}; add a count as in "
                          "rtx-4090x2)")


def _chosen_configuration(overrides: Overrides, start: str | os.PathLike[str],
                          finder: ConfigFinder | None = None) -> tuple[str | None, dict[str, Any]]:
    """The configuration file a command uses and its values: ``--config FILE``, else the closest to
    ``start`` (looked for with ``finder``, which remembers the directories it looked in); none with
    ``--isolated``."""
    if overrides.isolated:
        return None, {}
    path: str | None = overrides.config_file or (finder or ConfigFinder()).closest(start)
    if path is None:
        return None, {}
    if not is_file(path):
        raise ConfigError(f"{path}: configuration file does not exist")
    return path, load_config(path).values


def settings_for(overrides: Overrides, first: str | os.PathLike[str]) -> tuple[LintSettings, str]:
    """The lint settings of the run's first path ``first`` (or of ``--config FILE``), and the
    output format.

    Unless ``--isolated`` or ``--config`` makes one configuration hold for everything, the settings
    carry a :class:`ConfigTree` (``settings.configs``) that gives every other path its own.
    The output format (like the cache directory and the root) is one per run: the first path's.
    """
    # the run's configuration tree looks up the first path's configuration again (each path given
    # is grouped by it): one finder, so the directories above it are searched once
    finder = ConfigFinder()
    path, values = _chosen_configuration(overrides, first, finder)
    settings = settings_from(values, "command line" if path is None else path, overrides)
    if not overrides.isolated and overrides.config_file is None:
        settings.configs = ConfigTree(overrides, path, settings, finder)
    output_format: str = overrides.output_format or values.get("output-format", "full")
    return settings, output_format


def house_rule_paths(values: dict[str, Any], overrides: Overrides) -> tuple[str, ...]:
    """The house-rule files and folders of a configuration's ``extend-rules`` plus ``--extend-rules``."""
    return tuple(map(normalized, (*values.get("extend-rules", ()), *overrides.extend_rules)))


def run_catalog(overrides: Overrides) -> dict[str, Rule]:
    """The rule catalog a ``check`` in the working directory runs with (``mtplint rules``, ``mtplint
    rule``): built-in rules and the house rules of the configuration ``check`` would find (or of
    ``--config FILE``; none with ``--isolated``) and of ``--extend-rules``."""
    _, values = _chosen_configuration(overrides, os.getcwd())
    return load_catalog(house_rule_paths(values, overrides))


def settings_from(values: dict[str, Any], where: str, overrides: Overrides) -> LintSettings:
    """Lint settings from one configuration file's values (``where`` names it in errors) plus the
    command line on top: ``--select`` starts a new selection, ``--extend-select`` / ``--ignore``
    add to the file's, lists such as ``exclude`` and ``extend-rules`` add up, scalars (``gpu``,
    ``objective``) are replaced. The file's GPUs and models make the settings' catalogs (the GPU
    is checked against them).
    """
    from mtplint.pipeline import Options  # noqa: PLC0415 - dispatch: `rules` and `rule` need no pipeline

    shared = shared_settings(values, where, overrides)
    options = Options(
        root=os.getcwd(),
        excludes=(*values.get("exclude", ()), *overrides.excludes),
        respect_gitignore=overrides.respect_gitignore and values.get("respect-gitignore", True),
        engine_versions=shared.engine_versions,
        gpu=shared.gpu,
        catalogs=shared.catalogs,
    )
    extend_rules = house_rule_paths(values, overrides)
    catalog = load_catalog(extend_rules)
    config_layer = Layer(values.get("select"), values.get("extend-select", ()), values.get("ignore", ()))
    cli_layer = Layer(overrides.select, overrides.extend_select, overrides.ignore)
    given = {"select": overrides.select, "extend-select": overrides.extend_select, "ignore": overrides.ignore}
    for key, selectors in given.items():
        check_selectors(values.get(key) or (), catalog, f"{where}: key `{key}`")
        check_selectors(selectors or (), catalog, f"--{key}")
    per_file_ignores = dict(values.get("per-file-ignores", {}))
    for pattern, codes in per_file_ignores.items():
        check_selectors(codes, catalog, f"{where}: key `per-file-ignores.{pattern}`")
    return LintSettings(
        pipeline=options,
        select=[rule.code for rule in resolve(catalog, [config_layer, cli_layer])],
        per_file_ignores=per_file_ignores,
        extend_rules=extend_rules,
        objective=overrides.objective or values.get("objective", "latency"),
    )


class ConfigTree(_Groups):
    """Which configuration governs each file of a run: ruff's hierarchical configuration.

    A file given by name is linted with the configuration closest to it (upwards from its
    directory); in a directory walked, a subdirectory holding its own configuration file governs
    every file below it, its ``exclude`` and ``respect-gitignore`` included. Each configuration's
    settings are its values with the command line on top (:func:`settings_from`). Group 0 is the
    first path's configuration (``settings_for``); the others are read the first time a path
    needs them, so a run under one configuration reads no more than it always did.
    """

    def __init__(self, overrides: Overrides, first: str | None, settings: LintSettings,
                 finder: ConfigFinder | None = None) -> None:
        super().__init__(finder)
        self._overrides = overrides
        #: the settings of each configuration met so far (index: the group of a candidate file)
        self.groups: list[LintSettings] = [settings]
        self.files.append(first)
        self._by_file[None if first is None else os.path.realpath(first)] = 0

    def _read(self, path: str | None, values: dict[str, Any]) -> None:
        self.groups.append(settings_from(values, path if path is not None else "command line", self._overrides))

    def walk_settings(self, group: int) -> tuple[tuple[str, ...], bool]:
        """What the directory walk needs of a group: its ``exclude`` patterns and ``respect-gitignore``."""
        options = self.groups[group].pipeline
        return options.excludes, options.respect_gitignore

    def group_of_file(self, display: str, known: dict[str, int]) -> int:
        """The group of a file a finding sits in: ``known`` (the run's candidates by display name),
        else its closest configuration's (a script a unit starts, a ``--config`` YAML)."""
        group = known.get(display)
        return group if group is not None else self.group_of(normalized(display))
