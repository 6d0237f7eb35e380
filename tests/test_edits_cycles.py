"""The argv edits leave no reference cycle behind: a run switches the cyclic collector off
(mtplint.cli.main), so whatever a fix's location of a word allocated must go by reference counting."""

from __future__ import annotations

import gc

from mtplint.source import SourceFile

ALIASED = """x-args: &args
  - --port
  - "8000"
services:
  vllm:
    command: *args
"""


def test_the_scalars_of_an_aliased_file_leave_no_cycle() -> None:
    from mtplint.edits import argv

    source = SourceFile("compose.yaml", "compose.yaml", ALIASED)
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        scalars = argv._yaml_scalars(source)
        # the aliased list is taken once, with its first parent
        assert [node.str for node, _ in scalars] == ["x-args", "--port", "8000", "services", "vllm", "command"]
        del scalars
        argv.forget_sources()
        assert gc.collect() == 0
    finally:
        if was_enabled:
            gc.enable()
