"""A run leaves nothing behind: the cyclic collector is off during a run, so whatever a run read
must go by reference counting alone when it ends (tests, editors and the fixer run many in one process)."""

from __future__ import annotations

import gc
import io
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.parametrize("extra", [[], ["--jobs", "1"], ["--diff"]])
def test_a_run_keeps_no_loader_alive(extra: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from mtplint.cli import main
    from mtplint.extract import FileLoader

    monkeypatch.chdir(EXAMPLES)
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()  # what is left must have gone without the collector, as inside a run
    try:
        for _ in range(2):
            main(["check", "--no-cache", "--exit-zero", *extra, "."], out=io.StringIO(), err=io.StringIO())
        # the loaders (and the memos the stages keep on them: version pins, reported services) went
        # by reference counting alone
        assert not [obj for obj in gc.get_objects() if isinstance(obj, FileLoader)]
    finally:
        if was_enabled:
            gc.enable()
