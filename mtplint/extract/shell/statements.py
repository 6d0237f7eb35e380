"""How a script's statements run one after another: lists, pipelines, subshells, loops, functions
defined, and the branches of ``if``/``case``/``&&``/``||``, followed on one path (with a chooser,
:mod:`mtplint.extract.shell.paths`) or merged. What a simple command, an assignment or a declaration
does is the interpreter's (:class:`mtplint.extract.shell.interpreter.Interpreter`).
"""

from __future__ import annotations

from collections.abc import Iterable

from mtplint.extract.shell.paths import PathChooser, quote
from mtplint.extract.shell.script import Script
from mtplint.extract.shell.state import State, merge

TYPE_CHECKING = False
if TYPE_CHECKING:  # for the type checker only: tree-sitter is imported when a script is parsed
    from tree_sitter import Node

_STATEMENT_SKIP = {"comment", "test_command", "heredoc_body", "heredoc_start", "heredoc_end", "ERROR",
                   "file_redirect", "heredoc_redirect", "herestring_redirect"}


class StatementWalker:
    """Walks the statements of one script with a state.

    With a ``chooser``, branches that leave different states are forks: the walker follows the
    outcome the chooser picks (one path, :mod:`mtplint.extract.shell.paths`); without one, it goes
    on from their merge."""

    def __init__(self, script: Script, chooser: PathChooser | None = None) -> None:
        self.script = script
        self.chooser = chooser

    # --- what simple statements do: the interpreter's -------------------------------------------

    def command(self, node: Node, state: State) -> None:
        raise NotImplementedError

    def assign(self, node: Node, state: State, export: bool) -> None:
        raise NotImplementedError

    def declaration(self, node: Node, state: State) -> None:
        raise NotImplementedError

    def unset(self, node: Node, state: State) -> None:
        raise NotImplementedError

    # --- statements -----------------------------------------------------------------------------

    def statements(self, nodes: Iterable[Node], state: State) -> None:
        for node in nodes:
            if state.exited:
                return
            self.statement(node, state)

    def statement(self, node: Node, state: State) -> None:
        kind = node.type
        if not node.is_named or kind in _STATEMENT_SKIP:
            return
        if kind in ("program", "compound_statement", "do_group"):
            self.statements(node.children, state)
        elif kind == "command":
            self.command(node, state)
        elif kind == "variable_assignment":
            self.assign(node, state, export=False)
        elif kind == "variable_assignments":
            for child in node.named_children:
                if child.type == "variable_assignment":
                    self.assign(child, state, export=False)
        elif kind == "declaration_command":
            self.declaration(node, state)
        elif kind == "unset_command":
            self.unset(node, state)
        elif kind == "redirected_statement":
            for child in node.children_by_field_name("body"):
                self.statement(child, state)
        elif kind == "negated_command":
            self.statements(node.named_children, state)
        elif kind == "pipeline":
            for child in node.named_children:
                self.statement(child, state.copy())
        elif kind == "subshell":
            self.statements(node.named_children, state.copy())
        elif kind == "list":
            self.and_or_list(node, state)
        elif kind == "if_statement":
            self.if_statement(node, state)
        elif kind == "case_statement":
            self.case_statement(node, state)
        elif kind in ("while_statement", "until_statement"):
            for condition in node.children_by_field_name("condition"):
                self.statement(condition, state)
            branch = state.copy()
            self.loop_body(node, branch)
            self._adopt(state, merge([state, branch]))
        elif kind in ("for_statement", "c_style_for_statement", "select_statement"):
            branch = state.copy()
            for variable in node.children_by_field_name("variable"):
                branch.forget(self.script.raw(variable))
            self.loop_body(node, branch)
            self._adopt(state, merge([state, branch]))
        elif kind == "function_definition":
            names = node.children_by_field_name("name")
            bodies = node.children_by_field_name("body")
            if names and bodies:
                state.functions[self.script.raw(names[0])] = (self.script, bodies[0])

    def loop_body(self, node: Node, state: State) -> None:
        """A loop's body, read once with its branches merged: what it leaves is merged with not
        running it anyway, so an argument-parsing ``while``/``case`` is no fork per option."""
        chooser, self.chooser = self.chooser, None
        try:
            self.statements(node.children_by_field_name("body"), state)
        finally:
            self.chooser = chooser

    @staticmethod
    def _adopt(state: State, merged: State) -> None:
        state.variables = merged.variables
        state.positional = merged.positional
        state.allexport = merged.allexport
        state.functions = merged.functions
        state.conditions = merged.conditions

    def _merge_into(self, state: State, branches: list[tuple[str, State]]) -> None:
        self._adopt(state, merge([branch for _, branch in branches]))
        if all(branch.returned for _, branch in branches):
            state.exited = state.returned = True

    def join(self, node: Node, state: State, branches: list[tuple[str, State]]) -> None:
        """Go on after one of ``branches`` (each with the words naming when it runs) ran from
        ``state``: branches that end alike are one outcome; with a chooser, the outcome it picks
        (its label added to the path's conditions), else the merge of all of them."""
        outcomes: list[tuple[list[str], State]] = []
        if any(not branch.exited for _, branch in branches):
            # a `return` in a function is a path of its own when paths are followed: the script goes
            # on after the call; read with branches merged, it is left out like an `exit`
            branches = [(label, branch) for label, branch in branches
                        if not branch.exited or (branch.returned and self.chooser is not None)]
        if self.chooser is None:  # read with branches merged: no outcome is picked, none need telling apart
            self._merge_into(state, branches)
            return
        for label, branch in branches:
            same = next((outcome for outcome in outcomes if outcome[1].returned == branch.returned
                         and outcome[1].same_values(branch)), None)
            if same is None:
                outcomes.append(([label], branch))
            else:
                same[0].append(label)
        if len(outcomes) == 1:
            self._merge_into(state, branches)
            return
        labels, chosen = outcomes[self.chooser.choose(self.script.file_offset(self.script.chars(node)[0]),
                                                      len(outcomes))]
        before = state.conditions
        self._adopt(state, chosen)
        state.exited = state.returned = chosen.returned
        state.conditions = (*before, " or ".join(labels), *chosen.conditions[len(before):])

    def quoted(self, nodes: Iterable[Node]) -> str:
        """The source text of ``nodes`` (a condition), as a label quotes it."""
        parts = [node for node in nodes if node.is_named]
        if not parts:
            return "``"
        start, _ = self.script.chars(parts[0])
        _, end = self.script.chars(parts[-1])
        return quote(self.script.mapped.text[start:end])

    def and_or_list(self, node: Node, state: State) -> None:
        """``a && b``, ``a || b``: the left side runs; the right side may not."""
        children = node.children
        operator_index = next((i for i, child in enumerate(children) if child.type in ("&&", "||")), None)
        if operator_index is None:
            self.statements(children, state)
            return
        self.statements(children[:operator_index], state)
        branch = state.copy()
        self.statements(children[operator_index + 1:], branch)
        left = self.quoted(children[:operator_index])
        runs, skips = ("succeeds", "fails") if children[operator_index].type == "&&" else ("fails", "succeeds")
        self.join(node, state, [(f"{left} {runs}", branch), (f"{left} {skips}", state.copy())])

    def if_statement(self, node: Node, state: State) -> None:
        condition_nodes = node.children_by_field_name("condition")
        conditions = {child.id for child in condition_nodes}
        for child in node.children:
            if child.id in conditions:
                self.statement(child, state)
        branches: list[tuple[str, State]] = []
        tested = [self.quoted(condition_nodes)]
        then_branch = state.copy()
        has_else = False
        for child in node.children:
            if child.id in conditions or child.type in ("elif_clause", "else_clause"):
                continue
            self.statement(child, then_branch)
        branches.append((tested[0], then_branch))
        remaining = state.copy()
        for child in node.children:
            if child.type == "elif_clause":
                elif_conditions = {c.id for c in child.children_by_field_name("condition")}
                # the first named statement before `then` is the condition in this grammar
                in_condition = True
                branch = remaining
                condition_parts: list[Node] = []
                for part in child.children:
                    if part.type == "then":
                        in_condition = False
                        branch = remaining.copy()
                        continue
                    if in_condition or part.id in elif_conditions:
                        if part.type != "elif":
                            condition_parts.append(part)
                        self.statement(part, remaining)
                    else:
                        self.statement(part, branch)
                tested.append(self.quoted(condition_parts))
                branches.append((tested[-1], branch))
            elif child.type == "else_clause":
                has_else = True
                branch = remaining.copy()
                self.statements(child.children, branch)
                branches.append((_none_of(tested), branch))
        if not has_else:
            branches.append((_none_of(tested), remaining))
        self.join(node, state, branches)

    def case_statement(self, node: Node, state: State) -> None:
        branches: list[tuple[str, State]] = []
        exhaustive = False
        subject_nodes = node.children_by_field_name("value")
        subject = quote(self.script.raw(subject_nodes[0]).strip().removeprefix('"').removesuffix('"')) \
            if subject_nodes else "``"
        patterns: list[str] = []
        for item in node.children:
            if item.type != "case_item":
                continue
            value_nodes = item.children_by_field_name("value")
            values = {child.id for child in value_nodes}
            written = "|".join(self.script.raw(child).strip() for child in value_nodes)
            catch_all = any(self.script.raw(child).strip() == "*" for child in value_nodes)
            exhaustive = exhaustive or catch_all
            branch = state.copy()
            for child in item.children:
                if child.id not in values:
                    self.statement(child, branch)
            label = f"{subject} is none of {', '.join(patterns)}" if catch_all and patterns else \
                f"{subject} matches {quote(written)}"
            patterns.append(quote(written))
            branches.append((label, branch))
        if not exhaustive:
            branches.append((f"{subject} is none of {', '.join(patterns)}", state.copy()))
        if branches:
            self.join(node, state, branches)


def _none_of(tested: list[str]) -> str:
    return f"not {tested[0]}" if len(tested) == 1 else f"none of {', '.join(tested)}"
