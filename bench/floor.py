"""The honest floor: the work no linter of a tree's launch files can skip, in one process.

Run from a tree's root (``python bench/floor.py .``), it does what ``mtplint check .`` cannot avoid
and nothing more:

1. walk the tree as mtplint does: the folders mtplint never enters skipped
   (``mtplint.discover.DEFAULT_EXCLUDES``), the ``.gitignore`` of every directory honoured with
   pathspec's ``GitIgnoreSpec``, symbolic links to directories not followed;
2. tell each file's kind with mtplint's own function (``mtplint.discover._kind_of``: by name,
   reading the first line only of a file whose name leaves it open) -- files of no kind are not read;
3. read every candidate whole and run mtplint's byte prefilter on it
   (``mtplint.discover.relevant``, the function the lint pipeline calls);
4. parse only the files that pass, with the parsers a linter of each kind needs: libyaml
   (``yaml.compose_all`` with ``CSafeLoader``, node graphs as mtplint's YAML reader builds them) for
   compose files, Kubernetes manifests and other YAML; tree-sitter-bash for shell scripts;
   ``ast.parse`` for Python; a UTF-8 decode and a split into lines for Dockerfiles, INI presets and
   systemd units; and the ``.env`` beside a compose file that passes is read (compose reads it).

It prints what it did to standard error. bench/README.md explains why this is the floor.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
from collections import Counter
from pathlib import Path

import pathspec
import tree_sitter_bash
import yaml
from tree_sitter import Language, Parser

from mtplint.discover import DEFAULT_EXCLUDES, _kind_of, relevant

YAML_KINDS = ("compose", "yaml")
LINE_KINDS = ("dockerfile", "ini", "systemd")


def _ignore_spec(directory: str) -> pathspec.GitIgnoreSpec | None:
    try:
        with open(os.path.join(directory, ".gitignore"), encoding="utf-8", errors="replace") as handle:
            return pathspec.GitIgnoreSpec.from_lines(handle.read().splitlines())
    except OSError:
        return None


def walk(root: str) -> list[tuple[str, str]]:
    """(path, name) of every file below ``root`` a linter must consider, in a stable order."""
    found: list[tuple[str, str]] = []
    # each active .gitignore with the directory prefix its patterns are relative to
    pending: list[tuple[str, list[tuple[str, pathspec.GitIgnoreSpec]]]] = [(root, [])]
    while pending:
        directory, ignores = pending.pop()
        spec = _ignore_spec(directory)
        if spec is not None:
            ignores = [*ignores, (directory.rstrip(os.sep) + os.sep, spec)]
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError:
            continue
        below: list[tuple[str, list[tuple[str, pathspec.GitIgnoreSpec]]]] = []
        for entry in entries:
            is_dir = entry.is_dir(follow_symlinks=False)
            if is_dir and entry.name in DEFAULT_EXCLUDES:
                continue
            if not is_dir and not entry.is_file():
                continue
            if any(spec.match_file(entry.path[len(prefix):] + ("/" if is_dir else ""))
                   for prefix, spec in ignores if entry.path.startswith(prefix)):
                continue
            if is_dir:
                below.append((entry.path, ignores))
            else:
                found.append((entry.path, entry.name))
        pending.extend(reversed(below))
    return found


def floor(root: str) -> Counter[str]:
    """Walk, read, prefilter and parse the tree at ``root``; what was done, counted."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    bash = Parser(Language(tree_sitter_bash.language()))
    counts: Counter[str] = Counter()
    for path, name in walk(root):
        counts["walked"] += 1
        kind = _kind_of(path, name)
        if kind is None:
            continue
        counts["read"] += 1
        with open(path, "rb") as handle:
            data = handle.read()
        if not relevant(data, kind):
            continue
        counts[f"parsed {kind}"] += 1
        text = data.decode("utf-8", "replace")
        if kind in YAML_KINDS:
            try:
                for _ in yaml.compose_all(text, Loader=loader):
                    pass
            except yaml.YAMLError:
                counts["YAML errors"] += 1
            if kind == "compose":
                env = os.path.join(os.path.dirname(path), ".env")
                if os.path.isfile(env):
                    with open(env, "rb") as handle:
                        handle.read().decode("utf-8", "replace").splitlines()
                    counts["read .env"] += 1
        elif kind == "shell":
            bash.parse(text.encode("utf-8"))
        elif kind == "python":
            try:
                ast.parse(text, path)
            except (SyntaxError, ValueError):
                counts["Python errors"] += 1
        elif kind in LINE_KINDS:
            text.splitlines()
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The honest floor: walk, read, prefilter and parse a tree.")
    parser.add_argument("directory", type=Path, help="the tree's root")
    args = parser.parse_args(argv)
    counts = floor(str(args.directory))
    print("floor: " + ", ".join(f"{key} {value}" for key, value in sorted(counts.items())), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
