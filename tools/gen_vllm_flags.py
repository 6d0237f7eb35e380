"""Generate mtplint's vLLM flag table for one release, from the release's own wheel.

Usage (in a scratch virtualenv that has vLLM's light pure-Python dependencies -- pydantic,
transformers, huggingface_hub, regex, pyyaml, msgspec, fastapi, openai, ... -- but not torch)::

    pip download vllm==0.33.0 --no-deps -d /tmp/v
    unzip -q /tmp/v/vllm-0.33.0-*.whl 'vllm/*.py' -d /tmp/v/src
    python tools/gen_vllm_flags.py /tmp/v/src 0.33.0 > mtplint/engines/data/vllm/0.33.0.json

The script imports the unpacked ``vllm`` package with torch and the other compiled dependencies
replaced by inert stand-ins (only the argument parser is built; nothing is run), builds the
``vllm serve`` parser exactly as ``vllm/entrypoints/cli/serve.py`` does (``make_arg_parser`` on a
``FlexibleArgumentParser``) and dumps every action: option strings, destination, nargs, value kind,
choices and default. It writes data only (names, kinds, defaults); no vLLM code is copied.
"""

from __future__ import annotations

import argparse
import enum
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# Modules that are compiled, GPU-only or heavy; only their names are needed to build the parser.
STUBBED = (
    "torch", "torchvision", "torchaudio", "triton", "xformers", "flashinfer", "vllm._C", "vllm._moe_C",
    "vllm.vllm_flash_attn", "vllm._flashmla_C", "numba", "cv2", "xgrammar", "outlines_core", "llguidance",
    "lm_format_enforcer", "lmformatenforcer", "mistral_common", "compressed_tensors", "depyf", "ray", "gguf", "tvm_ffi",
    "apache_tvm_ffi", "prometheus_fastapi_instrumentator", "opentelemetry", "mcp", "anthropic",
    "model_hosting_container_standards", "openai_harmony", "tiktoken", "partial_json_parser", "watchfiles",
    "torchcodec", "PyNvVideoCodec", "pynvml", "amdsmi", "intel_extension_for_pytorch", "habana_frameworks",
    "lark", "ijson", "setproctitle", "cbor2", "pybase64", "blake3", "cpuinfo", "zmq", "uvloop", "llama_cpp",
    "aiter", "deep_gemm", "deep_ep", "pplx_kernels", "nixl", "quack", "cutlass", "cuda", "librosa",
    "soundfile", "scipy", "datasets", "vllm_flash_attn", "flash_attn", "sentencepiece", "python_json_logger",
    "pythonjsonlogger", "einops", "cloudpickle", "gpt_oss", "fastsafetensors", "runai_model_streamer",
)


class _StubMeta(type):
    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _make_stub(f"{cls.__name__}.{name}")

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and isinstance(args[0], types.FunctionType) and not kwargs:
            return args[0]  # used as a decorator
        return _StubInstance()

    def __getitem__(cls, item: Any) -> Any:
        return cls

    def __or__(cls, other: Any) -> Any:
        return Any

    def __ror__(cls, other: Any) -> Any:
        return Any

    def __iter__(cls) -> Any:
        return iter(())

    def __bool__(cls) -> bool:
        return False


class _StubInstance:
    """What calling a stand-in returns: every attribute and call gives another stand-in."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _StubInstance()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and isinstance(args[0], types.FunctionType) and not kwargs:
            return args[0]
        return _StubInstance()

    def __iter__(self) -> Any:
        # most unpacking of a device query is a pair: ``major, minor = get_device_capability()``
        return iter((_StubInstance(), _StubInstance()))

    def __bool__(self) -> bool:
        return False

    def __getitem__(self, item: Any) -> Any:
        return _StubInstance()

    def __add__(self, other: Any) -> Any:
        return _StubInstance()

    __radd__ = __mul__ = __rmul__ = __sub__ = __rsub__ = __truediv__ = __rtruediv__ = __or__ = __ror__ = __add__

    def __lt__(self, other: Any) -> bool:
        return False

    __le__ = __gt__ = __ge__ = __lt__

    def __eq__(self, other: object) -> bool:
        return True

    def __int__(self) -> int:
        return 2**31 - 1

    __index__ = __int__

    def __hash__(self) -> int:
        return 0

    def __enter__(self) -> Any:
        return self

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        return core_schema.any_schema()

    def __exit__(self, *args: Any) -> None:
        return None


def _make_stub(name: str) -> Any:
    return _StubMeta(name.rsplit(".", 1)[-1], (_StubInstance,), {"__module__": name.rsplit(".", 1)[0]})


class _StubModule(types.ModuleType):

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        value = _make_stub(f"{self.__name__}.{name}")
        setattr(self, name, value)
        return value


class _StubLoader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _StubModule(spec.name)
        module.__path__ = []
        module.__version__ = "2.14.0"  # type: ignore[attr-defined]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


class _StubFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if any(fullname == name or fullname.startswith(name + ".") for name in STUBBED):
            return importlib.machinery.ModuleSpec(fullname, _StubLoader(), is_package=True)
        return None


def _kind(action: argparse.Action) -> dict[str, Any]:
    """How the action consumes and converts its value, as a small closed vocabulary."""
    cls = type(action).__name__
    if isinstance(action, argparse.BooleanOptionalAction):
        negative = sorted(getattr(action, "negative_option_strings", None) or
                          [o for o in action.option_strings if o.startswith("--no-")])
        return {"action": "bool_pair", "negative": negative}
    if cls in ("_StoreTrueAction", "_StoreFalseAction", "_StoreConstAction"):
        return {"action": "const", "const": action.const}
    if cls == "_CountAction":
        return {"action": "count"}
    if cls in ("_HelpAction", "_VersionAction"):
        return {"action": "exit"}
    if cls == "StoreBoolean":
        return {"action": "store", "type": "bool_str"}
    kind: dict[str, Any] = {"action": "append" if cls in ("_AppendAction", "_ExtendAction") else "store"}
    if cls == "_ExtendAction":
        kind["action"] = "extend"
    kind["type"] = _type_name(action.type)
    return kind


def _type_name(convert: Any) -> str:
    if convert is None or convert is str:
        return "str"
    if convert is int:
        return "int"
    if convert is float:
        return "float"
    if isinstance(convert, type) and issubclass(convert, enum.Enum):
        return "str"
    name = getattr(convert, "__qualname__", getattr(convert, "__name__", repr(convert)))
    closure = [cell.cell_contents for cell in (getattr(convert, "__closure__", None) or ())]
    inner = [item for item in closure if callable(item)]
    if name.startswith("optional_type") and inner:
        return "optional:" + _type_name(inner[0])
    if name.startswith("union_dict_and_str"):
        return "json_or_str"
    if name in ("loads",) and getattr(convert, "__module__", "") == "json":
        return "json"
    if name in ("literal_eval",):
        return "literal_eval"
    if name == "human_readable_int":
        return "human_int"
    if name == "human_readable_int_or_auto":
        return "human_int_or_auto"
    if "parse_dataclass" in name:
        return "json_config"
    if name.startswith("parse_type") and inner:
        return _type_name(inner[0])
    if name.startswith("is_not_builtin") or "check_port" in name:
        return "int"
    if "nullable_str" in name or "nullable_kvs" in name:
        return "nullable_str" if "str" in name else "kvs"
    if "json" in name.lower():
        return "json"
    return "other:" + name


def _jsonable(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if value is argparse.SUPPRESS:
        return "==SUPPRESS=="
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return {"object": type(value).__name__}


def _tolerate_failing_default_factories() -> None:
    """``VllmConfig``'s sub-config defaults are built while the parser is made (only for help text);
    with torch stubbed some of them fail to validate, so such a default becomes ``None``."""
    import dataclasses

    try:
        from vllm.config import VllmConfig
    except ImportError:
        return
    if not dataclasses.is_dataclass(VllmConfig):
        return
    for field in dataclasses.fields(VllmConfig):
        info = field.default
        factory = getattr(info, "default_factory", None)
        if factory is None:
            continue

        def safe(factory: Any = factory) -> Any:
            try:
                return factory()
            except Exception:
                return None

        info.default_factory = safe  # type: ignore[union-attr]


def _stub_distribution_versions() -> None:
    """Version checks of stubbed distributions (``importlib.metadata.version("torch")``) see a recent release."""
    import importlib.metadata

    real_version = importlib.metadata.version

    def version(name: str) -> str:
        if any(name == stubbed.split(".")[0] for stubbed in STUBBED):
            return "2.14.0"
        return real_version(name)

    importlib.metadata.version = version


def _fall_back_to_cpu_platform() -> None:
    """Some releases build a ``DeviceConfig`` while making the parser; with no GPU stack it cannot
    infer a device, so the CPU platform is used (it only affects defaults shown in help)."""
    try:
        platforms = importlib.import_module("vllm.platforms")
        if not platforms.current_platform.device_type:
            cpu = importlib.import_module("vllm.platforms.cpu")
            platforms._current_platform = cpu.CpuPlatform()
    except Exception:
        return


def dump(src: Path, version: str) -> dict[str, Any]:
    _stub_distribution_versions()
    sys.meta_path.insert(0, _StubFinder())
    sys.path.insert(0, str(src))
    sys.argv = ["vllm"]
    parser_module = None
    for module_name in ("vllm.utils.argparse_utils", "vllm.utils"):
        try:
            parser_module = importlib.import_module(module_name)
            if hasattr(parser_module, "FlexibleArgumentParser"):
                break
        except ModuleNotFoundError as error:
            if error.name is None or not module_name.startswith(error.name):
                raise
    assert parser_module is not None
    flexible = parser_module.FlexibleArgumentParser
    make_arg_parser = None
    for module_name in ("vllm.entrypoints.common.cli_args", "vllm.entrypoints.launchers.cli_args",
                        "vllm.entrypoints.openai.cli_args"):
        try:
            make_arg_parser = importlib.import_module(module_name).make_arg_parser
            break
        except ModuleNotFoundError as error:
            if error.name is None or not module_name.startswith(error.name):
                raise
    assert make_arg_parser is not None
    _tolerate_failing_default_factories()
    _fall_back_to_cpu_platform()
    top = flexible(prog="vllm")
    subparsers = top.add_subparsers(dest="subparser")
    serve = subparsers.add_parser("serve", usage="vllm serve [model_tag] [options]")
    if "model_tag" not in {a.dest for a in make_arg_parser(flexible())._actions}:
        serve.add_argument("model_tag", type=str)  # <= 0.8.x: added by the serve subcommand itself
    serve = make_arg_parser(serve)
    actions = []
    registered: dict[int, list[str]] = {}
    for option, owner in serve._option_string_actions.items():
        registered.setdefault(id(owner), []).append(option)
    for action in serve._actions:
        entry: dict[str, Any] = {
            "options": registered.get(id(action), list(action.option_strings)),
            "dest": action.dest,
            "nargs": action.nargs if not isinstance(action.nargs, int) or action.nargs != 1 else 1,
            "default": _jsonable(action.default),
        }
        entry.update(_kind(action))
        if action.choices is not None:
            entry["choices"] = [_jsonable(choice) for choice in action.choices]
        if action.required:
            entry["required"] = True
        actions.append(entry)
    return {
        "engine": "vllm",
        "version": version,
        "origin": f"generated by tools/gen_vllm_flags.py from the PyPI wheel vllm=={version} "
                  "(vllm serve parser: FlexibleArgumentParser + make_arg_parser)",
        "allow_abbrev": serve.allow_abbrev,
        "actions": actions,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("src", type=Path, help="directory holding the unpacked vllm/ package")
    parser.add_argument("version")
    args = parser.parse_args()
    output = sys.stdout
    sys.stdout = sys.stderr  # vLLM's import-time logging must not end up in the table
    table = dump(args.src, args.version)
    json.dump(table, output, indent=1, sort_keys=False)
    output.write("\n")


if __name__ == "__main__":
    main()
