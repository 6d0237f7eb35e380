"""Opening a named file without waiting on it, and reading no more of it than will be used.

A path can name a FIFO (opening it waits for a writer, for ever), a character device (``/dev/zero``
never ends), a socket or a directory, even when the user names it on purpose. mtplint reads regular
files only: it asks what a path is before opening it (so a FIFO or a device is never opened), opens
it without waiting, and asks again of the open file (the path may have been replaced in between).
"""

from __future__ import annotations

import errno
import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

#: the most mtplint reads of a configuration or house-rule file (real ones are a few kilobytes)
MAX_SETTINGS_BYTES = 1 << 20

#: opened without waiting for a writer, not inherited by a child process, as bytes (Windows)
READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


#: a directory's names and the same names lowercased (None: it cannot be listed), as
#: :meth:`mtplint.extract.FileLoader.listing` keeps them for a run
Listing = tuple[frozenset[str], frozenset[str]] | None


def listing_of(directory: str) -> Listing:
    """:data:`Listing` of ``directory``, listed now."""
    try:
        names = os.listdir(directory)
    except OSError:
        return None
    return listing_from(names)


def listing_from(names: list[str]) -> Listing:
    """:data:`Listing` of a directory that holds ``names``."""
    return frozenset(names), frozenset(name.lower() for name in names)


def what_it_is(mode: int) -> str:
    """What a file that is not a regular one is, for a message."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


class NotRegularFile(OSError):
    """A path that names something other than a regular file; ``strerror`` says what."""

    def __init__(self, path: str | os.PathLike[str], mode: int) -> None:
        super().__init__(errno.EINVAL, f"{what_it_is(mode)}, not a regular file", str(path))


class TooLarge(OSError):
    def __init__(self, path: str | os.PathLike[str], size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, f"{size} bytes, more than the {limit} mtplint reads", str(path))


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened for reading bytes; raises :class:`NotRegularFile` (without opening it) for a
    FIFO, socket, device or directory, and what ``os.stat``/``os.open`` raise."""
    status = os.stat(path)
    if not stat.S_ISREG(status.st_mode):
        raise NotRegularFile(path, status.st_mode)
    descriptor = os.open(path, READ_FLAGS)
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):  # replaced since it was asked
            raise NotRegularFile(path, mode)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def read_regular(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; raises :class:`NotRegularFile`,
    :class:`TooLarge` (read no further than the limit) and what opening raises."""
    with open_regular(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise TooLarge(path, size, limit)
        data = handle.read(limit + 1)  # the file may have grown since
    if len(data) > limit:
        raise TooLarge(path, len(data), limit)
    return data


def head_of_regular(path: str | os.PathLike[str], size: int) -> bytes:
    """The first ``size`` bytes of a regular file; ``b""`` for anything else, or a file that cannot be read."""
    try:
        with open_regular(path) as handle:
            return handle.read(size)
    except OSError:
        return b""


def head_of_listed(path: str, size: int) -> bytes:
    """:func:`head_of_regular` of a file a directory listing showed as a regular file (or a link to
    one): opened at once, without waiting for a writer, and asked what it is once open (it may
    have been replaced since it was listed), instead of asked first; no buffered reader. A walk
    reads the first line of every file its name does not classify."""
    try:
        descriptor = os.open(path, READ_FLAGS)
    except OSError:
        return b""
    try:
        return os.read(descriptor, size) if stat.S_ISREG(os.fstat(descriptor).st_mode) else b""
    except OSError:
        return b""
    finally:
        os.close(descriptor)
