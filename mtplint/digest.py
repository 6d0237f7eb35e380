"""SHA-256 for the cache keys, the rule-catalog check and a fix's "file changed on disk" test.

``hashlib`` loads OpenSSL's ``_hashlib`` on import, start-up time for every run that hashes anything;
CPython's own SHA-2 module (``_sha2`` from 3.12, ``_sha256`` before) gives the same digests without
it. hashlib is the fallback for an interpreter built without that module.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from hashlib import _Hash


def sha256(data: bytes = b"") -> _Hash:
    """A new SHA-256 hash object (``update``, ``hexdigest``), fed ``data``."""
    if not _CONSTRUCTOR:
        _CONSTRUCTOR.append(_find_constructor())
    made: _Hash = _CONSTRUCTOR[0](data)
    return made


#: the constructor :func:`_find_constructor` found, once: a module that is not there is searched
#: for on every import (``_sha2`` before Python 3.12), which cost a cold cache a directory search
#: per file hashed
_CONSTRUCTOR: list[Callable[[bytes], _Hash]] = []


#: CPython's SHA-2 module by the name this interpreter gives it first: a name that is not there is
#: searched for in every folder of ``sys.path`` before the import fails
_SHA2_MODULES = ("_sha2", "_sha256") if sys.version_info >= (3, 12) else ("_sha256", "_sha2")


def _find_constructor() -> Callable[[bytes], _Hash]:
    for name in _SHA2_MODULES:
        try:
            # __import__, not importlib.import_module (the names are top-level modules): the importlib
            # package is start-up a check that hashes a text (the fixing tried in memory) has no other use for
            constructor: Callable[[bytes], _Hash] = __import__(name).sha256
            return constructor
        except (ImportError, AttributeError):
            continue
    import hashlib  # noqa: PLC0415 - only where CPython has no SHA-256 module

    return hashlib.sha256


def sha256_hex(data: bytes) -> str:
    """The hex SHA-256 digest of ``data``."""
    return sha256(data).hexdigest()
