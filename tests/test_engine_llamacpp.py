"""llama-server engine model: flags, env, version-dependent behaviour and effective settings."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mtplint.engines.llamacpp import ENGINE, spec_types_at
from mtplint.llama_options import KNOWN_BUILDS, find_option, option_table

Inspect = Callable[..., dict[str, Any]]

QWEN = "/models/Qwen3.6-27B-MTP-Q4_K_M.gguf"


def run(inspect: Inspect, script: str, build: str | None = None) -> dict[str, Any]:
    extra = ["--engine-version", f"llama.cpp={build}"] if build else []
    result = inspect({"serve.sh": script}, "serve.sh", extra=extra)
    (launch,) = result["launches"]
    return launch


def test_known_builds_are_the_change_boundaries() -> None:
    assert ENGINE.known_versions() == list(KNOWN_BUILDS)
    assert ENGINE.known_versions()[-1] == "b10470"


def test_mtp_launch_with_continuations(inspect: Inspect) -> None:
    script = (
        "#!/usr/bin/env bash\n"
        "MODEL=${MODEL:-/models/Qwen3.6-27B-MTP-Q4_K_M.gguf}\n"
        "exec llama-server \\\n"
        "  -m \"$MODEL\" \\\n"
        "  --spec-type draft-mtp --spec-draft-n-max 2 \\\n"
        "  -np 1 -ctk q8_0 -c 65536 --cache-reuse 256\n"
    )
    launch = run(inspect, script, "b10470")
    assert launch["cli_errors"] == []
    effective = launch["effective"]
    assert effective["model"]["value"] == QWEN
    assert effective["spec_method"] == {"value": "mtp", "origin": "explicit", "types": ["draft-mtp"], "line": 5, "column": 15}
    assert effective["spec_tokens"]["value"] == 2
    assert (effective["spec_tokens"]["line"], effective["spec_tokens"]["column"]) == (5, 44)
    assert effective["max_concurrency"]["value"] == 1
    assert effective["kv_cache_dtype"]["value"] == "q8_0"
    assert effective["max_model_len"]["value"] == 65536
    assert effective["prefix_caching"]["value"] is True
    assert effective["prefix_caching"]["cache_reuse"] == 256
    assert launch["options"]["n_parallel"] == 1


def test_defaults_auto_slots_and_version_dependent_n_max(inspect: Inspect) -> None:
    launch = run(inspect, f"llama-server -m {QWEN} --spec-type draft-mtp\n")
    effective = launch["effective"]
    assert effective["max_concurrency"] == {"value": 4, "origin": "default", "auto": True}
    # version assumed: the default n_max depends on the build (16 before b9235, 3 from b9235)
    assert effective["spec_tokens"]["value"] == 3
    assert effective["spec_tokens"]["version_dependent"] == {"before b9235": 16, "from b9235": 3}
    old = run(inspect, f"llama-server -m {QWEN} --spec-type draft-mtp\n", "b9180")
    assert old["effective"]["spec_tokens"] == {"value": 16, "origin": "default"}


def test_env_and_cli_spec_types_add_up(inspect: Inspect) -> None:
    script = f"export LLAMA_ARG_SPEC_TYPE=ngram-mod\nllama-server -m {QWEN} --spec-type draft-mtp --spec-type none\n"
    launch = run(inspect, script, "b10470")
    assert launch["options"]["spec_type"] == ["ngram-mod", "draft-mtp", "none"]
    method = launch["effective"]["spec_method"]
    assert method["value"] == "mtp" and method["types"] == ["ngram-mod", "draft-mtp"]
    assert (method["line"], method["column"]) == (2, 65)


def test_cli_overrides_env_and_env_origin(inspect: Inspect) -> None:
    script = f"export LLAMA_ARG_N_PARALLEL=8\nexport LLAMA_ARG_CTX_SIZE=4096\nllama-server -m {QWEN} -np 2\n"
    launch = run(inspect, script)
    assert launch["effective"]["max_concurrency"]["value"] == 2
    assert launch["effective"]["max_concurrency"]["origin"] == "explicit"
    assert launch["effective"]["max_model_len"]["origin"] == "env"
    assert launch["effective"]["max_model_len"]["line"] == 2


@pytest.mark.parametrize(("script", "message"), [
    (f"llama-server -m {QWEN} --spec-type mtp\n", 'error while handling argument "--spec-type": unknown speculative type: mtp'),
    (f"llama-server -m {QWEN} --draft 4\n",
     'error while handling argument "--draft": the argument has been removed. use --spec-draft-n-max or --spec-ngram-mod-n-max'),
    (f"llama-server -m {QWEN} --spec-replace a b\n", "error: invalid argument: --spec-replace"),
    (f"llama-server -m {QWEN} --ctx-size=4096\n", "error: invalid argument: --ctx-size=4096"),
    (f"llama-server {QWEN}\n", f"error: invalid argument: {QWEN}"),
    (f"llama-server -m {QWEN} -np 0\n", 'error while handling argument "-np": error: invalid value for n_parallel'),
    (f"llama-server -m {QWEN} -fa yes\n", "error while handling argument \"-fa\": error: unknown value for --flash-attn: 'yes'"),
    (f"llama-server -m {QWEN} -ctk q3\n", 'error while handling argument "-ctk": Unsupported cache type: q3'),
    (f"llama-server -m {QWEN} -c big\n", 'error while handling argument "-c": stoi'),
    (f"export LLAMA_ARG_DRAFT_MIN=1\nllama-server -m {QWEN}\n",
     'error while handling environment variable "LLAMA_ARG_DRAFT_MIN": the argument has been removed. '
     "use --spec-draft-n-min or --spec-ngram-mod-n-min"),
    (f"export LLAMA_ARG_CONT_BATCHING=maybe\nllama-server -m {QWEN}\n",
     'error while handling environment variable "LLAMA_ARG_CONT_BATCHING": invalid boolean value'),
])
def test_rejected_at_b10470(inspect: Inspect, script: str, message: str) -> None:
    launch = run(inspect, script, "b10470")
    assert [error["message"] for error in launch["cli_errors"]] == [message]


def test_error_points_at_the_flag(inspect: Inspect) -> None:
    script = "#!/bin/sh\nllama-server \\\n    -m /m.gguf \\\n    -md /d.gguf -cd 4096\n"
    (error,) = run(inspect, script, "b10470")["cli_errors"]
    assert (error["line"], error["column"], error["flag"], error["kind"]) == (4, 17, "-cd", "unknown")


def test_underscores_and_negated_booleans(inspect: Inspect) -> None:
    script = f"export LLAMA_ARG_NO_CACHE_PROMPT=1\nllama-server -m {QWEN} --spec_draft_n_max 2 --no-kv-unified\n"
    launch = run(inspect, script)
    assert launch["cli_errors"] == []
    assert launch["options"]["spec_draft_n_max"] == 2
    assert launch["options"]["kv_unified"] is False
    assert launch["effective"]["prefix_caching"]["value"] is False
    assert launch["effective"]["prefix_caching"]["origin"] == "env"


def test_draft_model_without_type_depends_on_build(inspect: Inspect) -> None:
    script = f"llama-server -m {QWEN} -md /models/draft-0.6B.gguf\n"
    before = run(inspect, script, "b9235")["effective"]["spec_method"]
    assert before["value"] == "draft_model" and before["origin"] == "inferred"
    unused = run(inspect, script, "b9464")["effective"]["spec_method"]
    assert unused["value"] is None and unused["draft_unused"] is True
    from_gguf = run(inspect, script, "b10470")["effective"]["spec_method"]
    assert from_gguf["value"] is None and from_gguf["unresolved"] == ["draft GGUF metadata"]
    assert run(inspect, script, "b10470")["effective"]["spec_model"]["value"] == "/models/draft-0.6B.gguf"


def test_old_builds_accept_old_names(inspect: Inspect) -> None:
    launch = run(inspect, f"llama-server -m {QWEN} -md /d.gguf --draft-max 8 --draft-min 2 -cd 4096\n", "b8932")
    assert launch["cli_errors"] == []
    assert launch["options"]["spec_draft_n_max"] == 8
    assert launch["effective"]["spec_tokens"]["value"] == 8
    assert launch["effective"]["spec_method"]["value"] == "draft_model"
    # -cd is an alias of --spec-draft-ctx-size from b8955 until b9109
    assert run(inspect, f"llama-server -m {QWEN} -cd 4096\n", "b9000")["cli_errors"] == []
    assert run(inspect, f"llama-server -m {QWEN} --spec-draft-n-max 3\n", "b8932")["cli_errors"][0]["message"] == (
        "error: invalid argument: --spec-draft-n-max")


def test_spec_type_names_by_build(inspect: Inspect) -> None:
    assert "draft" in spec_types_at(9000) and "draft-simple" not in spec_types_at(9000)
    assert "draft-mtp" not in spec_types_at(9131)
    assert run(inspect, f"llama-server -m {QWEN} --spec-type draft\n", "b9109")["cli_errors"] == []
    errors = run(inspect, f"llama-server -m {QWEN} --spec-type draft-mtp\n", "b9131")["cli_errors"]
    assert errors[0]["message"].endswith("unknown speculative type: draft-mtp")


def test_unresolved_and_open_ended(inspect: Inspect) -> None:
    script = 'llama-server -m "$MODEL" --spec-draft-n-max "$DEPTH" "$@"\n'
    launch = run(inspect, script)
    assert launch["open_ended"] is True
    assert launch["cli_errors"] == []
    assert launch["effective"]["model"]["unresolved"]
    assert launch["options"]["spec_draft_n_max"] == {"unresolved": "$DEPTH"}


def test_option_table_is_generated_and_versioned() -> None:
    names = {name for option in option_table(10470) for name in option.names}
    assert {"-m", "--spec-type", "-np", "--cache-reuse", "--mmap"} <= names
    assert "-cd" not in names and "-cd" in {n for o in option_table(9000) for n in o.names}
    found = find_option("LLAMA_ARG_NO_CONT_BATCHING", 10470)
    assert found is not None and found[0].dest == "cont_batching" and found[1] is False
    found = find_option("md", 10470)
    assert found is not None and found[0].dest == "spec_draft_model"


def test_preset_keys_name_options_as_llama_server_resolves_them() -> None:
    """Every spelling without its dashes, the positive and negated forms, and the variables."""
    build = 10470
    found = find_option("cont-batching", build)
    assert found is not None and found[0].dest == "cont_batching" and found[1] is True
    found = find_option("no-cont-batching", build)
    assert found is not None and found[0].dest == "cont_batching" and found[1] is False
    found = find_option("LLAMA_ARG_CONT_BATCHING", build)
    assert found is not None and found[0].dest == "cont_batching" and found[1] is True
    for option in option_table(build):
        for name in option.names:
            found = find_option(name.lstrip("-"), build)
            # the first option with that spelling wins, as in common/preset.cpp
            assert found is not None and name.lstrip("-") in {n.lstrip("-") for n in found[0].names}
    assert find_option("not-an-option", build) is None
    assert find_option("--model", build) is None  # keys are written without dashes


def test_variables_are_read_in_option_order_whatever_the_environment_order(inspect: Inspect) -> None:
    """common_params_parse_ex walks the options, not the environment: errors come in option order."""
    table = [option.env for option in option_table(10470)]
    variables = ["LLAMA_ARG_CONT_BATCHING", "LLAMA_ARG_DRAFT_MIN"]
    in_option_order = sorted(variables, key=table.index)
    for written in (variables, variables[::-1]):
        values = {"LLAMA_ARG_CONT_BATCHING": "maybe", "LLAMA_ARG_DRAFT_MIN": "1"}
        exports = "".join(f"export {name}={values[name]}\n" for name in written)
        launch = run(inspect, f"{exports}export LLAMA_ARG_CTX_SIZE=4096\nllama-server -m {QWEN}\n", "b10470")
        assert [error["flag"] for error in launch["cli_errors"]] == in_option_order
        assert launch["options"]["ctx_size"] == 4096
