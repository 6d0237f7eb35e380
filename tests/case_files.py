"""The YAML case files of ``tests/rules`` and ``tests/fixes``, parsed once per test process.

Several modules build their parameters from the same files when they are collected, and each
xdist worker collects every module: a file is read and parsed once, by libyaml when PyYAML was
built with it (``test_case_files`` holds both loaders to the same reading of every file). The
parsed data is shared: the tests read it and never change it.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

TESTS = Path(__file__).parent
RULE_CASES = TESTS / "rules"
FIX_CASES = TESTS / "fixes"

#: libyaml's safe loader, or PyYAML's own where the wheel has no libyaml
LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@cache
def case_file(path: Path) -> Any:
    """The parsed ``path`` (a rule's ``tests/rules/<CODE>.yaml`` or a fix's ``tests/fixes/<CODE>.yaml``)."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=LOADER)


def case_files(folder: Path) -> list[Path]:
    """The case files of ``folder``, in name order."""
    return sorted(folder.glob("*.yaml"))
