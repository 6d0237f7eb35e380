"""The edit builders are a layer below the fix loop (issue 23).

Rules build their fixes with :mod:`mtplint.edits`; :mod:`mtplint.fix` applies, re-lints, verifies
and writes them by running lint again. An edit builder that imported the fix loop, the run or a
report would put lint under every rule that offers a fix; a rule importing the fix loop would do
the same from the other side. libcst, slow to import, must stay behind the one module that places
Python edits. Every import statement counts, those inside functions and ``TYPE_CHECKING`` blocks too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mtplint"
#: what runs above the rules: lint and its per-file run, the fix loop, reports, the command line
ABOVE_THE_RULES = ("mtplint.fix", "mtplint.lint", "mtplint.parallel", "mtplint.pipeline", "mtplint.cache",
                   "mtplint.report", "mtplint.cli", "mtplint.tuner")


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports (absolute names; ``from a import b`` counts ``a`` and ``a.b``)."""
    package = list(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # ``from .x import y`` in package ``a.b``: ``a.b.x`` (``..``: ``a.x``)
                base = ".".join([*package[:len(package) - node.level + 1], *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _below(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


EDIT_MODULES = sorted([*(PACKAGE / "edits").glob("*.py"), PACKAGE / "textpos.py"])
RULE_MODULES = sorted((PACKAGE / "checks").glob("mtp*.py"))


@pytest.mark.parametrize("path", EDIT_MODULES, ids=lambda path: path.name)
def test_an_edit_builder_imports_nothing_that_runs_lint(path: Path) -> None:
    assert sorted(name for name in _imports(path) if _below(name, ABOVE_THE_RULES)) == []


@pytest.mark.parametrize("path", RULE_MODULES, ids=lambda path: path.name)
def test_a_rule_builds_its_fix_without_the_fix_loop(path: Path) -> None:
    assert sorted(name for name in _imports(path) if _below(name, ("mtplint.fix",))) == []


def test_the_rules_build_their_fixes_with_the_edit_builders() -> None:
    """The check above is not vacuous: the rules that offer fixes do import the builders."""
    users = [path.name for path in RULE_MODULES if any(_below(name, ("mtplint.edits",)) for name in _imports(path))]
    assert len(users) >= 10, users


def test_libcst_is_imported_by_the_python_edit_placer_alone() -> None:
    importers = sorted(str(path.relative_to(PACKAGE.parent)) for path in PACKAGE.rglob("*.py")
                       if any(_below(name, ("libcst",)) for name in _imports(path)))
    assert importers == ["mtplint/edits/pycst.py"]
