"""Launch scripts written the way public repositories write them (``tests/data/realworld/shell/``).

Each folder is one deployment: ``set -euo pipefail``, helper functions, ``source``\\ d env files,
``case`` on a profile or engine variable, arrays built in steps, ``exec``. They were written for
this test after reading public launch scripts (the patterns, not their text), so that the shell
reader is judged on what people commit rather than on what its own tests happen to use.

For each file the expected findings are reasoned from what the engine does with the command it
receives on each path of the script, written next to each case. A finding that holds on every path
is plain; one that holds on some paths ends with ``(only when <the branches>)``. Two kinds of
MTP003 and MTP004 (the rules an unpinned engine version left undecided) are left out of the
comparison because they are about the run, not the script: the missing GPU identity (no ``--gpu``
is given here) and an engine version that was not pinned.

``inspect`` is checked per path too: which launches there are, their condition, and where each
setting the engine receives was written (line and column of the token in the file).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli

REALWORLD = Path(__file__).parent / "data" / "realworld" / "shell"


@dataclass(frozen=True)
class Expected:
    """A finding: its code, the token it points at (unique in the file, or the first after
    ``after``), and the branches it holds on (None: every path)."""

    code: str
    token: str
    only_when: str | None = None
    after: str | None = None


@dataclass(frozen=True)
class Path_:
    """One launch ``inspect`` shows: the branches in its context (None: the command runs one way),
    and settings as (value, token where it was written) -- token None: a default, no place; a pair:
    the token's first occurrence after the pair's second text."""

    when: str | None
    engine: str
    settings: dict[str, tuple[Any, str | tuple[str, str] | None]] = field(default_factory=dict)
    #: the shell function call(s) the launch runs in, as its context names them (None: any)
    called: str | None = None


@dataclass(frozen=True)
class Deployment:
    folder: str
    script: str
    findings: tuple[Expected, ...]
    paths: tuple[Path_, ...]

    @property
    def text(self) -> str:
        return (REALWORLD / self.folder / self.script).read_text(encoding="utf-8")


SPEC_TOKENS_SET = '`[[ -n "${SPEC_TOKENS:-}" ]]`'
HF_TOKEN_SET = '`[[ -n "${HF_TOKEN:-}" ]]`'
USE_MTP = '`[[ "$USE_MTP" == 1 ]]`'
DRAFT_ON = '`[ "${USE_DRAFT:-0}" = "1" ]`'
NO_SPEC = '`[[ "${1:-}" == "--no-spec" ]]`'

DEPLOYMENTS = (
    # An array built in steps, a `# comment` line among its elements, the speculative config added
    # only when SPEC_TOKENS is set, and its count an unknown variable inside the JSON.
    # - `--enforce-eager` is on every path, but only matters with speculation: vLLM then runs every
    #   draft and verify step without CUDA graphs (MTP305), on the SPEC_TOKENS path only.
    # - On that path `num_speculative_tokens` is `${SPEC_TOKENS}`, unknown: `method` is still the
    #   literal "mtp" (the engine receives it whatever the count is), the count is MTP003.
    # - The comment line is no argument (bash drops it): no MTP506 for a `# graphs ...` word.
    Deployment("01-array-optional-spec", "serve.sh", (
        Expected("MTP305", "--enforce-eager", SPEC_TOKENS_SET),
        Expected("MTP003", '"{\\"method\\":\\"mtp\\",\\"num_speculative_tokens\\":${SPEC_TOKENS}}"', SPEC_TOKENS_SET),
    ), (
        Path_(SPEC_TOKENS_SET, "vllm", {"model": ("Qwen/Qwen3.6-27B", '"$MODEL"'),
                                        "spec_method": ("mtp", '"{\\"method'),
                                        "cuda_graphs": (False, "--enforce-eager")}),
        Path_(f"not {SPEC_TOKENS_SET}", "vllm", {"model": ("Qwen/Qwen3.6-27B", '"$MODEL"'),
                                                  "spec_method": (None, None)}),
    )),
    # `case "$PROFILE"`: the latency arm gives `{"method": "mtp"}` with no count. vLLM only fills in
    # the MTP draft when a count is given and refuses to start without one (MTP109) -- on the
    # latency path. The throughput arm drafts nothing; the `*)` arm exits, so it starts nothing.
    Deployment("02-case-profile", "serve.sh", (
        Expected("MTP109", "'{\"method\": \"mtp\"}'", "`$PROFILE` matches `latency`"),
    ), (
        Path_("`$PROFILE` matches `latency`", "vllm", {"spec_method": ("mtp", "'{\"method\": \"mtp\"}'"),
                                                         "max_concurrency": (4, '"$MAX_SEQS"')}),
        Path_("`$PROFILE` matches `throughput`", "vllm", {"spec_method": (None, None),
                                                            "max_concurrency": (256, '"$MAX_SEQS"')}),
    )),
    # `if/elif/else` set a scalar that is word-split into the command. Qwen3.6's MTP head is one
    # layer: 5 draft tokens re-run it on its own output (MTP302), on the >= 80 GiB path only; the
    # 2-token and the no-speculation paths are fine.
    Deployment("03-if-elif-scalar", "start_server.sh", (
        Expected("MTP302", "$SPEC_ARGS", '`[ "$GPU_MEM_GB" -ge 80 ]`'),
    ), (
        Path_('`[ "$GPU_MEM_GB" -ge 80 ]`', "vllm", {"spec_tokens": (5, "$SPEC_ARGS")}),
        Path_('`[ "$GPU_MEM_GB" -ge 40 ]`', "vllm", {"spec_tokens": (2, "$SPEC_ARGS")}),
        Path_('none of `[ "$GPU_MEM_GB" -ge 80 ]`, `[ "$GPU_MEM_GB" -ge 40 ]`', "vllm", {"spec_method": (None, None)}),
    )),
    # `"${VENV}/bin/vllm" serve`: the virtualenv's place is only known at run time, the program
    # is vllm. `{"method": "mtp"}` without a count: vLLM refuses to start (MTP109).
    Deployment("04-venv-program", "run_server.sh", (
        Expected("MTP109", "'{\"method\": \"mtp\"}'"),
    ), (
        Path_(None, "vllm", {"model": ("Qwen/Qwen3.6-27B", "Qwen/Qwen3.6-27B"),
                             "spec_method": ("mtp", "'{\"method\": \"mtp\"}'")}),
    )),
    # `"$PYTHON_BIN" -m vllm.entrypoints.openai.api_server`: the interpreter is found at run time,
    # the module is vLLM's server. The count comes from `jq` (MTP003 names it); `method` stays
    # "mtp", so `--enforce-eager` is MTP305. GLM-4.5-Air is no hybrid: vLLM turns prefix caching
    # on by default in every release, and EAGLE-style drafting drops the last matched block on
    # each hit (MTP102; the message says that 0.33+ avoids it and that the version is not pinned).
    Deployment("05-unknown-python", "serve.sh", (
        Expected("MTP003", '"{\\"method\\":\\"mtp\\"'),
        Expected("MTP102", '"{\\"method\\":\\"mtp\\"'),
        Expected("MTP305", "--enforce-eager"),
    ), (
        Path_(None, "vllm", {"model": ("zai-org/GLM-4.5-Air", "zai-org/GLM-4.5-Air"),
                             "spec_method": ("mtp", '"{\\"method\\":\\"mtp\\"'),
                             "spec_tokens": (None, '"{\\"method\\":\\"mtp\\"')}),
    )),
    # `docker run $DOCKER_EXTRA_ARGS "${opts[@]}" "$SGLANG_IMAGE" python3 -m sglang.launch_server`:
    # the extra options and the image are unknown, the SGLang command after them is literal.
    # `--disable-cuda-graph` with NEXTN drafting runs every step without CUDA graphs (MTP305) on
    # both paths (with and without HF_TOKEN), so it is reported once, plainly.
    Deployment("06-docker-hidden-opts", "run-docker.sh", (
        Expected("MTP305", "--disable-cuda-graph"),
    ), (
        Path_(HF_TOKEN_SET, "sglang", {"spec_method": ("mtp", "NEXTN"), "spec_tokens": (3, ("3", "--speculative-num-steps")),
                                       "cuda_graphs": (False, "--disable-cuda-graph")}),
        Path_(f"not {HF_TOKEN_SET}", "sglang", {"spec_method": ("mtp", "NEXTN")}),
    )),
    # The image is the script's first argument and the docker options the rest: the literal
    # `vllm serve` after them is the launch. 4 draft tokens on Qwen3.6's one-layer MTP head: MTP302.
    Deployment("07-docker-image-var", "launch.sh", (
        Expected("MTP302", "'{\"method\": \"mtp\", \"num_speculative_tokens\": 4}'"),
    ), (
        Path_(None, "vllm", {"spec_tokens": (4, "'{\"method\": \"mtp\", \"num_speculative_tokens\": 4}'"),
                             "max_concurrency": (16, "16")}),
    )),
    # `cond && ARGS+=(...)` adds the speculative config (its count `${MTP_TOKENS}` set by
    # `: "${MTP_TOKENS:=3}"`) and `-O0`. `--max-num-sequences` is no vLLM flag (argparse accepts
    # unique prefixes, not longer words): the server exits on every path (MTP506, plain). With MTP
    # on: `-O0` turns CUDA graphs off (MTP305) and GLM's default prefix caching meets EAGLE-style
    # drafting (MTP102), on the `&&` path only.
    Deployment("08-and-list-append", "serve-glm.sh", (
        Expected("MTP506", "--max-num-sequences"),
        Expected("MTP102", '"{\\"method\\":\\"mtp\\"', f"{USE_MTP} succeeds"),
        Expected("MTP305", "-O0", f"{USE_MTP} succeeds"),
    ), (
        Path_(f"{USE_MTP} succeeds", "vllm", {"spec_tokens": (3, '"{\\"method\\":\\"mtp\\"'),
                                              "cuda_graphs": (False, "-O0")}),
        Path_(f"{USE_MTP} fails", "vllm", {"spec_method": (None, None), "cuda_graphs": (True, None)}),
    )),
    # `case "$ENGINE"` builds a vLLM or an SGLang command; `--port 8000` is added after either.
    # SGLang's `--speculative-num-steps 5` is 5 MTP steps on a one-layer head (MTP302), on the
    # sglang path; vLLM's 2 tokens are fine.
    Deployment("09-engine-switch", "serve.sh", (
        Expected("MTP302", "5", "`$ENGINE` matches `sglang`", after="--speculative-num-steps"),
    ), (
        Path_("`$ENGINE` matches `vllm`", "vllm", {"spec_tokens": (2, "'{\"method\":\"mtp\"")}),
        Path_("`$ENGINE` matches `sglang`", "sglang", {"spec_method": ("mtp", "NEXTN"),
                                                        "spec_tokens": (5, ("5", "--speculative-num-steps"))}),
    )),
    # llama-server with a `.`-sourced env file (`set -a`); `-md` only when USE_DRAFT=1. Since
    # b9464 a draft model without a `draft-*` --spec-type is loaded and never used; from b10413 it
    # is typed from its GGUF. The build is not pinned, so on the draft path the rule reports with
    # the affected range (MTP113) and the type read from the GGUF is MTP003.
    Deployment("10-llama-sourced-env", "start-llama.sh", (
        Expected("MTP113", '"$DRAFT_PATH"', DRAFT_ON),
        Expected("MTP003", '"$DRAFT_PATH"', DRAFT_ON),
    ), (
        Path_(DRAFT_ON, "llama.cpp", {"model": ("/models/Qwen3.6-27B-Q4_K_M.gguf", '"$MODEL_PATH"')}),
        Path_(f"not {DRAFT_ON}", "llama.cpp", {"spec_method": (None, None)}),
    )),
    # Five independent switches: 32 paths, more than the reader follows. The array keeps the
    # elements every path starts with, then one unknown run (MTP003 names it). The run could hold a
    # token count as far as mtplint can tell, so the missing count (MTP109) is not claimed.
    Deployment("11-too-many-branches", "serve.sh", (
        Expected("MTP003", "${ARGS[@]}"),
    ), (
        Path_(None, "vllm", {"spec_method": ("mtp", "'{\"method\": \"mtp\"}'")}),
    )),
    # A container entrypoint: `exec "$@"` ends the script when arguments are given, so it is no
    # branch of the launch. `${SPEC_METHOD:=mtp}` and `${NUM_SPEC_TOKENS:-2}` inside the JSON take
    # their defaults; `${GPU_UTIL:-0.97}` leaves 3% outside vLLM's pool with a drafter (MTP204).
    Deployment("12-entrypoint-defaults", "entrypoint.sh", (
        Expected("MTP204", '"${GPU_UTIL:-0.97}"'),
    ), (
        Path_(None, "vllm", {"spec_method": ("mtp", '"{\\"method'), "spec_tokens": (2, '"{\\"method'),
                             "memory_fraction": (0.97, '"${GPU_UTIL:-0.97}"')}),
    )),
    # A scalar of arguments with one unknown part (the GPU count from `nvidia-smi`), split unquoted
    # into the command: the other words stay known. On the spec path 4 draft tokens on Qwen3.6's
    # one-layer head (MTP302); the unknown tensor-parallel size is MTP003 there (speculation is
    # off on the other path, where no rule needs it).
    Deployment("13-scalar-args-unknown-part", "serve.sh", (
        Expected("MTP302", "$SERVE_ARGS", '`[[ "${MODE:-plain}" == spec ]]`'),
        Expected("MTP003", "$SERVE_ARGS", '`[[ "${MODE:-plain}" == spec ]]`'),
    ), (
        Path_('`[[ "${MODE:-plain}" == spec ]]`', "vllm", {"model": ("Qwen/Qwen3.6-35B-A3B", "$SERVE_ARGS"),
                                                          "spec_tokens": (4, "$SERVE_ARGS"),
                                                          "max_concurrency": (64, "$SERVE_ARGS")}),
        Path_('not `[[ "${MODE:-plain}" == spec ]]`', "vllm", {"model": ("Qwen/Qwen3.6-35B-A3B", "$SERVE_ARGS"),
                                                               "spec_method": (None, None)}),
    )),
    # A Slurm job running vLLM in an Apptainer image (`apptainer exec --nv --bind ... "$SIF" vllm
    # serve ...`): the image is a file only known at run time, the command after it is literal.
    # `--enforce-eager` with MTP: every step without CUDA graphs (MTP305).
    Deployment("14-apptainer-job", "serve_job.sh", (
        Expected("MTP305", "--enforce-eager"),
    ), (
        Path_(None, "vllm", {"model": ("Qwen/Qwen3.6-27B", "Qwen/Qwen3.6-27B"),
                             "spec_tokens": (1, "'{\"method\":\"mtp\",\"num_speculative_tokens\":1}'"),
                             "cuda_graphs": (False, "--enforce-eager")}),
    )),
    # The launch is in `main`, called as `main "$@"`: bash runs the body there, so it is the launch.
    # Its `local spec_config` asks for 4 draft tokens on Qwen3.6-27B's one-layer MTP head, which
    # re-runs that one layer on its own drafts (MTP302). The script's own arguments pass through
    # `"$@"` unknown; they come after a literal speculative config, so no setting is in doubt.
    Deployment("15-main-wrapper", "serve.sh", (
        Expected("MTP302", '"$spec_config"'),
    ), (
        Path_(None, "vllm", {"model": ("Qwen/Qwen3.6-27B", '"$MODEL"'),
                             "spec_tokens": (4, '"$spec_config"'),
                             "max_concurrency": (32, "32")}, called="in main() called at line 25"),
    )),
    # One function started twice in the background, once per GPU, with the port and the memory
    # share as its arguments. vLLM gets `--gpu-memory-utilization "$2"` as the call passes it:
    # 0.90 on the first replica is fine, 0.97 on the second leaves 3% beside vLLM's pool for the
    # drafter's buffers and CUDA graphs of the k+1-token steps (MTP204) -- that replica only, and no
    # branch is involved, so the finding is plain.
    Deployment("16-function-per-replica", "start_replicas.sh", (
        Expected("MTP204", '"$mem_util"'),
    ), (
        Path_(None, "vllm", {"memory_fraction": (0.9, '"$mem_util"'), "spec_tokens": (2, '"$SPEC"')},
              called="in start_server() called at line 20"),
        Path_(None, "vllm", {"memory_fraction": (0.97, '"$mem_util"'), "spec_tokens": (2, '"$SPEC"')},
              called="in start_server() called at line 22"),
    )),
    # `case "${ENGINE:-vllm}"` calls one function per engine; the `*)` arm calls `die`, which exits.
    # vLLM: MTP with `--enforce-eager` runs each draft and verify step without CUDA graphs (MTP305).
    # SGLang: NEXTN with 3 steps, top-k 1 and 4 draft tokens (steps + 1, as SGLang wants for top-k
    # 1) on Qwen3.6's one-layer head stays at the length that still pays: nothing to report.
    Deployment("17-case-engine-functions", "serve.sh", (
        Expected("MTP305", "--enforce-eager"),
    ), (
        Path_(None, "vllm", {"model": ("Qwen/Qwen3.6-35B-A3B", ('"$MODEL"', "serve_vllm() {")),
                             "spec_tokens": (1, "'{\"method\":\"mtp\""),
                             "tensor_parallel": (2, ('"$TP"', "serve_vllm() {")), "cuda_graphs": (False, "--enforce-eager")},
              called="in serve_vllm() called at line 33"),
        Path_(None, "sglang", {"model": ("Qwen/Qwen3.6-35B-A3B", ('"$MODEL"', "serve_sglang() {")),
                               "spec_tokens": (3, ("3", "--speculative-num-steps")),
                               "spec_draft_tokens": (4, ("4", "--speculative-num-draft-tokens")),
                               "tensor_parallel": (2, ('"$TP"', "serve_sglang() {"))},
              called="in serve_sglang() called at line 34"),
    )),
    # `main` -> `spec_args` (fills an array, `return 0` early on `--no-spec`) -> `launch` (`local
    # model="$1"; shift` then `"$@"`). The early return is a path of its own: without speculation,
    # or with 3 MTP tokens on GLM-4.5-Air. GLM is no hybrid model: vLLM turns prefix caching on by
    # default, and EAGLE-style drafting drops the last matched block on each hit (MTP102), on the
    # speculation path only.
    Deployment("18-nested-helpers-return", "run.sh", (
        Expected("MTP102", "'{\"method\":\"mtp\"", f"not {NO_SPEC}"),
    ), (
        Path_(NO_SPEC, "vllm", {"model": ("zai-org/GLM-4.5-Air", '"$model"'), "spec_method": (None, None),
                                "max_concurrency": (48, "48")},
              called="in launch() called at line 28, from main() called at line 31"),
        Path_(f"not {NO_SPEC}", "vllm", {"model": ("zai-org/GLM-4.5-Air", '"$model"'),
                                         "spec_tokens": (3, "'{\"method\":\"mtp\""),
                                         "max_concurrency": (48, "48")},
              called="in launch() called at line 28, from main() called at line 31"),
    )),
)


def position(text: str, token: str, after: str | None = None) -> tuple[int, int]:
    """1-based (line, column) of ``token`` in ``text``: its only occurrence, or the first after ``after``."""
    start = text.index(after) if after is not None else 0
    index = text.index(token, start)
    if after is None:
        assert text.count(token) == 1, f"{token!r} occurs more than once"
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def about_the_script(finding: dict[str, Any]) -> bool:
    """Not the run-wide MTP003s (GPU identity) nor MTP004 (an unpinned version): see the module docstring."""
    message: str = finding["message"]
    if finding["code"] == "MTP004":
        return False
    return finding["code"] != "MTP003" or "cannot resolve" in message or "may add arguments" in message


@pytest.mark.parametrize("deployment", DEPLOYMENTS, ids=[d.folder for d in DEPLOYMENTS])
def test_findings_per_path(deployment: Deployment) -> None:
    project = REALWORLD / deployment.folder
    _, out, err = run_cli(["check", "--output-format", "json", "--isolated", "--no-cache", "."], cwd=project)
    findings = [finding for finding in json.loads(out) if about_the_script(finding)]
    got = sorted((f["code"], f["location"]["row"], f["location"]["column"], f["message"]) for f in findings)
    text = deployment.text
    wanted = sorted((e.code, *position(text, e.token, e.after), e.only_when) for e in deployment.findings)
    assert [(code, line, column) for code, line, column, _ in got] == \
        [(code, line, column) for code, line, column, _ in wanted], (err, got)
    for (_, _, _, message), (_, _, _, only_when) in zip(got, wanted, strict=True):
        if only_when is None:
            assert "(only when" not in message, message
        else:
            assert message.endswith(f"(only when {only_when})"), message


@pytest.mark.parametrize("deployment", DEPLOYMENTS, ids=[d.folder for d in DEPLOYMENTS])
def test_inspect_shows_each_path_with_spans(deployment: Deployment) -> None:
    project = REALWORLD / deployment.folder
    _, out, err = run_cli(["inspect", "--format", "json", deployment.script], cwd=project)
    launches = json.loads(out)["launches"]
    contexts = [launch["context"].partition(", when ")[2] or None for launch in launches]
    assert sorted(contexts, key=str) == sorted((path.when for path in deployment.paths), key=str), err
    text = deployment.text
    for path in deployment.paths:
        (launch,) = [launch for launch, when in zip(launches, contexts, strict=True) if when == path.when
                     and (path.called is None or f", {path.called}" in launch["context"])]
        assert launch["engine"] == path.engine
        for name, (value, token) in path.settings.items():
            setting = launch["effective"][name]
            assert setting["value"] == value, (path.when, name, setting)
            if token is None:
                assert "line" not in setting, (path.when, name, setting)
            else:
                where = position(text, token) if isinstance(token, str) else position(text, *token)
                assert (setting["line"], setting["column"]) == where, (path.when, name, setting)


def test_a_comment_line_inside_an_array_is_no_argument() -> None:
    project = REALWORLD / "01-array-optional-spec"
    _, out, _ = run_cli(["inspect", "--format", "json", "serve.sh"], cwd=project)
    for launch in json.loads(out)["launches"]:
        assert not any(isinstance(word, str) and word.startswith("#") for word in launch["argv"])
        assert launch["argv"][:8] == ["vllm", "serve", "Qwen/Qwen3.6-27B", "--served-model-name", "qwen36-27b",
                                      "--port", "8000", "--enforce-eager"]


def test_worker_processes_and_the_cache_name_the_same_branches() -> None:
    """Findings of launches that differ by path are worded in the process that checks the file
    (``--jobs``, the cache keep them as records): the same words as the plain run."""
    plain = run_cli(["check", "--output-format", "json", "--isolated", "--no-cache", "-j", "1", "."], cwd=REALWORLD)[1]
    assert "(only when" in plain
    workers = run_cli(["check", "--output-format", "json", "--isolated", "--no-cache", "-j", "2", "."], cwd=REALWORLD)[1]
    assert json.loads(workers) == json.loads(plain)
    for _ in range(2):  # filling the cache, then read from it
        cached = run_cli(["check", "--output-format", "json", "--isolated", "-j", "1", "."], cwd=REALWORLD)[1]
        assert json.loads(cached) == json.loads(plain)


def test_each_call_of_a_function_is_a_launch_with_the_calls_words_and_prefixes() -> None:
    """``CUDA_VISIBLE_DEVICES=1 start_server 8002 0.97``: the body runs with ``$1``/``$2`` bound to
    the call's words and the prefix exported to it, as bash runs it; the spans stay in the body."""
    project = REALWORLD / "16-function-per-replica"
    _, out, err = run_cli(["inspect", "--format", "json", "start_replicas.sh"], cwd=project)
    launches = json.loads(out)["launches"]
    assert [(launch["context"], launch["argv"][3:6], launch["env"]) for launch in launches] == [
        ("line 12, in start_server() called at line 20", ["--port", "8001", "--gpu-memory-utilization"],
         {"CUDA_VISIBLE_DEVICES": "0"}),
        ("line 12, in start_server() called at line 22", ["--port", "8002", "--gpu-memory-utilization"],
         {"CUDA_VISIBLE_DEVICES": "1"}),
    ], err
    text = (project / "start_replicas.sh").read_text(encoding="utf-8")
    for launch in launches:
        assert (launch["line"], launch["column"]) == position(text, "vllm serve")
