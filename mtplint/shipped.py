"""Files shipped inside the package (engine flag tables, catalogs, rules, schemas).

Read straight from the directory next to the modules: ``importlib.resources`` pulls in zipfile and
tempfile, ~8 ms of every run's start-up, for zip imports that a wheel installed by pip never uses.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(os.path.dirname(os.path.abspath(__file__)))


def package_path(*parts: str) -> Path:
    """A path inside the installed ``mtplint`` package."""
    return PACKAGE_DIR.joinpath(*parts)
