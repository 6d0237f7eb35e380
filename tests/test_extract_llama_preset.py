"""llama-server preset INI files (--models-preset) and config.ini."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Inspect = Callable[..., dict[str, Any]]

PRESET = """\
version = 1

; shared by every model
[*]
c = 16384
n-gpu-layers = 99
LLAMA_ARG_FLASH_ATTN = on

[qwen3.6-27b-mtp]
model = /models/Qwen3.6-27B-MTP-Q4_K_M.gguf
spec-type = draft-mtp   ; the MTP head is inside the GGUF
spec-draft-n-max = 2
np = 1
no-cont-batching = true
c = 65536

[unsloth/Qwen3.6-35B-A3B-MTP-GGUF:Q4_K_M]
spec-type = draft-mtp
draft-max = 3
"""


def test_sections_become_launches(inspect: Inspect) -> None:
    result = inspect({"presets/models.ini": PRESET}, "presets/models.ini")
    qwen, _moe = result["launches"]
    assert qwen["context"] == "preset qwen3.6-27b-mtp"
    assert (qwen["line"], qwen["column"]) == (9, 2)
    assert qwen["argv"] == [
        "llama-server", "--ctx-size", "65536", "--n-gpu-layers", "99", "--flash-attn", "on",
        "--model", "/models/Qwen3.6-27B-MTP-Q4_K_M.gguf", "--spec-type", "draft-mtp",
        "--spec-draft-n-max", "2", "--parallel", "1", "--no-cont-batching",
    ]
    assert qwen["cli_errors"] == []
    effective = qwen["effective"]
    assert effective["spec_method"] == {"value": "mtp", "origin": "config-file", "types": ["draft-mtp"], "line": 11, "column": 13}
    assert effective["spec_tokens"] == {"value": 2, "origin": "config-file", "line": 12, "column": 20}
    assert effective["max_concurrency"]["value"] == 1
    # the section's c overrides the global one
    assert effective["max_model_len"] == {"value": 65536, "origin": "config-file", "line": 15, "column": 5}
    assert qwen["options"]["cont_batching"] is False


def test_cached_model_section_and_removed_key(inspect: Inspect) -> None:
    result = inspect({"models.ini": PRESET}, "models.ini", extra=["--engine-version", "llama.cpp=b10470"])
    moe = result["launches"][1]
    assert moe["effective"]["model"]["value"] == "unsloth/Qwen3.6-35B-A3B-MTP-GGUF:Q4_K_M"
    assert moe["effective"]["max_model_len"]["value"] == 16384  # from [*]
    (error,) = moe["cli_errors"]
    assert error["flag"] == "--draft-max"
    assert (error["line"], error["column"]) == (19, 1)


def test_unknown_key_in_preset(inspect: Inspect) -> None:
    text = "[m]\nmodel = /models/a.gguf\nspec-type = draft-mtp\nspeculative-config = {}\n"
    (launch,) = inspect({"m.ini": text}, "m.ini")["launches"]
    assert launch["notes"] == ["llama-server: option 'speculative-config' not recognized in preset 'm'"]
    assert launch["cli_errors"][0]["line"] == 4


def test_config_ini_default_section(inspect: Inspect) -> None:
    text = "# ~/.config/llama.cpp/config.ini\nmodel = /models/Qwen3.6-27B-MTP-Q4_K_M.gguf\nspec-type = draft-mtp\ntemp-x = 1\n"
    (launch,) = inspect({"config.ini": text}, "config.ini")["launches"]
    assert launch["context"] == "config.ini [default]"
    assert launch["cli_errors"] == []
    assert launch["effective"]["spec_method"]["value"] == "mtp"


def test_other_ini_files_yield_nothing(inspect: Inspect) -> None:
    tox = "[tox]\nenvlist = py311\n[testenv]\ndeps = pytest\ncommands = pytest -q\nport = 8080\n"
    php = "[PHP]\nmemory_limit = 128M\n; speculative caching off\nport = 9000\nthreads = 4\n"
    result = inspect({"tox.ini": tox, "php.ini": php}, "tox.ini", "php.ini")
    assert result["launches"] == []
    assert result.get("diagnostics", []) == []


def test_unparsable_preset_is_malformed(inspect: Inspect) -> None:
    text = "[m]\nmodel = /models/a.gguf\nspec-type = draft-mtp\nthis line is not ini\n"
    result = inspect({"bad.ini": text}, "bad.ini")
    assert result["launches"] == []
    (diagnostic,) = result["diagnostics"]
    assert diagnostic["code"] == "MTP001" and diagnostic["line"] == 4
