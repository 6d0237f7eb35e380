"""Edit builders: what a rule's fix changes, as :class:`~mtplint.checks.Edit` s on the text it read.

A rule that offers a fix calls these while it checks: :mod:`.argv` for the words of a launch's
command line, :mod:`.env` for its environment, :mod:`.jsonvalue` for a ``--speculative-config``
object, :mod:`.yamledit` and :mod:`.lines` for YAML nodes and whole lines, :mod:`.pyedit` for
Python source (placed with libcst by :mod:`.pycst` only once a fix is applied, shown or checked
before it is counted as fixable; building the edit does not import libcst).
:mod:`.substitution` says where a tool substitutes text before the engine reads it, which no
edit may touch.

Nothing here lints, applies or writes: :mod:`mtplint.fix` runs the fixes these edits make up
(apply, re-lint, verify, write), and depends on this package, never the reverse.
"""
