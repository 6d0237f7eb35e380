from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtplint.extract.dotenv import parse_env_file
from mtplint.source import SourceFile, Token


def parse(text: str, dialect: str = "compose") -> dict[str, Token]:
    return dict(parse_env_file(SourceFile.from_text(text, ".env"), dialect=dialect))  # type: ignore[arg-type]


COMPOSE_ENV = """\
# model served by the stack
MODEL=Qwen/Qwen3.6-27B
export VLLM_USE_V1=1
SPEC_CONFIG='{"method":"mtp","num_speculative_tokens":2}'
PORT=8000   # published port
GREETING="say \\"hi\\" to ${MODEL}"
CACHE_DIR=${HOME}/.cache
FALLBACK=${UNSET_VAR:-fallback}
PRICE=5$$
EMPTY=
HF_TOKEN
"""


def test_values_quotes_and_comments() -> None:
    values = parse(COMPOSE_ENV)
    assert values["MODEL"].value == "Qwen/Qwen3.6-27B"
    assert values["VLLM_USE_V1"].value == "1"
    assert values["SPEC_CONFIG"].value == '{"method":"mtp","num_speculative_tokens":2}'
    assert values["PORT"].value == "8000"
    assert values["GREETING"].value == 'say "hi" to Qwen/Qwen3.6-27B'
    assert values["FALLBACK"].value == "fallback"
    assert values["PRICE"].value == "5$"
    assert values["EMPTY"].value == ""
    assert all(values[name].resolved for name in ("MODEL", "SPEC_CONFIG", "GREETING", "FALLBACK", "EMPTY"))


def test_unknown_references_are_unresolved() -> None:
    values = parse(COMPOSE_ENV)
    assert values["CACHE_DIR"].unresolved == ("HOME",)
    assert values["CACHE_DIR"].value == "${HOME}/.cache"
    # a bare name takes its value from the shell that runs compose
    assert values["HF_TOKEN"].unresolved == ("HF_TOKEN",)


def test_value_positions_point_inside_quotes() -> None:
    values = parse(COMPOSE_ENV)
    spec = values["SPEC_CONFIG"].span
    assert spec is not None
    assert (spec.line, spec.column, spec.end_line, spec.end_column) == (4, 14, 4, 57)
    model = values["MODEL"].span
    assert model is not None and (model.line, model.column, model.end_column) == (2, 7, 23)
    port = values["PORT"].span
    assert port is not None and (port.column, port.end_column) == (6, 10)


def test_multiline_double_quoted_value() -> None:
    values = parse('PROMPT="line one\nline two"\nNEXT=1\n')
    assert values["PROMPT"].value == "line one\nline two"
    assert values["NEXT"].value == "1"


def test_later_definition_wins_when_collected_into_a_dict() -> None:
    assert parse("A=1\nA=2\n")["A"].value == "2"


def test_systemd_dialect() -> None:
    text = "; comment\n# comment\nMODEL=Qwen/Qwen3-8B\nARGS=--a \\\n --b\nNOEQUALS\nQ=\"x y\"\nREF=$MODEL\n"
    values = parse(text, "systemd")
    assert values["MODEL"].value == "Qwen/Qwen3-8B"
    assert values["ARGS"].value == "--a  --b"
    assert "NOEQUALS" not in values
    assert values["Q"].value == "x y"
    assert values["REF"].value == "$MODEL"  # systemd does not expand inside EnvironmentFile


_ENV_PIECES = st.sampled_from([
    "A", "B_1", "=", "x", "é", " ", "\t", "#", " #", "\n", "\r\n", "'", '"', "\\", "\\n", "\\$", "$", "$A", "${A}",
    "${A:-d}", "${B-$A}", "$$", "export ", ";", "\\\n",
])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.lists(_ENV_PIECES, max_size=25).map("".join))
def test_values_read_in_runs_are_what_reading_a_character_at_a_time_gives(monkeypatch: pytest.MonkeyPatch,
                                                                            text: str) -> None:
    # the readers add the characters up to the next one they act on in one step; with every
    # character a stop they add one at a time, as before: the same values, offsets and spans
    import re

    from mtplint.extract import dotenv

    source = SourceFile.from_text(text)

    def read() -> object:
        results: list[object] = []
        for dialect in ("compose", "systemd"):
            try:
                results.append(parse_env_file(source, dialect=dialect))  # type: ignore[arg-type]
            except ValueError as error:
                results.append(("error", str(error)))
        return results

    in_runs = read()
    with monkeypatch.context() as patched:
        for name in ("_QUOTED_STOP", "_UNQUOTED_STOP"):
            patched.setattr(dotenv, name, re.compile(r"[\s\S]"))
        assert read() == in_runs
