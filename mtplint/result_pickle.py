"""A file's result between processes: pickled by a worker of a ``--jobs`` run
(:mod:`mtplint.parallel`) or of a fix's verification (:mod:`mtplint.fix.relint`), loaded by the
process that assembles the run."""

from __future__ import annotations

import io
import pickle

from mtplint.analysis import FileResult, RunGroup
from mtplint.checks import Edit
from mtplint.checks.catalog import Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class _ResultPickler(pickle.Pickler):
    """A result's rules by code (this process has them), a Python edit by its recipe (worked out
    with libcst only by whoever needs its text)."""

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, Rule):
            return ("rule", obj.code)
        return ("python", obj.recipe()) if isinstance(obj, Edit) and hasattr(obj, "recipe") else None


def dump_result(result: FileResult) -> bytes:
    out = io.BytesIO()
    _ResultPickler(out, pickle.HIGHEST_PROTOCOL).dump(result)
    return out.getvalue()


def load_result(data: bytes, group: RunGroup) -> FileResult:
    def persistent_load(pid: tuple[str, Any]) -> Any:
        if pid[0] == "rule":
            return group.catalog[pid[1]]
        from mtplint.edits.pyedit import PythonEdit

        return PythonEdit.from_recipe(pid[1])

    unpickler = pickle.Unpickler(io.BytesIO(data))
    unpickler.persistent_load = persistent_load  # type: ignore[method-assign]
    result: FileResult = unpickler.load()
    return result

