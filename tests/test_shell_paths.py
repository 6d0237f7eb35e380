"""The shell reader's paths through a script's branches, and the launch recognition around them
(partly known programs, ``docker run`` with options that cannot be seen, JSON with one unknown value)."""

from __future__ import annotations

from pathlib import Path

from mtplint.engines.partial_json import partial_object
from mtplint.extract import ExtractContext, FileLoader
from mtplint.extract.launch import Launch, recognise
from mtplint.extract.shell.launches import extract
from mtplint.extract.shell.paths import MAX_PATHS, describe
from mtplint.source import Token


def launches(tmp_path: Path, text: str, files: dict[str, str] | None = None) -> list[Launch]:
    for name, content in {"serve.sh": text, **(files or {})}.items():
        (tmp_path / name).write_text(content, encoding="utf-8")
    loader = FileLoader(tmp_path)
    source = loader.load(tmp_path / "serve.sh")
    assert source is not None
    return extract(source, ExtractContext(loader))


def words(launch: Launch) -> list[str]:
    return [token.value for token in launch.argv]


def test_an_append_on_one_branch_gives_a_launch_per_path(tmp_path: Path) -> None:
    found = launches(tmp_path, """\
ARGS=(vllm serve m --enforce-eager)
if [[ -n "${SPEC:-}" ]]; then
  ARGS+=(--speculative-config '{"method":"mtp","num_speculative_tokens":2}')
fi
exec "${ARGS[@]}"
""")
    by_context = {launch.context: words(launch) for launch in found}
    assert by_context == {
        'line 5, when `[[ -n "${SPEC:-}" ]]`': ["vllm", "serve", "m", "--enforce-eager", "--speculative-config",
                                                '{"method":"mtp","num_speculative_tokens":2}'],
        'line 5, when not `[[ -n "${SPEC:-}" ]]`': ["vllm", "serve", "m", "--enforce-eager"],
    }
    # each word keeps the place it was written in the array, not the `"${ARGS[@]}"` it came through
    eager = found[0].argv[3]
    assert eager.span is not None and (eager.span.line, eager.span.column, eager.span.end_column) == (1, 20, 35)
    assert all(launch.paths for launch in found)


def test_branches_that_end_alike_are_no_fork(tmp_path: Path) -> None:
    (launch,) = launches(tmp_path, """\
set -euo pipefail
MODEL=Qwen/Qwen3-8B
if [ ! -d /models ]; then
  echo "no model dir" >&2
  exit 1
fi
[ -n "${HF_TOKEN:-}" ] || echo "HF_TOKEN not set, gated models will fail" >&2
case "$1" in
  --help) echo "usage: serve.sh"; exit 0 ;;
esac
exec vllm serve "$MODEL"
""")
    assert launch.context == "line 11" and launch.paths is None
    assert words(launch) == ["vllm", "serve", "Qwen/Qwen3-8B"]


def test_exec_in_a_branch_ends_that_path(tmp_path: Path) -> None:
    found = launches(tmp_path, """\
if [[ "${ENGINE:-vllm}" == sglang ]]; then
  K=3
  exec python3 -m sglang.launch_server --model-path m --speculative-num-steps "$K"
fi
K=2
exec vllm serve m --speculative-config "{\\"method\\":\\"mtp\\",\\"num_speculative_tokens\\":$K}"
""")
    assert [(launch.engine, launch.context) for launch in found] == [("sglang", "line 3"), ("vllm", "line 6")]


def test_scalar_assigned_per_branch(tmp_path: Path) -> None:
    found = launches(tmp_path, """\
case "${PROFILE:-fast}" in
  fast) SPEC_ARGS="--speculative-config {\\"method\\":\\"mtp\\",\\"num_speculative_tokens\\":1}" ;;
  slow) SPEC_ARGS="" ;;
esac
vllm serve m $SPEC_ARGS
""")
    assert sorted((launch.context, len(launch.argv)) for launch in found) == [
        # no arm set SPEC_ARGS: the caller's value, unknown (one word of unknown count)
        ("line 5, when `${PROFILE:-fast}` is none of `fast`, `slow`", 4),
        ("line 5, when `${PROFILE:-fast}` matches `fast`", 5),
        ("line 5, when `${PROFILE:-fast}` matches `slow`", 3),
    ]


def test_more_paths_than_the_bound_merge_branches_and_keep_the_common_start(tmp_path: Path) -> None:
    switches = max(1, MAX_PATHS.bit_length())  # 2**switches > MAX_PATHS
    text = "ARGS=(vllm serve m --port 8000)\n" + "".join(
        f'[[ -n "${{F{n}:-}}" ]] && ARGS+=(--flag{n})\n' for n in range(switches)) + 'exec "${ARGS[@]}"\n'
    (launch,) = launches(tmp_path, text)
    assert words(launch)[:5] == ["vllm", "serve", "m", "--port", "8000"]
    rest = launch.argv[5:]
    assert len(rest) == 1 and rest[0].splat and rest[0].unresolved == ("ARGS",)


def test_describe_keeps_what_all_paths_share() -> None:
    assert describe([("`a`", "`b`"), ("`a`", "not `b`")]) == "`a`"
    assert describe([("`a`",), ("not `a`", "`c`")]) == "`a` or (not `a` and `c`)"


def test_partly_known_programs_are_recognised() -> None:
    def token(value: str, *unresolved: str, splat: bool = False) -> Token:
        return Token(value, None, unresolved, splat)

    venv = recognise([token("${VENV}/bin/vllm", "VENV"), token("serve"), token("m")])
    assert venv is not None and venv.engine == "vllm" and [t.value for t in venv.args] == ["m"]
    module = recognise([token("$PY", "PY"), token("-m"), token("sglang.launch_server"), token("--model-path")])
    assert module is not None and module.engine == "sglang"
    assert recognise([token("$PY", "PY"), token("-m"), token("my_app.server")]) is None
    assert recognise([token("$RUNNER", "RUNNER"), token("vllm"), token("serve")]) is None  # could be `echo`

    hidden = recognise([token("docker"), token("run"), token("${opts[@]}", "opts", splat=True),
                        token("$IMAGE", "IMAGE"), token("sglang"), token("serve"), token("--model-path")])
    assert hidden is not None and hidden.engine == "sglang" and hidden.image is not None
    assert hidden.image.value == "$IMAGE" and [t.value for t in hidden.docker_hidden] == ["${opts[@]}"]
    image = recognise([token("docker"), token("run"), token("$OPTS", "OPTS", splat=True),
                       token("vllm/vllm-openai:v0.11.0"), token("--model"), token("m")])
    assert image is not None and [t.value for t in image.program] == ["vllm", "serve"]


def test_docker_options_that_cannot_be_seen_leave_the_environment_open(tmp_path: Path) -> None:
    (launch,) = launches(tmp_path, 'docker run --gpus all $DOCKER_ARGS "$IMG" python3 -m sglang.launch_server '
                                   '--model-path m\n')
    assert [token.value for token in launch.env_open] == ["docker run $DOCKER_ARGS"]


def test_json_with_one_unknown_value_keeps_its_literal_keys() -> None:
    partial = partial_object('{"num_speculative_tokens":$(nproc),"method":"mtp","model":"${DRAFT}"}')
    assert partial is not None
    assert partial.known == {"method": "mtp"} and partial.unknown == ["num_speculative_tokens", "model"]
    assert partial_object('{"method":"mtp"}') is None  # nothing unknown: the engine's own parser reads it
    assert partial_object('{$KEY: 1}') is None  # an unknown key: no object to speak of


def test_an_unknown_value_ends_where_the_shell_ends_it() -> None:
    """A ``)`` or ``}`` quoted inside a command substitution or a default does not end it, as in
    the shell: the keys after it are still read."""
    partial = partial_object('{"num_speculative_tokens":$(printf %s "$N" | tr -d \')\'),"method":"mtp",'
                             '"draft_tensor_parallel_size":${TP:-"}"}}')
    assert partial is not None
    assert partial.known == {"method": "mtp"}
    assert partial.unknown == ["num_speculative_tokens", "draft_tensor_parallel_size"]


def test_an_unquoted_value_with_an_unknown_part_keeps_its_known_words(tmp_path: Path) -> None:
    (launch,) = launches(tmp_path, """\
N="$(jq -r '.tensor parallel' conf.json)"
ARGS="--max-num-seqs 8 --tensor-parallel-size $N --port 8000"
vllm serve m $ARGS $N
""")
    shown = [token.value if token.resolved else (token.value, token.splat) for token in launch.args]
    # the words around `$N` are known; `$N` alone is one unknown expansion, not split at its blanks
    assert shown == ["m", "--max-num-seqs", "8", "--tensor-parallel-size", ("$(jq -r '.tensor parallel' conf.json)", True),
                     "--port", "8000", ("$(jq -r '.tensor parallel' conf.json)", True)]


def test_apptainer_passes_the_callers_environment_unless_cleanenv(tmp_path: Path) -> None:
    shared, clean = launches(tmp_path, """\
export SGLANG_ENABLE_SPEC_V2=1
apptainer exec --nv --bind /data:/data sglang.sif python3 -m sglang.launch_server --model-path m
apptainer exec --cleanenv sglang.sif python3 -m sglang.launch_server --model-path m
""")
    assert shared.image is not None and shared.image.value == "sglang.sif"
    assert set(shared.env) == {"SGLANG_ENABLE_SPEC_V2"} and clean.env == {}
