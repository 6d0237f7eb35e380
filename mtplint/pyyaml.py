"""PyYAML, imported with its regular expressions compiled when first used instead of at import.

PyYAML's modules compile about twenty regular expressions while they are imported (the reader's
class of printable characters, the resolvers' numbers, booleans and timestamps, the constructor's
timestamp). Compiling them takes more instructions than all the rest of ``import yaml``: the
printable-character class alone, with its ranges up to U+10FFFF, is ~50M instructions, a fifth of a
one-file pre-commit run. Most of them are never used by mtplint: the C composer checks printable
characters itself, nothing is constructed, and a tree's plain scalars rarely reach more than a few
of the resolvers' expressions.

So while ``yaml`` is imported here, ``re.compile`` called from PyYAML's own modules returns a
:class:`DeferredPattern`, which compiles on its first use and from then on answers with the compiled
pattern's own methods. Calls from every other module compile as usual, and ``re.compile`` is the
standard one again once the import is done. Import ``yaml`` through this module (``from
mtplint.pyyaml import yaml``) so whichever part of mtplint imports it first gets the deferral.

Two standard modules PyYAML imports are not loaded either, while it is imported (tests/test_startup.py):

* ``datetime``: its constructor and representer get the C module ``_datetime`` in its place.
  ``datetime`` is a pure-Python implementation of the whole module, every class of which is then
  replaced by ``_datetime``'s (``from _datetime import *``): the classes are the same, and loading the
  Python version first cost ~4% of a one-file run's time.
* ``base64`` (and ``struct`` with it): a :func:`mtplint.stand_in`, which imports it when a
  ``!!binary`` value is first read or written.
"""

from __future__ import annotations

import re
import sys

from mtplint import import_with, stand_in

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

#: the attributes of a compiled pattern that a deferred one takes over once compiled
_PATTERN_ATTRIBUTES = ("match", "fullmatch", "search", "findall", "finditer", "split", "sub", "subn",
                       "scanner", "pattern", "flags", "groups", "groupindex")


class DeferredPattern:
    """``re.compile(pattern, flags)``, compiled the first time one of its attributes is read."""

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


def _compile_for(pattern: str | bytes, flags: int = 0) -> Any:
    """``re.compile`` while PyYAML is imported: deferred for PyYAML's own modules."""
    caller = sys._getframe(1).f_globals.get("__name__", "")
    if caller == "yaml" or caller.startswith("yaml."):
        return DeferredPattern(pattern, flags)
    return _compile_now(pattern, flags)


def _stand_ins() -> dict[str, ModuleType]:
    """What PyYAML's modules get for the standard modules they only use on a value's first use."""
    modules: dict[str, ModuleType] = {}
    if "datetime" not in sys.modules:
        try:  # noqa: SIM105 - contextlib would be start-up nothing else of a run needs
            modules["datetime"] = __import__("_datetime")  # (no typeshed stub: by name)
        except ImportError:  # an interpreter without the C module: datetime is all there is
            pass
    if "base64" not in sys.modules:
        modules["base64"] = stand_in("base64")
    return modules


def _import_yaml() -> None:
    if "yaml" in sys.modules:
        return
    re.compile = _compile_for  # type: ignore[assignment]
    try:
        import_with(_stand_ins(), "yaml")
    finally:
        re.compile = _compile_now


_import_yaml()

import yaml as yaml  # noqa: E402  (re-exported: imported above, with its expressions deferred)
