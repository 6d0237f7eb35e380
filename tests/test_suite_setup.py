"""The suite's own set-up: what a parallel run (pytest-xdist, tests/conftest.py) relies on."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from tests import conftest
from tests.conftest import run_cli


@pytest.mark.xdist_group("timed")
def test_a_worker_schedules_the_timed_tests_as_one_group(request: pytest.FixtureRequest) -> None:
    """Under ``--dist loadgroup`` a worker reports a grouped test by an id that ends in its group
    (``...@timed``), and the scheduler hands out each group whole. pytest-xdist sets that id through
    ``item._nodeid``, which pytest 9.2 no longer reads: the "timed" tests were then scheduled one by
    one, beside each other, and failed their bounds whenever two happened to run together (hence
    the ``<9.2`` in the test extra). Run without workers there is no group to check."""
    if getattr(request.config.option, "loadgroup", False):
        assert request.node.nodeid.endswith("@timed"), f"pytest-xdist did not group {request.node.nodeid}"


def test_each_command_parser_is_built_once_per_worker(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """In-process runs of ``main`` share one parser per command (tests/conftest.py), and one built
    with the ``MTPLINT_OUTPUT_FORMAT`` of the run: the variable's value is still the default format.
    (``--jobs`` takes a value, so these runs are read by the parser, not by ``plain_check``.)"""
    built: list[str | None] = []
    build = conftest.build_parser

    def counted(command: str | None = None) -> argparse.ArgumentParser:
        built.append(command)
        return build(command)

    monkeypatch.setattr(conftest, "build_parser", counted)
    (tmp_path / "compose.yaml").write_text("services: {}\n", encoding="utf-8")
    monkeypatch.setenv("MTPLINT_OUTPUT_FORMAT", "github")
    assert run_cli(["check", "--isolated", "--no-cache", "--jobs", "1", "compose.yaml"], cwd=tmp_path)[:2] == (0, "")
    assert built in ([], ["check"])  # (none if an earlier test of this worker ran `check` with this value)
    first = list(built)
    for _ in range(2):
        assert run_cli(["check", "--isolated", "--no-cache", "--jobs", "1", "compose.yaml"], cwd=tmp_path)[:2] == (0, "")
    assert built == first
    monkeypatch.setenv("MTPLINT_OUTPUT_FORMAT", "json")
    assert run_cli(["check", "--isolated", "--no-cache", "--jobs", "1", "compose.yaml"], cwd=tmp_path)[:2] == (0, "[]\n")
