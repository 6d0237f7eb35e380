"""Start-up of ``mtplint check`` on one file (the pre-commit case, issue 7): what a plain run loads.

Each test runs mtplint in a fresh interpreter and looks at ``sys.modules`` afterwards; a module in
the "never" lists below costs start-up time on every commit without being needed for the run.
Assertions are on what is imported, not on time, so they hold on any machine.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mtplint import cli
from mtplint.argument_parser import build_parser
from tests.conftest import write_files

COMPOSE = """\
# mtplint: gpu=l40s
services:
  vllm:
    image: vllm/vllm-openai:v0.11.0
    command: >
      Qwen/Qwen3-8B
      --max-model-len 32768
      --enable-prefix-caching
      --speculative-config '{"method": "qwen3_next_mtp", "num_speculative_tokens": 3}'
"""

#: parsers and formatters a compose-file check has no use for
NOT_FOR_A_COMPOSE_CHECK = (
    "libcst", "jsonschema", "tree_sitter", "tree_sitter_bash", "ruamel", "tomllib",
    "mtplint.extract.shell", "mtplint.extract.python",
    "mtplint.tuner.advisor", "mtplint.tuner.commands", "mtplint.cli_tuner",
    "mtplint.fix.write",
    "mtplint.report.sarif", "mtplint.report.github",
    # quoting for words a fix inserts into a shell text, RE2 for a configuration's model patterns
    "shlex", "mtplint.user_patterns", "re2",
)
#: what checking that the offered fixes apply loads (issue #19: no fix is counted as fixable that
#: ``--fix`` would refuse): only when a finding has a fix ``--fix`` would apply
FIX_VERIFICATION = ("mtplint.fix.apply", "mtplint.fix.relint", "mtplint.fix.verify", "mtplint.parallel")
#: standard-library modules only an error path, --diff, a suggestion, a digest, a configuration's
#: catalog entries or a schema check needs (contextlib, copy and importlib cost ~1.5 ms together)
STDLIB_NOT_NEEDED = ("difflib", "traceback", "shutil", "hashlib", "_hashlib", "contextlib", "copy", "importlib")
#: modules that cost start-up on every run and that the check path no longer needs: records are
#: slotted classes (not dataclasses, ~30 ms with inspect), typing names are for the type checker
#: only, plain release numbers compare without packaging, and vLLM < 0.9's literal_eval loads ast
NEVER_AT_START_UP = ("dataclasses", "inspect", "typing", "packaging", "ast")


def _modules_after(argv: list[str], cwd: Path) -> tuple[set[str], str]:
    code = ("import io, sys\nfrom mtplint.cli import main\nout = io.StringIO()\n"
            f"code = main({argv!r}, out=out)\n"
            "print(code)\nprint(out.getvalue(), file=sys.stderr)\nprint('\\n'.join(sys.modules))")
    done = _fresh_interpreter(code, cwd)
    return set(done.stdout.split()[1:]), done.stderr


def _fresh_interpreter(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``code`` run by a fresh interpreter in ``cwd`` with this checkout's mtplint (and the report's
    default format)."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    env.pop("MTPLINT_OUTPUT_FORMAT", None)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=cwd, env=env)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "compose.yaml").write_text(COMPOSE)
    (tmp_path / "README.md").write_text("# a project\n\nNothing to launch here.\n")
    return tmp_path


@pytest.mark.parametrize("cache_flag", ["--no-cache", None])
def test_checking_a_compose_file_loads_only_what_it_needs(project: Path, cache_flag: str | None) -> None:
    argv = ["check", *([cache_flag] if cache_flag else []), "compose.yaml"]
    modules, report = _modules_after(argv, project)
    assert "MTP" in report  # the run did lint the launch: findings with fixes were reported
    assert "mtplint.engines.vllm" in modules
    unwanted = sorted(name for name in modules
                      if name in NOT_FOR_A_COMPOSE_CHECK or name.split(".")[0] in NOT_FOR_A_COMPOSE_CHECK)
    assert unwanted == []
    assert sorted(name for name in modules if name.split(".")[0] in NEVER_AT_START_UP) == []
    # MTP401's safe fix is offered: it is tried in memory before it is counted
    assert "[*] 1 fixable" in report and "mtplint.fix.verify" in modules
    # the try writes nothing, so it hashes nothing; the cache keys a file by the digest of its text,
    # with CPython's own SHA-256, found without the importlib package
    hashed = "_sha256" in modules or "_sha2" in modules
    assert hashed == (cache_flag is None) and ("mtplint.digest" in modules) == hashed
    assert sorted(name for name in modules if name.split(".")[0] == "importlib") == []


def test_trying_a_fix_that_rewrites_a_value_loads_no_argv_edits(project: Path) -> None:
    """MTP401's fix rewrites the method inside the --speculative-config word: building it and trying
    it in memory need none of the edits that remove, insert or rename a launch's words."""
    (project / "compose.yaml").write_text(COMPOSE.replace("--enable-prefix-caching", "--no-enable-prefix-caching"))
    modules, report = _modules_after(["check", "--no-cache", "compose.yaml"], project)
    assert "MTP401" in report and "[*] 1 fixable" in report and "mtplint.fix.verify" in modules
    assert "mtplint.edits.jsonvalue" in modules and "mtplint.edits.argv" not in modules


#: a Kubernetes manifest whose launch offers MTP401's fix (a value inside its --speculative-config)
MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.2
          args: [Qwen/Qwen3.6-27B-FP8, --speculative-config, '{"method": "deepseek_mtp", "num_speculative_tokens": 2}']
"""


def test_checking_a_manifest_loads_no_compose_reader_and_no_kustomize(tmp_path: Path) -> None:
    """YAML files are told apart by their documents, a compose file's shape tried first: a manifest
    is told it is none without loading the compose reader and its interpolation. Nor does it load
    kustomize's reader when no folder near it holds a kustomization that could patch it."""
    (tmp_path / "deployment.yaml").write_text(MANIFEST)
    modules, report = _modules_after(["check", "--no-cache", "deployment.yaml"], tmp_path)
    assert "MTP401" in report and "[*] 1 fixable" in report and "mtplint.extract.k8s" in modules
    assert sorted(name for name in modules if name in ("mtplint.extract.compose", "mtplint.extract.interpolate",
                                                       "mtplint.extract.kustomize", "mtplint.edits.argv")) == []


def test_checking_a_file_without_an_applicable_fix_loads_no_fix_engine(project: Path) -> None:
    """Only MTP102's unsafe fix (hidden without ``--unsafe-fixes``): nothing to verify, so neither
    the fix engine nor the worker and record machinery it re-lints with is loaded."""
    (project / "compose.yaml").write_text(COMPOSE.replace("qwen3_next_mtp", "mtp"))
    modules, report = _modules_after(["check", "--no-cache", "compose.yaml"], project)
    assert "MTP102" in report and "fixable" not in report
    assert sorted(name for name in modules if name in FIX_VERIFICATION) == []
    assert sorted(set(STDLIB_NOT_NEEDED) & modules) == []
    # no fix to try, no cache, no configuration to validate: nothing is hashed
    assert sorted({"mtplint.digest", "_sha256", "_sha2"} & modules) == []


def test_checking_a_readme_loads_no_pipeline(project: Path) -> None:
    """A commit that touches only files without a launch is answered by the byte prefilter alone."""
    modules, report = _modules_after(["check", "--no-cache", "README.md"], project)
    assert report.startswith("All checks passed!")
    assert "yaml" not in modules
    assert not [name for name in modules if name.startswith(("mtplint.engines", "mtplint.extract", "mtplint.checks"))]
    assert "mtplint.pipeline" not in modules


def test_the_check_parser_alone_reads_the_command_line_as_the_full_parser() -> None:
    """``main`` builds only the chosen subcommand's parser; it must parse as the complete one does."""
    argv = ["check", "--no-cache", "--select", "MTP1,MTP2", "--ignore", "MTP102", "-j", "2", "--fix", "a.yaml", "b"]
    assert vars(build_parser("check").parse_args(argv)) == vars(build_parser().parse_args(argv))


@pytest.mark.parametrize("argv", [["check", "--help"], ["check", "--no-such-flag"], ["rule"], ["--help"],
                                  ["inspect", "--bogus"], ["recommend", "--no-such-flag"], ["crossover", "--help"],
                                  ["clean", "extra"], ["version", "extra"], ["rules", "--output-format", "xml"]])
def test_usage_and_errors_read_as_with_the_full_parser(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    outputs = []
    for parser in (build_parser(), build_parser(argv[0] if not argv[0].startswith("-") else None)):
        with pytest.raises(SystemExit):
            parser.parse_args(argv)
        outputs.append(capsys.readouterr())
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize("columns", ["60", "200", "oops", None])
def test_help_width_follows_columns_as_argparse(columns: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The help formatter sizes itself as argparse's does (``COLUMNS``, else the terminal, else 80),
    without importing shutil."""
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    ours = _subparser(build_parser("check"), "check")
    stock = _subparser(build_parser("check"), "check")
    stock.formatter_class = argparse.HelpFormatter
    assert ours.format_help() == stock.format_help()


def test_a_check_looks_for_configuration_in_each_directory_once(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The settings of the first path and the run's configuration tree share one search: each
    directory from the file's up to the root is asked for a configuration file once."""
    from mtplint import config_files

    write_files(tmp_path, {"mtplint.toml": 'gpu = "l40s"\n', "deploy/app/compose.yaml": COMPOSE})
    asked: list[str] = []
    real = config_files.config_in

    def counted(directory: str) -> str | None:
        asked.append(directory)
        return real(directory)

    monkeypatch.setattr(config_files, "config_in", counted)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    assert cli.main(["check", "--no-cache", "--exit-zero", "deploy/app/compose.yaml"], out=out) == 0
    assert "MTP" in out.getvalue()
    assert asked[:3] == [str((tmp_path / "deploy/app").resolve()), str((tmp_path / "deploy").resolve()),
                         str(tmp_path.resolve())]
    assert len(asked) == len(set(asked))


def test_the_help_width_is_read_once_per_parser_not_per_option(monkeypatch: pytest.MonkeyPatch) -> None:
    """argparse makes a help formatter for every option it adds: the width (the environment, then
    the terminal) is read when each parser is made, not for each of check's options."""
    from mtplint import argument_parser

    reads: list[int] = []
    real = argument_parser._terminal_columns

    def counted() -> int:
        reads.append(1)
        return real()

    monkeypatch.setattr(argument_parser, "_terminal_columns", counted)
    monkeypatch.setenv("COLUMNS", "60")
    check = _subparser(build_parser("check"), "check")
    assert sum(len(action.option_strings) > 0 for action in check._actions) > 20
    assert len(reads) == 2  # the command's parser and check's
    help_text = check.format_help()
    check.formatter_class = argparse.HelpFormatter
    assert help_text == check.format_help()


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    commands = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    found: argparse.ArgumentParser = commands.choices[name]
    return found



def _fresh(code: str) -> list[str]:
    """The lines ``code`` prints in a new interpreter that imports this checkout's mtplint."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    return done.stdout.split()


def test_importing_the_package_has_no_side_effects() -> None:
    """``import mtplint`` loads the package and nothing else: no stand-in module is registered,
    pathlib and its URL helpers are the standard ones."""
    lines = _fresh(
        "import sys\nbefore = set(sys.modules)\nimport mtplint\n"
        "print(sorted(set(sys.modules) - before))\n"
        "from pathlib import Path\nimport urllib.parse\n"
        "print(Path('/srv/my models/Qwen3.6-27B-\u00dc').as_uri(), urllib.parse.urlsplit('https://hf.co/Qwen').netloc)\n")
    assert lines == ["['mtplint']", "file:///srv/my%20models/Qwen3.6-27B-%C3%9C", "hf.co"]


def test_pyyaml_is_imported_with_real_modules_only_and_reads_and_writes_timestamps_and_binary() -> None:
    """Importing PyYAML through mtplint registers only real modules, each under the name it was found
    by (no stand-in in another's place), and timestamps and ``!!binary`` values load and dump with the
    standard ``datetime`` and ``base64``."""
    lines = _fresh(
        "import sys\nbefore = set(sys.modules)\nfrom mtplint.startup import yaml\n"
        "print(all(getattr(sys.modules[name].__spec__, 'name', name) == name for name in set(sys.modules) - before),\n"
        "      [name for name in ('datetime', 'base64') if sys.modules[name].__spec__.name == name])\n"
        "data = yaml.safe_load('at: 2001-12-14t21:59:43.10-05:00\\nday: 2002-12-14\\nraw: !!binary aGVsbG8=\\n')\n"
        "print(data['at'].isoformat(), data['day'].isoformat(), data['raw'])\n"
        "import datetime, base64\n"
        "print(type(data['at']) is datetime.datetime, type(data['day']) is datetime.date,\n"
        "      yaml.representer.base64 is base64 is sys.modules['base64'])\n"
        "print(repr(yaml.safe_dump({'day': datetime.date(2026, 11, 27), 'raw': b'hi'})))\n")
    assert lines == ["True", "['datetime',", "'base64']", "2001-12-14T21:59:43.100000-05:00", "2002-12-14", "b'hello'",
                     "True", "True", "True",
                     "'day:", "2026-11-27\\nraw:", "!!binary", "|\\n", "aGk=\\n'"]


def test_pyyaml_imported_after_datetime_keeps_it() -> None:
    lines = _fresh("import sys, datetime, base64\nfrom mtplint.startup import yaml\n"
                   "print(yaml.constructor.datetime is datetime, yaml.representer.base64 is base64)")
    assert lines == ["True", "True"]


# -- nothing to lint: named files none of which can hold a launch --------------------------------

IRRELEVANT: dict[str, str | bytes] = {
    "README.md": "# a project\n\nNothing to launch here.\n",
    ".github/workflows/ci.yml": "on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps: [{run: make}]\n",
    "app.py": "import sys\n\nprint(sys.argv)\n",
    "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
}


def _both_paths(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    """(the run as it is, the run with the shortcut turned off)."""
    results = []
    for shortcut in (True, False):
        if not shortcut:
            monkeypatch.setattr(cli, "_nothing_to_lint", lambda args: False)
        out, err = io.StringIO(), io.StringIO()
        code = cli.main(argv, out=out, err=err)
        results.append((code, out.getvalue(), err.getvalue()))
    monkeypatch.undo()
    return results[0], results[1]


@pytest.mark.parametrize("output_format", ["full", "concise", "json", "github", "sarif"])
def test_irrelevant_files_report_as_the_full_run_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      output_format: str) -> None:
    write_files(tmp_path, IRRELEVANT)
    monkeypatch.chdir(tmp_path)
    argv = ["check", "--output-format", output_format, *IRRELEVANT]
    shortcut, full = _both_paths(argv, monkeypatch)
    assert shortcut == full
    assert shortcut[0] == 0


NOT_A_SHORTCUT: list[tuple[dict[str, str | bytes], list[str]]] = [
    ({"compose.yaml": COMPOSE, "README.md": "hello\n"}, ["check", "README.md", "compose.yaml"]),  # one has a launch
    ({"README.md": "hello\n"}, ["check", "README.md", "missing.yaml"]),  # a missing file is an error
    ({"README.md": "hello\n"}, ["check", "."]),  # a directory
    ({"README.md": "hello\n"}, ["check", "--select", "NOPE", "README.md"]),  # an unknown selector is an error
    ({"README.md": "hello\n"}, ["check", "--gpu", "no-such-gpu", "README.md"]),
    ({"README.md": "hello\n", "pyproject.toml": "[tool.mtplint]\nselect = [\"NOPE\"]\n"}, ["check", "README.md"]),
    ({"README.md": "hello\n", "pyproject.toml": "[tool.mtplint\n"}, ["check", "README.md"]),  # invalid TOML
    ({"run.sh": "vllm serve m --speculative-config '{}'\n".encode("utf-16")}, ["check", "run.sh"]),  # BOM
    ({"app.service": "[Service]\nExecStart=/opt/start.sh\n"}, ["check", "app.service"]),  # units always read
]


@pytest.mark.parametrize(("files", "argv"), NOT_A_SHORTCUT)
def test_anything_else_takes_the_full_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           files: dict[str, str | bytes], argv: list[str]) -> None:
    write_files(tmp_path, files)
    monkeypatch.chdir(tmp_path)
    parsed = build_parser("check").parse_args(argv)
    assert not cli._nothing_to_lint(parsed)
    shortcut, full = _both_paths(argv, monkeypatch)
    assert shortcut == full


# -- configurations that passed their schema are remembered in the cache ---------------------------

CONFIGURED = {
    "compose.yaml": COMPOSE,
    "pyproject.toml": '[project]\nname = "app"\n\n[tool.mtplint]\nobjective = "latency"\nextend-rules = ["policy"]\n',
    "policy/ACME001.yaml": (
        "code: ACME001\nname: acme-short-speculation\nseverity: warning\nengines: [vllm]\nfix: none\n"
        "summary: Our MTP launches draft at most 2 tokens.\n"
        "message: \"{spec_tokens} speculative tokens: platform policy allows 2\"\n"
        "when:\n  spec_tokens: {gt: 2}\n"
        "docs:\n  what: Flags long drafts.\n  why: Platform policy.\n  example: vllm serve m\n"
        "  fix_safety: No fix.\n  references:\n    - title: Platform policy\n      url: https://wiki.example.com/mtp\n"
    ),
}


def test_a_configuration_that_passed_its_schema_is_not_validated_again(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """jsonschema (~40 ms to import) runs for a configuration and its house rules once; later runs
    with the same documents find them in the cache and report exactly what a validating run does."""
    monkeypatch.setenv("MTPLINT_CACHE_DIR", str(tmp_path / ".mtplint_cache"))
    write_files(tmp_path, CONFIGURED)
    first, first_report = _modules_after(["check", "compose.yaml"], tmp_path)
    second, second_report = _modules_after(["check", "compose.yaml"], tmp_path)
    uncached, uncached_report = _modules_after(["check", "--no-cache", "compose.yaml"], tmp_path)
    assert "jsonschema" in first and "jsonschema" in uncached
    assert "jsonschema" not in second
    assert "ACME001" in first_report and first_report == second_report == uncached_report
    assert len(list((tmp_path / ".mtplint_cache" / "v1" / "valid").iterdir())) == 2  # the table, the rule


def test_an_invalid_configuration_is_reported_on_every_run_and_never_remembered(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MTPLINT_CACHE_DIR", str(tmp_path / ".mtplint_cache"))
    write_files(tmp_path, CONFIGURED)
    assert _run_code(["check", "compose.yaml"], tmp_path) == 1
    remembered = set((tmp_path / ".mtplint_cache" / "v1" / "valid").iterdir())
    (tmp_path / "pyproject.toml").write_text('[tool.mtplint]\nobjective = "fastest"\n')
    for _ in range(2):
        out, err = io.StringIO(), io.StringIO()
        with _cwd(tmp_path):
            assert cli.main(["check", "compose.yaml"], out=out, err=err) == 2
        assert "objective" in err.getvalue() and "fastest" in err.getvalue()
    assert set((tmp_path / ".mtplint_cache" / "v1" / "valid").iterdir()) == remembered


def _run_code(argv: list[str], cwd: Path) -> int:
    with _cwd(cwd):
        return cli.main(argv, out=io.StringIO(), err=io.StringIO())


@contextlib.contextmanager
def _cwd(path: Path) -> Iterator[None]:
    previous = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)


def test_a_run_answered_from_the_cache_loads_no_openssl_tempfile_or_shutil(project: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The default pre-commit run on an unchanged file: hashing uses CPython's own SHA-256, and the
    modules only a cache write (tempfile) or ``mtplint clean`` (shutil) needs stay unloaded."""
    monkeypatch.setenv("MTPLINT_CACHE_DIR", str(project / ".mtplint_cache"))
    _, first = _modules_after(["check", "compose.yaml"], project)
    modules, again = _modules_after(["check", "compose.yaml"], project)
    assert again == first and "MTP" in again
    assert sorted({"hashlib", "_hashlib", "tempfile", "shutil"} & modules) == []


def test_digests_are_hashlibs() -> None:
    import hashlib

    from mtplint.digest import sha256, sha256_hex

    data = "näive\0bytes".encode() * 1000
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()
    incremental = sha256(b"head")
    incremental.update(data)
    assert incremental.hexdigest() == hashlib.sha256(b"head" + data).hexdigest()


@pytest.mark.parametrize("argv", [["check", "--diff", "compose.yaml"], ["check", "--fix", "compose.yaml"]])
def test_runs_that_lint_in_memory_write_no_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 argv: list[str]) -> None:
    """--diff previews and --fix re-lints in memory: like the findings cache, the memo of valid
    documents is not written for them (a preview leaves the tree as it found it)."""
    monkeypatch.setenv("MTPLINT_CACHE_DIR", str(tmp_path / ".mtplint_cache"))
    write_files(tmp_path, CONFIGURED)
    _run_code(argv, tmp_path)
    assert not (tmp_path / ".mtplint_cache").exists()


def test_only_plain_json_documents_are_remembered(tmp_path: Path) -> None:
    """A YAML ``1:`` key, an ``!!omap`` (tuples) or a date would dump as the JSON of another
    document: such documents get no key and are validated every time."""
    import datetime

    from mtplint.cache_directory import ValidDocuments

    memo = ValidDocuments(tmp_path, "schemas")
    plain = {"objective": "latency", "select": ["MTP1"], "gpus": [{"id": "x", "memory_gib": 24.0, "nvlink": None}]}
    assert memo.key("config.schema.json", plain) is not None
    assert memo.key("config.schema.json", plain) != memo.key("rule.schema.json", plain)
    for odd in ({1: "a"}, {"a": (1, 2)}, {"when": datetime.date(2026, 1, 1)}, [{True: 1}], {"a": {"b": {2}}}):
        assert memo.key("config.schema.json", odd) is None
