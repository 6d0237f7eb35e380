"""Hostile input, issue #21's "memory and time without bound": every reproduction is a case of the
corpus in tests/data/hostile (or made here, when git cannot hold it: a FIFO, a 1 GB sparse file,
damaged cache entries) and goes through the real ``mtplint check`` in a subprocess. Each must end
without a traceback, with exit 0/1 and the expected findings, or exit 2 and a one-line message;
within 300 MB of peak memory and 10 s; and the real broken launch beside it (TurboQuant KV cache
with MTP, MTP101) is still reported.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mtplint.cache import _read_entry
from tests.conftest import DATA, run_cli
from tests.test_hostile_input import BROKEN_COMPOSE, RUNNER

# holds every run to 10 s and 300 MB: with the other timed tests, one at a time on one worker (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("timed")

CORPUS = DATA / "hostile"
MAX_RSS_KB = 300 * 1024
MAX_SECONDS = 10.0


class Outcome:
    def __init__(self, code: int, stdout: str, stderr: str, seconds: float) -> None:
        self.code = code
        self.stdout = stdout
        self.stderr = stderr
        self.seconds = seconds
        self.peak_kb = int(stderr.rsplit("MAXRSS_KB=", 1)[1].split()[0])
        #: what mtplint itself wrote on standard error (the runner's memory line taken off)
        self.message = stderr.rsplit("MAXRSS_KB=", 1)[0].strip()

    @property
    def findings(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = json.loads(self.stdout)
        return found

    def codes_at(self, filename: str) -> set[str]:
        return {f["code"] for f in self.findings if f["filename"] == filename}


def run(project: Path, *args: str, env: dict[str, str] | None = None) -> Outcome:
    """``mtplint check --output-format json ARGS`` in ``project``, with the bounds every case keeps."""
    started = time.monotonic()
    completed = subprocess.run([sys.executable, "-c", RUNNER, "check", "--output-format", "json", *args],
                               cwd=project, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                               env={**os.environ, **(env or {})})
    outcome = Outcome(completed.returncode, completed.stdout, completed.stderr, time.monotonic() - started)
    assert "Traceback" not in completed.stderr, completed.stderr
    assert outcome.code in (0, 1, 2), completed.stderr
    assert outcome.peak_kb < MAX_RSS_KB, f"peak memory {outcome.peak_kb} kB"
    assert outcome.seconds < MAX_SECONDS, f"{outcome.seconds:.1f} s"
    if outcome.code == 2:
        assert outcome.message.startswith("mtplint: error: ") and "\n" not in outcome.message, outcome.message
    return outcome


def copy_case(name: str, tmp_path: Path) -> Path:
    project = tmp_path / name
    shutil.copytree(CORPUS / name, project)
    return project


# -- expansion budgets --------------------------------------------------------------------------


def model_unresolved(outcome: Outcome, filename: str) -> dict[str, Any]:
    """The one MTP003 finding of ``filename`` about its model, once the run also linted the launch beside it."""
    assert outcome.code == 1
    assert "MTP101" in outcome.codes_at("other/compose.yaml")
    (finding,) = [f for f in outcome.findings if f["filename"] == filename and f["code"] == "MTP003"
                  and "`model`" in f["message"]]
    return finding


def test_a_ten_fold_env_chain_is_cut_by_the_budget_and_mtp003_says_so(tmp_path: Path) -> None:
    """A 357-byte ``.env`` that would expand to 10^9 characters (5.4 GB before the budget)."""
    project = copy_case("expansion-env-chain", tmp_path)
    assert (project / "project" / ".env").stat().st_size == 357
    outcome = run(project, "--isolated", "--no-cache", ".")
    assert "MTP503" in outcome.codes_at("project/compose.yaml")  # `x` is still judged
    budget = model_unresolved(outcome, "model/compose.yaml")
    assert "`${I} (beyond mtplint's expansion budget)`" in budget["message"]
    assert "4 MiB of expanded text per file" in budget["message"]
    assert budget["location"] == {"row": 5, "column": 15}


def test_the_same_chain_in_a_shell_script_is_cut_by_the_budget(tmp_path: Path) -> None:
    """The 487-byte ``serve.sh`` form raised MemoryError."""
    project = copy_case("expansion-shell-chain", tmp_path)
    budget = model_unresolved(run(project, "--isolated", "--no-cache", "."), "serve.sh")
    assert "(beyond mtplint's expansion budget)" in budget["message"]
    assert budget["location"] == {"row": 12, "column": 17}


def test_the_same_chain_in_kubernetes_env_references_is_cut_by_the_budget(tmp_path: Path) -> None:
    project = copy_case("expansion-k8s-chain", tmp_path)
    budget = model_unresolved(run(project, "--isolated", "--no-cache", "."), "deploy.yaml")
    assert "`$(I) (beyond mtplint's expansion budget)`" in budget["message"]
    assert budget["location"] == {"row": 11, "column": 30}


def test_the_same_chain_in_llama_swap_macros_is_cut_by_the_budget(tmp_path: Path) -> None:
    project = copy_case("expansion-llama-swap-macros", tmp_path)
    budget = model_unresolved(run(project, "--isolated", "--no-cache", "."), "config.yaml")
    # the first macro of the chain that no longer fits is named (llama-swap's tokens carry names only)
    assert re.match(r"`model`, `spec_model`, `spec_method` come from `\$[E-I]`, which mtplint cannot", budget["message"])


def test_defaults_nested_past_the_depth_budget_are_unresolved(tmp_path: Path) -> None:
    project = copy_case("expansion-deep-defaults", tmp_path)
    budget = model_unresolved(run(project, "--isolated", "--no-cache", "."), "serve.sh")
    assert "defaults nested 50 deep" in budget["message"] and "…" in budget["message"]


# -- streams: FIFOs, devices, files over the limit -----------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_an_explicit_fifo_is_reported_not_opened_and_the_other_files_are_linted(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.sh")
    (tmp_path / "compose.yaml").write_text(BROKEN_COMPOSE)
    outcome = run(tmp_path, "--isolated", "--no-cache", "pipe.sh", "compose.yaml")
    assert outcome.code == 2 and outcome.message == "mtplint: error: pipe.sh: is not a regular file"
    assert "MTP101" in outcome.codes_at("compose.yaml")


def test_extend_rules_naming_a_device_is_a_one_line_error(tmp_path: Path) -> None:
    """``/dev/zero`` grew to 23.8 GB; it is not opened now."""
    project = copy_case("extend-rules-device", tmp_path)
    outcome = run(project, "--no-cache", ".")
    assert outcome.code == 2
    assert outcome.message == ("mtplint: error: /dev/zero: cannot read rule file: a character device, not a "
                               "regular file")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
@pytest.mark.parametrize("where", ["configuration", "command line"])
def test_extend_rules_naming_a_fifo_is_a_one_line_error(tmp_path: Path, where: str) -> None:
    """It hung, waiting for a writer."""
    os.mkfifo(tmp_path / "house.yaml")
    (tmp_path / "compose.yaml").write_text(BROKEN_COMPOSE)
    if where == "configuration":
        (tmp_path / "mtplint.toml").write_text('extend-rules = ["house.yaml"]\n')
        outcome = run(tmp_path, "--no-cache", ".")
    else:
        outcome = run(tmp_path, "--no-cache", "--extend-rules", "house.yaml", ".")
    assert outcome.code == 2
    assert outcome.message.endswith("house.yaml: cannot read rule file: a FIFO (named pipe), not a regular file")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_configuration_file_that_is_a_fifo_is_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "mtplint.toml")
    (tmp_path / "compose.yaml").write_text(BROKEN_COMPOSE)
    outcome = run(tmp_path, "--no-cache", "compose.yaml")
    assert outcome.code == 1 and "MTP101" in outcome.codes_at("compose.yaml")  # no configuration file there


def test_a_gigabyte_file_over_the_limit_is_never_read_whole(tmp_path: Path) -> None:
    """A 1 GB script that mentions an engine gets MTP001 "too large": it used 3.5 GB when the look
    for its noqa comments read it whole, and 2.1 GB when the text report read it for a code frame
    (SARIF, for its line hashes, ran past a minute). Sparse: no disk used."""
    big = tmp_path / "big.sh"
    with big.open("wb") as handle:
        handle.write(b"#!/bin/sh\n# noqa: MTP001\nexec vllm serve Qwen/Qwen3-8B --speculative-config x\n")
        handle.truncate(1 << 30)
    (tmp_path / "compose.yaml").write_text(BROKEN_COMPOSE)
    outcome = run(tmp_path, "--isolated", "--no-cache", ".")
    assert outcome.code == 1
    (too_large,) = [f for f in outcome.findings if f["filename"] == "big.sh"]
    assert too_large["code"] == "MTP001" and "too large to lint" in too_large["message"]
    assert "MTP101" in outcome.codes_at("compose.yaml")
    for output in ("full", "sarif"):  # (run() checks the time and the memory)
        assert run(tmp_path, "--isolated", "--no-cache", "--output-format", output, ".").code == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_gitignore_or_engine_config_that_is_a_fifo_is_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / ".gitignore")
    os.mkfifo(tmp_path / "vllm.yaml")
    (tmp_path / "serve.sh").write_text("#!/bin/sh\nexec vllm serve Qwen/Qwen3-8B --config vllm.yaml "
                                      "--speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":2}'\n")
    (tmp_path / "compose.yaml").write_text(BROKEN_COMPOSE)
    outcome = run(tmp_path, "--isolated", "--no-cache", ".")
    assert "MTP101" in outcome.codes_at("compose.yaml")
    assert any("may be set in `--config vllm.yaml`, which mtplint cannot read" in f["message"]
               for f in outcome.findings if f["filename"] == "serve.sh")


# -- the cache ----------------------------------------------------------------------------------

DAMAGED_ENTRIES = {
    "right JSON, no record fields": b'{"deps":{"files":{},"dirs":{}},"record":{}}',
    "deps a list": b'{"deps":[],"record":{"skipped":0,"diagnostics":[],"errors":[],"launches":[],"shown":{}}}',
    "NaN": b"NaN",
    "100k-deep JSON": b"[" * 100_000 + b"]" * 100_000,
    "cut short": b"{\"deps\":{\"fi",
    "not UTF-8": b"\xff\xfe\x00garbage",
}


def cached_run(tmp_path: Path) -> tuple[Path, dict[str, str], Outcome, list[Path]]:
    """A project linted once with a cache of its own: the project, the environment naming the
    cache, the run's outcome and the cache entries it wrote."""
    cache = tmp_path / "cache"
    project = tmp_path / "project"
    project.mkdir()
    (project / "compose.yaml").write_text(BROKEN_COMPOSE)
    env = {"MTPLINT_CACHE_DIR": str(cache)}
    first = run(project, "--isolated", ".", env=env)
    entries = [path for path in cache.rglob("*.json") if path.parent.name != "valid"]
    assert first.code == 1 and entries
    return project, env, first, entries


@pytest.mark.parametrize("damage", DAMAGED_ENTRIES)
def test_a_damaged_cache_entry_is_a_miss_and_is_replaced(tmp_path: Path, damage: str) -> None:
    """A valid-JSON entry of the wrong shape gave a KeyError on every run until ``mtplint clean``."""
    project, env, first, entries = cached_run(tmp_path)
    for entry in entries:
        entry.write_bytes(DAMAGED_ENTRIES[damage])
    second = run(project, "--isolated", ".", env=env)
    assert second.code == 1 and second.findings == first.findings
    assert all(_read_entry(entry) is not None for entry in entries)  # rewritten whole
    assert run(project, "--isolated", ".", env=env).findings == first.findings


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_cache_entry_that_is_a_fifo_is_not_waited_on(tmp_path: Path) -> None:
    project, env, first, entries = cached_run(tmp_path)
    for entry in entries:
        entry.unlink()
        os.mkfifo(entry)
    assert run(project, "--isolated", ".", env=env).findings == first.findings


# -- patterns and templates from the user's configuration ----------------------------------------


def test_a_backtracking_model_pattern_runs_in_linear_time(tmp_path: Path) -> None:
    """``^(a+)+$`` against a 4,000-character name that almost matches: Python's re would not finish."""
    project = copy_case("model-pattern-backtracking", tmp_path)
    outcome = run(project, "--no-cache", ".")
    assert outcome.code == 1
    assert "MTP101" in outcome.codes_at("other/compose.yaml")
    assert outcome.codes_at("serve.sh") == set()
    _, out, _ = run_cli(["inspect", "--format", "json", "serve.sh"], cwd=project)
    assert [launch["engine"] for launch in json.loads(out)["launches"]] == ["vllm"]  # modelled: the pattern ran


def test_a_configured_pattern_is_matched_with_re2() -> None:
    from mtplint.catalogs import Catalogs

    catalogs = Catalogs([], [{"id": "hostile", "patterns": ["^(a+)+$"], "family": "qwen3",
                              "arch": "Qwen3ForCausalLM", "hybrid": False, "mtp_layers": 0}])
    started = time.monotonic()
    assert catalogs.find_model("a" * 100_000 + "b") is None
    assert time.monotonic() - started < 1.0
    found = catalogs.find_model("AAAA")
    assert found is not None and found.id == "hostile"  # ignoring case, as the built-in patterns


def test_a_model_pattern_re2_cannot_match_is_refused_when_loaded(tmp_path: Path) -> None:
    project = copy_case("model-pattern-backtracking", tmp_path)
    toml = project / "mtplint.toml"
    toml.write_text(toml.read_text().replace('"^(a+)+$"', '"^(a)(?=b)"'))
    outcome = run(project, "--no-cache", ".")
    assert outcome.code == 2
    assert "key `models.0.patterns.0`: '^(a)(?=b)' cannot be matched in linear time" in outcome.message
    assert "invalid perl operator: (?=" in outcome.message


@pytest.mark.parametrize(("case", "says"), [
    ("template-width", "`{max_concurrency:>2000000000}` asks for a width of 2000000000; at most 200"),
    ("template-attribute", "placeholder `{max_concurrency.__class__.__init__.__globals__}` reads an attribute or "
                           "an item of `max_concurrency`; write `{max_concurrency}`"),
    ("template-index", "placeholder `{max_concurrency[0]}` reads an attribute or an item of `max_concurrency`"),
])
def test_a_house_rule_template_beyond_a_plain_field_is_refused_when_loaded(tmp_path: Path, case: str,
                                                                          says: str) -> None:
    """``{max_concurrency:>2000000000}`` wrote 2 GB per finding; attribute access reads Python internals."""
    project = copy_case(case, tmp_path)
    outcome = run(project, "--no-cache", ".")
    assert outcome.code == 2
    assert "policy/ACME001.yaml: key `message`: " in outcome.message and says in outcome.message


def test_a_house_rule_template_with_a_bounded_spec_formats_the_value(tmp_path: Path) -> None:
    project = copy_case("template-width", tmp_path)
    rule = project / "policy" / "ACME001.yaml"
    rule.write_text(rule.read_text().replace("{max_concurrency:>2000000000}", "{max_concurrency:>6}"))
    outcome = run(project, "--no-cache", ".")
    (finding,) = [f for f in outcome.findings if f["code"] == "ACME001"]
    assert finding["message"] == "   256 requests at once"
