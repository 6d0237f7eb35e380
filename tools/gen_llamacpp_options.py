#!/usr/bin/env python3
"""Generate mtplint/engines/data/llamacpp/options.json from llama.cpp's ``common/arg.cpp``.

The table lists every option ``llama-server`` accepts (names, negated names, environment
variable, how many values it takes, whether it is a removed stub), nothing else: no code and no
help text is copied. Usage::

    pip download llama-cpp-python==0.3.35 --no-deps --no-binary :all: -d /tmp/dl
    tar xzf /tmp/dl/llama_cpp_python-0.3.35.tar.gz -C /tmp/dl
    python tools/gen_llamacpp_options.py /tmp/dl/llama_cpp_python-0.3.35/vendor/llama.cpp \
        --build b10454 --commit 4df29be4f --package llama-cpp-python==0.3.35 \
        > mtplint/engines/data/llamacpp/options.json

llama-cpp-python 0.3.35 vendors llama.cpp at commit 4df29be4f (its CHANGELOG), build b10454
(2026-08-15), the closest vendored tree to b10470, the build the conformance cases were run on.
(0.3.36 vendors 0c1e57098 = b11312, which already dropped ``--mmap``/``--mlock``/``--direct-io``
in favour of ``--load-mode``: too new to stand for b10470.) The option filter is the one of ``common_params_parser_init``'s ``add_opt``:
an option belongs to llama-server when its examples contain ``LLAMA_EXAMPLE_SERVER`` or
``LLAMA_EXAMPLE_COMMON`` (the default) and it does not exclude the server.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

SERVER = "LLAMA_EXAMPLE_SERVER"
COMMON = "LLAMA_EXAMPLE_COMMON"
#: ``mmproj_examples`` in arg.cpp (the multimodal tools, the server among them)
MMPROJ_EXAMPLES = ("LLAMA_EXAMPLE_MTMD", SERVER, "LLAMA_EXAMPLE_CLI", "LLAMA_EXAMPLE_TTS")


def _skip_literal(text: str, index: int) -> int:
    """Index just past the string/char literal starting at ``index``."""
    quote = text[index]
    index += 1
    while index < len(text) and text[index] != quote:
        index += 2 if text[index] == "\\" else 1
    return index + 1


def _matching(text: str, index: int) -> int:
    """Index of the bracket closing the one at ``index`` (string literals and comments skipped)."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    stack = [pairs[text[index]]]
    index += 1
    while index < len(text):
        char = text[index]
        if char in "\"'":
            index = _skip_literal(text, index)
            continue
        if text.startswith("//", index):
            index = text.index("\n", index)
            continue
        if text.startswith("/*", index):
            index = text.index("*/", index) + 2
            continue
        if char in pairs:
            stack.append(pairs[char])
        elif char in ")}]":
            if char != stack.pop():
                raise ValueError(f"unbalanced bracket at {index}")
            if not stack:
                return index
        index += 1
    raise ValueError("unterminated bracket")


def _split_top(text: str) -> list[str]:
    """Split a C++ argument list at its top-level commas."""
    parts: list[str] = []
    depth = 0
    start = 0
    index = 0
    while index < len(text):
        char = text[index]
        if char in "\"'":
            index = _skip_literal(text, index)
            continue
        if text.startswith("//", index):
            index = text.index("\n", index)
            continue
        if char in "({[":
            depth += 1
        elif char in ")}]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index].strip())
            start = index + 1
        index += 1
    parts.append(text[start:].strip())
    return parts


def _strip_comments(text: str) -> str:
    """``text`` without ``//`` and ``/* */`` comments (string literals kept intact)."""
    out: list[str] = []
    index = 0
    while index < len(text):
        if text[index] in "\"'":
            end = _skip_literal(text, index)
            out.append(text[index:end])
            index = end
        elif text.startswith("//", index):
            newline = text.find("\n", index)
            index = len(text) if newline < 0 else newline
        elif text.startswith("/*", index):
            index = text.index("*/", index) + 2
        else:
            out.append(text[index])
            index += 1
    return "".join(out)


def _strings(text: str) -> list[str]:
    return re.findall(r'"((?:[^"\\]|\\.)*)"', text)


def _handler_kind(lambda_text: str) -> str:
    """Which handler slot a lambda fills, from its parameter list."""
    params = lambda_text[lambda_text.index("(") + 1:_matching(lambda_text, lambda_text.index("("))]
    types = [p.strip() for p in _split_top(params)]
    rest = types[1:]
    if not rest:
        return "void"
    if len(rest) == 2:
        return "str_str"
    if rest[0].startswith("int"):
        return "int"
    if rest[0].startswith("bool"):
        return "bool"
    return "string"


def parse_options(source: str) -> list[dict[str, Any]]:
    options: list[dict[str, Any]] = []
    for match in re.finditer(r"add_opt\(common_arg\(", source):
        ctor_open = match.end() - 1
        ctor_close = _matching(source, ctor_open)
        outer_close = _matching(source, match.start() + len("add_opt"))
        arguments = _split_top(_strip_comments(source[ctor_open + 1:ctor_close]))
        chain = source[ctor_close + 1:outer_close]
        names = _strings(arguments[0])
        negated = _strings(arguments[1]) if arguments[1].startswith("{") else []
        handler = arguments[-1]
        kind = _handler_kind(handler)
        removed = re.search(r'arg_removed\(\s*"((?:[^"\\]|\\.)*)"', handler)
        examples_match = re.search(r"\.set_examples\(\{([^}]*)\}\)", chain)
        examples = re.findall(r"LLAMA_EXAMPLE_\w+", examples_match.group(1)) if examples_match else [COMMON]
        if ".set_examples(mmproj_examples)" in chain:
            examples = list(MMPROJ_EXAMPLES)
        excludes_match = re.search(r"\.set_excludes\(\{([^}]*)\}\)", chain)
        excludes = re.findall(r"LLAMA_EXAMPLE_\w+", excludes_match.group(1)) if excludes_match else []
        env_match = re.search(r'\.set_env\("([^"]+)"\)', chain)
        if not ((SERVER in examples or COMMON in examples) and SERVER not in excludes):
            continue
        entry: dict[str, Any] = {
            "args": names,
            "kind": kind,
            "values": {"void": 0, "bool": 0, "int": 1, "string": 1, "str_str": 2}[kind],
        }
        if negated:
            entry["neg"] = negated
        if env_match:
            entry["env"] = env_match.group(1)
        if ".set_spec()" in chain:
            entry["spec"] = True
        if removed:
            entry["removed"] = "the argument has been removed. " + removed.group(1)
        if SERVER in examples:
            entry["server_specific"] = True
        options.append(entry)
    # options defined twice (``-np`` has a server and a non-server definition): the server one wins
    unique: dict[str, dict[str, Any]] = {}
    for entry in options:
        key = entry["args"][0]
        if key not in unique or entry.get("server_specific"):
            unique[key] = entry
    return list(unique.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("llama_cpp", type=Path, help="a llama.cpp source tree")
    parser.add_argument("--build", required=True, help="the tree's build number, e.g. b11312")
    parser.add_argument("--commit", required=True)
    parser.add_argument("--package", default="llama-cpp-python==0.3.35", help="where the tree was read from")
    args = parser.parse_args()
    source = (args.llama_cpp / "common" / "arg.cpp").read_text(encoding="utf-8")
    options = parse_options(source)
    document = {
        "origin": (f"generated by tools/gen_llamacpp_options.py from llama.cpp common/arg.cpp at commit {args.commit} "
                   f"(build {args.build}), as vendored by {args.package}; llama-server options only"),
        "build": args.build,
        "options": options,
    }
    # one option per line: diffs between builds stay readable
    lines = [json.dumps(option, separators=(", ", ": ")) for option in options]
    sys.stdout.write("{\n")
    sys.stdout.write(f' "origin": {json.dumps(document["origin"])},\n "build": {json.dumps(args.build)},\n')
    sys.stdout.write(' "options": [\n  ' + ",\n  ".join(lines) + "\n ]\n}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
