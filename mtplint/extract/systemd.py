"""systemd service units: ``ExecStart=`` with the unit's ``Environment=``/``EnvironmentFile=``.

systemd semantics encoded here (systemd.syntax(7), systemd.service(5) "Command lines",
systemd.exec(5) "Environment"):

* Lines ending in ``\\`` continue on the next line (the backslash becomes a space); ``#``/``;``
  lines are comments, also inside a continuation. Drop-ins ``<unit>.d/*.conf`` are read after the
  unit, in name order; an empty ``ExecStart=`` clears the list.
* ``ExecStart=`` may start with the prefixes ``@`` (the second word is argv[0]), ``-``, ``:`` (no
  variable expansion), ``+``, ``!``, ``!!``. Words are split with quotes and backslash escapes.
* ``${VAR}`` expands to exactly one word (or part of one); ``$VAR`` as a word of its own expands
  to the value split at whitespace (zero or more words). ``%%`` is a literal ``%``; other ``%``
  specifiers depend on the host/instance and stay unresolved.
* ``Environment=`` takes space-separated, optionally quoted ``VAR=value`` assignments.
  ``EnvironmentFile=`` (``-`` prefix: optional) is read after ``Environment=`` and overrides it.
  Paths must be absolute; to make repository fixtures work, a path that does not exist is also
  looked up as ``<unit dir>/<basename>``. A file that cannot be found leaves its variables unknown.
* When ``ExecStart`` runs a shell script (``/opt/serve.sh``, ``bash /srv/start.sh``) the script is
  read (same lookup) and interpreted with the unit's environment; its launches are reported in the
  script. An ``sh -c '...'`` string is interpreted in place.
"""

from __future__ import annotations

import re
from collections.abc import Container

from mtplint.extract import ExtractContext, build_launch, load_host_file
from mtplint.extract.dotenv import parse_env_file
from mtplint.extract.launch import SHELL_PROGRAMS, Launch, recognise
from mtplint.extract.shell.expansion import split_words
from mtplint.extract.shell.launches import launches_in_script, script_commands
from mtplint.pathtext import glob_names, is_dir, join, parent_dir, path_name, path_suffix
from mtplint.records import Record
from mtplint.source import EnvEntry, MappedText, SourceFile, Token

_PREFIX = re.compile(r"[-@:+!]*")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_SPECIFIER = re.compile(r"%(.)")
#: the settings a unit's launches are read from
_READ = frozenset(("Environment", "EnvironmentFile", "ExecStart"))


class Setting(Record):
    __slots__ = ("key", "value", "line", "section", "source")
    key: str
    value: MappedText
    line: int
    section: str
    source: SourceFile

    def __init__(self, key: str, value: MappedText, line: int, section: str, source: SourceFile) -> None:
        self.key = key
        self.value = value
        self.line = line
        self.section = section
        self.source = source


class Unit(Record):
    __slots__ = ("source", "settings")
    source: SourceFile
    settings: list[Setting]

    def __init__(self, source: SourceFile, settings: list[Setting] | None = None) -> None:
        self.source = source
        self.settings = settings if settings is not None else []

    def service(self, key: str) -> list[Setting]:
        return [setting for setting in self.settings if setting.section == "Service" and setting.key == key]


def read_settings(source: SourceFile, keys: Container[str] | None = None) -> list[Setting]:
    """``Key=Value`` settings of a unit file, continuations joined, positions kept; only those of
    ``keys`` when given (the others' values are not cut out)."""
    text = source.text
    settings: list[Setting] = []
    section = ""
    lines: list[tuple[int, int]] = []
    position = 0
    while position < len(text):
        newline = text.find("\n", position)
        end = len(text) if newline < 0 else newline
        lines.append((position, end))
        position = end + 1
    index = 0
    while index < len(lines):
        start, end = lines[index]
        raw = text[start:end].rstrip("\r")
        stripped = raw.strip()
        index += 1
        if not stripped or stripped[0] in "#;":
            continue
        if stripped.startswith("[") and stripped.endswith("]"):
            section = stripped[1:-1].strip()
            continue
        line_number = index
        # a key written on the first line (most are) tells whether the value is wanted; the lines
        # it continues on are passed over either way
        first_key, equals, _ = raw.partition("=")
        wanted = keys is None or not equals or first_key.strip() in keys
        pieces: list[MappedText] = []
        current_start, current_raw = start, raw
        while True:
            trimmed = current_raw.rstrip()
            if trimmed.endswith("\\") and index < len(lines):
                if wanted:
                    pieces.append(MappedText.of_range(source, current_start, current_start + len(trimmed) - 1))
                    pieces.append(MappedText.synthetic(" ", source, current_start + len(trimmed) - 1))
                while index < len(lines) and text[lines[index][0]:lines[index][1]].lstrip()[:1] in ("#", ";"):
                    index += 1
                if index >= len(lines):
                    break
                current_start, line_end = lines[index]
                current_raw = text[current_start:line_end].rstrip("\r")
                index += 1
                continue
            if wanted:
                pieces.append(MappedText.of_range(source, current_start, current_start + len(current_raw)))
            break
        if not wanted:
            continue
        joined = MappedText.join(pieces)
        key, equals, _ = joined.text.partition("=")
        if not equals or (keys is not None and key.strip() not in keys):
            continue
        # the value without the blanks around it, cut out in one slice
        rest = joined.text[len(key) + 1:]
        value = joined.slice(len(joined.text) - len(rest.lstrip()), len(key) + 1 + len(rest.rstrip()))
        settings.append(Setting(key.strip(), value, line_number, section, source))
    return settings


def _specifiers(token: Token) -> Token:
    """``%%`` → ``%``; any other specifier (``%i``, ``%h``) depends on the host: unresolved."""
    if "%" not in token.value:
        return token
    unknown = [f"%{match.group(1)}" for match in _SPECIFIER.finditer(token.value) if match.group(1) != "%"]
    value = token.value.replace("%%", "%") if not unknown else token.value
    return Token(value, token.span, (*token.unresolved, *unknown), token.splat)


def environment(unit: Unit, ctx: ExtractContext, notes: list[str],
                unread: list[Token] | None = None) -> dict[str, EnvEntry]:
    """The unit's environment; ``unread`` collects the ``EnvironmentFile=`` settings mtplint cannot
    read (outside the checkout, a pattern): on the host they may set anything."""
    env: dict[str, EnvEntry] = {}
    for setting in unit.service("Environment"):
        if not setting.value.text:
            env.clear()
            continue
        for word in split_words(setting.value):
            name, equals, value = word.text.partition("=")
            if not equals or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                continue
            value_text = word.slice(len(name) + 1)
            token = _specifiers(Token(value, value_text.span() if value else word.span()))
            env[name] = EnvEntry(name, token, word.span())
    unit_dir = parent_dir(unit.source.path)
    for setting in unit.service("EnvironmentFile"):
        raw = setting.value.text
        optional = raw.startswith("-")
        path_text = raw[1:] if optional else raw
        if not path_text:
            continue
        written = Token(f"EnvironmentFile={raw}", setting.value.span())
        if "*" in path_text or "%" in path_text:
            notes.append(f"EnvironmentFile={raw} (line {setting.line}) cannot be resolved statically: its variables are unknown")
            if unread is not None:
                unread.append(written)
            continue
        loaded = load_host_file(path_text, unit_dir, ctx.loader)
        if loaded is None:
            # /etc/default/... lives on the host, not in the repository; with `-` it may be absent there
            # too, but nothing says it is
            if not optional:
                notes.append(f"EnvironmentFile={path_text} (line {setting.line}) not found: its variables are unknown")
            if unread is not None:
                unread.append(written)
            continue
        ctx.related.setdefault(unit.source.display, []).append(loaded.display)
        for name, token in parse_env_file(loaded, dialect="systemd"):
            env[name] = EnvEntry(name, token, token.span)
    return env


def expand_command(value: MappedText, env: dict[str, EnvEntry]) -> tuple[list[Token], list[MappedText], bool]:
    """The argv of an ``ExecStart=`` value: (tokens, their texts, program given separately with ``@``)."""
    prefix = _PREFIX.match(value.text)
    flags = prefix.group(0) if prefix else ""
    words = split_words(value.slice(len(flags)))
    tokens: list[Token] = []
    texts: list[MappedText] = []
    expand = ":" not in flags
    for word in words:
        whole = _VARIABLE.fullmatch(word.text)
        if expand and whole is not None and whole.group(2):
            # `$VAR` as a word of its own: the value split at whitespace (zero or more words)
            name = whole.group(2)
            entry = env.get(name)
            if entry is None or not entry.value.resolved:
                tokens.append(Token(word.text, word.span(), (name,), splat=True))
                texts.append(word)
                continue
            for part in entry.value.value.split():
                tokens.append(Token(part, word.span()))
                texts.append(MappedText(part, [word.offsets[0]] * len(part) + [word.offsets[-1]], word.source))
            continue
        if expand and "$" in word.text:
            token, mapped = _substitute(word, env)
        else:
            token, mapped = Token(word.text, word.span()), word
        tokens.append(_specifiers(token))
        texts.append(mapped)
    at_sign = "@" in flags
    if at_sign and len(tokens) >= 2:
        # `@/usr/bin/python3 my-name -m ...`: runs the first word with argv[0] = the second
        tokens = [tokens[0], *tokens[2:]]
        texts = [texts[0], *texts[2:]]
    return tokens, texts, at_sign


def _substitute(word: MappedText, env: dict[str, EnvEntry]) -> tuple[Token, MappedText]:
    """``${VAR}``/``$VAR`` inside a word (one word results, whitespace kept)."""
    parts: list[MappedText] = []
    unresolved: list[str] = []
    position = 0
    for match in _VARIABLE.finditer(word.text):
        parts.append(word.slice(position, match.start()))
        name = match.group(1) or match.group(2)
        entry = env.get(name)
        if entry is None or not entry.value.resolved:
            parts.append(word.slice(match.start(), match.end()))
            unresolved.append(name)
        else:
            value = entry.value.value
            offset = word.offsets[match.start()]
            parts.append(MappedText(value, [offset] * len(value) + [word.offsets[match.end()]], word.source))
        position = match.end()
    parts.append(word.slice(position))
    mapped = MappedText.join(parts)
    return Token(mapped.text, word.span(), tuple(unresolved)), mapped


def extract(source: SourceFile, ctx: ExtractContext) -> list[Launch]:
    unit = Unit(source, read_settings(source, _READ))
    drop_in_dir = join(parent_dir(source.path), f"{path_name(source.path)}.d")
    if is_dir(drop_in_dir):
        for drop_in in glob_names(drop_in_dir, lambda name: name.endswith(".conf")):
            loaded = ctx.loader.load(drop_in)
            if loaded is not None:
                unit.settings.extend(read_settings(loaded, _READ))
    notes: list[str] = []
    unread: list[Token] = []
    env = environment(unit, ctx, notes, unread)
    exec_starts: list[Setting] = []
    for setting in unit.service("ExecStart"):
        if not setting.value.text:
            exec_starts.clear()
        else:
            exec_starts.append(setting)
    launches: list[Launch] = []
    for setting in exec_starts:
        tokens, texts, _ = expand_command(setting.value, env)
        if not tokens:
            continue
        found = _launches_of_command(tokens, texts, setting, env, unit, ctx)
        for launch in found:
            launch.notes.extend(notes)
            if launch.image is None:  # in a container only `-e NAME` passes the unit's variables on
                launch.env_open.extend(unread)
        launches.extend(found)
    return launches


def _launches_of_command(tokens: list[Token], texts: list[MappedText], setting: Setting,
                         env: dict[str, EnvEntry], unit: Unit, ctx: ExtractContext) -> list[Launch]:
    source = setting.source
    unit_dir = parent_dir(unit.source.path)
    context = f"line {setting.line}"
    recognised = recognise(tokens)
    if recognised is not None:
        return [build_launch(recognised, source, base_dir=unit_dir, context=context, env=env)]
    program = tokens[0]
    if not program.resolved:
        return []
    name = program.value.rsplit("/", 1)[-1]
    script_index = 0
    if name in SHELL_PROGRAMS:
        position = 1
        while position < len(tokens) and tokens[position].resolved and tokens[position].value.startswith("-"):
            option = tokens[position].value
            if not option.startswith("--") and "c" in option[1:]:
                if position + 1 >= len(tokens):
                    return []
                commands = script_commands(texts[position + 1], env, unit_dir, load=ctx.loader.load,
                                           positional=tokens[position + 3:])
                launches: list[Launch] = []
                for command in commands:
                    found = recognise(command.argv)
                    if found is not None:
                        launches.append(build_launch(found, source, base_dir=unit_dir,
                                                     context=f"line {command.line}", env=command.env))
                return launches
            position += 1
        if position >= len(tokens) or not tokens[position].resolved:
            return []
        script_index = position
    script_token = tokens[script_index]
    script = load_host_file(script_token.value, unit_dir, ctx.loader)
    if script is None or not _looks_like_shell(script, script_index > 0):
        return []
    ctx.related.setdefault(unit.source.display, []).append(script.display)
    launches = launches_in_script(script, ctx, env=env, positional=tokens[script_index + 1:])
    for launch in launches:
        launch.notes.append(f"started by {unit.source.display} (ExecStart, line {setting.line})")
    return launches


def _looks_like_shell(script: SourceFile, run_by_shell: bool) -> bool:
    if run_by_shell or path_suffix(script.path) in (".sh", ".bash"):
        return True
    first_line = script.text.split("\n", 1)[0]
    if not first_line.startswith("#!"):
        return False
    words = first_line[2:].split()
    if not words:
        return False
    interpreter = words[0].rsplit("/", 1)[-1]
    if interpreter == "env" and len(words) > 1:
        interpreter = words[-1].rsplit("/", 1)[-1]
    return interpreter in SHELL_PROGRAMS
