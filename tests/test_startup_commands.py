"""Start-up of the commands that are not a check (issue 24): ``--version``, ``--help``, ``version``,
``rules``, ``rule`` and the tuner's ``crossover`` load only what they print.

As in ``tests/test_startup.py``: a fresh interpreter per run and ``sys.modules`` afterwards, so the
assertions hold on any machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from xml.sax.saxutils import escape as sax_escape

import pytest

from mtplint.tuner.plot import escape

#: the tuner's models and what its SVG plot once imported (``xml.sax.saxutils`` brings
#: ``urllib.request``, ``http.client``, ``email`` and ``ssl``: ~40 ms)
TUNER = ("mtplint.cli_tuner", "mtplint.tuner", "xml", "urllib.request", "http", "email", "ssl")
#: what only a check needs: the run's pipeline, parsers, rules and catalogs
CHECK_ONLY = ("mtplint.pipeline", "mtplint.checks", "mtplint.extract", "mtplint.engines", "yaml", "json")


def _run(argv: list[str], cwd: Path) -> tuple[set[str], str]:
    """The modules loaded by ``mtplint ARGV`` in a fresh interpreter, and what it printed."""
    code = ("import contextlib, io, sys\nfrom mtplint.cli import main\nout = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n"
            f"    main({argv!r}, out=out)\n"
            "print(out.getvalue(), file=sys.stderr)\nprint('\\n'.join(sys.modules))")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=cwd, env=env)
    return set(done.stdout.split()), done.stderr


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(module for module in modules
                  if any(module == name or module.startswith(f"{name}.") for name in names))


@pytest.mark.parametrize("argv", [["--version"], ["version"], ["--help"]])
def test_version_and_help_load_no_tuner_and_no_check(tmp_path: Path, argv: list[str]) -> None:
    """``--help`` lists the tuner's commands from their grammar alone (:mod:`mtplint.argument_parser`)."""
    modules, printed = _run(argv, tmp_path)
    assert "mtplint 0." in printed or "crossover" in printed
    assert _loaded(modules, TUNER) == []
    assert _loaded(modules, CHECK_ONLY) == []


@pytest.mark.parametrize("argv", [["rules"], ["rule", "MTP102"]])
def test_the_rule_commands_load_no_tuner_and_no_lint(tmp_path: Path, argv: list[str]) -> None:
    """They read the rule catalog and the configuration's house rules: not the pipeline a check runs."""
    modules, printed = _run(argv, tmp_path)
    assert "MTP102" in printed
    assert _loaded(modules, (*TUNER, "yaml", "mtplint.pipeline", "mtplint.engines", "mtplint.lint", "tree_sitter",
                             "jsonschema")) == []


def test_crossover_without_a_plot_loads_no_url_or_mail_library(tmp_path: Path) -> None:
    modules, printed = _run(["crossover", "--gpu", "rtx-4090"], tmp_path)
    assert "crossover" in printed.lower() or "k=" in printed
    assert _loaded(modules, ("xml", "urllib.request", "http", "email", "ssl")) == []


@pytest.mark.parametrize("text", ["Qwen/Qwen3-8B on rtx-4090", "a <b> & \"c\" 'd' &amp;", ""])
def test_plot_text_is_escaped_as_xml_sax_escapes_it(text: str) -> None:
    assert escape(text) == sax_escape(text)


def test_the_command_runs_without_a_collection_from_its_first_import(tmp_path: Path) -> None:
    """``mtplint`` (the console script calls :func:`mtplint.__main__.run`) turns the cyclic collector
    off before it imports the CLI: loading ~100 modules triggers young collections that free nothing.
    A program that imports :mod:`mtplint.cli` itself keeps its collector."""
    (tmp_path / "serve.sh").write_text("#!/bin/sh\nvllm serve Qwen/Qwen3-8B --speculative-config '{\"method\": \"mtp\"}'\n")
    code = ("import gc, os, sys\n"
            "gc.callbacks.append(lambda phase, info: phase == 'start' and os.write(2, b'collected\\n'))\n"
            "sys.argv = ['mtplint', 'check', '--no-cache', '--exit-zero', 'serve.sh']\n"
            "from mtplint.__main__ import run\nrun()\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    # An installed package is byte-compiled; compiling the entry modules from source would itself
    # start a collection before run() can turn the collector off (PYTHONDONTWRITEBYTECODE stops
    # the usual first import from writing them).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-c", "import mtplint.__main__"], check=True, env=env)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert done.returncode == 0 and "serve.sh" in done.stdout
    assert "collected" not in done.stderr
    imported = subprocess.run([sys.executable, "-c", "import gc, mtplint.cli\nprint(gc.isenabled())"],
                              capture_output=True, text=True, check=True, env=env)
    assert imported.stdout.split() == ["True"]


def test_the_console_script_is_the_collector_free_entry_point() -> None:
    import tomllib

    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"]["mtplint"] == "mtplint.__main__:run"
