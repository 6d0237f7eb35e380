"""Which files ``--fix`` may write. Apart from :mod:`mtplint.fix.write`: the fix engine that
consults it also runs in memory, where nothing is written, and should not load the writing."""

from __future__ import annotations

import os
from collections.abc import Iterable

from mtplint.source import SourceFile


class WriteScope:
    """The files ``--fix`` may write: those being linted -- the files named and those discovered in
    the directories named (or brought in by a file named, as a compose file by its ``.env``). A
    file the launches only read -- a ``--config`` YAML elsewhere, an env file of another project --
    is linted for their sake and its fixes are shown, but it is not written unless it is named too:
    a fix run, like a pre-commit hook, changes only what it was given."""

    def __init__(self, linted: Iterable[str]) -> None:
        # abspath, not realpath: a link written inside a directory named is the user's own file
        self.files = {os.path.abspath(path) for path in linted}

    def allows(self, path: str) -> bool:
        return os.path.abspath(path) in self.files

    def refusal(self, sources: Iterable[SourceFile]) -> str | None:
        """Why a fix editing ``sources`` is not applied (``None``: it may be)."""
        outside = sorted({source.display for source in sources if not self.allows(source.path)})
        if not outside:
            return None
        return (f"it edits {', '.join(outside)}, which is not among the files being linted "
                f"(name {'that file' if len(outside) == 1 else 'those files'} too to fix it)")
