"""llama-server preset INI files (``--models-preset FILE``) and ``config.ini``.

What llama.cpp does with them (``common/preset.cpp`` and ``tools/server/server-models.cpp`` at
b10454; ``config.ini`` since b10398, PR #26118):

* the grammar is strict: ``[section]`` headers, ``key = value`` lines, ``;``/``#`` comments, blank
  lines; a value ends at the first ``;`` or ``#`` or at trailing blanks; anything else fails the file;
* keys before any header form the section ``default``; the key ``version`` is reserved and skipped;
* a key is any spelling of an option without its dashes (``c``, ``ctx-size``, ``no-mmap``) or the
  option's env name (``LLAMA_ARG_CTX_SIZE``); a negated spelling flips a boolean value;
* ``[*]`` holds global options; every other section is one model preset, built as global options
  overridden by the section's own; the router turns each preset back into a command line (the
  option's last spelling, then its value; a boolean ``false`` becomes its ``--no-`` form);
* a section named like a cached model (``owner/repo:tag``) needs no ``model`` key;
* in a ``--models-preset`` file an unknown key stops the router (``option 'x' not recognized in
  preset 'NAME'``); ``config.ini`` (b10398+, applied before env and CLI to every llama.cpp program)
  skips unknown keys.

Each section that ends up with a model becomes one llama.cpp launch whose argv words point at the
key (option) and value (argument) in the file; the engine reads them as ``config-file`` settings.
A file whose keys are mostly not llama-server options is not a preset and yields nothing.
"""

from __future__ import annotations

import re

from mtplint.extract import ExtractContext, Malformed, build_launch
from mtplint.extract.launch import Launch, Recognised
from mtplint.llama_options import KNOWN_BUILDS, build_number, find_option
from mtplint.pathtext import parent_dir, path_name
from mtplint.records import Record
from mtplint.source import MappedText, SourceFile, Token

_HEADER = re.compile(r"[ \t]*\[[ \t]*([^\]]*?)[ \t]*\][ \t]*(?:[;#].*)?")
_KEY_VALUE = re.compile(r"([A-Za-z_][A-Za-z0-9_.\-]*)[ \t]*=[ \t]*")
_COMMENT_OR_BLANK = re.compile(r"[ \t]*(?:[;#].*)?")
#: ``common_params_add_preset_options``: router-only keys, not command-line options
PRESET_ONLY_KEYS = ("load-on-startup", "stop-timeout", "dedup-cache-models")
#: option destinations that name the model a preset serves
MODEL_DESTS = ("model", "hf_repo", "model_url", "docker_repo")
GLOBAL = "*"
DEFAULT = "default"


class _Entry(Record):
    __slots__ = ("key", "key_text", "value")
    key: str
    key_text: MappedText
    value: MappedText

    def __init__(self, key: str, key_text: MappedText, value: MappedText) -> None:
        self.key = key
        self.key_text = key_text
        self.value = value


class _Section(Record):
    __slots__ = ("name", "header", "entries")
    name: str
    header: MappedText | None
    entries: list[_Entry]

    def __init__(self, name: str, header: MappedText | None, entries: list[_Entry] | None = None) -> None:
        self.name = name
        self.header = header
        self.entries = entries if entries is not None else []


def parse_ini(source: SourceFile) -> tuple[list[_Section], int | None]:
    """The sections of ``source`` by llama.cpp's grammar, and the offset of the first line it rejects."""
    sections = [_Section(DEFAULT, None)]
    bad_line: int | None = None
    offset = 0
    text = source.text
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        start = offset
        offset += len(line)
        header = _HEADER.fullmatch(body)
        if header:
            name_start = start + header.start(1)
            sections.append(_Section(header.group(1), MappedText.of_range(source, name_start, start + header.end(1))))
            continue
        pair = _KEY_VALUE.match(body)
        if pair:
            value_start = pair.end()
            end = value_start
            while end < len(body) and body[end] not in ";#":
                end += 1
            while end > value_start and body[end - 1] in " \t":
                end -= 1
            sections[-1].entries.append(_Entry(
                pair.group(1), MappedText.of_range(source, start + pair.start(1), start + pair.end(1)),
                MappedText.of_range(source, start + value_start, start + end)))
            continue
        if _COMMENT_OR_BLANK.fullmatch(body):
            continue
        if bad_line is None:
            bad_line = start
    return sections, bad_line


def _looks_like_llama(sections: list[_Section], build: int) -> bool:
    known = total = 0
    strong = False
    for section in sections:
        for entry in section.entries:
            if entry.key == "version":
                continue
            total += 1
            found = find_option(entry.key, build)
            if found is None and entry.key not in PRESET_ONLY_KEYS:
                continue
            known += 1
            if entry.key.startswith("LLAMA_ARG_") or entry.value.text.lower().endswith(".gguf"):
                strong = True
            if found is not None and (found[0].dest in MODEL_DESTS or found[0].dest.startswith("spec_")):
                strong = True
    return strong and known * 2 > total


def extract(source: SourceFile, ctx: ExtractContext) -> list[Launch]:
    build = build_number(KNOWN_BUILDS[-1])
    sections, bad_line = parse_ini(source)
    if not _looks_like_llama(sections, build):
        return []
    if bad_line is not None:
        raise Malformed("llama-server cannot parse this line of the preset file (expected [section], key = value or a comment)",
                        bad_line)
    is_config = path_name(source.path).lower() == "config.ini"
    merged: dict[str, _Section] = {}
    for section in sections:  # a repeated header continues the same section
        target = merged.setdefault(section.name, _Section(section.name, section.header))
        target.entries.extend(section.entries)
    global_section = merged.get(GLOBAL, _Section(GLOBAL, None))
    launches = []
    for name, section in merged.items():
        if name == GLOBAL or (name == DEFAULT and not section.entries):
            continue
        launch = _launch(source, name, section, global_section, build, is_config)
        if launch is not None:
            launches.append(launch)
    if not launches and global_section.entries:
        launch = _launch(source, GLOBAL, _Section(GLOBAL, global_section.header), global_section, build, is_config)
        if launch is not None:
            launches.append(launch)
    return launches


def _launch(source: SourceFile, name: str, section: _Section, global_section: _Section, build: int,
            is_config: bool) -> Launch | None:
    # option identity -> words, global first; a section's spelling of the same option replaces it
    words: dict[str, list[Token]] = {}
    notes: list[str] = []
    has_model = False
    for entry in [*global_section.entries, *section.entries] if name != GLOBAL else global_section.entries:
        if entry.key == "version" or entry.key in PRESET_ONLY_KEYS:
            continue
        found = find_option(entry.key, build)
        key_token = Token.from_mapped(entry.key_text)
        if found is None:
            if is_config:
                notes.append(f"config.ini key '{entry.key}' is not a llama-server option and is skipped")
            else:
                notes.append(f"llama-server: option '{entry.key}' not recognized in preset '{name}'")
                words[f"?{entry.key}"] = [Token("--" + entry.key, key_token.span)]
            continue
        option, positive = found
        value = entry.value.text
        if option.dest in MODEL_DESTS:
            has_model = True
        if option.values == 0:
            # preset.cpp parse_bool_arg: a negated spelling flips the value; to_args: a falsey value
            # gives the --no- form, or drops a flag that has none (exact, case-sensitive words)
            if option.negated and not positive:
                value = "false" if value in ("on", "enabled", "true", "1") else "true"
            if value in ("off", "disabled", "false", "0"):
                if option.negated:
                    words[option.dest] = [Token(option.negated[-1], key_token.span)]
                else:
                    words.pop(option.dest, None)
            else:
                words[option.dest] = [Token(option.names[-1], key_token.span)]
            continue
        if option.values == 2:
            notes.append(f"llama-server: option '{entry.key}' has two values, which presets do not support")
            continue
        words[option.dest] = [Token(option.names[-1], key_token.span), Token.from_mapped(entry.value)]
    if not has_model and name not in (GLOBAL, DEFAULT) and "/" in name and section.header is not None:
        # the section names a model of the router's cache (server-models.cpp load_from_cache)
        has_model = True
        words["hf_repo"] = [Token("--hf-repo", section.header.span()), Token.from_mapped(section.header)]
    if not has_model:
        return None
    at = section.header or (section.entries[0].key_text if section.entries else global_section.entries[0].key_text)
    program = [Token("llama-server", at.span())]
    args = [token for tokens in words.values() for token in tokens]
    recognised = Recognised("llama.cpp", "llama-server (preset)" if not is_config else "llama-server (config.ini)",
                            program, args)
    launch = build_launch(recognised, source, base_dir=parent_dir(source.path),
                          context=f"preset {name}" if not is_config else f"config.ini [{name}]", span=at.span())
    launch.notes.extend(notes)
    return launch
