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
        patched.setattr(dotenv, "_first_of", lambda text, characters, start, end: start)
        assert read() == in_runs


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="ab$\\ #\t\n", max_size=30), characters=st.sampled_from(["\\$", "$", "#"]),
       start=st.integers(0, 35), end=st.integers(0, 35))
def test_the_next_stop_is_where_a_character_class_search_finds_it(text: str, characters: str, start: int,
                                                                  end: int) -> None:
    import re

    from mtplint.extract.dotenv import _first_of

    found = re.compile(f"[{re.escape(characters)}]").search(text, start, end)
    assert _first_of(text, characters, start, end) == (end if found is None else found.start())


@settings(max_examples=300, deadline=None)
@given(prefix=st.sampled_from(["", "export", "export ", "export \t ", "exportA ", "export\t"]),
       key=st.sampled_from(["A", "export", "exportB", "B.c-d"]), separator=st.sampled_from(["=", " = ", ":", " "]),
       value=st.text(alphabet="ab #\t\r", max_size=12))
def test_export_and_inline_comments_read_as_their_patterns_say(prefix: str, key: str, separator: str,
                                                              value: str) -> None:
    """``export`` followed by blanks is dropped before the key; an unquoted value ends where a blank
    and a ``#`` start a comment, or is empty when it starts with ``#`` (compose-go's dotenv)."""
    import re

    line = prefix + key + separator + value
    export = re.match(r"export[ \t]+", line)
    rest = line[export.end():] if export else line
    pairs = [(name, token.value) for name, token in parse_env_file(SourceFile.from_text(line))]
    if re.match(r"export[ \t]+", rest) is None:  # (else reading ``rest`` drops one more ``export``)
        assert pairs == [(name, token.value) for name, token in parse_env_file(SourceFile.from_text(rest))]
    if pairs and separator.strip() and re.match(r"export[ \t]", key + separator) is None:
        written = value.lstrip(" \t")
        comment = re.search(r"[ \t]#", written)
        end = comment.start() if comment else 0 if written.startswith("#") else len(written)
        assert pairs[-1][1] == written[:end].rstrip(" \t\r")


def test_a_carriage_return_after_export_is_a_blank_as_in_compose_go() -> None:
    """compose-go trims every blank of its ``isSpace`` after ``export`` (dotenv/parser.go,
    ``locateKeyName``), a lone carriage return among them: ``export \\ra`` is the bare key ``a``, as
    ``\\ra`` is (found by the property test above)."""
    for text in ("export \ra", "export\t\ra", "\ra"):
        assert [(name, token.value) for name, token in parse_env_file(SourceFile.from_text(text))] == [("a", "${a}")]
