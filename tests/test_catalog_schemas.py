"""The data catalogs shipped in the package validate against their schemas in schemas/, and their
numbers are the ones their sources state or derive (docs/gpus.md#sources, docs/models.md#sources;
the expected values below are written out by hand from those sources)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mtplint.catalogs import SHIPPED
from mtplint.checks.catalog import CatalogError, validate
from mtplint.tuner.sizes import model_sizes

ROOT = Path(__file__).resolve().parent.parent
KIB = 1024
MIB = 1024**2


def _data(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((ROOT / "mtplint" / "data" / name).read_text())
    return loaded


def _gpus() -> dict[str, dict[str, Any]]:
    return {entry["id"]: entry for entry in _data("gpus.json")["gpus"]}


def _models() -> dict[str, dict[str, Any]]:
    return {entry["id"]: entry for entry in _data("models.json")["models"]}


@pytest.mark.parametrize(("data", "schema"), [("gpus.json", "gpus.schema.json"), ("models.json", "models.schema.json")])
def test_catalog_matches_schema(data: str, schema: str) -> None:
    document = _data(data)
    jsonschema.Draft202012Validator(json.loads((ROOT / "schemas" / schema).read_text())).validate(document)


def test_gpu_ids_unique_and_model_patterns_compile() -> None:
    gpus = _data("gpus.json")["gpus"]
    assert len({g["id"] for g in gpus}) == len(gpus)
    models = _data("models.json")["models"]
    assert len({m["id"] for m in models}) == len(models)
    for model in models:
        for pattern in model["patterns"]:
            re.compile(pattern)


def test_broken_gpu_entry_is_rejected_naming_the_key() -> None:
    document = _data("gpus.json")
    document["gpus"][0]["memory_mib"] = "24 GB"
    with pytest.raises(CatalogError, match=r"gpus\.json: key `gpus\.0\.memory_mib`: expected integer or null, got str '24 GB'"):
        validate(document, "gpus.schema.json", "gpus.json")
    document = _data("gpus.json")
    document["gpus"][1]["fp8_tflop"] = 330.3
    with pytest.raises(CatalogError, match=r"key `gpus\.1\.fp8_tflop`: unknown key; did you mean `fp8_tflops`\?"):
        validate(document, "gpus.schema.json", "gpus.json")


def test_broken_model_entry_is_rejected_naming_the_key() -> None:
    document = _data("models.json")
    qwen = next(m for m in document["models"] if m["id"] == "qwen3.6-27b")
    del qwen["sizes"]["kv_bytes_per_token"]
    with pytest.raises(CatalogError, match=r"key `models\.\d+\.sizes\.kv_bytes_per_token`: missing \(required\)"):
        validate(document, "models.schema.json", "models.json")
    document = _data("models.json")
    deepseek = next(m for m in document["models"] if m["id"] == "deepseek-v3")
    deepseek["attention"]["kind"] = "mha"
    with pytest.raises(CatalogError, match=r"key `models\.\d+\.attention\.kind`: 'mha' is not one of 'gqa', 'mla'"):
        validate(document, "models.schema.json", "models.json")


def test_gpu_without_reported_memory_needs_a_nominal_figure() -> None:
    document = _data("gpus.json")
    spark = next(g for g in document["gpus"] if g["id"] == "dgx-spark")
    assert spark["memory_mib"] is None  # docs/gpus.md#memory: "Not Supported" / [N/A]
    del spark["nominal_memory_gb"]
    with pytest.raises(CatalogError, match="nominal_memory_gb"):
        validate(document, "gpus.schema.json", "gpus.json")


# --- GPUs: docs/gpus.md#sources ---------------------------------------------------------------------

#: id -> (nvidia-smi MiB or None, GB/s, dense BF16 TFLOPS, FP8 tensor cores, dense FP8 TFLOPS or None)
GPU_TABLE: dict[str, tuple[int | None, float, float, bool, float | None]] = {
    "rtx-3090": (24576, 936, 71, False, None),
    "rtx-4090": (24564, 1008, 165.2, True, 330.3),
    "rtx-5090": (32607, 1792, 209.5, True, 419),
    "rtx-a6000": (49140, 768, 154.8, False, None),
    "l4": (23034, 300, 121, True, 242),
    "l40s": (46068, 864, 362, True, 733),
    "a10g": (23028, 600, 70, False, None),
    "a100-40g": (40960, 1555, 312, False, None),
    "a100-80g": (81920, 2039, 312, False, None),
    "h100-pcie": (81559, 2000, 756, True, 1513),
    "h100-sxm": (81559, 3350, 989, True, 1979),
    "h200": (143771, 4800, 989, True, 1979),
    "b200": (183359, 7700, 2250, True, 4500),
    "mi300x": (196608, 5300, 1307.4, True, 2614.9),
    "mi325x": (None, 6000, 1307.4, True, 2614.9),
    "dgx-spark": (None, 273, 125, True, None),
    "rtx-pro-6000": (97887, 1792, 503.8, True, 1007.6),
}


@pytest.mark.parametrize("gpu_id", sorted(GPU_TABLE))
def test_gpu_numbers_match_catalog_md(gpu_id: str) -> None:
    entry = _gpus()[gpu_id]
    memory, bandwidth, bf16, fp8, fp8_tflops = GPU_TABLE[gpu_id]
    assert (entry["memory_mib"], entry["bandwidth_gbs"], entry["bf16_tflops"], entry["fp8"], entry["fp8_tflops"]) == (
        memory, bandwidth, bf16, fp8, fp8_tflops)


def test_every_catalog_md_gpu_is_shipped() -> None:
    # the GPUs the sources cover; apple-m3-ultra is left out on purpose (no CUDA name, no fixed memory, no TFLOPS)
    assert set(_gpus()) == {*GPU_TABLE, "gh200"}


def test_uncertain_figures_are_marked() -> None:
    # §1.1 "(?)": A10G BF16, GH200 memory, DGX Spark BF16, RTX 5090 FP8 (D/?)
    gpus = _gpus()
    assert "bf16_tflops" in gpus["a10g"]["uncertain"]
    assert "memory_mib" in gpus["gh200"]["uncertain"]
    assert "bf16_tflops" in gpus["dgx-spark"]["uncertain"]
    assert "fp8_tflops" in gpus["rtx-5090"]["uncertain"]
    assert "uncertain" not in gpus["h100-sxm"]


def test_ecc_on_figure_is_fifteen_sixteenths() -> None:
    # §1.1 note: "ECC on GDDR cards takes 1/16 of memory", 49140 x 15/16 ~ 46068 (RTX A6000)
    a6000 = _gpus()["rtx-a6000"]
    assert a6000["memory_mib_ecc_on"] == 46068
    assert abs(a6000["memory_mib"] * 15 / 16 - a6000["memory_mib_ecc_on"]) < 2


def test_every_source_key_is_defined_in_the_docs() -> None:
    """Each GPU entry's source keys are the ones docs/gpus.md#sources says where to check."""
    keys = {"G-llmc", "G-smi", "G-klock", "G-hpctech", "G-anand", "G-waredb", "G-hmc", "G-5090", "G-3090", "G-a6000",
            "G-l4", "G-l40s", "G-a10g", "G-gh200", "G-b200", "G-amd", "G-spark", "G-m3u", "GCP-accelerators", "derived"}
    sources = (Path(__file__).resolve().parents[1] / "docs" / "gpus.md").read_text(encoding="utf-8").split("## Sources")[1]
    defined = {key.strip() for row in re.findall(r"^\| ([^|]+) \|", sources, re.MULTILINE) for key in row.split(",")}
    assert keys <= defined, sorted(keys - defined)
    for gpu in _gpus().values():
        fields = set(gpu)
        for source in gpu["source"]:
            assert source["key"] in keys, (gpu["id"], source)
            assert set(source.get("for", ())) <= fields, (gpu["id"], source)


def test_gpu_object_carries_the_new_fields() -> None:
    h100 = SHIPPED.find_gpu("NVIDIA H100 80GB HBM3")
    assert h100 is not None and h100.fp8_tflops == 1979 and h100.compute_capability == "9.0"
    assert "NVIDIA-H100-80GB-HBM3" in h100.names and h100.memory_reported
    a10g = SHIPPED.find_gpu("a10g")
    assert a10g is not None and a10g.fp8_tflops is None and "bf16_tflops" in a10g.uncertain
    spark = SHIPPED.find_gpu("NVIDIA GB10")
    # unified memory: nvidia-smi reports none, the nominal 128 GB (as GiB) stands in
    assert spark is not None and spark.id == "dgx-spark" and spark.memory_mib == 128 * 1024 and not spark.memory_reported


@pytest.mark.parametrize(("name", "expected"), [
    # §1.2 names as nvidia-smi / torch / GFD / GKE print them
    ("NVIDIA GeForce RTX 4090", "rtx-4090"),
    ("GeForce RTX 4090", "rtx-4090"),
    ("NVIDIA RTX A6000", "rtx-a6000"),
    ("NVIDIA L40S-48C", "l40s"),
    ("NVIDIA A100 80GB PCIe", "a100-80g"),
    ("A100-SXM4-80GB", "a100-80g"),
    ("nvidia-tesla-a100", "a100-40g"),
    ("nvidia_a100-sxm4-40gb", "a100-40g"),
    ("nvidia-h100-mega-80gb", "h100-sxm"),
    ("nvidia-h200-141gb", "h200"),
    ("NVIDIA H200 NVL", "h200"),
    ("NVIDIA-GH200-480GB", "gh200"),
    ("NVIDIA B200", "b200"),
    ("AMD Instinct MI325X", "mi325x"),
    ("AMD Instinct MI300X", "mi300x"),
    ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "rtx-pro-6000"),
    ("NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", "rtx-pro-6000"),
    ("nvidia-rtx-pro-6000", "rtx-pro-6000"),
    ("NVIDIA-L4-SHARED", "l4"),
])
def test_names_map_to_ids(name: str, expected: str) -> None:
    gpu = SHIPPED.find_gpu(name)
    assert gpu is not None and gpu.id == expected


@pytest.mark.parametrize("name", [
    # §1.2: different parts whose names contain a catalogued one
    "NVIDIA H100 NVL", "NVIDIA GeForce RTX 3090 Ti", "NVIDIA RTX 6000 Ada Generation", "NVIDIA L40", "NVIDIA A10",
    "NVIDIA GB200", "AMD Instinct MI300A", "NVIDIA GeForce RTX 5090 Laptop GPU", "NVIDIA",
])
def test_other_parts_are_not_mistaken(name: str) -> None:
    assert SHIPPED.find_gpu(name) is None


def test_mig_slice_gives_the_slice_memory() -> None:
    # §1.2 rule 3: "When a MIG profile is present, VRAM is the slice size (1g.10gb ~ 9.7 GB)"
    gpu = SHIPPED.find_gpu("NVIDIA-A100-80GB-PCIe-MIG-1g.10gb")
    assert gpu is not None and gpu.id == "a100-80g" and gpu.mig_profile == "1g.10gb"
    assert gpu.memory_mib == 10 * 1024 and not gpu.memory_reported


# --- models: docs/models.md#sources and #sizes -------------------------------------------------------

def test_qwen36_27b_worked_values() -> None:
    sizes = model_sizes("qwen3.6-27b")
    assert sizes is not None
    # §2.3: 16 x 2 x 4 x 256 x 2 = 64 KiB KV/token, +4 KiB MTP; 144 MiB GDN state + ~3 MiB conv
    assert sizes.kv_bytes_per_token == 64 * KIB and sizes.mtp_kv_bytes_per_token == 4 * KIB
    assert sizes.recurrent_state_mib == 147
    assert (sizes.layers, sizes.full_attention_layers, sizes.hidden_size) == (64, 16, 5120)
    # §2.1: MTP head ~0.42B, key text_config.mtp_num_hidden_layers
    assert sizes.mtp_params_b == 0.42
    info = SHIPPED.find_model("Qwen/Qwen3.6-27B-FP8")
    assert info is not None and info.mtp_config_key == "text_config.mtp_num_hidden_layers"
    assert info.mtp_less_variants == ("qwen3.6-27b-mlx-community",)


#: id -> (KV bytes/token, MTP KV bytes/token, recurrent state MiB) from §2.3
KV_TABLE: dict[str, tuple[int, int, float]] = {
    "qwen3.6-27b": (16 * 2 * 4 * 256 * 2, 4 * KIB, 147),
    "qwen3.6-35b-a3b": (10 * 2 * 2 * 256 * 2, 2 * KIB, 61.4),
    "qwen3-next-80b-a3b": (12 * 2 * 2 * 256 * 2, 2 * KIB, 73.7),
    "qwen3.5-397b-a17b": (15 * 2 * 2 * 256 * 2, 2 * KIB, 183.2),
    "deepseek-v3": (61 * 576 * 2, 576 * 2, 0),
    "glm-4.5": (92 * 2 * 8 * 128 * 2, 4 * KIB, 0),
    "glm-4.7": (92 * 2 * 8 * 128 * 2, 4 * KIB, 0),
    "glm-4.5-air": (46 * 2 * 8 * 128 * 2, 4 * KIB, 0),
    "mimo-7b": (36 * 2 * 8 * 128 * 2, 4 * KIB, 0),
}


@pytest.mark.parametrize("model_id", sorted(KV_TABLE))
def test_kv_and_state_match_catalog_md(model_id: str) -> None:
    sizes = model_sizes(model_id)
    assert sizes is not None
    assert (sizes.kv_bytes_per_token, sizes.mtp_kv_bytes_per_token, sizes.recurrent_state_mib) == KV_TABLE[model_id]


@pytest.mark.parametrize("model_id", sorted(KV_TABLE))
def test_kv_follows_from_the_architecture_fields(model_id: str) -> None:
    """§2.3 formula: GQA 2 x full-attention layers x KV heads x head_dim x 2 B; MLA layers x latent x 2 B."""
    entry = _models()[model_id]
    attention, layers = entry["attention"], entry["layers"]
    per_layer = attention["kv_heads"] * attention["head_dim"] * 2 * (1 if attention["kind"] == "mla" else 2)
    assert entry["sizes"]["kv_bytes_per_token"] == layers["full_attention"] * per_layer
    assert entry["sizes"]["mtp_kv_bytes_per_token"] == per_layer * entry["mtp"]["layers"]
    if attention["kind"] == "mla":
        assert attention["head_dim"] == attention["kv_lora_rank"] + attention["rope_head_dim"]


@pytest.mark.parametrize("model_id", ["qwen3.6-27b", "qwen3.6-35b-a3b", "qwen3-next-80b-a3b", "qwen3.5-397b-a17b"])
def test_recurrent_state_follows_from_the_gdn_heads(model_id: str) -> None:
    """§2.3: GDN layers x V-heads x 128 x 128 x 4 B (fp32 state) + conv state (kernel-1 x conv dim x 2 B)."""
    entry = _models()[model_id]
    gdn, layers = entry["linear_attention"], entry["layers"]["linear_attention"]
    state = layers * gdn["value_heads"] * gdn["head_dim"] ** 2 * 4
    conv_dim = 2 * gdn["key_heads"] * gdn["head_dim"] + gdn["value_heads"] * gdn["head_dim"]
    conv = layers * (gdn["conv_kernel"] - 1) * conv_dim * 2
    assert entry["sizes"]["recurrent_state_mib"] == pytest.approx((state + conv) / MIB, abs=0.25)  # the sources round conv
    assert entry["layers"]["full_attention"] * 4 == entry["layers"]["total"]  # 3 GDN : 1 attention


def test_deepseek_v3_fp8_checkpoint() -> None:
    sizes = model_sizes("deepseek-v3")
    assert sizes is not None and sizes.checkpoint_dtype == "fp8"
    # §2.1: 671B + 14B MTP; §3.1 c ~0.04; §3.2 second-token acceptance 85-90%
    assert (sizes.params_b, sizes.active_params_b, sizes.mtp_params_b) == (671, 37, 14)
    assert sizes.draft_cost == 0.04 and 0.85 <= (sizes.acceptance or 0) <= 0.9
    assert sizes.experts is not None and (sizes.experts.count, sizes.experts.top_k, sizes.experts.shared) == (256, 8, 1)
    # routed share (D): 58 MoE layers x 8 experts x 3 x 7168 x 2048 of 37B active
    assert sizes.experts.routed_share == pytest.approx(58 * 8 * 3 * 7168 * 2048 / 37e9, abs=0.01)
    for name in ("deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-V3.1", "deepseek-ai/DeepSeek-V3-0324"):
        info = SHIPPED.find_model(name)
        assert info is not None and info.id == "deepseek-v3" and info.mtp_config_key == "num_nextn_predict_layers"
    gguf = SHIPPED.find_model("unsloth/DeepSeek-R1-GGUF")
    assert gguf is not None and gguf.mtp_layers == 0


#: id -> (routed experts/token x MoE layers x 3 x hidden x expert dim, active params) for the routed share (D)
ROUTED: dict[str, tuple[float, float]] = {
    "qwen3.6-35b-a3b": (8 * 40 * 3 * 2048 * 512, 3e9),
    "qwen3-next-80b-a3b": (10 * 48 * 3 * 2048 * 512, 3e9),
    "qwen3.5-397b-a17b": (10 * 60 * 3 * 4096 * 1024, 17e9),
    "glm-4.5": (8 * 89 * 3 * 5120 * 1536, 32e9),
    "glm-4.7": (8 * 89 * 3 * 5120 * 1536, 32e9),
    "glm-4.5-air": (8 * 45 * 3 * 4096 * 1408, 12e9),
}


@pytest.mark.parametrize("model_id", sorted(ROUTED))
def test_routed_share_is_the_derived_one(model_id: str) -> None:
    sizes = model_sizes(model_id)
    routed, active = ROUTED[model_id]
    assert sizes is not None and sizes.experts is not None
    assert sizes.experts.routed_share == pytest.approx(routed / active, abs=0.01)


def test_draft_costs_match_section_3_1() -> None:
    # §3.1 draft-cost ratios c
    expected = {"qwen3.6-27b": 0.06, "qwen3.6-35b-a3b": 0.19, "qwen3-next-80b-a3b": 0.13, "deepseek-v3": 0.04,
                "glm-4.5": 0.04, "mimo-7b": 0.11}
    for model_id, cost in expected.items():
        sizes = model_sizes(model_id)
        assert sizes is not None and sizes.draft_cost == cost, model_id


def test_mtp_fields_are_consistent() -> None:
    models = _models()
    for entry in models.values():
        mtp = entry.get("mtp")
        if mtp is not None:
            assert mtp["layers"] == entry["mtp_layers"], entry["id"]
            if "head_params_b" in mtp and "sizes" in entry:
                assert mtp["head_params_b"] == entry["sizes"]["mtp_params_b"], entry["id"]
        for variant in entry.get("mtp_less_variants", ()):
            # a known MTP-less repack: a catalogued entry of the same family with no MTP layers
            assert models[variant]["mtp_layers"] == 0 and models[variant]["family"] == entry["family"], variant


def test_mtp_config_keys() -> None:
    # §2.1 / §2.2: Qwen3.5/3.6 under text_config, DeepSeek/GLM/MiMo num_nextn_predict_layers, Qwen3-Next none
    models = _models()
    assert models["qwen3.6-35b-a3b"]["mtp"]["config_key"] == "text_config.mtp_num_hidden_layers"
    assert models["qwen3-next-80b-a3b"]["mtp"]["config_key"] is None
    for model_id in ("deepseek-v3", "glm-4.5", "glm-4.5-air", "glm-4.7", "mimo-7b"):
        assert models[model_id]["mtp"]["config_key"] == "num_nextn_predict_layers"


@pytest.mark.parametrize(("name", "expected"), [
    ("zai-org/GLM-4.5-Air-FP8", "glm-4.5-air"),
    ("zai-org/GLM-4.5", "glm-4.5"),
    ("zai-org/GLM-4.6", "glm-4.6"),
    ("zai-org/GLM-4.7-FP8", "glm-4.7"),
    ("zai-org/GLM-4.7-Flash", "glm-4.7-flash"),
    ("Qwen/Qwen3.5-397B-A17B-FP8", "qwen3.5-397b-a17b"),
    ("Qwen/Qwen3-Next-80B-A3B-Thinking", "qwen3-next-80b-a3b"),
    ("XiaomiMiMo/MiMo-7B-RL", "mimo-7b"),
])
def test_model_names_map_to_ids(name: str, expected: str) -> None:
    info = SHIPPED.find_model(name)
    assert info is not None and info.id == expected
