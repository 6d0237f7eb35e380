"""YAML files whose kind is known only from their content.

The file is parsed once; each YAML-based source kind says whether it claims the documents
(``claims``) and extracts from them (``extract_documents``). Order matters: the most specific
shape first. A YAML file nobody claims (a vLLM ``--config`` file, CI config, ...) holds no launch
of its own; config files are read when a launch references them.
"""

from __future__ import annotations

from mtplint.extract import ExtractContext, Malformed
from mtplint.extract.launch import Launch
from mtplint.extract.yamlpos import YamlError, YNode, load_all
from mtplint.source import SourceFile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Protocol

    class YamlKind(Protocol):
        def claims(self, documents: list[YNode]) -> bool: ...

        def extract_documents(self, source: SourceFile, documents: list[YNode], ctx: ExtractContext) -> list[Launch]: ...


def compose_root(document: YNode) -> bool:
    """A top-level mapping whose ``services`` maps names to mappings (or nothing), one at least a
    mapping: the root of a compose file."""
    if not document.is_map:
        return False
    services = document.get("services")
    if services is None or not services.is_map or not services.pairs:
        return False
    values = [value for _, _, value in services.entries()]
    return all(value.is_map or value.is_null for value in values) and any(value.is_map for value in values)


def is_compose(documents: list[YNode]) -> bool:
    """Whether one of a stream's documents is the root of a compose file (``compose.claims``)."""
    return any(compose_root(document) for document in documents)


#: modules implementing :class:`YamlKind`, most specific first, each with the test of the documents
#: that its ``claims`` makes where the test is here: the compose reader is tried first, and a
#: manifest (or any other YAML file) is told it is no compose file without importing it
KINDS: tuple[tuple[str, Callable[[list[YNode]], bool] | None], ...] = (
    ("mtplint.extract.compose", is_compose), ("mtplint.extract.kubernetes", None), ("mtplint.extract.llama_swap", None))


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
    for module_name, claims in KINDS:
        if claims is not None and not claims(documents):
            continue
        # imported when a file is first asked about; __import__, not importlib.import_module: the
        # importlib package is start-up a YAML check has no other use for (as pipeline.extractor_for)
        kind: YamlKind = __import__(module_name, fromlist=("claims",))
        if claims is not None or kind.claims(documents):
            return kind.extract_documents(source, documents, ctx)
    return []
