"""The slotted records the pipeline stages pass along compare, hash, show and pickle like dataclasses did."""

from __future__ import annotations

import pickle

import pytest

from mtplint.records import FrozenRecord, Record, slot_names


class Point(FrozenRecord):
    __slots__ = ("x", "y")

    def __init__(self, x: int, y: int) -> None:
        self.x = x
        self.y = y


class Labelled(Point):
    __slots__ = ("label",)

    def __init__(self, x: int, y: int, label: str) -> None:
        super().__init__(x, y)
        self.label = label


class Bag(Record):
    __slots__ = ("items",)

    def __init__(self, items: list[int] | None = None) -> None:
        self.items = items if items is not None else []


def test_frozen_records_compare_and_hash_by_their_fields() -> None:
    assert Point(1, 2) == Point(1, 2)
    assert Point(1, 2) != Point(2, 1)
    assert {Point(1, 2): "a"}[Point(1, 2)] == "a"
    assert len({Point(1, 2), Point(1, 2), Point(3, 4)}) == 2


def test_a_subclass_never_equals_its_base_and_compares_the_base_fields_too() -> None:
    assert Labelled(1, 2, "a") != Point(1, 2)
    assert Labelled(1, 2, "a") == Labelled(1, 2, "a")
    assert Labelled(1, 2, "a") != Labelled(1, 3, "a")
    assert slot_names(Labelled) == ("x", "y", "label")


def test_mutable_records_compare_by_value_and_refuse_to_hash() -> None:
    first, second = Bag(), Bag()
    assert first == second and first.items is not second.items
    second.items.append(1)
    assert first != second
    with pytest.raises(TypeError):
        hash(first)
    assert Bag([1]) != [1]


def test_repr_names_every_field_and_records_pickle_for_worker_processes() -> None:
    assert repr(Labelled(1, 2, "a")) == "Labelled(x=1, y=2, label='a')"
    assert repr(Bag([3])) == "Bag(items=[3])"
    assert pickle.loads(pickle.dumps(Labelled(1, 2, "a"))) == Labelled(1, 2, "a")
    assert pickle.loads(pickle.dumps(Bag([5]))) == Bag([5])


def test_a_record_class_has_its_kind_and_object_alone_above_it() -> None:
    """What makes a record class quick to create (a one-file check creates over a hundred): no
    base shared by the two kinds of record between them and ``object``."""
    assert Point.__mro__ == (Point, FrozenRecord, object)
    assert Bag.__mro__ == (Bag, Record, object)
    assert not isinstance(Bag([1]), FrozenRecord) and not isinstance(Point(1, 2), Record)


def test_records_have_no_instance_dict() -> None:
    with pytest.raises(AttributeError):
        Point(1, 2).z = 3  # type: ignore[attr-defined]


def test_a_runs_result_compares_by_its_fields_the_lines_kept_for_the_report_among_them() -> None:
    from mtplint.pipeline import Result

    one, other = Result(files_seen=2), Result(files_seen=2)
    assert one == other
    one.shown.add({"compose.yaml": [3, {"1": "services:", "2": "  vllm:"}]})
    assert one != other
    other.shown.add({"compose.yaml": [3, {"1": "services:"}]})
    other.shown.add({"compose.yaml": [3, {"2": "  vllm:"}]})  # a second record's lines of the same file
    assert one == other
    kept = one.shown.lines("compose.yaml", 1)
    assert kept is not None and len(kept) == 3 and (kept[0], kept[1]) == ("services:", "  vllm:")
    assert one.shown.lines("compose.yaml", 3) is None  # line 3 was not kept: the report reads the file
    assert one.shown.lines("other.yaml", 1) is None
