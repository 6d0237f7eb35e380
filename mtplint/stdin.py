"""Standard input as a file: ``--stdin-filename PATH`` (an editor's buffer, saved or not) and ``-``.

A buffer's kind comes from the name it stands for, as a file's does; ``-`` without a name has
none, so its kind is read from its text (:func:`buffer_kind`).
"""

from __future__ import annotations

import re

from mtplint.discover import SNIFF_BYTES, classify, classify_explicit
from mtplint.pathtext import path_name

#: the name standard input goes by without ``--stdin-filename`` (ruff's too)
STDIN_PATH = "-"

_SYSTEMD_SECTION = re.compile(r"^\[(Unit|Service|Install)\]\s*$", re.MULTILINE)
_INI_SECTION = re.compile(r"^\[[^\]\n]+\]\s*$", re.MULTILINE)
#: instructions are case-insensitive, but written in capitals by convention (``from x import y`` is Python)
_DOCKERFILE = re.compile(r"(FROM|ARG)\s+\S")
_YAML_START = re.compile(r"---(\s|$)|-\s|[\"']?[A-Za-z_][\w.\-/]*[\"']?\s*:(\s|$)")
_PYTHON = re.compile(r"^(import [\w.]+|from [\w.]+ import |def \w+\(|class \w+[(:]|if __name__ ==)", re.MULTILINE)


def _first_statement(text: str) -> str:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return stripped
    return ""


def kind_of_text(text: str) -> str:
    """The source kind a nameless text reads as: a ``#!`` line says it; then a systemd unit's or
    an INI preset's sections, a YAML document (compose, Kubernetes, llama-swap are told apart by
    their content later, as for any ``*.yaml``), a Dockerfile's first instruction, Python's
    imports and definitions; anything else is read as shell commands (``vllm serve ...``)."""
    named = classify(STDIN_PATH, text[:256].encode("utf-8", "surrogateescape"))
    if named is not None:
        return named
    if _SYSTEMD_SECTION.search(text):
        return "systemd"
    first = _first_statement(text)
    if _INI_SECTION.fullmatch(first):
        return "ini"
    if _YAML_START.match(first):
        return "yaml"
    if _DOCKERFILE.match(first):
        return "dockerfile"
    if _PYTHON.search(text):
        return "python"
    return "shell"


def buffer_kind(path: str, text: str) -> str:
    """The kind of standard input standing for ``path``: as the file named on the command line
    would be (:func:`mtplint.discover.classify_explicit`: its name, a template suffix, its
    content), else, for ``-`` only, by the text."""
    head = text[:SNIFF_BYTES].encode("utf-8", "surrogateescape")
    if path_name(path) == STDIN_PATH:
        return classify(path, head) or kind_of_text(text)
    return classify_explicit(path, head) or "unknown"
