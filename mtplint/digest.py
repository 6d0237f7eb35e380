"""SHA-256 for the cache keys, the rule-catalog check and a fix's "file changed on disk" test.

``hashlib`` loads OpenSSL's ``_hashlib`` on import (~3-4 ms of every run that hashes anything);
CPython's own SHA-2 module (``_sha2`` from 3.12, ``_sha256`` before) gives the same digests without
it. hashlib is the fallback for an interpreter built without that module.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import _Hash


def sha256(data: bytes = b"") -> _Hash:
    """A new SHA-256 hash object (``update``, ``hexdigest``), fed ``data``."""
    import importlib

    for name in ("_sha2", "_sha256"):
        try:
            made: _Hash = importlib.import_module(name).sha256(data)
            return made
        except (ImportError, AttributeError):
            continue
    import hashlib

    return hashlib.sha256(data)


def sha256_hex(data: bytes) -> str:
    """The hex SHA-256 digest of ``data``."""
    return sha256(data).hexdigest()
