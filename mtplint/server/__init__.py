"""``mtplint server``: a Language Server Protocol server over standard input and output.

Its dependencies (pygls, lsprotocol) come with the ``server`` extra, ``pip install
'mtplint[server]'``; without them the command says so and exits 2, and nothing else of mtplint
imports them. :mod:`mtplint.server.session` lints the editor's buffers (no LSP types in it);
:mod:`mtplint.server.protocol` speaks the protocol.
"""

from __future__ import annotations

import importlib.util

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

#: what ``mtplint server`` needs beyond mtplint's own dependencies (the ``server`` extra)
SERVER_MODULES = ("pygls", "lsprotocol")
INSTALL_HINT = "pip install 'mtplint[server]'"


def missing_modules() -> list[str]:
    """The server's dependencies that are not installed."""
    return [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]


def run(err: TextIO) -> int:
    """``mtplint server``: serve on standard input/output until the client ends the session;
    exit 2 with the extra to install when the server's dependencies are missing."""
    missing = missing_modules()
    if missing:
        err.write(f"mtplint: error: `mtplint server` needs the `server` extra ({', '.join(missing)} "
                  f"not installed): {INSTALL_HINT}\n")
        return 2
    from mtplint.server.protocol import serve  # noqa: PLC0415 - pygls: only once it is known installed

    return serve()
