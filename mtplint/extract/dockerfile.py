"""Dockerfiles: the launch a container of the final stage runs (``ENTRYPOINT`` + ``CMD``).

Docker semantics encoded here (Dockerfile reference, "CMD", "ENTRYPOINT", "ENV", "ARG",
"Environment replacement", "Parser directives"):

* Instructions continue over lines ending in the escape character (``\\`` or the one named by a
  ``# escape=`` directive); comment lines inside a continued instruction are dropped.
* ``CMD``/``ENTRYPOINT`` in *exec form* (a JSON array of strings) run without a shell — ``$VAR``
  in them stays literal. In *shell form* they run as ``/bin/sh -c "<text>"``, so the shell expands
  variables at run time, from the image's ``ENV`` (``ARG`` values do not reach the container).
* The last ``CMD`` and the last ``ENTRYPOINT`` of the final stage count; the container runs
  ENTRYPOINT followed by CMD when ENTRYPOINT is in exec form, and ignores CMD when ENTRYPOINT is in
  shell form. Setting ENTRYPOINT drops a CMD inherited from the base image.
* ``ENV``/``ARG``/``FROM`` values get the builder's variable substitution (``$VAR``, ``${VAR}``,
  ``${VAR:-word}``, ``${VAR:+word}``) from the ARGs and ENVs in scope; an ``ARG`` without a default
  (given by ``--build-arg`` at build time) and anything inherited from a base image are unknown.
* A stage ``FROM`` an earlier stage inherits its ENV, CMD and ENTRYPOINT.

When only CMD is given, the base image's own entrypoint (known engine images, see
:func:`mtplint.extract.launch.image_entry`) receives it as arguments.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from mtplint.extract import ExtractContext, Malformed, build_launch
from mtplint.extract.launch import (
    SHELL_PROGRAMS,
    Launch,
    Recognised,
    entry_for_image,
    image_version_hint,
    recognise,
)
from mtplint.extract.shell.expansion import substitute_words
from mtplint.pathtext import join, parent_dir, path_suffix
from mtplint.records import Record
from mtplint.source import EnvEntry, MappedText, SourceFile, Token

_DIRECTIVE = re.compile(r"#\s*([A-Za-z]+)\s*=\s*(\S+)\s*$")
_INSTRUCTION = re.compile(r"\s*([A-Za-z]+)(\s+|$)")
_HEREDOC = re.compile(r"<<(-?)([\"']?)([A-Za-z_][A-Za-z0-9_]*)\2")


class Instruction(Record):
    __slots__ = ("keyword", "arguments", "line", "offset")
    keyword: str  # upper case
    arguments: MappedText  # after the keyword, continuations removed
    line: int
    offset: int  # file offset of the keyword

    def __init__(self, keyword: str, arguments: MappedText, line: int, offset: int) -> None:
        self.keyword = keyword
        self.arguments = arguments
        self.line = line
        self.offset = offset


class Command(Record):
    """A CMD or ENTRYPOINT: exec form (``words``) or shell form (``shell``)."""

    __slots__ = ("instruction", "words", "shell")
    instruction: Instruction
    words: list[tuple[Token, MappedText]] | None
    shell: MappedText | None

    def __init__(
        self,
        instruction: Instruction,
        words: list[tuple[Token, MappedText]] | None = None,
        shell: MappedText | None = None,
    ) -> None:
        self.instruction = instruction
        self.words = words
        self.shell = shell

    def argv(self) -> list[Token]:
        if self.words is not None:
            return [token for token, _ in self.words]
        assert self.shell is not None
        span = self.shell.span()
        return [Token("/bin/sh", span), Token("-c", span), Token(self.shell.text, span)]


class Stage(Record):
    __slots__ = ("image", "name", "line", "env", "args", "cmd", "entrypoint", "base_stage", "cmd_inherited", "copies",
                 "runs")
    image: Token
    name: str | None
    line: int
    env: dict[str, EnvEntry]
    args: dict[str, Token | None]
    cmd: Command | None
    entrypoint: Command | None
    base_stage: Stage | None
    cmd_inherited: bool
    #: (sources in the build context, destination in the image) of COPY/ADD without --from
    copies: list[tuple[list[str], str]]
    #: the stage's RUN lines as the builder's shell receives them (ARG/ENV substituted), with their spans
    runs: list[Token]

    def __init__(
        self,
        image: Token,
        name: str | None,
        line: int,
        env: dict[str, EnvEntry] | None = None,
        args: dict[str, Token | None] | None = None,
        cmd: Command | None = None,
        entrypoint: Command | None = None,
        base_stage: Stage | None = None,
        cmd_inherited: bool = False,
        copies: list[tuple[list[str], str]] | None = None,
        runs: list[Token] | None = None,
    ) -> None:
        self.image = image
        self.name = name
        self.line = line
        self.env = env if env is not None else {}
        self.args = args if args is not None else {}
        self.cmd = cmd
        self.entrypoint = entrypoint
        self.base_stage = base_stage
        self.cmd_inherited = cmd_inherited
        self.copies = copies if copies is not None else []
        self.runs = runs if runs is not None else []


# --- reading instructions -----------------------------------------------------------------------


def instructions(source: SourceFile) -> list[Instruction]:
    """The instructions of a Dockerfile, with continuation lines joined (positions kept)."""
    text = source.text
    lines: list[tuple[int, int]] = []  # (start, end) offsets without the newline
    position = 0
    while position <= len(text):
        newline = text.find("\n", position)
        end = len(text) if newline < 0 else newline
        lines.append((position, end))
        if newline < 0:
            break
        position = newline + 1
    escape = "\\"
    index = 0
    # Parser directives: only at the very top, before any comment, blank line or instruction.
    while index < len(lines):
        start, end = lines[index]
        match = _DIRECTIVE.match(text, start, end)
        if match is None:
            break
        if match.group(1).lower() == "escape" and match.group(2) in ("\\", "`"):
            escape = match.group(2)
        index += 1
    result: list[Instruction] = []
    while index < len(lines):
        start, end = lines[index]
        line_text = text[start:end]
        stripped = line_text.strip()
        if not stripped or stripped.startswith("#"):
            index += 1
            continue
        first_line = index
        pieces: list[MappedText] = []
        while True:
            start, end = lines[index]
            raw = text[start:end].rstrip("\r")
            content_end = start + len(raw)
            trimmed = raw.rstrip(" \t")
            continued = trimmed.endswith(escape) and index + 1 < len(lines)
            if continued:
                pieces.append(MappedText.of_range(source, start, start + len(trimmed) - 1))
            else:
                pieces.append(MappedText.of_range(source, start, content_end))
            index += 1
            if not continued:
                break
            # comment and empty lines inside a continued instruction are skipped
            while index < len(lines) and (not text[lines[index][0]:lines[index][1]].strip() or
                                          text[lines[index][0]:lines[index][1]].lstrip().startswith("#")):
                index += 1
            if index >= len(lines):
                break
        joined = MappedText.join(pieces)
        match = _INSTRUCTION.match(joined.text)
        if match is None:
            raise Malformed("Dockerfile: cannot read this line as an instruction", lines[first_line][0])
        keyword = match.group(1).upper()
        arguments = joined.slice(match.end())
        result.append(Instruction(keyword, arguments, first_line + 1, joined.offsets[match.start(1)]))
        index = _skip_heredocs(text, lines, index, arguments.text)
    return result


def _skip_heredocs(text: str, lines: list[tuple[int, int]], index: int, arguments: str) -> int:
    """``RUN <<EOF`` ... ``EOF``: the body lines are not instructions."""
    for match in _HEREDOC.finditer(arguments):
        delimiter = match.group(3)
        while index < len(lines):
            start, end = lines[index]
            body_line = text[start:end].rstrip("\r")
            index += 1
            if (body_line.lstrip("\t") if match.group(1) else body_line) == delimiter:
                break
    return index


# --- exec form ----------------------------------------------------------------------------------


def exec_form(arguments: MappedText) -> list[tuple[Token, MappedText]] | None:
    """The strings of a JSON array (exec form), each mapped to the file; ``None`` if not JSON."""
    text = arguments.text.strip()
    if not text.startswith("["):
        return None
    try:
        values = json.loads(text)
    except ValueError:
        return None
    if not isinstance(values, list) or not all(isinstance(value, str) for value in values):
        return None
    words: list[tuple[Token, MappedText]] = []
    index = arguments.text.index("[")
    source_text = arguments.text
    for _ in values:
        start = source_text.index('"', index)
        end, mapped = _json_string(arguments, start)
        words.append((Token(mapped.text, arguments.slice(start, end + 1).span()), mapped))
        index = end + 1
    return words


_JSON_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


_JSON_STRING_SPECIAL = re.compile(r'["\\]')


def _json_string(arguments: MappedText, start: int) -> tuple[int, MappedText]:
    """Decode the JSON string starting at the quote ``start``; returns (closing quote index, text)."""
    text = arguments.text
    parts: list[MappedText] = []
    index = start + 1
    while index < len(text) and text[index] != '"':
        if text[index] == "\\" and index + 1 < len(text):
            following = text[index + 1]
            if following == "u":
                code = int(text[index + 2:index + 6], 16)
                parts.append(MappedText(chr(code), [arguments.offsets[index], arguments.offsets[index] + 1],
                                        arguments.source))
                index += 6
                continue
            value = _JSON_ESCAPES.get(following, following)
            parts.append(MappedText(value, [arguments.offsets[index], arguments.offsets[index] + 1], arguments.source))
            index += 2
            continue
        # the characters up to the next quote or escape, as one piece (joined, the same offsets as
        # a piece per character)
        stop = _JSON_STRING_SPECIAL.search(text, index + 1)
        run_end = len(text) if stop is None else stop.start()
        parts.append(arguments.slice(index, run_end))
        index = run_end
    mapped = MappedText.join(parts) if parts else arguments.slice(start + 1, start + 1)
    return index, mapped


# --- stages -------------------------------------------------------------------------------------


def stages(source: SourceFile, build_args: Mapping[str, Token] | None = None) -> list[Stage]:
    """Read the stages (with their env, CMD, ENTRYPOINT) of a Dockerfile. ``build_args``: the
    ``--build-arg`` values (compose ``build.args``), which replace the ``ARG`` defaults."""
    global_args: dict[str, Token | None] = {}
    result: list[Stage] = []
    by_name: dict[str, Stage] = {}
    current: Stage | None = None
    for instruction in instructions(source):
        keyword = instruction.keyword
        if keyword == "FROM":
            current = _from(instruction, global_args, by_name)
            result.append(current)
            if current.name:
                by_name[current.name.lower()] = current
            continue
        if keyword == "ARG":
            scope = global_args if current is None else current.args
            _arg(instruction, scope, global_args if current is not None else {}, current, build_args or {})
            continue
        if current is None:
            continue
        if keyword == "ENV":
            _env(instruction, current)
        elif keyword in ("COPY", "ADD"):
            _copy(instruction, current)
        elif keyword == "RUN":
            ((expanded, _),) = substitute_words(instruction.arguments, _variables(current, {}), split=False)
            current.runs.append(Token(expanded.value, instruction.arguments.span(), expanded.unresolved))
        elif keyword in ("CMD", "ENTRYPOINT"):
            words = exec_form(instruction.arguments)
            command = Command(instruction, words=words) if words is not None else Command(
                instruction, shell=_strip(instruction.arguments))
            if keyword == "CMD":
                current.cmd = command
                current.cmd_inherited = False
            else:
                current.entrypoint = command
                if current.cmd_inherited:
                    current.cmd, current.cmd_inherited = None, False
    return result


def _strip(text: MappedText) -> MappedText:
    start = len(text.text) - len(text.text.lstrip())
    end = len(text.text.rstrip())
    return text.slice(start, end)


def _variables(stage: Stage | None, global_args: dict[str, Token | None]) -> dict[str, Token | None]:
    if stage is None:
        return dict(global_args)
    variables: dict[str, Token | None] = dict(stage.args)
    variables.update({name: entry.value for name, entry in stage.env.items()})
    return variables


def _from(instruction: Instruction, global_args: dict[str, Token | None], by_name: dict[str, Stage]) -> Stage:
    words = substitute_words(instruction.arguments, dict(global_args))
    words = [(token, mapped) for token, mapped in words if not token.value.startswith("--")]
    if not words:
        raise Malformed("Dockerfile: FROM without an image", instruction.offset)
    image = words[0][0]
    name = words[2][0].value if len(words) >= 3 and words[1][0].value.lower() == "as" else None
    stage = Stage(image, name, instruction.line)
    parent = by_name.get(image.value.lower()) if image.resolved else None
    if parent is not None:
        stage.base_stage = parent
        stage.image = parent.image
        stage.env = dict(parent.env)
        stage.cmd = parent.cmd
        stage.entrypoint = parent.entrypoint
        stage.cmd_inherited = parent.cmd is not None
    return stage


def _arg(instruction: Instruction, scope: dict[str, Token | None], global_args: dict[str, Token | None],
         stage: Stage | None, build_args: Mapping[str, Token]) -> None:
    variables = _variables(stage, global_args if stage is None else {})
    for token, _mapped in substitute_words(instruction.arguments, variables):
        name, has_default, default = token.value.partition("=")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            continue
        if name in build_args:
            scope[name] = build_args[name]
        elif has_default:
            scope[name] = Token(default, token.span, token.unresolved)
        elif stage is not None and name in global_args:
            # re-declaring a global ARG inside a stage imports its value
            scope[name] = global_args[name]
        else:
            scope[name] = None  # given with --build-arg, or empty: unknown here


def _copy(instruction: Instruction, stage: Stage) -> None:
    words = exec_form(instruction.arguments) or substitute_words(instruction.arguments, _variables(stage, {}))
    paths = [token.value for token, _ in words if not token.value.startswith("--")]
    if any(token.value.startswith("--from") for token, _ in words) or len(paths) < 2:
        return
    stage.copies.append((paths[:-1], paths[-1]))


def _env(instruction: Instruction, stage: Stage) -> None:
    arguments = instruction.arguments
    variables = _variables(stage, {})
    stripped = arguments.text.lstrip()
    first_word = stripped.split(None, 1)[0] if stripped else ""
    if "=" not in first_word:
        # legacy `ENV NAME value with spaces`
        lead = len(arguments.text) - len(stripped)
        name = first_word
        rest_start = lead + len(first_word)
        rest = _strip(arguments.slice(rest_start))
        if not name:
            return
        ((token, _),) = substitute_words(rest, variables, split=False)
        span = arguments.slice(lead, len(arguments.text.rstrip())).span()
        stage.env[name] = EnvEntry(name, Token(token.value, rest.span(), token.unresolved), span)
        return
    for token, mapped in substitute_words(arguments, variables):
        name, has_value, _ = token.value.partition("=")
        if not has_value or not name:
            continue
        value_mapped = mapped.slice(len(name) + 1)
        value = Token(value_mapped.text, value_mapped.span() if value_mapped.text else token.span, token.unresolved)
        stage.env[name] = EnvEntry(name, value, token.span)
        variables[name] = value


# --- launches -----------------------------------------------------------------------------------


def extract(source: SourceFile, ctx: ExtractContext) -> list[Launch]:
    """The launch of the final stage (a Dockerfile's other stages are build steps)."""
    all_stages = stages(source)
    if not all_stages:
        return []
    final = all_stages[-1]
    base_dir = parent_dir(source.path)
    return stage_launches(final, source, base_dir, ctx)


def stage_launches(stage: Stage, source: SourceFile, base_dir: str, ctx: ExtractContext) -> list[Launch]:
    entrypoint, cmd = stage.entrypoint, stage.cmd
    if entrypoint is None and cmd is None:
        return []
    anchor = (entrypoint or cmd)
    assert anchor is not None
    context = f"line {anchor.instruction.line}"
    env = dict(stage.env)
    # Shell form ENTRYPOINT: CMD is ignored.
    if entrypoint is not None and entrypoint.shell is not None:
        return _shell_launches(entrypoint.shell, stage, source, base_dir, env, [])
    if entrypoint is not None and entrypoint.words is not None:
        tail = cmd.argv() if cmd is not None else []
        return _exec_launches(entrypoint.words, tail, stage, source, base_dir, env, context, ctx)
    assert cmd is not None
    if cmd.shell is not None:
        launches = _shell_launches(cmd.shell, stage, source, base_dir, env, [])
        if launches:
            return launches
        # the image's entrypoint (if any) receives `/bin/sh -c ...`: not a launch we can read
        return []
    assert cmd.words is not None
    launches = _exec_launches(cmd.words, [], stage, source, base_dir, env, context, ctx, allow_image=True)
    return launches


def _exec_launches(words: list[tuple[Token, MappedText]], tail: list[Token], stage: Stage, source: SourceFile,
                   base_dir: str, env: dict[str, EnvEntry], context: str, ctx: ExtractContext,
                   allow_image: bool = False) -> list[Launch]:
    tokens = [token for token, _ in words]
    argv = [*tokens, *tail]
    shell = _shell_script(words)
    if shell is not None:
        script, position = shell
        positional = argv[position + 2:]
        return _shell_launches(script, stage, source, base_dir, env, positional)
    recognised: Recognised | None
    if allow_image:
        recognised = entry_for_image(stage.image, argv)
    else:
        recognised = recognise(argv)
        if recognised is not None:
            recognised.image = stage.image
    if recognised is None:
        return _script_launches(argv, stage, source, base_dir, env, ctx)
    span = argv[0].span if argv else None
    return [build_launch(recognised, source, base_dir=base_dir, context=context, env=env, span=span)]


def _shell_script(words: list[tuple[Token, MappedText]]) -> tuple[MappedText, int] | None:
    """``["/bin/bash", "-c", "vllm serve ..."]``: the script string and the index of ``-c``."""
    if not words or words[0][0].value.rsplit("/", 1)[-1] not in SHELL_PROGRAMS:
        return None
    for position in range(1, len(words) - 1):
        value = words[position][0].value
        if not value.startswith("-"):
            return None
        if not value.startswith("--") and "c" in value[1:]:
            return words[position + 1][1], position
    return None


def _shell_launches(script: MappedText, stage: Stage, source: SourceFile, base_dir: str,
                    env: dict[str, EnvEntry], positional: list[Token]) -> list[Launch]:
    from mtplint.extract.shell.launches import script_commands  # noqa: PLC0415 - the shell interpreter: not for an exec form

    commands = script_commands(script, env, base_dir, positional=positional or None)
    launches: list[Launch] = []
    for command in commands:
        recognised = recognise(command.argv)
        if recognised is None:
            continue
        if recognised.image is None:
            recognised.image = stage.image
        launches.append(build_launch(recognised, source, base_dir=base_dir, context=f"line {command.line}",
                                     env=command.env))
    return launches



def _script_launches(argv: list[Token], stage: Stage, source: SourceFile, base_dir: str,
                     env: dict[str, EnvEntry], ctx: ExtractContext) -> list[Launch]:
    """``ENTRYPOINT ["/entrypoint.sh"]`` (or ``["bash", "/app/run.sh"]``): read the script the
    build copied into the image (``COPY run.sh /app/``) and interpret it with the image's ENV and
    the remaining words as its arguments. Its launches are reported in the script."""
    index = 0
    if argv and argv[0].resolved and argv[0].value.rsplit("/", 1)[-1] in SHELL_PROGRAMS:
        index = 1
        while index < len(argv) and argv[index].resolved and argv[index].value.startswith("-"):
            index += 1
    if index >= len(argv) or not argv[index].resolved:
        return []
    target = argv[index].value
    script = None
    for candidate in _copied_from(target, stage, base_dir):
        script = ctx.loader.load(candidate)
        if script is not None:
            break
    if script is None or not (index > 0 or _is_shell_script(script)):
        return []
    ctx.related.setdefault(source.display, []).append(script.display)
    from mtplint.extract.shell.launches import launches_in_script  # noqa: PLC0415 - the shell interpreter: only a script

    found = launches_in_script(script, ctx, env=env, positional=argv[index + 1:])
    for launch in found:
        if launch.image is None:
            launch.image = stage.image
            _add_image_version(launch)
        launch.notes.append(f"run by {source.display} (ENTRYPOINT/CMD)")
    return found


def _copied_from(target: str, stage: Stage, base_dir: str) -> list[str]:
    """Build-context files that may be ``target`` in the image, most specific first."""
    name = target.rsplit("/", 1)[-1]
    directory = target.rsplit("/", 1)[0] if "/" in target else ""
    candidates: list[str] = []
    for sources, destination in reversed(stage.copies):
        for copied in sources:
            if "*" in copied or "?" in copied:
                continue
            if destination == target or (
                    (destination.endswith("/") or len(sources) > 1) and destination.rstrip("/") == directory
                    and copied.rsplit("/", 1)[-1] == name):
                candidates.append(join(base_dir, copied))
            elif destination.rstrip("/") == directory and copied.rstrip("/").rsplit("/", 1)[-1] != name:
                candidates.append(join(base_dir, copied, name))  # a directory copied into place
    candidates.append(join(base_dir, name))
    return candidates


def _is_shell_script(script: SourceFile) -> bool:
    if path_suffix(script.path) in (".sh", ".bash"):
        return True
    first_line = script.text.split("\n", 1)[0]
    words = first_line[2:].split() if first_line.startswith("#!") else []
    if not words:
        return False
    interpreter = words[-1] if words[0].endswith("/env") else words[0]
    return interpreter.rsplit("/", 1)[-1] in SHELL_PROGRAMS


def _add_image_version(launch: Launch) -> None:
    """The image tag's engine version, as :func:`build_launch` records it for docker launches."""
    hint = image_version_hint(launch.engine, launch.image)
    if hint is not None:
        launch.version_hints.append(hint)
