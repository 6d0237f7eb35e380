"""Python sources -> launches (mtplint/extract/python.py)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mtplint.extract import ExtractContext, FileLoader, Malformed, python
from mtplint.extract.launch import Launch

DATA = Path(__file__).parent / "data" / "python"


def extract_file(path: Path) -> list[Launch]:
    ctx = ExtractContext(FileLoader(path.parent))
    source = ctx.loader.load(path)
    assert source is not None
    return python.extract(source, ctx)


def extract_text(text: str, tmp_path: Path) -> list[Launch]:
    path = tmp_path / "script.py"
    path.write_text(text, encoding="utf-8")
    return extract_file(path)


def test_llm_call_with_constants() -> None:
    launches = extract_file(DATA / "offline_llm.py")
    assert len(launches) == 1  # LLMJudge and SamplingParams are not launches
    launch = launches[0]
    assert (launch.engine, launch.entry, launch.context) == ("vllm", "vllm.LLM", "vllm.LLM call in main()")
    assert launch.program == [] and launch.args == []
    assert launch.kwargs is not None
    values = {name: arg.value for name, arg in launch.kwargs.items()}
    assert values == {
        "model": "Qwen/Qwen3.6-27B",
        "speculative_config": {"method": "mtp", "num_speculative_tokens": 2},
        "tensor_parallel_size": 2,
        "max_model_len": "max_len",
        "kv_cache_dtype": "fp8",
        "gpu_memory_utilization": 0.92,
        "hf_overrides": '{"max_position_embeddings": 65536}',
    }
    assert launch.kwargs["max_model_len"].unresolved == ("max_len",)  # a parameter: never guessed
    assert all(not arg.unresolved for name, arg in launch.kwargs.items() if name != "max_model_len")
    spec = launch.kwargs["speculative_config"].span
    assert spec is not None and (spec.line, spec.column) == (8, 15)  # where the dict constant is written
    dtype = launch.kwargs["kv_cache_dtype"].span
    assert dtype is not None and (dtype.line, dtype.column) == (20, 24)
    assert launch.span is not None and (launch.span.line, launch.span.column) == (15, 11)
    assert launch.env["VLLM_USE_V1"].value.value == "1"


def test_subprocess_launcher() -> None:
    launches = extract_file(DATA / "launch_server.py")
    assert len(launches) == 1
    launch = launches[0]
    assert (launch.engine, launch.entry) == ("sglang", "python -m sglang.launch_server")
    values = [token.value for token in launch.args]
    assert values[:12] == [
        "--model-path", "Qwen/Qwen3.6-35B-A3B", "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3",
        "--speculative-eagle-topk", "1", "--port", "30000", "--mem-fraction-static", "0.85",
    ]
    # a conditional append and a parameter splat: the launch is open-ended, never guessed
    assert [token.splat for token in launch.args[12:]] == [True, True]
    steps = next(token for token in launch.args if token.value == "--speculative-num-steps")
    assert steps.span is not None and (steps.span.line, steps.span.column) == (12, 5)
    port = next(token for token in launch.args if token.value == "30000")
    assert port.span is not None and (port.span.line, port.span.column) == (18, 42)  # str(PORT)
    assert launch.env["SGLANG_ENABLE_SPEC_V2"].value.value == "1"
    assert launch.env["CUDA_VISIBLE_DEVICES"].value.value == "0,1"
    env_span = launch.env["SGLANG_ENABLE_SPEC_V2"].span
    assert env_span is not None and env_span.line == 24


def test_import_resolution(tmp_path: Path) -> None:
    launches = extract_text(
        "import sglang as sgl\n"
        "from vllm.engine.arg_utils import AsyncEngineArgs\n"
        "from vllm.engine.async_llm_engine import AsyncLLMEngine\n"
        "from mylib import LLM\n"
        "LLM(model='x', speculative_config={'method': 'mtp'})\n"
        "args = AsyncEngineArgs('Qwen/Qwen3.6-27B', enable_prefix_caching=False)\n"
        "engine = AsyncLLMEngine.from_engine_args(args)\n"
        "BASE = {'tp_size': 2}\n"
        "e = sgl.Engine(model_path='m', **BASE, **extra)\n",
        tmp_path,
    )
    assert [(launch.entry, launch.span.line if launch.span else 0) for launch in launches] == [
        ("vllm.AsyncEngineArgs", 6), ("sglang.Engine", 9)]
    engine_args, engine = launches
    assert engine_args.kwargs is not None and engine_args.kwargs["model"].value == "Qwen/Qwen3.6-27B"
    assert engine_args.kwargs["enable_prefix_caching"].value is False
    assert engine.kwargs is not None
    assert engine.kwargs["tp_size"].value == 2
    assert engine.kwargs["**extra"].unresolved == ("**extra",)
    assert any("**extra" in note for note in engine.notes)


def test_values_that_stay_unresolved(tmp_path: Path) -> None:
    launches = extract_text(
        "import os, vllm\n"
        "from config import load\n"
        "MODEL = os.environ.get('MODEL')\n"
        "K = load()\n"
        "if os.environ.get('BIG'):\n    MEM = 0.95\nelse:\n    MEM = 0.8\n"
        "SAME = 'auto'\nif K:\n    SAME = 'auto'\n"
        "llm = vllm.LLM(model=MODEL, speculative_config={'method': 'mtp', 'num_speculative_tokens': K},\n"
        "               gpu_memory_utilization=MEM, kv_cache_dtype=SAME, seed=int(os.getenv('SEED', '7')))\n",
        tmp_path,
    )
    kwargs = launches[0].kwargs
    assert kwargs is not None
    assert kwargs["model"].unresolved
    assert kwargs["speculative_config"].unresolved == ("load()",)
    assert kwargs["speculative_config"].value["method"] == "mtp"
    assert kwargs["gpu_memory_utilization"].unresolved == ("MEM",)
    assert (kwargs["kv_cache_dtype"].value, kwargs["kv_cache_dtype"].unresolved) == ("auto", ())
    assert (kwargs["seed"].value, kwargs["seed"].unresolved) == (7, ())


def test_exec_and_shell_forms(tmp_path: Path) -> None:
    launches = extract_text(
        "import asyncio, os, shlex, subprocess\n"
        "SPEC = '{\"method\": \"mtp\", \"num_speculative_tokens\": 1}'\n"
        "os.environ['VLLM_USE_V1'] = '1'\n"
        "def a():\n    os.execvp('vllm', ['vllm', 'serve', 'Qwen/Qwen3.6-27B', '--speculative-config', SPEC])\n"
        "async def b():\n    await asyncio.create_subprocess_exec('llama-server', '-m', 'q.gguf', '--spec-type', 'draft-mtp')\n"
        "def c():\n    subprocess.run(shlex.split('vllm serve m --max-num-seqs 4'), check=True)\n"
        "def d():\n    subprocess.run('exec vllm serve m --enforce-eager', shell=True)\n"
        "def e():\n    subprocess.run(['python', 'bench.py', '--model', 'm'])\n",
        tmp_path,
    )
    assert [(launch.entry, launch.context) for launch in launches] == [
        ("vllm serve", "os.execvp call in a()"),
        ("llama-server", "asyncio.create_subprocess_exec call in b()"),
        ("vllm serve", "subprocess.run call in c()"),
        ("vllm serve", "subprocess.run call in d()"),
    ]
    assert [t.value for t in launches[0].args] == ["Qwen/Qwen3.6-27B", "--speculative-config",
                                                   '{"method": "mtp", "num_speculative_tokens": 1}']
    assert launches[0].env["VLLM_USE_V1"].value.value == "1"
    assert [t.value for t in launches[2].args] == ["m", "--max-num-seqs", "4"]
    seqs = launches[2].args[1].span
    assert seqs is not None and (seqs.line, seqs.column) == (9, 46)  # inside the shlex.split string
    eager = launches[3].args[-1].span
    assert [t.value for t in launches[3].args] == ["m", "--enforce-eager"]
    assert eager is not None and (eager.line, eager.column) == (11, 39)


def test_syntax_error_is_malformed(tmp_path: Path) -> None:
    with pytest.raises(Malformed) as error:
        extract_text("import vllm\nllm = vllm.LLM(model='m'\nprint(1)\n", tmp_path)
    assert "invalid Python" in str(error.value)
    assert error.value.offset > len("import vllm\n")


def test_inspect_python_launcher(inspect: Callable[..., dict[str, Any]]) -> None:
    data = inspect({"scripts/launch_server.py": (DATA / "launch_server.py").read_text(encoding="utf-8")}, "scripts")
    [launch] = data["launches"]
    assert (launch["engine"], launch["line"]) == ("sglang", 22)
    assert launch["options"]["speculative_num_steps"] == 3
    assert launch["env"]["SGLANG_ENABLE_SPEC_V2"] == "1"


def test_inspect_offline_llm(inspect: Callable[..., dict[str, Any]]) -> None:
    pytest.importorskip("mtplint.engines.vllm")
    data = inspect({"offline_llm.py": (DATA / "offline_llm.py").read_text(encoding="utf-8")}, "offline_llm.py")
    [launch] = data["launches"]
    assert launch["kwargs"]["speculative_config"] == {"method": "mtp", "num_speculative_tokens": 2}
    assert launch["argv"] == []


def test_the_users_own_syntax_warnings_are_not_printed(tmp_path: Path) -> None:
    # "\d" in a plain string: DeprecationWarning on 3.11, a SyntaxWarning shown by default on 3.12+
    (tmp_path / "serve.py").write_text(
        'import re, subprocess\nPORT = re.compile("\\d+")\n'
        'subprocess.run(["vllm", "serve", "Qwen/Qwen3.6-27B", "--kv-cache-dtype", "turboquant_4bit_nc",\n'
        '                "--speculative-config", \'{"method": "mtp", "num_speculative_tokens": 1}\'])\n',
        encoding="utf-8")
    # a speculative config written as a Python dict (MTP503 reads it with ast.literal_eval), "\p" in a value
    (tmp_path / "serve.sh").write_text(
        "#!/bin/sh\nexec vllm serve Qwen/Qwen3.6-27B --speculative-config "
        "\"{'method': 'mtp', 'num_speculative_tokens': 1, 'model': 'C:\\path'}\"\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-W", "default", "-m", "mtplint", "check", "--isolated", "--no-cache",
                           "--output-format", "concise", "serve.py", "serve.sh"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False)
    assert "MTP101" in done.stdout and "serve.sh:2" in done.stdout and "Warning" not in done.stderr, done.stderr
