"""Which fixed files ``--fix`` may write: those of the project it was run on.

A fix can edit another file than the one linted -- a launch's ``--config`` file, the ``.env`` of a
compose file -- and such a file may lie anywhere the launch points (``--config ../shared/cfg.yaml``,
``/etc/vllm/vllm.env``). ``mtplint check --fix`` writes only below the project root (the directory
it runs in) or one of the paths it was given, as ruff fixes only the files it lints; a fix of any
other file is reported as not written, and ``--diff`` leaves it out too.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from mtplint.fix.write import WriteFailure
from mtplint.source import SourceFile


def within_project(changed: Sequence[tuple[SourceFile, str]], root: Path,
                   paths: Sequence[Path]) -> tuple[list[tuple[SourceFile, str]], list[WriteFailure]]:
    """``changed`` split into the files ``--fix`` may write and a failure for each of the others."""
    folders = [os.path.realpath(root)]
    files = set()
    for path in paths:
        real = os.path.realpath(path)
        if os.path.isdir(real):
            folders.append(real)
        else:
            files.add(real)
    allowed: list[tuple[SourceFile, str]] = []
    refused: list[WriteFailure] = []
    for source, text in changed:
        real = os.path.realpath(source.path)
        if real in files or any(real.startswith(folder.rstrip(os.sep) + os.sep) for folder in folders):
            allowed.append((source, text))
        else:
            refused.append(WriteFailure(source, "cannot write fix: the file is outside the project being linted "
                                                f"({os.path.realpath(root)}); fix it there, or lint from a folder "
                                                "that holds it"))
    return allowed, refused
