"""``mtplint recommend`` and ``mtplint crossover``: what they do (their options are in
:mod:`mtplint.argument_parser`, so that ``--help`` and ``--version`` load none of the tuner's models).

:mod:`mtplint.cli` imports this module only to run one of these commands.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mtplint.catalogs import SHIPPED, Catalogs
from mtplint.config import Overrides, command_configuration
from mtplint.config_files import ConfigError
from mtplint.tuner.advisor import VLLM_MEMORY_FRACTION, recommend
from mtplint.tuner.batching import (
    MAX_BATCH,
    crossover,
    describe_losses,
    losses_cell,
    losses_json,
    resolve_gpu,
    resolve_model,
)
from mtplint.tuner.plot import crossover_svg
from mtplint.tuner.sizes import GGUF_BITS, WeightFormat, model_sizes, weight_format

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

#: batch sizes the crossover table shows
TABLE_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
EXIT_CLEAN, EXIT_ERROR = 0, 2


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        # the configuration check would read here: its GPU, engine versions, GPUs and models
        shared, values = command_configuration(Path.cwd(), Overrides(gpu=args.gpu))
        gpu = shared.gpu
        if gpu is None:
            raise ValueError("no GPU: pass --gpu (e.g. --gpu rtx-4090) or set `gpu` in mtplint.toml / "
                             "[tool.mtplint] of pyproject.toml")
        if args.command == "recommend":
            return _recommend(args, gpu, shared.engine_versions, values.get("objective", "latency"),
                              shared.catalogs, out)
        return _crossover(args, gpu, shared.catalogs, out)
    except (ValueError, ConfigError) as error:
        err.write(f"mtplint: error: {error}\n")
        return EXIT_ERROR


# --- recommend ----------------------------------------------------------------------------------

def _recommend(args: argparse.Namespace, gpu: str, versions: dict[str, str], objective: str, catalogs: Catalogs,
               out: TextIO) -> int:
    result = recommend(use_case=args.use_case, objective=args.objective or objective, gpu=gpu, model=args.model,
                       engine=args.engine, concurrency=args.concurrency, kv_cache_dtype=args.kv_cache_dtype,
                       quantization=args.quantization, tensor_parallel=args.tensor_parallel,
                       max_model_len=args.max_model_len, engine_version=args.engine_version, max_k=args.max_k,
                       engine_versions=versions, catalogs=catalogs)
    if args.format == "json":
        out.write(json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n")
        return EXIT_CLEAN
    if result.enable:
        verdict = f"MTP: enable, k={result.num_speculative_tokens}"
    else:
        verdict = "MTP: refused" if result.refused else "MTP: leave off"
    lines = [f"{verdict}  ({result.model} on {result.gpu}, {result.engine} {result.engine_version}, "
             f"{result.use_case.value}, {result.objective.value}, batch {result.batch})",
             f"  why: {result.reason}"]
    if result.gains:
        gains = ", ".join(f"k={k} {gain:.2f}x" for k, gain in result.gains.items())
        lines.append(f"  speed-up at batch {result.batch}: {gains}")
    if result.crossover is not None:
        cross = result.crossover
        known = "" if cross.acceptance_known else " (default)"
        lines.append(f"  crossover (k={cross.draft_tokens}): batch {cross.batch} ({describe_losses(cross)}); "
                     f"{cross.gain_at_one:.2f}x at batch 1; "
                     f"acceptance {cross.acceptance:g}{known}; weights {cross.weights.label}")
    if result.memory is not None:
        memory = result.memory
        lines.append(f"  memory (GiB): {memory.terms_text()} = {memory.resident:.1f} of {memory.budget:.1f} "
                     f"({memory.budget_text()}); {memory.left:.1f} left for the KV cache")
    lines.extend(f"  note: {note}" for note in result.notes)
    # the deployment as asked for does not fit: the plain command is there to adapt, not to run
    lines.append("  command:" if result.fits else "  command (as asked for; it does not fit this GPU either):")
    lines.extend("    " + line for line in result.serve_command.shell(multiline=True).splitlines())
    lines.extend(f"  see: {url}" for url in result.references)
    out.write("\n".join(lines) + "\n")
    return EXIT_CLEAN


# --- crossover ----------------------------------------------------------------------------------

def _weights(text: str | None, model: str | None, sizes: Any) -> Any:
    if text is None:
        return weight_format(model, None, sizes)
    key = text.strip().lower().replace("_", "-")
    named = {"bf16": WeightFormat("BF16", 2.0), "fp16": WeightFormat("BF16", 2.0), "fp8": WeightFormat("FP8", 1.0, fp8=True),
             "4-bit": weight_format("x-4bit", None, None), "int4": weight_format("x-4bit", None, None),
             "awq": weight_format("x-awq", None, None), "gptq": weight_format("x-gptq", None, None),
             "fp4": weight_format("x-fp4", None, None), "nvfp4": weight_format("x-nvfp4", None, None),
             "8-bit": weight_format("x-int8", None, None), "int8": weight_format("x-int8", None, None)}
    if key in named:
        return named[key]
    tag = text.strip().upper().removeprefix("UD-")
    if tag in GGUF_BITS:
        return WeightFormat(f"GGUF {tag}", GGUF_BITS[tag] / 8)
    raise ValueError(f"unknown weight format {text!r} (bf16, fp8, 4-bit, awq, gptq, fp4, 8-bit, or a GGUF preset "
                     f"such as Q4_K_M)")


def crossover_table(gpu: str, model: str | None, engines: tuple[str, ...], weights: str | None = None,
                    max_k: int = 3, tensor_parallel: int | None = None,
                    acceptance: float | None = None, catalogs: Catalogs = SHIPPED) -> list[dict[str, Any]]:
    """One row per engine and k: the crossover batch and the speed-up at :data:`TABLE_BATCHES`
    (``gpu`` and ``model`` looked up in ``catalogs``, by default the shipped ones)."""
    if max_k < 1:
        raise ValueError(f"--max-k must be >= 1, got {max_k}")
    card, count = resolve_gpu(gpu, catalogs)
    sizes = model_sizes(resolve_model(model, catalogs).id, catalogs) if model else None
    form = _weights(weights, model, sizes)
    tp = tensor_parallel or count or 1
    rows = []
    for engine in engines:
        for k in range(1, max_k + 1):
            result = crossover(card, sizes, k, form, engine=engine, acceptance=acceptance, tensor_parallel=tp)
            rows.append({"engine": engine, "k": k, "crossover": result, "batch": result.batch,
                         "gain_at_one": result.gain_at_one,
                         "speedup": {b: result.speedup_at(b) for b in TABLE_BATCHES}})
    return rows


def weights_fit_note(rows: list[dict[str, Any]]) -> str | None:
    """A note when the weights alone exceed what the GPUs give the engine (vLLM's default memory
    fraction): the table then describes a deployment that cannot start as it stands."""
    first = rows[0]["crossover"]
    if first.model is None:
        return None
    weights_gib = first.model.params_b * 1e9 * first.weights.bytes_per_param / 2**30
    budget_gib = first.gpu.memory_mib * VLLM_MEMORY_FRACTION * first.tensor_parallel / 1024
    if weights_gib < budget_gib:
        return None
    gpus = f"{first.tensor_parallel} x {first.gpu.id}" if first.tensor_parallel > 1 else first.gpu.id
    return (f"the {first.weights.label} weights (~{weights_gib:.0f} GiB) do not fit {gpus} ({budget_gib:.0f} GiB at "
            f"{VLLM_MEMORY_FRACTION:g} of its memory): these speed-ups are for a deployment that cannot start like "
            "this; see --weights and --tensor-parallel")


def _crossover(args: argparse.Namespace, gpu: str, catalogs: Catalogs, out: TextIO) -> int:
    engines = (args.engine,) if args.engine else ("vllm", "llama.cpp")
    rows = crossover_table(gpu, args.model, engines, args.weights, args.max_k, args.tensor_parallel,
                           args.acceptance, catalogs)
    first: Any = rows[0]["crossover"]
    if args.plot:
        title = f"MTP speed-up by batch: {args.model or 'dense 8B'} on {first.gpu.id} ({first.weights.label})"
        Path(args.plot).write_text(crossover_svg([row["crossover"] for row in rows], title), encoding="utf-8")
    if args.format == "json":
        data = {"gpu": first.gpu.id, "model": args.model, "weights": first.weights.label,
                "acceptance": first.acceptance, "acceptance_known": first.acceptance_known,
                "weights_fit": weights_fit_note(rows) is None,
                "rows": [{"engine": row["engine"], "k": row["k"], "crossover_batch": row["batch"],
                          "losing_ranges": losses_json(row["crossover"]),
                          "speedup": {str(b): round(v, 3) for b, v in row["speedup"].items()}} for row in rows]}
        out.write(json.dumps(data, indent=2) + "\n")
        return EXIT_CLEAN
    known = "" if first.acceptance_known else ", a default"
    out.write(f"MTP speed-up by batch size: {args.model or 'a dense 8B model (no --model)'} on {first.gpu.id}, "
              f"{first.weights.label} weights, acceptance {first.acceptance:g}{known}\n")
    header = ["engine", "k", "loses at"] + [f"b={b}" for b in TABLE_BATCHES]
    table = [header]
    for row in rows:
        table.append([row["engine"], str(row["k"]), losses_cell(row["crossover"]),
                      *(f"{row['speedup'][b]:.2f}" for b in TABLE_BATCHES)])
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    for line in table:
        out.write("  ".join(cell.rjust(width) if i else cell.ljust(width)
                            for i, (cell, width) in enumerate(zip(line, widths, strict=True))).rstrip() + "\n")
    out.write(f"loses at: the batch sizes where MTP is below 1x, followed up to {MAX_BATCH} (6+: from 6 on; none: "
              "it pays at every batch); b=N: speed-up at N concurrent sequences (model: mtplint/tuner/batching.py, "
              "speed-ups within about +-25%, the crossover within a factor of ~2)\n")
    note = weights_fit_note(rows)
    if note is not None:
        out.write(f"note: {note}\n")
    if args.plot:
        out.write(f"wrote {args.plot}\n")
    return EXIT_CLEAN
