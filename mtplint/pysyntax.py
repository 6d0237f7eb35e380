"""The user's Python text, read with :mod:`ast` and never run, without its own warnings.

A launcher with ``"\\d"`` in a plain string, or a ``--speculative-config`` written as a Python
dict with such an escape, makes :mod:`ast` warn ("invalid escape sequence": a SyntaxWarning that
Python 3.12 and later print by default). Those warnings are about the user's code, not mtplint's
run, so every place that reads such text goes through here. Imported where that text is read, not
at start-up.
"""

from __future__ import annotations

import ast
import warnings


def parse_module(text: str, filename: str = "<unknown>") -> ast.Module:
    """:func:`ast.parse` of a file's ``text``, its warnings dropped (SyntaxError/ValueError as ast raises them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text, filename=filename)


def parse_expression(text: str) -> ast.expr:
    """The expression ``text`` is (``ast.parse(text, mode="eval").body``), its warnings dropped."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text, mode="eval").body


def literal(text: str) -> object:
    """:func:`ast.literal_eval` of ``text``, its warnings dropped (the same exceptions as ast's)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.literal_eval(text)
