"""mtplint's cache directory itself, below everything that is stored in it: where it is, how a
directory is made mtplint's own (and recognised as such), and the memo of documents that passed
their JSON schema (:class:`ValidDocuments`), which the rule catalog uses while loading house rules
and configuration. The entries of linted files are :mod:`mtplint.cache`'s."""

from __future__ import annotations

import json
import os

from mtplint import __version__
from mtplint.digest import sha256_hex
from mtplint.pathtext import is_dir, is_file, is_symlink, join, normalized

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: bump when the entry format changes (an entry of the format before the digest line is a miss
#: under the digest check, and rewritten, so that change kept 1)
FORMAT = 1
CACHE_DIR_NAME = ".mtplint_cache"
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by mtplint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)
#: written only into a directory mtplint has just created: what makes the directory its own (a
#: CACHEDIR.TAG alone does not, an older mtplint wrote one into existing directories)
OWNER_MARKER = ".mtplint-cache-owner"
OWNER_TEXT = ("This directory was created by mtplint as its cache; `mtplint clean` removes it.\n"
              "mtplint writes only into a cache directory holding this file.\n")


def cache_dir(root: str | os.PathLike[str]) -> str:
    configured = os.environ.get("MTPLINT_CACHE_DIR")
    return normalized(configured) if configured else join(normalized(root), CACHE_DIR_NAME)


class ForeignDirectory(OSError):
    """The cache location exists but mtplint did not create it: nothing is written there."""


def prepare(directory: str) -> None:
    """Make sure ``directory`` is mtplint's own cache directory: create it, marked as its own, for
    backup tools (CACHEDIR.TAG) and for git (``*``), or find it already marked. Raises
    :class:`ForeignDirectory` for a directory that exists without the marker (nothing is written)."""
    try:
        os.makedirs(directory)
    except FileExistsError:
        if not owned(directory):
            raise ForeignDirectory(unusable_reason(directory) or f"{directory}: not an mtplint cache") from None
        return
    # the marker first: a concurrent run that finds the directory before it is marked goes without the cache
    for name, text in ((OWNER_MARKER, OWNER_TEXT), ("CACHEDIR.TAG", CACHEDIR_TAG),
                       (".gitignore", "# created by mtplint\n*\n")):
        with open(os.path.join(directory, name), "w", encoding="utf-8") as file:
            file.write(text)


def owned(directory: str) -> bool:
    """Whether mtplint created ``directory`` (it holds the marker written at creation, as a file)."""
    marker = os.path.join(directory, OWNER_MARKER)
    return not is_symlink(directory) and is_file(marker) and not is_symlink(marker)


def unusable_reason(directory: str) -> str | None:
    """Why the cache cannot live in ``directory`` (None: it is mtplint's, or does not exist yet and
    will be created): a run then lints without the cache rather than write into a folder of the user's."""
    if not os.path.lexists(directory):
        return None
    if is_symlink(directory):
        return f"{directory} is a symbolic link"
    if not is_dir(directory):
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
    jsonschema costs more than the rest of a one-file pre-commit run in a project with a configuration.

    A document is found by mtplint's version, the bytes of every schema and the document itself.
    Only successes are kept: a failing document is validated on every run, so its message is the
    one today's schemas give, and a memo can make a run faster, never different.
    """

    def __init__(self, directory: str, schemas_digest: str) -> None:
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

    def _path(self, key: str) -> str:
        return os.path.join(self.directory, f"v{FORMAT}", "valid", key)

    def known(self, key: str) -> bool:
        return is_file(self._path(key))

    def add(self, key: str) -> None:
        try:
            prepare(self.directory)
            path = self._path(key)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o666))  # an empty marker: its name is all it says
        except OSError:
            pass  # a read-only tree: validate every time
