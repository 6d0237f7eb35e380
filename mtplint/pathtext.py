"""Paths as text: the few ``pathlib`` operations mtplint needs, on ``str``, with ``pathlib``'s answers.

mtplint keeps paths as strings: ``pathlib`` imports ``urllib.parse`` (and ``ipaddress``) for
``Path.as_uri``, which a one-file check would load for nothing. A path string here is *normalised*
as ``str(PurePosixPath(text))`` writes it (no empty or ``.`` components, no trailing slash, ``.``
for the empty path), so that two strings are equal exactly when the path objects were; the functions
below take and give normalised strings, and answer as the ``Path`` methods of the same name did
(including which errors they raise), so that reports do not change. Plain ``os.path`` is used
directly where its answer is the same (``basename`` of a normalised path other than ``.``,
``isabs``, ``realpath``)."""

from __future__ import annotations

import errno
import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

#: what ``Path.is_file()`` / ``exists()`` / ``is_dir()`` answer False for instead of raising
#: (``pathlib._IGNORED_ERRNOS``)
NO_FILE_ERRNOS = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def normalized(path: str | os.PathLike[str]) -> str:
    """``str(Path(path))``: the path with empty and ``.`` components dropped (``..`` kept), ``.``
    for an empty path, and the one root POSIX keeps doubled (``//``) kept."""
    text = os.fspath(path)
    if text and "//" not in text and "/." not in text and not text.startswith("./") and text[-1] != "/" \
            and text != ".":
        return text  # already normal: most paths are
    if text.startswith("//") and not text.startswith("///"):
        root = "//"
    else:
        root = "/" if text.startswith("/") else ""
    return root + "/".join(part for part in text.split("/") if part and part != ".") or "."


def join(base: str, *more: str) -> str:
    """``str(Path(base, *more))``: an absolute part starts the path again."""
    return normalized(os.path.join(base, *more))


def path_name(path: str) -> str:
    """``Path(path).name`` of a normalised path: the last component, ``""`` for ``.`` and the root."""
    return "" if path == "." else os.path.basename(path)


def parent_dir(path: str) -> str:
    """``Path(path).parent`` of a normalised path: ``.`` for a one-component relative path, the
    root for the root."""
    if path == ".":
        return path
    head = os.path.dirname(path)
    return head or "."


def name_suffix(file_name: str) -> str:
    """``PurePath(name).suffix`` of a file's name: from its last dot, unless the name starts or
    ends with that dot (``.env`` and ``a.`` have none)."""
    dot = file_name.rfind(".")
    return file_name[dot:] if 0 < dot < len(file_name) - 1 else ""


def path_suffix(path: str) -> str:
    """``Path(path).suffix`` of a normalised path."""
    return name_suffix(path_name(path))


def name_stem(file_name: str) -> str:
    """``PurePath(name).stem``: the name without :func:`name_suffix`."""
    return file_name[:len(file_name) - len(name_suffix(file_name))]


def path_parts(path: str) -> tuple[str, ...]:
    """``Path(path).parts`` of a normalised path; sorting by it sorts as path objects did
    (component by component: ``a/b`` before ``a-b/c``, unlike the strings)."""
    if path.startswith("/"):
        root = "//" if path.startswith("//") else "/"
        rest = path[len(root):]
        return (root, *rest.split("/")) if rest else (root,)
    return () if path == "." else tuple(path.split("/"))


def _status(path: str, follow: bool = True) -> os.stat_result | None:
    """``os.stat`` (``os.lstat``), None for what pathlib takes for "no such file"; other errors raise."""
    try:
        return os.stat(path) if follow else os.lstat(path)
    except OSError as error:
        if error.errno not in NO_FILE_ERRNOS:
            raise
        return None
    except ValueError:  # an embedded NUL
        return None


def exists(path: str) -> bool:
    """``Path(path).exists()``."""
    return _status(path) is not None


def is_file(path: str) -> bool:
    """``Path(path).is_file()``: unlike ``os.path.isfile``, an error other than a missing file
    (a directory that cannot be searched) raises."""
    status = _status(path)
    return status is not None and stat.S_ISREG(status.st_mode)


def is_dir(path: str) -> bool:
    """``Path(path).is_dir()``."""
    status = _status(path)
    return status is not None and stat.S_ISDIR(status.st_mode)


def is_symlink(path: str) -> bool:
    """``Path(path).is_symlink()``."""
    status = _status(path, follow=False)
    return status is not None and stat.S_ISLNK(status.st_mode)


def resolved_path(path: str | os.PathLike[str]) -> str:
    """``str(Path(path).resolve())``: ``os.path.realpath``, and a RuntimeError for a symbolic link loop."""
    try:
        real = os.path.realpath(path)
        os.stat(real)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise RuntimeError(f"Symlink loop from {error.filename!r}") from None
    return normalized(real)


def real_directory(directory: str, known: dict[str, str | None]) -> str | None:
    """The real path of a directory path that exists (a relative one from the working directory),
    each directory resolved once through its parent's answer (one ``lstat``) and kept in ``known``;
    None when it does not exist or is not a plain directory path. A link is resolved by
    ``os.path.realpath``."""
    if directory in known:
        return known[directory]
    parent, name = os.path.split(directory)
    real: str | None
    if not name:
        real = os.path.realpath(directory)  # the root
    elif name in (".", ".."):
        real = None
    else:
        real_parent = real_directory(parent, known)
        try:
            status = os.lstat(directory)
        except OSError:
            real = None
        else:
            if stat.S_ISLNK(status.st_mode):
                real = os.path.realpath(directory)
            elif real_parent is None or not stat.S_ISDIR(status.st_mode):
                real = None
            else:
                real = real_parent + name if real_parent.endswith("/") else f"{real_parent}/{name}"
    known[directory] = real
    return real


def relative_to(path: str, base: str) -> str:
    """``str(Path(path).relative_to(base))`` of normalised paths; ValueError when ``path`` is not
    below ``base``."""
    if path == base:
        return "."
    parts, base_parts = path_parts(path), path_parts(base)
    if parts[:len(base_parts)] != base_parts or (not base_parts and path.startswith("/")):
        raise ValueError(f"{path!r} is not in the subpath of {base!r}")
    return "/".join(parts[len(base_parts):]) or "."


def read_text(path: str) -> str:
    """``Path(path).read_text(encoding="utf-8")``."""
    with open(path, encoding="utf-8") as file:
        return file.read()


def read_bytes(path: str) -> bytes:
    """``Path(path).read_bytes()``."""
    with open(path, "rb") as file:
        return file.read()


def glob_names(directory: str, wanted: Callable[[str], bool]) -> list[str]:
    """``sorted(Path(directory).glob(PATTERN))`` for a one-component pattern that ``wanted`` tells
    from a name: the entries of ``directory`` whose names are wanted (a hidden name too), sorted;
    nothing for a directory that does not exist or cannot be listed."""
    if not is_dir(directory):
        return []
    try:
        names = os.listdir(directory)
    except PermissionError:
        return []
    return [join(directory, entry) for entry in sorted(names) if wanted(entry)]
