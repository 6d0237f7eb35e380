"""Plain scalars' tags told by string tests (mtplint/extract/yamlpos.py, ``_quick_tag``).

The string tests stand in for PyYAML's implicit resolver expressions, which mtplint.startup compiles
only when first used: they must give PyYAML's own tag for every text they answer for, and answer for
a typical compose file's scalars so that none of the expressions is compiled.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mtplint.extract import yamlpos
from mtplint.startup import yaml

ROOT = Path(__file__).resolve().parents[1]

#: PyYAML's pure resolver, the reference (it tries the expressions for every text)
_REFERENCE = yaml.resolver.Resolver()
_STOCK = yaml.resolver.Resolver.yaml_implicit_resolvers

TRICKY = ["0", "00", "007", "08", "0o7", "0x1F", "0X1F", "0b101", "0b", "0x", "+1", "-0", "+0", "-", "+", "1_000",
          "1_", "190:20:30", "80:80", "22:22", "8000:8000", "8080:80", "1:60", "1:5:", "1::5", "0:30", "-1:30",
          "1.5", ".5", "1.", ".", "-.5", "+1.5", "1.2.3", "0.0.0.0", "3.11-slim", "1.27", "1_0.5_", ".inf", "-.INF",
          "+.inf", ".Inf", ".iNf", ".NaN", "-.nan", "1e5", "1.0e+5", "1.0e5", "1:30.5", "1:70.5", "2001-12-14",
          "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2001-1-1", "2001-", "20011-12-14",
          "yes", "YES", "yEs", "y", "n", "No", "nO", "on", "ON", "oN", "off", "true", "tRUE", "False", "null",
          "Null", "nULL", "~", "~~", "", "<<", "<", "<<<", "=", "==", "!", "&", "*", "١٢٣", "²", "1²", "1١",
          "١.٥", "1.٥", "yes\n", "1\n", "1.5\n", "~\n", "\n", "nvidia", "host", "10m", "1Gi", "-v", "--port"]

#: the characters PyYAML's expressions turn on, a few others, and digits str.isdigit takes that [0-9] does not
_ALPHABET = "0123456789+-._:eExXbBoOaAfFiInNlLsStTrRuUyY~<=!&*Zz \t\n١²"


def _check(value: str) -> None:
    expected = _REFERENCE.resolve(yaml.ScalarNode, value, (True, False))
    if value[:1] in _STOCK:  # (_quick_tag is asked only about a text some expression is tried for)
        quick = yamlpos._quick_tag(value)
        assert quick in (None, expected), (value, quick, expected)
    loader = yamlpos._Loader("")
    try:
        assert loader.resolve(yaml.ScalarNode, value, (True, False)) == expected, value
        assert loader.resolve(yaml.ScalarNode, value, (True, False)) == expected, value  # from the memo
    finally:
        loader.dispose()


def test_the_loader_answers_by_string_tests_for_pyyamls_stock_resolvers() -> None:
    assert yamlpos._STOCK_RESOLVERS
    assert yamlpos._stock_resolvers({first: list(group) for first, group in _STOCK.items()})


@pytest.mark.parametrize("value", TRICKY)
def test_tricky_texts_get_pyyamls_tags(value: str) -> None:
    _check(value)


def test_common_texts_are_told_without_the_expressions() -> None:
    """The texts of typical files are answered by the string tests, not left to the expressions."""
    for value in ["0", "1", "+1", "-0", "1_000", "8000", "80:80", "8080:80", "8000:8000", "1.5", "1.27", "1.2.3",
                  "0.0.0.0", "3.11-slim", "yes", "no", "true", "off", "null", "~", "", "<<", "=", "nvidia",
                  "10m", "-v", "--port"]:
        assert yamlpos._quick_tag(value) is not None, value


@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=12))
@example("١٢٣")
def test_texts_get_pyyamls_tags(value: str) -> None:
    _check(value)


def _resolver_expressions() -> list[re.Pattern[str]]:
    seen: dict[int, re.Pattern[str]] = {}
    for group in _STOCK.values():
        for _, expression in group:  # (reading .pattern compiles a deferred expression: fine here)
            seen.setdefault(id(expression), re.compile(expression.pattern, expression.flags))
    return list(seen.values())


_MATCHING = st.sampled_from(_resolver_expressions()).flatmap(lambda pattern: st.from_regex(pattern, fullmatch=True))


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(st.one_of(_MATCHING, st.tuples(_MATCHING, st.text(alphabet=_ALPHABET, max_size=3)).map("".join)))
def test_texts_an_expression_matches_get_pyyamls_tags(value: str) -> None:
    """Texts each expression matches, as such and with a few characters more."""
    _check(value)


def test_other_resolvers_are_left_to_their_expressions() -> None:
    """A table with another resolver, or another expression for a stock tag, is not PyYAML's own:
    the string tests would give the wrong tags for it."""
    added = {first: list(group) for first, group in _STOCK.items()}
    added.setdefault("x", []).append(("tag:example.com,2026:x", re.compile(r"^x$")))
    assert not yamlpos._stock_resolvers(added)
    yaml_12 = {first: list(group) for first, group in _STOCK.items()}
    for first in "yYnNtTfFoO":
        yaml_12[first] = [(tag, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$") if tag.endswith(":bool")
                           else expression) for tag, expression in yaml_12[first]]
    assert not yamlpos._stock_resolvers(yaml_12)
    reordered = {first: list(reversed(group)) for first, group in _STOCK.items()}
    assert not yamlpos._stock_resolvers(reordered)


COMPOSE = """\
services:
  vllm:
    image: vllm/vllm-openai:${VLLM_TAG:-v0.11.0}
    ipc: host
    ports:
      - "8000:8000"
      - 8080:80
    environment:
      HF_HUB_ENABLE_HF_TRANSFER: "1"
      VLLM_LOGGING_LEVEL: INFO
    command: >
      zai-org/GLM-4.6-FP8 --max-num-seqs 8
      --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}'
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: 1
              capabilities: [gpu]
  gateway:
    image: nginx:1.27
    ports: [80:80]
    restart: no
"""


def test_reading_a_compose_file_compiles_none_of_the_resolvers_expressions() -> None:
    """In a fresh interpreter (this session compiled the expressions long ago): the scalars of a
    typical compose file get their tags with every resolver expression still uncompiled."""
    code = (
        "import json, sys\n"
        "from mtplint.extract.yamlpos import load_all\n"
        "from mtplint.source import SourceFile\n"
        "from mtplint.startup import DeferredPattern, yaml\n"
        "[document] = load_all(SourceFile.from_text(sys.stdin.read()))\n"
        "services = document.get('services')\n"
        "vllm, gateway = services.get('vllm'), services.get('gateway')\n"
        "device = vllm.get('deploy').get('resources').get('reservations').get('devices').items[0]\n"
        "tags = {'restart': gateway.get('restart').tag, 'count': device.get('count').tag,\n"
        "        'ports': [n.tag for n in vllm.get('ports').items + gateway.get('ports').items]}\n"
        "expressions = {tag.rsplit(':', 1)[1]: expression\n"
        "               for group in yaml.resolver.Resolver.yaml_implicit_resolvers.values()\n"
        "               for tag, expression in group}\n"
        "print(json.dumps({'tags': tags,\n"
        "                  'deferred': all(isinstance(e, DeferredPattern) for e in expressions.values()),\n"
        "                  'compiled': sorted(name for name, e in expressions.items() if e.compiled)}))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], input=COMPOSE, capture_output=True, text=True, check=True,
                          env=env)
    prefix = "tag:yaml.org,2002:"
    assert json.loads(done.stdout) == {
        "tags": {"restart": prefix + "bool", "count": prefix + "int", "ports": [prefix + "str"] * 3},
        "deferred": True, "compiled": []}
