"""Equality, hashing and repr for the small slotted classes the pipeline stages hand each other.

The stages pass dozens of small data records (spans, tokens, launches, findings). Written as
``dataclasses``, importing ``dataclasses`` (which imports ``inspect``) and generating their methods
cost a large part of a pre-commit run on one file (``docs/startup.md``). So each record is a plain class with
``__slots__`` and an explicit ``__init__``, and inherits its value semantics from here: two records
are equal when they are of the same class and their slots are equal, the way a dataclass compares.
"""

from __future__ import annotations

from operator import attrgetter

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing at start-up

if TYPE_CHECKING:
    from collections.abc import Callable

# One getter per record class, built the first time one of its instances is compared, hashed or
# shown: a C-level attrgetter over every slot of the class and its bases, in declaration order.
_VALUES: dict[type, Callable[[object], tuple[object, ...]]] = {}


def _values_getter(cls: type) -> Callable[[object], tuple[object, ...]]:
    getter = _VALUES.get(cls)
    if getter is None:
        names = slot_names(cls)
        if len(names) == 1:
            single = attrgetter(names[0])
            getter = lambda record: (single(record),)  # noqa: E731 - attrgetter of one name gives no tuple
        else:
            getter = attrgetter(*names)
        _VALUES[cls] = getter
    return getter


def slot_names(cls: type) -> tuple[str, ...]:
    """Every slot of ``cls``, base classes' first: the record's fields, in the order its ``__init__`` takes them."""
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        names += klass.__dict__.get("__slots__", ())
    return tuple(names)


def _equal(self: object, other: object) -> bool:
    """Records are equal when they are of the same class and their slots are equal."""
    if other.__class__ is not self.__class__:
        return NotImplemented  # type: ignore[no-any-return]  # as in an __eq__: the other operand is asked
    values = _values_getter(self.__class__)
    return values(self) == values(other)


def _shown(self: object) -> str:
    names = slot_names(self.__class__)
    shown = ", ".join(f"{name}={value!r}" for name, value in zip(names, _values_getter(self.__class__)(self), strict=True))
    return f"{self.__class__.__qualname__}({shown})"


# Record and FrozenRecord take the same methods rather than a common base class: a record class
# whose bases are the record kind and ``object`` alone is made faster (each class of the pipeline
# is made at start-up, over a hundred on a one-file check; docs/startup.md)


class Record:
    """A mutable record: equal to a record of the same class with equal fields, and unhashable."""

    __slots__ = ()
    __eq__ = _equal
    __repr__ = _shown
    __hash__ = None  # type: ignore[assignment]  # equal-when-equal-fields and mutable: as a dataclass


class FrozenRecord:
    """A record nobody changes after building it (declare its fields ``Final``), so it can be a dict key."""

    __slots__ = ()
    __eq__ = _equal
    __repr__ = _shown

    def __hash__(self) -> int:
        return hash(_values_getter(self.__class__)(self))
