"""Write ``mtplint/checks/builtin_rules.json`` and ``builtin_docs.json``, the compiled form of
``rules/*.yaml``.

The YAML files stay the source of truth (they ship in the wheel too); the JSON only saves start-up
the cost of parsing them (the documentation in a file of its own: most runs never read it). Each
records a digest of the files it was made from, so a stale copy is ignored at run time (the YAML is
parsed instead) and fails ``tests/test_cache.py``. Run after editing a rule::

    python tools/compile_rules.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mtplint.checks.catalog import COMPILED_CATALOG, COMPILED_DOCS, _rule_files, compile_catalog


def main() -> int:
    compiled, docs = compile_catalog(_rule_files())
    for path, data in ((COMPILED_CATALOG, compiled), (COMPILED_DOCS, docs)):
        path.write_text(json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {COMPILED_CATALOG} and {COMPILED_DOCS.name} ({len(compiled['rules'])} rules)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
