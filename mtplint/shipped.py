"""Files shipped inside the package (engine flag tables, catalogs, rules, schemas).

Read straight from the directory next to the modules: ``importlib.resources`` pulls in zipfile and
tempfile, start-up time of every run, for zip imports that a wheel installed by pip never uses.
"""

from __future__ import annotations

import os

from mtplint.pathtext import read_text

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def package_path(*parts: str) -> str:
    """A path inside the installed ``mtplint`` package."""
    return os.path.join(PACKAGE_DIR, *parts)


def read_package_text(*parts: str) -> str:
    """The text of a UTF-8 file inside the installed ``mtplint`` package."""
    return read_text(package_path(*parts))
