"""Engine model of llama.cpp's ``llama-server`` (builds ``bNNNN``).

The option table of each build is :mod:`mtplint.llama_options` (generated from ``common/arg.cpp``
at b10454, older builds derived from it with the speculative-decoding changes listed there).
Options outside speculative decoding are not versioned: an option added or removed between builds
outside that list is modelled as present in every known build.

Parsing follows ``common_params_parse_ex`` (``common/arg.cpp`` at b10454):

* precedence: ``config.ini`` (b10398+; only when the launch comes from one) < every ``LLAMA_ARG_*``
  variable (in option-definition order) < command-line arguments, in order;
* long options may be written with underscores (``--spec_type``), no ``--opt=value`` form, no
  positional arguments, no abbreviations: anything else is ``error: invalid argument: X``;
* a negatable boolean has ``--no-x`` forms and also reads ``LLAMA_ARG_NO_X``;
* ``--spec-type`` takes a comma list and *appends* (b9109+), so env and CLI types combine and
  ``none`` cannot cancel a type given earlier; every other repeated option keeps the last value;
* removed options are stubs that throw ``the argument has been removed. use ...`` (b8955+), also
  when set through their old environment variable.

Options are keyed by llama.cpp's own names: the ``LLAMA_ARG_*`` name without its prefix, lower
case (``n_parallel``, ``ctx_size``, ``spec_draft_n_max``), or the first long option name for
options without one (``spec_draft_ngl``).
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

from mtplint.engines import CliError, EngineContext, LaunchMemo, OptionValue, Parsed
from mtplint.extract.launch import Launch
from mtplint.hardware import Hardware
from mtplint.llama_options import (
    DRAFT_TYPE_RENAME_BUILD,
    GGUF_TYPE_BUILD,
    KNOWN_BUILDS,
    MTP_BUILD,
    N_MAX_DEFAULT_BUILD,
    NO_AUTO_DRAFT_BUILD,
    PARALLEL_DRAFTING_BUILD,
    SPEC_RENAME_BUILD,
    LlamaOption,
    OptionLookup,
    build_number,
    option_lookup,
    option_table,
)
from mtplint.settings import Setting
from mtplint.source import Span, Token
from mtplint.versions import EngineVersion

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from mtplint.catalogs import Catalogs


NGRAM_TYPES = ("ngram-simple", "ngram-map-k", "ngram-map-k4v", "ngram-mod", "ngram-cache")
#: ``common_speculative_init`` (``common/speculative.cpp`` at b10470): draftless types take precedence,
#: then the model-based ones in this order
DRAFT_TYPES = ("draft-simple", "draft-eagle3", "draft-mtp", "draft-dflash", "draft-dspark")
#: normalised ``spec_method`` of each type (settings.KEYS)
METHOD_OF_TYPE = {
    "draft-simple": "draft_model", "draft": "draft_model",
    "draft-eagle3": "eagle3", "eagle3": "eagle3",
    "draft-mtp": "mtp",
    "draft-dflash": "dflash",
    "draft-dspark": "dspark",
    **{name: "ngram" for name in NGRAM_TYPES},
}
#: value of ``--cache-type-k`` accepted by ``kv_cache_type_from_str`` (arg.cpp ``kv_cache_types``)
KV_CACHE_TYPES = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1")
#: ``common_arg_utils::is_truthy`` / ``is_falsey`` / ``is_autoy``
TRUTHY = ("on", "enabled", "true", "1")
FALSEY = ("off", "disabled", "false", "0")
AUTOY = ("auto", "-1")


def spec_types_at(build: int) -> tuple[str, ...]:
    """Names ``--spec-type`` accepts at ``build`` (``common_speculative_type_from_name_map`` in
    ``common/speculative.cpp``, and the renames of PR #22964 and PR #22673).

    ``draft-dflash``/``draft-dspark`` are first documented at b10413; the build that added them is
    not known, so they are accepted from b9180 on rather than risk rejecting a valid launch.
    """
    names = ["none", *NGRAM_TYPES]
    if SPEC_RENAME_BUILD <= build < DRAFT_TYPE_RENAME_BUILD:
        names += ["draft", "eagle3"]
    if build >= DRAFT_TYPE_RENAME_BUILD:
        names += ["draft-simple", "draft-eagle3"]
    if build >= MTP_BUILD:
        names += ["draft-mtp", "draft-dflash", "draft-dspark"]
    return tuple(names)


@cache
def _distinct_table(build: int) -> int:
    """The first known build whose option table equals ``build``'s (tables are compared once per build)."""
    table = option_table(build)
    return next(number for number in [*sorted(build_number(known) for known in KNOWN_BUILDS), build]
                if option_table(number) == table)


@cache
def _values_by_name(build: int) -> dict[str, int]:
    """Option spelling -> how many words its option takes after it (version narrowing's reading)."""
    return {name: option.values for name, (option, _) in option_lookup(build).by_name.items()}


# --- values ---------------------------------------------------------------------------------------

class _HandlerError(Exception):
    """What an arg.cpp handler throws; ``str()`` is its ``what()``."""


def _stoi(text: str) -> int:
    """``std::stoi``: leading blanks and a sign, then digits; trailing junk is ignored."""
    if text.isascii() and text.isdigit():
        digits = text  # digits alone, as nearly every value is written: all of it is the number
    else:
        match = re.match(r"\s*([+-]?\d+)", text)
        if not match:
            raise _HandlerError("stoi")
        digits = match.group(1)
    if len(digits.lstrip("+-").lstrip("0")) > 10:
        # out of an int's range (std::out_of_range, whose what() is also "stoi"), and past
        # Python's limit on converting digits (4,300) before long: not converted at all
        raise _HandlerError("stoi")
    value = int(digits)
    if not -(2**31) <= value < 2**31:
        raise _HandlerError("stoi")
    return value


def _stof(text: str) -> float:
    match = re.match(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)", text)
    if not match:
        raise _HandlerError("stof")
    return float(match.group(1))


_FLOAT_DESTS = {"spec_draft_p_min", "spec_draft_p_split"}


def _convert(option: LlamaOption, raw: str, build: int) -> Any:
    """The value the option's handler stores, raising what the handler throws."""
    if option.removed:
        if option.kind == "int":
            _stoi(raw)
        raise _HandlerError(option.removed)
    dest = option.dest
    if option.kind == "int":
        value = _stoi(raw)
        if dest == "n_parallel" and value == 0:
            raise _HandlerError("error: invalid value for n_parallel")
        if dest == "spec_draft_n_max" and value < 0 and build >= SPEC_RENAME_BUILD:
            raise _HandlerError("invalid value")
        return value
    if dest == "spec_type":
        names = raw.split(",") if build >= PARALLEL_DRAFTING_BUILD else [raw]
        allowed = spec_types_at(build)
        for name in names:
            if name not in allowed:
                raise _HandlerError(f"unknown speculative type: {name}")
        return _spec_type_names(raw, build)
    if dest == "flash_attn":
        if raw in TRUTHY:
            return "on"
        if raw in FALSEY:
            return "off"
        if raw in AUTOY:
            return "auto"
        raise _HandlerError(f"error: unknown value for --flash-attn: '{raw}'")
    if dest in ("cache_type_k", "cache_type_v", "spec_draft_cache_type_k", "spec_draft_cache_type_v"):
        if raw not in KV_CACHE_TYPES:
            raise _HandlerError(f"Unsupported cache type: {raw}")
        return raw
    if dest in _FLOAT_DESTS:
        return _stof(raw)
    return raw


def _spec_type_names(raw: str, build: int) -> list[str]:
    """``common_speculative_types_from_names``: a ``none`` in the list yields just ``[none]``."""
    names = raw.split(",") if build >= PARALLEL_DRAFTING_BUILD else [raw]
    return ["none"] if "none" in names else names


# --- parsing --------------------------------------------------------------------------------------

class LlamaParsed(Parsed):
    """:class:`Parsed` plus where each ``--spec-type`` name came from."""

    __slots__ = ("type_sources", "build")
    #: type name -> (span, origin) of the first token that added it
    type_sources: dict[str, tuple[Span | None, str]]
    build: int

    def __init__(self, options: dict[str, OptionValue] | None = None, errors: list[CliError] | None = None,
                 open_ended: bool = False, config_files: list[str] | None = None,
                 unread_configs: list[tuple[str, Span | None]] | None = None, notes: list[str] | None = None,
                 type_sources: dict[str, tuple[Span | None, str]] | None = None, build: int = 0) -> None:
        super().__init__(options, errors, open_ended, config_files, unread_configs, notes)
        self.type_sources = type_sources if type_sources is not None else {}
        self.build = build


def _origin_of(token: Token, default: str = "explicit") -> str:
    """Preset/config INI lines are config files, everything else is the command line."""
    if token.span is not None and _is_ini(token.span.file):
        return "config-file"
    return default


@lru_cache(maxsize=1024)  # each option of a launch asks about the same file
def _is_ini(file: str) -> bool:
    return file.lower().endswith(".ini")


def _reading_words(launch: Launch) -> list[str]:
    """The launch's words that may be options, as _parse_cli looks them up (long options with ``-``
    for ``_``): not those it cannot read, nor a word without a leading ``-``, which no build's option
    is spelled without (none is an option at any build)."""
    return [token.value.replace("_", "-") if token.value.startswith("--") else token.value
            for token in launch.args if not token.splat and not token.unresolved and token.value.startswith("-")]


_LAUNCH_WORDS = LaunchMemo()


class LlamaCppEngine:
    name = "llama.cpp"

    def known_versions(self) -> list[str]:
        return list(KNOWN_BUILDS)

    def flags_key(self, version: str) -> object:
        # the option table changes at a few builds only (b8955, b9109, ...): the known builds
        # between two of them read the same flags and LLAMA_ARG_* variables
        return _distinct_table(build_number(version))

    def flags_reading(self, launch: Launch, version: str) -> object | None:
        # _parse_cli rejects a word only when the table has no such option, and where it goes on
        # depends only on how many values each option it finds takes
        values = _values_by_name(build_number(version))
        return tuple(map(values.get, _LAUNCH_WORDS.get(launch, _reading_words)))

    def reading_key(self, launch: Launch) -> object | None:
        return tuple(_LAUNCH_WORDS.get(launch, _reading_words))

    # -- parse --

    def parse(self, launch: Launch, version: EngineVersion, ctx: EngineContext) -> LlamaParsed:
        build = build_number(version.version)
        parsed = LlamaParsed(build=build)
        lookup = option_lookup(build)
        self._parse_env(launch, build, lookup, parsed)
        if launch.env_open:
            # an unread env file may hold any LLAMA_ARG_* (below the command line, like "$@")
            parsed.open_ended = True
        self._parse_cli(launch.args, build, lookup, parsed)
        preset = parsed.options.get("models_preset")
        if preset is not None and isinstance(preset.value, str) and not preset.unresolved:
            parsed.config_files.append(preset.value)
        return parsed

    def _store(self, parsed: LlamaParsed, option: LlamaOption, value: Any, span: Span | None, origin: str,
               flag: str, unresolved: tuple[str, ...] = ()) -> None:
        if option.dest == "spec_type" and isinstance(value, list):
            previous = parsed.options.get("spec_type")
            # the parser's list starts as [none]; only the names given are shown
            current: list[str] = list(previous.value) if previous is not None and isinstance(previous.value, list) else []
            if parsed.build >= PARALLEL_DRAFTING_BUILD:
                current.extend(value)
            else:
                current = list(value)
            for name in value:
                parsed.type_sources.setdefault(name, (span, origin))
            unresolved = (*previous.unresolved, *unresolved) if previous is not None else unresolved
            parsed.options["spec_type"] = OptionValue(current, span, origin, flag, unresolved)
            return
        parsed.options[option.dest] = OptionValue(value, span, origin, flag, unresolved)

    def _parse_env(self, launch: Launch, build: int, lookup: OptionLookup, parsed: LlamaParsed) -> None:
        """The ``LLAMA_ARG_*`` loop of ``common_params_parse_ex`` (option-definition order)."""
        if lookup.env_names.isdisjoint(launch.env):
            return
        # the options that read one of the launch's variables, in option-definition order
        positions = sorted({position for name in launch.env for position in lookup.by_env.get(name, ())})
        for position in positions:
            option = lookup.options[position]
            entry = None
            negative = False
            for index, env_name in enumerate(option.env_names):
                # the LLAMA_ARG_NO_ variant is checked first and reads as "0"
                if env_name in launch.env and (index == 1 or entry is None):
                    entry = launch.env[env_name]
                    negative = index == 1
            if entry is None:
                continue
            token = entry.value
            span = entry.span or token.span
            origin = _origin_of(token, "env")
            raw = "0" if negative else token.value
            if token.unresolved and not negative:
                parsed.options[option.dest] = OptionValue(token.value, span, origin, entry.name, token.unresolved)
                continue
            try:
                if option.kind == "void":
                    if option.removed and raw in TRUTHY:
                        raise _HandlerError(option.removed)
                    if raw in TRUTHY:
                        self._store(parsed, option, True, span, origin, entry.name)
                elif option.kind == "bool":
                    if raw in TRUTHY:
                        self._store(parsed, option, True, span, origin, entry.name)
                    elif raw in FALSEY:
                        self._store(parsed, option, False, span, origin, entry.name)
                    else:
                        raise _HandlerError("invalid boolean value")
                else:
                    value = _convert(option, raw, build)
                    self._store(parsed, option, value, span, origin, entry.name)
            except _HandlerError as error:
                parsed.errors.append(CliError(
                    f'error while handling environment variable "{option.env}": {error}', span, option.env,
                    "removed" if option.removed else "invalid-value"))

    def _parse_cli(self, args: list[Token], build: int, lookup: OptionLookup, parsed: LlamaParsed) -> None:
        index = 0
        while index < len(args):
            token = args[index]
            index += 1
            if token.splat:
                parsed.open_ended = True
                continue
            if token.unresolved:
                # a word mtplint cannot read may be any option; what follows cannot be placed either
                parsed.open_ended = True
                continue
            arg = token.value
            if arg.startswith("--"):
                arg = arg.replace("_", "-")
            found = lookup.by_name.get(arg)
            if found is None:
                parsed.errors.append(CliError(f"error: invalid argument: {arg}", token.span, arg, "unknown"))
                # llama-server stops at the first bad argument; the words after an unknown option are
                # most likely its values, not more mistakes
                if arg.startswith("-"):
                    while index < len(args) and args[index].resolved and not args[index].value.startswith("-"):
                        index += 1
                continue
            option, positive = found
            origin = _origin_of(token)
            if option.kind == "void":
                if option.removed:
                    parsed.errors.append(CliError(f'error while handling argument "{arg}": {option.removed}', token.span, arg, "removed"))
                else:
                    self._store(parsed, option, True, token.span, origin, arg)
                continue
            if option.kind == "bool":
                self._store(parsed, option, positive, token.span, origin, arg)
                continue
            count = option.values
            values = args[index:index + count]
            if len(values) < count:
                parsed.errors.append(CliError(f'error while handling argument "{arg}": expected value for argument',
                                              token.span, arg, "missing-value"))
                index = len(args)
                continue
            index += count
            if count == 1:  # nearly every option: its one word says it all
                unresolved = values[0].unresolved
                splat = values[0].splat
            else:
                unresolved = tuple(name for value in values for name in value.unresolved)
                splat = any(value.splat for value in values)
            if splat:
                parsed.open_ended = True
                unresolved = (*unresolved, *(value.value for value in values if value.splat))
            value_span = values[-1].span
            if unresolved:
                if option.removed:
                    parsed.errors.append(CliError(f'error while handling argument "{arg}": {option.removed}', token.span, arg, "removed"))
                    continue
                raw_value: Any = values[0].value if count == 1 else [value.value for value in values]
                if option.dest == "spec_type":
                    raw_value = [values[0].value]
                self._store(parsed, option, raw_value, value_span, origin, arg, unresolved)
                continue
            try:
                if option.kind == "str_str":
                    if option.removed:
                        raise _HandlerError(option.removed)
                    value: Any = [values[0].value, values[1].value]
                else:
                    value = _convert(option, values[0].value, build)
            except _HandlerError as error:
                kind = "removed" if option.removed else "invalid-value"
                parsed.errors.append(CliError(f'error while handling argument "{arg}": {error}', token.span, arg, kind))
                continue
            self._store(parsed, option, value, value_span, origin, arg)

    # -- effective --

    def effective(self, launch: Launch, parsed: Parsed, version: EngineVersion, hardware: Hardware,
                  catalogs: Catalogs) -> dict[str, Setting]:
        build = build_number(version.version)
        options = parsed.options
        type_sources = parsed.type_sources if isinstance(parsed, LlamaParsed) else {}
        settings: dict[str, Setting] = {}

        settings["model"] = self._model(options)
        draft = options.get("spec_draft_model") or options.get("spec_draft_hf_repo")
        settings["spec_model"] = _from_option(draft) if draft is not None else Setting(None, "default")
        method = self._spec_method(options, type_sources, draft, build, version)
        settings["spec_method"] = method
        settings["spec_tokens"] = self._spec_tokens(options, method, build, version)

        parallel = options.get("n_parallel")
        if parallel is not None and (parallel.unresolved or (isinstance(parallel.value, int) and parallel.value > 0)):
            settings["max_concurrency"] = _from_option(parallel)
        else:
            # tools/server/server.cpp: -1 (the server default) means auto = 4 slots with a unified KV cache
            span = parallel.span if parallel is not None else None
            origin = parallel.origin if parallel is not None else "default"
            settings["max_concurrency"] = Setting(4, origin, span, extra={"auto": True})

        cache_k = options.get("cache_type_k")
        settings["kv_cache_dtype"] = _from_option(cache_k) if cache_k is not None else Setting("f16", "default")

        # Prefix caching: llama-server keeps each slot's KV and reuses the longest common prefix of the
        # next prompt (``--cache-prompt``, on by default); ``--cache-reuse N`` adds chunk reuse by KV shifting.
        cache_prompt = options.get("cache_prompt")
        prefix = _from_option(cache_prompt) if cache_prompt is not None else Setting(True, "default")
        reuse = options.get("cache_reuse")
        prefix.extra["cache_reuse"] = reuse.to_json() if reuse is not None else 0
        settings["prefix_caching"] = prefix

        ctx_size = options.get("ctx_size")
        if ctx_size is not None and (ctx_size.unresolved or ctx_size.value):
            settings["max_model_len"] = _from_option(ctx_size)
        else:
            # 0 (default) = the model's training context, known only from the GGUF
            settings["max_model_len"] = Setting(None, ctx_size.origin if ctx_size else "default",
                                                ctx_size.span if ctx_size else None, extra={"from_model": True})
        return settings

    @staticmethod
    def _model(options: dict[str, OptionValue]) -> Setting:
        for dest in ("model", "hf_repo", "model_url", "docker_repo"):
            option = options.get(dest)
            if option is not None:
                setting = _from_option(option)
                if dest != "model":
                    setting.extra["source"] = dest
                return setting
        if "models_preset" in options or "models_dir" in options:
            return Setting(None, "default", extra={"router": True})
        return Setting(None, "default")

    @staticmethod
    def _spec_method(options: dict[str, OptionValue], type_sources: dict[str, tuple[Span | None, str]],
                     draft: OptionValue | None, build: int, version: EngineVersion) -> Setting:
        spec_type = options.get("spec_type")
        types = [name for name in (spec_type.value if spec_type is not None and isinstance(spec_type.value, list) else [])
                 if name != "none"]
        if spec_type is not None and spec_type.unresolved:
            return Setting(spec_type.value, spec_type.origin, spec_type.span, spec_type.unresolved)
        if types:
            # a model-based type is the method rules care about; draftless types tried first are listed
            chosen = next((name for name in (*DRAFT_TYPES, "draft", "eagle3") if name in types), types[0])
            span, origin = type_sources.get(chosen, (spec_type.span if spec_type else None, spec_type.origin if spec_type else "explicit"))
            extra: dict[str, Any] = {"types": types}
            return Setting(METHOD_OF_TYPE.get(chosen, chosen), origin, span, extra=extra)
        if draft is None:
            return Setting(None, "default")
        # a draft model without a type: b9464 (PR #23988) stops enabling draft-simple for it, b10413
        # reads the type from the draft GGUF (``common_speculative_types_from_gguf``)
        if draft.unresolved:
            return Setting(None, "inferred", draft.span, draft.unresolved)
        if build < NO_AUTO_DRAFT_BUILD:
            setting = Setting("draft_model", "inferred", draft.span, extra={"types": ["draft-simple"]})
        elif build < GGUF_TYPE_BUILD:
            setting = Setting(None, "inferred", draft.span, extra={"draft_unused": True})
        else:
            setting = Setting(None, "inferred", draft.span, ("draft GGUF metadata",),
                              extra={"inferred_from_gguf": ["mtp", "dflash", "dspark", None]})
        if not version.known:
            setting.extra["version_dependent"] = {
                f"before b{NO_AUTO_DRAFT_BUILD}": "draft_model",
                f"b{NO_AUTO_DRAFT_BUILD} ... b{GGUF_TYPE_BUILD - 1}": None,
                f"from b{GGUF_TYPE_BUILD}": "from the draft GGUF (mtp, dflash, dspark or none)",
            }
        return setting

    @staticmethod
    def _spec_tokens(options: dict[str, OptionValue], method: Setting, build: int, version: EngineVersion) -> Setting:
        if method.value is None and not method.unresolved:
            return Setting(None, "default")
        if method.value == "ngram" and not method.unresolved:
            types = method.extra.get("types", [])
            if "ngram-mod" in types:
                n_max = options.get("spec_ngram_mod_n_max")
                return _from_option(n_max) if n_max is not None else Setting(64, "default")
            size_m = options.get(f"spec_{types[0].replace('-', '_')}_size_m") if types else None
            return _from_option(size_m) if size_m is not None else Setting(48, "default")
        n_max = options.get("spec_draft_n_max")
        if n_max is not None:
            return _from_option(n_max)
        default = 3 if build >= N_MAX_DEFAULT_BUILD else 16
        setting = Setting(default, "default")
        if not version.known and version.at_least(f"b{N_MAX_DEFAULT_BUILD}") is None:
            setting.extra["version_dependent"] = {f"before b{N_MAX_DEFAULT_BUILD}": 16, f"from b{N_MAX_DEFAULT_BUILD}": 3}
        return setting


def _from_option(option: OptionValue) -> Setting:
    value = option.value
    if option.unresolved and not isinstance(value, str):
        value = str(value)
    return Setting(value, option.origin, option.span, option.unresolved)


ENGINE = LlamaCppEngine()
