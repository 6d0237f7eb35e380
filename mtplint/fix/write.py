"""Writing fixed files back: atomically, only when changed, as the file was stored.

- the new bytes are the file's BOM plus the text in the file's encoding (``SourceFile.encoding`` /
  ``.bom``: UTF-8, UTF-8 with BOM, UTF-16/32 with BOM); line endings are whatever the text has (the
  edits were made on the text as read, and inserted lines use the file's own ending);
- a temporary file in the same directory, with the original's permission bits, is renamed over
  the original (``os.replace``: readers see the old file or the new one, never half of one);
- a file whose bytes changed since they were read (``SourceFile.digest``, sha256) is not
  overwritten, nor is a read-only file: those are per-file failures the caller reports, the run goes on.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from mtplint.digest import sha256_hex
from mtplint.records import FrozenRecord
from mtplint.source import SourceFile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final


class WriteFailure(FrozenRecord):
    """A fixed file that was left as it was on disk, and why (a sentence for the user)."""

    __slots__ = ("source", "reason")
    source: Final[SourceFile]
    reason: Final[str]

    def __init__(self, source: SourceFile, reason: str) -> None:
        self.source = source
        self.reason = reason


def encoded(source: SourceFile, text: str) -> bytes:
    """The bytes of ``text`` stored the way ``source`` was (BOM, encoding)."""
    return source.bom + text.encode(source.encoding)


def _digest(path: Path) -> str:
    return sha256_hex(path.read_bytes())


def _read_only(path: Path, mode: int) -> bool:
    # no write bit at all is read-only even for root, who os.access() says may write anything
    return not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(path, os.W_OK)


def write_fixed(source: SourceFile, text: str) -> WriteFailure | None:
    """Write ``text`` over ``source``'s file; ``None`` when written (or nothing to write)."""
    if text == source.text:
        return None
    # write through a symlink to its target, so the link stays a link
    path = source.path.resolve()
    try:
        data = encoded(source, text)
    except UnicodeEncodeError as error:
        return WriteFailure(source, f"cannot write fix: the fixed text cannot be stored as {source.encoding} ({error.reason})")
    try:
        status = path.stat()
        if not source.digest or _digest(path) != source.digest:
            return WriteFailure(source, "cannot write fix: the file changed on disk since it was read; "
                                        "left as it is (run mtplint again)")
    except OSError as error:
        return WriteFailure(source, f"cannot write fix: {error.strerror or error}")
    if _read_only(path, status.st_mode):
        return WriteFailure(source, "cannot write fix: the file is read-only; left as it is")
    temporary: str | None = None
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".mtplint-fix")
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, stat.S_IMODE(status.st_mode))
        if hasattr(os, "chown"):
            # keeps the owner when running as root; an ordinary user cannot (and needs not) change it
            with contextlib.suppress(OSError):
                os.chown(temporary, status.st_uid, status.st_gid)
        # last look just before the rename: the window in which a change is lost is as small as it gets
        if _digest(path) != source.digest:
            return WriteFailure(source, "cannot write fix: the file changed on disk since it was read; "
                                        "left as it is (run mtplint again)")
        os.replace(temporary, path)
        temporary = None
    except OSError as error:
        return WriteFailure(source, f"cannot write fix: {error.strerror or error}")
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
    return None


def write_all(changed: list[tuple[SourceFile, str]]) -> list[WriteFailure]:
    """Write every changed file; the failures (the other files are written regardless)."""
    failures = []
    for source, text in changed:
        failure = write_fixed(source, text)
        if failure is not None:
            failures.append(failure)
    return failures
