"""SGLang engine model: argparse emulation, --config merging, version-dependent behaviour."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mtplint.catalogs import SHIPPED
from mtplint.engines import EngineContext, Parsed
from mtplint.engines.sglang import ENGINE, auto_mem_fraction, load_table
from mtplint.extract import FileLoader
from mtplint.extract.launch import KwArg, Launch
from mtplint.hardware import Hardware
from mtplint.source import EnvEntry, Issues, SourceFile, Token
from mtplint.versions import EngineVersion

Inspect = Callable[..., dict[str, Any]]


def make_launch(argv: list[str], tmp_path: Path, *, entry: str = "python -m sglang.launch_server",
                env: dict[str, str] | None = None) -> Launch:
    """A launch whose tokens sit on one line of a fake script, so spans are checkable."""
    line = " ".join(argv)
    source = SourceFile.from_text(line + "\n", "serve.sh", tmp_path / "serve.sh")
    tokens, offset = [], 0
    for word in argv:
        start = line.index(word, offset)
        tokens.append(Token(word, source.span(start, start + len(word))))
        offset = start + len(word)
    environment = {name: EnvEntry(name, Token(value)) for name, value in (env or {}).items()}
    return Launch("sglang", entry, source, None, [], tokens, env=environment, base_dir=tmp_path)


def parse(argv: list[str], version: str, tmp_path: Path, **kwargs: Any) -> Parsed:
    context = EngineContext(FileLoader(tmp_path), Issues())
    return ENGINE.parse(make_launch(argv, tmp_path, **kwargs), EngineVersion("sglang", version, True, "config"), context)


def messages(parsed: Parsed) -> list[str]:
    return [error.message for error in parsed.errors]


MODEL = ["--model-path", "Qwen/Qwen3.6-27B"]


# --- abbreviations, aliases, spelling ---------------------------------------------------------------

def test_unique_prefix_is_accepted_and_keeps_the_written_flag(tmp_path: Path) -> None:
    parsed = parse([*MODEL, "--speculative-algo", "NEXTN", "--tp", "2"], "0.5.9", tmp_path)
    assert parsed.errors == []
    assert parsed.options["speculative_algorithm"].value == "NEXTN"
    assert parsed.options["speculative_algorithm"].flag == "--speculative-algo"
    # --tp is only a prefix of --tp-size; the dest --tensor-parallel-size is copied to tp_size
    assert parsed.options["tp_size"].value == 2


def test_ambiguous_prefix_lists_candidates_in_registration_order(tmp_path: Path) -> None:
    parsed = parse([*MODEL, "--speculative-num", "3"], "0.5.9", tmp_path)
    assert messages(parsed) == [
        "ambiguous option: --speculative-num could match --speculative-num-steps, --speculative-num-draft-tokens"]
    error = parsed.errors[0]
    assert error.span is not None and (error.span.line, error.span.column) == (1, 31)


def test_equals_form_and_last_flag_wins(tmp_path: Path) -> None:
    parsed = parse([*MODEL, "--mem-fraction-static=0.7", "--mem-fraction-static", "0.85"], "0.5.23", tmp_path)
    option = parsed.options["mem_fraction_static"]
    assert option.value == 0.85
    assert option.span is not None and option.span.column == 79


def test_underscore_spelling_is_unrecognized(tmp_path: Path) -> None:
    parsed = parse([*MODEL, "--speculative_num_steps", "3"], "0.5.23", tmp_path)
    assert messages(parsed) == ["unrecognized arguments: --speculative_num_steps 3"]


def test_type_conversion_error_uses_argparse_wording(tmp_path: Path) -> None:
    parsed = parse([*MODEL, "--speculative-num-steps", "three"], "0.5.9", tmp_path)
    assert messages(parsed) == ["argument --speculative-num-steps: invalid int value: 'three'"]


def test_store_true_rejects_explicit_value(tmp_path: Path) -> None:
    parsed = parse([*MODEL, "--disable-radix-cache=true"], "0.5.9", tmp_path)
    assert messages(parsed) == ["argument --disable-radix-cache: ignored explicit argument 'true'"]


def test_missing_model_path_is_required(tmp_path: Path) -> None:
    parsed = parse(["--speculative-algorithm", "EAGLE"], "0.5.9", tmp_path)
    assert messages(parsed) == ["the following arguments are required: --model-path/--model"]


def test_splat_makes_the_launch_open_ended(tmp_path: Path) -> None:
    launch = make_launch([*MODEL], tmp_path)
    launch.args.append(Token("$@", None, ("@",), splat=True))
    parsed = ENGINE.parse(launch, EngineVersion("sglang", "0.5.9", True, "config"),
                          EngineContext(FileLoader(tmp_path), Issues()))
    assert parsed.open_ended and parsed.errors == []


def test_unresolved_value_is_kept_not_guessed(tmp_path: Path) -> None:
    launch = make_launch([*MODEL, "--speculative-num-steps", "X"], tmp_path)
    launch.args[-1] = Token("${STEPS}", None, ("STEPS",))
    parsed = ENGINE.parse(launch, EngineVersion("sglang", "0.5.9", True, "config"),
                          EngineContext(FileLoader(tmp_path), Issues()))
    option = parsed.options["speculative_num_steps"]
    assert option.unresolved == ("STEPS",) and parsed.errors == []


# --- version-dependent flag sets ------------------------------------------------------------------

def test_algorithm_choices_are_case_sensitive_until_removed(tmp_path: Path) -> None:
    old = parse([*MODEL, "--speculative-algorithm", "nextn"], "0.5.9", tmp_path)
    assert messages(old) == ["argument --speculative-algorithm: invalid choice: 'nextn' "
                             "(choose from 'EAGLE', 'EAGLE3', 'NEXTN', 'STANDALONE', 'NGRAM')"]
    assert "DFLASH" in (load_table("0.5.11").index["--speculative-algorithm"].choices or ())
    new = parse([*MODEL, "--speculative-algorithm", "nextn"], "0.5.12", tmp_path)
    assert new.errors == []
    effective = ENGINE.effective(make_launch([], tmp_path), new, EngineVersion("sglang", "0.5.12", True, "c"), Hardware(),
                               SHIPPED)
    assert effective["spec_method"].value == "mtp"


@pytest.mark.parametrize(("version", "field", "error"), [
    ("0.5.6", None, "unrecognized arguments: --mamba-scheduler-strategy extra_buffer"),
    ("0.5.9", "mamba_scheduler_strategy", None),
    ("0.5.14", "mamba_radix_cache_strategy", None),   # deprecated alias of the renamed flag
    ("0.5.20", None, "unrecognized arguments: --mamba-scheduler-strategy extra_buffer"),
])
def test_mamba_scheduler_strategy_by_version(tmp_path: Path, version: str, field: str | None, error: str | None) -> None:
    parsed = parse([*MODEL, "--mamba-scheduler-strategy", "extra_buffer"], version, tmp_path)
    if error:
        assert messages(parsed) == [error]
    else:
        assert parsed.errors == [] and field is not None
        assert parsed.options[field].value == "extra_buffer"


def test_kv_cache_dtype_fp8_is_invalid(tmp_path: Path) -> None:
    parsed = parse([*MODEL, "--kv-cache-dtype", "fp8"], "0.5.9", tmp_path)
    assert messages(parsed)[0].startswith("argument --kv-cache-dtype: invalid choice: 'fp8' (choose from 'auto', ")


def test_serve_model_alias_only_from_0_5_11(tmp_path: Path) -> None:
    argv = ["--model", "Qwen/Qwen3.6-27B"]
    old = parse(argv, "0.5.10", tmp_path, entry="sglang serve")
    assert any(m.startswith("Error: --model-path is required") for m in messages(old))
    new = parse(argv, "0.5.11", tmp_path, entry="sglang serve")
    assert new.errors == [] and new.options["model_path"].value == "Qwen/Qwen3.6-27B"


def test_serve_positional_model(tmp_path: Path) -> None:
    parsed = parse(["Qwen/Qwen3.6-27B", "--tp-size", "2"], "0.5.23", tmp_path, entry="sglang serve")
    assert parsed.errors == [] and parsed.options["model_path"].value == "Qwen/Qwen3.6-27B"


# --- --config ------------------------------------------------------------------------------------

CONFIG = """\
model-path: Qwen/Qwen3.6-27B
speculative-algorithm: NEXTN
speculative-num-steps: 3
speculative-eagle-topk: 1
disable-radix-cache: false
enable-metrics: true
mem-fraction-static: 0.9
"""


def test_config_merge_spans_and_cli_precedence(tmp_path: Path) -> None:
    (tmp_path / "sglang.yaml").write_text(CONFIG, encoding="utf-8")
    parsed = parse(["--config", "sglang.yaml", "--mem-fraction-static", "0.8"], "0.5.9", tmp_path)
    assert parsed.errors == []
    assert parsed.config_files and parsed.config_files[0].endswith("sglang.yaml")
    steps = parsed.options["speculative_num_steps"]
    assert (steps.value, steps.origin) == (3, "config-file")
    assert steps.span is not None and steps.span.file.endswith("sglang.yaml") and (steps.span.line, steps.span.column) == (3, 24)
    assert parsed.options["mem_fraction_static"].value == 0.8   # CLI wins
    assert parsed.options["enable_metrics"].value is True
    assert "disable_radix_cache" not in parsed.options            # store_true + false: not added


def test_config_with_equals_is_not_merged(tmp_path: Path) -> None:
    (tmp_path / "sglang.yaml").write_text(CONFIG, encoding="utf-8")
    parsed = parse([*MODEL, "--config=sglang.yaml"], "0.5.9", tmp_path)
    assert "speculative_algorithm" not in parsed.options
    assert parsed.options["config"].value == "sglang.yaml"
    assert any("not loaded" in note for note in parsed.notes)


def test_config_underscore_key_is_rejected_and_malformed_yaml_is_mtp001(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("model_path: m\n", encoding="utf-8")
    parsed = parse(["--config", "a.yaml"], "0.5.9", tmp_path)
    assert "unrecognized arguments: --model_path m" in messages(parsed)
    (tmp_path / "b.yaml").write_text("model-path: [unclosed\n", encoding="utf-8")
    issues = Issues()
    ENGINE.parse(make_launch(["--config", "b.yaml"], tmp_path), EngineVersion("sglang", "0.5.9", True, "c"),
                 EngineContext(FileLoader(tmp_path), issues))
    assert [item.code for item in issues.items] == ["MTP001"]
    assert issues.items[0].span.file.endswith("b.yaml")


def test_config_dict_is_json_from_0_5_14(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text("model-path: m\njson-model-override-args:\n  rope_theta: 1000000\n", encoding="utf-8")
    parsed = parse(["--config", "c.yaml"], "0.5.14", tmp_path)
    assert parsed.options["json_model_override_args"].value == '{"rope_theta": 1000000}'


# --- Python API ------------------------------------------------------------------------------------

def test_engine_kwargs_are_field_names(tmp_path: Path) -> None:
    launch = make_launch([], tmp_path)
    launch.kwargs = {
        "model_path": KwArg("model_path", "Qwen/Qwen3.6-27B", None),
        "speculative_algorithm": KwArg("speculative_algorithm", "nextn", None),
        "tp": KwArg("tp", 2, None),
    }
    parsed = ENGINE.parse(launch, EngineVersion("sglang", "0.5.9", True, "c"), EngineContext(FileLoader(tmp_path), Issues()))
    assert "TypeError: ServerArgs.__init__() got an unexpected keyword argument 'tp'" in messages(parsed)
    assert "ValueError: Unknown speculative algorithm name: nextn" in messages(parsed)


# --- effective settings ----------------------------------------------------------------------------

def effective(argv: list[str], version: str, tmp_path: Path, *, known: bool = True,
              env: dict[str, str] | None = None, hardware: Hardware | None = None) -> dict[str, Any]:
    launch = make_launch(argv, tmp_path, env=env)
    engine_version = EngineVersion("sglang", version, known, "config" if known else "assumed")
    parsed = ENGINE.parse(launch, engine_version, EngineContext(FileLoader(tmp_path), Issues()))
    return ENGINE.effective(launch, parsed, engine_version, hardware or Hardware(), SHIPPED)  # type: ignore[return-value]


def test_auto_draft_shape_and_48_requests(tmp_path: Path) -> None:
    settings = effective(["--model-path", "Qwen/Qwen3.6-35B-A3B", "--speculative-algorithm", "NEXTN"], "0.5.9", tmp_path)
    assert [settings[k].value for k in ("spec_method", "spec_tokens", "spec_topk", "spec_draft_tokens")] == ["mtp", 3, 1, 4]
    assert settings["max_concurrency"].value == 48
    llama = effective(["--model-path", "meta-llama/Llama-3.1-8B", "--speculative-algorithm", "EAGLE",
                       "--speculative-draft-model-path", "yuhuili/EAGLE-LLaMA3.1"], "0.5.9", tmp_path)
    assert [llama[k].value for k in ("spec_method", "spec_tokens", "spec_topk", "spec_draft_tokens")] == ["eagle", 5, 4, 8]


def test_hybrid_radix_cache_silently_disabled_up_to_0_5_9(tmp_path: Path) -> None:
    argv = ["--model-path", "Qwen/Qwen3.6-35B-A3B", "--speculative-algorithm", "NEXTN"]
    old = effective(argv, "0.5.9", tmp_path)
    assert (old["prefix_caching"].value, old["prefix_caching"].origin) == (False, "inferred")
    assert old["mamba_strategy"].value == "no_buffer"
    newer = effective(argv, "0.5.10", tmp_path)
    assert newer["prefix_caching"].value is True and "startup_error" in newer["prefix_caching"].extra
    newest = effective(argv, "0.5.23", tmp_path)
    assert newest["mamba_strategy"].value == "extra_buffer" and newest["prefix_caching"].value is True
    fixed = effective([*argv, "--mamba-scheduler-strategy", "extra_buffer"], "0.5.9", tmp_path)
    assert fixed["prefix_caching"].value is True


@pytest.mark.parametrize(("version", "env", "value", "origin"), [
    ("0.5.9", None, False, "default"),
    ("0.5.9", {"SGLANG_ENABLE_SPEC_V2": "1"}, True, "env"),
    ("0.5.9", {"SGLANG_ENABLE_SPEC_V2": "on"}, False, "env"),          # invalid -> default
    ("0.5.9", {"SGLANG_ENABLE_SPEC_V2": "1", "SGL_ENABLE_SPEC_V2": "no"}, False, "env"),  # SGL_ overwrites
    ("0.5.11", None, True, "default"),
    ("0.5.23", {"SGLANG_ENABLE_SPEC_V2": "0"}, True, "default"),        # removed: always V2
])
def test_spec_v2_by_version(tmp_path: Path, version: str, env: dict[str, str] | None, value: bool, origin: str) -> None:
    settings = effective([*MODEL, "--speculative-algorithm", "EAGLE"], version, tmp_path, env=env)
    assert (settings["spec_v2"].value, settings["spec_v2"].origin) == (value, origin)


def test_assumed_version_reports_version_dependent_default(tmp_path: Path) -> None:
    settings = effective([*MODEL, "--speculative-algorithm", "EAGLE"], "0.5.23", tmp_path, known=False)
    ranges = settings["spec_v2"].extra["version_dependent"]
    assert {"versions": "0.5.11..0.5.23", "value": True} in ranges


def test_topk_one_resets_draft_tokens(tmp_path: Path) -> None:
    settings = effective([*MODEL, "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "2",
                          "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "8"], "0.5.9", tmp_path)
    assert (settings["spec_draft_tokens"].value, settings["spec_draft_tokens"].origin) == (3, "inferred")


def test_memory_fraction_auto_formula(tmp_path: Path) -> None:
    gpu = SHIPPED.find_gpu("h100-sxm")
    assert gpu is not None
    settings = effective([*MODEL, "--speculative-algorithm", "EAGLE"], "0.5.9", tmp_path, hardware=Hardware(gpu, 1))
    assert settings["memory_fraction"].value == auto_mem_fraction(gpu.memory_mib, "0.5.9", "EAGLE", lambda _: None)
    assert 0.75 < settings["memory_fraction"].value < 0.85
    assert effective(MODEL, "0.5.9", tmp_path)["memory_fraction"].value is None


def test_inspect_end_to_end_with_continuations(inspect: Inspect) -> None:
    script = (
        "#!/bin/sh\n"
        "export SGLANG_ENABLE_SPEC_V2=1\n"
        "exec python3 -m sglang.launch_server \\\n"
        "    --model-path Qwen/Qwen3.6-35B-A3B \\\n"
        "    --speculative-algo NEXTN --speculative-num-steps 3 \\\n"
        "    --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 \\\n"
        "    --mamba-scheduler-strategy extra_buffer --tp 2\n"
    )
    result = inspect({"serve.sh": script}, "serve.sh", extra=["--engine-version", "sglang=0.5.9"])
    launch = result["launches"][0]
    assert launch["cli_errors"] == []
    effective_settings = launch["effective"]
    assert effective_settings["spec_method"] == {"value": "mtp", "origin": "explicit", "algorithm": "NEXTN",
                                                 "line": 5, "column": 24}
    assert effective_settings["spec_v2"]["value"] is True and effective_settings["spec_v2"]["line"] == 2
    assert effective_settings["mamba_strategy"]["value"] == "extra_buffer"
    assert effective_settings["tensor_parallel"]["value"] == 2
