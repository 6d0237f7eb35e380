"""GPU identity for a launch: the catalog of known GPUs and the matching of names to it.

Identity comes from ``--gpu``, configuration, Kubernetes ``nvidia.com/gpu.product`` / GKE
accelerator labels, or a file directive ``# mtplint: gpu=rtx-4090x2`` -- never from free text.
Memory is what ``nvidia-smi`` reports (MiB, ECC included), from ``research/catalog.md`` §1.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from mtplint.source import Span


@dataclass(frozen=True)
class Gpu:
    id: str
    name: str
    memory_mib: int
    bandwidth_gbs: float
    bf16_tflops: float
    fp8: bool
    aliases: tuple[str, ...]


@dataclass
class Hardware:
    """The GPUs a launch runs on; ``gpu`` is ``None`` when the model is not known."""

    gpu: Gpu | None = None
    count: int | None = None
    origin: str = "default"
    span: Span | None = None
    product: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"value": self.gpu.id if self.gpu else self.product, "count": self.count, "origin": self.origin}


@cache
def catalog() -> tuple[Gpu, ...]:
    data = json.loads(resources.files("mtplint.data").joinpath("gpus.json").read_text(encoding="utf-8"))
    return tuple(
        Gpu(
            id=entry["id"], name=entry["name"], memory_mib=entry["memory_mib"], bandwidth_gbs=entry["bandwidth_gbs"],
            bf16_tflops=entry["bf16_tflops"], fp8=entry["fp8"], aliases=tuple(entry.get("aliases", ())),
        )
        for entry in data["gpus"]
    )


def _normalise(name: str) -> str:
    text = name.lower()
    text = re.sub(r"-mig-\d+g\.\d+gb$", "", text)
    text = re.sub(r"-shared$", "", text)
    text = re.sub(r"[-_]+", " ", text)
    text = re.sub(r"\b(nvidia|geforce|tesla)\b", " ", text)
    return " ".join(text.split())


def find_gpu(name: str) -> Gpu | None:
    """Map an id (``rtx-4090``), a product label (``NVIDIA-GeForce-RTX-4090``) or an nvidia-smi name."""
    wanted = name.strip().lower()
    for gpu in catalog():
        if wanted == gpu.id:
            return gpu
    normalised = _normalise(name)
    # most specific alias first, so gh200 wins over h200 and l40s over l40
    best: tuple[int, Gpu] | None = None
    for gpu in catalog():
        for alias in (gpu.id.replace("-", " "), *gpu.aliases):
            alias_norm = _normalise(alias)
            if re.search(rf"(?:^| ){re.escape(alias_norm)}(?: |$)", normalised) and (best is None or len(alias_norm) > best[0]):
                best = (len(alias_norm), gpu)
    return best[1] if best else None


def parse_gpu_spec(spec: str) -> tuple[Gpu | None, int | None, str]:
    """``rtx-4090x2`` / ``h100-sxm`` / ``NVIDIA-H200`` -> (gpu, count, name as written)."""
    match = re.fullmatch(r"(.+?)(?:\s*[x\*]\s*(\d+))?", spec.strip())
    name, count = (match.group(1), int(match.group(2))) if match and match.group(2) else (spec.strip(), None)
    return find_gpu(name), count, name
