"""pre-commit integration: ``.pre-commit-hooks.yaml`` and what a hook run sees.

pre-commit passes the files it selected by name, so a compose file may arrive without its `.env`
or the `--config` YAML its launch names; mtplint reads those itself. The end-to-end test runs the
real ``pre-commit run`` with a configuration naming a snapshot of this checkout (tracked and untracked
files, so work not yet committed is what is tested); installing the hook's environment needs PyPI.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mtplint.discover import launches_naming
from tests.conftest import run_cli

ROOT = Path(__file__).parent.parent

#: MTP103 on a pinned SGLang image: NEXTN on 0.5.9 without SGLANG_ENABLE_SPEC_V2 (a safe fix)
COMPOSE_MTP103 = """\
services:
  sglang:
    image: lmsysorg/sglang:v0.5.9-cu129
    ipc: host
    ports: ["30000:30000"]
    command: >
      python3 -m sglang.launch_server
      --model-path deepseek-ai/DeepSeek-V3-0324
      --tp 8
      --speculative-algorithm NEXTN
      --speculative-num-steps 3
      --speculative-eagle-topk 1
      --speculative-num-draft-tokens 4
      --host 0.0.0.0 --port 30000
"""


def _hooks() -> dict[str, dict[str, object]]:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    return {hook["id"]: hook for hook in hooks}


def test_manifest_declares_both_hooks() -> None:
    hooks = _hooks()
    assert set(hooks) == {"mtplint", "mtplint-fix"}
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["types"] == ["text"]
        assert hook["require_serial"] is True
        assert hook["minimum_pre_commit_version"]
    assert hooks["mtplint"]["entry"] == "mtplint check"
    assert hooks["mtplint-fix"]["entry"] == "mtplint check --fix"
    pre_commit = pytest.importorskip("pre_commit.clientlib")
    assert [hook["id"] for hook in pre_commit.load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))] == [
        "mtplint", "mtplint-fix"]


@pytest.mark.parametrize(("path", "selected"), [
    ("compose.yaml", True), ("deploy/docker-compose.override.yml", True), ("k8s/vllm.yaml", True),
    (".env", True), ("deploy/.env.production", True), ("prod.env", True),
    ("serve.sh", True), ("scripts/start.bash", True), ("config.json", True), ("launch.py", True),
    ("Dockerfile", True), ("docker/Dockerfile.sglang", True), ("vllm.Dockerfile", True), ("Containerfile", True),
    ("systemd/vllm.service", True), ("deploy/.env-prod", True), ("Compose.YAML", True), ("serve.SH", True),
    ("llama/presets.ini", True), ("scripts/serve.zsh", True), ("bin/serve-vllm", True),
    ("README.md", False), ("requirements.txt", False), ("main.go", False), (".envrc.example.md", False),
    ("docs/Dockerfile/notes.md", False), ("images/logo.png", False),
])
def test_files_pattern(path: str, selected: bool) -> None:
    pattern = re.compile(str(_hooks()["mtplint"]["files"]))
    assert bool(pattern.search(path)) is selected


def test_files_pattern_selects_every_file_mtplint_would_lint() -> None:
    """A file `mtplint check .` lints must reach the hook when it changes: every name that
    :func:`mtplint.discover.classify` gives a kind, by name or (for names without an extension)
    by its `#!` line."""
    from mtplint.discover import classify

    pattern = re.compile(str(_hooks()["mtplint"]["files"]))
    names = ["compose.yaml", "docker-compose.prod.yml", "values.yaml", "serve.sh", "serve.bash", "serve.zsh",
             "serve.ksh", "launch.py", "launch.pyw", "Dockerfile", "Containerfile", "Dockerfile.sglang",
             "containerfile.cuda", "vllm.dockerfile", "vllm.service", "presets.ini", "config.ini"]
    for name in names:
        assert classify(Path(name)) is not None, name
        assert pattern.search(f"deploy/{name}"), name
    for shebang in (b"#!/usr/bin/env bash\n", b"#!/bin/sh\n", b"#!/usr/bin/env python3\n"):
        assert classify(Path("bin/serve-vllm"), shebang) is not None
    assert pattern.search("bin/serve-vllm")


# -- what a hook run sees: files not passed are still read ------------------------------------

def test_compose_passed_alone_reads_its_env_file(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text(COMPOSE_MTP103.replace("v0.5.9-cu129", "${SGLANG_TAG}"), encoding="utf-8")
    (tmp_path / ".env").write_text("SGLANG_TAG=v0.5.9-cu129\n", encoding="utf-8")
    code, out, err = run_cli(["check", "--isolated", "--output-format", "json", "--select", "MTP103", "compose.yaml"],
                             cwd=tmp_path)
    assert code == 1, err
    [finding] = json.loads(out)
    assert finding["code"] == "MTP103" and "0.5.9" in finding["message"]
    # without the `.env` the tag is unknown: no version, so no finding resting on it
    (tmp_path / ".env").unlink()
    code, out, _ = run_cli(["check", "--isolated", "--output-format", "json", "--select", "MTP103", "compose.yaml"],
                           cwd=tmp_path)
    assert [f["code"] for f in json.loads(out)] != ["MTP103"] or "0.5.9" not in out


def test_env_file_passed_alone_lints_the_compose_files_beside_it(tmp_path: Path) -> None:
    """A commit that only bumps the image tag in `.env` (or an `env_file:`) changes the launch: the
    hook passes just that file, and the compose file that reads it is linted (and fixed) with it."""
    (tmp_path / "compose.yaml").write_text(
        COMPOSE_MTP103.replace("v0.5.9-cu129", "${SGLANG_TAG}").replace(
            "    ipc: host\n", "    ipc: host\n    env_file: [sglang.env]\n"), encoding="utf-8")
    (tmp_path / ".env").write_text("SGLANG_TAG=v0.5.9-cu129\n", encoding="utf-8")
    (tmp_path / "sglang.env").write_text("HF_HOME=/models\n", encoding="utf-8")
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / ".env").write_text("UNRELATED=1\n", encoding="utf-8")
    for passed in (".env", "sglang.env"):
        code, out, err = run_cli(["check", "--isolated", "--output-format", "json", "--select", "MTP103", passed],
                                 cwd=tmp_path)
        assert code == 1, err
        [finding] = json.loads(out)
        assert (finding["code"], finding["filename"]) == ("MTP103", "compose.yaml"), passed
    # an environment file with no compose file beside it brings in nothing
    code, out, err = run_cli(["check", "--isolated", "--output-format", "json", "deploy/.env"], cwd=tmp_path)
    assert (code, json.loads(out)) == (0, []), err
    code, _, err = run_cli(["check", "--isolated", "--fix", "--select", "MTP103", ".env"], cwd=tmp_path)
    assert code == 0, err
    assert 'SGLANG_ENABLE_SPEC_V2: "1"' in (tmp_path / "compose.yaml").read_text(encoding="utf-8")


def test_compose_passed_alone_reads_the_config_file_its_launch_names(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text(
        "services:\n"
        "  vllm:\n"
        "    image: vllm/vllm-openai:v0.30.0\n"
        "    volumes: [\"./serve.yaml:/etc/vllm/serve.yaml:ro\"]\n"
        "    command: [\"--config\", \"serve.yaml\"]\n", encoding="utf-8")
    (tmp_path / "serve.yaml").write_text(
        "model: Qwen/Qwen3.6-27B\n"
        "kv-cache-dtype: turboquant_4bit_nc\n"
        "speculative-config:\n"
        "  method: mtp\n"
        "  num_speculative_tokens: 2\n", encoding="utf-8")
    code, out, err = run_cli(["check", "--isolated", "--output-format", "json", "--select", "MTP101", "compose.yaml"],
                             cwd=tmp_path)
    assert code == 1, err
    [finding] = json.loads(out)
    assert (finding["filename"], finding["location"]["row"]) == ("serve.yaml", 2)



SERVE_YAML_MTP107 = (
    "# vLLM --config for the MTP deployment\n"
    "model: Qwen/Qwen3.6-27B\n"
    "max-num-seqs: 8\n"
    "enable-prefix-caching: false   # the flag is ignored: prefix caching stays on\n"
)


@pytest.mark.parametrize("layout", ["compose", "script", "script without extension"])
def test_config_file_passed_alone_lints_the_launch_that_reads_it(tmp_path: Path, layout: str) -> None:
    """A commit that only edits a vLLM ``--config`` YAML changes the launch that reads it: the hook
    passes just that file, and the compose file or script naming it is linted with it (MTP107 is
    reported in the config file, where the ignored ``false`` is written)."""
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "serve.yaml").write_text(SERVE_YAML_MTP107, encoding="utf-8")
    if layout == "compose":
        (tmp_path / "compose.yaml").write_text(
            "services:\n"
            "  vllm:\n"
            "    image: vllm/vllm-openai:v0.30.0\n"
            "    volumes: [\"./configs:/configs:ro\"]\n"
            "    command: >\n"
            "      --config /configs/serve.yaml\n"
            "      --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 2}'\n",
            encoding="utf-8")
    else:
        (tmp_path / "scripts").mkdir()
        (tmp_path / "scripts" / ("serve.sh" if layout == "script" else "serve")).write_text(
            "#!/usr/bin/env bash\nset -euo pipefail\ncd \"$(dirname \"$0\")\"\n"
            "exec vllm serve --config ../configs/serve.yaml \\\n"
            "  --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 2}'\n",
            encoding="utf-8")
    (tmp_path / "ci.yaml").write_text("model: not-an-engine-config\n", encoding="utf-8")  # names no config
    code, out, err = run_cli(["check", "--isolated", "--output-format", "json", "--select", "MTP107",
                              "configs/serve.yaml"], cwd=tmp_path)
    assert code == 1, err
    [finding] = json.loads(out)
    assert (finding["code"], finding["filename"], finding["location"]["row"]) == ("MTP107", "configs/serve.yaml", 4)
    code, _, err = run_cli(["check", "--isolated", "--fix", "--select", "MTP107", "configs/serve.yaml"], cwd=tmp_path)
    assert code == 0, err
    assert "no-enable-prefix-caching: true" in (tmp_path / "configs" / "serve.yaml").read_text(encoding="utf-8")


def test_yaml_passed_alone_brings_in_nothing_unless_a_launch_names_it(tmp_path: Path) -> None:
    """A CI workflow, or an engine config no launch reads, is linted on its own: nothing else is read."""
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "ci.yml").write_text(
        "on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps: [{run: make}]\n", encoding="utf-8")
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "serve.yaml").write_text(SERVE_YAML_MTP107, encoding="utf-8")
    (tmp_path / "compose.yaml").write_text(  # a launch, but of another config
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.30.0\n    command: [\"--config\", \"other.yaml\"]\n",
        encoding="utf-8")
    for passed in (".github/workflows/ci.yml", "configs/serve.yaml"):
        code, out, err = run_cli(["check", "--isolated", "--output-format", "json", passed], cwd=tmp_path)
        assert (code, json.loads(out)) == (0, []), (passed, err)
    assert launches_naming(tmp_path / "configs" / "serve.yaml", tmp_path) == []
    assert launches_naming(tmp_path / "compose.yaml", tmp_path) == []

# -- the real pre-commit --------------------------------------------------------------------------

def _git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, check=True)
    return done.stdout


def _snapshot_of_checkout(target: Path) -> Path:
    """This checkout as it is now (tracked and untracked files, not ignored ones), committed in a
    fresh repository: pre-commit clones a commit, which would leave untracked files out."""
    listed = _git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=ROOT)
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if not source.is_file():
            continue  # deleted in the working tree
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, destination)
    _git("init", "-q", cwd=target)
    _git("add", "-A", cwd=target)
    _git("commit", "-q", "-m", "snapshot", cwd=target)
    return target


def _pre_commit(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    # PIP_NO_COMPILE=0 is pip's `--no-compile` (pip reads a `--no-*` switch's variable as the value of
    # what it negates): the hook's environment is not byte-compiled at install, only what the hook imports
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never", "NO_COLOR": "1",
           "PIP_NO_COMPILE": "0"}
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)


def _config_using(hook_repo: Path, target: Path) -> Path:
    """A user's ``.pre-commit-config.yaml`` naming both published hooks at the snapshot's commit (what
    ``try-repo`` writes for itself; ``try-repo`` keeps its environments in a folder of its own per
    call, so three calls would install mtplint three times, where one ``PRE_COMMIT_HOME`` installs it once)."""
    revision = _git("rev-parse", "HEAD", cwd=hook_repo).strip()
    config = {"repos": [{"repo": str(hook_repo), "rev": revision, "hooks": [{"id": "mtplint"}, {"id": "mtplint-fix"}]}]}
    target.write_text(yaml.safe_dump(config), encoding="utf-8")
    return target


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.slow
def test_pre_commit_run_reports_then_fixes(tmp_path: Path) -> None:
    pytest.importorskip("pre_commit")
    if not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout of mtplint")
    hook_repo = _snapshot_of_checkout(tmp_path / "mtplint")
    project = tmp_path / "deployment"
    project.mkdir()
    _git("init", "-q", cwd=project)
    (project / "compose.yaml").write_text(COMPOSE_MTP103, encoding="utf-8")
    (project / "README.md").write_text("# inference\n", encoding="utf-8")
    _git("add", "-A", cwd=project)
    # outside the project, so that `--all-files` hands the hooks the project's files only
    config = str(_config_using(hook_repo, tmp_path / "pre-commit-config.yaml"))
    home = tmp_path / "pre-commit-home"

    check = _pre_commit("run", "--config", config, "mtplint", "--all-files", cwd=project, home=home)
    output = check.stdout + check.stderr
    assert check.returncode == 1, output
    assert re.search(r"compose\.yaml:10:\d+: MTP103", output), output

    fix = _pre_commit("run", "--config", config, "mtplint-fix", "--all-files", cwd=project, home=home)
    fixed_output = fix.stdout + fix.stderr
    fixed = (project / "compose.yaml").read_text(encoding="utf-8")
    assert fix.returncode == 1, fixed_output  # files were modified by this hook
    assert fixed != COMPOSE_MTP103, fixed_output
    assert "SGLANG_ENABLE_SPEC_V2" in fixed

    again = _pre_commit("run", "--config", config, "mtplint", "--all-files", cwd=project, home=home)
    assert "MTP103" not in again.stdout + again.stderr, again.stdout + again.stderr
    assert again.returncode == 0, again.stdout + again.stderr  # only an `info` finding (MTP003) is left
    # one environment for both hooks and all three runs: mtplint was installed once
    assert len([path for path in home.iterdir() if path.is_dir() and path.name.startswith("repo")]) == 1


def test_the_readme_pins_the_release_it_describes() -> None:
    # the snippet users paste must name a revision that exists: the tag of the version in pyproject.toml,
    # which is made on the commit that sets that version
    from mtplint import __version__

    pinned = re.findall(r"^\s*rev:\s*(\S+)", (ROOT / "README.md").read_text(encoding="utf-8"), re.MULTILINE)
    assert pinned == [f"v{__version__}"]
    project = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^version = "([^"]+)"', project, re.MULTILINE)[1] == __version__  # type: ignore[index]
