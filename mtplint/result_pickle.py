"""A file's result between processes: pickled by a worker of a ``--jobs`` run
(:mod:`mtplint.parallel`) or of a fix's verification (:mod:`mtplint.fix.relint`), loaded by the
process that assembles the run."""

from __future__ import annotations

import copyreg
import io
import pickle
from operator import attrgetter

from mtplint.analysis import FileResult, LaunchResult, RunGroup
from mtplint.checks import Edit, Finding, Fix
from mtplint.checks.catalog import Rule
from mtplint.edits.pyedit import PythonEdit
from mtplint.records import slot_names
from mtplint.source import Diagnostic, Span

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any


def _rule(code: str) -> Rule:
    raise pickle.UnpicklingError(f"rule {code} outside load_result")  # load_result gives the group's rule


def _python_edit(recipe: Sequence[Any]) -> PythonEdit:
    return PythonEdit.from_recipe(recipe)


def _reduce_rule(rule: Rule) -> tuple[Callable[[str], Rule], tuple[str]]:
    return _rule, (rule.code,)


def _reduce_python_edit(edit: PythonEdit) -> tuple[Callable[[Sequence[Any]], PythonEdit], tuple[list[Any]]]:
    return _python_edit, (edit.recipe(),)


#: the records a result is made of whose ``__init__`` takes every slot, in the order of the slots,
#: and keeps what it is given: each is pickled as its class and the values of its slots, and
#: rebuilt by calling the class. Pickled as slotted objects (the class, then a dictionary of its
#: slots to set), a result took about four times as long to write and twice as long to read back
#: (a large run writes each result it keeps, and reads it back for the assembly: some 5,000 on
#: the benchmark's deploy 10k tree)
REBUILT_BY_INIT = (Span, Diagnostic, Edit, Fix, Finding, LaunchResult, FileResult)


def _reducer(cls: type) -> Callable[[Any], tuple[type, tuple[Any, ...]]]:
    names = slot_names(cls)
    values = attrgetter(*names)  # every record here has several slots: a tuple of them

    def reduce(record: Any) -> tuple[type, tuple[Any, ...]]:
        return cls, values(record)

    return reduce


#: how the pickler reduces a type, as :data:`copyreg.dispatch_table` with ours
_DISPATCH: dict[type, Callable[[Any], Any]] = {**copyreg.dispatch_table, Rule: _reduce_rule,
                                               PythonEdit: _reduce_python_edit,
                                               **{cls: _reducer(cls) for cls in REBUILT_BY_INIT}}


#: the globals a result's pickle names besides its rules, by module and name: the unpickler asks
#: for them once per pickle, and a large run loads a pickle per kept result and per chunk of its
#: findings, each more than once (the import machinery's look-up, done for each, was a third of
#: what reading one back cost)
_GLOBALS: dict[tuple[str, str], Callable[..., Any]] = {
    **{(cls.__module__, cls.__qualname__): cls for cls in REBUILT_BY_INIT},
    (__name__, _python_edit.__name__): _python_edit,
}


class _ResultPickler(pickle.Pickler):
    """A result's rules by code (this process has them), a Python edit by its recipe (worked out
    with libcst only by whoever needs its text), the records of :data:`REBUILT_BY_INIT` by the
    values of their slots. By a table of those types, which the pickler looks up in C for each
    object (a ``reducer_override`` is called in Python for every object pickled)."""

    dispatch_table = _DISPATCH


class _ResultUnpickler(pickle.Unpickler):
    """A rule by its code in the catalog of the group the result was checked with."""

    def __init__(self, data: bytes, group: RunGroup) -> None:
        super().__init__(io.BytesIO(data))
        self.group = group

    def find_class(self, module: str, name: str) -> Callable[..., Any]:
        if module == __name__ and name == "_rule":
            return self.group.catalog.__getitem__
        known = _GLOBALS.get((module, name))
        if known is not None:
            return known
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
