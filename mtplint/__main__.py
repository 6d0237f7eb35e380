"""The ``mtplint`` command and ``python -m mtplint``.

The command runs with the cyclic garbage collector off from its first import, as :func:`mtplint.cli.main`
runs the lint (see there why): loading the command's modules allocates enough to trigger young
collections that walk the objects just loaded and free nothing (``docs/startup.md``). Only the
command does this; a program that imports :mod:`mtplint.cli` keeps its collector.
"""

from __future__ import annotations

import gc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn


def run() -> NoReturn:
    gc.disable()
    from mtplint.cli import run as run_command  # noqa: PLC0415 - the collector is off before the command loads

    run_command()


if __name__ == "__main__":
    run()
