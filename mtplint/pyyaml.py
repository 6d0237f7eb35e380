"""PyYAML, imported with its regular expressions compiled when first used instead of at import.

One of the two start-up measures outside the records (:mod:`mtplint.records`), with
:mod:`mtplint.treesitter`; ``docs/startup.md`` gives the measurements.

PyYAML's modules compile about twenty regular expressions while they are imported (the reader's
class of printable characters, the resolvers' numbers, booleans and timestamps, the constructor's
timestamp). Compiling them costs more than all the rest of ``import yaml`` -- about 6% of the CPU
time of a one-file ``mtplint check`` -- and most are never used by mtplint: the C composer checks printable
characters itself, nothing is constructed, and a tree's plain scalars rarely reach more than a few
of the resolvers' expressions.

So ``yaml`` is imported here with ``re.compile`` answering :class:`DeferredPattern` objects, which
compile on first use and from then on answer with the compiled pattern's own methods. Only PyYAML's
own code runs while that is so: the standard modules it imports are imported first, and a call from
another thread compiles as usual. ``re.compile`` is the standard one again once the import is done.
Import ``yaml`` through this module (``from mtplint.pyyaml import yaml``) so whichever part of
mtplint imports it first gets the deferral.
"""

from __future__ import annotations

import re
import sys
from _thread import get_ident  # the documented low-level API; a run never loads threading otherwise

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: the attributes of a compiled pattern that a deferred one takes over once compiled
_PATTERN_ATTRIBUTES = ("match", "fullmatch", "search", "findall", "finditer", "split", "sub", "subn",
                       "scanner", "pattern", "flags", "groups", "groupindex")

#: the modules outside PyYAML that ``import yaml`` loads: imported before the deferral begins, so
#: that their own expressions, if any, are compiled as usual
YAML_DEPENDENCIES = ("base64", "collections.abc", "datetime")


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


def _deferring_compile(importing_thread: int) -> Any:
    """``re.compile`` while ``yaml`` is imported on thread ``importing_thread``."""

    def compile_later(pattern: str | bytes, flags: int = 0) -> Any:
        if get_ident() == importing_thread:
            return DeferredPattern(pattern, flags)
        return _compile_now(pattern, flags)

    return compile_later


def _import_yaml() -> None:
    if "yaml" in sys.modules:
        return
    for name in YAML_DEPENDENCIES:
        __import__(name)
    re.compile = _deferring_compile(get_ident())
    try:
        __import__("yaml")
    finally:
        re.compile = _compile_now


_import_yaml()

import yaml as yaml  # noqa: E402  (re-exported: imported above, with its expressions deferred)
