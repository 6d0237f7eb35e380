"""mtplint: a linter for the launch configuration of LLM servers that use speculative decoding.

Importing the package imports :mod:`pathlib` (every stage of the pipeline names files with it)
without :mod:`urllib.parse`. CPython's pathlib imports ``urllib.parse`` for one function,
``quote_from_bytes``, which only ``Path.as_uri()`` calls; and ``urllib.parse`` imports
:mod:`ipaddress`. The two modules are ~11M instructions, 5% of a one-file pre-commit run that
never builds a URI. So pathlib is imported here first, while ``sys.modules`` holds a stand-in for
``urllib.parse`` whose ``quote_from_bytes`` imports the real module when first called. The
stand-in is removed as soon as pathlib is in; any attribute read from it comes from the real module
(tests/test_startup.py).
"""

from __future__ import annotations

import sys

__version__ = "0.1.0"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any


def _urllib_parse_stand_in() -> ModuleType:
    """A module that answers for ``urllib.parse`` with the real module's attributes, importing the
    real module the first time one is read (pathlib reads one, ``quote_from_bytes``, only when a
    ``Path.as_uri()`` calls it). Should anything read one while the stand-in is still registered
    (another thread importing urllib.parse during pathlib's import), the stand-in first gives up its
    place, so that thread gets the real module's attribute too."""
    stand_in = type(sys)("urllib.parse")

    def real() -> ModuleType:
        if sys.modules.get("urllib.parse") is stand_in:
            del sys.modules["urllib.parse"]
        from urllib import parse

        return parse

    def quote_from_bytes(*args: Any, **kwargs: Any) -> str:
        quoted: str = real().quote_from_bytes(*args, **kwargs)
        return quoted

    def attribute(name: str) -> Any:
        if name.startswith("__"):  # what the import system asks of any module (__path__, ...)
            raise AttributeError(name)
        return getattr(real(), name)

    stand_in.quote_from_bytes = quote_from_bytes  # type: ignore[attr-defined]
    stand_in.__getattr__ = attribute  # type: ignore[method-assign]
    return stand_in


def _import_pathlib() -> None:
    if "pathlib" in sys.modules or "urllib.parse" in sys.modules:
        return
    stand_in = _urllib_parse_stand_in()
    sys.modules["urllib.parse"] = stand_in
    try:
        import pathlib  # noqa: F401
    finally:
        if sys.modules.get("urllib.parse") is stand_in:
            del sys.modules["urllib.parse"]


_import_pathlib()
