"""Issue #19, acceptance 1: a fix never lands inside a substituted token.

The kubelet expands ``$(VAR)`` in a container's ``command``/``args`` from its ``env``, compose
interpolates ``${VAR}``, the shell ``$VAR``, systemd ``%i`` and ``${VAR}``, llama-swap its ``${PORT}``
macro -- all before the engine parses its argv. A fix that edits inside such a reference, or glues
text to it inside the same argument, changes what the engine receives in a way the text does not
show (issue #19: ``"$(TP)"`` became ``"$(TP) --no-enable-prefix-caching"``, which the kubelet
turns into the one argument ``'4 --no-enable-prefix-caching'``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtplint.checks import Edit, Finding, Fix, RuleContext
from mtplint.edits.substitution import edits_substituted, substitutions
from tests.conftest import inspect_json, run_cli, write_files

Predicate = Callable[[RuleContext], Iterator[Finding]]

#: the manifest of issue #19
K8S = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: q}
spec:
  selector: {matchLabels: {app: q}}
  template:
    metadata: {labels: {app: q}}
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.30.0
          command: ["vllm", "serve"]
          args:
            - zai-org/GLM-4.5-Air
            - --speculative-config
            - '{"method":"mtp","num_speculative_tokens":1}'
            - --tensor-parallel-size
            - "$(TP)"
          env:
            - name: TP
              value: "4"
"""
SPEC = '{"method":"mtp","num_speculative_tokens":2}'
PIN = ["--engine-version", "vllm=0.30.0"]


def _fix(tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli(["check", "--isolated", *PIN, "--fix", "--unsafe-fixes", *extra, "."], cwd=tmp_path)


def _launch(tmp_path: Path) -> dict[str, Any]:
    launches: list[dict[str, Any]] = inspect_json(["."], tmp_path, PIN)["launches"]
    assert len(launches) == 1
    return launches[0]


# --- the references ---------------------------------------------------------------------------------


def test_references_of_each_form_are_found() -> None:
    text = "a $(TP) b ${PORT:-8000} $MODEL $1 $$ $$(ESCAPED) %i 100%% ${X}"
    found = [text[start:end] for start, end in substitutions(text, systemd=True)]
    assert found == ["$(TP)", "${PORT:-8000}", "$MODEL", "$1", "%i", "${X}"]
    # outside a unit file, % is an ordinary character
    assert "%i" not in [text[s:e] for s, e in substitutions(text)]


@pytest.mark.parametrize(("start", "end", "content", "changed"), [
    (7, 7, " --x", None),          # right after `$(TP)`: a new word only if the container says so
    (4, 4, "Y", "$(TP)"),          # inside it
    (2, 4, "", "$(TP)"),           # cutting into it
    (2, 7, "", None),              # removing it whole
    (2, 7, "--tp=$(TP)", None),    # writing it again
    (2, 7, "4", "$(TP)"),          # replacing it by what it stands for
])
def test_an_edit_changes_a_reference_only_when_it_cuts_into_it(start: int, end: int, content: str,
                                                                changed: str | None) -> None:
    assert edits_substituted("a $(TP) b", start, end, content) == changed


# --- the issue's manifest -----------------------------------------------------------------------------


def test_the_issue_manifest_gets_a_new_item_and_keeps_the_substituted_one(tmp_path: Path) -> None:
    write_files(tmp_path, {"deployment.yaml": K8S})
    code, out, err = _fix(tmp_path)
    assert "fix not applied" not in err, err
    fixed = (tmp_path / "deployment.yaml").read_text()
    assert fixed == K8S.replace('            - "$(TP)"\n',
                                '            - "$(TP)"\n            - --no-enable-prefix-caching\n')
    launch = _launch(tmp_path)
    assert launch["cli_errors"] == []
    assert launch["effective"]["tensor_parallel"]["value"] == 4
    assert launch["effective"]["prefix_caching"]["value"] is False
    assert _fix(tmp_path)[0] == code and (tmp_path / "deployment.yaml").read_text() == fixed
    assert "fixable" not in out


@pytest.fixture
def rule(monkeypatch: pytest.MonkeyPatch) -> Callable[[Predicate], None]:
    def install(predicate: Predicate) -> None:
        monkeypatch.setattr("mtplint.checks.mtp102.check", predicate)

    return install


def _inserting_at(offset_in: Callable[[str], int], text: str) -> Predicate:
    """A rule whose fix inserts ``text`` at an offset of the launch's file (the issue's old MTP102
    fix, which glued its flag to the last word whatever that word was)."""
    def check(ctx: RuleContext) -> Iterator[Finding]:
        source = ctx.report.launch.source
        if "--no-enable-prefix-caching" not in [token.value for token in ctx.report.launch.args]:
            edit = Edit(source.span(offset_in(source.text)), text)
            yield ctx.report_finding("prefix caching is on", fix=Fix("safe", "Add it", [edit]))
    return check


def test_a_fix_glued_to_a_substituted_item_is_not_written(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    """Acceptance 1 as the issue states it: the old fix leaves the file byte-identical and is
    reported as not applied, with the reason (the kubelet would hand vLLM one argument)."""
    rule(_inserting_at(lambda text: text.index('$(TP)') + len('$(TP)'), " --no-enable-prefix-caching"))
    write_files(tmp_path, {"deployment.yaml": K8S})
    for _ in range(2):
        code, out, err = _fix(tmp_path, "--select", "MTP102")
        assert (tmp_path / "deployment.yaml").read_bytes() == K8S.encode()
        # under `--select MTP102` too, the engine's rejection of the new argv is damage
        assert ("MTP102: fix not applied (Add it): the result has a new finding (MTP509 in deployment.yaml: "
                "vLLM 0.30.0 refuses this launch before it loads the model: \"argument --tensor-parallel-size/-tp: "
                "invalid int value: '4 --no-enable-prefix-caching'\"") in err
        assert "fixable" not in out and code == 1
    _, out, _ = run_cli(["check", "--isolated", *PIN, "--select", "MTP102", "--unsafe-fixes", "."], cwd=tmp_path)
    assert "[*]" not in out and "not applied by --fix" in out


@pytest.mark.parametrize(("name", "text", "inside"), [
    ("compose.yaml", "services:\n  vllm:\n    image: vllm/vllm-openai:v0.30.0\n"
     f"    command: [\"Qwen/Qwen3.6-27B\", \"--speculative-config\", '{SPEC}', \"--port\", \"${{PORT:-8000}}\"]\n",
     "${PORT:-8000}"),
    ("serve.sh", f"#!/usr/bin/env bash\nexec vllm serve Qwen/Qwen3.6-27B --speculative-config '{SPEC}' --port \"$PORT\"\n",
     "$PORT"),
    ("vllm@.service", "[Service]\nExecStart=/usr/bin/vllm serve Qwen/Qwen3.6-27B "
     f"--speculative-config '{SPEC}' --served-model-name qwen-%i\n", "%i"),
    ("config.yaml", "models:\n  qwen:\n    cmd: |\n"
     f"      vllm serve Qwen/Qwen3.6-27B --speculative-config '{SPEC}'\n      --port ${{PORT}}\n", "${PORT}"),
])
def test_an_edit_inside_a_reference_is_refused(tmp_path: Path, rule: Callable[[Predicate], None], name: str,
                                                text: str, inside: str) -> None:
    rule(_inserting_at(lambda source: source.index(inside) + 1, "X"))
    write_files(tmp_path, {name: text})
    _, _, err = _fix(tmp_path, "--select", "MTP102")
    assert (tmp_path / name).read_text() == text
    assert f"it would edit inside `{inside}`, which is substituted before the engine reads the argument" in err


# --- each form, with the real MTP102 fix ------------------------------------------------------------


FORMS = {
    "k8s $(VAR) with env": ("deployment.yaml", K8S, '            - "$(TP)"\n',
                            '            - "$(TP)"\n            - --no-enable-prefix-caching\n'),
    "compose ${VAR:-default} in a flow list": (
        "compose.yaml",
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.30.0\n"
        f"    command: [\"Qwen/Qwen3.6-27B\", \"--speculative-config\", '{SPEC}', \"--port\", \"${{PORT:-8000}}\"]\n",
        '"${PORT:-8000}"]', '"${PORT:-8000}", "--no-enable-prefix-caching"]'),
    "compose ${VAR} in a folded command": (
        "compose.yaml",
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.30.0\n    command: >\n"
        f"      Qwen/Qwen3.6-27B --speculative-config '{SPEC}'\n      --tensor-parallel-size \"${{TP}}\"\n",
        '"${TP}"\n', '"${TP}"\n      --no-enable-prefix-caching\n'),
    "shell $VAR on a continued line": (
        "serve.sh",
        f"#!/usr/bin/env bash\nset -euo pipefail\nexec vllm serve Qwen/Qwen3.6-27B --speculative-config '{SPEC}' \\\n"
        "  --port \"$PORT\"\n",
        '"$PORT"\n', '"$PORT" \\\n  --no-enable-prefix-caching\n'),
    "systemd %i and $VAR": (
        "vllm@.service",
        "[Service]\nEnvironment=PORT=8000\nExecStart=/usr/bin/vllm serve Qwen/Qwen3.6-27B "
        f"--speculative-config '{SPEC}' --served-model-name %i --port $PORT\n",
        "$PORT\n", "$PORT --no-enable-prefix-caching\n"),
    "llama-swap ${PORT} macro": (
        "config.yaml",
        f"models:\n  qwen:\n    cmd: |\n      vllm serve Qwen/Qwen3.6-27B --speculative-config '{SPEC}'\n"
        "      --port ${PORT}\n",
        "${PORT}\n", "${PORT}\n      --no-enable-prefix-caching\n"),
}


@pytest.mark.parametrize("form", list(FORMS))
def test_the_flag_is_added_as_a_word_of_its_own_after_a_substituted_one(tmp_path: Path, form: str) -> None:
    name, text, old, new = FORMS[form]
    write_files(tmp_path, {name: text})
    before = _launch(tmp_path)
    _, _, err = _fix(tmp_path, "--select", "MTP102")
    assert "fix not applied" not in err, err
    assert (tmp_path / name).read_text() == text.replace(old, new)
    after = _launch(tmp_path)
    assert after["argv"] == [*before["argv"], "--no-enable-prefix-caching"]
    assert after["cli_errors"] == before["cli_errors"] == []


@pytest.mark.parametrize(("name", "text"), [
    ("deployment.yaml", K8S.replace('- --tensor-parallel-size\n            - "$(TP)"',
                                    "- --tensor-parallel-size=$(TP)\n            - --max-num-seqs=$(UNSET)")),
    ("serve.sh", f"#!/usr/bin/env bash\nvllm serve Qwen/Qwen3.6-27B --speculative-config '{SPEC}' "
                 "--max-num-seqs=\"$SEQS\" --tensor-parallel-size=${TP}\n"),
    ("compose.yaml", "services:\n  vllm:\n    image: vllm/vllm-openai:v0.30.0\n    command: >\n"
                     f"      Qwen/Qwen3.6-27B --speculative-config '{SPEC}' --max-num-seqs=${{SEQS}}\n"),
])
def test_an_option_whose_value_is_substituted_is_not_rejected(tmp_path: Path, name: str, text: str) -> None:
    """``--flag=$(VAR)``: argparse sees the flag with whatever value the variable has."""
    write_files(tmp_path, {name: text})
    launch = _launch(tmp_path)
    assert launch["cli_errors"] == []
    assert launch["options"]["max_num_seqs"] in ({"unresolved": "$(UNSET)"}, {"unresolved": "$SEQS"},
                                                 {"unresolved": "${SEQS}"}) or name == "deployment.yaml"
    code, out, _ = run_cli(["check", "--isolated", *PIN, "--select", "MTP5", "."], cwd=tmp_path)
    assert code == 0, out


def test_kubelet_expansion_as_the_engine_receives_it(tmp_path: Path) -> None:
    """``$(VAR)`` from a literal ``value`` is expanded, ``$$(VAR)`` is the text ``$(VAR)``, a
    ``valueFrom`` or undefined variable stays unresolved (kubelet's expansion, see the k8s docs);
    none of them is an argument vLLM rejects, and a fix adds its flag after them."""
    manifest = K8S.replace('            - "$(TP)"\n', (
        '            - "$(TP)"\n            - --served-model-name\n            - "$$(NAME)"\n'
        '            - --max-num-seqs\n            - "$(SEQS)"\n            - --max-model-len=$(UNDEFINED)\n'))
    manifest = manifest.replace('              value: "4"\n', (
        '              value: "4"\n            - name: SEQS\n'
        '              valueFrom: {configMapKeyRef: {name: tuning, key: seqs}}\n'))
    write_files(tmp_path, {"deployment.yaml": manifest})
    launch = _launch(tmp_path)
    assert launch["argv"][5:] == ["--tensor-parallel-size", "4", "--served-model-name", "$(NAME)", "--max-num-seqs",
                                  {"unresolved": "$(SEQS)"}, {"unresolved": "--max-model-len=$(UNDEFINED)"}]
    assert launch["options"]["max_model_len"] == {"unresolved": "$(UNDEFINED)"}
    assert launch["cli_errors"] == []
    _, _, err = _fix(tmp_path, "--select", "MTP102")
    assert "fix not applied" not in err
    assert (tmp_path / "deployment.yaml").read_text() == manifest.replace(
        "            - --max-model-len=$(UNDEFINED)\n",
        "            - --max-model-len=$(UNDEFINED)\n            - --no-enable-prefix-caching\n")


@pytest.mark.parametrize(("command", "dest", "value"), [
    ('vllm-mlx serve mlx-community/Qwen3-8B --max-num-seqs="$SEQS" --port "$PORT"', "max_num_seqs", "$SEQS"),
    ('python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp-size=${TP}', "tp_size", "${TP}"),
    # llama.cpp's parser has no `--flag=value` form (as mtplint models it): the unresolved word
    # could be anything, so it leaves the rest open rather than rejecting it
    ('llama-server -m /models/Qwen3-8B-Q4_K_M.gguf --ctx-size="$CTX"', None, None),
])
def test_other_engines_take_a_substituted_value_as_the_options(tmp_path: Path, command: str, dest: str | None,
                                                               value: str | None) -> None:
    """vllm-mlx used to read ``--max-num-seqs="$SEQS"`` as a stray argument (its message carried
    mtplint's internal marker); SGLang already took it as the option."""
    write_files(tmp_path, {"serve.sh": f"#!/bin/sh\nexec {command}\n"})
    launches = inspect_json(["."], tmp_path)["launches"]
    assert launches[0]["cli_errors"] == []
    if dest is not None:
        assert launches[0]["options"][dest] == {"unresolved": value}


def test_a_word_that_may_be_several_is_not_a_missing_value(tmp_path: Path) -> None:
    """Unquoted ``${SEQS}`` in a compose string command may expand to any number of words, the
    value among them: vLLM and vllm-mlx do not report "expected one argument" for the flag before it."""
    write_files(tmp_path, {"compose.yaml": (
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.30.0\n"
        "    command: Qwen/Qwen3.6-27B --max-num-seqs ${SEQS}\n"
        "  mlx:\n    image: example/mlx\n    command: vllm-mlx serve mlx-community/Qwen3-8B --max-num-seqs ${SEQS}\n")})
    launches = inspect_json(["."], tmp_path)["launches"]
    assert [launch["engine"] for launch in launches] == ["vllm", "vllm-mlx"]
    assert [launch["cli_errors"] for launch in launches] == [[], []]


# --- the property: across source kinds ---------------------------------------------------------------

#: literal words with a fix of a real rule: MTP102 (switch renamed), MTP504 (value given to a
#: switch), MTP506 (misspelt flag), or none
LITERAL_OPTIONS = (
    ("--enable-prefix-caching",),
    ("--enforce-eager=false",),
    ("--gpu-memory-utilisation", "0.85"),
    ("--tensor-parallel-size", "2"),
    ("--max-model-len", "32768"),
)
#: options whose value is substituted, and the variable
SUBSTITUTED_OPTIONS = (("--port", "PORT"), ("--served-model-name", "NAME"), ("--max-num-seqs", "SEQS"))


def _reference(kind: str, variable: str) -> str:
    return {"k8s": f"$({variable})", "shell": f"${{{variable}}}", "compose-list": f"${{{variable}}}",
            "compose-string": f"${{{variable}}}", "systemd": "%i" if variable == "NAME" else f"${{{variable}}}",
            "llama-swap": "${PORT}" if variable == "PORT" else f"${{{variable}}}"}[kind]


def _render(kind: str, words: list[tuple[str, bool]]) -> tuple[str, str]:
    """The project file running ``vllm serve`` with ``words`` (text, substituted?)."""
    model = "Qwen/Qwen3-Next-80B-A3B-Instruct"
    spec = '{"method":"qwen3_next_mtp","num_speculative_tokens":2}'
    if kind == "k8s":
        items = "".join(f"            - \"{text}\"\n" for text, _ in words)
        return "deployment.yaml", (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: q}\nspec:\n  selector: {matchLabels: {app: q}}\n"
            "  template:\n    metadata: {labels: {app: q}}\n    spec:\n      containers:\n        - name: vllm\n"
            "          image: vllm/vllm-openai:v0.30.0\n          command: [\"vllm\", \"serve\"]\n          args:\n"
            f"            - {model}\n            - --speculative-config\n            - '{spec}'\n{items}"
            "          env:\n            - name: SEQS\n              value: \"8\"\n")
    if kind == "compose-list":
        items = "".join(f"      - \"{text}\"\n" for text, _ in words)
        return "compose.yaml", ("services:\n  vllm:\n    image: vllm/vllm-openai:v0.30.0\n    command:\n"
                                f"      - {model}\n      - --speculative-config\n      - '{spec}'\n{items}")
    line = " ".join(f'"{text}"' if sub and kind in ("shell", "compose-string") else text for text, sub in words)
    if kind == "compose-string":
        return "compose.yaml", ("services:\n  vllm:\n    image: vllm/vllm-openai:v0.30.0\n    command: >\n"
                                f"      {model} --speculative-config '{spec}'\n      {line}\n")
    if kind == "shell":
        return "serve.sh", ("#!/usr/bin/env bash\nset -euo pipefail\n"
                            f"exec vllm serve {model} --speculative-config '{spec}' \\\n  {line}\n")
    if kind == "systemd":
        return "vllm@.service", ("[Service]\nEnvironment=PORT=8000\n"
                                 f"ExecStart=/usr/bin/vllm serve {model} --speculative-config '{spec}' {line}\n")
    return "config.yaml", (f"models:\n  qwen:\n    cmd: |\n      vllm serve {model} --speculative-config '{spec}'\n"
                           f"      {line}\n")


@st.composite
def launches(draw: st.DrawFn) -> tuple[str, list[tuple[str, bool]]]:
    kind = draw(st.sampled_from(["k8s", "compose-list", "compose-string", "shell", "systemd", "llama-swap"]))
    literal = draw(st.lists(st.sampled_from(LITERAL_OPTIONS), unique=True, max_size=4))
    substituted = draw(st.lists(st.sampled_from(SUBSTITUTED_OPTIONS), unique=True, min_size=1, max_size=3))
    glued = draw(st.lists(st.booleans(), min_size=len(substituted), max_size=len(substituted)))
    options: list[list[tuple[str, bool]]] = [[(word, False) for word in option] for option in literal]
    for (flag, variable), glue in zip(substituted, glued, strict=True):
        reference = _reference(kind, variable)
        options.append([(f"{flag}={reference}", True)] if glue else [(flag, False), (reference, True)])
    order = draw(st.permutations(range(len(options))))
    return kind, [word for index in order for word in options[index]]


def _substituted_words(text: str, words: list[tuple[str, bool]]) -> list[str]:
    return [written for written, sub in words if sub and written in text]


@settings(max_examples=int(os.environ.get("MTPLINT_PROPERTY_EXAMPLES", "40")), deadline=None,
          derandomize=os.environ.get("CI") == "true",
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(launch=launches())
def test_no_applied_fix_changes_a_substituted_token(tmp_path_factory: pytest.TempPathFactory,
                                                    launch: tuple[str, list[tuple[str, bool]]]) -> None:
    kind, words = launch
    root = tmp_path_factory.mktemp(kind)
    name, text = _render(kind, words)
    write_files(root, {name: text})
    before = _launch(root)
    _, _, err = _fix(root)
    fixed = (root / name).read_text()
    after = _launch(root)
    # every written file re-parses as the same launch
    assert (after["file"], after["line"], after["engine"], after["entry"]) == \
        (before["file"], before["line"], before["engine"], before["entry"]), err
    assert not [e for e in after["cli_errors"] if e not in before["cli_errors"]], (fixed, err)
    # each substituted word is still written as it was, and still a word of its own: the
    # arguments the engine reads from it are the same, in the same order
    for written, sub in words:
        if sub:
            assert fixed.count(written) == text.count(written), (written, fixed)
    unresolved = [word for word in before["argv"] if isinstance(word, dict)]
    assert [word for word in after["argv"] if isinstance(word, dict)] == unresolved, (before["argv"], after["argv"])
    if kind == "k8s":
        substituted = [word for word, sub in words if sub and "SEQS" in word]
        if substituted:  # $(SEQS) is defined: its value reaches the engine as it did
            assert after["options"]["max_num_seqs"] == before["options"]["max_num_seqs"] == 8
    # and a second --fix changes nothing
    _fix(root)
    assert (root / name).read_text() == fixed
