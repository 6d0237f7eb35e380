"""Rewrite every artefact that is derived from other files of this repository; ``--check`` only
says which are stale.

    python tools/regenerate.py          # after editing rules/*.yaml or an engine's flag tables
    python tools/regenerate.py --check  # exit 1 naming each stale artefact (tests/test_regenerate.py)

The artefacts:

* ``mtplint/checks/builtin_rules.json`` and ``builtin_docs.json``: ``rules/*.yaml`` parsed, so that
  start-up reads JSON instead of forty YAML files (the documentation kept apart: most runs never
  read it). Each records a checksum of the rule files, and a stale copy is ignored at run time.
* ``mtplint/engines/data/vllm-tables.json`` and ``sglang-tables.json``: each engine's per-release
  flag tables in one file, each row several releases share written once (see
  :mod:`mtplint.engines.compact`).
* ``mtplint/engines/data/vllm-flags.txt`` and ``sglang-flags.txt``: for each option string the
  releases that register it and how each reads it, so that a launch whose release is not pinned is
  narrowed without reading every release's table.

Not here: the per-release flag tables themselves (``tools/gen_*.py``), which are generated from
released engine wheels that have to be downloaded first (CONTRIBUTING.md, "Adding an engine flag
table"); run this afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mtplint.checks.catalog import COMPILED_CATALOG, COMPILED_DOCS, _rule_files, compile_catalog  # noqa: E402
from mtplint.engines import sglang, vllm  # noqa: E402
from mtplint.engines.compact import written_index  # noqa: E402


class Artefact:
    """A file and how to render its content from the files it is derived from."""

    def __init__(self, path: str | os.PathLike[str], render: Callable[[], str]) -> None:
        self.path = Path(path)
        self.render = render

    def current(self, text: str) -> bool:
        try:
            return self.path.read_text(encoding="utf-8") == text
        except OSError:
            return False


def _indented(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def artefacts() -> list[Artefact]:
    # both catalog files come from one pass over the rule files
    catalog = cache(lambda: compile_catalog(_rule_files()))
    found = [Artefact(COMPILED_CATALOG, lambda: _indented(catalog()[0])),
             Artefact(COMPILED_DOCS, lambda: _indented(catalog()[1]))]
    for tables in (vllm.TABLE_FILES, sglang.TABLE_FILES):
        # the form TableFiles.write gives them
        found.append(Artefact(tables.compact,
                              lambda tables=tables: json.dumps(tables.compacted(), separators=(",", ":")) + "\n"))
    for engine in (vllm, sglang):
        assert engine.TABLE_FILES.flag_index is not None
        found.append(Artefact(engine.TABLE_FILES.flag_index,
                              lambda engine=engine: written_index(engine.flag_index())))
    return found


def main(argv: Sequence[str] | None = None, chosen: Sequence[Artefact] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if an artefact is stale")
    args = parser.parse_args(argv)
    stale = []
    for artefact in chosen if chosen is not None else artefacts():
        text = artefact.render()
        if artefact.current(text):
            continue
        stale.append(artefact)
        where = artefact.path.relative_to(ROOT) if artefact.path.is_relative_to(ROOT) else artefact.path
        if args.check:
            print(f"stale: {where}")
        else:
            artefact.path.write_text(text, encoding="utf-8")
            print(f"wrote {where}")
    if args.check and stale:
        print("run: python tools/regenerate.py", file=sys.stderr)
        return 1
    if not stale:
        print("every derived artefact is current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
