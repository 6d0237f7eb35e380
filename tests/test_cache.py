"""The on-disk cache: a cached run prints what an uncached run prints; edits invalidate entries."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from tests.speedtree import build


def _check(tree: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli(["check", "--output-format", "json", *extra, str(tree)], cwd=tree.parent)


def _entries(root: Path) -> list[Path]:
    return sorted((root / ".mtplint_cache").rglob("*.json"))


@pytest.fixture(autouse=True)
def _default_cache_location(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MTPLINT_CACHE_DIR", raising=False)


def test_cached_run_gives_the_uncached_output(tmp_path: Path) -> None:
    tree = build(tmp_path)
    uncached = _check(tree, "--no-cache")
    assert not (tmp_path / ".mtplint_cache").exists()
    first = _check(tree)
    assert _entries(tmp_path)
    mtimes = {path: path.stat().st_mtime_ns for path in _entries(tmp_path)}
    second = _check(tree)
    assert uncached == first == second
    assert {path: path.stat().st_mtime_ns for path in _entries(tmp_path)} == mtimes  # all hits, nothing rewritten
    for fmt in ("full", "sarif"):
        base = ["check", "--output-format", fmt, str(tree)]
        assert run_cli(base, cwd=tmp_path) == run_cli([*base, "--no-cache"], cwd=tmp_path)


def test_cache_directory_is_tagged_and_ignored_by_git(tmp_path: Path) -> None:
    tree = build(tmp_path, copies=1)
    _check(tree)
    cache = tmp_path / ".mtplint_cache"
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"


def test_editing_a_referenced_env_file_invalidates_the_compose_entry(tmp_path: Path) -> None:
    tree = build(tmp_path, copies=1)
    project = tree / "project0"
    (project / "compose.override.yaml").unlink()
    (project / "compose.yaml").write_text((project / "compose.yaml").read_text().replace(
        "--kv-cache-dtype turboquant_4bit_nc", "--kv-cache-dtype ${KV_DTYPE:-auto}"))
    before = _check(tree)
    assert not [f for f in json.loads(before[1]) if f["code"] == "MTP101"]
    (project / ".env").write_text("KV_DTYPE=turboquant_4bit_nc\n")
    after = _check(tree)
    assert after == _check(tree, "--no-cache")
    assert [f for f in json.loads(after[1]) if f["code"] == "MTP101" and f["filename"].endswith("compose.yaml")]


def test_new_override_file_and_edited_config_file_are_noticed(tmp_path: Path) -> None:
    tree = build(tmp_path, copies=2)
    _check(tree)
    # project1 had no override; one appears next to its compose file
    (tree / "project1" / "compose.override.yaml").write_text(
        (tree / "project0" / "compose.override.yaml").read_text())
    # the --config file a script passes changes
    (tree / "project0" / "deploy" / "vllm.yaml").write_text("tensor-parallel-size: 2\nmax-num-seqs: [broken\n")
    assert _check(tree) == _check(tree, "--no-cache")


def test_settings_are_part_of_the_key(tmp_path: Path) -> None:
    tree = build(tmp_path, copies=1)
    for extra in ([], ["--select", "MTP1"], ["--gpu", "h100"], ["--engine-version", "vllm=0.11.0"], []):
        assert _check(tree, *extra) == _check(tree, "--no-cache", *extra)


def test_configuration_gpus_and_models_are_part_of_the_key(tmp_path: Path) -> None:
    """A GPU's memory edited in mtplint.toml (no file the launch reads) must not leave MTP201 as it was."""
    from tests.test_user_catalog import COMPOSE, PYPROJECT

    table = PYPROJECT.split("[tool.mtplint]\n", 1)[1]
    (tmp_path / "mtplint.toml").write_text(table.replace("tool.mtplint.", ""))
    (tmp_path / "compose.yaml").write_text(COMPOSE)
    check = ["check", "--output-format", "json", "compose.yaml"]
    first = run_cli(check, cwd=tmp_path)
    assert any(f["code"] == "MTP201" for f in json.loads(first[1]))
    (tmp_path / "mtplint.toml").write_text(table.replace("tool.mtplint.", "").replace("16380", "163800"))
    assert run_cli(check, cwd=tmp_path) == run_cli([*check, "--no-cache"], cwd=tmp_path)


def test_cache_dir_from_the_environment_and_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = build(tmp_path, copies=1)
    elsewhere = tmp_path / "elsewhere"
    monkeypatch.setenv("MTPLINT_CACHE_DIR", str(elsewhere))
    _check(tree)
    assert (elsewhere / "CACHEDIR.TAG").is_file() and not (tmp_path / ".mtplint_cache").exists()
    code, out, _ = run_cli(["clean"], cwd=tmp_path)
    assert code == 0 and str(elsewhere) in out and not elsewhere.exists()
    code, out, _ = run_cli(["clean"], cwd=tmp_path)
    assert code == 0 and "No cache" in out


def test_clean_leaves_a_directory_mtplint_did_not_make(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "data.txt").write_text("keep")
    monkeypatch.setenv("MTPLINT_CACHE_DIR", str(precious))
    code, _, err = run_cli(["clean"], cwd=tmp_path)
    assert code == 2 and "mtplint did not create it" in err and (precious / "data.txt").exists()


def test_fix_runs_do_not_use_the_cache(tmp_path: Path) -> None:
    tree = build(tmp_path, copies=1)
    _check(tree)
    before = {path: path.read_text() for path in tree.rglob("*") if path.is_file()}
    code, _, _ = run_cli(["check", "--fix", "--exit-zero", str(tree)], cwd=tmp_path)
    assert code == 0
    # fixes were written even though every file had a cache entry, and the next run sees the fixed files
    assert {path: path.read_text() for path in tree.rglob("*") if path.is_file()} != before
    assert _check(tree) == _check(tree, "--no-cache")


def test_compiled_rule_catalog_matches_the_yaml() -> None:
    """mtplint/checks/builtin_rules.json and builtin_docs.json are rules/*.yaml compiled
    (tools/regenerate.py)."""
    from mtplint.checks.catalog import (
        COMPILED_CATALOG,
        COMPILED_DOCS,
        _compiled_rules,
        _rule_files,
        compile_catalog,
        load_rule_file,
    )

    paths = _rule_files()
    compiled = json.loads(Path(COMPILED_CATALOG).read_text(encoding="utf-8"))
    docs = json.loads(Path(COMPILED_DOCS).read_text(encoding="utf-8"))
    assert [compiled, docs] == json.loads(json.dumps(compile_catalog(paths))), "run: python tools/regenerate.py"
    from_json = _compiled_rules()
    assert from_json is not None
    # the documentation is read from builtin_docs.json when first asked for
    assert all(rule._docs is None for rule in from_json)
    from_yaml = tuple(load_rule_file(path, "builtin", check_schema=False) for path in paths)
    assert [rule.docs for rule in from_json] == [rule.docs for rule in from_yaml]
    assert from_json == from_yaml


def test_documentation_compiled_from_other_rule_files_is_read_from_the_yaml(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mtplint.checks import catalog

    paths = _rules_copy(tmp_path, monkeypatch)
    rule = catalog._compiled_rules()[0]  # type: ignore[index]
    stale = json.loads(catalog.COMPILED_DOCS.read_text(encoding="utf-8"))
    stale["docs"][rule.code]["why"] = "stale words"
    stale["digest"] = "crc32:00000000"
    catalog.COMPILED_DOCS.write_text(json.dumps(stale))
    catalog._compiled_docs.cache_clear()
    try:
        assert rule.docs == catalog.load_rule_file(paths[0], "builtin", check_schema=False).docs
        assert rule.docs["why"] != "stale words"
    finally:
        catalog._compiled_docs.cache_clear()


def _rules_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """A copy of the rule files, compiled into a catalog of its own written after them."""
    import shutil

    from mtplint.checks import catalog

    rules = tmp_path / "rules"
    rules.mkdir()
    for path in map(Path, catalog._rule_files()):
        shutil.copy(path, rules / path.name)
        os.utime(rules / path.name, ns=(1_000_000_000, 1_000_000_000))
    monkeypatch.setattr(catalog, "rules_dir", lambda: str(rules))
    paths = catalog._rule_files()
    compiled, docs = catalog.compile_catalog(paths)
    monkeypatch.setattr(catalog, "COMPILED_CATALOG", tmp_path / "builtin_rules.json")
    monkeypatch.setattr(catalog, "COMPILED_DOCS", tmp_path / "builtin_docs.json")
    catalog.COMPILED_CATALOG.write_text(json.dumps(compiled))
    catalog.COMPILED_DOCS.write_text(json.dumps(docs))
    return paths


def test_a_rule_file_edited_after_compiling_makes_the_yaml_win(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mtplint.checks import catalog

    paths = _rules_copy(tmp_path, monkeypatch)
    assert catalog._compiled_rules() is not None
    assert catalog._builtin_digest() == catalog.rules_digest(paths)  # read without a path object per file
    edited = Path(paths[0])
    edited.write_text(edited.read_text(encoding="utf-8").replace("summary:", "summary: edited", 1), encoding="utf-8")
    assert catalog._compiled_rules() is None
    assert "edited" in catalog.load_rule_file(edited, "builtin", check_schema=False).summary


def test_an_installed_package_trusts_the_catalog_compiled_from_the_rule_files_it_ships(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An installed package's rule files are those its compiled catalog was built from (hatch_build.py
    refuses to build a wheel otherwise): a run reads no rule file to check it."""
    from mtplint.checks import catalog

    paths = _rules_copy(tmp_path, monkeypatch)
    monkeypatch.setattr(catalog, "package_path", lambda *parts: str(tmp_path.joinpath(*parts[1:])))
    assert catalog._rules_shipped_with_the_compiled_files()
    expected = tuple(catalog.load_rule_file(path, "builtin", check_schema=False) for path in paths)

    def unread(path: object) -> bytes:
        raise AssertionError(f"read {path}")

    monkeypatch.setattr(catalog, "read_file", unread)
    assert catalog._compiled_rules() == expected


def test_a_rule_file_edited_in_a_checkout_is_used_by_the_next_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkout's rule files are checked against the compiled catalog on every run: an edit not
    compiled yet is what a run reports."""
    rules = Path(__file__).resolve().parents[1] / "rules"
    from mtplint.checks import catalog

    assert catalog.rules_dir() == str(rules) and not catalog._rules_shipped_with_the_compiled_files()
    paths = _rules_copy(tmp_path, monkeypatch)
    [edited] = [Path(path) for path in paths if Path(path).stem == "MTP507"]
    edited.write_text(edited.read_text(encoding="utf-8").replace("severity: warning", "severity: error", 1),
                      encoding="utf-8")
    catalog.builtin_rules.cache_clear()
    try:
        assert catalog.load_catalog()["MTP507"].severity == "error"
    finally:
        catalog.builtin_rules.cache_clear()


def test_a_rule_file_only_touched_after_compiling_keeps_the_compiled_catalog(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checksum is of the bytes: a newer file with the same bytes keeps the compiled catalog."""
    from mtplint.checks import catalog

    paths = _rules_copy(tmp_path, monkeypatch)
    Path(paths[3]).touch()
    assert catalog._compiled_rules() == tuple(catalog.load_rule_file(path, "builtin", check_schema=False)
                                                   for path in paths)


def test_a_rule_file_added_or_removed_makes_the_yaml_win(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mtplint.checks import catalog

    paths = _rules_copy(tmp_path, monkeypatch)
    first = Path(paths[0])
    added = first.with_name("MTP999.yaml")
    added.write_text(first.read_text(encoding="utf-8").replace(first.stem, "MTP999"), encoding="utf-8")
    os.utime(added, ns=(1_000_000_000, 1_000_000_000))
    assert catalog._compiled_rules() is None
    added.unlink()
    Path(paths[1]).unlink()
    assert catalog._compiled_rules() is None


def test_a_compiled_catalog_with_another_checksum_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mtplint.checks import catalog

    _rules_copy(tmp_path, monkeypatch)
    stale = json.loads(catalog.COMPILED_CATALOG.read_text(encoding="utf-8"))
    stale["rules"][0]["data"]["summary"] = "edited"
    stale["digest"] = "crc32:00000000"
    catalog.COMPILED_CATALOG.write_text(json.dumps(stale))
    assert catalog._compiled_rules() is None


def test_the_checksum_follows_each_byte_and_name(tmp_path: Path) -> None:
    from mtplint.checks.catalog import rules_digest

    first, second = tmp_path / "MTP101.yaml", tmp_path / "MTP102.yaml"
    first.write_bytes(b"code: MTP101\n")
    second.write_bytes(b"code: MTP102\n")
    digests = {rules_digest([first, second])}
    second.write_bytes(b"code: MTP103\n")
    digests.add(rules_digest([first, second]))
    first.rename(tmp_path / "MTP100.yaml")
    digests.add(rules_digest([tmp_path / "MTP100.yaml", second]))
    digests.add(rules_digest([second]))
    assert len(digests) == 4


def test_rule_files_are_those_glob_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mtplint.checks import catalog

    for name in ("MTP101.yaml", "MTP002.yaml", "mtp103.yaml", "MTP104.yml", "XMTP105.yaml", ".MTP106.yaml",
                 "MTP107.yaml.orig", "README.md", "MTP.yaml"):
        (tmp_path / name).write_text("")
    (tmp_path / "MTP108.yaml").mkdir()
    monkeypatch.setattr(catalog, "rules_dir", lambda: tmp_path)
    assert catalog._rule_files() == [str(path) for path in sorted(tmp_path.glob("MTP*.yaml"))]
    monkeypatch.setattr(catalog, "rules_dir", lambda: tmp_path / "missing")
    assert catalog._rule_files() == []


def _modules_after(code: str, cwd: Path) -> set[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, "-c", f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"],
                         capture_output=True, text=True, check=True, cwd=cwd, env=env).stdout
    return set(out.split())


HEAVY = ("libcst", "jsonschema", "tree_sitter", "tree_sitter_bash", "ruamel")


def test_importing_the_cli_loads_no_parser(tmp_path: Path) -> None:
    modules = _modules_after("import mtplint.cli", tmp_path)
    assert not [name for name in modules if name.split(".")[0] in HEAVY]


def test_checking_a_compose_file_loads_no_shell_or_python_parser(tmp_path: Path) -> None:
    tree = build(tmp_path, copies=1)
    compose = tree / "project0" / "compose.yaml"
    for flags in ("'--no-cache'", "'--jobs', '1'"):
        modules = _modules_after(
            f"import io\nfrom mtplint.cli import main\nmain(['check', {flags}, '--exit-zero', {str(compose)!r}], out=io.StringIO())",
            tmp_path)
        assert not [name for name in modules if name.split(".")[0] in HEAVY]
        assert "pathspec" not in modules  # no .gitignore here
        assert "tomllib" not in modules  # no configuration file here


def test_editing_a_version_pin_invalidates_every_launch_below_it(tmp_path: Path) -> None:
    """Two scripts share their folder's ``requirements.txt``: a run reads that folder's pins once,
    but both files' entries depend on them (the second one's used to keep the old version)."""
    script = "vllm serve Qwen/Qwen3.6-27B --spec-method mtp\n"
    (tmp_path / "a.sh").write_text(script)
    (tmp_path / "b.sh").write_text(script)
    (tmp_path / "requirements.txt").write_text("vllm==0.20.0\n")

    def flagged() -> list[str]:
        code, out, err = run_cli(["check", "--output-format", "json", "--select", "MTP506", "."], cwd=tmp_path)
        assert code in (0, 1), err
        return sorted(finding["filename"] for finding in json.loads(out))

    assert flagged() == ["a.sh", "b.sh"]  # --spec-method is not a flag of vLLM 0.20
    (tmp_path / "requirements.txt").write_text("vllm==0.30.0\n")
    assert flagged() == []


def test_a_cold_cached_run_opens_each_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache key is made of a file's bytes: they are read once, for the key, the prefilter and
    the analysis alike (a file the prefilter skips is not analysed at all)."""
    project = tmp_path / "project"
    project.mkdir()
    for number in range(3):
        (project / f"svc{number}").mkdir()
        (project / f"svc{number}" / "compose.yaml").write_text(
            "services:\n  llm:\n    image: vllm/vllm-openai:v0.9.0\n    command: >\n      --model Qwen/Qwen3-8B\n"
            "      --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 2}'\n")
    for number in range(40):
        (project / f"job-{number:02}.sh").write_text("#!/usr/bin/env bash\nset -euo pipefail\necho done\n")
    opened: list[str] = []
    real_open, real_io_open = os.open, io.open

    def noting(path: Any, *args: Any, **kwargs: Any) -> int:
        opened.append(os.path.abspath(path))
        return real_open(path, *args, **kwargs)

    def noting_io(path: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(path, int):
            opened.append(os.path.abspath(path))
        return real_io_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", noting)
    monkeypatch.setattr(io, "open", noting_io)
    code, out, _ = _check(project, "--jobs", "1")
    monkeypatch.undo()
    assert code == 1 and "MTP102" in out  # the compose files were analysed
    linted = [str(path) for path in sorted(project.rglob("*")) if path.is_file() and ".mtplint_cache" not in path.parts]
    assert [opened.count(path) for path in linted] == [1] * len(linted)
    assert _check(project, "--jobs", "1") == (code, out, "")  # and their results stored


def test_a_warm_run_parses_nothing_and_keys_only_the_files_worth_reading(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A file with a valid entry is not extracted again, by the lint or by the check of its fixes;
    a file the prefilter rejects gets no cache key at all (its bytes are searched, nothing more)."""
    from mtplint import analysis
    from mtplint.cache import Cache

    project = tmp_path / "project"
    project.mkdir()
    for number in range(3):
        (project / f"svc{number}").mkdir()
        # a fix to check: MTP401, `deepseek_mtp` is a deprecated alias of `mtp`
        (project / f"svc{number}" / "compose.yaml").write_text(
            "services:\n  llm:\n    image: vllm/vllm-openai:${VLLM_TAG:-v0.11.0}\n    command: >\n      zai-org/GLM-4.6-FP8\n"
            "      --speculative-config '{\"method\": \"deepseek_mtp\", \"num_speculative_tokens\": 1}'\n"
            "    env_file: ${ENV_FILE:-.env}\n")
        (project / f"svc{number}" / ".env").write_text("HF_HOME=/models\n")
    (project / "serve.sh").write_text(
        "#!/usr/bin/env bash\nset -euo pipefail\nvllm serve Qwen/Qwen3-8B \\\n"
        "  --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 1}' \\\n  --port 8000\n")
    for number in range(20):
        (project / f"job-{number:02}.sh").write_text("#!/usr/bin/env bash\nset -euo pipefail\nmake test\n")
        (project / f"ci-{number:02}.yaml").write_text("steps:\n  - run: pytest -q\n")
    cold = _check(project, "--jobs", "1")
    assert cold[0] == 1 and '"MTP401"' in cold[1] and '"applicability": "safe"' in cold[1]

    extracted: list[str] = []
    keyed: list[str] = []
    real_extract, real_key = analysis.extract_file, Cache.key

    def extract_noted(candidate: Any, *args: Any) -> Any:
        extracted.append(Path(candidate.path).name)
        return real_extract(candidate, *args)

    def key_noted(cache: Cache, display: str, data: bytes) -> str:
        keyed.append(display)
        return real_key(cache, display, data)

    monkeypatch.setattr(analysis, "extract_file", extract_noted)
    monkeypatch.setattr(Cache, "key", key_noted)
    warm = _check(project, "--jobs", "1")
    assert warm == cold
    assert extracted == []
    linted = sorted(name.split("\0")[1] for name in keyed if not name.startswith("verified\0"))
    assert linted == ["project/serve.sh", *(f"project/svc{number}/compose.yaml" for number in range(3))]
    # the outcome of checking the fixes is one more entry, found by one key
    assert sum(name.startswith("verified\0") for name in keyed) == 1

    # a changed .env is a dependency of the compose entry and of the check of its fixes: both run again
    (project / "svc1" / ".env").write_text("HF_HOME=/srv/models\n")
    extracted.clear()
    assert _check(project, "--jobs", "1") == cold
    assert "compose.yaml" in extracted and "job-00.sh" not in extracted


def test_the_package_is_fingerprinted_once_however_many_configurations_a_run_has(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each configuration group opens a cache whose key names the installed package; the package's
    files are listed once per process, not once per group."""
    from mtplint import cache

    serve = "#!/bin/sh\nvllm serve Qwen/Qwen3-8B --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 1}'\n"
    for team in ("alpha", "beta", "gamma"):
        (tmp_path / team).mkdir()
        (tmp_path / team / "mtplint.toml").write_text('ignore = ["MTP102"]\n' if team == "beta" else "")
        (tmp_path / team / "serve.sh").write_text(serve)
    package = os.path.dirname(cache.__file__)
    listed: list[str] = []
    real_scandir = os.scandir

    def counting_scandir(path: Any) -> Any:
        if os.fspath(path) == package:
            listed.append(os.fspath(path))
        return real_scandir(path)

    cache.package_fingerprint.cache_clear()
    monkeypatch.setattr(cache.os, "scandir", counting_scandir)
    monkeypatch.setenv("MTPLINT_CACHE_DIR", str(tmp_path / "cache"))
    for _ in range(2):
        code, out, err = run_cli(["check", "--exit-zero", "--jobs", "1", "."], cwd=tmp_path)
        assert code == 0, err
        # three configurations, one of them ignoring what the others report
        assert "alpha/serve.sh:" in out and "gamma/serve.sh:" in out and "beta/serve.sh:" not in out
    assert listed == [package]
