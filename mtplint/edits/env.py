"""Edits that set or remove a variable of a launch's environment, where that environment is defined.

As ``rules/MTP103.yaml`` and ``rules/MTP405.yaml`` describe their fixes, the variable goes where the
launch's environment is written, in the style the file already uses --

- compose: the service's ``environment:`` as a map (``KEY: "1"``) or a list (``- KEY=1``, also the
  flow forms ``{…}`` / ``[…]``); without one (also with ``env_file:`` only: the env file is the
  user's, not ours) a new ``environment:`` key after ``image:``, indented like the service's keys;
- Kubernetes: the container's ``env:`` list (``- name:`` / ``value:``) or a new ``env:`` key;
- shell: ``export KEY=1`` on its own line above the command, or a ``KEY=1`` prefix where the command
  already has prefixes; ``docker run -e KEY=1`` before the image;
- Dockerfile ``ENV KEY=1`` before the instruction; systemd ``Environment=KEY=1`` in ``[Service]``;
- Python: a key of the ``env={…}`` dict of a ``subprocess`` call, else ``os.environ["KEY"] = "1"``
  above the statement (the child process, or the engine an API call starts, inherits it).

Every function returns ``None`` when the place cannot be edited safely (an environment shared
through a YAML anchor, an unusual layout): the finding then carries no fix rather than a wrong one.
"""

from __future__ import annotations

import re

from mtplint.checks import Edit
from mtplint.discover import classify
from mtplint.edits.lines import insert_line, remove_lines
from mtplint.edits.pyedit import deferred
from mtplint.edits.yamledit import (
    append_to_flow,
    content_end,
    has_merge,
    inside,
    is_flow,
    own_pairs,
    quote_style,
    quoted,
    remove_from_flow,
    sole_on_line,
    walk,
)
from mtplint.extract.launch import Launch
from mtplint.extract.yamlpos import YamlError, YNode, load_all
from mtplint.pathtext import normalized
from mtplint.source import EnvEntry, SourceFile, Span
from mtplint.textpos import indentation, line_end, line_start, next_line_start

#: the keys that hold a launch's environment in YAML sources
_YAML_ENV_KEYS = ("environment", "env")
#: what is left of a line that declared nothing but the removed variable: the line goes
_EMPTY_DECLARATIONS = {"shell": ("export", "declare -x", "typeset -x"), "dockerfile": ("env",),
                       "systemd": ("environment=",)}
#: words that continue a compound command on the line they start: an ``export`` cannot go above them
_CONTINUING = re.compile(r"^\s*(then|do|else|elif|fi|done|esac|;;|\||&&|\|\||[^\s()]+\))(\s|$)")


def source_kind(launch: Launch) -> str:
    """compose, k8s, shell, dockerfile, systemd, python, or "" (no fix for this kind)."""
    source = launch.source
    kind = classify(normalized(source.display), source.text[:200].encode("utf-8", "replace")) or ""
    if kind in ("compose", "yaml"):
        if launch.context.startswith("service "):
            return "compose"
        if " container " in f" {launch.context}":
            return "k8s"
        return ""
    return kind if kind in ("shell", "dockerfile", "systemd", "python") else ""


# ================================================================================================
# Public API
# ================================================================================================


def set_env(launch: Launch, name: str, value: str) -> list[Edit] | None:
    """Edits that give the launch ``name=value`` (the variable is not set anywhere yet)."""
    kind = source_kind(launch)
    try:
        if kind == "compose":
            return _compose_set(launch, name, value)
        if kind == "k8s":
            return _k8s_set(launch, name, value)
    except YamlError:
        return None
    if kind == "shell":
        return _shell_set(launch, name, value)
    if kind == "dockerfile":
        return _line_above_instruction(launch, f"ENV {name}={value}")
    if kind == "systemd":
        return _systemd_set(launch, name, value)
    if kind == "python":
        return _python_set(launch, name, value)
    return None


def replace_env_value(source: SourceFile, entry: EnvEntry, value: str) -> list[Edit] | None:
    """Edits that change the value of an existing entry, keeping its quotes (``X=on`` → ``X=1``)."""
    span = entry.value.span
    if span is None or span.file != source.display or not entry.value.resolved:
        return None
    written = source.text[span.start:span.end]
    if written == entry.value.value:
        return [Edit(span, value)]
    if len(written) >= 2 and written[0] == written[-1] and written[0] in "'\"" and written[1:-1] == entry.value.value:
        return [Edit(source.span(span.start + 1, span.end - 1), value)]
    return None


def remove_env(launch: Launch, entry: EnvEntry) -> list[Edit] | None:
    """Edits that remove ``entry`` from the place that defines it (in the launch's own file)."""
    span = entry.span
    source = launch.source
    if span is None or span.file != source.display:
        return None  # an env file, a ConfigMap elsewhere: the user's, not ours
    kind = source_kind(launch)
    if kind in ("compose", "k8s"):
        try:
            owner = _compose_service(launch) if kind == "compose" else _k8s_container(launch)
            return _yaml_remove(source, span, owner) if owner is not None else None
        except YamlError:
            return None
    if kind in ("shell", "dockerfile", "systemd"):
        return _word_remove(source, span, entry.name, _EMPTY_DECLARATIONS[kind])
    return None


# ================================================================================================
# YAML: compose services and Kubernetes containers
# ================================================================================================


def _documents(source: SourceFile) -> list[YNode]:
    return load_all(source)


def _compose_service(launch: Launch) -> YNode | None:
    name = launch.context[len("service "):]
    for document in _documents(launch.source):
        services = document.get("services") if document.is_map else None
        if services is None or not services.is_map:
            continue
        service = services.get(name)
        if service is not None and service.is_map and inside(services, service) and not is_flow(service):
            return service
    return None


def _k8s_container(launch: Launch) -> YNode | None:
    span = launch.span
    if span is None or span.file != launch.source.display:
        return None
    found: YNode | None = None
    for document in _documents(launch.source):
        for node in walk(document):
            if node.is_map and node.start == span.start and node.get("image") is not None:
                found = node
    return found if found is not None and not is_flow(found) else None


def _key_indent(holder: YNode) -> str | None:
    """The indentation of a block mapping's keys (None when its first key shares a line, ``- a: 1``)."""
    text = holder.source.text
    before = text[line_start(text, holder.start):holder.start]
    return before if not before.strip() else " " * len(before) if before.strip() == "-" else None


def _step(holder: YNode) -> str:
    """One level of indentation as the file writes it (the first nested block under the holder)."""
    text = holder.source.text
    holder_column = holder.start - line_start(text, holder.start)
    for _, value in own_pairs(holder):
        if value.is_map and not is_flow(value) and own_pairs(value):
            column = value.start - line_start(text, value.start)
            if column > holder_column:
                return " " * (column - holder_column)
    # no nested block to copy: the step from the line that names the holder (``sglang:``) to its keys
    previous = line_start(text, holder.start)
    while previous > 0:
        previous = line_start(text, previous - 1)
        stripped = text[previous:line_end(text, previous)].strip()
        if stripped and not stripped.startswith("#"):
            step = holder_column - len(indentation(text, previous))
            return " " * step if 0 < step <= 8 else "  "
    return "  "


def _sequence_offset(document_nodes: list[YNode]) -> int | None:
    """How far the file indents ``-`` of a block sequence under its key (0: ``key:\\n- a``)."""
    for node in document_nodes:
        if not node.is_map:
            continue
        text = node.source.text
        for key, value in own_pairs(node):
            if value.is_seq and not is_flow(value) and value.items and sole_on_line(value.items[0], "-"):
                dash = text.rfind("-", 0, value.items[0].start)
                offset = (dash - line_start(text, dash)) - (key.start - line_start(text, key.start))
                if offset >= 0:
                    return offset
    return None


def _insert_key(holder: YNode, after: tuple[str, ...], before: tuple[str, ...], lines: list[str]) -> Edit | None:
    """Insert a new key (``lines`` already indented) into a block mapping: after the first of
    ``after`` that exists, else before the first of ``before``, else after the last key."""
    source = holder.source
    text = source.text
    pairs = own_pairs(holder)
    if not pairs:
        return None
    by_name = {key.str: (key, value) for key, value in pairs}
    newline = source.newline
    block = newline.join(lines)
    for name in after:
        if name in by_name:
            return insert_line(source, next_line_start(text, content_end(by_name[name][1])), block)
    for name in before:
        if name in by_name and sole_on_line(by_name[name][0]):
            return insert_line(source, line_start(text, by_name[name][0].start), block)
    last_end = max(content_end(value) for _, value in pairs)
    return insert_line(source, next_line_start(text, last_end), block)


def _compose_set(launch: Launch, name: str, value: str) -> list[Edit] | None:
    service = _compose_service(launch)
    if service is None:
        return None
    source = service.source
    text = source.text
    environment = service.get("environment")
    if environment is None:
        indent = _key_indent(service)
        if indent is None:
            return None
        step = _step(service)
        list_offset = _compose_list_style(launch.source)
        if list_offset is not None:
            entry_line = f"{indent}{' ' * list_offset}- {name}={value}"
        else:
            entry_line = f"{indent}{step}{name}: {quoted(value, chr(34))}"
        edit = _insert_key(service, ("image", "build"), ("command", "entrypoint"), [f"{indent}environment:", entry_line])
        return [edit] if edit is not None else None
    if not inside(service, environment):
        return None  # shared through an anchor or merged in: adding here would change other services
    if environment.is_map:
        pairs = own_pairs(environment)
        quote = quote_style([v for _, v in pairs]) if pairs else '"'
        item = f"{name}: {quoted(value, quote)}"
        if is_flow(environment):
            return [append_to_flow(environment, item)]
        indent = indentation(text, environment.start)
        if text[line_start(text, environment.start):environment.start] != indent:
            return None
        return [insert_line(source, next_line_start(text, content_end(environment)), indent + item)]
    if environment.is_seq:
        quote = quote_style(environment.items)
        item = quoted(f"{name}={value}", quote)
        if is_flow(environment):
            return [append_to_flow(environment, item)]
        last = environment.items[-1]
        prefix = text[line_start(text, last.start):last.start]
        if prefix.strip() != "-":
            return None
        return [insert_line(source, next_line_start(text, content_end(environment)), prefix + item)]
    return None


def _compose_list_style(source: SourceFile) -> int | None:
    """When the file's other services write ``environment:`` as a block list: the ``-`` offset."""
    try:
        documents = _documents(source)
    except YamlError:
        return None
    for document in documents:
        services = document.get("services") if document.is_map else None
        if services is None or not services.is_map:
            continue
        for _, service in own_pairs(services):
            environment = service.get("environment") if service.is_map else None
            if environment is not None and environment.is_seq and not is_flow(environment) and environment.items:
                key = service.key_node("environment")
                text = source.text
                first = environment.items[0]
                if key is None or not sole_on_line(first, "-"):
                    continue
                dash = text.rfind("-", 0, first.start)
                return max(0, (dash - line_start(text, dash)) - (key.start - line_start(text, key.start)))
    return None


def _k8s_set(launch: Launch, name: str, value: str) -> list[Edit] | None:
    container = _k8s_container(launch)
    if container is None:
        return None
    source = container.source
    text = source.text
    env = container.get("env")
    if env is None:
        indent = _key_indent(container)
        if indent is None:
            return None
        documents = _documents(source)
        nodes = [node for document in documents for node in walk(document)]
        offset = _sequence_offset(nodes)
        dash = indent + " " * (2 if offset is None else offset)
        lines = [f"{indent}env:", f"{dash}- name: {name}", f"{dash}  value: {quoted(value, chr(34))}"]
        edit = _insert_key(container, ("image",), ("command", "args"), lines)
        return [edit] if edit is not None else None
    if not inside(container, env) or not env.is_seq:
        return None
    items = env.items
    quote = '"'
    for item in items:
        sibling_value = item.get("value") if item.is_map else None
        if sibling_value is not None:
            quote = quote_style([sibling_value]) or '"'  # k8s env values are strings: never plain
    flow_item = f"{{name: {name}, value: {quoted(value, quote)}}}"
    if is_flow(env):
        return [append_to_flow(env, flow_item)]
    last = items[-1]
    prefix = text[line_start(text, last.start):last.start]
    if prefix.strip() != "-":
        return None
    at = next_line_start(text, content_end(env))
    if not last.is_map or is_flow(last):
        return [insert_line(source, at, prefix + flow_item)]
    value_key = last.key_node("value")
    value_indent = " " * len(prefix)
    if value_key is not None and sole_on_line(value_key):
        value_indent = text[line_start(text, value_key.start):value_key.start]
    lines = [f"{prefix}name: {name}", f"{value_indent}value: {quoted(value, quote)}"]
    return [insert_line(source, at, source.newline.join(lines))]


def _yaml_env_holder(source: SourceFile, span: Span) -> tuple[YNode, YNode, YNode] | None:
    """(the map holding ``environment:``/``env:``, that key, its value) whose value contains ``span``."""
    for document in _documents(source):
        for node in walk(document):
            if not node.is_map:
                continue
            for key, value in own_pairs(node):
                if key.str in _YAML_ENV_KEYS and not value.is_scalar and value.start <= span.start < value.end \
                        and inside(node, value):
                    return node, key, value
    return None


def _yaml_remove(source: SourceFile, span: Span, owner: YNode) -> list[Edit] | None:
    """Remove the entry at ``span`` from the environment written inside ``owner`` (the launch's
    service or container); one shared through an anchor is left alone (other launches use it)."""
    found = _yaml_env_holder(source, span)
    if found is None:
        return None
    _, key, environment = found
    if not inside(owner, environment):
        return None
    text = source.text
    if environment.is_map:
        children = [(k.start, content_end(v), k) for k, v in own_pairs(environment)]
    else:
        children = [(item.start, content_end(item), item) for item in environment.items]
    index = next((i for i, (start, end, _) in enumerate(children) if start <= span.start <= end), None)
    if index is None:
        return None
    start, end, node = children[index]
    if len(children) == 1 and not has_merge(environment):
        return _remove_only_entry(source, key, environment, start, end)
    if is_flow(environment):
        edit = remove_from_flow(environment, index)
        return [edit] if edit is not None else None
    if not sole_on_line(node, "" if environment.is_map else "-"):
        return None
    if text[end:line_end(text, end)].strip() and not text[end:line_end(text, end)].strip().startswith("#"):
        return None
    return [remove_lines(source, start, end)]


def _remove_only_entry(source: SourceFile, key: YNode, environment: YNode, start: int, end: int) -> list[Edit] | None:
    """The last entry goes: the key goes with it (compose rejects ``environment:`` with no value),
    unless comments sit inside the block -- then ``{}``/``[]`` keeps them and stays valid."""
    text = source.text
    if not sole_on_line(key):
        return None
    block_end = content_end(environment)
    first_line_end = line_end(text, key.start)
    entry_first = line_start(text, start)
    inner = text[next_line_start(text, key.start):entry_first]
    if not is_flow(environment) and "#" in inner:
        empty = "{}" if environment.is_map else "[]"
        colon = text.find(":", key.end)
        if colon < 0 or colon > first_line_end:
            return None
        return [Edit(source.span(colon + 1, colon + 1), f" {empty}"), remove_lines(source, start, end)]
    return [remove_lines(source, key.start, block_end)]


# ================================================================================================
# Shell, Dockerfile, systemd: words on lines
# ================================================================================================


def _command_line_start(text: str, offset: int) -> int:
    """The start of the first line of a command continued over lines with ``\\``."""
    start = line_start(text, offset)
    while start > 0:
        previous = line_start(text, start - 1)
        if not text[previous:start].rstrip("\r\n").endswith("\\"):
            break
        start = previous
    return start


def _shell_set(launch: Launch, name: str, value: str) -> list[Edit] | None:
    source = launch.source
    text = source.text
    span = launch.span
    if span is None or span.file != source.display:
        return None
    assignment = f"{name}={value}"
    image = launch.image
    start = _command_line_start(text, span.start)
    if image is not None and image.span is not None and image.span.file == source.display \
            and _command_line_start(text, image.span.start) == start and image.span.start <= span.start:
        # ``docker run … IMAGE [command]``: the container's environment is ``-e``, before the image
        command = text[start:image.span.start]
        flag = "--env" if re.search(r"(^|\s)--env[\s=]", command) and not re.search(r"(^|\s)-e\s", command) else "-e"
        return [Edit(source.span(image.span.start), f"{flag} {assignment} ")]
    prefixes = [entry.span for entry in launch.env.values()
                if entry.span is not None and entry.span.file == source.display
                and start <= entry.span.start < span.start and _is_prefix(text, entry.span, span.start)]
    if prefixes:
        last = max(prefixes, key=lambda s: s.end)
        return [Edit(source.span(last.end), f" {assignment}")]
    if _CONTINUING.match(text[start:line_end(text, start)]):
        return None
    return [insert_line(source, start, f"{indentation(text, start)}export {assignment}")]


def _is_prefix(text: str, assignment: Span, command_start: int) -> bool:
    """``A=1 cmd``: nothing but words and continuations between the assignment and the command."""
    between = text[assignment.end:command_start].replace("\\\r\n", " ").replace("\\\n", " ")
    before = text[line_start(text, assignment.start):assignment.start].split()
    declared = bool(before) and before[-1] in ("export", "declare", "typeset", "readonly", "local", "-x")
    return not declared and not re.search(r"[;&|\n()]", between)


def _line_above_instruction(launch: Launch, line: str) -> list[Edit] | None:
    source = launch.source
    span = launch.span
    if span is None or span.file != source.display:
        return None
    start = _command_line_start(source.text, span.start)
    return [insert_line(source, start, indentation(source.text, start) + line)]


def _systemd_set(launch: Launch, name: str, value: str) -> list[Edit] | None:
    source = launch.source
    text = source.text
    span = launch.span
    if span is None or span.file != source.display:
        return None
    exec_start = _command_line_start(text, span.start)
    section = text.rfind("\n[", 0, exec_start)
    section_start = 0 if section < 0 else section + 1
    last_environment: int | None = None
    for match in re.finditer(r"(?m)^[ \t]*Environment=.*$", text[section_start:exec_start]):
        last_environment = section_start + match.start()
    line = f"Environment={name}={value}"
    if last_environment is not None:
        return [insert_line(source, next_line_start(text, last_environment), line)]
    return [insert_line(source, exec_start, line)]


def _word_remove(source: SourceFile, span: Span, name: str, empty: tuple[str, ...]) -> list[Edit] | None:
    """Remove ``NAME=value`` (and a ``-e``/``--env`` before it); a line left with nothing but
    ``export``, ``ENV``, ``Environment=`` or a continuation goes too."""
    text = source.text
    start, end = span.start, span.end
    word = text[start:end].lstrip("'\"")
    if not (word.startswith(name) or word.startswith((f"--env={name}", f"-e{name}"))):
        return None
    if start > 0 and end < len(text) and text[start - 1] == text[end] and text[end] in "'\"":
        start, end = start - 1, end + 1
    flag = re.search(r"(?:^|\s)(-e\s+|--env[\s=]\s*)$", text[line_start(text, start):start])
    if flag:
        start -= len(flag.group(1))
    first = line_start(text, start)
    last = line_end(text, end)
    rest = (text[first:start] + text[end:last]).strip()
    if rest.rstrip("\\").strip().lower() in ("", *empty):
        if rest.endswith("\\") and not text[first:start].strip():
            return [remove_lines(source, start, end)]
        if not rest.endswith("\\"):
            return [remove_lines(source, start, end)]
    after = end
    while after < last and text[after] in " \t":
        after += 1
    if after < last and text[after] != "\\":
        return [Edit(source.span(start, after), "")]
    before = start
    while before > first and text[before - 1] in " \t":
        before -= 1
    return [Edit(source.span(before, end), "")]


# ================================================================================================
# Python
# ================================================================================================


def _python_set(launch: Launch, name: str, value: str) -> list[Edit] | None:
    source = launch.source
    span = launch.span
    if span is None or span.file != source.display:
        return None
    # placed with libcst when the fix is applied (mtplint.edits.pycst.set_env, .import_os)
    return [deferred(source, "import_os", span.start), deferred(source, "set_env", span.start, name, value)]
