"""The wheel's build hook (hatchling's ``custom`` hook, configured in ``pyproject.toml``).

An installed mtplint reads its compiled rule catalog (``mtplint/checks/builtin_rules.json`` and
``builtin_docs.json``) without checksumming the rule files it ships on every run. That holds only if
the wheel ships the catalog compiled from those very files, so a wheel whose compiled catalog is
stale (a rule file edited, ``tools/regenerate.py`` not run yet) is not built at all. An editable
install is built as usual: it reads the checkout's ``rules/``, and checks the catalog on every run.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CompiledCatalogCheck(BuildHookInterface):  # type: ignore[type-arg]
    """Refuse to build a wheel whose compiled rule catalog is stale."""

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version != "standard":
            return
        sys.path.insert(0, self.root)
        try:
            from mtplint.checks.catalog import stale_compiled_files

            stale = stale_compiled_files()
        finally:
            sys.path.remove(self.root)
        if stale:
            names = ", ".join(os.path.basename(path) for path in stale)
            raise RuntimeError(f"{names}: not compiled from rules/*.yaml as they are; run: python tools/regenerate.py")
