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
A cache can therefore make a run faster, never different. ``check`` also keeps there which fixes
``--fix`` would refuse, and why (:func:`mtplint.fix.verify.verified`): an entry keyed by the settings
and the findings that offer a fix, depending on every file that fixing read.

It also remembers which configurations and house-rule files passed their JSON schema
(:class:`mtplint.cache_directory.ValidDocuments`), so a run does not import the validator for documents it has seen.

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
(:func:`mtplint.cache_directory.unusable_reason`), and ``mtplint clean`` refuses it (:func:`clean`).
"""

from __future__ import annotations

import json
import os
from functools import cache

from mtplint import __version__
from mtplint.analysis import FileResult, LaunchResult, RecordingLoader, RunGroup
from mtplint.cache_directory import (
    FORMAT,
    OWNER_MARKER,
    ForeignDirectory,
    cache_dir,
    owned,
    prepare,
)
from mtplint.checks import Edit, Finding, Fix
from mtplint.digest import sha256, sha256_hex
from mtplint.files import open_regular, read_regular
from mtplint.pathtext import is_dir, is_symlink, normalized, parent_dir, path_parts, resolved_path
from mtplint.records import Record
from mtplint.source import Diagnostic, Span

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    from mtplint.checks.catalog import Rule

#: the largest entry file read (a file's record is its findings and the lines they show: kilobytes)
MAX_ENTRY_BYTES = 64 << 20
ABSENT = "-"


@cache
def package_fingerprint() -> str:
    """Sizes and modification times of the files of the mtplint package (a few hundred stats), once
    per process: a run opens a cache per configuration, and the code a process runs is the code it
    loaded, whatever is installed over it later."""
    package = parent_dir(resolved_path(__file__))
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
                        stack.append(entry.path)
                    elif entry.is_file():
                        info = entry.stat()
                        entries.append(f"{entry.path}\0{info.st_size}\0{info.st_mtime_ns}")
        except OSError:
            continue
    for line in sorted(entries):
        digest.update(line.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


class Probe:
    """Hashes of files and directory listings, each computed once per run (or until :meth:`forget`)."""

    def __init__(self, cache: str | None = None) -> None:
        self._files: dict[str, str] = {}
        self._dirs: dict[str, str] = {}
        #: the cache directory itself is not part of any listing (creating it must not invalidate)
        self._cache = os.path.abspath(cache) if cache is not None else None
        self._folders_up: dict[str, tuple[str, ...]] = {}
        #: root as given -> its resolved path and that path's parts
        self._top: dict[str, tuple[str, tuple[str, ...]]] = {}

    def folders_up(self, folder: str, root: str) -> tuple[str, ...]:
        """``folder`` and the folders above it up to ``root`` (only ``folder`` when it is outside
        ``root``), worked out once per folder in a run: the files of one folder share them."""
        chain = self._folders_up.get(folder)
        if chain is None:
            known = self._top.get(root)
            if known is None:
                resolved = resolved_path(root)
                known = self._top[root] = (resolved, path_parts(resolved))
            top, top_parts = known
            directory = normalized(folder)
            found: list[str] = []
            while True:
                found.append(directory)
                parent = parent_dir(directory)
                # stop at the root, at "/", and outside the root (the root is not among its parents)
                if directory == top or parent == directory or path_parts(directory)[:len(top_parts)] != top_parts:
                    break
                directory = parent
            chain = self._folders_up[folder] = tuple(found)
        return chain

    def forget(self) -> None:
        """Forget the hashes and folders worked out so far (a run over a large tree does every so
        many files, so that its memory does not grow with the tree): asked again, they are worked
        out again from the disk, which is what each entry is checked against anyway."""
        self._files.clear()
        self._dirs.clear()
        self._folders_up.clear()

    def file(self, path: str) -> str:
        if path not in self._files:
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

    def __init__(self, directory: str, settings_key: str) -> None:
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

    def _path(self, key: str) -> str:
        return os.path.join(self.directory, f"v{FORMAT}", key[:2], f"{key[2:]}.json")

    def get(self, key: str, catalog: Mapping[str, Rule]) -> FileResult | None:
        """The result stored for ``key`` if its entry is intact and its dependencies unchanged; any
        other entry (missing, unreadable, damaged, of another shape) is a miss, replaced by :meth:`put`.
        ``catalog``: the rules of the run, by code (an entry names its findings' rules)."""
        record = self.get_record(key)
        result = None
        if record is not None:
            try:
                result = file_result_from(record, catalog)
            except (KeyError, IndexError, TypeError, ValueError, AttributeError):
                result = None  # written by another version of the entry's format, or not by mtplint
        if result is None:
            self.misses += 1
            return None
        self.hits += 1
        return result

    def get_record(self, key: str) -> dict[str, Any] | None:
        """The JSON record of the entry for ``key``, if the entry is intact and its dependencies unchanged."""
        entry = _read_entry(self._path(key))
        if entry is None or not self._still_valid(entry["deps"]):
            return None
        record: dict[str, Any] = entry["record"]
        return record

    def _still_valid(self, deps: dict[str, dict[str, str]]) -> bool:
        files, dirs = deps["files"], deps["dirs"]
        return (all(self.probe.file(path) == digest for path, digest in files.items())
                and all(self.probe.directory(path) == digest for path, digest in dirs.items()))

    def put(self, key: str, result: FileResult, deps: Dependencies) -> None:
        """Write an entry (atomically: a concurrent run sees the old entry or the new, never half)."""
        self.put_record(key, file_result_json(result), deps)

    def put_record(self, key: str, record: dict[str, Any], deps: Dependencies) -> None:
        """Write the entry of a JSON ``record`` (:meth:`put`)."""
        import tempfile  # noqa: PLC0415 - only a miss writes: a run of hits needs no tempfile

        try:
            self.prepare()
            path = self._path(key)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            payload = json.dumps({"deps": {"files": deps.files, "dirs": deps.dirs}, "record": record},
                                 ensure_ascii=False,
                                 separators=(",", ":")).encode("utf-8", "surrogateescape")
            handle, temporary = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
            with os.fdopen(handle, "wb") as out:
                out.write(sha256_hex(payload).encode("ascii") + b"\n" + payload)
            os.replace(temporary, path)
        except (OSError, ValueError):
            pass  # a read-only tree, a directory of the user's, or a name no encoding writes: lint without caching

    def prepare(self) -> None:
        if self._ready:
            return
        if self._refused is not None:
            raise self._refused  # once refused, the directory is not looked at again this run
        try:
            prepare(self.directory)
        except ForeignDirectory as error:
            self._refused = error
            raise
        self._ready = True


class Dependencies(Record):
    """What a cache entry's result depends on besides its file: the digests of the other files its
    analysis read (or :data:`ABSENT`), and of the listings of the directories involved."""

    __slots__ = ("files", "dirs")
    files: dict[str, str]
    dirs: dict[str, str]

    def __init__(self, files: dict[str, str], dirs: dict[str, str]) -> None:
        self.files = files
        self.dirs = dirs


def dependencies(path: str, loader: RecordingLoader, group: RunGroup) -> Dependencies:
    """What the result of the file at ``path`` depends on, from the files its analysis asked for
    ``loader``; each file's and directory's digest computed once for the run (``group.probe``)."""
    root = group.settings.pipeline.root
    if group.probe is None:
        group.probe = group.cache.probe if group.cache is not None else Probe(cache_dir(root))
    probe = group.probe
    files: dict[str, str] = {}
    directories: set[str] = set()
    for name, source in loader.requested.items():
        # the digest of the bytes read, or (a binary file, a folder, nothing there) what the probe sees
        files[name] = source.digest if source is not None and source.digest else probe.file(name)
        directories.add(os.path.dirname(name))
    # files found by listing a directory (compose override files, version pins up to the root,
    # systemd drop-ins) appear or disappear without being asked for by name
    directories.update(probe.folders_up(os.path.dirname(os.path.abspath(path)), root))
    return Dependencies(files, {name: probe.directory(name) for name in sorted(directories)})


def files_dependencies(paths: Iterable[str], probe: Probe, root: str) -> Dependencies:
    """What a result worked out from the files at ``paths`` (absolute) depends on: their bytes, and
    the listings of their folders and of those above them up to ``root``."""
    files = {path: probe.file(path) for path in sorted(paths)}
    directories: set[str] = set()
    for path in files:
        directories.update(probe.folders_up(os.path.dirname(path), root))
    return Dependencies(files, {name: probe.directory(name) for name in sorted(directories)})


# -- an entry's result as JSON, and back ------------------------------------------------------------

def _span_json(span: Span | None) -> list[Any] | None:
    if span is None:
        return None
    return [span.file, span.start, span.end, span.line, span.column, span.end_line, span.end_column]


def _span_from(data: list[Any] | None) -> Span | None:
    return None if data is None else Span(*data)


def _edit_json(edit: Edit) -> list[Any]:
    recipe = getattr(edit, "recipe", None)
    if recipe is not None:
        # a Python edit stays what to do: working it out (libcst) is left to whoever needs its text
        return ["python", recipe()]
    return [_span_json(edit.span), edit.content]


def _edit_from(data: list[Any]) -> Edit:
    if data[0] == "python":
        from mtplint.edits.pyedit import PythonEdit  # noqa: PLC0415 - fixing: only a cached fix that edits Python

        return PythonEdit.from_recipe(data[1])
    return Edit(Span(*data[0]), data[1])


def _finding_json(finding: Finding) -> list[Any]:
    fix = finding.fix
    return [finding.rule.code, finding.message, _span_json(finding.span),
            None if fix is None else [fix.applicability, fix.message, [_edit_json(edit) for edit in fix.edits]],
            _span_json(finding.launch_span), finding.severity_override]


def _finding_from(data: list[Any], catalog: Mapping[str, Rule]) -> Finding:
    code, message, span, fix, launch, severity = data
    return Finding(catalog[code], message, Span(*span),
                   None if fix is None else Fix(fix[0], fix[1], [_edit_from(edit) for edit in fix[2]]),
                   _span_from(launch), severity_override=severity)


def _diagnostics_json(items: list[Diagnostic]) -> list[list[Any]]:
    return [[item.code, item.message, _span_json(item.span)] for item in items]


def _diagnostics_from(items: list[list[Any]]) -> list[Diagnostic]:
    return [Diagnostic(code, message, Span(*span)) for code, message, span in items]


def file_result_json(result: FileResult) -> dict[str, Any]:
    """``result`` as JSON data (the part of a cache entry :func:`file_result_from` reads back)."""
    return {
        "skipped": result.skipped, "diagnostics": _diagnostics_json(result.diagnostics), "errors": result.errors,
        "shown": result.shown,
        "launches": [[list(launch.key), launch.context, launch.via_other, launch.path, launch.text, launch.noqa,
                      None if launch.span_key is None else list(launch.span_key), launch.end,
                      [_finding_json(finding) for finding in launch.findings],
                      _diagnostics_json(launch.diagnostics), launch.without_gpu, launch.shown]
                     for launch in result.launches],
    }


def file_result_from(data: dict[str, Any], catalog: Mapping[str, Rule]) -> FileResult:
    """The result :func:`file_result_json` wrote, its findings' rules taken from ``catalog``."""
    launches = []
    for key, context, via_other, path, text, noqa, span_key, end, findings, diagnostics, without_gpu, shown \
            in data["launches"]:
        launches.append(LaunchResult((key[0], key[1]), context, via_other, path, text, noqa,
                                     None if span_key is None else (span_key[0], span_key[1]), end,
                                     [_finding_from(finding, catalog) for finding in findings],
                                     _diagnostics_from(diagnostics), without_gpu, shown))
    return FileResult(data["skipped"], _diagnostics_from(data["diagnostics"]), data["errors"], launches,
                      data["shown"])


def _read_entry(path: str) -> dict[str, Any] | None:
    """An entry as :meth:`Cache.put` wrote it: its digest line matches the JSON after it, and its
    ``deps`` map file and directory names to digests; None for anything else."""
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


def foreign_contents(directory: str) -> list[str]:
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


def _protected(directory: str) -> str | None:
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


def clean(root: str | os.PathLike[str]) -> list[str]:
    """Remove the cache directory; returns what was removed. Only a directory mtplint created (it
    holds the marker) and that holds nothing but cache entries is removed; anything else raises
    :class:`RefusedClean` naming the reason, with every file left in place (as ``ruff clean``
    leaves a ``RUFF_CACHE_DIR`` of the user's)."""
    directory = cache_dir(root)
    if not os.path.lexists(directory):
        return []
    hint = " (MTPLINT_CACHE_DIR names it)" if os.environ.get("MTPLINT_CACHE_DIR") else ""
    refuse = f"refusing to remove {directory}{hint}: "
    if is_symlink(directory) or not is_dir(directory):
        raise RefusedClean(refuse + "it is not a directory mtplint created")
    protected = _protected(directory)
    if protected is not None:
        raise RefusedClean(refuse + protected)
    if not owned(directory):
        raise RefusedClean(refuse + f"mtplint did not create it (no {OWNER_MARKER} in it)")
    others = foreign_contents(directory)
    if others:
        raise RefusedClean(refuse + f"it holds files that are not mtplint's cache ({', '.join(others)})")
    import shutil  # noqa: PLC0415 - dispatch: `mtplint clean` only

    shutil.rmtree(directory)
    return [directory]
