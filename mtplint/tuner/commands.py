"""Serve commands with MTP for vLLM, SGLang and llama-server -- the ones the tuner prints.

Every command is built for one engine version (default: the newest one mtplint models, the version
``mtplint check`` assumes when nothing pins it) and lints clean with ``mtplint check`` for that
version and for an unpinned one (tests/test_tuner_commands.py). What each engine needs with MTP:

* **vLLM** -- ``--speculative-config '{"method":"mtp","num_speculative_tokens":k}'``: ``mtp`` is the
  method every vLLM with MTP normalises the ``*_mtp`` aliases to (MTP401; vLLM 0.33.0
  ``vllm/config/speculative.py`` ``SpeculativeConfig.__post_init__``), and
  ``num_speculative_tokens`` is required with it (MTP109). Prefix caching drops the last matched
  block with EAGLE-style drafting (MTP102, vLLM #38182): from 0.33 lookahead block hashes avoid the
  drop, 0.30-0.32 take ``"disable_eagle_block_drop": true`` (which keeps prefix caching), older
  versions get ``--no-enable-prefix-caching`` (the seed benchmark's configuration).
* **SGLang** -- ``--speculative-algorithm NEXTN`` (the Qwen3.6 model card's spelling) with
  ``--speculative-num-steps k``, ``--speculative-eagle-topk 1`` and ``--speculative-num-draft-tokens
  k+1`` (topk 1 needs draft tokens = steps + 1, MTP507; the card's low-latency profile is 3 / 1 / 4).
  0.5.5-0.5.10.x run the overlap scheduler with speculation only with ``SGLANG_ENABLE_SPEC_V2=1``
  (MTP103); hybrids (Qwen3-Next/3.5/3.6) before 0.5.14 need ``--mamba-scheduler-strategy
  extra_buffer`` to keep the radix cache (MTP111).
* **llama.cpp** -- ``--spec-type draft-mtp --spec-draft-n-max k`` (b9180+, PR #22673; MTP403/404 for
  the old spellings) with ``-np`` slots (one for a single user: MTP's parallel-slot path is the
  least tested, MTP304; unsloth's measurements in https://github.com/unslothai/unsloth/pull/8172 and
  the open https://github.com/ggml-org/llama.cpp/issues/28286).
"""

from __future__ import annotations

import json
import shlex

from mtplint.catalogs import SHIPPED, Catalogs
from mtplint.records import FrozenRecord
from mtplint.versions import compare

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

#: the newest versions mtplint's engine models know (``Engine.known_versions()[-1]``; kept here as
#: data so building a command does not load the flag tables -- tests check they agree)
NEWEST = {"vllm": "0.33.0", "sglang": "0.5.23", "llama.cpp": "b10470"}

#: vLLM: lookahead block hashes make the block drop unnecessary (MTP102; vLLM 0.33.0
#: ``VllmConfig.num_hash_lookahead_tokens``, ``vllm/config/vllm.py``)
VLLM_LOOKAHEAD_HASHES = "0.33.0"
#: vLLM: ``disable_eagle_block_drop`` in the speculative config (PR #53388)
VLLM_BLOCK_DROP_KEY = "0.30.0"
#: SGLang: ``SGLANG_ENABLE_SPEC_V2`` exists from 0.5.5 and defaults to true from 0.5.11 (MTP103)
SGLANG_SPEC_V2_ADDED, SGLANG_SPEC_V2_DEFAULT = "0.5.5", "0.5.11"
#: SGLang: ``--mamba-scheduler-strategy`` from 0.5.7; ``auto`` keeps the radix cache with speculation
#: from 0.5.14 (MTP111; engines/sglang.py MAMBA_STRATEGY_RENAMED)
SGLANG_MAMBA_STRATEGY_ADDED, SGLANG_MAMBA_AUTO_OK = "0.5.7", "0.5.14"
#: llama.cpp: ``--spec-type draft-mtp`` from b9180 (PR #22673)
LLAMA_MTP_BUILD = "b9180"


class ServeCommand(FrozenRecord):
    """One server launch: the argv, the environment it needs, and the engine version it is for."""

    __slots__ = ("engine", "argv", "env", "version")
    engine: Final[str]
    argv: Final[tuple[str, ...]]
    env: Final[tuple[tuple[str, str], ...]]
    version: Final[str]

    def __init__(self, engine: str, argv: tuple[str, ...], env: tuple[tuple[str, str], ...] = (),
                 version: str = "") -> None:
        self.engine = engine
        self.argv = argv
        self.env = env
        self.version = version

    @property
    def command(self) -> str:
        """The command as one shell line, environment assignments first (:meth:`shell`)."""
        return self.shell()

    def shell(self, multiline: bool = False) -> str:
        """The command for a POSIX shell, ``VAR=value program args...``; ``multiline`` puts each flag
        (with its value) on a line of its own, joined by backslash continuations."""
        prefix = "".join(f"{name}={shlex.quote(value)} " for name, value in self.env)
        if not multiline:
            return prefix + shlex.join(self.argv)
        return prefix + " \\\n  ".join(self._lines())

    def script(self) -> str:
        """A shell script that runs the server: ``export`` lines, then ``exec`` the command."""
        lines = ["#!/bin/sh", *(f"export {name}={shlex.quote(value)}" for name, value in self.env)]
        lines.append("exec " + " \\\n  ".join(self._lines()))
        return "\n".join(lines) + "\n"

    def _lines(self) -> list[str]:
        """The program (``vllm serve MODEL``, ``python -m sglang.launch_server``) on the first line,
        then one flag and its value per line."""
        words = list(self.argv)
        head = 3 if words[:2] == ["python", "-m"] else next(
            (i for i, word in enumerate(words) if i and word.startswith("-")), len(words))
        lines = [shlex.join(words[:head])]
        for word in words[head:]:
            if word.startswith("-") or len(lines) == 1 or " " in lines[-1]:
                lines.append(shlex.quote(word))
            else:
                lines[-1] += " " + shlex.quote(word)
        return lines


def _at_least(version: str, threshold: str) -> bool:
    return compare(version, threshold) >= 0


def _k(num_speculative_tokens: int | None) -> int:
    k = num_speculative_tokens or 0
    if k < 0:
        raise ValueError(f"num_speculative_tokens must be >= 0, got {k}")
    return k


def vllm_mtp_command(model: str, num_speculative_tokens: int | None, *, tensor_parallel: int = 1,
                     max_num_seqs: int | None = None, max_model_len: int | None = None,
                     gpu_memory_utilization: float | None = None, kv_cache_dtype: str | None = None,
                     quantization: str | None = None, max_cudagraph_capture_size: int | None = None,
                     port: int | None = None, version: str | None = None) -> ServeCommand:
    """``vllm serve MODEL --speculative-config '{"method":"mtp","num_speculative_tokens":k}' ...``;
    ``num_speculative_tokens`` 0 or None gives the same launch without speculation."""
    at = (version or NEWEST["vllm"]).lstrip("v")
    k = _k(num_speculative_tokens)
    argv = ["vllm", "serve", model]
    if k:
        spec: dict[str, object] = {"method": "mtp", "num_speculative_tokens": k}
        if _at_least(at, VLLM_BLOCK_DROP_KEY):
            # 0.30-0.32 drop the last matched block unless asked not to; on 0.33 the key is harmless and
            # keeps a launch moved to an older 0.3x release correct (MTP102)
            spec["disable_eagle_block_drop"] = True
        argv += ["--speculative-config", json.dumps(spec, separators=(",", ":"))]
        if not _at_least(at, VLLM_BLOCK_DROP_KEY):
            argv.append("--no-enable-prefix-caching")
    if tensor_parallel > 1:
        argv += ["--tensor-parallel-size", str(tensor_parallel)]
    if quantization:
        argv += ["--quantization", quantization]
    if kv_cache_dtype:
        argv += ["--kv-cache-dtype", kv_cache_dtype]
    if max_model_len:
        argv += ["--max-model-len", str(max_model_len)]
    if max_num_seqs:
        argv += ["--max-num-seqs", str(max_num_seqs)]
    if gpu_memory_utilization is not None:
        argv += ["--gpu-memory-utilization", f"{gpu_memory_utilization:g}"]
    if max_cudagraph_capture_size:
        argv += ["--max-cudagraph-capture-size", str(max_cudagraph_capture_size)]
    if port is not None:
        argv += ["--port", str(port)]
    return ServeCommand("vllm", tuple(argv), (), at)


def sglang_mtp_command(model: str, num_speculative_tokens: int | None, *, tensor_parallel: int = 1,
                       max_running_requests: int | None = None, context_length: int | None = None,
                       mem_fraction_static: float | None = None, kv_cache_dtype: str | None = None,
                       quantization: str | None = None, port: int | None = None,
                       version: str | None = None, catalogs: Catalogs = SHIPPED) -> ServeCommand:
    """``python -m sglang.launch_server --model-path MODEL --speculative-algorithm NEXTN ...`` with
    ``k`` steps, top-k 1 and ``k + 1`` draft tokens (and ``SGLANG_ENABLE_SPEC_V2=1`` where needed)."""
    at = (version or NEWEST["sglang"]).lstrip("v")
    k = _k(num_speculative_tokens)
    argv = ["python", "-m", "sglang.launch_server", "--model-path", model]
    env: list[tuple[str, str]] = []
    if k:
        argv += ["--speculative-algorithm", "NEXTN", "--speculative-num-steps", str(k),
                 "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", str(k + 1)]
        if _at_least(at, SGLANG_SPEC_V2_ADDED) and not _at_least(at, SGLANG_SPEC_V2_DEFAULT):
            env.append(("SGLANG_ENABLE_SPEC_V2", "1"))
        info = catalogs.find_model(model)
        if (info is not None and info.hybrid and _at_least(at, SGLANG_MAMBA_STRATEGY_ADDED)
                and not _at_least(at, SGLANG_MAMBA_AUTO_OK)):
            argv += ["--mamba-scheduler-strategy", "extra_buffer"]
    if tensor_parallel > 1:
        argv += ["--tp-size", str(tensor_parallel)]
    if quantization:
        argv += ["--quantization", quantization]
    if kv_cache_dtype:
        argv += ["--kv-cache-dtype", kv_cache_dtype]
    if context_length:
        argv += ["--context-length", str(context_length)]
    if max_running_requests:
        argv += ["--max-running-requests", str(max_running_requests)]
    if mem_fraction_static is not None:
        argv += ["--mem-fraction-static", f"{mem_fraction_static:g}"]
    if port is not None:
        argv += ["--port", str(port)]
    return ServeCommand("sglang", tuple(argv), tuple(env), at)


def llama_mtp_command(model: str, num_speculative_tokens: int | None, *, parallel: int = 1,
                      ctx_size: int | None = None, gpu_layers: int | None = None,
                      cache_type: str | None = None, port: int | None = None,
                      version: str | None = None) -> ServeCommand:
    """``llama-server -hf REPO[:QUANT] --spec-type draft-mtp --spec-draft-n-max k -np 1 ...``.

    ``model`` is a Hugging Face repo (``unsloth/Qwen3.6-27B-MTP-GGUF:Q4_K_M``: ``-hf``, which also
    fetches an ``mtp-*.gguf`` sidecar) or a ``.gguf`` path (``-m``). ``ctx_size`` is the total context
    the slots share (llama-server splits ``-c`` over ``-np`` slots)."""
    at = version or NEWEST["llama.cpp"]
    k = _k(num_speculative_tokens)
    if k and compare(at, LLAMA_MTP_BUILD) < 0:
        raise ValueError(f"llama.cpp {at} has no MTP drafting: `--spec-type draft-mtp` arrived in {LLAMA_MTP_BUILD}")
    source = ["-m", model] if model.lower().endswith(".gguf") else ["-hf", model]
    argv = ["llama-server", *source]
    if k:
        argv += ["--spec-type", "draft-mtp", "--spec-draft-n-max", str(k)]
    argv += ["-np", str(max(1, parallel))]
    if ctx_size:
        argv += ["-c", str(ctx_size)]
    if gpu_layers is not None:
        argv += ["-ngl", str(gpu_layers)]
    if cache_type:
        argv += ["-ctk", cache_type, "-ctv", cache_type]
    if port is not None:
        argv += ["--port", str(port)]
    return ServeCommand("llama.cpp", tuple(argv), (), at)


__all__ = ["NEWEST", "ServeCommand", "llama_mtp_command", "sglang_mtp_command", "vllm_mtp_command"]
