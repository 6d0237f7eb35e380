"""The fix engine (issue 4): which fixes apply, one pass of non-overlapping edits, re-lint in memory
to a fixed point, fixes that break the file or add a finding dropped, and the ``check`` options
``--fix``, ``--unsafe-fixes``, ``--diff``, ``--show-fixes``, ``--fix-only``, ``--exit-non-zero-on-fix``.

The per-rule fixes are written elsewhere; these tests give MTP102 (selected alone) predicates with
fixes of known shape so that the engine is tested on its own.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mtplint.checks import Edit, Finding, Fix, RuleContext
from mtplint.fix.apply import _back_mapper, _conflicts, conform_newlines
from mtplint.source import SourceFile
from tests.conftest import run_cli

Predicate = Callable[[RuleContext], Iterator[Finding]]

SERVE = (
    "#!/usr/bin/env bash\n"
    "# the draft model shares the tokenizer\n"
    "vllm serve meta-llama/Llama-3.1-8B-Instruct \\\n"
    "  --speculative-config '{\"method\": \"eagle3\", \"model\": \"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\"}' \\\n"
    "  --max-num-seqs 16\n"
)
PIN = ["--engine-version", "vllm=0.27.1"]


def _args_text(ctx: RuleContext) -> list[str]:
    return [str(token.value) for token in ctx.report.launch.args]


def _after_last_arg(ctx: RuleContext, text: str) -> Edit:
    last = ctx.report.launch.args[-1]
    source = ctx.source_for(last.span)
    assert source is not None and last.span is not None
    return Edit(source.span(last.span.end), text)


def adds_flags(*flags: str, applicability: str = "safe") -> Predicate:
    """A rule that wants each flag present, with a fix that appends the missing one."""

    def check(ctx: RuleContext) -> Iterator[Finding]:
        present = _args_text(ctx)
        for flag in flags:
            if flag not in present:
                fix = Fix(applicability, f"Add `{flag}`", [_after_last_arg(ctx, f" {flag}")])
                yield ctx.report_finding(f"{flag} is missing", ctx.launch_span, fix=fix)

    return check


@pytest.fixture
def rule(monkeypatch: pytest.MonkeyPatch) -> Callable[[Predicate], None]:
    def install(predicate: Predicate) -> None:
        monkeypatch.setattr("mtplint.checks.mtp102.check", predicate)

    return install


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8", newline="")
    return tmp_path


def _check(tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli(["check", "--isolated", "--select", "MTP102", *PIN, *extra, "."], cwd=tmp_path)


# --- which fixes apply -----------------------------------------------------------------------


def test_fix_applies_safe_fixes_and_exits_zero_when_nothing_remains(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    rule(adds_flags("--enable-chunked-prefill"))
    _project(tmp_path, {"serve.sh": SERVE})
    code, out, _ = _check(tmp_path, "--fix")
    assert (tmp_path / "serve.sh").read_text() == SERVE.replace("16\n", "16 --enable-chunked-prefill\n")
    assert code == 0
    assert "Found 1 finding (1 fixed, 0 remaining)." in out


def test_unsafe_fixes_need_the_option_and_are_counted_as_hidden(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    rule(adds_flags("--no-enable-prefix-caching", applicability="unsafe"))
    _project(tmp_path, {"serve.sh": SERVE})
    code, out, _ = _check(tmp_path)
    assert code == 1
    assert "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option)." in out
    code, out, _ = _check(tmp_path, "--fix")
    assert (tmp_path / "serve.sh").read_text() == SERVE, "an unsafe fix applied without --unsafe-fixes"
    assert code == 1
    code, out, _ = _check(tmp_path, "--fix", "--unsafe-fixes")
    assert code == 0
    assert (tmp_path / "serve.sh").read_text().endswith("16 --no-enable-prefix-caching\n")


def test_summary_counts_safe_fixes_and_hidden_unsafe_ones(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    def mixed(ctx: RuleContext) -> Iterator[Finding]:
        yield from adds_flags("--a-flag")(ctx)
        yield from adds_flags("--b-flag", "--c-flag", applicability="unsafe")(ctx)

    rule(mixed)
    _project(tmp_path, {"serve.sh": SERVE})
    _, out, _ = _check(tmp_path, "--output-format", "concise")
    assert "[*] 1 fixable with the `--fix` option (2 hidden fixes can be enabled with the `--unsafe-fixes` option)." in out
    _, out, _ = _check(tmp_path, "--output-format", "concise", "--unsafe-fixes")
    assert "[*] 3 fixable with the `--fix` option." in out


def test_display_only_fixes_never_apply(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    rule(adds_flags("--enable-chunked-prefill", applicability="display-only"))
    _project(tmp_path, {"serve.sh": SERVE})
    code, _, _ = _check(tmp_path, "--fix", "--unsafe-fixes")
    assert code == 1
    assert (tmp_path / "serve.sh").read_text() == SERVE
    code, out, _ = _check(tmp_path, "--diff", "--unsafe-fixes")
    assert (code, out) == (0, "")


# --- one pass, then a fixed point ------------------------------------------------------------


def test_fixes_at_the_same_point_are_applied_over_successive_passes(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    rule(adds_flags("--enable-chunked-prefill", "--max-model-len=8192", "--seed=1"))
    _project(tmp_path, {"serve.sh": SERVE})
    code, out, _ = _check(tmp_path, "--fix", "--show-fixes")
    assert code == 0
    assert (tmp_path / "serve.sh").read_text() == SERVE.replace(
        "16\n", "16 --enable-chunked-prefill --max-model-len=8192 --seed=1\n")
    assert "3 × MTP102 (prefix-caching-with-mtp)" in out


def test_non_overlapping_fixes_in_two_files_are_applied_together(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    rule(adds_flags("--enable-chunked-prefill"))
    _project(tmp_path, {"serve.sh": SERVE, "other.sh": SERVE.replace("16", "32")})
    code, _, _ = _check(tmp_path, "--fix")
    assert code == 0
    assert (tmp_path / "serve.sh").read_text().endswith("16 --enable-chunked-prefill\n")
    assert (tmp_path / "other.sh").read_text().endswith("32 --enable-chunked-prefill\n")


def test_a_fix_is_all_its_edits_or_none(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    """Two edits in one fix; the second overlaps another fix's edit, so the whole fix waits a pass."""

    def check(ctx: RuleContext) -> Iterator[Finding]:
        args = ctx.report.launch.args
        source = ctx.source_for(args[-1].span)
        assert source is not None
        present = _args_text(ctx)
        if "--seed=1" not in present:
            yield ctx.report_finding("seed", fix=Fix("safe", "Add seed", [_after_last_arg(ctx, " --seed=1")]))
        if "--enforce-eager" not in present:
            first = args[0].span
            assert first is not None
            both = [Edit(source.span(first.start), "--enforce-eager "), _after_last_arg(ctx, " --trust-remote-code")]
            # reported further down than "seed", so "seed" is taken first and this one waits
            yield ctx.report_finding("eager", args[-1].span, fix=Fix("safe", "Add eager", both))

    rule(check)
    _project(tmp_path, {"serve.sh": SERVE})
    code, _, err = _check(tmp_path, "--fix")
    assert code == 0, err
    text = (tmp_path / "serve.sh").read_text()
    assert "vllm serve --enforce-eager meta-llama" in text
    assert text.endswith("16 --seed=1 --trust-remote-code\n")


def test_a_fix_that_breaks_the_file_is_dropped_and_the_others_stay(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    compose = (
        "services:\n"
        "  vllm:\n"
        "    image: vllm/vllm-openai:v0.27.1\n"
        "    # keep this comment\n"
        "    command: >\n"
        "      meta-llama/Llama-3.1-8B-Instruct\n"
        "      --speculative-config '{\"method\": \"eagle3\", \"model\": \"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\"}'\n"
        "      --max-num-seqs 16\n"
    )

    def check(ctx: RuleContext) -> Iterator[Finding]:
        present = _args_text(ctx)
        if "--seed=1" not in present:
            yield ctx.report_finding("seed", fix=Fix("safe", "Add seed", [_after_last_arg(ctx, " --seed=1")]))
        source = ctx.report.launch.source
        yield ctx.report_finding("break", fix=Fix("safe", "Break the YAML", [Edit(source.span(0), "[: :\n")]))

    rule(check)
    _project(tmp_path, {"compose.yaml": compose})
    code, out, err = _check(tmp_path, "--fix")
    assert (tmp_path / "compose.yaml").read_text() == compose.replace("16\n", "16 --seed=1\n")
    assert "fix not applied (Break the YAML): the result no longer parses" in err
    assert code == 1  # the "break" finding remains
    assert "MTP001" not in out


def test_a_fix_that_adds_a_new_finding_is_dropped(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    def check(ctx: RuleContext) -> Iterator[Finding]:
        present = _args_text(ctx)
        if "--enforce-eager" in present:
            yield ctx.report_finding("--enforce-eager makes decoding slow")
        elif "--seed=1" not in present:
            yield ctx.report_finding("seed", fix=Fix("safe", "Add seed", [_after_last_arg(ctx, " --seed=1 --enforce-eager")]))

    rule(check)
    _project(tmp_path, {"serve.sh": SERVE})
    code, _, err = _check(tmp_path, "--fix")
    assert (tmp_path / "serve.sh").read_text() == SERVE
    assert "MTP102: fix not applied (Add seed): the result has a new finding (MTP102 in serve.sh: --enforce-eager" in err
    assert code == 1


def test_a_new_finding_that_this_run_fixes_next_does_not_drop_the_fix(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    """The follow-up is applied on the next pass; when its fix is not applicable in this run
    (unsafe without ``--unsafe-fixes``) the first fix is dropped as before."""

    def check(ctx: RuleContext) -> Iterator[Finding]:
        args = ctx.report.launch.args
        present = _args_text(ctx)
        if "--enforce-eager" in present:
            eager = args[present.index("--enforce-eager")].span
            source = ctx.source_for(eager)
            assert eager is not None and source is not None
            fix = Fix("unsafe" if "--seed=2" in present else "safe", "Drop --enforce-eager",
                      [Edit(source.span(eager.start - 1, eager.end), "")])
            yield ctx.report_finding("--enforce-eager makes decoding slow", eager, fix=fix)
        elif not {"--seed=1", "--seed=2"} & set(present):
            seed = "--seed=2" if "32" in present else "--seed=1"
            yield ctx.report_finding("seed", fix=Fix("safe", "Add seed", [_after_last_arg(ctx, f" {seed} --enforce-eager")]))

    rule(check)
    _project(tmp_path, {"serve.sh": SERVE, "other.sh": SERVE.replace("16", "32")})
    code, _, err = _check(tmp_path, "--fix")
    assert (tmp_path / "serve.sh").read_text() == SERVE.replace("16\n", "16 --seed=1\n"), err
    assert "serve.sh" not in err
    # other.sh: the follow-up fix is unsafe, so "Add seed" would leave a new finding behind
    assert (tmp_path / "other.sh").read_text() == SERVE.replace("16", "32")
    assert "other.sh:3:1: MTP102: fix not applied (Add seed): the result has a new finding" in err
    assert code == 1


def test_chained_safe_fixes_of_real_rules_are_all_applied(tmp_path: Path) -> None:
    """MTP106's merge brings the JSON's deprecated alias into play (vLLM ignored that JSON while
    dotted keys were given): MTP401 fixes it on the next pass instead of the merge being dropped."""
    script = tmp_path / "serve.sh"
    script.write_text("#!/usr/bin/env bash\n"
                      "vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct \\\n"
                      "  --speculative-config '{\"method\": \"qwen3_next_mtp\", \"num_speculative_tokens\": 2}' \\\n"
                      "  --speculative-config.num_speculative_tokens 3\n")
    code, _, err = run_cli(["check", "--isolated", "--select", "MTP106,MTP401", "--engine-version", "vllm=0.30.0",
                            "--fix", "."], cwd=tmp_path)
    assert code == 0, err
    assert "fix not applied" not in err
    assert script.read_text() == ("#!/usr/bin/env bash\n"
                                  "vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct \\\n"
                                  "  --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 3}'\n")


def test_a_fix_that_does_not_resolve_its_finding_is_not_written(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    """Issue #19: "fix not applied ... it would be applied again" used to be written all the same,
    one more copy per run. Now the file keeps its bytes, the fix is reported and not counted."""
    def check(ctx: RuleContext) -> Iterator[Finding]:
        yield ctx.report_finding("never satisfied", fix=Fix("safe", "Add a comment", [_after_last_arg(ctx, " # more")]))

    rule(check)
    _project(tmp_path, {"serve.sh": SERVE})
    for _ in range(2):
        _, out, err = _check(tmp_path, "--fix")
        assert (tmp_path / "serve.sh").read_text() == SERVE
        assert "fix not applied (Add a comment): applying it does not resolve the finding" in err
        assert "fixable" not in out
    _, out, _ = _check(tmp_path)
    assert "fixable" not in out and "[*]" not in out


def test_a_fix_offered_again_after_it_was_applied_is_not_written(tmp_path: Path,
                                                                rule: Callable[[Predicate], None]) -> None:
    """A fix whose finding comes back in other words (here: the text's length changes its parity)
    passes the check of its own pass, and is offered again on the next: the fixing starts over
    from the files as read without it, so nothing it wrote is kept."""
    def check(ctx: RuleContext) -> Iterator[Finding]:
        parity = "even" if len(ctx.report.launch.source.text) % 2 == 0 else "odd"
        yield ctx.report_finding(f"length is {parity}", fix=Fix("safe", "Pad", [_after_last_arg(ctx, " ")]))

    rule(check)
    _project(tmp_path, {"serve.sh": SERVE})
    code, out, err = _check(tmp_path, "--fix")
    assert (tmp_path / "serve.sh").read_text() == SERVE
    assert "fix not applied (Pad): applying it does not resolve the finding (it would be applied again); " \
        "not written" in err
    assert "fixed" not in out and code == 1


def test_the_same_edit_offered_by_two_findings_is_applied_once(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    def check(ctx: RuleContext) -> Iterator[Finding]:
        if "--seed=1" not in _args_text(ctx):
            for reason in ("first", "second"):
                yield ctx.report_finding(reason, fix=Fix("safe", "Add seed", [_after_last_arg(ctx, " --seed=1")]))

    rule(check)
    _project(tmp_path, {"serve.sh": SERVE})
    code, _, _ = _check(tmp_path, "--fix")
    assert code == 0
    assert (tmp_path / "serve.sh").read_text() == SERVE.replace("16\n", "16 --seed=1\n")


def test_inserted_lines_follow_the_files_line_ending(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    def check(ctx: RuleContext) -> Iterator[Finding]:
        if "VLLM_USE_V1" not in ctx.report.launch.env:
            source = ctx.report.launch.source
            command = ctx.report.launch.span
            assert command is not None
            at = source.line_start(command.line)
            yield ctx.report_finding("env", fix=Fix("safe", "Export", [Edit(source.span(at), "export VLLM_USE_V1=1\n")]))

    rule(check)
    crlf = SERVE.replace("\n", "\r\n")
    _project(tmp_path, {"serve.sh": crlf})
    code, _, err = _check(tmp_path, "--fix")
    assert code == 0, err
    data = (tmp_path / "serve.sh").read_bytes()
    assert data == crlf.replace("vllm serve", "export VLLM_USE_V1=1\r\nvllm serve", 1).encode()


# --- the options -----------------------------------------------------------------------------


def test_diff_prints_a_unified_diff_writes_nothing_and_exits_one(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    rule(adds_flags("--enable-chunked-prefill"))
    _project(tmp_path, {"serve.sh": SERVE})
    code, out, err = _check(tmp_path, "--diff")
    assert code == 1
    assert (tmp_path / "serve.sh").read_text() == SERVE
    assert out.splitlines()[:2] == ["--- serve.sh", "+++ serve.sh"]
    assert "-  --max-num-seqs 16\n+  --max-num-seqs 16 --enable-chunked-prefill\n" in out
    assert "Would fix 1 finding." in err
    code, out, _ = _check(tmp_path, "--fix")
    code, out, _ = _check(tmp_path, "--diff")
    assert (code, out) == (0, "")


def test_diff_marks_a_missing_final_newline(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    rule(adds_flags("--enable-chunked-prefill"))
    _project(tmp_path, {"serve.sh": SERVE.rstrip("\n")})
    _, out, _ = _check(tmp_path, "--diff")
    assert out.endswith("+  --max-num-seqs 16 --enable-chunked-prefill\n\\ No newline at end of file\n")


def test_fix_only_reports_nothing_else_and_exits_zero(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    def check(ctx: RuleContext) -> Iterator[Finding]:
        yield from adds_flags("--enable-chunked-prefill")(ctx)
        yield ctx.report_finding("not fixable")

    rule(check)
    _project(tmp_path, {"serve.sh": SERVE})
    code, out, _ = _check(tmp_path, "--fix-only")
    assert (code, out) == (0, "Fixed 1 finding.\n")
    assert (tmp_path / "serve.sh").read_text().endswith("16 --enable-chunked-prefill\n")
    code, out, _ = _check(tmp_path, "--fix-only")
    assert (code, out) == (0, "No findings fixed.\n")


def test_exit_non_zero_on_fix(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    rule(adds_flags("--enable-chunked-prefill"))
    _project(tmp_path, {"serve.sh": SERVE})
    code, _, _ = _check(tmp_path, "--fix", "--exit-non-zero-on-fix")
    assert code == 1
    code, _, _ = _check(tmp_path, "--fix", "--exit-non-zero-on-fix")
    assert code == 0


def test_show_fixes_without_fix_lists_what_is_available(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    def check(ctx: RuleContext) -> Iterator[Finding]:
        yield from adds_flags("--a-flag")(ctx)
        yield from adds_flags("--b-flag", applicability="unsafe")(ctx)
        yield from adds_flags("--c-flag", applicability="display-only")(ctx)

    rule(check)
    _project(tmp_path, {"serve.sh": SERVE})
    _, out, _ = _check(tmp_path, "--show-fixes", "--output-format", "concise")
    assert "MTP102 Add `--a-flag` (applied by --fix)" in out
    assert "MTP102 Add `--b-flag` (unsafe: needs --unsafe-fixes)" in out
    assert "MTP102 Add `--c-flag` (display only: not applied)" in out


def test_json_output_after_fix_lists_what_remains(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    def check(ctx: RuleContext) -> Iterator[Finding]:
        yield from adds_flags("--a-flag")(ctx)
        yield ctx.report_finding("not fixable")

    rule(check)
    _project(tmp_path, {"serve.sh": SERVE})
    code, out, _ = _check(tmp_path, "--fix", "--output-format", "json")
    assert code == 1
    assert [f["message"] for f in json.loads(out)] == ["not fixable"]


# --- pieces ----------------------------------------------------------------------------------


def _edit(source: SourceFile, start: int, end: int, content: str) -> Edit:
    return Edit(source.span(start, end), content)


def test_back_mapping_through_edits() -> None:
    source = SourceFile.from_text("abcdefghij", "f")
    # "ab" + "XYZ" (replaces cd) + "efg" + "" (deletes h) + "ij" + "!" (insert at end)
    mapped = _back_mapper([_edit(source, 2, 4, "XYZ"), _edit(source, 7, 8, ""), _edit(source, 10, 10, "!")])
    new = "abXYZefgij!"
    assert [mapped(new.index(c)) for c in "abefgij"] == [0, 1, 4, 5, 6, 8, 9]
    assert mapped(new.index("Y")) == 2
    assert mapped(new.index("!")) == 10


def test_touching_edits_conflict_and_distant_ones_do_not() -> None:
    source = SourceFile.from_text("abcdefghij", "f")
    taken = [_edit(source, 2, 4, "X")]
    assert _conflicts(_edit(source, 4, 4, "Y"), taken)
    assert _conflicts(_edit(source, 3, 6, "Y"), taken)
    assert not _conflicts(_edit(source, 5, 5, "Y"), taken)
    assert not _conflicts(Edit(SourceFile.from_text("abcdefghij", "g").span(2, 4), "Y"), taken)


def test_conform_newlines() -> None:
    assert conform_newlines("a\nb\r\nc", "\r\n") == "a\r\nb\r\nc"
    assert conform_newlines("a\r\nb\n", "\n") == "a\nb\n"
    assert conform_newlines(" --flag", "\r\n") == " --flag"


def test_fixes_that_never_settle_stop_after_the_last_pass_with_a_warning(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    def check(ctx: RuleContext) -> Iterator[Finding]:
        count = len(ctx.report.launch.args)
        # each pass resolves its finding and brings the next one (a fix that leaves its own
        # finding in place is refused instead: see the test above)
        yield ctx.report_finding(f"wants more than {count} arguments",
                                 fix=Fix("safe", "Add one", [_after_last_arg(ctx, f" --n{count}")]))

    rule(check)
    _project(tmp_path, {"serve.sh": SERVE})
    code, _, err = _check(tmp_path, "--fix")
    assert code == 1
    assert "fixes did not settle after 10 passes" in err
    assert (tmp_path / "serve.sh").read_text().count(" --n") == 10



def _seed_and_context_rule(bad_when: Callable[[str], bool]) -> Predicate:
    """A rule with two safe fixes on a launch: add ``--seed=1``, and cap the context -- whose fix
    also adds ``--enforce-eager`` (a new finding of its own: a bad fix) where ``bad_when`` says so
    of the launch's arguments."""

    def check(ctx: RuleContext) -> Iterator[Finding]:
        args = ctx.report.launch.args
        present = _args_text(ctx)
        first = args[0].span
        source = ctx.source_for(first)
        assert first is not None and source is not None
        if "--seed=1" not in present:
            yield ctx.report_finding("seed", fix=Fix("safe", "Add seed", [Edit(source.span(first.start), "--seed=1 ")]))
        if "--enforce-eager" in present:
            yield ctx.report_finding("--enforce-eager makes decoding slow")
        elif "--max-model-len=4096" not in present:
            eager = " --enforce-eager" if bad_when(present) else ""
            fix = Fix("safe", "Cap the context", [_after_last_arg(ctx, " --max-model-len=4096" + eager)])
            yield ctx.report_finding("context", fix=fix)

    return check

def test_one_bad_fix_among_good_ones_is_found_one_at_a_time(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    """Together the pass adds a finding; one at a time, the first fix is kept and the second (which
    adds the finding, at the very spot of the finding it fixes) is dropped."""

    rule(_seed_and_context_rule(lambda present: True))
    _project(tmp_path, {"serve.sh": SERVE})
    code, _, err = _check(tmp_path, "--fix")
    assert code == 1
    assert (tmp_path / "serve.sh").read_text() == SERVE.replace("serve meta-llama", "serve --seed=1 meta-llama")
    assert "fix not applied (Cap the context): the result has a new finding" in err


def test_a_fix_whose_edits_overlap_each_other_is_reported_not_applied(tmp_path: Path, rule: Callable[[Predicate], None]) -> None:
    def check(ctx: RuleContext) -> Iterator[Finding]:
        last = ctx.report.launch.args[-1].span
        source = ctx.source_for(last)
        assert last is not None and source is not None
        edits = [Edit(source.span(last.start, last.end), "32"), Edit(source.span(last.start + 1, last.end + 1), "")]
        yield ctx.report_finding("bad", fix=Fix("safe", "Broken", edits))

    rule(check)
    _project(tmp_path, {"serve.sh": SERVE})
    code, _, err = _check(tmp_path, "--fix")
    assert code == 1
    assert (tmp_path / "serve.sh").read_text() == SERVE
    assert err.count("fix not applied (Broken): its edits overlap each other") == 1


def test_a_fix_that_only_brings_an_info_note_is_kept(tmp_path: Path) -> None:
    """MTP113's fix turns speculation on; the MTP003 note it brings ("no GPU identity") is not damage."""
    script = tmp_path / "serve.sh"
    script.write_text("#!/bin/sh\nexec llama-server -m /models/Qwen3-8B-Q4_K_M.gguf \\\n"
                      "  -md /models/Qwen3-0.6B-Q8_0.gguf -np 1\n")
    code, _, err = run_cli(["check", "--isolated", "--engine-version", "llama.cpp=b9500", "--fix", "."], cwd=tmp_path)
    assert code == 0, err
    assert script.read_text().endswith("-np 1 \\\n  --spec-type draft-simple\n")


def test_a_bad_fix_among_many_files_costs_lints_of_what_changed_not_of_the_tree(
        tmp_path: Path, rule: Callable[[Predicate], None], monkeypatch: pytest.MonkeyPatch) -> None:
    """Each try of a fix re-lints the files it changes, not the whole project; and when the pass
    is refused, the fixes that cannot have caused the new finding are kept together, so one bad
    fix among n costs a few tries, not n (each of the whole tree)."""
    import mtplint.analysis
    import mtplint.pipeline

    def check(ctx: RuleContext) -> Iterator[Finding]:
        present = _args_text(ctx)
        if "--enforce-eager" in present:
            yield ctx.report_finding("--enforce-eager makes decoding slow")
        elif "--seed=1" not in present:
            added = " --seed=1 --enforce-eager" if "32" in present else " --seed=1"
            yield ctx.report_finding("seed", fix=Fix("safe", "Add seed", [_after_last_arg(ctx, added)]))

    extracted: list[str] = []
    real_extract = mtplint.pipeline.extract_file

    def counting_extract(candidate: Any, *args: Any) -> Any:
        extracted.append(Path(candidate.path).name)
        return real_extract(candidate, *args)

    monkeypatch.setattr(mtplint.pipeline, "extract_file", counting_extract)
    monkeypatch.setattr(mtplint.analysis, "extract_file", counting_extract)  # every run lints file by file
    rule(check)
    files = 40
    _project(tmp_path, {f"serve-{number:02}.sh": SERVE for number in range(files)})
    _project(tmp_path, {"serve-bad.sh": SERVE.replace("16", "32")})
    code, _, err = _check(tmp_path, "--fix")
    assert code == 1
    for number in range(files):
        assert (tmp_path / f"serve-{number:02}.sh").read_text() == SERVE.replace("16\n", "16 --seed=1\n")
    assert (tmp_path / "serve-bad.sh").read_text() == SERVE.replace("16", "32")
    assert "serve-bad.sh:3:1: MTP102: fix not applied (Add seed): the result has a new finding" in err
    assert err.count("fix not applied") == 1
    # the first lint reads each file once; the refused pass, the good fixes together and the bad
    # one alone each read the files they change (one at a time over the whole tree: 41 x 41)
    assert len(extracted) <= 4 * (files + 1), len(extracted)
    assert max(extracted.count(name) for name in set(extracted)) <= 4


def test_several_bad_fixes_among_many_are_each_dropped_and_the_good_ones_kept(
        tmp_path: Path, rule: Callable[[Predicate], None], monkeypatch: pytest.MonkeyPatch) -> None:
    """Bad fixes in several files, and files where a good and a bad fix sit together: each bad
    fix is found (and only those), in few lints of the project."""
    from mtplint.fix import relint

    check = _seed_and_context_rule(lambda present: "32" in present)
    linters: list[relint.ProjectLinter] = []
    real_init = relint.ProjectLinter.__init__

    def noting_init(self: relint.ProjectLinter, *args: Any) -> None:
        real_init(self, *args)
        linters.append(self)

    monkeypatch.setattr(relint.ProjectLinter, "__init__", noting_init)
    rule(check)
    files = 64
    bad = {5, 23, 24, 50}
    _project(tmp_path, {f"serve-{number:02}.sh": SERVE.replace("16", "32" if number in bad else "16")
                        for number in range(files)})
    code, _, err = _check(tmp_path, "--fix")
    assert code == 1
    for number in range(files):
        text = (tmp_path / f"serve-{number:02}.sh").read_text()
        assert text.startswith("#!/usr/bin/env bash\n# the draft model shares the tokenizer\nvllm serve --seed=1 ")
        assert text.endswith("--max-num-seqs 32\n" if number in bad else "--max-num-seqs 16 --max-model-len=4096\n")
    assert err.count("fix not applied (Cap the context): the result has a new finding") == len(bad)
    assert err.count("fix not applied") == len(bad)
    # a lint for the first read, the pass, the good part, then per bad file its pair and each half
    (linter,) = linters
    assert linter.runs <= 2 + 1 + 3 * len(bad) + 1, linter.runs
