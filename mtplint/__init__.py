"""mtplint: a linter for the launch configuration of LLM servers that use speculative decoding.

Importing the package imports :mod:`pathlib` (every stage of the pipeline names files with it)
without :mod:`urllib.parse`. CPython's pathlib imports ``urllib.parse`` for one function,
``quote_from_bytes``, which only ``Path.as_uri()`` calls; and ``urllib.parse`` imports
:mod:`ipaddress`. The two modules are ~11M instructions, 5% of a one-file pre-commit run that
never builds a URI. So pathlib is imported here first, while ``sys.modules`` holds a stand-in for
``urllib.parse`` whose ``quote_from_bytes`` imports the real module when first called. The
stand-in is removed as soon as pathlib is in, under the interpreter's import lock so no other
thread's import can see it (tests/test_startup.py).
"""

import sys

__version__ = "0.1.0"


def _quote_from_bytes(*args: object, **kwargs: object) -> str:
    """``urllib.parse.quote_from_bytes`` for pathlib, which imports the real module on first use."""
    from urllib.parse import quote_from_bytes

    return quote_from_bytes(*args, **kwargs)  # type: ignore[arg-type]


def _import_pathlib() -> None:
    if "pathlib" in sys.modules or "urllib.parse" in sys.modules:
        return
    import _imp

    stand_in = type(sys)("urllib.parse")
    stand_in.quote_from_bytes = _quote_from_bytes  # type: ignore[attr-defined]
    _imp.acquire_lock()
    try:
        sys.modules["urllib.parse"] = stand_in
        try:
            import pathlib
        except ImportError:  # a pathlib that takes more than quote_from_bytes: imported as it is, below
            for name in [name for name in sys.modules if name == "pathlib" or name.startswith("pathlib.")]:
                del sys.modules[name]
        finally:
            if sys.modules.get("urllib.parse") is stand_in:
                del sys.modules["urllib.parse"]
    finally:
        _imp.release_lock()
    import pathlib  # noqa: F401  (a no-op when the import above succeeded)


_import_pathlib()
