"""YAML files whose kind is known only from their content.

The file is parsed once; each YAML-based source kind says whether it claims the documents
(``claims``) and extracts from them (``extract_documents``). Order matters: the most specific
shape first. A YAML file nobody claims (a vLLM ``--config`` file, CI config, ...) holds no launch
of its own; config files are read when a launch references them.
"""

from __future__ import annotations

import sys

from mtplint.extract import ExtractContext, Malformed
from mtplint.extract.launch import Launch
from mtplint.extract.yamlpos import YamlError, YNode, load_all
from mtplint.source import SourceFile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    class YamlKind(Protocol):
        def claims(self, documents: list[YNode]) -> bool: ...

        def extract_documents(self, source: SourceFile, documents: list[YNode], ctx: ExtractContext) -> list[Launch]: ...

#: modules implementing :class:`YamlKind`, most specific first
KINDS = ("mtplint.extract.compose", "mtplint.extract.kubernetes", "mtplint.extract.llama_swap")


def parse(source: SourceFile) -> list[YNode]:
    try:
        return load_all(source)
    except YamlError as error:
        raise Malformed(str(error), error.offset) from error


def extract(source: SourceFile, ctx: ExtractContext) -> list[Launch]:
    try:
        documents = load_all(source)
    except YamlError as error:
        if "{{" in source.text:
            # an unrendered Helm/Go template is not YAML yet; its rendered output is what gets linted
            return []
        raise Malformed(str(error), error.offset) from error
    for module_name in KINDS:
        # imported when first needed; then sys.modules has it, without import machinery per file
        kind: YamlKind = sys.modules.get(module_name) or __import__(module_name, fromlist=("claims",))
        if kind.claims(documents):
            return kind.extract_documents(source, documents, ctx)
    return []
