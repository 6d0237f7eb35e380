"""llama-swap configs: cmd blocks with macros and comments, env lists, spans inside the block."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mtplint.source import SourceFile

Inspect = Callable[..., dict[str, Any]]

CONFIG = """\
healthCheckTimeout: 300
macros:
  "server": /app/llama-server --port ${PORT} --host 127.0.0.1
  "mtp-flags": --spec-type draft-mtp --spec-draft-n-max 3

models:
  "qwen3.6-27b":
    cmd: |
      ${server}
      -m /models/Qwen3.6-27B-MTP-Q4_K_M.gguf
      # -np 4
      ${mtp-flags}
      -np 1 -ngl 99 --alias ${MODEL_ID}
    env:
      - "CUDA_VISIBLE_DEVICES=0"
      - "LLAMA_ARG_CTX_SIZE=65536"
    ttl: 600
  "gemma-4-31b":
    cmd: >
      ${server}
      -m /models/gemma-4-31B-it-Q8_0.gguf
      --draft-max 4
      -md /models/mtp-gemma-4-31B-it.gguf
  "embed":
    cmd: python3 -m http.server ${PORT}
"""


def test_cmd_blocks_become_launches(inspect: Inspect) -> None:
    result = inspect({"llama-swap.yaml": CONFIG}, "llama-swap.yaml")
    qwen, _gemma = result["launches"]
    assert qwen["context"] == "model qwen3.6-27b"
    assert qwen["argv"] == [
        "/app/llama-server", "--port", {"unresolved": "${PORT}"}, "--host", "127.0.0.1",
        "-m", "/models/Qwen3.6-27B-MTP-Q4_K_M.gguf",
        "--spec-type", "draft-mtp", "--spec-draft-n-max", "3",
        "-np", "1", "-ngl", "99", "--alias", "qwen3.6-27b",
    ]
    assert qwen["cli_errors"] == []
    effective = qwen["effective"]
    # the model path sits inside the literal block; the MTP flags come from the macro definition
    assert (effective["model"]["line"], effective["model"]["column"]) == (10, 10)
    assert (effective["spec_method"]["line"], effective["spec_method"]["column"]) == (4, 28)
    assert effective["max_concurrency"]["value"] == 1  # the commented-out "-np 4" is dropped
    assert (effective["max_concurrency"]["line"], effective["max_concurrency"]["column"]) == (13, 11)
    assert effective["max_model_len"] == {"value": 65536, "origin": "env", "line": 16, "column": 10}
    assert qwen["env"]["CUDA_VISIBLE_DEVICES"] == "0"


def test_folded_block_error_position(inspect: Inspect) -> None:
    result = inspect({"llama-swap.yaml": CONFIG}, "llama-swap.yaml", extra=["--engine-version", "llama.cpp=b10470"])
    gemma = result["launches"][1]
    assert gemma["context"] == "model gemma-4-31b"
    (error,) = gemma["cli_errors"]
    assert error["flag"] == "--draft-max"
    assert (error["line"], error["column"]) == (22, 7)


def test_not_a_llama_swap_file(inspect: Inspect) -> None:
    result = inspect({"values.yaml": "models:\n  a:\n    path: /x\nspeculative: true\n"}, "values.yaml")
    assert result["launches"] == []


def test_claims() -> None:
    from mtplint.extract import llama_swap
    from mtplint.extract.yamlpos import load_all
    from mtplint.source import SourceFile

    assert llama_swap.claims(load_all(SourceFile.from_text(CONFIG)))
    assert not llama_swap.claims(load_all(SourceFile.from_text("models: [a, b]\n")))


def test_a_cmd_without_comment_lines_or_macros_reads_as_one_with_them() -> None:
    """A cmd with nothing to strip or expand is used as written: the words and positions it gives
    are those of the same cmd with a comment line and an unknown macro, which are stripped and kept."""
    from mtplint.extract.llama_swap import _expand, _strip_comment_lines, _tokens
    from mtplint.source import MappedText

    for cmd in ("llama-server -m a.gguf\n  --port 8080 'x y'\n", "vllm serve m\n", "", "a\n\n b ${X}\n"):
        source = SourceFile.from_text(cmd + "# note\n${unknown} z\n")
        whole = source.whole()
        plain = MappedText(cmd, whole.offsets[: len(cmd) + 1], source)
        general = _expand(_strip_comment_lines(whole), {})
        quick = _expand(_strip_comment_lines(plain), {})
        assert general.text == quick.text + "${unknown} z\n"
        assert list(general.offsets[: len(cmd)]) == list(quick.offsets[: len(cmd)])
        words = [(token.value, token.span) for token in _tokens(quick)]
        assert words == [(token.value, token.span) for token in _tokens(general)][: len(words)]
