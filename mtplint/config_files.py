"""Configuration files: ``[tool.mtplint]`` in ``pyproject.toml``, ``mtplint.toml`` or ``.mtplint.toml``.

Finding the file closest to a path, reading it, validating it against
``schemas/config.schema.json`` (errors name the file and the key) and following its ``extend``
chain. What a run makes of the values -- settings per configuration, the command line on top -- is
:mod:`mtplint.config`'s. This module is light on purpose: a pre-commit run over files that hold no
launch asks only whether a configuration governs them (:class:`ConfigFinder`), without loading the
pipeline or the rule catalog.
"""

from __future__ import annotations

import os
import re
import stat
import sys

from mtplint.errors import reason
from mtplint.files import MAX_SETTINGS_BYTES, read_regular
from mtplint.pathtext import is_file, join, normalized, parent_dir, path_name, real_directory, resolved_path
from mtplint.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CONFIG_NAMES = (".mtplint.toml", "mtplint.toml", "pyproject.toml")


class ConfigError(Exception):
    """A configuration file that cannot be used; the message names the file and the key."""


class ConfigFile(Record):
    """A configuration file and its ``[tool.mtplint]`` (or top-level ``mtplint.toml``) values."""

    __slots__ = ("path", "values")
    path: str
    values: dict[str, Any]

    def __init__(self, path: str, values: dict[str, Any]) -> None:
        self.path = path
        self.values = values


def _toml() -> Any:
    """tomllib, imported only when there is a configuration file to read (it costs start-up time)."""
    if sys.version_info >= (3, 11):
        import tomllib  # noqa: PLC0415 - only when a configuration file exists
    else:  # pragma: no cover
        import tomli as tomllib  # noqa: PLC0415 - only when a configuration file exists
    return tomllib


def _table(path: str) -> dict[str, Any] | None:
    try:
        # a FIFO or device named as a configuration is refused unopened (mtplint.files)
        text = read_regular(path, MAX_SETTINGS_BYTES).decode("utf-8")
    except OSError as error:
        raise ConfigError(f"{path}: cannot read configuration: {error.strerror or error}") from error
    except UnicodeDecodeError as error:  # TOML is UTF-8 only (toml.io v1.0.0, "Spec")
        found = "UTF-16 text" if error.object[:2] in (b"\xff\xfe", b"\xfe\xff") else f"byte {error.object[error.start]:#04x}"
        raise ConfigError(f"{path}: cannot read configuration: not UTF-8 ({found} at offset {error.start}); "
                          "TOML files must be UTF-8") from None
    if path_name(path) == "pyproject.toml" and "mtplint" not in text:
        return None  # most projects' pyproject.toml: no [tool.mtplint] table, no need to parse it
    tomllib = _toml()
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from error
    except (ValueError, RecursionError) as error:  # a number past Python's digit limit; nesting too deep
        raise ConfigError(f"{path}: invalid TOML: {reason(error)}") from None
    if path_name(path) == "pyproject.toml":
        tool = data.get("tool", {})
        table = tool.get("mtplint") if isinstance(tool, dict) else None
        return table if isinstance(table, dict) else None
    return data


def config_in(directory: str) -> str | None:
    """The configuration file of one directory, if it has one (a ``pyproject.toml`` counts only
    with a ``[tool.mtplint]`` table)."""
    for name in CONFIG_NAMES:
        # a stat per name, no path object: every run asks each directory from the first path's up to "/"
        try:
            is_file = stat.S_ISREG(os.stat(os.path.join(directory, name)).st_mode)
        except OSError:  # not there, or a directory that cannot be searched: no configuration seen there
            continue
        if is_file and (name != "pyproject.toml" or _table(join(directory, name)) is not None):
            return join(directory, name)
    return None


def find_config(start: str | os.PathLike[str]) -> str | None:
    """The configuration file closest to ``start`` (in its directory or above)."""
    return ConfigFinder().closest(start)


#: the folders whose real paths :class:`ConfigFinder` holds before it forgets them
REAL_DIRECTORIES_HELD = 256


class ConfigFinder:
    """:func:`find_config` for many paths of one run: each directory is looked at once (a commit's
    files share their directories and those directories' parents)."""

    def __init__(self) -> None:
        self._closest: dict[str, str | None] = {}
        #: directory as given -> its real path: ``os.path.realpath`` asks the file system once per
        #: folder of a path, and the files given (a fix's batch: hundreds) share their folders. Of
        #: :data:`REAL_DIRECTORIES_HELD` at most: the files come a folder at a time, and thousands
        #: of folders held to the end of a large run's verification would add to its peak
        self._real_directories: dict[str, str | None] = {}

    def closest(self, start: str | os.PathLike[str]) -> str | None:
        path = os.fspath(start)
        directory, name = os.path.split(path)
        if directory and name not in ("", ".", ".."):
            try:
                mode = os.lstat(path).st_mode
            except (OSError, ValueError):
                mode = None
            if mode is not None and not stat.S_ISLNK(mode):
                # not a link itself: its real path is its folder's, and its name
                real_folder = self._real_directory(directory)
                return self._in_or_above(os.path.join(real_folder, name) if stat.S_ISDIR(mode) else real_folder)
        # realpath, not resolve(): a symlink loop given on the command line must not raise RuntimeError
        real = os.path.realpath(start)
        return self._in_or_above(real if os.path.isdir(real) else os.path.dirname(real))

    def _real_directory(self, directory: str) -> str:
        """``os.path.realpath(directory)``, through its parent's when it is a folder, not a link
        (:func:`mtplint.pathtext.real_directory`)."""
        real = real_directory(directory, self._real_directories) or os.path.realpath(directory)
        if len(self._real_directories) > REAL_DIRECTORIES_HELD:
            self._real_directories.clear()
        return real

    def _in_or_above(self, directory: str) -> str | None:
        if directory in self._closest:
            return self._closest[directory]
        found = config_in(directory)
        if found is None:
            parent = os.path.dirname(directory)
            found = self._in_or_above(parent) if parent != directory else None
        self._closest[directory] = found
        return found


def load_config(given: str | os.PathLike[str]) -> ConfigFile:
    """``path`` and the files its ``extend`` chain inherits, merged (each file's keys on top of its
    base's). The chain is followed in a loop, not by recursion: it may be as long as a user makes it."""
    path = normalized(given)
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    current: str | None = path
    while current is not None:
        resolved = resolved_path(current)
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


def _own_values(path: str) -> tuple[dict[str, Any], str | None]:
    """One configuration file's values (paths in it anchored at its folder), and the file its
    ``extend`` names (None: it extends nothing)."""
    table = _table(path)
    if table is None:
        raise ConfigError(f"{path}: no [tool.mtplint] table")
    # the schema check loads jsonschema and the rule catalog's module: only for a file that exists
    from mtplint.checks.catalog import CatalogError, validate  # noqa: PLC0415 - only when a configuration file exists

    where = f"{path} [tool.mtplint]" if path_name(path) == "pyproject.toml" else path
    try:
        validate(table, "config.schema.json", where)
    except CatalogError as error:
        raise ConfigError(str(error)) from error
    _check_catalog_entries(table, where)
    values = dict(table)
    for key in ("extend-rules",):
        if key in values:
            values[key] = [resolved_path(join(parent_dir(path), entry)) for entry in values[key]]
    if "per-file-ignores" in values:
        values["per-file-ignores"] = _anchored(values["per-file-ignores"], parent_dir(path))
    if "exclude" in values:
        values["exclude"] = _anchored_excludes(values["exclude"], parent_dir(path))
    base_path: str | None = None
    if "extend" in values:
        base_path = resolved_path(join(parent_dir(path), values.pop("extend")))
        if not is_file(base_path):
            raise ConfigError(f"{path}: key `extend`: {base_path} does not exist")
    return values, base_path


def _anchored(per_file_ignores: dict[str, list[str]], directory: str) -> dict[str, list[str]]:
    """``per-file-ignores`` with every pattern that names a directory (``deploy/*``) also anchored
    at the configuration file's directory, as ruff does: the same file is then ignored whether
    mtplint runs from the repository root or from ``deploy/`` (where its path is ``compose.yaml``).
    The patterns as written stay too (a bare ``*.sh`` matches a file's name anywhere)."""
    anchored = dict(per_file_ignores)
    for pattern, codes in per_file_ignores.items():
        if "/" in pattern and not os.path.isabs(pattern):
            anchored.setdefault(os.path.join(os.path.realpath(directory), pattern.removeprefix("./")), codes)
    return anchored


def _anchored_excludes(excludes: list[str], directory: str) -> list[str]:
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
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and not abs(value) <= CATALOG_NUMBER_LIMIT:
        # also for nan (no comparison holds) and inf
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
        from mtplint.user_patterns import PatternError, compile_user_pattern  # noqa: PLC0415 - RE2: only for configured model patterns

        for number, pattern in enumerate(entry["patterns"]):
            try:
                re.compile(pattern)
            except re.error as error:
                raise ConfigError(f"{where}: key `models.{index}.patterns.{number}`: {pattern!r} is not a regular "
                                  f"expression ({error})") from error
            try:
                compile_user_pattern(pattern)
            except PatternError as error:
                raise ConfigError(f"{where}: key `models.{index}.patterns.{number}`: {pattern!r} cannot be matched "
                                  f"in linear time (configured patterns are matched with RE2, which has no lookaround "
                                  f"or backreferences: {error})") from error
