"""MTP105 mtp-without-mtp-weights: MTP on weights the model catalog *knows* carry no MTP head.

Only a catalog entry with ``mtp_layers: 0`` counts (mtplint/data/models.json); a guess from the
name does not, and an entry whose MTP weights are unverified (``mtp_layers: null``, e.g.
Qwen3-Coder-Next, docs/models.md#where-the-layer-count-is-written) never fires. What each engine does without the head
(docs/models.md#what-an-engine-does-without-the-head):

* vLLM reads the MTP layer count from the HF config (``hf_config_override``); 0 leaves no draft layer.
* llama-server aborts: ``GGML_ASSERT(hparams.n_layer_nextn > 0 ...)`` or "failed to create MTP context".
* vllm-mlx logs "MTP validation failed -- --enable-mtp will be ignored" and serves without MTP.
* SGLang NEXTN (and EAGLE without a separate draft) drafts with the model's own MTP layer.
"""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext

#: why a catalog entry has no MTP head, by catalog id (the catalog itself only says ``mtp_layers: 0``)
WHY_NO_HEAD: dict[str, str] = {
    "kimi-k2": "Kimi K2's config says `num_nextn_predict_layers: 0` (docs/models.md#where-the-layer-count-is-written)",
    "llama": "Llama 3 checkpoints have no MTP layers (use EAGLE/EAGLE3 with a draft model instead)",
    "qwen3-next-mlx-community": "mlx-community conversions drop every `mtp.*` weight (mlx-lm models/qwen3_next.py "
                                "sanitize); vllm-mlx's scripts/add_mtp_weights.py puts them back",
    "qwen3.6-27b-mlx-community": "mlx-community conversions drop every `mtp.*` weight (mlx-lm models/qwen3_5.py "
                                 "sanitize); vllm-mlx's scripts/add_mtp_weights_qwen35.py puts them back",
    "qwen3.5-mlx-community": "mlx-community conversions drop every `mtp.*` weight (mlx-lm models/qwen3_5.py "
                             "sanitize); vllm-mlx's scripts/add_mtp_weights_qwen35.py puts them back",
    "deepseek-v3-gguf": "llama.cpp's converter skips DeepSeek-V3/R1's MTP layer (`skip_mtp = True`), so the GGUF "
                        "has no `nextn` tensors",
}

CONSEQUENCE: dict[str, str] = {
    "vllm": "vLLM finds no MTP layer to build the drafter from and fails at start-up",
    # not verified for SGLang: its NEXTN draft loads the layer after the last decoder layer
    "sglang": "SGLang's NEXTN draft has no MTP weights to load (a start-up failure, or a draft that is never "
              "accepted; not verified)",
    "llama.cpp": "llama-server aborts at start-up (`n_layer_nextn > 0` assertion / \"failed to create MTP context\")",
    "vllm-mlx": "vllm-mlx logs \"MTP validation failed\" and silently serves without MTP",
}


#: a launch that does not draft finds nothing here (not checked: :func:`mtplint.checks.run_rules`)
ONLY_WITH_SETTING = "spec_method"


def check(ctx: RuleContext) -> Iterator[Finding]:
    method = ctx.setting("spec_method")
    if method is None or method.unresolved or method.value != "mtp":
        return
    # the weights the MTP head is read from: an explicit draft (vLLM "model", SGLang
    # --speculative-draft-model-path, llama.cpp -md), else the served model itself
    draft = ctx.setting("spec_model")
    if draft is not None and draft.unresolved:
        return
    weights = draft.value if draft is not None and isinstance(draft.value, str) and draft.value else ctx.value("model")
    if not isinstance(weights, str):
        return
    info = ctx.catalogs.find_model(weights)
    if info is None or info.mtp_layers != 0:
        return
    why = WHY_NO_HEAD.get(info.id, f"the model catalog lists `{info.id}` with no MTP layers")
    consequence = CONSEQUENCE.get(ctx.engine, "there is no MTP head to draft with")
    yield ctx.report_finding(
        f"MTP speculative decoding on `{weights}`, which ships no MTP head: {why}; {consequence}. Serve weights "
        "that include the MTP layers, or use another speculative method",
        ctx.span_of("spec_method"),
    )
