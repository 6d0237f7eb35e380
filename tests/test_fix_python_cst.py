"""Python fixes are placed with libcst, imported only when a fix is worked out (issue 19).

A ``check`` imports libcst (~0.3 s) only when a Python file has a fix it offers, to re-lint the
fixed text before counting the fix as fixable (issue 19: no fix is counted that ``--fix`` would
refuse); with no such fix it never does, in one process or with a cache. ``--fix`` does, and places keywords, argv elements and ``env=`` entries between the
tokens the user wrote, comments and layout kept.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mtplint.edits.pyedit import PythonEdit
from mtplint.source import SourceFile
from tests.conftest import run_cli, write_files

OFFLINE = """\
from vllm import LLM

llm = LLM(
    model="Qwen/Qwen3.6-27B",  # the MTP checkpoint
    speculative_config={"method": "mtp", "num_speculative_tokens": 2},
)
"""
MTP102 = ["--isolated", "--select", "MTP102", "--unsafe-fixes", "--engine-version", "vllm=0.32.0"]

SCRIPT = """\
import sys

from mtplint.cli import main

code = main(sys.argv[1:])
print("libcst imported" if "libcst" in sys.modules else "libcst not imported", file=sys.stderr)
"""


def _run(root: Path, *args: str) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-c", SCRIPT, *args], cwd=root, capture_output=True, text=True,
                          timeout=120, check=False)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("output", ["full", "concise"])
def test_a_check_imports_libcst_only_to_verify_a_python_fix_it_offers(tmp_path: Path, output: str) -> None:
    write_files(tmp_path, {"offline.py": OFFLINE})
    safe_only = [argument for argument in MTP102 if argument != "--unsafe-fixes"]
    for _ in range(2):  # the second run takes the file's findings from the cache
        _, out, err = _run(tmp_path, "check", *safe_only, "--output-format", output, "offline.py")
        assert "MTP102" in out, err
        assert "[*]" not in out  # the fix is unsafe: hidden, not worked out
        assert err.strip().endswith("libcst not imported"), err
    # offered, the fix is worked out and re-linted in memory before it is counted as fixable
    # (tests/test_fix_counts.py): that is what needs libcst in a check without --fix
    _, out, err = _run(tmp_path, "check", *MTP102, "--output-format", output, "offline.py")
    assert "[*]" in out or output == "concise"
    assert err.strip().endswith("libcst imported"), err
    # the same file fixed imports it too, and the fix is right
    _, _, err = _run(tmp_path, "check", *MTP102, "--fix", "offline.py")
    assert err.strip().endswith("libcst imported"), err
    assert (tmp_path / "offline.py").read_text() == OFFLINE.replace(
        "},\n)", "},\n    enable_prefix_caching=False,\n)")


def test_a_python_fix_from_the_cache_shows_the_same_edit(tmp_path: Path) -> None:
    write_files(tmp_path, {"offline.py": OFFLINE})
    outputs = []
    for _ in range(2):
        code, out, err = run_cli(["check", *MTP102, "--output-format", "json", "."], cwd=tmp_path)
        assert code == 1, err
        outputs.append(json.loads(out))
    assert outputs[0] == outputs[1]
    [finding] = outputs[0]
    assert [edit["content"] for edit in finding["fix"]["edits"]] == ["    enable_prefix_caching=False,\n"]
    assert finding["fix"]["edits"][0]["location"] == {"row": 6, "column": 1}


def test_a_recipe_round_trips_and_is_worked_out_on_the_text_given() -> None:
    source = SourceFile.from_text('import vllm\nllm = vllm.LLM("m", seed=0)  # keep\n', "offline.py")
    edit = PythonEdit(source, "add_keyword", 18, "enforce_eager", "True")
    again = PythonEdit.from_recipe(json.loads(json.dumps(edit.recipe())))
    assert again == edit
    assert (edit.span.start, edit.content) == (source.text.index(")"), ", enforce_eager=True")
    # the fix engine works it out on the text it holds, not on the disk's
    moved = SourceFile.from_text('import vllm\n\n\nllm = vllm.LLM("m")\n', "offline.py")
    [placed] = again.edits(SourceFile.from_text('import vllm\nllm = vllm.LLM("m")\n', "offline.py")) or []
    assert placed.content == ", enforce_eager=True"
    assert again.edits(moved) is None, "no call is written there: no safe place"


# --- what libcst places, through --fix ---------------------------------------------------------------


def _fix(root: Path, name: str, text: str, *args: str) -> tuple[str, str]:
    write_files(root, {name: text})
    code, _, err = run_cli(["check", "--fix", *args, name], cwd=root)
    assert code in (0, 1), err
    return (root / name).read_text(), err


def test_a_keyword_goes_after_a_trailing_comment_and_the_chained_call_is_left_alone(tmp_path: Path) -> None:
    text = """\
import vllm

outputs = vllm.LLM(
    "Qwen/Qwen3.6-27B",
    speculative_config={"method": "mtp", "num_speculative_tokens": 2},  # MTP head
).generate(["Hello"])
"""
    fixed, err = _fix(tmp_path, "offline.py", text, *MTP102)
    assert "fix not applied" not in err
    assert fixed == text.replace("# MTP head\n", "# MTP head\n    enable_prefix_caching=False,\n")
    compile(fixed, "offline.py", "exec")


def test_no_keyword_is_added_after_a_double_star_argument(tmp_path: Path) -> None:
    text = """\
from vllm import LLM

def build(**options: object) -> LLM:
    return LLM(model="Qwen/Qwen3.6-27B", speculative_config={"method": "mtp", "num_speculative_tokens": 2},
               **options)
"""
    fixed, err = _fix(tmp_path, "offline.py", text, *MTP102)
    assert fixed == text, "a keyword after **options may repeat one of its keys: a TypeError at run time"
    assert "fix not applied" in err and "not written in a way the fix can edit safely" in err


def test_a_keyword_is_renamed_where_the_call_spans_lines_with_comments(tmp_path: Path) -> None:
    text = """\
from vllm import LLM

llm = LLM(
    model="Qwen/Qwen3.6-27B",
    # leave room for the drafter
    gpu_memory_utilisation = 0.85,
)
"""
    fixed, _ = _fix(tmp_path, "offline.py", text, "--isolated", "--select", "MTP506", "--engine-version", "vllm=0.32.0")
    assert fixed == text.replace("gpu_memory_utilisation = 0.85", "gpu_memory_utilization = 0.85")


def test_an_env_entry_joins_a_dict_whose_last_entry_has_a_comment(tmp_path: Path) -> None:
    text = """\
import subprocess

subprocess.run(
    ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B",
     "--speculative-algorithm", "NEXTN", "--tp", "2"],
    env={
        "HF_HOME": "/models",
        "CUDA_VISIBLE_DEVICES": "0,1"  # two GPUs
    },
    check=True,
)
"""
    fixed, err = _fix(tmp_path, "serve.py", text, "--isolated", "--select", "MTP103", "--engine-version", "sglang=0.5.9")
    assert "fix not applied" not in err
    assert fixed == text.replace('"0,1"  # two GPUs\n', '"0,1",  # two GPUs\n        "SGLANG_ENABLE_SPEC_V2": "1"\n')
    compile(fixed, "serve.py", "exec")


def test_a_value_from_a_double_star_dict_is_not_rewritten_in_the_call(tmp_path: Path) -> None:
    # the keyword's value is read from OPTIONS: the call has no `enable_prefix_caching=` to change
    text = """\
from vllm import LLM

OPTIONS = {"enable_prefix_caching": True}
llm = LLM("Qwen/Qwen3.6-27B", speculative_config={"method": "mtp", "num_speculative_tokens": 2}, **OPTIONS)
"""
    fixed, err = _fix(tmp_path, "offline.py", text, *MTP102)
    assert fixed == text
    assert "not written in a way the fix can edit safely" in err


def test_argv_elements_are_removed_and_renamed_with_their_commas_and_comments_kept(tmp_path: Path) -> None:
    text = """\
import subprocess

subprocess.run(
    [
        "vllm", "serve", "Qwen/Qwen3.6-27B",
        "--enable-prefix-caching", "true",  # keep the cache
        "--speculative-config", '{"method": "mtp", "num_speculative_tokens": 1}',
        "--trust-remote-code", "false",
        "--enforce-eager=true",
    ],
    check=True,
)
"""
    fixed, err = _fix(tmp_path, "launch.py", text, "--isolated", "--select", "MTP504", "--engine-version", "vllm=0.33.0")
    assert "fix not applied" not in err
    assert fixed == text.replace('"--enable-prefix-caching", "true",', '"--enable-prefix-caching",').replace(
        '"--trust-remote-code", "false",', '"--no-trust-remote-code",').replace(
        '"--enforce-eager=true",', '"--enforce-eager",')
    compile(fixed, "launch.py", "exec")


def test_an_argv_element_is_split_at_its_equals_sign(tmp_path: Path) -> None:
    text = """\
import subprocess
import sys

subprocess.run([sys.executable, "-m", "vllm.entrypoints.openai.api_server",
                "--model", "Qwen/Qwen3.6-27B", "--config=serve.yaml"], check=True)
"""
    write_files(tmp_path, {"serve.yaml": "tensor-parallel-size: 2\n"})
    fixed, err = _fix(tmp_path, "launch.py", text, "--isolated", "--select", "MTP108", "--engine-version", "vllm=0.33.0")
    assert "fix not applied" not in err
    assert fixed == text.replace('"--config=serve.yaml"', '"--config", "serve.yaml"')
