"""Engine models of the two MLX servers: ``vllm-mlx serve`` and ``mlx_lm.server``.

Both parse with plain :mod:`argparse`, so the model rebuilds each parser from its generated table
(``data/mlx/*.json``, see ``tools/gen_mlx_options.py``) and lets the standard library parse: prefix
abbreviations, ``--opt=value``, ambiguity (``--mtp`` matches ``--mtp-num-draft-tokens`` and
``--mtp-optimistic``) and error messages are argparse's own. argparse stops at the first error, as
the servers do.

Facts (``waybarrios/vllm-mlx`` at commit 4b654c09, ``ml-explore/mlx-lm`` v0.32.0):

* vllm-mlx: ``--enable-mtp`` turns MTP on; the draft depth is always 1 whatever
  ``--mtp-num-draft-tokens`` asks; ``--mtp-num-draft-tokens``/``--mtp-optimistic`` reach the engine
  only with ``--continuous-batching``.
* mlx-lm: ``--draft-model`` + ``--num-draft-tokens`` (default 3); a draft model turns batching off.
"""

from __future__ import annotations

import argparse
import json
from functools import cache

from mtplint.engines import CliError, EngineContext, OptionValue, Parsed
from mtplint.extract.launch import Launch
from mtplint.hardware import Hardware
from mtplint.records import Record
from mtplint.settings import Setting
from mtplint.shipped import read_package_text
from mtplint.source import Span, Token
from mtplint.versions import EngineVersion

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

    from mtplint.catalogs import Catalogs

#: stands for a word mtplint cannot resolve while argparse runs; passes every type converter
_UNRESOLVED = "\x00unresolved:"


class _ArgparseFailure(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises instead of printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise _ArgparseFailure(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise _ArgparseFailure(message or f"exit {status}")


def _converter(type_name: str | None) -> Any:
    base: Any = {"int": int, "float": float, "str": str, None: str}[type_name]

    def convert(text: str) -> Any:
        if text.startswith(_UNRESOLVED):
            return text
        return base(text)

    # argparse names the type in "invalid int value: 'x'"
    convert.__name__ = base.__name__
    return convert


@cache
def _table(program: str) -> dict[str, Any]:
    text = read_package_text("engines", "data", "mlx", f"{program}.json")
    table: dict[str, Any] = json.loads(text)
    return table


def _build_parser(program: str) -> _Parser:
    parser = _Parser(prog=program, add_help=True)
    for argument in _table(program)["arguments"]:
        kwargs: dict[str, Any] = {}
        action = argument.get("action")
        if action:
            kwargs["action"] = action
        else:
            kwargs["type"] = _converter(argument.get("type"))
        for key in ("nargs", "dest", "const"):
            if key in argument:
                kwargs[key] = argument[key]
        if "choices" in argument and argument["choices"] is not None:
            choices = list(argument["choices"])
            kwargs["choices"] = _Choices(choices)
        kwargs["default"] = argparse.SUPPRESS  # only what the argv sets ends up in the namespace
        parser.add_argument(*argument["flags"], **kwargs)
    return parser


class _Choices(list[object]):
    """Choices that also admit an unresolved word."""

    def __contains__(self, item: object) -> bool:
        return (isinstance(item, str) and item.startswith(_UNRESOLVED)) or super().__contains__(item)


def defaults(program: str) -> dict[str, Any]:
    """Parser defaults by destination (literal defaults of the table)."""
    values: dict[str, Any] = {}
    for argument in _table(program)["arguments"]:
        dest = argument.get("dest") or argument["flags"][-1].lstrip("-").replace("-", "_")
        long_flags = [flag for flag in argument["flags"] if flag.startswith("--")]
        if "dest" not in argument and long_flags:
            dest = long_flags[0][2:].replace("-", "_")
        if "default" in argument:
            values[dest] = argument["default"]
        elif argument.get("action") == "store_true":
            values[dest] = False
        else:
            values.setdefault(dest, None)
    return values


class _Word(Record):
    __slots__ = ("text", "token")
    text: str
    token: Token

    def __init__(self, text: str, token: Token) -> None:
        self.text = text
        self.token = token


class ArgparseEngine:
    """An engine whose CLI is one argparse parser (the table) after the entry point."""

    def __init__(self, name: str, program: str) -> None:
        self.name = name
        self.program = program

    def known_versions(self) -> list[str]:
        return [str(_table(self.program)["version"])]

    def flags_key(self, version: str) -> object:
        return version  # every known version has a table of its own

    def flags_reading(self, launch: Launch, version: str) -> object | None:
        return None  # version-dependent preprocessing and abbreviations: only parsing tells

    def reading_key(self, launch: Launch) -> object | None:
        return None

    def parse(self, launch: Launch, version: EngineVersion, ctx: EngineContext) -> Parsed:
        parsed = Parsed()
        words: list[_Word] = []
        for token in launch.args:
            if token.splat:
                parsed.open_ended = True
                continue
            words.append(_Word(_marked(token), token))
        parser = _build_parser(self.program)
        try:
            namespace = parser.parse_args([word.text for word in words])
        except _ArgparseFailure as failure:
            message = str(failure)
            kind = _kind_of(message)
            if not (parsed.open_ended and kind == "missing-value"):
                # a word that expands to any number of words may be the missing value
                parsed.errors.append(CliError(message, _span_for_error(message, words), _flag_in(message), kind))
            return parsed
        spans = _value_spans(parser, words)
        for dest, value in vars(namespace).items():
            span, flag, unresolved = spans.get(dest, (None, "", ()))
            if isinstance(value, str) and value.startswith(_UNRESOLVED):
                value = value[len(_UNRESOLVED):]
            parsed.options[dest] = OptionValue(value, span, "explicit", flag, unresolved)
        return parsed

    def effective(self, launch: Launch, parsed: Parsed, version: EngineVersion, hardware: Hardware,
                  catalogs: Catalogs) -> dict[str, Setting]:
        raise NotImplementedError


def _marked(token: Token) -> str:
    """The word argparse is given for ``token``: an unresolved one carries :data:`_UNRESOLVED`; in
    ``--flag=$VAR`` only the value is substituted, so the flag stays a flag and the mark goes on
    its value."""
    if not token.unresolved:
        return token.value
    name, equals, value = token.value.partition("=")
    if equals and name.startswith("--") and "$" not in name:
        return f"{name}={_UNRESOLVED}{value}"
    return f"{_UNRESOLVED}{token.value}"


def _value_spans(parser: argparse.ArgumentParser, words: list[_Word]) -> dict[str, tuple[Span | None, str, tuple[str, ...]]]:
    """For each destination, where its (last) value was written: the value word, else the flag."""
    result: dict[str, tuple[Span | None, str, tuple[str, ...]]] = {}
    positionals = [action for action in parser._actions if not action.option_strings]
    index = 0
    positional_index = 0
    while index < len(words):
        word = words[index]
        text = word.text
        if text.startswith("-") and len(text) > 1:
            flag, _, inline = text.partition("=")
            action = _match_option(parser, flag)
            index += 1
            if action is None:
                continue
            takes_value = action.nargs != 0
            if inline and takes_value:
                result[action.dest] = (word.token.span, flag, word.token.unresolved)
            elif takes_value and index < len(words):
                value = words[index]
                result[action.dest] = (value.token.span, flag, value.token.unresolved)
                index += 1
            else:
                result[action.dest] = (word.token.span, flag, ())
            continue
        if positional_index < len(positionals):
            action = positionals[positional_index]
            result[action.dest] = (word.token.span, "", word.token.unresolved)
            positional_index += 1
        index += 1
    return result


def _match_option(parser: argparse.ArgumentParser, flag: str) -> argparse.Action | None:
    actions = parser._option_string_actions
    if flag in actions:
        return actions[flag]
    matches = {actions[name] for name in actions if name.startswith(flag) and flag.startswith("--")}
    return matches.pop() if len(matches) == 1 else None


def _flag_in(message: str) -> str | None:
    for marker in ("argument ", "ambiguous option: ", "unrecognized arguments: "):
        if marker in message:
            rest = message.split(marker, 1)[1]
            return rest.split(":")[0].split("/")[0].split(" ")[0] or None
    return None


def _kind_of(message: str) -> str:
    if message.startswith("ambiguous option"):
        return "ambiguous"
    if message.startswith("unrecognized arguments"):
        return "unknown"
    if "expected one argument" in message or "expected at least one argument" in message \
            or "arguments are required" in message:
        return "missing-value"
    if "invalid choice" in message:
        return "invalid-choice"
    if "ignored explicit argument" in message:
        return "bool-value"
    return "invalid-value"


def _span_for_error(message: str, words: list[_Word]) -> Span | None:
    flag = _flag_in(message)
    if flag:
        for word in words:
            if word.text == flag or word.text.split("=", 1)[0] == flag:
                return word.token.span
        for word in words:
            if word.text.startswith("-") and flag.startswith(word.text.split("=", 1)[0]):
                return word.token.span
    return words[0].token.span if words else None


def _setting(parsed: Parsed, dest: str, default: Any) -> Setting:
    option = parsed.options.get(dest)
    if option is None:
        return Setting(default, "default")
    value = option.value
    return Setting(value, option.origin, option.span, option.unresolved)


class VllmMlxEngine(ArgparseEngine):
    """``vllm-mlx serve MODEL ...`` (vllm_mlx/cli.py ``create_parser``, 0.6.0)."""

    def __init__(self) -> None:
        super().__init__("vllm-mlx", "vllm-mlx")

    def effective(self, launch: Launch, parsed: Parsed, version: EngineVersion, hardware: Hardware,
                  catalogs: Catalogs) -> dict[str, Setting]:
        base = defaults(self.program)
        settings: dict[str, Setting] = {"model": _setting(parsed, "model", None)}
        batching = _setting(parsed, "continuous_batching", False)
        mtp = _setting(parsed, "enable_mtp", False)
        if mtp.value:
            optimistic = _setting(parsed, "mtp_optimistic", False)
            settings["spec_method"] = Setting("mtp", mtp.origin, mtp.span, mtp.unresolved, extra={
                "optimistic": bool(optimistic.value),
                # vllm_mlx/cli.py passes mtp_optimistic only through SchedulerConfig (--continuous-batching)
                "optimistic_effective": bool(optimistic.value and batching.value),
            })
            requested = _setting(parsed, "mtp_num_draft_tokens", base.get("mtp_num_draft_tokens", 1))
            # vllm_mlx/scheduler.py and engine/simple.py: both paths draft exactly one token per step
            settings["spec_tokens"] = Setting(1, "inferred", requested.span, requested.unresolved,
                                              extra={"requested": requested.value})
        else:
            settings["spec_method"] = Setting(None, "default")
            settings["spec_tokens"] = Setting(None, "default")
        settings["spec_model"] = Setting(None, "default")
        concurrency = _setting(parsed, "max_num_seqs", base.get("max_num_seqs"))
        concurrency.extra["continuous_batching"] = bool(batching.value)
        settings["max_concurrency"] = concurrency
        disabled = parsed.options.get("disable_prefix_cache")
        if disabled is not None and disabled.value:
            settings["prefix_caching"] = Setting(False, disabled.origin, disabled.span)
        else:
            settings["prefix_caching"] = Setting(True, "default")
        quantized = parsed.options.get("kv_cache_quantization")
        if quantized is not None and quantized.value:
            bits = _setting(parsed, "kv_cache_quantization_bits", base.get("kv_cache_quantization_bits"))
            settings["kv_cache_dtype"] = Setting(f"q{bits.value}", quantized.origin, quantized.span, bits.unresolved)
        else:
            settings["kv_cache_dtype"] = Setting("auto", "default")
        return settings


class MlxLmEngine(ArgparseEngine):
    """``mlx_lm.server`` / ``python -m mlx_lm.server`` (mlx_lm/server.py ``main``, 0.32.2)."""

    def __init__(self) -> None:
        super().__init__("mlx-lm", "mlx-lm")

    def effective(self, launch: Launch, parsed: Parsed, version: EngineVersion, hardware: Hardware,
                  catalogs: Catalogs) -> dict[str, Setting]:
        base = defaults(self.program)
        settings: dict[str, Setting] = {"model": _setting(parsed, "model", None)}
        draft = _setting(parsed, "draft_model", None)
        settings["spec_model"] = draft
        if draft.value is not None:
            settings["spec_method"] = Setting("draft_model", draft.origin, draft.span, draft.unresolved)
            settings["spec_tokens"] = _setting(parsed, "num_draft_tokens", base.get("num_draft_tokens", 3))
            # mlx_lm/server.py: ``is_batchable = draft_model is None``
            settings["max_concurrency"] = Setting(1, "inferred", draft.span, extra={"batching_disabled_by_draft": True})
        else:
            settings["spec_method"] = Setting(None, "default")
            settings["spec_tokens"] = Setting(None, "default")
            settings["max_concurrency"] = _setting(parsed, "decode_concurrency", base.get("decode_concurrency"))
        bits = parsed.options.get("kv_bits")
        settings["kv_cache_dtype"] = (Setting(f"q{bits.value}", bits.origin, bits.span, bits.unresolved)
                                      if bits is not None and bits.value is not None else Setting("auto", "default"))
        return settings


ENGINES: dict[str, ArgparseEngine] = {"vllm-mlx": VllmMlxEngine(), "mlx-lm": MlxLmEngine()}
