"""Shell scripts: find engine launches and compute the argv/environment each one runs with.

Two layers, each its own module, so that a format that only splits or expands words (a Dockerfile's
instructions, a compose ``command:`` string) does not load the interpreter:

* :func:`~mtplint.extract.shell.expansion.split_words` — POSIX word splitting with quote removal and no expansion, for command
  strings other formats hand to a shell-less exec (compose ``command:`` strings, systemd
  ``ExecStart=`` after its own unquoting).
* :func:`~mtplint.extract.shell.launches.script_commands` — a small, static interpreter for a whole script (or an ``sh -c`` string):
  tree-sitter-bash gives the statement structure (lists, pipelines, ``if``/``case``/loops,
  functions); the words themselves are re-read here with bash's quoting and expansion rules, so that
  every character keeps its file offset (through ``\\`` continuations, quote splicing such as
  ``'{"k":'"$N"'}'``, ``$'..'`` strings) and so that tree-sitter quirks in word boundaries do not
  leak into argv.

What the interpreter resolves: assignments (also ``+=``, arrays, ``export``/``declare``/``readonly``,
``set -a`` around ``source .env``), ``VAR=x cmd`` prefixes, ``$VAR``/``${VAR}``, ``${VAR:-d}``,
``${VAR-d}``, ``${VAR:=d}``, ``${VAR:+alt}``, ``${#VAR}``, prefix/suffix removal, ``"${ARR[@]}"``,
word splitting of unquoted expansions, ``set --`` / ``"$@"``. What it never guesses: command
substitution, arithmetic, ``read``, positional parameters of the script — those become unresolved
tokens, and an unquoted unknown expansion or ``"$@"`` becomes a *splat* token (may add any number
of words).

Branches (``if``/``elif``/``else``, ``case`` arms, ``a && b``): :func:`~mtplint.extract.shell.launches.launches_in_script` reads a
script once per path (:mod:`mtplint.extract.shell.paths` has the model and its bounds), so an
array built in steps (``ARGS+=(...)`` in an ``if``) is known on each path. :func:`~mtplint.extract.shell.launches.script_commands`
(an ``sh -c`` string in compose, Kubernetes, Python) reads it once with the branches merged: a value
that differs between them is unknown, and an array keeps the elements all branches start with. A
branch that ends the script (``exit``, ``exec PROGRAM``) is not merged with the rest.

A variable that is never assigned and has a default (``${MODEL:-Qwen/Qwen3-8B}``) takes the default:
that is what the file says the launch runs with unless the caller's environment overrides it.

Functions: a function the script defines is read where it is called (``main "$@"``,
``start_server "$MODEL" 8000``, an arm of ``case "$ENGINE"`` calling ``serve_sglang``), as bash runs
it: ``$1``..``$9``, ``$@``, ``$#`` are the call's words (an unknown word stays unknown), ``local``
variables and ``VAR=x func`` prefixes last for the call, other assignments stay after it, ``return``
ends the call. Commands keep the spans where they are written in the body, plus the calls that led
there (:attr:`ShellCommand.calls`). Calls nest a few deep (the bounds are in
:mod:`~mtplint.extract.shell.interpreter`) and never recurse; beyond that, or for a function from a
``source``\\ d file, the call is not read and the variables the body assigns become unknown. A
function that is never called runs nothing, and ``$(func)`` (a function that computes a command
string) stays unresolved like any command substitution. Commands in ``if``/``while`` bodies,
pipelines, ``&&`` lists, subshells and ``cmd &`` are launches too.

The package, by concern:

* :mod:`~mtplint.extract.shell.scanning` — where quoted parts, ``$(...)``, ``${...}`` and words end;
* :mod:`~mtplint.extract.shell.state` — values, variables and the interpreter's state, merged at branches;
* :mod:`~mtplint.extract.shell.expansion` — quote removal, parameter expansion, field splitting, and
  the words of one command line (:func:`~mtplint.extract.shell.expansion.split_words`,
  :func:`~mtplint.extract.shell.expansion.substitute_words`, a Dockerfile's instructions);
* :mod:`~mtplint.extract.shell.interpreter` — the statements of a parsed script, walked with a state;
* :mod:`~mtplint.extract.shell.paths` — the paths through a script's branches;
* :mod:`~mtplint.extract.shell.launches` — a script's launches (the ``shell`` kind's extractor).
"""

