"""A llama-server launch that repeats another's words and variables takes that launch's parse
(a tree's copies of one command line; each read again at older builds to narrow the version),
with its own spans and objects: what it reports is what parsing it again would."""

from __future__ import annotations

from pathlib import Path

import pytest

from mtplint.engines import llamacpp
from mtplint.engines.llamacpp import LlamaParsed
from mtplint.pipeline import LaunchReport, Options, run

SCRIPT = ("#!/bin/sh\n"
          "exec llama-server -m /models/Qwen3.6-27B-MTP-Q4_K_M.gguf \\\n"
          "  --spec-type draft-mtp,ngram-simple --spec-draft-n-max 2 -np 4 --no-such-flag 1 -c 65536\n")


def _reports(tmp_path: Path, files: dict[str, str]) -> list[LaunchReport]:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return sorted(run([tmp_path], Options(tmp_path)).launches, key=lambda report: report.launch.source.display)


def _seen(parsed: LlamaParsed) -> object:
    """Everything a parse says, spans as (file, line, column)."""
    def where(span: object) -> object:
        return None if span is None else (span.file, span.line, span.column)  # type: ignore[attr-defined]

    return ({dest: (option.value, where(option.span), option.origin, option.flag, option.unresolved)
             for dest, option in parsed.options.items()},
            [(error.message, where(error.span), error.flag, error.kind) for error in parsed.errors],
            parsed.open_ended, parsed.config_files, {name: (where(span), origin)
                                                     for name, (span, origin) in parsed.type_sources.items()})


def test_a_launch_that_repeats_anothers_words_takes_its_parse_with_its_own_spans(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llamacpp, "_SHARED_PARSES", {})
    # the same words on other lines of another file, and the same words with a variable set
    shifted = "#!/bin/sh\n\n\n" + SCRIPT.removeprefix("#!/bin/sh\n")
    with_variable = SCRIPT.replace("exec llama-server", "LLAMA_ARG_CTX_SIZE=4096 exec llama-server")
    # the same value in another variable: another parse
    with_other_variable = SCRIPT.replace("exec llama-server", "LLAMA_ARG_BATCH=4096 exec llama-server")
    files = {"a/serve.sh": SCRIPT, "b/serve.sh": shifted, "c/serve.sh": with_variable,
             "d/serve.sh": with_other_variable}
    shared = _reports(tmp_path / "shared", files)
    cli_parses = 0
    real_parse_cli = llamacpp.LlamaCppEngine._parse_cli

    def counted(*args: object) -> None:
        nonlocal cli_parses
        cli_parses += 1
        real_parse_cli(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(llamacpp.LlamaCppEngine, "_parse_cli", counted)
    monkeypatch.setattr(llamacpp, "_SHARED_PARSES", {})
    again = _reports(tmp_path / "again", {"a/serve.sh": SCRIPT})
    once = cli_parses
    monkeypatch.setattr(llamacpp, "_SHARED_PARSES", {})
    _reports(tmp_path / "twice", {"a/serve.sh": SCRIPT, "b/serve.sh": shifted})
    # the second file's launch is parsed at no build: it takes the first one's parses
    assert cli_parses == 2 * once
    monkeypatch.setattr(llamacpp, "_SHARED_PARSES", {})
    monkeypatch.setattr(llamacpp, "_MAX_SHARED_PARSES", 0)  # nothing shared: every launch parsed on its own
    alone = _reports(tmp_path / "shared", files)
    assert [_seen(report.parsed) for report in shared] == [_seen(report.parsed) for report in alone]
    assert [report.parsed.options["spec_type"].span.line for report in shared] == [3, 5, 3, 3]  # type: ignore[union-attr]
    assert shared[2].parsed.options["ctx_size"].flag == "-c"  # the command line wins over the variable
    assert shared[3].parsed.options["batch"].value == 4096
    assert _seen(again[0].parsed)[1] == _seen(shared[0].parsed)[1]
    # each launch holds its own objects: changing one changes no other
    shared[0].parsed.options["spec_type"].value.append("changed")
    assert "changed" not in shared[1].parsed.options["spec_type"].value
    assert shared[1].parsed.options["spec_type"].value == alone[1].parsed.options["spec_type"].value


def test_words_without_spans_share_no_parse_with_the_same_words_written_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """An image's own entrypoint has words written nowhere: a launch that writes the same words is
    not given their parse, whose options would point nowhere."""
    from mtplint.engines import EngineContext
    from mtplint.extract import FileLoader
    from mtplint.extract.launch import Launch
    from mtplint.source import Issues, SourceFile, Token
    from mtplint.versions import EngineVersion

    monkeypatch.setattr(llamacpp, "_SHARED_PARSES", {})
    words = ["-m", "/models/Qwen3.6-27B-MTP-Q4_K_M.gguf", "--spec-type", "draft-mtp", "-np", "2"]
    text = "llama-server " + " ".join(words) + "\n"
    source = SourceFile("serve.sh", "serve.sh", text)
    written = []
    for word in words:
        start = text.index(" " + word + " " if word != "2" else " 2\n") + 1
        written.append(Token(word, source.span(start, start + len(word))))
    version = EngineVersion("llama.cpp", "b10470", True, "config")
    context = EngineContext(FileLoader("."), Issues())
    unplaced = Launch("llama.cpp", "llama-server", source, None, [], [Token(word, None) for word in words],
                      base_dir=".")
    placed = Launch("llama.cpp", "llama-server", source, None, [], written, base_dir=".")
    assert llamacpp.ENGINE.parse(unplaced, version, context).options["n_parallel"].span is None
    parsed = llamacpp.ENGINE.parse(placed, version, context)
    assert parsed.options["n_parallel"].span is written[5].span
    assert parsed.type_sources["draft-mtp"][0] is written[3].span
    # and the written launch's parse, shared, points at each launch's own words
    again = Launch("llama.cpp", "llama-server", source, None, [], [Token(t.value, t.span) for t in written],
                   base_dir=".")
    assert llamacpp.ENGINE.parse(again, version, context).options["n_parallel"].span is written[5].span
