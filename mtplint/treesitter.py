"""tree-sitter's parser with its Bash grammar, loaded from the two extension modules alone.

The second start-up measure besides :mod:`mtplint.pyyaml` (``docs/startup.md`` gives the
measurements). A shell script is parsed with ``tree_sitter._binding`` (the parser) and
``tree_sitter_bash._binding`` (the grammar); the packages' ``__init__`` modules only re-export them,
and import more besides: ``tree_sitter`` imports ``typing`` for one ``Protocol``, and
``tree_sitter_bash`` imports ``importlib.resources`` (with ``tempfile``, ``shutil``, ``random``,
``bz2`` and ``lzma``) for highlight queries mtplint never reads. Those imports were about 11% of a
one-file check of a shell script.

So the two extension modules are found and loaded as the import system loads any submodule, their
packages' ``__init__`` aside, and registered under their own names: a later ``import tree_sitter``
in the same process (a program that also uses tree-sitter) runs the package's ``__init__``, which
re-exports the very module loaded here, so the parser types of both are the same. Where the
packages are already imported, their modules are used as they are.
"""

from __future__ import annotations

import sys
from importlib.machinery import PathFinder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

    from tree_sitter import Parser


def _binding(package: str) -> ModuleType:
    """``<package>._binding``, loaded (once) without running ``<package>/__init__.py``."""
    name = f"{package}._binding"
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    package_spec = PathFinder.find_spec(package)
    spec = None
    if package_spec is not None and package_spec.submodule_search_locations:
        spec = PathFinder.find_spec(name, package_spec.submodule_search_locations)
    if spec is None or spec.loader is None:
        raise ImportError(f"No module named {name!r}", name=name)
    module = spec.loader.create_module(spec)
    if module is None:  # not an extension module: a layout other than the published wheels'
        raise ImportError(f"{name!r} is not an extension module", name=name)
    # what the import system sets on a module it creates from a spec (importlib.util.module_from_spec)
    module.__spec__ = spec
    module.__loader__ = spec.loader
    module.__package__ = package
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def bash_parser() -> Parser:
    """A tree-sitter parser set to the Bash grammar."""
    core = _binding("tree_sitter")
    grammar = _binding("tree_sitter_bash")
    parser: Parser = core.Parser(core.Language(grammar.language()))
    return parser
