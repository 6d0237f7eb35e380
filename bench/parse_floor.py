"""The parse floor: the least work any linter of these files must do, run as its own process.

Reads a list of files (one path a line, relative to the current directory) and parses each one:
``*.yaml``/``*.yml`` into YAML node graphs with PyYAML's libyaml composer (``yaml.compose_all`` with
``CSafeLoader``, the loader mtplint's own YAML reader uses), everything else as a shell script with
tree-sitter-bash (the parser mtplint's shell extractor uses). Files are read and decoded as UTF-8 the
way mtplint reads them. It is started as a subprocess, like the linters it is compared with, so the
interpreter start-up and the imports of PyYAML and tree-sitter are part of the floor.

    python bench/parse_floor.py FILE_LIST
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(list_file: str) -> int:
    import tree_sitter_bash
    import yaml
    from tree_sitter import Language, Parser

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    parser = Parser(Language(tree_sitter_bash.language()))
    failures = 0
    for line in Path(list_file).read_text(encoding="utf-8").splitlines():
        if not line:
            continue
        data = Path(line).read_bytes()
        if line.endswith((".yaml", ".yml")):
            try:
                for _ in yaml.compose_all(data.decode("utf-8", "replace"), Loader=loader):
                    pass
            except yaml.YAMLError:
                failures += 1
        else:
            parser.parse(data.decode("utf-8", "replace").encode("utf-8"))
    print(f"parse floor: {failures} YAML files failed to parse", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
