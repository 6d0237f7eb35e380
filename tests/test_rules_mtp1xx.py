"""MTP101/103-106: facts the rules share with the engine models and the model catalog."""

from __future__ import annotations

from mtplint.catalogs import SHIPPED
from mtplint.checks.catalog import Rule, load_catalog
from mtplint.checks.mtp104 import SPEC_V2_TOPK_CHECK_ADDED
from mtplint.engines.sglang import SPEC_V2_DEFAULT_TRUE, SPEC_V2_ENV_ADDED
from mtplint.engines.vllm import ENGINE as VLLM
from mtplint.engines.vllm import JsonOptionValue
from mtplint.source import SourceFile, Token


def _rule(code: str) -> Rule:
    return load_catalog()[code]


def test_spec_v2_ranges_follow_the_sglang_engine_boundaries() -> None:
    (mtp103,) = _rule("MTP103").affected["sglang"]
    assert (mtp103.start, mtp103.below) == (SPEC_V2_ENV_ADDED, SPEC_V2_DEFAULT_TRUE)
    (mtp104,) = _rule("MTP104").affected["sglang"]
    assert (mtp104.start, mtp104.below) == (SPEC_V2_TOPK_CHECK_ADDED, SPEC_V2_DEFAULT_TRUE)


def _tokens(*words: str) -> list[Token]:
    source = SourceFile.from_text(" ".join(words))
    tokens, offset = [], 0
    for word in words:
        tokens.append(Token(word, source.span(offset, offset + len(word))))
        offset += len(word) + 1
    return tokens


def test_vllm_model_keeps_the_json_replaced_by_dotted_keys() -> None:
    parsed = VLLM.parse_words(_tokens("Qwen/Qwen3.6-27B", "--speculative-config",
                                      '{"method":"mtp","num_speculative_tokens":3}',
                                      "--speculative-config.num_speculative_tokens", "2"), "0.33.0")
    option = parsed.options["speculative_config"]
    assert option.value == {"num_speculative_tokens": 2}
    assert isinstance(option, JsonOptionValue) and option.replaced is not None
    assert option.replaced.value == {"method": "mtp", "num_speculative_tokens": 3}
    assert option.span is not None and option.span.column == 83  # the first dotted flag


def test_catalog_knows_which_weights_lack_an_mtp_head() -> None:
    def layers(name: str) -> int | None:
        info = SHIPPED.find_model(name)
        assert info is not None, name
        return info.mtp_layers

    assert layers("mlx-community/Qwen3-Next-80B-A3B-Instruct-4bit") == 0
    assert layers("mlx-community/Qwen3.6-35B-A3B-4bit") == 0
    assert layers("mlx-community/Qwen3.6-27B-MTP-4bit") == 1  # a repo that says MTP keeps its head
    assert layers("unsloth/DeepSeek-R1-GGUF:Q4_K_M") == 0
    assert layers("deepseek-ai/DeepSeek-V3-0324") == 1
    assert layers("moonshotai/Kimi-K2-Instruct") == 0
    assert layers("Qwen/Qwen3-Coder-Next") is None  # unverified: never flagged
