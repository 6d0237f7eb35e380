"""Generate ``mtplint/engines/data/vllm/speculative/keys.json``: per vLLM release, the fields of
``SpeculativeConfig`` (the keys ``--speculative-config`` accepts) and the ``method`` values its
type accepts.

Input: unpacked wheels (``pip download vllm==X --no-deps``; ``unzip -d <dir>/src``). The source is
only read with :mod:`ast`; nothing is imported or run. Usage::

    python tools/gen_vllm_spec_keys.py 0.8.2=/tmp/vw/0.8.2/src 0.11.0=/tmp/vw/0.11.0/src ...
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path
from typing import Any

#: fields vLLM fills in itself (``create_speculative_config`` passes them); a user never writes them
INTERNAL = ("target_model_config", "target_parallel_config", "draft_model_config", "draft_parallel_config",
            "enable_chunked_prefill", "disable_log_stats")


def _literal_values(node: ast.expr, aliases: dict[str, ast.expr]) -> list[str] | None:
    """String members of a ``Literal[...]`` (following module-level aliases), or None if not a Literal."""
    if isinstance(node, ast.Name) and node.id in aliases:
        return _literal_values(aliases[node.id], aliases)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal":
        elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        values: list[str] = []
        for element in elements:
            if isinstance(element, ast.Constant) and isinstance(element.value, str):
                values.append(element.value)
            else:
                nested = _literal_values(element, aliases)
                if nested is None:
                    return None
                values.extend(nested)
        return values
    return None


def _tuple_strings(node: ast.expr) -> list[str] | None:
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return None


def read_release(src: Path) -> dict[str, Any]:
    modern = src / "vllm" / "config" / "speculative.py"
    path = modern if modern.exists() else src / "vllm" / "config.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    aliases: dict[str, ast.expr] = {}
    mtp_types: list[str] | None = None
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            name = statement.targets[0].id
            aliases[name] = statement.value
            if name in ("MTPModelTypes", "MTP_MODEL_TYPES"):
                mtp_types = _literal_values(statement.value, aliases) or _tuple_strings(statement.value)
    fields: list[str] = []
    methods: list[str] | None = None
    for statement in tree.body:
        if isinstance(statement, ast.ClassDef) and statement.name == "SpeculativeConfig":
            for item in statement.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    fields.append(item.target.id)
                    if item.target.id == "method":
                        annotation = item.annotation
                        # Optional[SpeculativeMethod] / SpeculativeMethod | None
                        if isinstance(annotation, ast.Subscript) and getattr(annotation.value, "id", "") == "Optional":
                            annotation = annotation.slice
                        if isinstance(annotation, ast.BinOp):
                            annotation = annotation.left
                        methods = _literal_values(annotation, aliases)
    user_fields = [name for name in fields if name not in INTERNAL]
    if path.name == "config.py":
        unknown = "type-error"  # a stdlib dataclass built with cls(**dict): TypeError at startup
    elif 'extra="forbid"' in (src / "vllm" / "config" / "utils.py").read_text(encoding="utf-8"):
        unknown = "refused"  # @config merges ConfigDict(extra="forbid"): pydantic ValidationError
    else:
        unknown = "ignored"  # a pydantic dataclass with the default extra="ignore": dropped silently
    return {
        "origin": f"vllm {path.relative_to(src).as_posix()} (class SpeculativeConfig)",
        "keys": sorted(user_fields),
        "internal": sorted(name for name in fields if name in INTERNAL),
        # None: ``method`` is a plain str in this release (no Literal), so no value is refused by its type
        "methods": sorted(set(methods)) if methods is not None else None,
        "mtp_aliases": sorted(set(mtp_types or ()) - {"mtp"}),
        "unknown_keys": unknown,
    }


OUTPUT = Path(__file__).resolve().parent.parent / "mtplint" / "engines" / "data" / "vllm" / "speculative" / "keys.json"


def _release(argument: str) -> tuple[str, Path]:
    version, equals, directory = argument.partition("=")
    if not (equals and version and (Path(directory) / "vllm").is_dir()):
        raise argparse.ArgumentTypeError(f"{argument!r}: expected VERSION=DIR, DIR holding an unpacked vllm/")
    return version, Path(directory)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description="Write keys.json from unpacked vLLM wheels, one per release.")
    parser.add_argument("releases", nargs="+", type=_release, metavar="VERSION=DIR",
                        help="a release and the folder its wheel is unpacked in (holding vllm/)")
    parser.add_argument("--drop-missing", action="store_true",
                        help="let keys.json lose the releases it covers that are not given")
    args = parser.parse_args(argv)
    given = dict(args.releases)
    # the file is written whole: a release it covers and the command leaves out would be lost
    covered = json.loads(OUTPUT.read_text(encoding="utf-8"))["releases"] if OUTPUT.exists() else {}
    missing = sorted(set(covered) - set(given))
    if missing and not args.drop_missing:
        parser.error(f"keys.json also covers {', '.join(missing)}: give every release (the file is rewritten "
                     "whole), or --drop-missing")
    releases: dict[str, Any] = {version: read_release(directory) for version, directory in given.items()}
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "note": "Generated by tools/gen_vllm_spec_keys.py from the PyPI wheels (read with ast, not run). "
                "keys: SpeculativeConfig fields a user may set; unknown_keys: what an other key does "
                "(type-error: stdlib dataclass, 0.8.x; ignored: pydantic dataclass with extra='ignore'; "
                "refused: @config sets extra='forbid'); "
                "methods: the values of the `method` Literal (null: unvalidated str); "
                "mtp_aliases: method names normalised to `mtp` with a deprecation warning.",
        "releases": releases,
    }
    OUTPUT.write_text(json.dumps(document, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(OUTPUT)


if __name__ == "__main__":
    main(sys.argv[1:])
