from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplint.extract import ExtractContext, FileLoader, Malformed
from mtplint.extract.launch import Launch
from mtplint.extract.shell.expansion import split_words
from mtplint.extract.shell.interpreter import ShellCommand
from mtplint.extract.shell.launches import extract, script_commands
from mtplint.source import EnvEntry, MappedText, SourceFile, Token


def commands(text: str, **kwargs: object) -> list[ShellCommand]:
    return script_commands(SourceFile.from_text(text, "serve.sh").whole(), **kwargs)  # type: ignore[arg-type]


def argv(command: ShellCommand) -> list[object]:
    return [token.to_json() for token in command.argv]


def position(token: Token) -> tuple[int, int, int, int]:
    assert token.span is not None
    return token.span.line, token.span.column, token.span.end_line, token.span.end_column


def launches(tmp_path: Path, files: dict[str, str], name: str) -> list[Launch]:
    for file_name, text in files.items():
        (tmp_path / file_name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / file_name).write_text(text, encoding="utf-8")
    loader = FileLoader(tmp_path)
    source = loader.load(tmp_path / name)
    assert source is not None
    return extract(source, ExtractContext(loader))


RUN_SCRIPT = """\
#!/usr/bin/env bash
set -euo pipefail

MODEL="${MODEL:-Qwen/Qwen3.6-27B}"
PORT=${PORT-8000}
export VLLM_USE_V1=1

vllm serve "$MODEL" \\
    --port "$PORT" \\
    --speculative-config '{"method":"mtp","num_speculative_tokens":2}' \\
    --gpu-memory-utilization 0.92
"""


def test_run_script_tokens_and_positions() -> None:
    (command,) = [c for c in commands(RUN_SCRIPT) if c.argv[0].value == "vllm"]
    assert argv(command) == ["vllm", "serve", "Qwen/Qwen3.6-27B", "--port", "8000", "--speculative-config",
                             '{"method":"mtp","num_speculative_tokens":2}', "--gpu-memory-utilization", "0.92"]
    tokens = command.argv
    assert position(tokens[0]) == (8, 1, 8, 5)
    assert position(tokens[2]) == (8, 12, 8, 20)  # the whole word "$MODEL", quotes included
    assert position(tokens[3]) == (9, 5, 9, 11)
    assert position(tokens[5]) == (10, 5, 10, 25)
    assert position(tokens[6]) == (10, 26, 10, 71)  # the quoted JSON, across the `\\` continuation above
    assert position(tokens[8]) == (11, 30, 11, 34)
    assert command.span == tokens[0].span
    assert command.env["VLLM_USE_V1"].value.value == "1"
    entry = command.env["VLLM_USE_V1"]
    assert entry.span is not None and (entry.span.line, entry.span.column) == (6, 8)


def test_base_environment_overrides_defaults() -> None:
    base = {"MODEL": EnvEntry("MODEL", Token("org/other")), "PORT": EnvEntry("PORT", Token(""))}
    (command,) = [c for c in commands(RUN_SCRIPT, env=base) if c.argv[0].value == "vllm"]
    assert command.argv[2].value == "org/other"
    assert command.argv[4].value == ""  # ${PORT-8000}: set but empty keeps the empty value
    assert "MODEL" in command.env


def test_quote_splicing_keeps_json_and_positions() -> None:
    text = 'N=3\nvllm serve m --speculative-config \'{"method":"mtp","num_speculative_tokens":\'"$N"\'}\'\n'
    command = commands(text)[-1]
    spec = command.argv[4]
    assert spec.value == '{"method":"mtp","num_speculative_tokens":3}'
    assert spec.resolved
    assert position(spec) == (2, 35, 2, 85)


def test_escaped_double_quotes_json() -> None:
    text = 'vllm serve m --speculative-config "{\\"method\\": \\"mtp\\", \\"num_speculative_tokens\\": 1}"\n'
    assert commands(text)[0].argv[4].value == '{"method": "mtp", "num_speculative_tokens": 1}'


def test_default_forms() -> None:
    text = (
        "SET=value\nEMPTY=\n"
        "echo ${SET:-d1} ${UNSET:-d2} ${EMPTY:-d3} \"${EMPTY-d4}\" ${UNSET-d5} ${NEW:=d6} $NEW ${SET:+alt}\n"
    )
    assert argv(commands(text)[-1]) == ["echo", "value", "d2", "d3", "", "d5", "d6", "d6", "alt"]


def test_unknown_variable_is_unresolved_and_unquoted_is_splat() -> None:
    command = commands('vllm serve "$MODEL" $EXTRA_ARGS --port=$PORT\n')[0]
    model, extra, port = command.argv[2:]
    assert model.unresolved == ("MODEL",) and not model.splat
    assert extra.splat and extra.value == "$EXTRA_ARGS"
    assert port.unresolved == ("PORT",) and not port.splat
    assert port.value == "--port=$PORT"


def test_known_unquoted_variable_is_split_into_words() -> None:
    text = 'EXTRA_ARGS="--max-num-seqs 8  --enforce-eager"\nvllm serve m $EXTRA_ARGS "$EXTRA_ARGS"\n'
    command = commands(text)[-1]
    assert argv(command)[3:] == ["--max-num-seqs", "8", "--enforce-eager", "--max-num-seqs 8  --enforce-eager"]
    assert command.argv[3].span is not None and command.argv[3].span.line == 2


def test_arrays() -> None:
    text = (
        'ARGS=(--port 8000 "--served-model-name" "qwen mtp")\n'
        "ARGS+=(--enforce-eager)\n"
        'vllm serve m "${ARGS[@]}" ${ARGS[0]} "${ARGS[*]}"\n'
    )
    assert argv(commands(text)[-1])[3:] == [
        "--port", "8000", "--served-model-name", "qwen mtp", "--enforce-eager", "--port",
        "--port 8000 --served-model-name qwen mtp --enforce-eager",
    ]


def test_dollar_at_is_a_splat() -> None:
    command = commands('exec vllm serve "$MODEL_PATH" "$@"\n')[0]
    assert command.argv[-1].splat
    assert command.argv[-1].to_json() == {"unresolved": "$@", "splat": True}


def test_set_dash_dash_gives_known_positional_parameters() -> None:
    command = commands('set -- --port 9000\nvllm serve m "$@"\n')[-1]
    assert argv(command)[3:] == ["--port", "9000"]


def test_command_substitution_is_unresolved() -> None:
    command = commands('vllm serve m --tensor-parallel-size "$(nvidia-smi -L | wc -l)"\n')[0]
    assert command.argv[4].unresolved == ("$(nvidia-smi -L | wc -l)",)
    assert len(commands('X=$(echo "vllm serve m")\n')) == 0  # nothing inside $(...) is a command of its own


def test_branches_that_disagree_make_a_variable_unresolved() -> None:
    text = """\
if [ "$SIZE" = big ]; then
    TP=4
    K=2
else
    TP=2
    K=2
fi
case "$1" in
  fast) N=1 ;;
  *) N=1 ;;
esac
vllm serve m --tensor-parallel-size "$TP" --num-speculative-tokens "$K" --n "$N"
"""
    command = commands(text)[-1]
    assert command.argv[4].unresolved == ("TP",)
    assert command.argv[6].value == "2" and command.argv[6].resolved
    assert command.argv[8].value == "1" and command.argv[8].resolved


def test_conditional_default_is_unresolved() -> None:
    command = commands('[ -n "$PORT" ] || PORT=8000\nvllm serve m --port "$PORT"\n')[-1]
    assert command.argv[4].unresolved == ("PORT",)


def test_a_function_runs_at_its_call_with_its_arguments() -> None:
    text = """\
start_server() {
    MODEL=other
    vllm serve "$1" --port 8000
}
never_called() {
    vllm serve never/called
}
MODEL=Qwen/Qwen3-8B
start_server "$MODEL"
vllm serve "$MODEL"
"""
    found = commands(text)
    # the call, then the body it runs; the function that is never called runs nothing
    assert [c.argv[0].value for c in found] == ["start_server", "vllm", "vllm"]
    call, inside, after = found
    # "$1" is the call's first word, spanning `"$1"` in the body; the command knows which call led there
    assert [t.value for t in inside.argv] == ["vllm", "serve", "Qwen/Qwen3-8B", "--port", "8000"]
    assert inside.argv[2].span is not None and (inside.argv[2].span.line, inside.argv[2].span.column) == (3, 16)
    assert [name for name, _ in inside.calls] == ["start_server"] and call.calls == ()
    # as in bash, the body's `MODEL=other` is the script's MODEL after the call
    assert after.argv[2].value == "other" and after.calls == ()


def test_prefix_assignments_and_exports_form_the_environment() -> None:
    text = """\
export HF_HOME=/models
LOCAL=1
SGLANG_ENABLE_SPEC_V2=1 CUDA_VISIBLE_DEVICES=0 python3 -m sglang.launch_server --model-path m
python3 -m sglang.launch_server --model-path m2
"""
    first, second = commands(text)
    assert set(first.env) == {"HF_HOME", "SGLANG_ENABLE_SPEC_V2", "CUDA_VISIBLE_DEVICES"}
    spec_v2 = first.env["SGLANG_ENABLE_SPEC_V2"]
    assert spec_v2.span is not None and (spec_v2.span.line, spec_v2.span.column, spec_v2.span.end_column) == (3, 1, 24)
    assert set(second.env) == {"HF_HOME"}


def test_set_a_and_source_export_a_dotenv(tmp_path: Path) -> None:
    (tmp_path / "model.env").write_text("MODEL=Qwen/Qwen3.6-35B-A3B\nTP=2\n")
    text = "set -a\nsource ./model.env\nset +a\nvllm serve $MODEL --tensor-parallel-size $TP\n"
    command = commands(text, base_dir=tmp_path)[-1]
    assert argv(command)[2:] == ["Qwen/Qwen3.6-35B-A3B", "--tensor-parallel-size", "2"]
    assert command.env["TP"].span is not None and command.env["TP"].span.file.endswith("model.env")


def test_sh_dash_c_strings_are_interpreted() -> None:
    text = "export MODEL=m1\nbash -c 'exec vllm serve $MODEL --port 8000' &\n"
    nested = [c for c in commands(text) if c.argv[0].value == "exec"]
    assert len(nested) == 1
    assert argv(nested[0]) == ["exec", "vllm", "serve", "m1", "--port", "8000"]
    assert position(nested[0].argv[1]) == (2, 15, 2, 19)


def test_sh_dash_c_gets_the_words_after_its_name_as_positional_parameters() -> None:
    """``sh -c 'script' NAME ARG...``: $0 is NAME, $1 the first ARG, as a shell runs it."""
    text = "sh -c 'exec vllm serve \"$1\" --port \"$2\"' serve Qwen/Qwen3-8B 8000\n"
    nested = [c for c in commands(text) if c.argv[0].value == "exec"]
    assert len(nested) == 1
    assert argv(nested[0]) == ["exec", "vllm", "serve", "Qwen/Qwen3-8B", "--port", "8000"]
    assert all(token.resolved for token in nested[0].argv)


def test_continuation_inside_a_word() -> None:
    command = commands("vllm serve m --max-model-\\\nlen 4096\n")[0]
    assert argv(command)[3:] == ["--max-model-len", "4096"]


def test_crlf_script() -> None:
    command = commands("vllm serve m \\\r\n  --port 8000\r\n")[0]
    assert argv(command) == ["vllm", "serve", "m", "--port", "8000"]


def test_non_ascii_text_keeps_character_columns() -> None:
    command = commands("# modèle é\nvllm serve 'Qwen/é' --port 1\n")[0]
    assert position(command.argv[2]) == (2, 12, 2, 20)
    assert position(command.argv[3]) == (2, 21, 2, 27)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('vllm serve "Qwen/Qwen3-8B\n', "unterminated double quote"),
        ("if true; then\n  vllm serve m\n", "missing `fi`"),
        ("vllm serve m )\n", "unexpected `)`"),
    ],
)
def test_malformed_scripts(text: str, message: str) -> None:
    with pytest.raises(Malformed, match=re.escape(message)):
        commands(text)


def test_tree_sitter_grammar_gaps_are_not_fatal() -> None:
    text = '[[ $x =~ ^(a|b)$ ]] && echo ok\nfor ((i=0; i<2; i++)); do :; done\nvllm serve m\n'
    assert commands(text)[-1].argv[0].value == "vllm"


# --- split_words --------------------------------------------------------------------------------


def test_split_words_quotes_and_offsets() -> None:
    source = SourceFile.from_text("""vllm serve "a b" --x '{"k": 1}' $X \\\n  --y="$(echo ")")" c\\ d""")
    words = split_words(source.whole())
    assert [word.text for word in words] == ["vllm", "serve", "a b", "--x", '{"k": 1}', "$X", '--y=$(echo ")")', "c d"]
    json_word = words[4]
    span = json_word.span()
    assert span is not None and (span.column, span.end_column) == (23, 31)
    assert source.text[json_word.offsets[0]] == "{"


def test_split_words_on_mapped_text_from_elsewhere() -> None:
    source = SourceFile.from_text("command: vllm serve 'x y'\n")
    mapped = MappedText.of_range(source, 9, 25)
    words = split_words(mapped)
    assert [w.text for w in words] == ["vllm", "serve", "x y"]
    span = words[2].span()
    assert span is not None and span.column == 22


# --- extract ------------------------------------------------------------------------------------


def test_extract_finds_launches_not_benchmarks(tmp_path: Path) -> None:
    script = """\
#!/bin/bash
MODEL=Qwen/Qwen3.6-27B
nohup vllm serve "$MODEL" \\
  --speculative-config '{"method":"mtp","num_speculative_tokens":2}' > server.log 2>&1 &
until curl -sf localhost:8000/health; do sleep 5; done
python bench.py --model "$MODEL" --speculative-config '{"method":"mtp"}'
vllm bench serve --model "$MODEL"
"""
    found = launches(tmp_path, {"run.sh": script}, "run.sh")
    assert len(found) == 1
    launch = found[0]
    assert launch.engine == "vllm" and launch.entry == "vllm serve"
    assert launch.context == "line 3"
    assert [t.value for t in launch.args] == ["Qwen/Qwen3.6-27B", "--speculative-config",
                                            '{"method":"mtp","num_speculative_tokens":2}']
    assert launch.span is not None and (launch.span.line, launch.span.column) == (3, 7)
    assert launch.base_dir == str(tmp_path)


def test_extract_docker_run_with_env(tmp_path: Path) -> None:
    script = """\
#!/bin/sh
docker run --gpus all --ipc=host -p 30000:30000 \\
  -e SGLANG_ENABLE_SPEC_V2=1 \\
  lmsysorg/sglang:v0.5.9-cu129 \\
  python3 -m sglang.launch_server --model-path Qwen/Qwen3.6-27B \\
    --speculative-algorithm NEXTN --speculative-num-steps 3
"""
    (launch,) = launches(tmp_path, {"docker.sh": script}, "docker.sh")
    assert launch.engine == "sglang"
    assert launch.env["SGLANG_ENABLE_SPEC_V2"].value.value == "1"
    assert launch.image is not None and launch.image.value == "lmsysorg/sglang:v0.5.9-cu129"
    assert launch.version_hints and launch.version_hints[0].spec == "==0.5.9"


def test_docker_run_container_sees_only_its_own_environment(tmp_path: Path) -> None:
    """``export`` and ``VAR=x`` before ``docker run`` set the docker client's environment, not the
    container's: only ``-e KEY=value`` and ``-e NAME`` (copied from the client) reach the engine."""
    script = """\
#!/usr/bin/env bash
export SGLANG_ENABLE_SPEC_V2=1
export HF_HOME=/srv/hf
CUDA_VISIBLE_DEVICES=0,1 docker run --gpus all --ipc=host \\
  -e HF_HOME -e HF_TOKEN -e NCCL_DEBUG=INFO \\
  lmsysorg/sglang:v0.5.9-cu129 \\
  python3 -m sglang.launch_server --model-path Qwen/Qwen3.6-27B \\
    --speculative-algorithm NEXTN --speculative-num-steps 3
"""
    (launch,) = launches(tmp_path, {"docker.sh": script}, "docker.sh")
    assert set(launch.env) == {"HF_HOME", "HF_TOKEN", "NCCL_DEBUG"}  # no SGLANG_ENABLE_SPEC_V2, no CUDA_VISIBLE_DEVICES
    assert launch.env["HF_HOME"].value.value == "/srv/hf"
    assert launch.env["HF_HOME"].span is not None and (launch.env["HF_HOME"].span.line,
                                                       launch.env["HF_HOME"].span.column) == (5, 6)
    # not set by the script: it comes from whoever runs it, so it is not known
    assert launch.env["HF_TOKEN"].value.unresolved == ("HF_TOKEN",)
    assert launch.env["NCCL_DEBUG"].value.value == "INFO"


def test_env_wrapper_before_docker_run_feeds_only_inherited_names(tmp_path: Path) -> None:
    script = "env HF_TOKEN=hf_abc VLLM_USE_V1=0 docker run -e HF_TOKEN vllm/vllm-openai:v0.11.0 Qwen/Qwen3.6-27B\n"
    (launch,) = launches(tmp_path, {"run.sh": script}, "run.sh")
    assert {name: entry.value.value for name, entry in launch.env.items()} == {"HF_TOKEN": "hf_abc"}


def test_extract_launch_inside_if_and_pipeline(tmp_path: Path) -> None:
    script = """\
#!/usr/bin/env bash
if command -v llama-server >/dev/null; then
  llama-server -m model.gguf --spec-type draft-mtp 2>&1 | tee server.log
fi
"""
    (launch,) = launches(tmp_path, {"llama.sh": script}, "llama.sh")
    assert launch.engine == "llama.cpp"
    assert launch.context == "line 3"


# --- robustness ---------------------------------------------------------------------------------


_SHELL_ALPHABET = st.sampled_from([*"ab $\"'\\\n{}()[]=:-+#%/;&|<>`!*?@0é\t\r", "${", "$(", "vllm serve ", "fi", "if "])


@settings(max_examples=300, deadline=None)
@given(st.lists(_SHELL_ALPHABET, max_size=40).map("".join))
def test_any_text_is_read_or_reported_malformed(text: str) -> None:
    source = SourceFile.from_text(text, "fuzz.sh")
    try:
        found = script_commands(source.whole())
    except Malformed as error:
        assert 0 <= error.offset <= len(text)
        return
    for command in found:
        for token in command.argv:
            assert token.span is None or token.span.start <= len(text)
    split_words(source.whole())


def test_launches_in_lists_subshells_loops_and_background(tmp_path: Path) -> None:
    script = """\
#!/bin/bash
cd /srv && vllm serve m1 --port 8001 &
( export VLLM_USE_V1=1; vllm serve m2 --port 8002 ) &
while true; do llama-server -m m3.gguf; sleep 5; done
echo "vllm serve not-a-launch"
"""
    found = launches(tmp_path, {"all.sh": script}, "all.sh")
    assert [(launch.engine, launch.context) for launch in found] == [
        ("vllm", "line 2"), ("vllm", "line 3"), ("llama.cpp", "line 4")]
    assert found[1].env["VLLM_USE_V1"].value.value == "1"
    assert "VLLM_USE_V1" not in found[0].env


def test_emoji_keep_their_values_and_positions() -> None:
    # characters outside the BMP are swapped for one BMP character before tree-sitter sees them (they
    # corrupt its memory); values come from the original text and columns count characters
    script = ('#!/usr/bin/env bash\necho "🚀 starting 🤖"\n'
              'vllm serve Qwen/Qwen3.6-27B --served-model-name "qwen-🚀" --port 8000\n')
    (command,) = [c for c in commands(script) if c.argv[0].value == "vllm"]
    values = [token.value for token in command.argv]
    assert values[values.index("--served-model-name") + 1] == "qwen-🚀"
    port = command.argv[values.index("--port")]
    assert position(port)[:2] == (3, 58)


def test_a_quoted_expansion_of_no_elements_is_no_word() -> None:
    # bash: "${ARR[@]}" and "$@" of nothing give no word at all; "${ARR[*]}" and "" give an empty one
    script = 'EXTRA=()\nset --\nvllm serve m "${EXTRA[@]}" "$@" --port 8000\nvllm serve m "${EXTRA[*]}" ""\n'
    *_, first, second = commands(script)
    assert [token.value for token in first.argv] == ["vllm", "serve", "m", "--port", "8000"]
    assert [token.value for token in second.argv] == ["vllm", "serve", "m", "", ""]
