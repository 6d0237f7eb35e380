"""PyYAML imported with its module-level regular expressions deferred (mtplint/startup.py).

Each import test runs in a fresh interpreter: by the time this module runs, the test session has
imported ``yaml`` long ago, and the deferral only applies to the first import.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mtplint.startup import DeferredPattern, yaml

ROOT = Path(__file__).resolve().parents[1]

#: a scalar of each kind PyYAML's implicit resolvers and its timestamp constructor tell apart
TYPED = """\
int: 42
octal: 0o17
old_octal: 017
hex: 0x1F
float: 6.5e-1
inf: .inf
bool: yes
null_value: ~
date: 2026-11-27
stamp: 2001-12-14t21:59:43.10-05:00
text: Qwen/Qwen3-8B
"""


def _fresh(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    return done.stdout


def test_importing_through_mtplint_defers_pyyamls_patterns_and_restores_re_compile() -> None:
    report = json.loads(_fresh(
        "import json, re\n"
        "compile_before = re.compile\n"
        "from mtplint.startup import DeferredPattern, yaml\n"
        "import yaml.reader, yaml.resolver, yaml.constructor\n"
        "resolvers = [e for group in yaml.resolver.Resolver.yaml_implicit_resolvers.values() for _, e in group]\n"
        "print(json.dumps({\n"
        "  'restored': re.compile is compile_before,\n"
        "  'reader': type(yaml.reader.Reader.NON_PRINTABLE).__name__,\n"
        "  'resolvers': sorted({type(e).__name__ for e in resolvers}),\n"
        "  'timestamp': type(yaml.constructor.SafeConstructor.timestamp_regexp).__name__,\n"
        "  'compiled_any': any(e.compiled for e in resolvers),\n"
        "}))\n"))
    assert report == {"restored": True, "reader": "DeferredPattern", "resolvers": ["DeferredPattern"],
                      "timestamp": "DeferredPattern", "compiled_any": False}


def test_another_thread_compiles_as_usual_while_pyyaml_is_imported() -> None:
    """Only the importing thread gets deferred patterns: another thread compiling meanwhile (an
    embedding server, say) gets a real compiled pattern."""
    import threading

    import mtplint.startup as pyyaml

    compile_now = re.compile
    compiled: list[object] = []
    try:
        re.compile = pyyaml._deferring_compile(threading.get_ident())
        mine = re.compile(r"a+b")
        other = threading.Thread(target=lambda: compiled.append(re.compile(r"a+b")))
        other.start()
        other.join()
    finally:
        re.compile = compile_now
    assert isinstance(mine, DeferredPattern)
    assert isinstance(compiled[0], re.Pattern)


def test_only_pyyamls_own_python_code_runs_while_its_patterns_are_deferred() -> None:
    """Every Python module ``import yaml`` loads besides PyYAML's own is among those imported before
    the deferral begins (:data:`mtplint.startup.YAML_DEPENDENCIES`): none of them gets a deferred
    pattern. Checked in an interpreter that imports them, then PyYAML, as mtplint does."""
    from mtplint.startup import YAML_DEPENDENCIES

    out = _fresh(
        "import json, re, sys\n"
        f"for name in {list(YAML_DEPENDENCIES)!r}: __import__(name)\n"
        "before = set(sys.modules)\n"
        "import yaml\n"
        "new = [n for n in set(sys.modules) - before if str(getattr(sys.modules[n], '__file__', '')).endswith('.py')]\n"
        "print(json.dumps(sorted(new)))\n")
    loaded = json.loads(out)
    assert "yaml.resolver" in loaded
    assert [name for name in loaded if name != "yaml" and not name.startswith("yaml.")] == []


def test_a_deferred_pattern_answers_as_the_compiled_one() -> None:
    deferred = DeferredPattern(r"(?P<word>[a-z]+)-(\d+)", re.IGNORECASE)
    compiled = re.compile(r"(?P<word>[a-z]+)-(\d+)", re.IGNORECASE)
    assert not deferred.compiled
    text = "vLLM-0 qwen-3 GLM-45"
    assert deferred.search(text).group("word") == compiled.search(text).group("word")
    assert deferred.compiled
    assert deferred.findall(text) == compiled.findall(text)
    assert deferred.sub(r"\2", text) == compiled.sub(r"\2", text)
    assert deferred.split(text) == compiled.split(text)
    assert deferred.match("x-1") is not None and deferred.fullmatch("x-1-") is None
    assert (deferred.pattern, deferred.flags, deferred.groups, deferred.groupindex) == (
        compiled.pattern, compiled.flags, compiled.groups, compiled.groupindex)
    with pytest.raises(AttributeError):
        deferred.no_such_method  # noqa: B018


@pytest.mark.parametrize("loader", ["SafeLoader", "CSafeLoader"])
def test_pyyaml_resolves_and_constructs_as_before_with_deferred_patterns(loader: str) -> None:
    """The resolvers' and the timestamp constructor's expressions compile on first use and give
    PyYAML's usual answers, with the pure-Python loader and with libyaml."""
    if not hasattr(yaml, loader):
        pytest.skip("PyYAML built without libyaml")
    data = yaml.load(TYPED, Loader=getattr(yaml, loader))
    assert data == {
        "int": 42, "octal": "0o17", "old_octal": 15, "hex": 31, "float": 0.65, "inf": float("inf"), "bool": True,
        "null_value": None, "date": datetime.date(2026, 11, 27),
        "stamp": datetime.datetime(2001, 12, 14, 21, 59, 43, 100000,
                                   tzinfo=datetime.timezone(datetime.timedelta(hours=-5))),
        "text": "Qwen/Qwen3-8B",
    }


def test_the_pure_python_reader_still_refuses_non_printable_characters() -> None:
    """The reader's printable-character class (the costliest expression to compile) still works."""
    with pytest.raises(yaml.reader.ReaderError, match="special characters are not allowed"):
        yaml.safe_load("key: value\x07\n")


def test_a_compose_check_never_compiles_the_printable_character_class(tmp_path: Path) -> None:
    """The C composer checks characters itself: a one-file run never needs that expression."""
    (tmp_path / "compose.yaml").write_text(
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.11.0\n    ports: [8000]\n"
        "    command: >\n      Qwen/Qwen3-8B --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 2}'\n")
    out = _fresh(
        "import io, os, sys\n"
        f"os.chdir({str(tmp_path)!r})\n"
        "from mtplint.cli import main\n"
        "main(['check', '--no-cache', 'compose.yaml'], out=io.StringIO())\n"
        "import yaml.reader\n"
        "print(yaml.reader.Reader.NON_PRINTABLE.compiled)\n")
    assert out.strip() == "False"
