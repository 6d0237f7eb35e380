"""Writing fixed files back: in place, only when changed, as the file was stored.

- the new bytes are the file's BOM plus the text in the file's encoding (``SourceFile.encoding`` /
  ``.bom``: UTF-8, UTF-8 with BOM, UTF-16/32 with BOM); line endings are whatever the text has (the
  edits were made on the text as read, and inserted lines use the file's own ending);
- the file is rewritten in place, as ruff and editors do, so that it stays the same file: its
  inode (every hard link sees the fixed text), its extended attributes, its owner and its mode
  bits -- setuid and setgid included, which the kernel clears on a write by anyone but root and
  which are set back afterwards;
- a file whose bytes changed since they were read (``SourceFile.digest``, sha256) is not
  overwritten, nor is a read-only file: those are per-file failures the caller reports, the run goes on.

A write in place is not atomic: a run killed in the middle of one (SIGKILL, a crash) could leave
the file truncated. So the complete new content is first stored next to the file, in a
journal ``.NAME.XXXXXXXX.DIGEST.mtplint-fix`` (DIGEST: the start of its content's sha256, which
tells a complete journal from one cut short), and removed once the file is written. A run that
finds a journal left behind (:func:`recover_interrupted`) finishes the write when the file is a
proper prefix of the journal's content (the write was cut short: the file is neither the original
nor the fix), and otherwise just removes the journal. Discovery never lints a journal (its suffix
is not a kind mtplint reads, see :data:`mtplint.discover.FIX_JOURNAL_SUFFIX`).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from mtplint.digest import sha256_hex
from mtplint.discover import DEFAULT_EXCLUDES, FIX_JOURNAL_SUFFIX
from mtplint.records import FrozenRecord
from mtplint.source import SourceFile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

#: hex digits of the content's sha256 in a journal's name (enough to tell a cut-short journal)
_JOURNAL_DIGEST_LENGTH = 16
_CHANGED_ON_DISK = "cannot write fix: the file changed on disk since it was read; left as it is (run mtplint again)"


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


def _read_only(path: Path, mode: int) -> bool:
    # no write bit at all is read-only even for root, who os.access() says may write anything
    return not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(path, os.W_OK)


def _read_all(descriptor: int) -> bytes:
    os.lseek(descriptor, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(descriptor, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _overwrite(descriptor: int, data: bytes, mode: int) -> None:
    """Replace the content of the open file with ``data``; its mode bits as they were."""
    os.ftruncate(descriptor, 0)
    os.lseek(descriptor, 0, os.SEEK_SET)
    view = memoryview(data)
    written = 0
    while written < len(view):
        written += os.write(descriptor, view[written:])
    # the kernel clears setuid/setgid when a process without CAP_FSETID writes; only the owner (or
    # root) may set them back, anyone else's write keeps the kernel's choice (no fchmod: Windows)
    set_mode = getattr(os, "fchmod", None)
    if set_mode is not None and stat.S_IMODE(os.fstat(descriptor).st_mode) != mode:
        with contextlib.suppress(OSError):
            set_mode(descriptor, mode)
    os.fsync(descriptor)


def _journal(path: Path, data: bytes) -> str:
    """Store ``data`` in a new journal next to ``path``; its path."""
    import tempfile  # noqa: PLC0415 - (and shutil with it) only for a run that writes

    digest = sha256_hex(data)[:_JOURNAL_DIGEST_LENGTH]
    handle, journal = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=f".{digest}{FIX_JOURNAL_SUFFIX}")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(journal)
        raise
    return journal


def write_fixed(source: SourceFile, text: str) -> WriteFailure | None:
    """Write ``text`` over ``source``'s file; ``None`` when written (or nothing to write)."""
    if text == source.text:
        return None
    # write through a symlink to its target, so the link stays a link
    path = Path(source.path).resolve()
    try:
        data = encoded(source, text)
    except UnicodeEncodeError as error:
        return WriteFailure(source, f"cannot write fix: the fixed text cannot be stored as {source.encoding} ({error.reason})")
    if not source.digest:
        return WriteFailure(source, _CHANGED_ON_DISK)
    try:
        status = path.stat()
    except OSError as error:
        return WriteFailure(source, f"cannot write fix: {error.strerror or error}")
    if _read_only(path, status.st_mode):
        return WriteFailure(source, "cannot write fix: the file is read-only; left as it is")
    mode = stat.S_IMODE(status.st_mode)
    try:
        journal = _journal(path, data)
    except OSError as error:
        return WriteFailure(source, f"cannot write fix: {error.strerror or error}")
    #: the file is neither its old bytes nor the new ones yet: the journal must stay for the next run
    halfway = False
    try:
        descriptor = os.open(path, os.O_RDWR | getattr(os, "O_BINARY", 0))
        try:
            # last look, on the file about to be written: the window in which a change is lost is as small as it gets
            original = _read_all(descriptor)
            if sha256_hex(original) != source.digest:
                return WriteFailure(source, _CHANGED_ON_DISK)
            halfway = True
            try:
                _overwrite(descriptor, data, mode)
            except OSError:
                # cut short (a full disk): the old bytes go back in the room they left
                _overwrite(descriptor, original, mode)
                halfway = False
                raise
            halfway = False
        finally:
            os.close(descriptor)
    except OSError as error:
        return WriteFailure(source, f"cannot write fix: {error.strerror or error}")
    finally:
        if not halfway:
            with contextlib.suppress(OSError):
                os.unlink(journal)
    return None


def write_all(changed: list[tuple[SourceFile, str]]) -> list[WriteFailure]:
    """Write every changed file; the failures (the other files are written regardless)."""
    failures = []
    for source, text in changed:
        failure = write_fixed(source, text)
        if failure is not None:
            failures.append(failure)
    return failures


# --- journals left by a run that was killed ------------------------------------------------------


def _entries(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as scan:
            return list(scan)
    except OSError:
        return []


def _journals_under(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Path]:
    """The journals among ``paths``: in a directory's whole tree (without the folders discovery
    never enters), beside a file for that file."""
    folders: list[str] = []
    for given in map(Path, paths):
        if given.is_dir():
            folders.append(str(given))
            continue
        for entry in _entries(str(given.parent)):
            if entry.name.endswith(FIX_JOURNAL_SUFFIX) and entry.name.startswith(f".{given.name}."):
                yield Path(entry.path)
    while folders:
        for entry in _entries(folders.pop()):
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in DEFAULT_EXCLUDES:
                        folders.append(entry.path)
                    continue
            except OSError:
                continue
            if entry.name.endswith(FIX_JOURNAL_SUFFIX) and entry.name.startswith("."):
                yield Path(entry.path)


def _target_and_digest(journal: Path) -> tuple[Path, str] | None:
    """The file a journal was written for and the digest its name records."""
    stem = journal.name[1:-len(FIX_JOURNAL_SUFFIX)]  # NAME.XXXXXXXX.DIGEST
    parts = stem.rsplit(".", 2)
    if len(parts) != 3 or len(parts[2]) != _JOURNAL_DIGEST_LENGTH or not parts[0]:
        return None
    return journal.with_name(parts[0]), parts[2]


def recover_journal(journal: Path) -> bool:
    """Finish the write a killed run left half done, and remove its journal; True when the file
    was rewritten from it."""
    restored = False
    found = _target_and_digest(journal)
    try:
        content = journal.read_bytes()
        if found is not None and sha256_hex(content)[:_JOURNAL_DIGEST_LENGTH] == found[1]:
            target = found[0]
            # os.open follows a symlink, as write_fixed wrote its target
            descriptor = os.open(target, os.O_RDWR | getattr(os, "O_BINARY", 0))
            try:
                current = _read_all(descriptor)
                if len(current) < len(content) and content.startswith(current):
                    mode = stat.S_IMODE(os.fstat(descriptor).st_mode)
                    _overwrite(descriptor, content, mode)
                    restored = True
            finally:
                os.close(descriptor)
    except OSError:
        pass  # the file is gone or unreadable: nothing to finish
    with contextlib.suppress(OSError):
        journal.unlink()
    return restored


def recover_interrupted(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Deal with every journal a killed ``--fix`` left among ``paths`` (see the module docstring);
    the files that were rewritten from one."""
    return [found[0] for journal in dict.fromkeys(_journals_under(paths))
            if recover_journal(journal) and (found := _target_and_digest(journal)) is not None]
