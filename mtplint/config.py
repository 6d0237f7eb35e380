"""Configuration: ``[tool.mtplint]`` in ``pyproject.toml``, ``mtplint.toml`` or ``.mtplint.toml``.

The closest file to the first path linted wins (searching upwards, as ruff does); in one directory
``.mtplint.toml`` beats ``mtplint.toml`` beats ``pyproject.toml`` with a ``[tool.mtplint]`` table.
``extend = "../base.toml"`` inherits another file (its keys first, this file's keys on top). Every
file is validated against ``schemas/config.schema.json``; errors name the file and the key.
Command-line options win over the file.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CONFIG_NAMES = (".mtplint.toml", "mtplint.toml", "pyproject.toml")


class ConfigError(Exception):
    """A configuration file that cannot be used; the message names the file and the key."""


@dataclass
class ConfigFile:
    path: Path
    values: dict[str, Any]


def _table(path: Path) -> dict[str, Any] | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"{path}: cannot read configuration: {error.strerror or error}") from error
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from error
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        table = tool.get("mtplint") if isinstance(tool, dict) else None
        return table if isinstance(table, dict) else None
    return data


def find_config(start: Path) -> Path | None:
    directory = start.resolve()
    if directory.is_file():
        directory = directory.parent
    for candidate in (directory, *directory.parents):
        for name in CONFIG_NAMES:
            path = candidate / name
            if path.is_file() and (name != "pyproject.toml" or _table(path) is not None):
                return path
    return None


def load_config(path: Path, _seen: tuple[Path, ...] = ()) -> ConfigFile:
    resolved = path.resolve()
    if resolved in _seen:
        raise ConfigError(f"{path}: key `extend`: circular extend chain")
    table = _table(path)
    if table is None:
        raise ConfigError(f"{path}: no [tool.mtplint] table")
    from mtplint.checks.catalog import CatalogError, validate

    try:
        validate(table, "config.schema.json", str(path))
    except CatalogError as error:
        raise ConfigError(str(error)) from error
    values = dict(table)
    for key in ("extend-rules",):
        if key in values:
            values[key] = [str((path.parent / entry).resolve()) for entry in values[key]]
    if "extend" in values:
        base_path = (path.parent / values.pop("extend")).resolve()
        if not base_path.is_file():
            raise ConfigError(f"{path}: key `extend`: {base_path} does not exist")
        base = load_config(base_path, (*_seen, resolved))
        merged = dict(base.values)
        merged.update(values)
        values = merged
    return ConfigFile(path, values)


def settings_for(args: argparse.Namespace) -> tuple[Any, str]:
    """The lint settings from configuration plus command line, and the output format."""
    from mtplint.checks.catalog import load_catalog
    from mtplint.checks.selection import check_selectors
    from mtplint.cli import _engine_versions
    from mtplint.lint import LintSettings
    from mtplint.pipeline import Options

    values: dict[str, Any] = {}
    where = "command line"
    if not args.isolated:
        path = args.config_file or find_config(args.paths[0] if args.paths else Path.cwd())
        if path is not None:
            if not path.is_file():
                raise ConfigError(f"{path}: configuration file does not exist")
            config = load_config(path)
            values = config.values
            where = str(path)
    engine_versions = dict(values.get("engine-versions", {}))
    engine_versions.update(_engine_versions(args.engine_version))
    options = Options(
        root=Path.cwd(),
        excludes=(*values.get("exclude", ()), *args.exclude),
        respect_gitignore=not args.no_respect_gitignore and values.get("respect-gitignore", True),
        engine_versions=engine_versions,
        gpu=args.gpu or values.get("gpu"),
    )
    extend_rules = tuple(Path(p) for p in (*values.get("extend-rules", ()), *map(str, args.extend_rules)))
    settings = LintSettings(
        pipeline=options,
        select=args.select if args.select is not None else values.get("select"),
        extend_select=[*values.get("extend-select", ()), *args.extend_select],
        ignore=[*values.get("ignore", ()), *args.ignore],
        per_file_ignores=dict(values.get("per-file-ignores", {})),
        extend_rules=extend_rules,
        objective=args.objective or values.get("objective", "latency"),
    )
    catalog = load_catalog(extend_rules)
    check_selectors([*(settings.select or []), *settings.extend_select, *settings.ignore], catalog, where)
    for pattern, codes in settings.per_file_ignores.items():
        check_selectors(codes, catalog, f"{where}: per-file-ignores[{pattern!r}]")
    output_format = args.output_format or values.get("output-format", "full")
    return settings, output_format
