"""GPU identity for a launch: the catalog of known GPUs and the matching of names to it.

Identity comes from ``--gpu``, configuration, Kubernetes ``nvidia.com/gpu.product`` / GKE
accelerator labels, or a file directive ``# mtplint: gpu=rtx-4090x2`` -- never from free text.
Memory is what ``nvidia-smi --query-gpu=memory.total`` reports (MiB, ECC included), as
``mtplint/data/gpus.json`` records it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import cache, lru_cache

from mtplint.records import FrozenRecord, Record
from mtplint.shipped import read_package_text
from mtplint.source import Span

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final


class Gpu(FrozenRecord):
    """A GPU of the catalog (``mtplint/data/gpus.json`` or the configuration's ``gpus``)."""

    __slots__ = ("id", "name", "memory_mib", "bandwidth_gbs", "bf16_tflops", "fp8", "aliases", "fp8_tflops", "names",
                 "arch", "compute_capability", "vendor", "memory_reported", "memory_note", "uncertain", "mig_profile",
                 "excludes", "user")
    id: Final[str]
    name: Final[str]
    #: total memory as nvidia-smi reports it (MiB, ECC included); for a GPU that reports none (DGX
    #: Spark's unified memory) or whose total is not known, the nominal GB as GiB (``memory_reported``
    #: is then False); for a MIG slice, the slice's nominal size
    memory_mib: Final[int]
    bandwidth_gbs: Final[float]
    #: dense BF16 TFLOPS (FP32 accumulate on GeForce)
    bf16_tflops: Final[float]
    #: FP8 tensor cores
    fp8: Final[bool]
    aliases: Final[tuple[str, ...]]
    #: dense FP8 TFLOPS; None without FP8 tensor cores or when not published
    fp8_tflops: Final[float | None]
    #: every name NVML / ``nvidia-smi``, ``torch.cuda.get_device_name()`` and the Kubernetes label
    #: ``nvidia.com/gpu.product`` (NVIDIA GPU Feature Discovery) use for it
    names: Final[tuple[str, ...]]
    arch: Final[str | None]
    #: CUDA compute capability ("8.9") or the AMD gfx target ("gfx942")
    compute_capability: Final[str | None]
    vendor: Final[str]
    memory_reported: Final[bool]
    memory_note: Final[str | None]
    #: fields whose value is unverified (the entry's ``uncertain`` list)
    uncertain: Final[tuple[str, ...]]
    #: the MIG profile (``1g.10gb``) when the name carried one
    mig_profile: Final[str | None]
    #: names of different parts that contain one of this GPU's names (``rtx 3090 ti``)
    excludes: Final[tuple[str, ...]]
    #: added in configuration (``[[tool.mtplint.gpus]]``)
    user: Final[bool]

    def __init__(self, id: str, name: str, memory_mib: int, bandwidth_gbs: float, bf16_tflops: float, fp8: bool,
                 aliases: tuple[str, ...], fp8_tflops: float | None = None, names: tuple[str, ...] = (),
                 arch: str | None = None, compute_capability: str | None = None, vendor: str = "nvidia",
                 memory_reported: bool = True, memory_note: str | None = None, uncertain: tuple[str, ...] = (),
                 mig_profile: str | None = None, excludes: tuple[str, ...] = (), user: bool = False) -> None:
        self.id = id
        self.name = name
        self.memory_mib = memory_mib
        self.bandwidth_gbs = bandwidth_gbs
        self.bf16_tflops = bf16_tflops
        self.fp8 = fp8
        self.aliases = aliases
        self.fp8_tflops = fp8_tflops
        self.names = names
        self.arch = arch
        self.compute_capability = compute_capability
        self.vendor = vendor
        self.memory_reported = memory_reported
        self.memory_note = memory_note
        self.uncertain = uncertain
        self.mig_profile = mig_profile
        self.excludes = excludes
        self.user = user


class Hardware(Record):
    """The GPUs a launch runs on; ``gpu`` is ``None`` when the model is not known."""

    __slots__ = ("gpu", "count", "origin", "span", "product")
    gpu: Gpu | None
    count: int | None
    origin: str
    span: Span | None
    product: str | None

    def __init__(self, gpu: Gpu | None = None, count: int | None = None, origin: str = "default",
                 span: Span | None = None, product: str | None = None) -> None:
        self.gpu = gpu
        self.count = count
        self.origin = origin
        self.span = span
        self.product = product

    def to_json(self) -> dict[str, Any]:
        return {"value": self.gpu.id if self.gpu else self.product, "count": self.count, "origin": self.origin}


def gpu_from_entry(entry: dict[str, Any], *, user: bool = False) -> Gpu:
    """A catalog entry (``mtplint/data/gpus.json`` or configuration) as a :class:`Gpu`."""
    reported = entry.get("memory_mib")
    names = entry.get("names") or {}
    return Gpu(
        id=entry["id"], name=entry["name"],
        memory_mib=reported if reported is not None else round(entry["nominal_memory_gb"] * 1024),
        bandwidth_gbs=entry["bandwidth_gbs"], bf16_tflops=entry["bf16_tflops"], fp8=entry["fp8"],
        aliases=tuple(entry.get("aliases", ())), fp8_tflops=entry.get("fp8_tflops"),
        names=tuple(dict.fromkeys(name for key in ("nvidia_smi", "torch", "k8s") for name in names.get(key, ()))),
        arch=entry.get("arch"), compute_capability=entry.get("compute_capability"), vendor=entry.get("vendor", "nvidia"),
        memory_reported=reported is not None, memory_note=entry.get("memory_note"),
        uncertain=tuple(entry.get("uncertain", ())), excludes=tuple(entry.get("excludes", ())), user=user,
    )


@cache
def shipped_gpu_entries() -> tuple[dict[str, Any], ...]:
    """The entries of ``mtplint/data/gpus.json``; a run's catalog adds its configuration's on top
    (:class:`mtplint.catalogs.Catalogs`)."""
    data = json.loads(read_package_text("data", "gpus.json"))
    return tuple(data["gpus"])


@cache
def _mig() -> re.Pattern[str]:
    """A MIG profile suffix (``-MIG-1g.10gb``: GPU Feature Discovery appends the profile to
    ``nvidia.com/gpu.product`` with the ``single`` MIG strategy, and ``-SHARED`` after it when the
    GPU is time-sliced: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-sharing.html)."""
    return re.compile(r"[-_ ]mig[-_ ]?(\d+)g\.(\d+)gb$", re.IGNORECASE)


@cache
def _shared() -> re.Pattern[str]:
    """A GFD time-slicing suffix (``-SHARED``:
    https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-sharing.html)."""
    return re.compile(r"[-_ ]shared$", re.IGNORECASE)


def _may_hold(name: str, word: str) -> bool:
    """Whether ``name`` may hold the lower-case ASCII ``word`` in any case: an ASCII name is told by
    lower case alone (no expression to compile: most GPU names have no suffix), any other may by
    Unicode case folding."""
    return not name.isascii() or word in name.lower()


def _mig_profile(name: str) -> re.Match[str] | None:
    return _mig().search(name) if _may_hold(name, "mig") else None


def _without_suffixes(name: str) -> str:
    """``name`` without a MIG profile, then without a ``-SHARED`` suffix."""
    if _may_hold(name, "mig"):
        name = _mig().sub("", name)
    if _may_hold(name, "shared"):
        name = _shared().sub("", name)
    return name


@lru_cache(maxsize=4096)  # each lookup normalises every catalog name: the same few hundred each time
def _normalise(name: str) -> str:
    """A name as compared: lower case, ``-``/``_`` as spaces, no vendor words (``nvidia``,
    ``geforce``, ``tesla``: nvidia-smi, torch and the Kubernetes labels differ in them)."""
    text = _without_suffixes(name.strip()).lower()
    text = re.sub(r"[-_]+", " ", text)
    text = re.sub(r"\b(nvidia|geforce|tesla)\b", " ", text)
    return " ".join(text.split())


def _contains(text: str, phrase: str) -> bool:
    """Whether ``phrase`` is in ``text`` as whole words: at its start or after a space, and at its
    end or before one (normalised texts: no line breaks)."""
    return bool(phrase) and f" {phrase} " in f" {text} "


def find_gpu_in(gpus: Sequence[Gpu], name: str) -> Gpu | None:
    """Map an id (``rtx-4090``), a k8s label value (``NVIDIA-GeForce-RTX-4090``, ``nvidia-h100-80gb``)
    or an nvidia-smi / torch name to a GPU of ``gpus`` (a catalog, configured entries first).

    A name equal to one of a GPU's names wins; otherwise the longest name contained in the text
    does (so ``gh200`` beats ``h200``, ``a100 80gb`` beats ``a100``), skipping a GPU when the text
    names a different part that contains its name (``h100 nvl``, ``rtx 3090 ti``). A MIG suffix
    gives the slice's memory, not the card's; ``-SHARED`` is dropped.
    """
    text = name.strip()
    mig = _mig_profile(text)
    found = _match(text, gpus)
    if found is None or mig is None:
        return found
    slice_gib = int(mig.group(2))
    # the profile's nominal size (1g.10gb reads ~9.7 GB): an upper bound of the slice's memory
    return Gpu(found.id, found.name, slice_gib * 1024, found.bandwidth_gbs, found.bf16_tflops, found.fp8, found.aliases,
               found.fp8_tflops, found.names, found.arch, found.compute_capability, found.vendor,
               memory_reported=False, memory_note=found.memory_note, uncertain=found.uncertain,
               mig_profile=f"{mig.group(1)}g.{mig.group(2)}gb", excludes=found.excludes, user=found.user)


def _match(name: str, gpus: Sequence[Gpu]) -> Gpu | None:
    wanted = _without_suffixes(name).lower()
    for gpu in gpus:
        if wanted == gpu.id:
            return gpu
    normalised = _normalise(name)
    if not normalised:
        return None
    best: tuple[int, Gpu] | None = None
    for gpu in gpus:  # user entries come first and win ties
        if any(_contains(normalised, _normalise(other)) for other in gpu.excludes):
            continue
        for candidate in (gpu.id.replace("-", " "), gpu.name, *gpu.names, *gpu.aliases):
            phrase = _normalise(candidate)
            if phrase == normalised:
                score = 10_000 + len(phrase)
            elif _contains(normalised, phrase):
                score = len(phrase)
            else:
                continue
            if best is None or score > best[0]:
                best = (score, gpu)
    return best[1] if best else None


def split_gpu_spec(spec: str) -> tuple[str, int | None]:
    """``rtx-4090x2`` -> (``rtx-4090``, 2); ``h100-sxm`` -> (``h100-sxm``, None)."""
    match = re.fullmatch(r"(.+?)(?:\s*[x\*]\s*(\d+))?", spec.strip())
    return (match.group(1), int(match.group(2))) if match and match.group(2) else (spec.strip(), None)
