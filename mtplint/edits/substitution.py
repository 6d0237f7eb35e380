"""Where a launch's text is substituted before the engine sees it, so a fix never edits there.

The text of ``$(TP)`` in a Kubernetes ``args`` item, ``${MODEL}`` in a compose ``command`` or a
llama-swap ``cmd`` (its ``${PORT}`` macro), ``$VAR`` in a shell script or a systemd ``ExecStart=``,
and systemd's ``%i`` specifiers are replaced by the kubelet, compose, the shell, llama-swap or
systemd. An edit inside one changes what is substituted, not the argument the engine reads (and
the next substitution makes something else of it), so the fix engine refuses such an edit.

Forms (each tool's documentation):

* ``$(NAME)``: Kubernetes ``command``/``args``/``env[].value`` expansion, ``$$`` escapes it
  (https://kubernetes.io/docs/tasks/inject-data-application/define-command-argument-container/);
  in a shell it is a command substitution, which is no more a fix's to edit;
* ``${NAME}``, ``${NAME:-default}`` ...: shell parameter expansion, compose interpolation
  (``$$`` escapes it), llama-swap macros;
* ``$NAME``, ``$1``, ``$@``, ``$*``, ``$#``, ``$?``, ``$$`` as a shell's PID is not matched;
* ``%i``, ``%n``, ... (a letter after ``%``; ``%%`` is a literal ``%``): systemd unit specifiers,
  only in unit files (``systemd.unit(5)``, "Specifiers").
"""

from __future__ import annotations

from functools import lru_cache

from mtplint.discover import classify
from mtplint.startup import DeferredPattern
from mtplint.textpos import line_start

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from mtplint.source import SourceFile

#: compiled when first used: most runs apply no fix that needs them
_DOLLAR = DeferredPattern(r"\$\$|\$\([^()]*\)|\$\{[^{}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9@*#?!-]")
_SPECIFIER = DeferredPattern(r"%%|%[A-Za-z]")


@lru_cache(maxsize=32)  # asked for each word a fix locates in the file, and the answer is the text's
def source_kind(source: SourceFile) -> str | None:
    """The kind of file ``source`` is (:func:`mtplint.discover.classify`), which says which
    substitutions its text undergoes."""
    return classify(source.path, source.text[:256].encode("utf-8", "replace"))


#: what each edit builder imported so far forgets of the texts it was asked about
_forgetting: list[Callable[[], None]] = []


def forgets_sources(forget: Callable[[], None]) -> Callable[[], None]:
    """Have :func:`forget_sources` call ``forget``, an edit builder's clearing of its caches of texts."""
    _forgetting.append(forget)
    return forget


def forget_sources() -> None:
    """Forget the texts :func:`source_kind` and the edit builders loaded so far were asked about,
    after a batch of fixes is verified (:func:`mtplint.edits.argv.forget_sources` says why); a
    builder that is not loaded holds none."""
    source_kind.cache_clear()
    for forget in _forgetting:
        forget()


def substitutions(text: str, systemd: bool = False) -> list[tuple[int, int]]:
    """The (start, end) offsets in ``text`` of every substituted reference (escapes excluded)."""
    found = [(match.start(), match.end()) for match in _DOLLAR.finditer(text) if match.group() != "$$"]
    if systemd and "%" in text:
        found.extend((match.start(), match.end()) for match in _SPECIFIER.finditer(text) if match.group() != "%%")
        found.sort()
    return found


def edits_substituted(text: str, start: int, end: int, content: str, systemd: bool = False) -> str | None:
    """The reference that replacing ``text[start:end]`` with ``content`` would change; None when it
    changes none. An edit changes a reference it cuts into, or an insertion (``start == end``) falls
    strictly inside; removing a whole reference (with its word) or writing it again verbatim is
    no change to what is substituted."""
    # a reference does not span lines: the lines the edit touches are enough to look at
    first = line_start(text, start)
    last = text.find("\n", end)
    window = text[first:len(text) if last < 0 else last]
    if "$" not in window and not (systemd and "%" in window):
        return None
    start, end = start - first, end - first
    for low, high in substitutions(window, systemd):
        reference = window[low:high]
        if start == end:
            if low < start < high:
                return reference
        elif start < high and low < end:
            whole = start <= low and high <= end
            if not whole or (content and reference not in content):
                return reference
    return None
