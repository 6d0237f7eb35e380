"""Start-up of ``mtplint check`` on one file of each kind that is not YAML (issue 24): what a check
of a shell script or a Dockerfile loads, its fixes tried in memory included.

As in ``tests/test_startup.py``: a fresh interpreter per run and ``sys.modules`` afterwards, so the
assertions hold on any machine. A module listed here as not needed costs every pre-commit run of
such a file its import time without being used by it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# a launch whose fix (MTP401's) edits the JSON of its --speculative-config
from tests.test_startup import COMPOSE

SCRIPT = """\
#!/usr/bin/env bash
exec python3 -m sglang.launch_server \\
  --model-path Qwen/Qwen3.6-27B \\
  --speculative-algorithm NEXTN \\
  --speculative-num-steps 3 \\
  --speculative-eagle-topk 1 \\
  --speculative-num-draft-tokens 5
"""

DOCKERFILE = """\
FROM ghcr.io/ggml-org/llama.cpp:server-cuda-b9100
ENTRYPOINT ["/app/llama-server"]
CMD ["-m", "/models/model.gguf", "-ngl", "99", "--spec-type", "mtp", "--draft-max", "2", "-np", "1"]
"""

#: PyYAML and the positioned YAML reader: a file that is not YAML has no use for them, and neither
#: have the edits of a fix to its words
YAML = ("yaml", "mtplint.extract.yamlpos")
#: what only checking a house rule's message needs (the built-in rules come compiled)
HOUSE_RULES_ONLY = ("string",)
#: the memory and throughput models of MTP201, MTP203 and MTP301: only for a launch that names its GPU
TUNER = "mtplint.tuner"
#: what the ``__init__`` of tree-sitter's packages import and a script's parse has no use for:
#: ``typing`` (tree_sitter's), ``importlib.resources`` and what it loads (tree_sitter_bash's, for
#: highlight queries); mtplint loads the two extension modules alone (:mod:`mtplint.startup`)
TREE_SITTER_PACKAGES_ONLY = ("typing", "importlib.resources", "tempfile", "shutil", "random", "bz2", "lzma")
#: the shell interpreter and what only it uses: a Dockerfile's exec-form launch needs word expansion alone
SHELL_INTERPRETER = ("mtplint.extract.shell.launches", "mtplint.extract.shell.interpreter",
                     "mtplint.extract.shell.statements", "mtplint.extract.shell.paths", "mtplint.extract.shell.script")
#: the rules that need a launch's GPU (``only_when: [gpu-named]``) and those that explain the
#: engine's refusal of its arguments (``only_when: [refused]``): not loaded for a launch without
NEEDS_GPU_RULES = ("mtplint.checks.mtp201", "mtplint.checks.mtp301")
REFUSAL_RULES = ("mtplint.checks.mtp404", "mtplint.checks.mtp504", "mtplint.checks.mtp506",
                 "mtplint.checks.mtp509")
#: what only some fixes and some configurations need: shell quoting for the words a fix inserts, a
#: YAML container's quoting, RE2 for the model patterns a configuration adds
SOME_FIXES_OR_CONFIGURATIONS_ONLY = ("shlex", "mtplint.edits.yamledit", "mtplint.user_patterns", "re2")
#: ``heapq`` merges a large run's findings back from its temporary file; ``math`` comes with PyYAML
#: (through ``datetime``): neither is a script's or a Dockerfile's
LARGE_RUNS_OR_YAML_ONLY = ("heapq", "math")


def _check(tmp_path: Path, name: str, text: str,
           options: tuple[str, ...] = ("--no-cache", "--output-format", "concise")) -> tuple[set[str], str]:
    """The modules loaded by ``mtplint check OPTIONS NAME`` in a fresh interpreter, and its report."""
    (tmp_path / name).write_text(text)
    code = ("import io, sys\nfrom mtplint.cli import main\nout = io.StringIO()\n"
            f"main(['check', *{options!r}, {name!r}], out=out)\n"
            "print(out.getvalue(), file=sys.stderr)\nprint('\\n'.join(sys.modules))")
    done = _python(code, tmp_path)
    return set(done.stdout.split()), done.stderr


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``code`` run by a fresh interpreter in ``cwd`` with this checkout's mtplint (and the
    report's default format)."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    env.pop("MTPLINT_OUTPUT_FORMAT", None)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=cwd, env=env)


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(module for module in modules if module in names or module.split(".")[0] in names)


def test_checking_a_shell_script_and_trying_its_fix_loads_no_yaml(tmp_path: Path) -> None:
    modules, report = _check(tmp_path, "serve.sh", SCRIPT)
    assert "MTP507 [*]" in report and "1 fixable" in report  # the fix was tried in memory and counted
    assert "tree_sitter_bash._binding" in modules and "mtplint.fix.verify" in modules
    assert _loaded(modules, YAML) == []
    assert sorted(set(TREE_SITTER_PACKAGES_ONLY) & modules) == []
    assert sorted(name for name in modules if name in ("tree_sitter", "tree_sitter_bash")) == []
    assert _loaded(modules, HOUSE_RULES_ONLY) == []
    assert "MTP201" in report and sorted(name for name in modules if name.startswith(TUNER)) == []
    assert "mtplint.checks.mtp507" in modules and _loaded(modules, NEEDS_GPU_RULES + REFUSAL_RULES) == []
    assert "mtplint.edits.argv" in modules and _loaded(modules, SOME_FIXES_OR_CONFIGURATIONS_ONLY) == []
    assert _loaded(modules, LARGE_RUNS_OR_YAML_ONLY) == []


#: what a check that tries a fix in memory has no use for: the ``importlib`` package (tree-sitter's
#: extension modules are found by the finders of ``sys.meta_path``) and a SHA-256 of the text (only
#: a fix written to disk checks that the file is still what was read)
NOT_FOR_A_FIX_TRIED_IN_MEMORY = ("importlib", "mtplint.digest", "_sha256", "_sha2", "hashlib")


@pytest.mark.parametrize(("name", "text"), [("serve.sh", SCRIPT), ("Dockerfile", DOCKERFILE)])
def test_trying_a_fix_in_memory_loads_no_importlib_and_no_hash(tmp_path: Path, name: str, text: str) -> None:
    modules, report = _check(tmp_path, name, text)
    assert "[*]" in report and "1 fixable" in report and "mtplint.fix.verify" in modules
    assert _loaded(modules, NOT_FOR_A_FIX_TRIED_IN_MEMORY) == []
    assert name != "serve.sh" or "tree_sitter_bash._binding" in modules


def test_an_edited_text_keeps_the_digest_of_the_bytes_read(tmp_path: Path) -> None:
    """A fix tried in memory edits the text; the file written later is checked against the bytes
    read, so the edit's digest is the original's, hashed when first asked for."""
    from mtplint.digest import sha256_hex
    from mtplint.extract import FileLoader

    (tmp_path / "serve.sh").write_bytes(b"\xef\xbb\xbfexec vllm serve m\n")
    loaded = FileLoader(str(tmp_path)).load(str(tmp_path / "serve.sh"))
    assert loaded is not None
    edit = loaded.edited("exec vllm serve other\n")
    again = edit.edited("x")
    assert again._read_as is loaded  # the text read, not each edit before: passes make no chain
    assert (edit.text, edit.encoding, edit.bom, edit.path) == ("exec vllm serve other\n", loaded.encoding,
                                                               loaded.bom, loaded.path)
    assert edit.digest == loaded.digest == sha256_hex(b"\xef\xbb\xbfexec vllm serve m\n")
    assert again.digest == loaded.digest


def test_checking_a_dockerfile_and_trying_its_fix_loads_no_yaml_and_no_shell_parser(tmp_path: Path) -> None:
    modules, report = _check(tmp_path, "Dockerfile", DOCKERFILE)
    assert "MTP403 [*]" in report and "1 fixable" in report
    assert "mtplint.engines.llamacpp" in modules and "mtplint.fix.verify" in modules
    assert _loaded(modules, YAML) == []
    assert _loaded(modules, ("tree_sitter", "tree_sitter_bash", *HOUSE_RULES_ONLY)) == []
    assert sorted(name for name in modules if name.startswith(TUNER)) == []
    assert "mtplint.extract.shell.expansion" in modules and _loaded(modules, SHELL_INTERPRETER) == []
    assert "mtplint.edits.argv" in modules and _loaded(modules, SOME_FIXES_OR_CONFIGURATIONS_ONLY) == []
    assert _loaded(modules, LARGE_RUNS_OR_YAML_ONLY) == []


def test_a_dockerfile_check_compiles_no_name_pattern_of_the_pin_files(tmp_path: Path) -> None:
    """A Dockerfile's directory holds a name of a pin file's (``Dockerfile*``), so its pins are looked
    for at every check: the pin files' name patterns are matched without compiling them
    (:func:`mtplint.versions._matching`), while the pins are still read."""
    (tmp_path / "requirements.txt").write_text("vllm==0.10.2\n")
    (tmp_path / "Dockerfile").write_text("FROM python:3.12\nCMD [\"vllm\", \"serve\", \"Qwen/Qwen3-8B\", "
                                         "\"--speculative-config\", \"{\\\"method\\\": \\\"mtp\\\"}\"]\n")
    code = ("import fnmatch, io, json\nfrom mtplint.cli import main\nout = io.StringIO()\n"
            "main(['inspect', 'Dockerfile'], out=out)\n"
            "print(json.dumps([out.getvalue(), fnmatch._compile_pattern.cache_info().currsize]))")
    shown, compiled = json.loads(_python(code, tmp_path).stdout)
    assert "0.10.2" in shown  # the requirements file's pin was read
    assert compiled == 0


def test_a_dockerfile_whose_launch_is_a_shell_form_command_is_read_by_the_interpreter(tmp_path: Path) -> None:
    modules, report = _check(tmp_path, "Dockerfile", "FROM vllm/vllm-openai:v0.11.0\n"
                                                     "CMD vllm serve Qwen/Qwen3.6-27B --max-num-seqs 4 --bogus-flag\n")
    assert "MTP506" in report
    assert _loaded(modules, SHELL_INTERPRETER) == sorted(SHELL_INTERPRETER)


def test_checking_a_dockerfile_without_a_launch_loads_no_pipeline_and_no_json(tmp_path: Path) -> None:
    """The byte prefilter answers for a Dockerfile that runs no engine; only a JSON report needs json."""
    modules, report = _check(tmp_path, "Dockerfile", "FROM node:22-alpine\nRUN npm ci\nCMD [\"node\", \"server.js\"]\n")
    assert report.startswith("All checks passed!")
    assert _loaded(modules, ("json", "mtplint.pipeline", "mtplint.extract", *YAML)) == []


def test_a_one_file_check_compiles_only_the_prefilter_search_that_finds_its_engine(tmp_path: Path) -> None:
    """The prefilter's first search finds a vLLM, SGLang (``--speculative-…``) and llama.cpp
    (``llama-server``) launch: a one-file check of each compiles none of discovery's other
    expressions (the prefilter's other searches, what a file's content says it is, a compose
    file's ``build:``), which cost ~2% of such a check to compile."""
    (tmp_path / "serve.sh").write_text(SCRIPT)
    (tmp_path / "Dockerfile").write_text(DOCKERFILE)
    (tmp_path / "compose.yaml").write_text("services:\n  vllm:\n    image: vllm/vllm-openai:v0.11.0\n"
                                           "    command: --model Qwen/Qwen3-8B --speculative-config "
                                           "'{\"method\": \"mtp\", \"num_speculative_tokens\": 2}'\n")
    for name in ("serve.sh", "Dockerfile", "compose.yaml"):
        code = ("import io\nfrom mtplint import discover\nfrom mtplint.cli import main\nout = io.StringIO()\n"
                f"main(['check', '--no-cache', '--output-format', 'concise', {name!r}], out=out)\n"
                "print(out.getvalue().count('MTP'))\n"
                "content = (discover._YAML_KEY, discover._DOCKERFILE_LINE, discover._UNIT_SECTION, discover._PYTHON_LINE,"
                " discover._BUILD_KEY, discover._SERVICES_KEY)\n"
                "print(sum(p.compiled for p in discover._OTHER_PREFILTERS), sum(p.compiled for p in content))")
        findings, compiled = _python(code, tmp_path).stdout.splitlines()
        assert int(findings) > 0, name  # the launch was read and checked
        assert compiled == "0 0", name


@pytest.mark.parametrize(("name", "text", "unused"), [
    ("serve.sh", SCRIPT, ["scanning._QUOTED_SPECIAL", "scanning._BRACED_SPECIAL", "expansion._ALL_ELEMENTS",
                          "script._NOT_ASCII", "script._ASTRAL"]),
    ("Dockerfile", DOCKERFILE, ["scanning._QUOTED_SPECIAL", "state.NAME", "expansion._ALL_ELEMENTS",
                                "discover._COMPOSE_NAME"]),
    ("compose.yaml", COMPOSE, ["yamlpos._BLANK", "jsonvalue._DOUBLE_QUOTED_SPECIAL", "jsonvalue._BARE_SPECIAL"]),
])
def test_a_one_file_check_compiles_no_expression_its_file_does_not_use(tmp_path: Path, name: str, text: str,
                                                                        unused: list[str]) -> None:
    """The readers' and the edits' expressions that only some texts reach (a double-quoted word, a
    ``${name[@]}``, a script that is not ASCII, a blank inside a YAML word, a quoted part of a JSON value)
    are compiled when first used: a one-file check of a file without them compiles none (compiling
    one costs about as much as importing a small module)."""
    (tmp_path / name).write_text(text)
    modules = {"scanning": "mtplint.extract.shell.scanning", "expansion": "mtplint.extract.shell.expansion",
               "script": "mtplint.extract.shell.script", "state": "mtplint.extract.shell.state",
               "discover": "mtplint.discover", "yamlpos": "mtplint.extract.yamlpos",
               "jsonvalue": "mtplint.edits.jsonvalue"}
    code = ("import io, sys\nfrom mtplint.cli import main\nout = io.StringIO()\n"
            f"main(['check', '--no-cache', '--output-format', 'concise', {name!r}], out=out)\n"
            "print(out.getvalue().count('[*]'))\n"
            f"for module, attribute in {[(modules[item.split('.')[0]], item.split('.')[1]) for item in unused]!r}:\n"
            "    print(getattr(sys.modules[module], attribute).compiled)")
    fixable, *compiled = _python(code, tmp_path).stdout.split()
    assert int(fixable) > 0, name  # the launch was read, checked and its fix tried
    assert compiled == ["False"] * len(unused), name


def test_a_report_that_is_not_ascii_compiles_no_class_of_surrogates(tmp_path: Path) -> None:
    """A rule's message with an ellipsis or a ``≥`` is asked whether it holds an undecodable byte of a
    file name (a lone surrogate) by encoding it: the class of every surrogate costs a one-file check
    more to compile than its report costs to write."""
    (tmp_path / "serve.sh").write_text(SCRIPT)
    code = ("import io, re\nfrom mtplint.cli import main\nout = io.StringIO()\n"
            "main(['check', '--no-cache', '--exit-zero', 'serve.sh'], out=out)\n"
            "print(out.getvalue().isascii(), any('\\ud800' in str(key[1]) for key in re._cache))")
    assert _python(code, tmp_path).stdout.split() == ["False", "False"]


#: argparse and what its messages' translations load: a check of named files with switches alone
#: is read without them (:func:`mtplint.arguments.plain_check`)
ARGPARSE = ("argparse", "gettext", "locale")
#: the on-disk cache: a run with ``--no-cache`` keeps its files' analyses (:mod:`mtplint.analysed`) without it
CACHE = ("mtplint.cache", "mtplint.cache_directory")


@pytest.mark.parametrize(("name", "text"), [("serve.sh", SCRIPT), ("Dockerfile", DOCKERFILE)])
def test_a_pre_commit_check_of_named_files_loads_no_argparse_and_no_cache(tmp_path: Path, name: str,
                                                                          text: str) -> None:
    modules, report = _check(tmp_path, name, text, ("--exit-zero", "--no-cache"))
    assert "1 fixable with the `--fix` option" in report  # the full report, its fix tried in memory
    assert _loaded(modules, ARGPARSE) == [] and _loaded(modules, CACHE) == []
    modules, by_the_parser = _check(tmp_path, name, text, ("--exit-zero", "--no-cache", "--output-format", "full"))
    assert by_the_parser == report and "argparse" in modules  # an option with a value: the parser reads it


#: mtplint keeps paths as strings (:mod:`mtplint.pathtext`): pathlib imports ``urllib.parse`` and
#: ``ipaddress`` at its top (for ``Path.as_uri``), which no one-file check uses
PATHLIB = ("pathlib", "urllib", "ipaddress")


@pytest.mark.parametrize(("name", "text"), [("serve.sh", SCRIPT), ("compose.yaml", COMPOSE), ("Dockerfile", DOCKERFILE)],
                         ids=["shell", "compose", "dockerfile"])
def test_a_one_file_check_loads_no_pathlib(tmp_path: Path, name: str, text: str) -> None:
    # a pre-commit run (with the cache, then reading it back), and one whose options argparse reads
    for options in (("--exit-zero",), ("--exit-zero",), ("--no-cache", "--output-format", "concise")):
        modules, report = _check(tmp_path, name, text, options)
        assert "[*]" in report  # findings reported, a fix tried in memory (which reads paths too)
        assert "mtplint.pipeline" in modules and "mtplint.fix.verify" in modules
        assert ("mtplint.cache" in modules) == ("--no-cache" not in options)
        assert _loaded(modules, PATHLIB) == []


@pytest.mark.parametrize("first", ["mtplint", "tree_sitter"])
def test_tree_sitter_imported_by_another_part_of_the_process_shares_the_parser_types(tmp_path: Path,
                                                                                   first: str) -> None:
    """A program that imports tree-sitter itself, before or after mtplint parsed a script, gets the
    extension modules mtplint loaded (or mtplint gets its): one ``Parser`` type, whose parsers read
    either package's grammar."""
    (tmp_path / "serve.sh").write_text(SCRIPT)
    check = ("main(['check', '--no-cache', '--output-format', 'concise', 'serve.sh'], out=io.StringIO())\n")
    packages = "import tree_sitter, tree_sitter_bash\n"
    code = ("import io, sys\nfrom mtplint.cli import main\n" + (check + packages if first == "mtplint" else packages + check)
            + "from mtplint.extract.shell import script\n"
            "print(type(script._PARSER) is tree_sitter.Parser, tree_sitter.Parser is sys.modules['tree_sitter._binding'].Parser)\n"
            "parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))\n"
            "print(parser.parse(b'exec vllm serve m').root_node.type, script._PARSER.parse(b'echo hi').root_node.type)")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path, env=env)
    assert done.stdout.split() == ["True", "True", "program", "program"]


def test_a_package_without_its_extension_module_is_an_import_error() -> None:
    from mtplint.startup import _binding

    with pytest.raises(ImportError, match=r"mtplint\._binding"):
        _binding("mtplint")  # a package, but no _binding in it
    with pytest.raises(ImportError, match=r"no_such_package\._binding"):
        _binding("no_such_package")
    assert "mtplint._binding" not in sys.modules


def test_the_start_up_module_imports_pyyaml_only_when_yaml_is_asked_for() -> None:
    """A shell check loads :mod:`mtplint.startup` for its parser; PyYAML comes with it only on the
    first ``from mtplint.startup import yaml``."""
    code = ("import sys\nimport mtplint.startup as startup\nprint('yaml' in sys.modules)\n"
            "from mtplint.startup import yaml\nprint('yaml' in sys.modules, yaml is sys.modules['yaml'], startup.yaml is yaml)")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert done.stdout.split() == ["False", "True", "True", "True"]


def test_a_parser_is_made_from_the_packages_when_their_layout_differs(monkeypatch: pytest.MonkeyPatch) -> None:
    import mtplint.startup as startup

    def no_binding(package: str) -> object:
        raise ImportError(f"No module named '{package}._binding'")

    monkeypatch.setattr(startup, "_binding", no_binding)
    assert startup.bash_parser().parse(b"exec vllm serve m").root_node.type == "program"


def test_an_unpinned_shell_launch_decodes_no_flag_index_and_compares_few_versions(tmp_path: Path) -> None:
    """The script's SGLang release is not pinned, so its launch is read at each of the twenty
    releases. Which release's table reads a release is its own name (no version compared), and the
    flag index is split into lines, not decoded as JSON: its parts were ~100 KB of escaped JSON
    strings, decoded whole at every run."""
    (tmp_path / "serve.sh").write_text(SCRIPT)
    code = ("import io, json, sys\n"
            "decoded = []\n"
            "plain_loads = json.loads\n"
            "def loads(text, *args, **kwargs):\n"
            "    decoded.append([text[:40], len(text)] if isinstance(text, str) else ['', len(text)])\n"
            "    return plain_loads(text, *args, **kwargs)\n"
            "json.loads = loads\n"
            "from mtplint.engines import compact\n"
            "compared = []\n"
            "plain_compare = compact.compare\n"
            "compact.compare = lambda left, right: compared.append(left) or plain_compare(left, right)\n"
            "from mtplint.cli import main\n"
            "out = io.StringIO()\n"
            "main(['check', '--exit-zero', '--no-cache', 'serve.sh'], out=out)\n"
            "from mtplint.engines import sglang\n"
            "print(json.dumps({'report': out.getvalue(), 'decoded': decoded, 'compared': len(compared),\n"
            "                  'releases': len(sglang.table_versions())}))")
    result = json.loads(_python(code, tmp_path).stdout)
    assert "MTP507" in result["report"]  # the launch was read and checked
    assert result["releases"] == 20
    from_index = [length for start, length in result["decoded"] if "derived from sglang" in start]
    assert len(from_index) == 1 and from_index[0] < 2_000  # the index's first line: its releases and sizes
    assert result["compared"] == 0
