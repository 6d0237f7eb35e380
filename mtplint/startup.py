"""The start-up measures that change how two libraries are imported (``docs/startup.md`` gives
what each buys, measured). With the slotted records (:mod:`mtplint.records`) they are all the
start-up measures mtplint takes: nothing else in the package replaces ``re.compile`` or writes to
``sys.modules``.

**PyYAML, its regular expressions compiled when first used.** PyYAML's modules compile about twenty
regular expressions while they are imported (the reader's class of printable characters, the
resolvers' numbers, booleans and timestamps, the constructor's timestamp). Compiling them costs
more than all the rest of ``import yaml``, and most are never used by mtplint: the C composer checks
printable characters itself, nothing is constructed, and a tree's plain scalars rarely reach more
than a few of the resolvers' expressions. So ``yaml`` is imported with ``re.compile`` answering
:class:`DeferredPattern` objects, which compile on first use and from then on answer with the
compiled pattern's own methods. Only PyYAML's own code runs while that is so: the standard modules
it imports are imported first, and a call from another thread compiles as usual. ``re.compile`` is
the standard one again once the import is done. Import ``yaml`` through this module (``from
mtplint.startup import yaml``) so whichever part of mtplint imports it first gets the deferral. It
is imported on that first access, not with this module, which a shell check loads for its parser.

**tree-sitter's parser with its Bash grammar, from the two extension modules alone.** A shell script
is parsed with ``tree_sitter._binding`` (the parser) and ``tree_sitter_bash._binding`` (the
grammar); the packages' ``__init__`` modules only re-export them, and import more besides:
``tree_sitter`` imports ``typing`` for one ``Protocol``, and ``tree_sitter_bash`` imports
``importlib.resources`` (with ``tempfile``, ``shutil``, ``random``, ``bz2`` and ``lzma``) for
highlight queries mtplint never reads. So the two extension modules are found and loaded as the
import system loads any submodule, their packages' ``__init__`` aside, and registered under their
own names: a later ``import tree_sitter`` in the same process (a program that also uses
tree-sitter) runs the package's ``__init__``, which re-exports the very module loaded here, so the
parser types of both are the same. Where the packages are already imported, their modules are used
as they are; where a release lays them out otherwise, the packages are imported as usual.
"""

from __future__ import annotations

import re
import sys
from _thread import get_ident  # the documented low-level API; a run never loads threading otherwise

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType
    from typing import Any

    import yaml as yaml  # set by __getattr__ on first access (below)
    from tree_sitter import Parser

#: the attributes of a compiled pattern that a deferred one takes over once compiled
_PATTERN_ATTRIBUTES = ("match", "fullmatch", "search", "findall", "finditer", "split", "sub", "subn",
                       "scanner", "pattern", "flags", "groups", "groupindex")

#: the modules outside PyYAML that ``import yaml`` loads: imported before the deferral begins, so
#: that their own expressions, if any, are compiled as usual
YAML_DEPENDENCIES = ("base64", "collections.abc", "datetime")


class DeferredPattern:
    """``re.compile(pattern, flags)``, compiled the first time one of its attributes is read: what
    PyYAML's import is given, and how a module of mtplint keeps an expression most runs never use
    out of its import."""

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self._source: tuple[Any, int] = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        # only reached for an attribute not yet on the instance: the first use
        if name.startswith("__"):
            raise AttributeError(name)
        compiled = _compile_now(*self._source)
        vars(self).update((attribute, getattr(compiled, attribute)) for attribute in _PATTERN_ATTRIBUTES)
        return getattr(compiled, name)

    @property
    def compiled(self) -> bool:
        """Whether the expression has been compiled (it has been used)."""
        return "match" in vars(self)

    def __repr__(self) -> str:
        pattern, flags = self._source
        return f"DeferredPattern({pattern!r}, {flags})"


_compile_now = re.compile


def _deferring_compile(importing_thread: int) -> Any:
    """``re.compile`` while ``yaml`` is imported on thread ``importing_thread``."""

    def compile_later(pattern: str | bytes, flags: int = 0) -> Any:
        if get_ident() == importing_thread:
            return DeferredPattern(pattern, flags)
        return _compile_now(pattern, flags)

    return compile_later


def _import_yaml() -> ModuleType:
    if "yaml" not in sys.modules:
        for name in YAML_DEPENDENCIES:
            __import__(name)
        re.compile = _deferring_compile(get_ident())
        try:
            __import__("yaml")
        finally:
            re.compile = _compile_now
    return sys.modules["yaml"]


def __getattr__(name: str) -> Any:
    """``yaml``, imported (with its expressions deferred) the first time it is asked for."""
    if name != "yaml":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = _import_yaml()
    globals()["yaml"] = module
    return module


def _find_spec(name: str, path: Sequence[str] | None) -> ModuleSpec | None:
    """The spec the import system would find for ``name`` (``path``: its package's search
    locations, None for a top-level module): the first that a finder of ``sys.meta_path`` gives,
    as https://docs.python.org/3/reference/import.html#the-meta-path describes. Asked of the finders
    already installed rather than through ``importlib.machinery``, whose package (with
    ``warnings``) a check has no other use for."""
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is not None:
            spec: ModuleSpec | None = find_spec(name, path)
            if spec is not None:
                return spec
    return None


def _binding(package: str) -> ModuleType:
    """``<package>._binding``, loaded (once) without running ``<package>/__init__.py``."""
    name = f"{package}._binding"
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    package_spec = _find_spec(package, None)
    spec = None
    if package_spec is not None and package_spec.submodule_search_locations:
        spec = _find_spec(name, package_spec.submodule_search_locations)
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
    try:
        core = _binding("tree_sitter")
        grammar = _binding("tree_sitter_bash")
    except ImportError:  # laid out otherwise than the published wheels: the packages as usual
        import tree_sitter as core  # noqa: PLC0415 - the packages only where the extension modules are not
        import tree_sitter_bash as grammar  # noqa: PLC0415 - the packages only where the extension modules are not
    parser: Parser = core.Parser(core.Language(grammar.language()))
    return parser
