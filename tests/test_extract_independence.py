"""The extract stage reads files into launches without the engine models: extract/ imports nothing
from engines/ (which imports extract/ for its launches), at module level or inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

import mtplint

PACKAGE = Path(mtplint.__file__).parent


def _imported_modules(path: Path) -> list[tuple[int, str]]:
    """Every module an ``import`` or ``from ... import`` of the file names, with its line."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            # ``from mtplint import engines`` names the package through the imported name
            found.extend((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)
    return found


def test_no_extract_module_imports_an_engine_module() -> None:
    modules = sorted((PACKAGE / "extract").rglob("*.py"))
    assert len(modules) > 10  # the walk reaches the extractors
    offending = [f"{path.relative_to(PACKAGE)}:{line} imports {name}"
                 for path in modules for line, name in _imported_modules(path)
                 if name == "mtplint.engines" or name.startswith("mtplint.engines.")]
    assert offending == []


def test_the_walk_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    module = tmp_path / "late.py"
    module.write_text("def f():\n    from mtplint.engines.llamacpp import find_option\n    return find_option\n",
                      encoding="utf-8")
    assert _imported_modules(module) == [(2, "mtplint.engines.llamacpp.find_option")]
