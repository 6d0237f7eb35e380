"""The static interpreter: tree-sitter-bash gives a script's statements (lists, pipelines,
``if``/``case``/loops, functions; :mod:`mtplint.extract.shell.statements` walks them); here each
simple command's words are expanded (:mod:`mtplint.extract.shell.expansion`), assignments, builtins,
``source``, ``sh -c`` strings and function calls take effect, and the commands run are recorded.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from mtplint.extract import Malformed
from mtplint.extract.budget import ExpansionBudget
from mtplint.extract.launch import SHELL_PROGRAMS
from mtplint.extract.shell.expansion import (
    Expander,
    Lexer,
    field_token,
    join_pieces,
    join_values,
    known_positional,
    plain_word,
    split_fields,
)
from mtplint.extract.shell.paths import PathChooser, TooManyPaths, all_choices
from mtplint.extract.shell.script import Script, walk
from mtplint.extract.shell.state import NAME, State, Value, Var
from mtplint.extract.shell.statements import StatementWalker
from mtplint.pathtext import join, normalized, read_text, resolved_path
from mtplint.records import Record
from mtplint.source import EnvEntry, MappedText, SourceFile, Span, Token
from mtplint.startup import DeferredPattern

TYPE_CHECKING = False
if TYPE_CHECKING:  # for the type checker only: tree-sitter is imported when a script is parsed
    from tree_sitter import Node

Loader = Callable[[str], "SourceFile | None"]

#: ``name=``, ``name+=``, ``name[index]=`` at the start of an assignment
_ASSIGNMENT = DeferredPattern(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[([^\]]*)\])?(\+?)=")

_MAX_DEPTH = 6  # nested `sh -c` strings and `source`d files
_MAX_CALLS = 8  # shell functions calling each other (`main` -> `serve` -> `start_vllm`)
#: function bodies read in one reading of a script at most: each function calling the next ten times
#: would otherwise read the innermost body 10**8 times
_MAX_CALLS_READ = 256


class ShellCommand(Record):
    """One simple command of a script, after expansion.

    ``conditions``: on which path of the script it ran this way (:mod:`mtplint.extract.shell.paths`),
    each the text of a branch taken earlier (``[[ -n $SPEC ]]``, ``$PROFILE is fast``); empty when
    the script has one path, or it was read with its branches merged.

    ``calls``: the shell functions it ran inside, outermost first, each with where it was called
    (empty at the script's top level)."""

    __slots__ = ("argv", "env", "span", "conditions", "calls")
    argv: list[Token]
    env: dict[str, EnvEntry]
    span: Span | None
    conditions: tuple[str, ...]
    calls: tuple[tuple[str, Span | None], ...]

    def __init__(self, argv: list[Token], env: dict[str, EnvEntry], span: Span | None,
                 conditions: tuple[str, ...] = (), calls: tuple[tuple[str, Span | None], ...] = ()) -> None:
        self.argv = argv
        self.env = env
        self.span = span
        self.conditions = conditions
        self.calls = calls

    @property
    def line(self) -> int:
        return self.span.line if self.span else 1


class Interpreter:
    def __init__(self, base_dir: str | None, load: Loader | None, depth: int,
                 sourced: frozenset[str] = frozenset()) -> None:
        self.base_dir = base_dir
        self.load = load
        self.depth = depth
        self.sourced = sourced
        #: what expansions may still produce in this script (mtplint.extract.budget)
        self.budget = ExpansionBudget()

    # --- entry ----------------------------------------------------------------------------------

    def run_text(self, text: MappedText, state: State, record: bool, *, whole_file: bool = False) -> list[ShellCommand]:
        script = Script(text, whole_file)
        script.check()
        runner = _Runner(self, script, record)
        runner.statements(script.root.children, state)
        return runner.commands

    def run_file(self, source: SourceFile, state: State, record: bool) -> list[ShellCommand]:
        return self.run_text(source.whole(), state, record, whole_file=True)

    def run_paths(self, source: SourceFile, state: State) -> list[ShellCommand]:
        """The commands of the script on each of its paths (:mod:`mtplint.extract.shell.paths`);
        with more paths than it reads, the commands of one reading with its branches merged."""
        script = Script(source.whole(), whole_file=True)
        script.check()
        commands: list[ShellCommand] = []

        def read(chooser: PathChooser) -> None:
            runner = _Runner(self, script, record=True, chooser=chooser)
            runner.statements(script.root.children, state.copy())
            commands.extend(runner.commands)

        try:
            all_choices(read)
        except TooManyPaths:
            runner = _Runner(self, script, record=True)
            runner.statements(script.root.children, state)
            return runner.commands
        return commands


class _Runner(StatementWalker):
    """Walks the statements of one script with a state (:class:`StatementWalker`), expanding the
    words of each simple command, applying assignments and builtins, reading function calls, and
    collecting the commands it runs."""

    def __init__(self, interpreter: Interpreter, script: Script, record: bool,
                 chooser: PathChooser | None = None) -> None:
        super().__init__(script, chooser)
        self.interpreter = interpreter
        self.record = record
        self.commands: list[ShellCommand] = []
        #: the function calls being read, outermost first: the function's name and where it was called
        self.calls: list[tuple[str, Span | None]] = []
        #: per call being read, what its ``local`` variables and ``VAR=x func`` prefixes hid (None: unset)
        self.hidden: list[dict[str, Var | None]] = []
        #: function bodies read so far (:data:`_MAX_CALLS_READ`)
        self.calls_read = 0

    # --- words ----------------------------------------------------------------------------------

    def word_ranges(self, nodes: list[Node]) -> list[tuple[int, int]]:
        """Character ranges of the words of ``nodes`` (argument nodes of one command). Adjacent
        nodes separated only by ``\\``-newline are one word: tree-sitter-bash splits them."""
        ranges: list[tuple[int, int]] = []
        text = self.script.mapped.text
        for node in nodes:
            start, end = self.script.chars(node)
            if ranges:
                previous_start, previous_end = ranges[-1]
                gap = text[previous_end:start]
                if gap in ("", "\\\n", "\\\r\n"):
                    ranges[-1] = (previous_start, end)
                    continue
            ranges.append((start, end))
        return ranges

    def expand_words(self, ranges: list[tuple[int, int]], state: State) -> list[tuple[Token, MappedText]]:
        mapped = self.script.mapped
        text = mapped.text
        lexer: Lexer | None = None
        result: list[tuple[Token, MappedText]] = []
        for start, end in ranges:
            if plain_word(text, start, end):
                # most words have no quotes, escapes or `$`: such a word is one field, its own text
                word = mapped.slice(start, end)
                result.append((Token(word.text, self.script.span(start, end)), word))
                continue
            if lexer is None:
                lexer = Lexer(mapped, Expander(state, self.interpreter.budget))
            pieces = lexer.expand(start, end, quoted=False)
            fields = split_fields(pieces)
            whole = mapped.slice(start, end) if len(fields) == 1 else None
            for field_pieces in fields:
                result.append(field_token(field_pieces, whole))
        return result

    def expand_value(self, start: int, end: int, state: State) -> Value:
        lexer = Lexer(self.script.mapped, Expander(state, self.interpreter.budget))
        return join_pieces(lexer.expand(start, end, quoted=False))

    # --- assignments ----------------------------------------------------------------------------

    def assignment_parts(self, node: Node) -> tuple[str, str | None, bool, int, int, Node | None]:
        """(name, index, append, value start, value end, array node) of ``name[i]+=value``."""
        raw_start, raw_end = self.script.chars(node)
        text = self.script.mapped.text
        match = _ASSIGNMENT.match(text, raw_start, raw_end)
        values = node.children_by_field_name("value")
        array = values[0] if values and values[0].type == "array" else None
        if match is None:
            name = self.script.raw(node).split("=", 1)[0]
            return name, None, False, raw_end, raw_end, array
        return match.group(1), match.group(2), bool(match.group(3)), match.end(), raw_end, array

    def assignment(self, node: Node, state: State) -> tuple[str, Var, EnvEntry] | None:
        name, index_text, append, value_start, value_end, array = self.assignment_parts(node)
        if not NAME.fullmatch(name):
            return None
        span = self.script.span(*self.script.chars(node))
        previous = state.variables.get(name)
        exported = bool(previous and previous.exported) or state.allexport
        if array is not None:
            # a `# comment` line between the elements is no element
            words = [child for child in array.named_children if child.type != "comment"]
            items = tuple(Value(token.value, token.unresolved, token.splat, _as_written(token, mapped))
                          for token, mapped in self.expand_words(self.word_ranges(words), state))
            if append and previous is not None:
                base = previous.items if previous.items is not None else (previous.scalar,)
                items = base + items
            joined = join_values(items)
            token = Token(joined.text, self.script.span(value_start, value_end), joined.unresolved,
                          joined.splat)
            var = Var(items[0] if items else Value(""), items, exported, EnvEntry(name, token, span))
            return name, var, EnvEntry(name, token, span)
        value = self.expand_value(value_start, value_end, state)
        if index_text is not None:
            base_items = previous.items if previous is not None and previous.items is not None else (
                (previous.scalar,) if previous is not None else ())
            if index_text.isdigit():
                position = int(index_text)
                padded = list(base_items) + [Value("")] * max(0, position + 1 - len(base_items))
                padded[position] = Value(padded[position].text + value.text, value.unresolved) if append else value
                items = tuple(padded)
                var = Var(items[0], items, exported, previous.entry if previous else None)
                return name, var, EnvEntry(name, Token(value.text, span, value.unresolved), span)
            state.forget(name)
            return None
        if append and previous is not None:
            if previous.items is not None:
                items = (*previous.items, value)
                var = Var(items[0], items, exported, previous.entry)
                return name, var, EnvEntry(name, Token(value.text, span, value.unresolved), span)
            value = Value(previous.scalar.text + value.text,
                           tuple(dict.fromkeys((*previous.scalar.unresolved, *value.unresolved))),
                           previous.scalar.splat or value.splat)
        token = Token(value.text, self.script.span(value_start, value_end) if value_end > value_start
                      else span, value.unresolved, value.splat)
        entry = EnvEntry(name, token, span)
        return name, Var(value, None, exported, entry), entry

    def assign(self, node: Node, state: State, export: bool) -> None:
        result = self.assignment(node, state)
        if result is None:
            return
        name, var, _ = result
        if export:
            var = var.with_exported(True)
        state.variables[name] = var

    def declaration(self, node: Node, state: State) -> None:
        keyword = node.children[0].type if node.children else ""
        options = [self.script.raw(child) for child in node.named_children if child.type == "word"
                   and self.script.raw(child).startswith(("-", "+"))]
        if self.hidden and (keyword == "local" or (keyword in ("declare", "typeset") and
                                                   not any("g" in option for option in options))):
            # in a function, `local`/`declare` make the name the call's own: the caller's value comes back after it
            hidden = self.hidden[-1]
            for child in node.named_children:
                if child.type in ("variable_assignment", "variable_name"):
                    name = self.assignment_parts(child)[0] if child.type == "variable_assignment" else self.script.raw(child)
                    if name not in hidden:
                        hidden[name] = state.variables.get(name)
        export = keyword == "export" or any(option.startswith("-") and "x" in option for option in options)
        unexport = keyword == "export" and "-n" in options
        if keyword == "export" and "-f" in options:
            return
        for child in node.named_children:
            if child.type == "variable_assignment":
                self.assign(child, state, export=export and not unexport)
            elif child.type == "variable_name":
                name = self.script.raw(child)
                previous = state.variables.get(name)
                if previous is not None:
                    state.variables[name] = previous.with_exported(export and not unexport)
                elif export and keyword == "export":
                    # `export NAME` of a variable the script never set: it comes from outside.
                    pass
                elif keyword in ("local", "declare", "typeset"):
                    span = self.script.span(*self.script.chars(child))
                    state.variables[name] = Var(Value(""), None, export, EnvEntry(name, Token("", span), span))

    def unset(self, node: Node, state: State) -> None:
        for child in node.named_children:
            name = self.script.raw(child)
            if name.startswith("-"):
                continue
            state.variables.pop(name, None)
            state.functions.pop(name, None)

    # --- commands -------------------------------------------------------------------------------

    def command(self, node: Node, state: State) -> None:
        prefix_nodes: list[Node] = []
        word_nodes: list[Node] = []
        for index, child in enumerate(node.children):
            field_name = node.field_name_for_child(index)
            if not word_nodes and child.type == "variable_assignment":  # prefixes come before the first word
                prefix_nodes.append(child)
            elif field_name in ("name", "argument"):
                word_nodes.append(child)
        words = self.expand_words(self.word_ranges(word_nodes), state)
        if not words:
            # `A=1 B=2` alone: plain assignments (tree-sitter reads some of these as a command)
            for prefix in prefix_nodes:
                self.assign(prefix, state, export=False)
            return
        environment = state.environment()
        for prefix in prefix_nodes:
            result = self.assignment(prefix, state)
            if result is not None:
                name, _var, entry = result
                environment[name] = entry
        argv = [token for token, _ in words]
        span = argv[0].span
        calls = tuple(self.calls)
        if self.reads_call(argv[0], state):
            if self.record:  # the call, then what its body runs
                self.commands.append(ShellCommand(argv, environment, span, state.conditions, calls))
            self.read_call(words, prefix_nodes, state)
            return
        if argv[0].resolved and argv[0].value == "return" and self.calls:
            state.exited = state.returned = True
            return
        self.builtin(argv, words, state, environment)
        if self.record:
            self.commands.append(ShellCommand(argv, environment, span, state.conditions, calls))
        if argv[0].resolved and (argv[0].value == "exit" or (argv[0].value == "exec" and len(argv) > 1)):
            state.exited = True  # `exec PROGRAM` replaces the shell; `exec >log` only redirects

    def reads_call(self, program: Token, state: State) -> bool:
        """Whether a command is a call of a function this reader reads at the call: one of this
        script, not already being read (no recursion), not nested deeper than :data:`_MAX_CALLS`,
        within :data:`_MAX_CALLS_READ`."""
        if not program.resolved or len(self.calls) >= _MAX_CALLS or self.calls_read >= _MAX_CALLS_READ:
            return False
        function = state.functions.get(program.value)
        return function is not None and function[0] is self.script and \
            all(name != program.value for name, _ in self.calls)

    def read_call(self, words: list[tuple[Token, MappedText]], prefix_nodes: list[Node], state: State) -> None:
        """Run a function's body at its call, as bash does: the call's words are ``$1``.. and
        ``$@`` during it; ``local`` variables and ``VAR=x`` prefixes are undone after it."""
        program, arguments = words[0][0], words[1:]
        _, body = state.functions[program.value]
        caller_positional = state.positional
        hidden: dict[str, Var | None] = {}
        for prefix in prefix_nodes:  # `VAR=x func`: exported to what the body runs, for the call only
            result = self.assignment(prefix, state)
            if result is not None:
                name, var, _ = result
                hidden.setdefault(name, state.variables.get(name))
                state.variables[name] = var.with_exported(True)
        if caller_positional is None and len(arguments) == 1 and arguments[0][0].splat and \
                arguments[0][0].unresolved == ("$@",):
            pass  # `main "$@"`: the function's arguments are the script's, unknown the same way
        else:
            state.positional = tuple(Value(token.value, token.unresolved, token.splat, _as_written(token, mapped))
                                     for token, mapped in arguments)
        self.calls_read += 1
        self.calls.append((program.value, program.span))
        self.hidden.append(hidden)
        try:
            self.statement(body, state)
        finally:
            self.calls.pop()
            self.hidden.pop()
        if state.returned:
            state.exited = state.returned = False
        if not state.exited:
            state.positional = caller_positional
            for name, previous in hidden.items():
                if previous is None:
                    state.variables.pop(name, None)
                else:
                    state.variables[name] = previous

    def builtin(self, argv: list[Token], words: list[tuple[Token, MappedText]], state: State,
                environment: dict[str, EnvEntry]) -> None:
        """Effects of builtins on the state, and scripts run through ``sh -c``."""
        program = argv[0].value if argv[0].resolved else ""
        arguments = argv[1:]
        if program == "set":
            self.set_builtin(arguments, state)
        elif program in ("source", ".") and arguments:
            self.source(arguments[0], state)
        elif program in ("read", "mapfile", "readarray", "getopts"):
            for token in arguments:
                if token.resolved and NAME.fullmatch(token.value) and not token.value.startswith("-"):
                    state.forget(token.value, token.span)
        elif program == "printf" and len(arguments) >= 2 and arguments[0].value == "-v":
            state.forget(arguments[1].value, arguments[1].span)
        elif program == "shift":
            count = int(arguments[0].value) if arguments and arguments[0].value.isdigit() else 1
            known = known_positional(state.positional)
            if known is not None and state.positional is not None:
                # past an argument of unknown length, which words are left is unknown
                state.positional = state.positional[count:] if count <= len(known) else None
        elif program == "eval" or program in state.functions:
            function = state.functions.get(program)
            if function is not None:  # not read at the call (`reads_call`): what it assigns is unknown after it
                script, body = function
                reader = self if script is self.script else _Runner(self.interpreter, script, record=False)
                for name in reader.assigned_names(body):
                    state.forget(name)
        elif program == "cd":
            return
        self.nested_shell(words, state, environment)

    def set_builtin(self, arguments: list[Token], state: State) -> None:
        """``set -a``/``set +a``/``set -o allexport`` and ``set -- args`` (new positional parameters)."""
        position = 0
        while position < len(arguments):
            value = arguments[position].value
            if value == "--" or not value.startswith(("-", "+")) or value in ("-", "+"):
                start = position + 1 if value in ("--", "-") else position
                if value == "-" or start < len(arguments) or value == "--":
                    state.positional = tuple(Value(t.value, t.unresolved, t.splat) for t in arguments[start:])
                return
            flags = value[1:]
            turn_on = value.startswith("-")
            if "a" in flags:
                state.allexport = turn_on
            if "o" in flags:
                position += 1
                if position < len(arguments) and arguments[position].value == "allexport":
                    state.allexport = turn_on
            position += 1

    def assigned_names(self, body: Node) -> set[str]:
        names: set[str] = set()
        for node in walk(body):
            if node.type == "variable_assignment":
                parent = node.parent
                if parent is not None and parent.type == "declaration_command" and parent.children and \
                        parent.children[0].type == "local":
                    continue
                if parent is not None and parent.type == "command":
                    continue  # `VAR=x cmd` prefix
                names.add(self.assignment_parts(node)[0])
        return names

    def source(self, path_token: Token, state: State) -> None:
        """``source FILE`` / ``. FILE``: its assignments (and ``export``\\s) apply here; its
        commands are not reported (they belong to another file's launches)."""
        interpreter = self.interpreter
        if not path_token.resolved or interpreter.depth >= _MAX_DEPTH:
            return
        path = normalized(path_token.value)
        if not os.path.isabs(path):
            if interpreter.base_dir is None:
                return
            path = join(interpreter.base_dir, path)
        try:
            resolved = resolved_path(path)
        except OSError:
            return
        if resolved in interpreter.sourced:
            return
        loaded = _load(path, interpreter.load)
        if loaded is None:
            return
        nested = Interpreter(interpreter.base_dir, interpreter.load, interpreter.depth + 1,
                              interpreter.sourced | {resolved})
        try:
            nested.run_file(loaded, state, record=False)
        except Malformed:
            return

    def nested_shell(self, words: list[tuple[Token, MappedText]], state: State,
                     environment: dict[str, EnvEntry]) -> None:
        """``bash -c 'script'`` (also after ``exec``/``nohup``): interpret the string as a script."""
        tokens = [token for token, _ in words]
        index = 0
        while index < len(tokens) and tokens[index].resolved and tokens[index].value in ("exec", "nohup", "setsid", "time"):
            index += 1
        if index >= len(tokens) or not tokens[index].resolved:
            return
        if tokens[index].value.rsplit("/", 1)[-1] not in SHELL_PROGRAMS:
            return
        position = index + 1
        has_c = False
        while position < len(tokens) and tokens[position].resolved and tokens[position].value.startswith(("-", "+")):
            option = tokens[position].value
            position += 1
            if option in ("-o", "+o", "-O", "+O"):
                position += 1
            elif not option.startswith("--") and "c" in option[1:]:
                has_c = True
        if not has_c or position >= len(tokens) or self.interpreter.depth >= _MAX_DEPTH:
            return
        script_text = words[position][1]
        positional = tokens[position + 2:]
        nested = Interpreter(self.interpreter.base_dir, self.interpreter.load, self.interpreter.depth + 1,
                              self.interpreter.sourced)
        inner_state = State.initial(environment, positional)
        inner_state.functions = {}
        try:
            self.commands.extend(nested.run_text(script_text, inner_state, record=self.record))
        except Malformed:
            return


def _as_written(token: Token, mapped: MappedText) -> MappedText:
    """An array element's text, spanning its whole word as written (quotes included, as the span of
    the same word on a command line would)."""
    if token.span is None or not mapped.text or mapped.source is None:
        return mapped
    offsets = list(mapped.offsets)
    offsets[0] = min(offsets[0], token.span.start)
    offsets[len(mapped.text) - 1] = max(offsets[len(mapped.text) - 1], token.span.end - 1)
    return MappedText(mapped.text, offsets, mapped.source)


def _load(path: str, load: Loader | None) -> SourceFile | None:
    if load is not None:
        return load(path)
    try:
        return SourceFile(path, path, read_text(path))
    except (OSError, UnicodeDecodeError):
        return None

