"""Property-based tests (issue 7): random argv, quoting, continuations and YAML styles.

* random argv built from the engines' real flag tables never makes the pipeline fail: a bad argument
  is a recorded ``CliError``, never an exception;
* well-formed option sets, rendered as a shell script or a compose service in any quoting style,
  come back from ``inspect`` as exactly the options that were written;
* random text and random YAML documents fed to every extractor raise nothing but ``Malformed``.

Sized to run in well under a minute together; deterministic in CI (``CI=true``).
"""

from __future__ import annotations

import json
import os
import shlex
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mtplint.extract import ExtractContext, FileLoader, Malformed
from mtplint.pipeline import EXTRACTORS, Options, extractor_for, run
from mtplint.source import MappedText, SourceFile
from tests.conftest import inspect_json

DATA = Path(__file__).resolve().parents[1] / "mtplint" / "engines" / "data"


def sized(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, derandomize=os.environ.get("CI") == "true",
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


# --- the flag tables -------------------------------------------------------------------------------


@cache
def vllm_actions() -> list[dict[str, Any]]:
    actions: list[dict[str, Any]] = json.loads((DATA / "vllm" / "0.30.0.json").read_text())["actions"]
    return [a for a in actions if a["options"] and a["action"] != "exit"]


@cache
def sglang_actions() -> list[dict[str, Any]]:
    newest = max((DATA / "sglang").glob("*.json"), key=lambda p: tuple(int(x) for x in p.stem.split(".")))
    table = json.loads(newest.read_text())
    return [a for a in table["actions"] if a["options"] and a.get("action") not in ("help", "version")]


@cache
def llamacpp_flags() -> list[str]:
    options = json.loads((DATA / "llamacpp" / "options.json").read_text())["options"]
    return [arg for option in options for arg in option["args"] if arg not in ("-h", "--help", "--usage", "--version")
            and not arg.startswith(("--list", "--completion", "--cache-list"))]


EXPANSIONS = ("$MODEL", "${X:-3}", "${X:?unset}", "$@")
WORDS = st.one_of(
    st.sampled_from(["", "-", "--", "0", "-1", "1e9", "true", "false", "auto", "{}", "[]", "null", "mtp", "ngram",
                     '{"method": "mtp", "num_speculative_tokens": 2}', '{"method":', "fp8", "turboquant_4bit_nc",
                     "=", "--=x", *EXPANSIONS, "a b", "'", '"', "\\"]),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="\x00"), max_size=12),
)


def argv_of(flags: list[str]) -> st.SearchStrategy[list[str]]:
    flag = st.sampled_from(flags)
    flag_with_equals = st.builds(lambda f, w: f"{f}={w}", st.sampled_from([f for f in flags if f.startswith("--")]), WORDS)
    return st.lists(st.one_of(flag, flag, flag_with_equals, WORDS), max_size=14)


def lint_script(directory: Path, script: str) -> list[str]:
    """The pipeline's internal errors for one script (``[]`` when it ran cleanly)."""
    path = directory / "serve.sh"
    path.write_text(script, encoding="utf-8")
    result = run([path], Options(root=directory))
    assert len(result.launches) == 1, script
    return result.internal_errors


def quoted(words: list[str]) -> str:
    """Shell words for ``words``: expansions left to the shell, everything else quoted."""
    return " ".join(word if word in EXPANSIONS else shlex.quote(word) for word in words)


@sized(150)
@given(argv=argv_of([o for a in vllm_actions() for o in a["options"]]))
# tree-sitter-bash reads a pattern after `==` among a command's words and failed on the `}`
@example(argv=["==", "--headless", "0}"])
def test_random_vllm_argv_never_raises(tmp_path: Path, argv: list[str]) -> None:
    assert lint_script(tmp_path, f"#!/bin/sh\nvllm serve Qwen/Qwen3-8B {quoted(argv)}\n") == []


@sized(150)
@given(argv=argv_of([o for a in sglang_actions() for o in a["options"]]))
def test_random_sglang_argv_never_raises(tmp_path: Path, argv: list[str]) -> None:
    script = f"#!/bin/sh\npython3 -m sglang.launch_server --model-path Qwen/Qwen3-8B {quoted(argv)}\n"
    assert lint_script(tmp_path, script) == []


@sized(150)
@given(argv=argv_of(llamacpp_flags()))
def test_random_llamacpp_argv_never_raises(tmp_path: Path, argv: list[str]) -> None:
    assert lint_script(tmp_path, f"#!/bin/sh\nllama-server -m /models/q.gguf {quoted(argv)}\n") == []


# --- round trip: what is written is what inspect reads ---------------------------------------------

#: vLLM integer options that take one value and are stored as given (no cross-option rewriting)
INT_FLAGS = ("--max-num-seqs", "--max-model-len", "--tensor-parallel-size", "--seed", "--max-num-batched-tokens",
             "--pipeline-parallel-size", "--max-logprobs")
STR_FLAGS = ("--served-model-name", "--download-dir", "--tokenizer", "--revision")


@cache
def dest_of(flag: str) -> str:
    (action,) = [a for a in vllm_actions() if flag in a["options"]]
    dest: str = action["dest"]
    return dest


SAFE_WORD = st.from_regex(r"[a-z][a-z0-9_./]{0,10}", fullmatch=True).filter(
    lambda w: w not in ("y", "n", "yes", "no", "on", "off", "true", "false", "null") and not w.endswith("."))


@st.composite
def option_sets(draw: st.DrawFn) -> dict[str, Any]:
    ints = draw(st.lists(st.sampled_from(INT_FLAGS), unique=True, max_size=4))
    strs = draw(st.lists(st.sampled_from(STR_FLAGS), unique=True, max_size=2))
    options: dict[str, Any] = {flag: draw(st.integers(1, 65_536)) for flag in ints}
    options.update({flag: draw(SAFE_WORD) for flag in strs})
    return options


def expected_options(options: dict[str, Any]) -> dict[str, Any]:
    # --served-model-name is nargs="+": stored as a list
    return {dest_of(flag): [value] if flag == "--served-model-name" else value for flag, value in options.items()}


SHELL_QUOTES = ("plain", "single", "double", "default", "assigned")


@st.composite
def shell_scripts(draw: st.DrawFn, options: dict[str, Any]) -> tuple[str, str]:
    """A script launching ``vllm serve`` with ``options``, and the ``.env`` it needs (may be empty)."""
    assignments, dotenv, words = [], [], []
    for index, (flag, value) in enumerate(options.items()):
        style = draw(st.sampled_from(SHELL_QUOTES))
        text = str(value)
        if style == "single":
            rendered = f"'{text}'"
        elif style == "double":
            rendered = f'"{text}"'
        elif style == "default":  # unset variable: the default applies
            rendered = draw(st.sampled_from([f'"${{UNSET_{index}:-{text}}}"', f"${{UNSET_{index}-{text}}}"]))
        elif style == "assigned":
            name = f"VALUE_{index}"
            assignments.append(f"{name}={shlex.quote(text)}")
            rendered = draw(st.sampled_from([f'"${name}"', f"${{{name}}}", f'"${{{name}:-0}}"']))
        else:
            rendered = text
        joiner = draw(st.sampled_from([" ", "=", " "]))
        words.append(f"{flag}{joiner}{rendered}")
    separators = [draw(st.sampled_from([" ", " \\\n  ", "  \\\n\t"])) for _ in words]
    command = "exec vllm serve Qwen/Qwen3-8B" + "".join(sep + word for sep, word in zip(separators, words, strict=True))
    lines = ["#!/usr/bin/env bash", "set -euo pipefail", *assignments, command]
    return "\n".join(lines) + "\n", "\n".join(dotenv)


@sized(100)
@given(data=st.data(), options=option_sets())
def test_shell_round_trip(tmp_path: Path, data: st.DataObject, options: dict[str, Any]) -> None:
    script, _ = data.draw(shell_scripts(options))
    (tmp_path / "serve.sh").write_text(script, encoding="utf-8")
    (launch,) = inspect_json(["serve.sh"], tmp_path, ["--engine-version", "vllm=0.30.0"])["launches"]
    assert launch["cli_errors"] == [], script
    found = {dest: launch["options"].get(dest) for dest in expected_options(options)}
    assert found == expected_options(options), script


def yaml_scalar(draw: st.DrawFn, text: str) -> str:
    style = draw(st.sampled_from(["plain", "single", "double"]))
    if style == "single":
        return f"'{text}'"
    if style == "double" or not isinstance(yaml.safe_load(text), str):  # ``- 8`` is a number, not a word
        return json.dumps(text)
    return text


@st.composite
def compose_files(draw: st.DrawFn, options: dict[str, Any]) -> str:
    words = ["Qwen/Qwen3-8B"]
    for flag, value in options.items():
        words += [flag, str(value)]
    form = draw(st.sampled_from(["flow", "block", "string", "folded", "folded-strip", "literal", "env"]))
    head = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.30.0\n"
    if form == "flow":
        return head + "    command: [" + ", ".join(json.dumps(w) for w in words) + "]\n"
    if form == "block":
        return head + "    command:\n" + "".join(f"      - {yaml_scalar(draw, w)}\n" for w in words)
    if form == "string":
        return head + "    command: " + json.dumps(" ".join(words)) + "\n"
    if form == "env":  # compose interpolation of unset variables with defaults: ${V:-value}
        command = " ".join(f"${{MTPLINT_UNSET_{i}:-{w}}}" if i % 2 == 0 and i else w for i, w in enumerate(words))
        return head + "    command: " + json.dumps(command) + "\n"
    indicator = {"folded": ">", "folded-strip": ">-", "literal": "|"}[form]
    per_line = draw(st.integers(1, 3))
    lines = [" ".join(words[i:i + per_line]) for i in range(0, len(words), per_line)]
    return head + f"    command: {indicator}\n" + "".join(f"      {line}\n" for line in lines)


@sized(100)
@given(data=st.data(), options=option_sets())
def test_compose_round_trip(tmp_path: Path, data: st.DataObject, options: dict[str, Any]) -> None:
    text = data.draw(compose_files(options))
    (tmp_path / "compose.yaml").write_text(text, encoding="utf-8")
    (launch,) = inspect_json(["compose.yaml"], tmp_path)["launches"]
    assert launch["cli_errors"] == [], text
    found = {dest: launch["options"].get(dest) for dest in expected_options(options)}
    assert found == expected_options(options), text


# --- every extractor: nothing but Malformed --------------------------------------------------------


def extract_everything(tmp_path: Path, text: str, kinds: tuple[str, ...] = tuple(EXTRACTORS)) -> None:
    loader = FileLoader(tmp_path)
    for kind in kinds:
        extract = extractor_for(kind)
        assert extract is not None
        source = SourceFile(str(tmp_path / f"input.{kind}"), f"input.{kind}", text)
        try:
            extract(source, ExtractContext(loader))
        except Malformed:
            pass
        except RecursionError:  # the pipeline reports it as MTP001; only for absurd depth
            assert text.count("[") + text.count("{") + text.count("(") > 100


ENGINE_TEXT = st.sampled_from(["vllm serve m ", "python -m sglang.launch_server --model-path m ", "llama-server -m x.gguf ",
                               "--speculative-config ", "command: ", "- vllm\n", "ExecStart=", "RUN ", "CMD [",
                               "LLM(model='m', ", "\\\n", "'", '"', "$(", "${X:-", "`", "<<EOF\n", "\nEOF\n", "#", "[", "{",
                               "&a ", "*a ", "<<: ", "!!python/name:os.system ", "\t", "\r\n", "\x00"])


@sized(200)
@given(parts=st.lists(st.one_of(ENGINE_TEXT, st.text(max_size=8)), max_size=30))
def test_random_text_into_every_extractor(tmp_path: Path, parts: list[str]) -> None:
    extract_everything(tmp_path, "".join(parts))


YAML_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=10),
              st.sampled_from(["vllm", "serve", "--speculative-config", '{"method": "mtp"}', "vllm/vllm-openai",
                               "lmsysorg/sglang", "ghcr.io/ggml-org/llama.cpp:server", "${MODEL:-m}"])),
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.sampled_from(["services", "command", "entrypoint", "image", "args",
                                                                "environment", "env", "containers", "spec", "template",
                                                                "kind", "apiVersion", "models", "cmd", "name", "value",
                                                                "x-common", "extends", "env_file"]) | st.text(max_size=5),
                                               children, max_size=4)),
    max_leaves=25,
)


@sized(200)
@given(document=YAML_VALUES, flow=st.sampled_from([None, True, False]), style=st.sampled_from([None, "'", '"', "|", ">"]))
def test_random_yaml_documents_into_yaml_extractors(tmp_path: Path, document: Any, flow: bool | None,
                                                    style: str | None) -> None:
    text = yaml.safe_dump(document, default_flow_style=flow, default_style=style, allow_unicode=True)
    extract_everything(tmp_path, text, ("compose", "yaml"))


# --- mapped texts ----------------------------------------------------------------------------------

_SOURCE = SourceFile.from_text("x" * 64, "mapped.txt")


@st.composite
def mapped_texts(draw: st.DrawFn) -> MappedText:
    text = draw(st.text(alphabet="ab ", max_size=5))
    offsets = draw(st.lists(st.integers(0, 64), min_size=len(text) + 1, max_size=len(text) + 1))
    return MappedText(text, offsets, draw(st.sampled_from([None, _SOURCE])))


@sized(300)
@given(text=mapped_texts(), start=st.integers(-3, 8), end=st.none() | st.integers(-3, 8))
def test_a_slice_keeps_each_characters_offset(text: MappedText, start: int, end: int | None) -> None:
    piece = text.slice(start, end)
    low = max(0, min(start, len(text.text)))
    high = max(low, min(len(text.text) if end is None else end, len(text.text)))
    assert piece.text == text.text[low:high] and piece.source is text.source
    assert list(piece.offsets) == [*text.offsets[low:high], text.offsets[high]]


@sized(300)
@given(parts=st.lists(mapped_texts(), max_size=5))
def test_joining_is_adding_one_part_after_another(parts: list[MappedText]) -> None:
    joined = MappedText.join(parts)
    if not parts:
        assert (joined.text, list(joined.offsets), joined.source) == ("", [0], None)
        return
    added = parts[0]
    for part in parts[1:]:
        added = added + part
    assert (joined.text, list(joined.offsets), joined.source) == (added.text, list(added.offsets), added.source)
