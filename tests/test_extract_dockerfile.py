from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtplint.extract import ExtractContext, FileLoader, Malformed
from mtplint.extract.dockerfile import extract, instructions
from mtplint.extract.launch import Launch
from mtplint.source import SourceFile, Token


def launches(tmp_path: Path, text: str, name: str = "Dockerfile") -> list[Launch]:
    (tmp_path / name).write_text(text, encoding="utf-8")
    loader = FileLoader(tmp_path)
    source = loader.load(tmp_path / name)
    assert source is not None
    return extract(source, ExtractContext(loader))


def values(tokens: list[Token]) -> list[object]:
    return [token.to_json() for token in tokens]


def where(token: Token) -> tuple[int, int, int, int]:
    assert token.span is not None
    return token.span.line, token.span.column, token.span.end_line, token.span.end_column


EXEC_FORM = """\
# syntax=docker/dockerfile:1
ARG VLLM_TAG=v0.11.0
FROM python:3.12-slim AS weights
RUN pip install huggingface_hub==0.30.0

FROM vllm/vllm-openai:${VLLM_TAG}
ARG MODEL=Qwen/Qwen3.6-27B
ENV MODEL_NAME=${MODEL} \\
    VLLM_USE_V1=1
ENV HF_HOME /models/hf
RUN <<EOF
echo "CMD [\\"not\\", \\"an instruction\\"]"
EOF
CMD ["--model", "Qwen/Qwen3.6-27B", \\
     "--speculative-config", "{\\"method\\":\\"mtp\\",\\"num_speculative_tokens\\":2}", \\
     "--served-model-name", "$MODEL_NAME"]
"""


def test_cmd_exec_form_goes_to_the_image_entrypoint(tmp_path: Path) -> None:
    (launch,) = launches(tmp_path, EXEC_FORM)
    assert launch.engine == "vllm"
    assert values(launch.program) == ["vllm", "serve"]
    assert values(launch.args) == [
        "--model", "Qwen/Qwen3.6-27B", "--speculative-config", '{"method":"mtp","num_speculative_tokens":2}',
        # exec form runs without a shell: no variable expansion
        "--served-model-name", "$MODEL_NAME",
    ]
    assert where(launch.args[3]) == (15, 30, 15, 81)
    assert launch.context == "line 14"
    assert launch.image is not None and launch.image.value == "vllm/vllm-openai:v0.11.0"
    assert [hint.spec for hint in launch.version_hints] == ["==0.11.0"]
    assert [hint.spec for hint in launch.version_hints] == ["==0.11.0"]


def test_env_forms_and_arg_defaults(tmp_path: Path) -> None:
    (launch,) = launches(tmp_path, EXEC_FORM)
    assert launch.env["MODEL_NAME"].value.value == "Qwen/Qwen3.6-27B"
    assert launch.env["VLLM_USE_V1"].value.value == "1"
    assert launch.env["HF_HOME"].value.value == "/models/hf"
    entry = launch.env["VLLM_USE_V1"]
    assert entry.span is not None and (entry.span.line, entry.span.column) == (9, 5)
    assert "MODEL" not in launch.env  # ARG values do not reach the container


def test_shell_form_cmd_is_run_by_sh(tmp_path: Path) -> None:
    text = """\
FROM lmsysorg/sglang:v0.5.9-cu129
ENV SGLANG_ENABLE_SPEC_V2=1 MODEL=Qwen/Qwen3.6-35B-A3B
CMD python3 -m sglang.launch_server --model-path $MODEL \\
      --speculative-algorithm NEXTN --speculative-num-steps 3 \\
      --host 0.0.0.0
"""
    (launch,) = launches(tmp_path, text)
    assert launch.engine == "sglang"
    assert values(launch.args) == ["--model-path", "Qwen/Qwen3.6-35B-A3B", "--speculative-algorithm", "NEXTN",
                                   "--speculative-num-steps", "3", "--host", "0.0.0.0"]
    assert where(launch.args[4]) == (4, 37, 4, 60)
    assert launch.env["SGLANG_ENABLE_SPEC_V2"].value.value == "1"
    assert [hint.spec for hint in launch.version_hints] == ["==0.5.9"]


def test_entrypoint_and_cmd_combine(tmp_path: Path) -> None:
    text = """\
FROM nvidia/cuda:12.8.0-runtime-ubuntu24.04
RUN pip install vllm==0.11.0
ENTRYPOINT ["vllm", "serve"]
CMD ["Qwen/Qwen3.6-27B", "--speculative-config", "{\\"method\\": \\"mtp\\", \\"num_speculative_tokens\\": 1}"]
"""
    (launch,) = launches(tmp_path, text)
    assert values(launch.argv) == ["vllm", "serve", "Qwen/Qwen3.6-27B", "--speculative-config",
                                   '{"method": "mtp", "num_speculative_tokens": 1}']
    assert launch.context == "line 3"


def test_shell_form_entrypoint_ignores_cmd(tmp_path: Path) -> None:
    text = 'FROM vllm/vllm-openai:v0.10.2\nENTRYPOINT vllm serve "$MODEL" --port 8000\nCMD ["--ignored"]\n'
    (launch,) = launches(tmp_path, text)
    assert launch.args[0].unresolved == ("MODEL",)
    assert values(launch.args)[1:] == ["--port", "8000"]


def test_exec_form_bash_dash_c(tmp_path: Path) -> None:
    text = """\
FROM vllm/vllm-openai:v0.11.0
ENV N=2
ENTRYPOINT ["/bin/bash", "-c", "exec vllm serve Qwen/Qwen3.6-27B --speculative-config '{\\"method\\":\\"mtp\\",\\"num_speculative_tokens\\":'$N'}'"]
"""
    (launch,) = launches(tmp_path, text)
    assert values(launch.args) == ["Qwen/Qwen3.6-27B", "--speculative-config",
                                   '{"method":"mtp","num_speculative_tokens":2}']


def test_only_the_final_stage_counts(tmp_path: Path) -> None:
    text = """\
FROM vllm/vllm-openai:v0.11.0 AS server
CMD ["--model", "m1"]

FROM server
ENV EXTRA=1

FROM python:3.12 AS tools
CMD ["python", "bench.py"]
"""
    assert launches(tmp_path, text) == []
    inherited = launches(tmp_path, text.rsplit("FROM python", 1)[0])
    assert len(inherited) == 1
    assert values(inherited[0].args) == ["--model", "m1"]
    assert inherited[0].env["EXTRA"].value.value == "1"


def test_entrypoint_resets_an_inherited_cmd(tmp_path: Path) -> None:
    text = """\
FROM vllm/vllm-openai:v0.11.0 AS base
CMD ["--model", "m1"]
FROM base
ENTRYPOINT ["vllm", "serve", "m2"]
"""
    (launch,) = launches(tmp_path, text)
    assert values(launch.argv) == ["vllm", "serve", "m2"]


def test_build_arg_without_default_is_unresolved(tmp_path: Path) -> None:
    text = "ARG TAG\nFROM vllm/vllm-openai:${TAG}\nCMD [\"--model\", \"m\"]\n"
    assert launches(tmp_path, text) == []  # the image is unknown: no entrypoint to assume


def test_escape_directive(tmp_path: Path) -> None:
    text = "# escape=`\nFROM vllm/vllm-openai:v0.11.0\nCMD [\"--model\", `\n     \"m\"]\n"
    (launch,) = launches(tmp_path, text)
    assert values(launch.args) == ["--model", "m"]


def test_instructions_join_continuations_and_skip_comments() -> None:
    source = SourceFile.from_text("FROM x\nRUN a \\\n# note\n  b\nCMD c\n", "Dockerfile")
    found = instructions(source)
    assert [(i.keyword, i.arguments.text, i.line) for i in found] == [("FROM", "x", 1), ("RUN", "a   b", 2), ("CMD", "c", 5)]


def test_unreadable_line_is_malformed(tmp_path: Path) -> None:
    with pytest.raises(Malformed):
        launches(tmp_path, "FROM x\n{not an instruction}\n")


def test_entrypoint_script_copied_into_the_image(tmp_path: Path) -> None:
    (tmp_path / "docker").mkdir()
    (tmp_path / "docker" / "entrypoint.sh").write_text(
        '#!/bin/sh\nset -e\nexec vllm serve "$MODEL" --port "${PORT:-8000}" "$@"\n', encoding="utf-8")
    text = """\
FROM vllm/vllm-openai:v0.11.0
ENV MODEL=Qwen/Qwen3.6-27B
COPY docker/entrypoint.sh /usr/local/bin/
ENTRYPOINT ["/usr/local/bin/entrypoint.sh"]
CMD ["--speculative-config", "{\\"method\\":\\"mtp\\",\\"num_speculative_tokens\\":2}"]
"""
    (launch,) = launches(tmp_path, text)
    assert launch.source.display == "docker/entrypoint.sh"
    assert launch.context == "line 3"
    assert values(launch.args) == ["Qwen/Qwen3.6-27B", "--port", "8000", "--speculative-config",
                                   '{"method":"mtp","num_speculative_tokens":2}']
    assert [hint.spec for hint in launch.version_hints] == ["==0.11.0"]
    assert launch.env["MODEL"].value.value == "Qwen/Qwen3.6-27B"
    assert launch.image is not None and launch.image.value == "vllm/vllm-openai:v0.11.0"
    assert [hint.spec for hint in launch.version_hints] == ["==0.11.0"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.text(alphabet='ab "\\/\n\té\u2028', max_size=8), max_size=4), ascii_only=st.booleans())
def test_exec_form_strings_read_in_runs_map_as_read_a_character_at_a_time(
        monkeypatch: pytest.MonkeyPatch, values: list[str], ascii_only: bool) -> None:
    # the JSON string reader takes the characters between escapes as one piece; with every
    # character a stop it reads one at a time, as it did before: the same words at the same offsets
    import re

    from mtplint.extract import dockerfile

    arguments = SourceFile.from_text('CMD ' + json.dumps(values, ensure_ascii=ascii_only)).whole().slice(4)

    def read() -> object:
        words = dockerfile.exec_form(arguments)
        assert words is not None
        return [(token, mapped.text, list(mapped.offsets)) for token, mapped in words]

    in_runs = read()
    assert [token.value for token, _, _ in in_runs] == values  # type: ignore[attr-defined]
    with monkeypatch.context() as patched:
        patched.setattr(dockerfile, "_JSON_STRING_SPECIAL", re.compile(r"[\s\S]"))
        assert read() == in_runs
