"""llama.cpp's command-line options by build: what ``llama-server`` accepts and what a preset key names.

The table (names, negations, env names, value count, removed stubs) is generated from
``common/arg.cpp`` at b10454 (``engines/data/llamacpp/options.json``, see
``tools/gen_llamacpp_options.py``); older builds are derived from it with the speculative-decoding
changes listed below. Both the engine model (``engines/llamacpp.py``) and the preset extractor
(``extract/llama_preset.py``) read it, so it sits below both.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import cache, lru_cache

from mtplint.records import FrozenRecord, Record
from mtplint.shipped import read_package_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

#: builds at which the speculative CLI changed (the pull requests below; b8932 is the last build with the
#: old ``--draft*`` names), oldest first: the last is assumed
KNOWN_BUILDS = ("b8932", "b8955", "b9109", "b9131", "b9180", "b9235", "b9464", "b10398", "b10413", "b10470")

#: b8955 (PR #22397): ``--draft*`` renamed ``--spec-draft-*``; old names become stubs that throw
SPEC_RENAME_BUILD = 8955
#: b9109 (PR #22838): ``-cd``/``--spec-replace`` deleted (invalid argument); ``--spec-type`` takes a list
PARALLEL_DRAFTING_BUILD = 9109
#: b9131 (PR #22964): ``draft`` -> ``draft-simple``, ``eagle3`` -> ``draft-eagle3``
DRAFT_TYPE_RENAME_BUILD = 9131
#: b9180 (PR #22673): ``draft-mtp``
MTP_BUILD = 9180
#: b9235 (PR #23269): default ``n_max`` 16 -> 3
N_MAX_DEFAULT_BUILD = 9235
#: b9261 (PR #23287): ``--spec-draft-backend-sampling``
BACKEND_SAMPLING_BUILD = 9261
#: b9464 (PR #23988): ``-md`` no longer enables ``draft-simple`` by itself
NO_AUTO_DRAFT_BUILD = 9464
#: b10398 (#26118): system/user ``config.ini`` applied before env and CLI
CONFIG_INI_BUILD = 10398
#: b10413: without ``--spec-type`` the type is read from the draft GGUF (never ``draft-simple``)
GGUF_TYPE_BUILD = 10413


@lru_cache(maxsize=1024)  # every launch asks for a few known builds, once per table tried
def build_number(version: str) -> int:
    """``b9180`` (or ``9180``) -> 9180; anything else is treated as the newest known build."""
    match = re.fullmatch(r"b?(\d{1,18})", version.strip())  # longer: no build, and past Python's digit limit
    return int(match.group(1)) if match else int(KNOWN_BUILDS[-1][1:])


#: words an option of each handler kind takes after its name
_VALUES_PER_KIND = {"void": 0, "bool": 0, "int": 1, "string": 1, "str_str": 2}


class LlamaOption(FrozenRecord):
    """One llama-server option: every spelling, its environment variable and its value count."""

    __slots__ = ("names", "negated", "kind", "env", "dest", "removed")
    names: Final[tuple[str, ...]]
    negated: Final[tuple[str, ...]]
    kind: Final[str]  # void | bool | int | string | str_str (the arg.cpp handler slot)
    env: Final[str | None]
    dest: Final[str]
    removed: Final[str | None]

    def __init__(self, names: tuple[str, ...], negated: tuple[str, ...], kind: str, env: str | None, dest: str,
                 removed: str | None = None) -> None:
        self.names = names
        self.negated = negated
        self.kind = kind
        self.env = env
        self.dest = dest
        self.removed = removed

    @property
    def values(self) -> int:
        return _VALUES_PER_KIND[self.kind]

    @property
    def env_names(self) -> tuple[str, ...]:
        """The variables the option reads: its own, and ``LLAMA_ARG_NO_*`` for negatable ones."""
        if self.env is None:
            return ()
        if self.negated and self.env.startswith("LLAMA_ARG_"):
            return (self.env, "LLAMA_ARG_NO_" + self.env[len("LLAMA_ARG_"):])
        return (self.env,)


def _dest(names: Iterable[str], env: str | None) -> str:
    longs = [name for name in names if name.startswith("--")]
    if env and env.startswith("LLAMA_ARG_") and not (longs and longs[0].startswith("--spec-")):
        return env[len("LLAMA_ARG_"):].lower()
    chosen = longs[0] if longs else next(iter(names))
    return chosen.lstrip("-").replace("-", "_")


@cache
def _base_table() -> tuple[LlamaOption, ...]:
    text = read_package_text("engines", "data", "llamacpp", "options.json")
    document: dict[str, Any] = json.loads(text)
    options = []
    for entry in document["options"]:
        names = tuple(entry["args"])
        env = entry.get("env")
        options.append(LlamaOption(names, tuple(entry.get("neg", ())), entry["kind"], env, _dest(names, env), entry.get("removed")))
    return tuple(options)


#: options deleted at b9109 without a stub (PR #22838)
_DELETED_AT_PARALLEL_DRAFTING = (
    LlamaOption(("--spec-draft-ctx-size", "-cd", "--ctx-size-draft"), (), "int", "LLAMA_ARG_SPEC_DRAFT_CTX_SIZE", "spec_draft_ctx_size"),
    LlamaOption(("--spec-draft-replace", "--spec-replace"), (), "str_str", None, "spec_draft_replace"),
)
#: the pre-b8955 spelling of renamed options whose old names are not aliases today (``common/arg.cpp`` at b8932)
_OLD_SPELLINGS = {
    "--draft": LlamaOption(("--draft", "--draft-n", "--draft-max"), (), "int", "LLAMA_ARG_DRAFT_MAX", "spec_draft_n_max"),
    "--draft-min": LlamaOption(("--draft-min", "--draft-n-min"), (), "int", "LLAMA_ARG_DRAFT_MIN", "spec_draft_n_min"),
}
_OLD_ENV = {
    "spec_draft_model": "LLAMA_ARG_MODEL_DRAFT",
    "spec_draft_p_min": "LLAMA_ARG_DRAFT_P_MIN",
    "spec_draft_ctx_size": "LLAMA_ARG_CTX_SIZE_DRAFT",
}


@cache
def option_table(build: int) -> tuple[LlamaOption, ...]:
    """The options llama-server has at ``build``."""
    options: list[LlamaOption] = []
    for option in _base_table():
        if option.dest == "spec_draft_backend_sampling" and build < BACKEND_SAMPLING_BUILD:
            continue
        if build < SPEC_RENAME_BUILD:
            option = _before_spec_rename(option)
            if not option.names:
                continue
        options.append(option)
    if build < PARALLEL_DRAFTING_BUILD:
        for deleted in _DELETED_AT_PARALLEL_DRAFTING:
            options.append(_before_spec_rename(deleted) if build < SPEC_RENAME_BUILD else deleted)
    return tuple(options)


def _before_spec_rename(option: LlamaOption) -> LlamaOption:
    """The same option before b8955: no ``--spec-draft-*`` names, no ``LLAMA_ARG_SPEC_DRAFT_*`` env,
    and the stubs of today were working options."""
    if option.removed:
        if option.names[0] in _OLD_SPELLINGS:
            return _OLD_SPELLINGS[option.names[0]]
        # --spec-ngram-size-n/-m/-min-hits took values then
        return LlamaOption(option.names, option.negated, option.kind, option.env, option.dest)
    names = tuple(name for name in option.names if not name.startswith("--spec-draft-"))
    env = option.env
    if env and env.startswith("LLAMA_ARG_SPEC_DRAFT_"):
        env = _OLD_ENV.get(option.dest)
    return LlamaOption(names, option.negated, option.kind, env, option.dest, option.removed)


class OptionLookup(Record):
    __slots__ = ("by_name", "options", "env_names", "by_env", "by_key")
    by_name: dict[str, tuple[LlamaOption, bool]]
    options: tuple[LlamaOption, ...]
    #: every variable some option reads (most launches set none: their env pass is skipped)
    env_names: frozenset[str]
    #: variable -> positions in ``options`` of the options that read it
    by_env: dict[str, tuple[int, ...]]
    #: preset/config key -> (option, positive form), as :func:`find_option` resolves it
    by_key: dict[str, tuple[LlamaOption, bool]]

    def __init__(self, by_name: dict[str, tuple[LlamaOption, bool]], options: tuple[LlamaOption, ...],
                 env_names: frozenset[str], by_env: dict[str, tuple[int, ...]],
                 by_key: dict[str, tuple[LlamaOption, bool]]) -> None:
        self.by_name = by_name
        self.options = options
        self.env_names = env_names
        self.by_env = by_env
        self.by_key = by_key


@cache
def option_lookup(build: int) -> OptionLookup:
    by_name: dict[str, tuple[LlamaOption, bool]] = {}
    by_env: dict[str, list[int]] = {}
    by_key: dict[str, tuple[LlamaOption, bool]] = {}
    table = option_table(build)
    for position, option in enumerate(table):
        for name in option.names:
            by_name[name] = (option, True)
        for name in option.negated:
            by_name[name] = (option, False)
        env_names = option.env_names
        for env_name in env_names:
            by_env.setdefault(env_name, []).append(position)
        # get_map_key_opt takes the first option that matches, trying its variables, then its
        # spellings, then its negated spellings: the first entry for a key is the one it finds
        for env_name in env_names:
            by_key.setdefault(env_name, (option, env_name == option.env or not env_name.startswith("LLAMA_ARG_NO_")))
        for name in option.names:
            by_key.setdefault(name.lstrip("-"), (option, True))
        for name in option.negated:
            by_key.setdefault(name.lstrip("-"), (option, False))
    return OptionLookup(by_name, table, frozenset(by_env), {name: tuple(found) for name, found in by_env.items()}, by_key)


def find_option(key: str, build: int) -> tuple[LlamaOption, bool] | None:
    """The option a preset/config key names: any spelling without its dashes, or its env name
    (``common/preset.cpp`` ``get_map_key_opt``). The bool says whether the key is a positive form."""
    return option_lookup(build).by_key.get(key)


def canonical_flag(option: LlamaOption) -> str:
    """The spelling a preset is turned back into (``common_preset::to_args`` uses the last name)."""
    return option.names[-1]
