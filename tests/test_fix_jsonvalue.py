"""Rewriting a speculative-config value in its container (mtplint/edits/jsonvalue.py).

Each test writes the value the way people do (a single-quoted shell word, escaped double quotes in
a compose folded command, a k8s ``args`` item, a Python dict with comments, a ``--config`` YAML
mapping), applies the edits, and checks what the engine would read back and that every byte
outside the edits is unchanged.
"""

from __future__ import annotations

import ast
import json
import shlex
import shutil
import string
import subprocess

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplint.edits.jsonvalue import JsonSite, encode, python_dict_site, site_for
from mtplint.fix import apply_edits
from mtplint.source import SourceFile


def _site(name: str, text: str, needle: str, expected: str | None = None) -> tuple[SourceFile, JsonSite]:
    source = SourceFile.from_text(text, name)
    start = text.index(needle)
    site = site_for(source, source.span(start, start + len(needle)), expected)
    assert site is not None, f"no site for {needle!r} in {name}"
    return source, site


def _apply(text: str, edits: list | None) -> str:  # type: ignore[type-arg]
    assert edits is not None
    return apply_edits(text, edits)[0]


def _shell_words(script: str) -> list[str]:
    """The words bash passes to ``vllm`` (bash itself reads the quoting; shlex differs on ``\\$``)."""
    bash = shutil.which("bash")
    if bash is None:
        return shlex.split(script.replace("\\\n", " "), comments=True)
    program = 'vllm() { printf "%s\\0" "$@"; }\nexec() { "$@"; }\n' + script
    done = subprocess.run([bash, "-c", program], capture_output=True, check=True)
    return done.stdout.decode().split("\0")[:-1]


def _shell_value(script: str, flag: str = "--speculative-config") -> str:
    words = _shell_words(script) if "vllm " in script else shlex.split(script)
    for index, word in enumerate(words):
        if word == flag:
            return words[index + 1]
        if word.startswith(flag + "="):
            return word.split("=", 1)[1]
    raise AssertionError(f"{flag} not in {words}")


# --- shell words -----------------------------------------------------------------------------------

SHELL = """#!/usr/bin/env bash
# keep me
vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct \\
  --speculative-config '{"method": "qwen3_next_mtp", "num_speculative_tokens": 2}' \\
  --port 8000
"""
SHELL_WORD = """'{"method": "qwen3_next_mtp", "num_speculative_tokens": 2}'"""


def test_shell_single_quoted_value_edit_is_minimal() -> None:
    _, site = _site("serve.sh", SHELL, SHELL_WORD)
    edits = site.set_value("method", "mtp")
    assert edits is not None and len(edits) == 1 and edits[0].content == '"mtp"'
    after = _apply(SHELL, edits)
    assert after == SHELL.replace('"qwen3_next_mtp"', '"mtp"')
    assert json.loads(_shell_value(after)) == {"method": "mtp", "num_speculative_tokens": 2}


def test_shell_add_key_keeps_separators() -> None:
    _, site = _site("serve.sh", SHELL, SHELL_WORD)
    after = _apply(SHELL, site.add_key("draft_tensor_parallel_size", 1))
    assert '"num_speculative_tokens": 2, "draft_tensor_parallel_size": 1}' in after


def test_compact_json_stays_compact() -> None:
    text = """vllm serve m --speculative-config '{"method":"mtp"}'\n"""
    _, site = _site("serve.sh", text, """'{"method":"mtp"}'""")
    assert _apply(text, site.add_key("num_speculative_tokens", 1)) == \
        """vllm serve m --speculative-config '{"method":"mtp","num_speculative_tokens":1}'\n"""


def test_single_quoted_shell_word_cannot_hold_a_quote() -> None:
    text = """vllm serve m --speculative-config '{"method": "mtp", "model": "x"}'\n"""
    _, site = _site("serve.sh", text, """'{"method": "mtp", "model": "x"}'""")
    after = _apply(text, site.set_value("model", "it's"))
    assert _shell_value(after) == '{"method": "mtp", "model": "it\'s"}'


def test_double_quoted_shell_json_is_escaped() -> None:
    text = 'vllm serve m --speculative-config "{\\"method\\":\\"x_mtp\\"}" --port 1\n'
    _, site = _site("serve.sh", text, '"{\\"method\\":\\"x_mtp\\"}"')
    after = _apply(text, site.update({"method": "mtp", "num_speculative_tokens": 1}))
    assert after == 'vllm serve m --speculative-config "{\\"method\\":\\"mtp\\",\\"num_speculative_tokens\\":1}" --port 1\n'
    assert json.loads(_shell_value(after)) == {"method": "mtp", "num_speculative_tokens": 1}


def test_equals_form_word() -> None:
    text = """exec vllm serve m --speculative-config='{"method": "deepseek_mtp"}'\n"""
    _, site = _site("serve.sh", text, """--speculative-config='{"method": "deepseek_mtp"}'""",
                    expected='--speculative-config={"method": "deepseek_mtp"}')
    after = _apply(text, site.set_value("method", "mtp"))
    assert json.loads(_shell_value(after)) == {"method": "mtp"}


def test_expected_text_must_match() -> None:
    text = """vllm serve m --speculative-config '{"method": "mtp"}'\n"""
    source = SourceFile.from_text(text, "serve.sh")
    start = text.index("'{")
    assert site_for(source, source.span(start, len(text) - 1), '{"method": "other"}') is None


def test_python_literal_to_strict_json_in_double_quotes() -> None:
    text = """vllm serve m --speculative-config "{'method': 'mtp', 'x': True, 'y': None}"\n"""
    _, site = _site("serve.sh", text, """"{'method': 'mtp', 'x': True, 'y': None}\"""")
    after = _apply(text, site.replace_object({"method": "mtp", "x": True, "y": None}, strict_json=True))
    assert after == 'vllm serve m --speculative-config "{\\"method\\": \\"mtp\\", \\"x\\": true, \\"y\\": null}"\n'
    assert json.loads(_shell_value(after)) == {"method": "mtp", "x": True, "y": None}


def test_python_literal_value_keeps_its_quote() -> None:
    text = """vllm serve m --speculative-config "{'method': 'deepseek_mtp'}"\n"""
    _, site = _site("serve.sh", text, """"{'method': 'deepseek_mtp'}\"""")
    assert _apply(text, site.set_value("method", "mtp")) == """vllm serve m --speculative-config "{'method': 'mtp'}"\n"""


def test_word_with_mixed_quoting_gets_no_whole_rewrite() -> None:
    text = """vllm serve m --speculative-config '{"method": "'"$M"'"}'\n"""
    source = SourceFile.from_text(text, "serve.sh")
    start = text.index("'{")
    assert site_for(source, source.span(start, len(text) - 1)) is None


# --- YAML containers -------------------------------------------------------------------------------

COMPOSE = """services:
  vllm:
    image: vllm/vllm-openai:v0.30.0
    # a comment
    command: >
      Qwen/Qwen3-Next-80B-A3B-Instruct
      --speculative-config "{\\"method\\": \\"qwen3_next_mtp\\"}"
      --tensor-parallel-size 4
"""


def test_compose_folded_span_inside_the_quotes() -> None:
    # YAML token spans stop inside the quotes: the site looks one character out
    _, site = _site("compose.yaml", COMPOSE, '{\\"method\\": \\"qwen3_next_mtp\\"}', '{"method": "qwen3_next_mtp"}')
    after = _apply(COMPOSE, site.update({"method": "mtp", "num_speculative_tokens": 1}))
    command = yaml.safe_load(after)["services"]["vllm"]["command"]
    assert json.loads(_shell_value(command)) == {"method": "mtp", "num_speculative_tokens": 1}
    assert after.splitlines()[:6] == COMPOSE.splitlines()[:6]


@pytest.mark.parametrize("item", ["'{\"method\": \"deepseek_mtp\"}'", '"{\\"method\\": \\"deepseek_mtp\\"}"'])
def test_k8s_args_item(item: str) -> None:
    text = f"args:\n  - --speculative-config\n  - {item}\n  - --port\n"
    inner = item[1:-1]
    _, site = _site("deploy.yaml", text, inner, '{"method": "deepseek_mtp"}')
    after = _apply(text, site.update({"method": "mtp", "model": "it's \"x\""}))
    assert json.loads(yaml.safe_load(after)["args"][1]) == {"method": "mtp", "model": "it's \"x\""}


def test_config_yaml_mapping() -> None:
    text = "model: Qwen/Qwen3.6-27B\r\nspeculative-config:\r\n  method: qwen3_next_mtp  # alias\r\n" \
           "  num_speculative_tokns: 2\r\nmax-model-len: 32768\r\n"
    source = SourceFile.from_text(text, "serve.yaml")
    start = text.index("method")
    site = site_for(source, source.span(start, text.index("max-model-len")))
    assert site is not None
    edits = [*(site.set_value("method", "mtp") or []), *(site.rename_key("num_speculative_tokns",
                                                                         "num_speculative_tokens") or []),
             *(site.add_key("draft_tensor_parallel_size", 1) or [])]
    after = _apply(text, edits)
    assert after == ("model: Qwen/Qwen3.6-27B\r\nspeculative-config:\r\n  method: mtp  # alias\r\n"
                     "  num_speculative_tokens: 2\r\n  draft_tensor_parallel_size: 1\r\nmax-model-len: 32768\r\n")


# --- Python ----------------------------------------------------------------------------------------

PYTHON = '''from vllm import LLM

SPEC = {
    "method": "deepseek_mtp",  # the MTP head
    'model': None,
}

llm = LLM(model="deepseek-ai/DeepSeek-V3", speculative_config=SPEC)
'''


def test_python_dict_literal_keeps_comments_and_trailing_comma() -> None:
    start = PYTHON.index("{")
    _, site = _site("offline.py", PYTHON, PYTHON[start:PYTHON.index("}") + 1])
    after = _apply(PYTHON, site.update({"method": "mtp", "num_speculative_tokens": 1}))
    assert '"method": "mtp",  # the MTP head' in after
    assert "    'model': None,\n    \"num_speculative_tokens\": 1,\n}" in after
    compile(after, "offline.py", "exec")
    tree = ast.parse(after)
    assign = tree.body[1]
    assert isinstance(assign, ast.Assign)
    assert ast.literal_eval(assign.value) == {"method": "mtp", "model": None, "num_speculative_tokens": 1}


def test_python_dict_rename_uses_the_keys_quote() -> None:
    start = PYTHON.index("{")
    _, site = _site("offline.py", PYTHON, PYTHON[start:PYTHON.index("}") + 1])
    assert "'draft_model': None" in _apply(PYTHON, site.rename_key("model", "draft_model"))


def test_python_dict_inside_a_call_after_non_ascii_text_is_placed_exactly() -> None:
    """Only the literal is parsed: its positions are mapped back past non-ASCII text on the same
    line and on the lines before it, and the dict's own continuation lines keep their place."""
    text = ('"""Démo — ünïcode."""\nllm = LLM(model="é", speculative_config={  # drafter: é\n'
            '    u"method": "deepseek_mtp",\n    "ñ": 1,\n})\n')
    start = text.index("{")
    _, site = _site("offline.py", text, text[start:text.index("}") + 1])
    after = _apply(text, site.update({"method": "mtp"}))
    assert after == text.replace('u"method": "deepseek_mtp"', 'u"method": "mtp"')


def test_python_dict_entries_on_one_line_after_non_ascii_keys_and_a_parenthesized_value() -> None:
    text = 'SPEC = {"ñé": "ü", "method": ("deepseek_mtp"), "n": 2}\n'
    start = text.index("{")
    _, site = _site("offline.py", text, text[start:text.rindex("}") + 1])
    after = _apply(text, site.update({"method": "mtp", "n": 3}))
    assert after == 'SPEC = {"ñé": "ü", "method": ("mtp"), "n": 3}\n'


@pytest.mark.parametrize("key", ['"met" "hod"', 'b"method"', 'r"method"', 'f"method"', '("method")'])
def test_python_dict_with_a_key_not_written_as_one_plain_literal_gets_no_site(key: str) -> None:
    """The key's text is what a rename rewrites: a key spelled some other way is left alone."""
    text = f'SPEC = {{{key}: "deepseek_mtp"}}\n'
    source = SourceFile("offline.py", "offline.py", text)
    site = python_dict_site(source, source.span(text.index("{"), text.rindex("}") + 1))
    assert site is None or (key == '("method")' and site.shape.entries[0].key_start == text.index('"method"'))


def test_python_dict_with_double_star_entry_gets_no_site() -> None:
    text = 'SPEC = {"method": "deepseek_mtp", **EXTRA}\n'
    source = SourceFile("offline.py", "offline.py", text)
    assert python_dict_site(source, source.span(text.index("{"), text.rindex("}") + 1)) is None


def test_python_string_literal_holding_json() -> None:
    text = """llm = LLM(model="m", speculative_config='{"method": "x_mtp"}')\n"""
    _, site = _site("offline.py", text, """'{"method": "x_mtp"}'""")
    after = _apply(text, site.add_key("num_speculative_tokens", 1))
    assert after == """llm = LLM(model="m", speculative_config='{"method": "x_mtp", "num_speculative_tokens": 1}')\n"""


# --- properties ------------------------------------------------------------------------------------

KEYS = st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=12)
VALUES = st.one_of(st.integers(-5, 50), st.booleans(), st.none(),
                   st.text(alphabet=string.ascii_letters + string.digits + " '\"\\$`/-_.", max_size=12))


@settings(max_examples=150, deadline=None)
@given(obj=st.dictionaries(KEYS, VALUES, min_size=1, max_size=4), new=VALUES,
       separators=st.sampled_from([(", ", ": "), (",", ":"), (", ", ":")]),
       container=st.sampled_from(["sq", "dq"]))
def test_set_and_add_round_trip_through_the_shell(obj: dict[str, object], new: object,
                                                  separators: tuple[str, str], container: str) -> None:
    body = json.dumps(obj, separators=separators)
    word = "'" + encode(body, "sq") + "'" if container == "sq" else '"' + encode(body, "dq") + '"'
    text = f"#!/bin/sh\n# c\nvllm serve m --speculative-config {word} --port 8000\n"
    _, site = _site("serve.sh", text, word, body)
    first = next(iter(obj))
    changed = _apply(text, site.set_value(first, new))
    assert json.loads(_shell_value(changed)) == {**obj, first: new}
    _, site = _site("serve.sh", text, word, body)
    added = _apply(text, site.add_key("zz_new_key", new))
    assert json.loads(_shell_value(added)) == {**obj, "zz_new_key": new}
    for result in (changed, added):
        assert result.startswith("#!/bin/sh\n# c\nvllm serve m --speculative-config ")
        assert result.endswith(" --port 8000\n")
