"""Where the parts of shell text end, by bash's quoting rules: single and double quotes, ``$(...)``,
``${...}``, backquotes and backslash escapes, stepped over without reading what they mean.

The word lexer (:mod:`mtplint.extract.shell.expansion`) cuts words with these, the interpreter's
syntax check asks whether quotes are balanced, and an engine option's JSON that holds shell
expansions nobody can resolve (:mod:`mtplint.engines.partial_json`) finds where each one ends.
"""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.startup import DeferredPattern


def skip_single_quotes(text: str, index: int) -> int:
    """``index`` is just after an opening ``'``; returns the index of the closing one (or len)."""
    close = text.find("'", index)
    return len(text) if close < 0 else close


#: what :func:`skip_double_quotes` does more with than step over
_QUOTED_SPECIAL = DeferredPattern(r"[\\\"$`]")


def skip_double_quotes(text: str, index: int, end: int | None = None) -> int:
    """``index`` is just after an opening ``"``; returns the index of the closing ``"``."""
    end = len(text) if end is None else end
    while index < end:
        # other characters are skipped one by one: jump to the next that is not
        found = _QUOTED_SPECIAL.search(text, index, end)
        if found is None:
            return end
        index = found.start()
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == '"':
            return index
        if char == "$" and text.startswith("$(", index):
            index = skip_parens(text, index + 2, end) + 1
            continue
        if char == "$" and text.startswith("${", index):
            index = skip_braces(text, index + 2, end) + 1
            continue
        if char == "`":
            index = skip_backticks(text, index + 1, end) + 1
            continue
        index += 1
    return end


def skip_parens(text: str, index: int, end: int | None = None) -> int:
    """``index`` is just after ``$(`` (or ``(``); returns the index of the matching ``)``."""
    end = len(text) if end is None else end
    depth = 1
    while index < end:
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "'":
            index = skip_single_quotes(text, index + 1) + 1
            continue
        if char == '"':
            index = skip_double_quotes(text, index + 1, end) + 1
            continue
        if char == "`":
            index = skip_backticks(text, index + 1, end) + 1
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return end


#: what :func:`skip_braces` does more with than step over
_BRACED_SPECIAL = DeferredPattern(r"[\\'\"$}]")


def skip_braces(text: str, index: int, end: int | None = None) -> int:
    """``index`` is just after ``${``; returns the index of the matching ``}``."""
    end = len(text) if end is None else end
    depth = 1
    while index < end:
        # other characters are skipped one by one: jump to the next that is not
        found = _BRACED_SPECIAL.search(text, index, end)
        if found is None:
            return end
        index = found.start()
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "'":
            index = skip_single_quotes(text, index + 1) + 1
            continue
        if char == '"':
            index = skip_double_quotes(text, index + 1, end) + 1
            continue
        if text.startswith("$(", index):
            index = skip_parens(text, index + 2, end) + 1
            continue
        if text.startswith("${", index):
            depth += 1
            index += 2
            continue
        if char == "}":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return end


def skip_backticks(text: str, index: int, end: int | None = None) -> int:
    end = len(text) if end is None else end
    while index < end:
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == "`":
            return index
        index += 1
    return end


#: what ends or changes the reading of an unquoted word (:func:`unquoted_word_ranges`)
_WORD_STOP = DeferredPattern(r"[ \t\r\n\\'\"$`]")


def unquoted_word_ranges(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Ranges of the words of ``text[start:end]``: separated by unquoted blanks/newlines."""
    index = start
    while index < end:
        while index < end and (text[index] in " \t\r\n" or text.startswith("\\\n", index)):
            index += 2 if text[index] == "\\" else 1
        if index >= end:
            return
        word_start = index
        while index < end:
            # characters other than these only move on by one: jump over them
            stop = _WORD_STOP.search(text, index, end)
            if stop is None:
                index = end
                break
            index = stop.start()
            char = text[index]
            if char in " \t\r\n":
                break
            if char == "\\":
                if text.startswith("\\\n", index) and (index + 2 >= end or text[index + 2] in " \t\r\n"):
                    # `word\<newline><blank>`: the continuation ends the word
                    break
                index += 2
            elif char == "'":
                index = skip_single_quotes(text, index + 1) + 1
            elif char == '"':
                index = skip_double_quotes(text, index + 1, end) + 1
            elif text.startswith("$(", index):
                index = skip_parens(text, index + 2, end) + 1
            elif text.startswith("${", index):
                index = skip_braces(text, index + 2, end) + 1
            elif char == "`":
                index = skip_backticks(text, index + 1, end) + 1
            else:
                index += 1
        yield word_start, min(index, end)


def balanced_quotes(text: str) -> bool:
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char in "'\"":
            close = (skip_single_quotes if char == "'" else skip_double_quotes)(text, index + 1)
            if close >= len(text):
                return False
            index = close + 1
            continue
        index += 1
    return True
