"""mtplint: a linter for the launch configuration of LLM servers that use speculative decoding.

Importing the package imports :mod:`pathlib` (every stage of the pipeline names files with it)
without :mod:`urllib.parse`. CPython's pathlib imports ``urllib.parse`` for one function,
``quote_from_bytes``, which only ``Path.as_uri()`` calls; and ``urllib.parse`` imports
:mod:`ipaddress`. The two modules are ~11M instructions, 5% of a one-file pre-commit run that
never builds a URI. So pathlib is imported here first, while ``sys.modules`` holds a stand-in for
``urllib.parse`` whose ``quote_from_bytes`` imports the real module when first called. The
stand-in is removed as soon as pathlib is in; any attribute read from it comes from the real module
(tests/test_startup.py). :mod:`mtplint.pyyaml` imports PyYAML in the same way (:func:`import_with`).
"""

from __future__ import annotations

import sys

__version__ = "0.2.0"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any


def stand_in(name: str, *functions: str) -> ModuleType:
    """A module that answers for module ``name`` with the real module's attributes, importing the
    real module the first time one is read. ``functions``: names another module takes from it while
    it is imported (``from name import f``), answered by wrappers that read the real function only
    when called. Should anything read an attribute while the stand-in is still registered in
    ``sys.modules`` (another thread importing the module meanwhile), the stand-in first gives up
    its place, so that reader gets the real module's attribute too."""
    module = type(sys)(name)

    def real() -> ModuleType:
        if sys.modules.get(name) is module:
            del sys.modules[name]
        __import__(name)
        return sys.modules[name]

    def attribute(attribute_name: str) -> Any:
        if attribute_name.startswith("__"):  # what the import system asks of any module (__path__, ...)
            raise AttributeError(attribute_name)
        return getattr(real(), attribute_name)

    def deferred(function_name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            return getattr(real(), function_name)(*args, **kwargs)

        call.__name__ = function_name
        return call

    for function_name in functions:
        setattr(module, function_name, deferred(function_name))
    module.__getattr__ = attribute  # type: ignore[method-assign]
    return module


def import_with(stand_ins: dict[str, ModuleType], name: str) -> None:
    """Import module ``name`` while ``sys.modules`` holds ``stand_ins`` (by the name each stands in
    for); each is removed right after, unless something replaced it meanwhile, so whoever imports
    those names later gets the real modules."""
    sys.modules.update(stand_ins)
    try:
        __import__(name)
    finally:
        for replaced, module in stand_ins.items():
            if sys.modules.get(replaced) is module:
                del sys.modules[replaced]


def _import_pathlib() -> None:
    if "pathlib" in sys.modules or "urllib.parse" in sys.modules:
        return
    # pathlib takes ``quote_from_bytes`` while it is imported (for ``as_uri``)
    import_with({"urllib.parse": stand_in("urllib.parse", "quote_from_bytes")}, "pathlib")


_import_pathlib()
