"""The on-disk cache of ``mtplint check``: one entry per linted file, as ruff's ``.ruff_cache``.

An entry holds what linting one file produced (its launches' findings, its diagnostics; see
:mod:`mtplint.lint`) and is found by a key made of

* the file's name and bytes,
* mtplint's version and a fingerprint of the installed package (its files' sizes and times: a
  development checkout edited in place must not reuse results of the code before the edit),
* the effective settings (rules selected, house rules' contents, ``--gpu``, the configuration's
  GPUs and models, engine versions, objective, excludes, root).

Linting a file also reads other files: ``.env``, compose override files, a ``--config`` YAML, the
script a unit starts, version pins up the tree. The entry lists each with the hash of its bytes
(or "absent"), and the listing of every directory involved (a new ``compose.override.yaml`` or
``requirements.txt`` changes what is read); an entry is used only when all of them still match.
A cache can therefore make a run faster, never different.

It also remembers which configurations and house-rule files passed their JSON schema
(:class:`ValidDocuments`), so a run does not import the validator for documents it has seen.

An entry file is the SHA-256 of its JSON, a line feed, then the JSON: an entry that is cut short,
damaged, or written by anything but mtplint (valid JSON of another shape, ``NaN``, nesting a
hundred thousand deep) fails that check before it is parsed, and is a miss: the file is linted
again and the entry replaced. An entry file that is not a regular file, or is larger than
:data:`MAX_ENTRY_BYTES`, is a miss too, found without reading it.

Location: ``$MTPLINT_CACHE_DIR``, else ``.mtplint_cache`` in the working directory. mtplint uses
only a directory it created itself: creating it, it writes an ownership marker
(:data:`OWNER_MARKER`), a ``CACHEDIR.TAG`` (backup tools skip it) and a ``.gitignore`` of ``*``
(git does too). A directory that already existed without the marker (``$MTPLINT_CACHE_DIR=.``,
``$HOME``, a folder of the user's) is never written to: the run goes without the cache
(:func:`unusable_reason`), and ``mtplint clean`` refuses it (:func:`clean`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from mtplint import __version__
from mtplint.digest import sha256, sha256_hex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: bump when the entry format changes (an entry of the format before the digest line is a miss
#: under the digest check, and rewritten, so that change kept 1)
FORMAT = 1
#: the largest entry file read (a file's record is its findings and the lines they show: kilobytes)
MAX_ENTRY_BYTES = 64 << 20
CACHE_DIR_NAME = ".mtplint_cache"
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by mtplint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)
ABSENT = "-"
#: written only into a directory mtplint has just created: what makes the directory its own (a
#: CACHEDIR.TAG alone does not, an older mtplint wrote one into existing directories)
OWNER_MARKER = ".mtplint-cache-owner"
OWNER_TEXT = ("This directory was created by mtplint as its cache; `mtplint clean` removes it.\n"
              "mtplint writes only into a cache directory holding this file.\n")


def cache_dir(root: Path) -> Path:
    configured = os.environ.get("MTPLINT_CACHE_DIR")
    return Path(configured) if configured else root / CACHE_DIR_NAME


def package_fingerprint() -> str:
    """Sizes and modification times of the files of the mtplint package (a few hundred stats)."""
    package = Path(__file__).resolve().parent
    digest = sha256(__version__.encode())
    stack = [package]
    entries: list[str] = []
    while stack:
        directory = stack.pop()
        try:
            with os.scandir(directory) as scan:
                for entry in scan:
                    if entry.name == "__pycache__":
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(Path(entry.path))
                    elif entry.is_file():
                        info = entry.stat()
                        entries.append(f"{entry.path}\0{info.st_size}\0{info.st_mtime_ns}")
        except OSError:
            continue
    for line in sorted(entries):
        digest.update(line.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


class Probe:
    """Hashes of files and directory listings, each computed once per run."""

    def __init__(self, cache: Path | None = None) -> None:
        self._files: dict[str, str] = {}
        self._dirs: dict[str, str] = {}
        #: the cache directory itself is not part of any listing (creating it must not invalidate)
        self._cache = os.path.abspath(cache) if cache is not None else None

    def file(self, path: str) -> str:
        if path not in self._files:
            from mtplint.files import open_regular

            try:
                # in pieces: a dependency may be any size; a FIFO or device is not opened (ABSENT)
                with open_regular(path) as handle:
                    digest = sha256()
                    while piece := handle.read(1 << 20):
                        digest.update(piece)
                self._files[path] = digest.hexdigest()
            except OSError:
                self._files[path] = ABSENT
        return self._files[path]

    def directory(self, path: str) -> str:
        if path not in self._dirs:
            try:
                names = sorted(name for name in os.listdir(path)
                               if os.path.join(os.path.abspath(path), name) != self._cache)
            except OSError:
                self._dirs[path] = ABSENT
            else:
                self._dirs[path] = sha256_hex("\0".join(names).encode("utf-8", "surrogateescape"))
        return self._dirs[path]


class Cache:
    """Entries of one run's settings; ``get``/``put`` by a linted file's name and bytes."""

    def __init__(self, directory: Path, settings_key: str) -> None:
        self.directory = directory
        self.settings_key = settings_key
        self.probe = Probe(directory)
        self._ready = False
        self._refused: ForeignDirectory | None = None
        self.hits = 0
        self.misses = 0

    def key(self, display: str, data: bytes) -> str:
        digest = sha256(f"{FORMAT}\0{self.settings_key}\0{display}\0".encode("utf-8", "surrogateescape"))
        digest.update(data)
        return digest.hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / f"v{FORMAT}" / key[:2] / f"{key[2:]}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The record stored for ``key`` if its entry is intact and its dependencies unchanged; any
        other entry (missing, unreadable, damaged, of another shape) is a miss, replaced by :meth:`put`."""
        entry = _read_entry(self._path(key))
        if entry is None or not self._still_valid(entry["deps"]):
            self.misses += 1
            return None
        self.hits += 1
        record: dict[str, Any] = entry["record"]
        return record

    def _still_valid(self, deps: dict[str, dict[str, str]]) -> bool:
        files, dirs = deps["files"], deps["dirs"]
        return (all(self.probe.file(path) == digest for path, digest in files.items())
                and all(self.probe.directory(path) == digest for path, digest in dirs.items()))

    def put(self, key: str, record: dict[str, Any], deps: dict[str, dict[str, str]]) -> None:
        """Write an entry (atomically: a concurrent run sees the old entry or the new, never half)."""
        import tempfile  # only a miss writes (~2 ms of start-up for a run of hits)

        try:
            self._prepare()
            path = self._path(key)
            path.parent.mkdir(parents=True, exist_ok=True)
            payload = json.dumps({"deps": deps, "record": record}, ensure_ascii=False,
                                 separators=(",", ":")).encode("utf-8", "surrogateescape")
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(handle, "wb") as out:
                out.write(sha256_hex(payload).encode("ascii") + b"\n" + payload)
            os.replace(temporary, path)
        except (OSError, ValueError):
            pass  # a read-only tree, a directory of the user's, or a name no encoding writes: lint without caching

    def _prepare(self) -> None:
        if self._ready:
            return
        if self._refused is not None:
            raise self._refused  # once refused, the directory is not looked at again this run
        try:
            _prepare(self.directory)
        except ForeignDirectory as error:
            self._refused = error
            raise
        self._ready = True


class ForeignDirectory(OSError):
    """The cache location exists but mtplint did not create it: nothing is written there."""


def _read_entry(path: Path) -> dict[str, Any] | None:
    """An entry as :meth:`Cache.put` wrote it: its digest line matches the JSON after it, and its
    ``deps`` map file and directory names to digests; None for anything else."""
    from mtplint.files import read_regular

    try:
        data = read_regular(path, MAX_ENTRY_BYTES)
    except OSError:
        return None
    digest, _, payload = data.partition(b"\n")
    if digest != sha256_hex(payload).encode("ascii"):
        return None
    try:
        entry = json.loads(payload.decode("utf-8", "surrogateescape"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("record"), dict):
        return None
    deps = entry.get("deps")
    if not isinstance(deps, dict) or not all(_names_to_digests(deps.get(kind)) for kind in ("files", "dirs")):
        return None
    return entry


def _names_to_digests(value: Any) -> bool:
    return isinstance(value, dict) and all(type(name) is str and type(digest) is str for name, digest in value.items())


def _prepare(directory: Path) -> None:
    """Make sure ``directory`` is mtplint's own cache directory: create it, marked as its own, for
    backup tools (CACHEDIR.TAG) and for git (``*``), or find it already marked. Raises
    :class:`ForeignDirectory` for a directory that exists without the marker (nothing is written)."""
    try:
        directory.mkdir(parents=True)
    except FileExistsError:
        if not owned(directory):
            raise ForeignDirectory(unusable_reason(directory) or f"{directory}: not an mtplint cache") from None
        return
    # the marker first: a concurrent run that finds the directory before it is marked goes without the cache
    (directory / OWNER_MARKER).write_text(OWNER_TEXT, encoding="utf-8")
    (directory / "CACHEDIR.TAG").write_text(CACHEDIR_TAG, encoding="utf-8")
    (directory / ".gitignore").write_text("# created by mtplint\n*\n", encoding="utf-8")


def owned(directory: Path) -> bool:
    """Whether mtplint created ``directory`` (it holds the marker written at creation, as a file)."""
    return not directory.is_symlink() and (directory / OWNER_MARKER).is_file() \
        and not (directory / OWNER_MARKER).is_symlink()


def unusable_reason(directory: Path) -> str | None:
    """Why the cache cannot live in ``directory`` (None: it is mtplint's, or does not exist yet and
    will be created): a run then lints without the cache rather than write into a folder of the user's."""
    if not os.path.lexists(directory):
        return None
    if directory.is_symlink():
        return f"{directory} is a symbolic link"
    if not directory.is_dir():
        return f"{directory} exists and is not a directory"
    if owned(directory):
        return None
    return f"{directory} already existed and was not created by mtplint"


def _plain_json(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is made of what JSON writes back as itself: str-keyed dicts, lists,
    strings, numbers, booleans and None (not YAML's int keys, tuples, dates or sets)."""
    if depth > 100:
        return False
    if value is None or isinstance(value, (str, bool, int, float)):
        return True
    if type(value) is list:
        return all(_plain_json(item, depth + 1) for item in value)
    if type(value) is dict:
        return all(type(key) is str and _plain_json(item, depth + 1) for key, item in value.items())
    return False


class ValidDocuments:
    """Documents that passed their JSON schema (a configuration's table, a house-rule file), kept
    in the cache directory so a later run given the same document skips the validator: importing
    jsonschema costs ~40 ms, most of a one-file pre-commit run in a project with a configuration.

    A document is found by mtplint's version, the bytes of every schema and the document itself.
    Only successes are kept: a failing document is validated on every run, so its message is the
    one today's schemas give, and a memo can make a run faster, never different.
    """

    def __init__(self, directory: Path, schemas_digest: str) -> None:
        self.directory = directory
        self.schemas_digest = schemas_digest

    def key(self, schema_name: str, document: Any) -> str | None:
        """The document's key, or None when it is not plain JSON data (then it is just validated):
        a YAML ``1:`` key or an ``!!omap`` would dump as the JSON of another document."""
        if not _plain_json(document):
            return None
        try:
            text = json.dumps([FORMAT, __version__, self.schemas_digest, schema_name, document],
                              sort_keys=True, ensure_ascii=False)
        except (TypeError, ValueError):  # e.g. a TOML date: no key, no memo
            return None
        return sha256_hex(text.encode("utf-8", "surrogateescape"))

    def _path(self, key: str) -> Path:
        return self.directory / f"v{FORMAT}" / "valid" / key

    def known(self, key: str) -> bool:
        return self._path(key).is_file()

    def add(self, key: str) -> None:
        try:
            _prepare(self.directory)
            path = self._path(key)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()  # an empty marker: its name is all it says
        except OSError:
            pass  # a read-only tree: validate every time


def settings_key(parts: dict[str, Any]) -> str:
    text = json.dumps({"format": FORMAT, "package": package_fingerprint(), **parts}, sort_keys=True, default=str)
    return sha256_hex(text.encode("utf-8", "surrogateescape"))


class RefusedClean(OSError):
    """``mtplint clean`` found something at the cache location that it must not delete."""


#: what a cache directory holds: at its top, these files and ``v<FORMAT>`` folders; below those,
#: folders of entries (two hex digits) and of remembered documents (``valid``) holding entries
#: (hex names, ``.json`` for findings) and the temporaries an interrupted write may leave (``.tmp-*``)
_TOP_FILES = frozenset({OWNER_MARKER, "CACHEDIR.TAG", ".gitignore"})


def _entry_name(name: str) -> bool:
    stem = name.removesuffix(".json")
    return name.startswith(".tmp-") or (bool(stem) and all(char in "0123456789abcdef" for char in stem))


def foreign_contents(directory: Path) -> list[str]:
    """What in ``directory`` is not a cache entry (relative paths, a few at most)."""
    found: list[str] = []

    def note(relative: str) -> bool:
        found.append(relative)
        return len(found) >= 5

    for top in sorted(os.scandir(directory), key=lambda entry: entry.name):
        if top.name in _TOP_FILES and top.is_file(follow_symlinks=False):
            continue
        if not (top.name[:1] == "v" and top.name[1:].isdigit() and top.is_dir(follow_symlinks=False)):
            if note(top.name):
                return found
            continue
        for group in os.scandir(top.path):
            inner = f"{top.name}/{group.name}"
            if not ((len(group.name) == 2 and _entry_name(group.name)) or group.name == "valid") \
                    or not group.is_dir(follow_symlinks=False):
                if note(inner):
                    return found
                continue
            for entry in os.scandir(group.path):
                if not (_entry_name(entry.name) and entry.is_file(follow_symlinks=False)) \
                        and note(f"{inner}/{entry.name}"):
                    return found
    return found


def _protected(directory: Path) -> str | None:
    """Why ``directory`` is never removed whatever it holds: the working directory (or one of its
    parents), the home directory, a repository's root, the filesystem's root."""
    real = os.path.realpath(directory)
    here = os.path.realpath(os.getcwd())
    if real == here or here.startswith(real.rstrip(os.sep) + os.sep):
        return "it is the working directory or one of its parents"
    home = os.path.expanduser("~")
    if home != "~" and real == os.path.realpath(home):
        return "it is the home directory"
    if os.path.lexists(os.path.join(real, ".git")):
        return "it is the root of a git repository"
    if os.path.dirname(real) == real:
        return "it is the root of the filesystem"
    return None


def clean(root: Path) -> list[Path]:
    """Remove the cache directory; returns what was removed. Only a directory mtplint created (it
    holds the marker) and that holds nothing but cache entries is removed; anything else raises
    :class:`RefusedClean` naming the reason, with every file left in place (as ``ruff clean``
    leaves a ``RUFF_CACHE_DIR`` of the user's)."""
    directory = cache_dir(root)
    if not os.path.lexists(directory):
        return []
    hint = " (MTPLINT_CACHE_DIR names it)" if os.environ.get("MTPLINT_CACHE_DIR") else ""
    refuse = f"refusing to remove {directory}{hint}: "
    if directory.is_symlink() or not directory.is_dir():
        raise RefusedClean(refuse + "it is not a directory mtplint created")
    protected = _protected(directory)
    if protected is not None:
        raise RefusedClean(refuse + protected)
    if not owned(directory):
        raise RefusedClean(refuse + f"mtplint did not create it (no {OWNER_MARKER} in it)")
    others = foreign_contents(directory)
    if others:
        raise RefusedClean(refuse + f"it holds files that are not mtplint's cache ({', '.join(others)})")
    import shutil

    shutil.rmtree(directory)
    return [directory]
