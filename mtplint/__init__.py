"""mtplint: a linter for the launch configuration of LLM servers that use speculative decoding.

Importing the package has no side effects. What start-up does to stay fast is in
:mod:`mtplint.startup` (PyYAML's regular expressions compiled on first use; tree-sitter's extension
modules without their packages' ``__init__``) and :mod:`mtplint.records` (slotted records instead
of dataclasses); ``docs/startup.md`` says what each buys, measured.
"""

__version__ = "0.2.0"
