"""A file's result between processes: pickled by a worker of a ``--jobs`` run
(:mod:`mtplint.parallel`) or of a fix's verification (:mod:`mtplint.fix.relint`), loaded by the
process that assembles the run."""

from __future__ import annotations

import io
import pickle

from mtplint.analysis import FileResult, RunGroup
from mtplint.checks import Edit, Finding
from mtplint.checks.catalog import Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from mtplint.edits.pyedit import PythonEdit


def _rule(code: str) -> Rule:
    raise pickle.UnpicklingError(f"rule {code} outside load_result")  # load_result gives the group's rule


def _python_edit(recipe: Sequence[Any]) -> PythonEdit:
    from mtplint.edits.pyedit import PythonEdit

    return PythonEdit.from_recipe(recipe)


class _ResultPickler(pickle.Pickler):
    """A result's rules by code (this process has them), a Python edit by its recipe (worked out
    with libcst only by whoever needs its text). Asked only of objects other than strings, numbers
    and plain containers: most of a result, which a ``persistent_id`` was asked of one by one."""

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Rule):
            return _rule, (obj.code,)
        if isinstance(obj, Edit) and hasattr(obj, "recipe"):
            return _python_edit, (obj.recipe(),)
        return NotImplemented


class _ResultUnpickler(pickle.Unpickler):
    """A rule by its code in the catalog of the group the result was checked with."""

    def __init__(self, data: bytes, group: RunGroup) -> None:
        super().__init__(io.BytesIO(data))
        self.group = group

    def find_class(self, module: str, name: str) -> Callable[..., Any]:
        if module == __name__ and name == "_rule":
            return self.group.catalog.__getitem__
        found: Callable[..., Any] = super().find_class(module, name)
        return found


def dump_result(result: FileResult) -> bytes:
    return _dump(result)


def load_result(data: bytes, group: RunGroup) -> FileResult:
    result: FileResult = _ResultUnpickler(data, group).load()
    return result


def dump_findings(findings: Sequence[Finding | tuple[int, Finding]]) -> bytes:
    """Findings (each alone, or with a number) as a large run's assembly writes them out of memory
    (:mod:`mtplint.kept`)."""
    return _dump(list(findings))


def load_findings(data: bytes, group: RunGroup) -> list[Any]:
    """What :func:`dump_findings` wrote, the rules those of ``group``."""
    findings: list[Any] = _ResultUnpickler(data, group).load()
    return findings


def _dump(value: object) -> bytes:
    out = io.BytesIO()
    _ResultPickler(out, pickle.HIGHEST_PROTOCOL).dump(value)
    return out.getvalue()
