"""Sets of names that grow with a tree, held as 64-bit digests in one array: a large run's sets of
file names (those with a launch but no ``noqa`` comment, the compose services reported, the files
the verification of fixes read) would otherwise be thousands of small string objects living to
the run's end, scattered among the files' short-lived ones, which keep the interpreter's memory
from being reused or given back (the benchmark's mixed 100k tree: 10,166 names without a
``noqa``, some 1.4 MB as strings in a set).

A name's digest is its :func:`hash` (SipHash, keyed afresh by each process: see
https://docs.python.org/3/reference/datamodel.html#object.__hash__): two names of a run share one
with a chance of about one in 2**64 per pair, and no input is crafted to collide, as the key is
the process's own. A module of digests (hashlib) would load OpenSSL, some 4 MB of a one-file run."""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable


class DigestSet:
    """A set of names by their digests, sorted in one array (a name is looked up by bisection)."""

    __slots__ = ("_digests",)

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._digests = array("q")
        for name in names:
            self.add(name)

    def add(self, name: str) -> None:
        value = hash(name)
        digests = self._digests
        place = bisect_left(digests, value)
        if place == len(digests) or digests[place] != value:
            digests.insert(place, value)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        value = hash(name)
        digests = self._digests
        place = bisect_left(digests, value)
        return place < len(digests) and digests[place] == value

    def __len__(self) -> int:
        return len(self._digests)
