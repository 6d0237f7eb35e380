"""Model sizes and the weight / KV formats a launch runs with.

Sizes come from the ``sizes`` object of a ``mtplint/data/models.json`` entry (worked out from the
model's ``config.json``; the entry names its source); a model without one is not estimated. Formats are read from the launch:
``--quantization`` when given, else the served name (``-FP8``, ``-AWQ``, ``-Int4``, GGUF quant tags
such as ``Q4_K_M``), else the checkpoint's own dtype.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

from mtplint.catalogs import SHIPPED, Catalogs
from mtplint.records import FrozenRecord

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Final

GIB = 1024**3
MIB = 1024**2


class Experts(FrozenRecord):
    """Mixture-of-experts shape of a model (routed experts, how many run per token, shared ones)."""

    __slots__ = ("count", "top_k", "routed_share", "shared")
    count: Final[int]
    top_k: Final[int]
    #: share of the active weight bytes that sit in routed experts
    routed_share: Final[float]
    #: shared (always active) experts
    shared: Final[int]

    def __init__(self, count: int, top_k: int, routed_share: float, shared: int = 0) -> None:
        self.count = count
        self.top_k = top_k
        self.routed_share = routed_share
        self.shared = shared


class ModelSizes(FrozenRecord):
    """A catalogued model's sizes: parameters, KV bytes per token, recurrent state, MTP head."""

    __slots__ = ("id", "params_b", "active_params_b", "mtp_params_b", "checkpoint_dtype", "kv_bytes_per_token",
                 "mtp_kv_bytes_per_token", "recurrent_state_mib", "max_context", "experts", "draft_cost",
                 "acceptance", "layers", "full_attention_layers", "hidden_size", "uncertain")
    id: Final[str]
    params_b: Final[float]
    active_params_b: Final[float]
    mtp_params_b: Final[float]
    checkpoint_dtype: Final[str]
    kv_bytes_per_token: Final[int]
    mtp_kv_bytes_per_token: Final[int]
    recurrent_state_mib: Final[float]
    max_context: Final[int | None]
    experts: Final[Experts | None]
    #: c: time of one MTP draft step / one target step at batch 1 (Leviathan et al., arXiv:2211.17192)
    draft_cost: Final[float | None]
    #: per-position acceptance alpha, where a published figure exists
    acceptance: Final[float | None]
    #: layers in all / with a KV cache (None when the catalog entry does not say)
    layers: Final[int | None]
    full_attention_layers: Final[int | None]
    hidden_size: Final[int | None]
    #: ``sizes`` fields whose value is unverified (the entry's ``uncertain`` list)
    uncertain: Final[tuple[str, ...]]

    def __init__(self, id: str, params_b: float, active_params_b: float, mtp_params_b: float,
                 checkpoint_dtype: str, kv_bytes_per_token: int, mtp_kv_bytes_per_token: int,
                 recurrent_state_mib: float, max_context: int | None, experts: Experts | None,
                 draft_cost: float | None, acceptance: float | None, layers: int | None = None,
                 full_attention_layers: int | None = None, hidden_size: int | None = None,
                 uncertain: tuple[str, ...] = ()) -> None:
        self.id = id
        self.params_b = params_b
        self.active_params_b = active_params_b
        self.mtp_params_b = mtp_params_b
        self.checkpoint_dtype = checkpoint_dtype
        self.kv_bytes_per_token = kv_bytes_per_token
        self.mtp_kv_bytes_per_token = mtp_kv_bytes_per_token
        self.recurrent_state_mib = recurrent_state_mib
        self.max_context = max_context
        self.experts = experts
        self.draft_cost = draft_cost
        self.acceptance = acceptance
        self.layers = layers
        self.full_attention_layers = full_attention_layers
        self.hidden_size = hidden_size
        self.uncertain = uncertain

    @property
    def hybrid(self) -> bool:
        return self.recurrent_state_mib > 0


def _sizes(catalogs: Catalogs) -> dict[str, ModelSizes]:
    found: dict[str, ModelSizes] = {}
    for entry in catalogs.model_entries():  # the shipped entries plus any configured ones
        sizes: dict[str, Any] | None = entry.get("sizes")
        if not sizes:
            continue
        experts = sizes.get("experts")
        layers: dict[str, Any] = entry.get("layers") or {}
        found[entry["id"]] = ModelSizes(
            id=entry["id"], params_b=sizes["params_b"], active_params_b=sizes["active_params_b"],
            mtp_params_b=sizes.get("mtp_params_b", 0.0), checkpoint_dtype=sizes["checkpoint_dtype"],
            kv_bytes_per_token=sizes["kv_bytes_per_token"], mtp_kv_bytes_per_token=sizes.get("mtp_kv_bytes_per_token", 0),
            recurrent_state_mib=sizes["recurrent_state_mib"], max_context=sizes.get("max_context"),
            experts=Experts(experts["count"], experts["top_k"], experts["routed_share"], experts.get("shared", 0))
            if experts else None,
            draft_cost=sizes.get("draft_cost"), acceptance=sizes.get("acceptance"),
            layers=layers.get("total"), full_attention_layers=layers.get("full_attention"),
            hidden_size=entry.get("hidden_size"), uncertain=tuple(sizes.get("uncertain", ())),
        )
    return found


def model_sizes(model_id: str | None, catalogs: Catalogs = SHIPPED) -> ModelSizes | None:
    """The sizes of an entry of ``catalogs`` (by its ``id``, e.g. from
    :meth:`mtplint.catalogs.Catalogs.find_model`)."""
    return catalogs.derived("model sizes", _sizes).get(model_id) if model_id else None


class WeightFormat(FrozenRecord):
    """How the weights are stored: a label and the bytes each parameter takes."""

    __slots__ = ("label", "bytes_per_param", "fp8")
    label: Final[str]
    bytes_per_param: Final[float]
    #: FP8 weights (which run at FP8 speed only on GPUs with FP8 tensor cores)
    fp8: Final[bool]

    def __init__(self, label: str, bytes_per_param: float, fp8: bool = False) -> None:
        self.label = label
        self.bytes_per_param = bytes_per_param
        self.fp8 = fp8


#: Approximate bits per weight of llama.cpp's quantisation presets (``llama-quantize`` table; K-quants
#: carry per-block scales, so Q4_K_M is ~4.9 bits, not 4). Unsloth "UD" dynamic quants sit ~0.1-0.3
#: bits above the preset of the same name. Error: +-5%.
GGUF_BITS: dict[str, float] = {
    "IQ1_S": 1.6, "IQ1_M": 1.8, "IQ2_XXS": 2.1, "IQ2_XS": 2.3, "IQ2_S": 2.5, "IQ2_M": 2.7, "Q2_K": 3.0,
    "Q2_K_XL": 3.2, "IQ3_XXS": 3.1, "IQ3_XS": 3.3, "IQ3_S": 3.4, "IQ3_M": 3.7, "Q3_K_S": 3.5, "Q3_K_M": 3.9,
    "Q3_K_L": 4.3, "Q3_K_XL": 4.3, "IQ4_XS": 4.3, "IQ4_NL": 4.5, "Q4_0": 4.5, "Q4_1": 5.0, "Q4_K_S": 4.6,
    "Q4_K_M": 4.9, "Q4_K_L": 5.0, "Q4_K_XL": 5.0, "Q5_0": 5.5, "Q5_1": 6.0, "Q5_K_S": 5.5, "Q5_K_M": 5.7,
    "Q5_K_XL": 5.9, "Q6_K": 6.6, "Q6_K_XL": 6.8, "Q8_0": 8.5, "Q8_K_XL": 9.0, "BF16": 16.0, "F16": 16.0,
}


# the patterns compile on first use (a few ms of start-up for every ``mtplint check`` otherwise)
@cache
def _gguf_tag() -> re.Pattern[str]:
    alternatives = "|".join(sorted(map(re.escape, GGUF_BITS), key=len, reverse=True))
    return re.compile(r"(?<![A-Za-z0-9])(?:UD-)?(" + alternatives + r")(?![A-Za-z0-9])", re.IGNORECASE)


#: 4-bit weight-only formats: 4 bits + one FP16 scale (and zero) per group of 128 -> ~4.25-4.5 bits
FOUR_BIT = 0.55


def _after_no_letter(lowered: str, word: str) -> bool:
    """Whether ``word`` occurs in ``lowered`` where no letter comes before it (``(?<![a-z])word``)."""
    start = lowered.find(word)
    while start >= 0:
        if start == 0 or not "a" <= lowered[start - 1] <= "z":
            return True
        start = lowered.find(word, start + 1)
    return False


#: weight formats a model name may spell, in the order they are tried: the expression, the test
#: that answers as it does for a name in lower case of ASCII characters only, and the format
_NAME_FORMATS: tuple[tuple[str, Callable[[str], bool], WeightFormat], ...] = (
    (r"nvfp4|mxfp4|(?<![a-z])fp4",
     lambda lowered: "nvfp4" in lowered or "mxfp4" in lowered or _after_no_letter(lowered, "fp4"),
     WeightFormat("FP4", FOUR_BIT)),
    # "w8a8-fp8" has no letter before its "fp8"
    (r"(?<![a-z])fp8|w8a8-fp8", lambda lowered: _after_no_letter(lowered, "fp8"), WeightFormat("FP8", 1.0, fp8=True)),
    (r"awq|gptq|int4|w4a16|4bit|4-bit|bnb-4bit",  # "bnb-4bit" holds "4bit"
     lambda lowered: any(word in lowered for word in ("awq", "gptq", "int4", "w4a16", "4bit", "4-bit")),
     WeightFormat("4-bit", FOUR_BIT)),
    (r"int8|w8a8|8bit|8-bit", lambda lowered: any(word in lowered for word in ("int8", "w8a8", "8bit", "8-bit")),
     WeightFormat("8-bit", 1.0)),
    (r"6bit|6-bit", lambda lowered: "6bit" in lowered or "6-bit" in lowered, WeightFormat("6-bit", 0.8)),
)


@cache
def _name_format(expression: str) -> re.Pattern[str]:
    return re.compile(expression, re.I)


@lru_cache(maxsize=1024)  # a tree's launches name a few models, each asked of by several rules per launch
def _format_in_name(name: str) -> WeightFormat | None:
    """The first format whose expression finds ``name``. An ASCII name (nearly all) is answered by
    string tests on its lower case, without compiling an expression (a pre-commit run names one
    model); any other name may match by Unicode case folding, and goes to the expressions."""
    if name.isascii():
        lowered = name.lower()
        return next((form for _, holds, form in _NAME_FORMATS if holds(lowered)), None)
    for expression, _, form in _NAME_FORMATS:
        if _name_format(expression).search(name):
            return form
    return None


#: engine ``--quantization`` values (vLLM/SGLang) -> format; methods that read the checkpoint's own
#: format (compressed-tensors, modelopt, auto-round) fall through to the name
_METHOD_FORMATS: dict[str, WeightFormat] = {
    "fp8": WeightFormat("FP8", 1.0, fp8=True), "w8a8_fp8": WeightFormat("FP8", 1.0, fp8=True),
    "modelopt_fp8": WeightFormat("FP8", 1.0, fp8=True), "mxfp8": WeightFormat("FP8", 1.0, fp8=True),
    "awq": WeightFormat("4-bit", FOUR_BIT), "awq_marlin": WeightFormat("4-bit", FOUR_BIT),
    "gptq": WeightFormat("4-bit", FOUR_BIT), "gptq_marlin": WeightFormat("4-bit", FOUR_BIT),
    "bitsandbytes": WeightFormat("4-bit", FOUR_BIT), "moe_wna16": WeightFormat("4-bit", FOUR_BIT),
    "modelopt_fp4": WeightFormat("FP4", FOUR_BIT), "mxfp4": WeightFormat("FP4", FOUR_BIT),
    "w8a8_int8": WeightFormat("8-bit", 1.0),
}


def weight_format(model_name: str | None, quantization: Any, sizes: ModelSizes | None) -> WeightFormat:
    """Bytes per parameter the weights occupy (and whether they are FP8); an unknown model without a
    format in its name is taken as BF16."""
    if isinstance(quantization, str) and quantization.lower() in _METHOD_FORMATS:
        return _METHOD_FORMATS[quantization.lower()]
    name = model_name or ""
    gguf = _gguf_tag().search(name) if "gguf" in name.lower() else None
    if gguf is not None:
        tag = gguf.group(1).upper()
        return WeightFormat(f"GGUF {tag}", GGUF_BITS[tag] / 8)
    form = _format_in_name(name)
    if form is not None:
        return form
    if sizes is not None and sizes.checkpoint_dtype == "fp8":
        return WeightFormat("FP8", 1.0, fp8=True)
    return WeightFormat("BF16", 2.0)


#: bytes per KV element by cache dtype (vLLM / SGLang / llama.cpp spellings); "auto" is the model's
#: activation dtype, BF16 for every catalogued model (FP8 checkpoints keep BF16 activations)
KV_BYTES: dict[str, float] = {
    "auto": 2.0, "bfloat16": 2.0, "bf16": 2.0, "float16": 2.0, "f16": 2.0, "f32": 4.0, "float32": 4.0,
    "fp8": 1.0, "fp8_e4m3": 1.0, "fp8_e5m2": 1.0, "fp8_inc": 1.0, "fp8_ds_mla": 1.0, "fp8_per_token_head": 1.0,
    "int8_per_token_head": 1.0, "q8_0": 8.5 / 8, "q5_0": 5.5 / 8, "q5_1": 6.0 / 8, "q4_0": 4.5 / 8, "q4_1": 5.0 / 8,
    "iq4_nl": 4.5 / 8, "nvfp4": 0.5625, "fp4_e2m1": 0.5625, "int4_per_token_head": 0.5625,
}


def kv_bytes_per_element(kv_dtype: Any) -> float | None:
    """Bytes per KV element for a cache dtype, or None for one this table does not know."""
    if not isinstance(kv_dtype, str):
        return None
    text = kv_dtype.lower()
    if text in KV_BYTES:
        return KV_BYTES[text]
    if text.startswith(("turboquant", "octave", "ultraquant")):
        return 0.5  # 3-4 bit KV quantisations (vLLM 0.33 CacheDType), +-30%
    return None


def smaller_weights_advice(weights: WeightFormat) -> str:
    """What to serve instead of ``weights`` when they take too much memory: a checkpoint in a smaller
    format than the one already served (never FP8 for weights that are FP8 or 8-bit already)."""
    if weights.bytes_per_param >= 2:
        return "quantised weights (an FP8 or 4-bit checkpoint) or more GPUs"
    if weights.bytes_per_param > 0.7:
        return f"a 4-bit checkpoint (the weights are {weights.label} already) or more GPUs"
    return "a smaller quantisation or more GPUs"
