"""A set of names held by their digests answers as a set of the names would."""

from __future__ import annotations

from mtplint.digests import DigestSet


def test_a_digest_set_holds_each_name_once_and_finds_only_those() -> None:
    names = [f"team{number % 7}/svc{number:04}/serve.sh" for number in range(300)]
    held = DigestSet(names[::2])
    for name in names[::2]:
        held.add(name)  # again: still one
    assert len(held) == 150
    assert [name in held for name in names] == [number % 2 == 0 for number in range(300)]
    assert "" not in held and None not in held and "\udcff.sh" not in held
    held.add("\udcff.sh")  # a file name not valid UTF-8, as os.fsdecode gives it
    assert "\udcff.sh" in held and len(held) == 151
