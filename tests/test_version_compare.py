"""Version order without ``packaging``: plain release numbers compare by their numbers, as PEP 440 does.

``mtplint.versions.compare`` and ``version_key`` compare two plain release numbers (``0.11.0``,
``v0.10.1.1``) themselves and import ``packaging`` (and with it ``typing``) only for anything else
(pre-, post-, dev-, local versions). These tests hold them to what they did with ``packaging`` for
every version: the shipped release tables and thresholds, and the edge cases of PEP 440.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.version import InvalidVersion, Version

import mtplint
from mtplint.versions import VersionKey, compare, version_key

PACKAGE = Path(mtplint.__file__).resolve().parent
RULES = PACKAGE.parent / "rules"


def _reference_key(text: str) -> tuple[int, ...] | Version:
    """``version_key`` as it was: llama.cpp builds as ints, everything else through ``packaging``."""
    build = re.fullmatch(r"b(\d+)", text.strip())
    if build:
        return (int(build.group(1)),)
    try:
        return Version(text.strip().lstrip("v"))
    except InvalidVersion:
        return Version("0")


def _reference(left: str, right: str) -> int:
    a, b = _reference_key(left), _reference_key(right)
    if type(a) is not type(b):
        return 0
    return (a > b) - (a < b)  # type: ignore[operator]


def _shipped_versions() -> set[str]:
    """Every version string the project ships: the engines' release tables (file names and their
    ``version`` fields), the rules' affected ranges, the thresholds rules and engines compare with,
    and the image tags and pins of the examples."""
    found: set[str] = set()
    for table in (PACKAGE / "engines" / "data").rglob("*.json"):
        if table.stem[:1].isdigit():
            found.add(table.stem)
        text = table.read_text(encoding="utf-8")
        found.update(re.findall(r'"version":\s*"([^"]+)"', text))
        found.update(re.findall(r'"(\d+\.\d+(?:\.\d+)*)":\s*\{', text))  # keys.json: releases by version
    for rule in RULES.glob("*.yaml"):
        found.update(re.findall(r'^\s*-?\s*(?:from|below):\s*"?([^"\s]+)"?\s*$', rule.read_text(encoding="utf-8"), re.M))
    for module in PACKAGE.rglob("*.py"):
        found.update(re.findall(r'^_?[A-Z][A-Z0-9_]*\s*=\s*"(v?b?\d[\w.+!-]*)"', module.read_text(encoding="utf-8"), re.M))
    for example in (PACKAGE.parent / "examples").rglob("*"):
        if example.is_file():
            text = example.read_text(encoding="utf-8", errors="replace")
            found.update(re.findall(r"(?:vllm-openai|sglang|llama\.cpp)[^:\s\"']*:(v?[0-9][\w.+-]*)", text))  # image tags
            found.update(re.findall(r"(?:vllm|sglang)(?:\[[^]]*\])?(?:==|>=|<=|~=|<|>)(v?[0-9][\w.+-]*)", text))  # pins
    found.discard("null")
    return found


SHIPPED = sorted(_shipped_versions())

EDGE_CASES = [
    # trailing zeros do not count (PEP 440): all of these are one version
    "1", "1.0", "1.0.0", "v1.0", "V1.0", "01.00",
    "0", "0.0", "0.0.0",
    # post-, pre-, dev- and local versions around a release
    "0.6.3", "0.6.3.0", "0.6.3.post1", "0.6.3-1", "0.6.3.post0", "0.6.4",
    "0.11.0rc1", "0.11.0rc0", "0.11.0a1", "0.11.0b2", "0.11.0.dev0", "0.11.0", "0.11", "0.11.0.post1",
    "0.11.0+cu128", "0.11.0+cu126", "v0.10.1.1", "0.10.1", "0.10.1.1", "0.10.2",
    "1!0.1", "0.5.10rc0", "0.5.10", "0.5.9", "vv0.5.9", " 0.5.9 ",
    # not versions: they sort as 0
    "latest", "nightly", "", "0.5.x",
    # llama.cpp builds: compared with each other only
    "b9180", "b10413", "b9464", " b9180 ", "b0",
]

VERSIONS = sorted(set(SHIPPED) | set(EDGE_CASES))


def test_the_shipped_versions_are_read() -> None:
    """The release tables, the rules' ranges and the thresholds all contribute (and take the fast path)."""
    assert {"0.11.0", "0.33.0", "0.5.4", "0.5.23", "0.11", "0.5.11", "b9180"} <= set(SHIPPED)
    plain = [v for v in SHIPPED if re.fullmatch(r"v?\d+(?:\.\d+)*", v)]
    assert len(plain) > 30
    assert all(isinstance(key := version_key(v), VersionKey) and key.release is not None for v in plain)


@pytest.mark.parametrize("left", VERSIONS)
def test_compare_agrees_with_packaging(left: str) -> None:
    disagree = [right for right in VERSIONS if compare(left, right) != _reference(left, right)]
    assert disagree == []


def test_edge_cases() -> None:
    assert compare("1.0", "1.0.0") == 0 and compare("1", "1.0.0") == 0 and compare("0", "0.0") == 0
    assert compare("0.6.3", "0.6.3.post1") < 0 and compare("0.6.3.post1", "0.6.4") < 0
    assert compare("0.11.0rc1", "0.11.0") < 0 and compare("0.11.0", "0.11.0rc1") > 0
    assert compare("0.11.0.dev0", "0.11.0rc1") < 0
    assert compare("v0.10.1.1", "0.10.1") > 0 and compare("v0.10.1.1", "0.11.0") < 0
    assert compare("0.5.10", "0.5.9") > 0  # numbers, not text
    assert compare("b10413", "b9180") > 0 and compare("b9180", " b9180 ") == 0
    assert compare("b9180", "0.11.0") == 0 and compare("0.11.0rc1", "b9180") == 0  # a build and a release: no order
    assert compare("latest", "0") == 0 and compare("latest", "0.1") < 0


def test_version_keys_sort_hash_and_compare_as_packaging_versions() -> None:
    pep440 = [v for v in VERSIONS if not re.fullmatch(r"b\d+", v.strip())]
    by_key = sorted(pep440, key=version_key)
    by_packaging = sorted(pep440, key=_reference_key)
    assert [_reference_key(v) for v in by_key] == [_reference_key(v) for v in by_packaging]
    for left, right in itertools.product(pep440, repeat=2):
        a, b = version_key(left), version_key(right)
        same = _reference_key(left) == _reference_key(right)
        assert (a == b) is same, (left, right)
        if same:
            assert hash(a) == hash(b), (left, right)
        assert (a < b, a <= b, a > b, a >= b) == (
            _reference(left, right) < 0, _reference(left, right) <= 0,
            _reference(left, right) > 0, _reference(left, right) >= 0), (left, right)


def test_a_build_and_a_release_do_not_sort_together() -> None:
    """As with packaging: a key list mixing llama.cpp builds and releases is refused, not misordered."""
    with pytest.raises(TypeError):
        sorted(["b9180", "0.11.0"], key=version_key)


def test_plain_release_numbers_do_not_import_packaging() -> None:
    code = (
        "import sys\n"
        "from mtplint.versions import compare, version_key\n"
        "assert compare('0.11.0', 'v0.10.1.1') > 0 and compare('1.0', '1.0.0') == 0\n"
        "assert sorted(['0.5.10', '0.5.9', '0.5.23'], key=version_key) == ['0.5.9', '0.5.10', '0.5.23']\n"
        "assert compare('b9180', 'b10413') < 0\n"
        "print('packaging' in sys.modules)\n"
        "assert compare('0.11.0rc1', '0.11.0') < 0\n"
        "print('packaging' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parent)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert done.stdout.split() == ["False", "True"]
