"""Progress of a long ``check`` on standard error, when it is a terminal.

A run over a large tree (7,000 files take tens of seconds) would otherwise print nothing until it
ends. One line -- files linted of files found (``+`` while the walk still finds more), findings so
far -- is redrawn in place with ``\r``, at most :data:`REDRAW_SECONDS` apart, from
:data:`FIRST_DRAW_SECONDS` into the run (a short run never shows it), and erased before the report
is written. Nothing is drawn when standard error is not a terminal (a pipe, CI, a file) or with
``--quiet``; the report itself (standard output, or ``-o FILE``) never holds any of it.

"Findings so far" counts what the rules found file by file, before ``noqa`` comments and
``per-file-ignores`` remove some: the report's total can be lower.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

#: a run shorter than this shows nothing
FIRST_DRAW_SECONDS = 0.5
#: the line is redrawn at most this often (a terminal redrawn for every file slows the run)
REDRAW_SECONDS = 0.1


class Progress:
    """Counts of one run's files and findings, drawn on a terminal's line."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._started = time.monotonic()
        self._next_draw = self._started + FIRST_DRAW_SECONDS
        self.found = 0
        self.done = 0
        self.findings = 0
        self.walking = True
        self._shown = 0  # characters on the line now (0: nothing drawn)
        try:
            self._columns = os.get_terminal_size(stream.fileno()).columns or 80  # 0: a pty never sized
        except (AttributeError, ValueError, OSError):
            self._columns = 80

    def add_found(self) -> None:
        self.found += 1
        self._maybe_draw()

    def add_done(self, findings: int) -> None:
        self.done += 1
        self.findings += findings
        self._maybe_draw()

    def walk_over(self) -> None:
        self.walking = False
        self._maybe_draw()

    def line(self) -> str:
        total = f"{self.found}{'+' if self.walking else ''}"
        found = f"{self.findings} finding{'s' if self.findings != 1 else ''} so far"
        return f"mtplint: {self.done}/{total} files linted, {found}"

    def _maybe_draw(self) -> None:
        now = time.monotonic()
        if now < self._next_draw:
            return
        self._next_draw = now + REDRAW_SECONDS
        # never as wide as the terminal: a line that wraps cannot be redrawn in place
        text = self.line()[:max(self._columns - 1, 1)]
        self._stream.write("\r" + text.ljust(self._shown))
        self._stream.flush()
        self._shown = len(text)

    def finish(self) -> None:
        """Erase the line, so that nothing of it is left above the report."""
        if self._shown:
            self._stream.write("\r" + " " * self._shown + "\r")
            self._stream.flush()
            self._shown = 0

