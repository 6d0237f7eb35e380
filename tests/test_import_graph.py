"""The import graph of ``mtplint/`` has no cycle.

Every ``import`` and ``from ... import`` in every module counts, at the top of a file or inside a
function, a method or a branch: an import inside a function still makes its module depend on the
one it names, it only runs later. Imports under ``if TYPE_CHECKING:`` do not count: they never run
and name types only. Dynamic lookups (``importlib.import_module``, ``__import__`` of a computed
name: a rule's check, an engine, an extractor) are not edges of this graph.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "mtplint"


def module_name(path: Path, root: Path = PACKAGE.parent) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, ast.If) and _type_checking_only(node):
            pending.extend(node.orelse)
        else:
            pending.extend(ast.iter_child_nodes(node))
    return found


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def import_edges(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Each module of the package and the modules of the package it imports."""
    edges: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets: set[str] = set()
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                source = _absolute(module, path.name == "__init__.py", node)
                # `from mtplint.fix import apply` imports the submodule; `from mtplint.fix.apply
                # import fix_project` imports the module
                names = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                         for alias in node.names]
            targets.update(name for name in names if name in modules and name != module)
        edges[module] = targets
    return edges


def components(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative):
    groups of modules each of which imports, directly or not, every other."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(edges[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            if children:
                child = children.pop(0)
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, sorted(edges[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each component of :func:`components`, as the modules in import order with
    the first repeated at the end."""
    return [_cycle_in(component, edges) for component in components(edges)]


def _cycle_in(component: list[str], edges: dict[str, set[str]]) -> list[str]:
    """A shortest cycle through the component's first module (breadth-first, inside the component)."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for child in sorted(edges[node] & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if child not in previous:
                    previous[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"{component} is not strongly connected")


def test_the_package_imports_without_a_cycle() -> None:
    edges = import_edges(package_modules())
    found = components(edges)
    described = "\n".join(f"{' -> '.join(_cycle_in(component, edges))}  (modules that import each other: "
                          f"{', '.join(component)})" for component in found)
    assert not found, f"import cycles in mtplint/:\n{described}"


def test_a_function_level_import_closes_a_cycle(tmp_path: Path) -> None:
    # the walker sees what the package test relies on: an import inside a function, a relative
    # import, a submodule named in `from package import name`; and not a TYPE_CHECKING import
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.sub import b\n")
    (package / "sub" / "b.py").write_text("def later():\n    from .. import c\n    return c\n")
    (package / "c.py").write_text("import os\nif True:\n    import pkg.a\n")
    (package / "d.py").write_text("TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from pkg import a\n")
    modules = {module_name(path, tmp_path): path for path in sorted(package.rglob("*.py"))}
    edges = import_edges(modules)
    assert edges["pkg.d"] == set()
    assert cycles(edges) == [["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]]


def test_every_import_inside_a_function_names_its_boundary() -> None:
    # ruff's PLC0415 finds an import inside a function without a noqa; this, one whose noqa gives no
    # reason (CONTRIBUTING.md, "Imports": each says which boundary it is)
    silent = [f"{path.relative_to(PACKAGE.parent)}:{number}"
              for path in sorted(PACKAGE.rglob("*.py"))
              for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
              if "noqa: PLC0415" in line and not line.split("noqa: PLC0415", 1)[1].startswith(" - ")]
    assert not silent, f"a function-level import whose noqa says no boundary: {silent}"


def test_only_the_language_server_imports_typing_or_dataclasses_when_it_runs() -> None:
    # a one-file check loads neither (docs/startup.md, "slotted records"; tests/test_startup.py checks
    # the runs it makes): a rule or an extractor those runs do not reach must not bring them in either.
    # Type-only names go under `TYPE_CHECKING = False` / `if TYPE_CHECKING:` (CONTRIBUTING.md)
    found = []
    for module, path in package_modules().items():
        if module.startswith("mtplint.server"):
            continue  # pygls's own types: `mtplint server` is a subcommand of its own
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [f"{module}:{node.lineno} {name}" for name in names
                      if name.split(".")[0] in ("typing", "dataclasses") and not node.level]
    assert not found, f"imported when the module runs: {found}"
