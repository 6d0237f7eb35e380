"""Shell functions read at their call (mtplint.extract.shell): arguments, scope, nesting, paths."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from mtplint.extract import ExtractContext, FileLoader
from mtplint.extract.launch import Launch
from mtplint.extract.shell.interpreter import ShellCommand
from mtplint.extract.shell.launches import extract, script_commands
from mtplint.source import SourceFile


def commands(text: str) -> list[ShellCommand]:
    return script_commands(SourceFile.from_text(text, "serve.sh").whole())


def engine_commands(text: str) -> list[ShellCommand]:
    return [command for command in commands(text) if command.argv[0].value in ("vllm", "exec")]


def launches(tmp_path: Path, text: str) -> list[Launch]:
    (tmp_path / "serve.sh").write_text(text, encoding="utf-8")
    loader = FileLoader(tmp_path)
    source = loader.load(tmp_path / "serve.sh")
    assert source is not None
    return extract(source, ExtractContext(loader))


def test_positional_parameters_are_the_call_words_and_come_back_after_it() -> None:
    text = """\
set -- outer-model
start() {
    echo "starting $# things"
    vllm serve "$1" --port "$2" --served-model-name "${3:-served}"
}
start Qwen/Qwen3-8B 8000
vllm serve "$1"
"""
    inside, after = engine_commands(text)
    assert [t.value for t in inside.argv] == ["vllm", "serve", "Qwen/Qwen3-8B", "--port", "8000",
                                              "--served-model-name", "served"]
    echo = next(c for c in commands(text) if c.argv[0].value == "echo")
    assert echo.argv[1].value == "starting 2 things"
    assert after.argv[2].value == "outer-model"


def test_a_call_with_an_array_of_unknown_length_keeps_later_parameters_unknown() -> None:
    text = """\
start() {
    vllm serve "$1" --port "$3"
}
start Qwen/Qwen3-8B "${EXTRA[@]}" 8000
"""
    (inside,) = engine_commands(text)
    assert inside.argv[2].value == "Qwen/Qwen3-8B" and inside.argv[2].resolved
    # "${EXTRA[@]}" may be any number of words: which one is $3 is not known
    assert not inside.argv[4].resolved


def test_main_with_the_scripts_arguments_passes_them_on_unknown() -> None:
    text = """\
main() {
    exec vllm serve Qwen/Qwen3-8B "$@"
}
main "$@"
"""
    (inside,) = engine_commands(text)
    extra = inside.argv[-1]
    assert extra.splat and extra.unresolved == ("$@",)
    # the unknown arguments are the body's `"$@"`, where the command is written
    assert extra.span is not None and (extra.span.line, extra.span.column) == (2, 35)


def test_local_variables_and_call_prefixes_last_for_the_call_only() -> None:
    text = """\
PORT=9000
DTYPE=float16
serve() {
    local PORT=8000
    declare DTYPE=bfloat16
    TP=2
    vllm serve m --port "$PORT" --dtype "$DTYPE" --tensor-parallel-size "$TP" --max-model-len "$LEN"
}
LEN=4096 serve
vllm serve m --port "$PORT" --dtype "$DTYPE" --tensor-parallel-size "$TP" --max-model-len "${LEN:-none}"
"""
    inside, after = engine_commands(text)
    assert [t.value for t in inside.argv[4::2]] == ["8000", "bfloat16", "2", "4096"]
    assert "LEN" in inside.env  # a `VAR=x func` prefix is exported to what the body runs
    # bash: `local`/`declare` in a function and the call's prefixes end with the call; TP=2 stays
    assert [t.value for t in after.argv[4::2]] == ["9000", "float16", "2", "none"]


def test_return_ends_the_call_and_the_script_goes_on() -> None:
    text = """\
serve() {
    vllm serve m --port 8000
    return 0
    vllm serve never/reached
}
serve
vllm serve after/return
"""
    assert [c.argv[2].value for c in engine_commands(text)] == ["m", "after/return"]


def test_nested_calls_are_read_and_recursion_is_not() -> None:
    text = """\
serve_vllm() { vllm serve "$1" --port "$PORT"; }
main() {
    PORT=8001
    serve_vllm "$MODEL"
    main again
}
MODEL=Qwen/Qwen3-8B
main
"""
    (inside,) = engine_commands(text)
    assert [t.value for t in inside.argv] == ["vllm", "serve", "Qwen/Qwen3-8B", "--port", "8001"]
    assert [name for name, _ in inside.calls] == ["main", "serve_vllm"]


def test_calls_nest_eight_deep_then_stop() -> None:
    chain = "\n".join(f"f{level}() {{ f{level + 1} \"$@\"; }}" for level in range(12))
    text = f"{chain}\nf12() {{ vllm serve \"$1\"; }}\nf{12 - 8}() {{ f{12 - 8 + 1} \"$@\"; }}\n"
    # f4 -> ... -> f12 is nine calls: one more than is read
    assert engine_commands(text + "f4 m\n") == []
    (inside,) = engine_commands(text + "f5 m\n")  # f5 -> ... -> f12: eight
    assert inside.argv[2].value == "m"


def test_a_function_that_computes_a_command_string_stays_unresolved() -> None:
    text = """\
build_cmd() { echo "vllm serve Qwen/Qwen3-8B --speculative-config '{\\"method\\":\\"mtp\\"}'"; }
cmd=$(build_cmd)
$cmd
"""
    last = commands(text)[-1]
    assert not last.argv[0].resolved and last.argv[0].splat


def test_two_calls_of_one_function_are_two_launches_named_by_their_call(tmp_path: Path) -> None:
    text = """\
#!/usr/bin/env bash
set -euo pipefail
start_server() {
    vllm serve "$1" --port "$2" --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}'
}
start_server Qwen/Qwen3.6-27B 8000
start_server Qwen/Qwen3.6-35B-A3B 8001
"""
    first, second = launches(tmp_path, text)
    assert first.context == "line 4, in start_server() called at line 6"
    assert second.context == "line 4, in start_server() called at line 7"
    assert [first.args[0].value, second.args[0].value] == ["Qwen/Qwen3.6-27B", "Qwen/Qwen3.6-35B-A3B"]


def test_a_case_arm_choosing_the_function_gives_a_launch_per_path(tmp_path: Path) -> None:
    text = """\
#!/usr/bin/env bash
serve_vllm() { exec vllm serve "$MODEL" --speculative-config '{"method":"mtp","num_speculative_tokens":1}'; }
serve_sglang() { exec python3 -m sglang.launch_server --model-path "$MODEL" --speculative-algorithm NEXTN; }
MODEL=Qwen/Qwen3.6-27B
case "${ENGINE:-vllm}" in
  vllm) serve_vllm ;;
  sglang) serve_sglang ;;
esac
"""
    found = launches(tmp_path, text)
    assert sorted((launch.engine, launch.context) for launch in found) == [
        ("sglang", "line 3, in serve_sglang() called at line 7"),
        ("vllm", "line 2, in serve_vllm() called at line 6"),
    ]


def test_a_return_in_a_branch_is_a_path_that_goes_on_after_the_call(tmp_path: Path) -> None:
    text = """\
#!/usr/bin/env bash
spec_args() {
    SPEC_ARGS=()
    if [[ "${NO_SPEC:-0}" == 1 ]]; then
        return 0
    fi
    SPEC_ARGS=(--speculative-config '{"method":"mtp","num_speculative_tokens":1}')
}
spec_args
exec vllm serve Qwen/Qwen3.6-27B "${SPEC_ARGS[@]}"
"""
    found = launches(tmp_path, text)
    assert sorted((launch.context, len(launch.args)) for launch in found) == [
        ('line 10, when `[[ "${NO_SPEC:-0}" == 1 ]]`', 1),
        ('line 10, when not `[[ "${NO_SPEC:-0}" == 1 ]]`', 3),
    ]


@pytest.mark.xdist_group("timed")  # a wall-time bound
def test_functions_calling_each_other_many_times_stay_within_a_bound() -> None:
    # each function calls the next ten times, seven deep: 10**7 bodies if all were read
    chain = "\n".join(f"f{level}() {{ {'; '.join([f'f{level + 1} x'] * 10)}; }}" for level in range(7))
    text = f"{chain}\nf7() {{ COUNT=known; }}\nf0\nvllm serve \"$COUNT\"\n"
    started = time.perf_counter()
    last = commands(text)[-1]
    assert time.perf_counter() - started < 10
    # past the bound a call is not read: what its body assigns is unknown after it
    assert last.argv[2].unresolved == ("COUNT",)
