"""The reference pages in ``docs/``: every ``docs/<page>.md#<section>`` the code cites, and every
link between the pages, leads to a page and a section that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: ``docs/vllm.md#config-file`` in a comment or docstring
CITATION = re.compile(r"docs/([\w-]+\.md)(?:#([\w-]+))?")
#: ``[text](page.md#section)`` or ``[text](#section)`` between the pages
LINK = re.compile(r"\]\(([\w-]+\.md)?(?:#([\w-]+))?\)")


def _anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as dashes."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def _cited() -> list[tuple[str, str, str | None]]:
    found = []
    for source in sorted((ROOT / "mtplint").rglob("*.py")):
        for page, section in CITATION.findall(source.read_text(encoding="utf-8")):
            found.append((source.relative_to(ROOT).as_posix(), page, section or None))
    for page_path in sorted(DOCS.glob("*.md")):
        for page, section in LINK.findall(page_path.read_text(encoding="utf-8")):
            found.append((f"docs/{page_path.name}", page or page_path.name, section or None))
    return found


def test_the_code_cites_the_docs() -> None:
    assert len({citation for citation in _cited() if citation[0].startswith("mtplint/")}) >= 40


@pytest.mark.parametrize(("where", "page", "section"), _cited(), ids=lambda value: str(value))
def test_each_citation_leads_to_a_section(where: str, page: str, section: str | None) -> None:
    target = DOCS / page
    assert target.is_file(), f"{where}: no docs/{page}"
    if section is not None:
        assert section in _anchors(target), f"{where}: docs/{page} has no section #{section}"
