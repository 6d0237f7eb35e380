"""The shared parse of the case files reads each file exactly as PyYAML's ``safe_load`` does."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.case_files import FIX_CASES, RULE_CASES, case_file, case_files


@pytest.mark.parametrize("folder", [RULE_CASES, FIX_CASES], ids=["rules", "fixes"])
def test_every_case_file_reads_as_safe_load_reads_it(folder: Path) -> None:
    paths = case_files(folder)
    assert len(paths) > 10
    for path in paths:
        assert case_file(path) == yaml.safe_load(path.read_text(encoding="utf-8")), path.name


def test_a_case_file_is_parsed_once() -> None:
    path = case_files(RULE_CASES)[0]
    assert case_file(path) is case_file(path)
