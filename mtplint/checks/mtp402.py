"""MTP402 removed-vllm-spec-flags: the pre-0.8.3 speculative flags (docs/vllm.md#removed-speculative-flags)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence

from mtplint.checks import Edit, Finding, Fix, RuleContext
from mtplint.checks.mtp5xx import flag_name
from mtplint.source import SourceFile, Span, Token

#: removed flag -> the ``--speculative-config`` key that replaced it (vLLM 0.8.2 arg_utils.py
#: ``create_speculative_config``; removed by PR #15466, first release without them 0.8.3)
REPLACEMENTS: dict[str, str | None] = {
    "--speculative-model": "model",
    "--num-speculative-tokens": "num_speculative_tokens",
    "--speculative-model-quantization": "quantization",
    "--speculative-draft-tensor-parallel-size": "draft_tensor_parallel_size",
    "-spec-draft-tp": "draft_tensor_parallel_size",
    "--speculative-max-model-len": "max_model_len",
    "--speculative-disable-by-batch-size": None,
    "--ngram-prompt-lookup-max": "prompt_lookup_max",
    "--ngram-prompt-lookup-min": "prompt_lookup_min",
    "--speculative-disable-mqa-scorer": None,
    "--spec-decoding-acceptance-method": None,
    "--typical-acceptance-sampler-posterior-threshold": None,
    "--typical-acceptance-sampler-posterior-alpha": None,
    "--disable-logprobs-during-spec-decoding": None,
}
KWARGS = {flag.lstrip("-").replace("-", "_"): key for flag, key in REPLACEMENTS.items() if flag.startswith("--")}
KWARGS["speculative_draft_tensor_parallel_size"] = "draft_tensor_parallel_size"


def _normal(flag: str) -> str:
    return "--" + flag[2:].replace("_", "-") if flag.startswith("--") else flag


def _instead(name: str, key: str | None) -> str:
    if name in ("--speculative-model", "speculative_model"):
        return "put the draft into `--speculative-config` (`'{\"method\": \"ngram\", ...}'` for `[ngram]`, else `\"model\": ...`)"
    if key is None:
        return "remove it (its `--speculative-config` key was removed too)"
    return f"use the `--speculative-config` key `\"{key}\"`"


# --- the fix: one `--speculative-config` JSON instead of the removed flags ------------------------

class _Removed:
    """One removed flag as written: its words (flag, value) and the key/value it becomes (a plain
    class: rule modules load on every run, and dataclass() costs start-up time)."""

    __slots__ = ("key", "previous", "value", "words")

    def __init__(self, words: list[Token], previous: Token, key: str, value: object) -> None:
        self.words = words
        self.previous = previous
        self.key = key
        self.value = value


def _config_value(key: str, text: str) -> tuple[str, object]:
    if key == "model" and text.strip() == "[ngram]":
        return "method", "ngram"  # the old spelling of n-gram lookup (docs/vllm.md#removed-speculative-flags)
    if re.fullmatch(r"-?\d+", text.strip()):
        return key, int(text)
    return key, text


def _removed_words(ctx: RuleContext) -> list[_Removed] | None:
    """Every removed flag that has a replacement key, in order; None when one cannot be rewritten."""
    launch = ctx.report.launch
    words = [*launch.program, *launch.args]
    found: list[_Removed] = []
    index = len(launch.program)
    while index < len(words):
        token = words[index]
        name, equals, inline = token.value.partition("=")
        flag = _normal(name) if token.value.startswith("-") else ""
        if flag not in REPLACEMENTS or REPLACEMENTS[flag] is None:
            index += 1
            continue
        last = index if equals else index + 1
        if last >= len(words) or index == 0:
            return None
        group = words[index:last + 1]
        if not all(w.resolved and w.span is not None for w in (words[index - 1], *group)):
            return None
        key, value = _config_value(str(REPLACEMENTS[flag]), inline if equals else words[last].value)
        found.append(_Removed(group, words[index - 1], key, value))
        index = last + 1
    return found


def _yaml_quote_at(source: SourceFile, offset: int) -> str | None:
    """The quote style of the YAML scalar holding ``offset`` ('' plain or block; None: not YAML)."""
    if not source.display.lower().endswith((".yaml", ".yml")):
        return None
    from mtplint.extract.yamlpos import YamlError, load_all  # noqa: PLC0415 - PyYAML's reader: only for a YAML file's quoting

    try:
        stack = list(load_all(source))
    except YamlError:
        return None
    while stack:
        node = stack.pop()
        if node.is_scalar and node.start <= offset < node.end:
            return node.style if node.style in ("'", '"') else ""
        stack.extend(node.items)
        for key_node, value_node in node.pairs:
            stack.extend((key_node, value_node))
    return ""


def _inner(source: SourceFile, span: Span) -> Span:
    """The span without quotes of its own (shell spans include them; YAML spans do not)."""
    raw = source.text[span.start:span.end]
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return source.span(span.start + 1, span.end - 1)
    return span


def _json_item(source: SourceFile, span: Span, text: str) -> str:
    """``text`` as the content of the list item at ``span`` (a JSON value in a YAML/JSON list)."""
    from mtplint.edits.jsonvalue import encode, word_quote  # noqa: PLC0415 - fixing: only when a fix is built

    quote = word_quote(source, span) or source.text[span.start:span.start + 1]
    if quote == '"':
        return encode(text, "ydq")
    if quote == "'":
        return encode(text, "ysq")
    return "'" + encode(text, "ysq") + "'"  # a plain `{` would start a YAML flow mapping


def _argv_fix(ctx: RuleContext, removed: Sequence[_Removed]) -> list[Edit] | None:
    from mtplint.edits.jsonvalue import encode, list_form, quoted_extent, remove_argv_groups, spec_site  # noqa: PLC0415 - fixing: only when a fix is built

    source = ctx.report.launch.source
    if any(w.span is None or w.span.file != source.display for r in removed for w in (r.previous, *r.words)):
        return None
    config = {r.key: r.value for r in removed}
    edits: list[Edit] = []
    existing = ctx.option("speculative_config")
    rest: Sequence[_Removed] = removed
    if existing is not None:
        if ctx.report.version.at_least("0.8.3") is False:
            pass  # 0.8.2 ignores the old flags next to --speculative-config: removing them changes nothing
        else:
            site = spec_site(ctx, existing)
            current = {k.replace("-", "_") for k in site.value()} if site is not None else set()
            merged = site.add_keys({k: v for k, v in config.items() if k not in current}) if site else None
            if merged is None:
                return None
            edits.extend(merged)
    else:
        first = removed[0]
        rest = removed[1:]
        text = json.dumps(config)
        flag_span = first.words[0].span
        value_span = first.words[-1].span
        assert flag_span is not None and value_span is not None
        if len(first.words) == 2 and list_form(source, flag_span, value_span):
            flag_inner = _inner(source, flag_span)
            edits.append(Edit(flag_inner, "--speculative-config"))
            edits.append(Edit(_inner(source, value_span), _json_item(source, value_span, text)))
        elif len(first.words) == 1 and list_form(source, first.previous.span or flag_span, flag_span):
            edits.append(Edit(_inner(source, flag_span),
                              _json_item(source, flag_span, "--speculative-config=" + text)))
        else:
            yaml_quote = _yaml_quote_at(source, flag_span.start)
            word = "'" + encode(text, "sq") + "'"
            if yaml_quote == '"':
                word = encode(word, "ydq")
            elif yaml_quote == "'":
                word = encode(word, "ysq")
            start, _ = quoted_extent(source, flag_span)
            _, end = quoted_extent(source, value_span)
            edits.append(Edit(source.span(start, end), "--speculative-config " + word))
    launch = ctx.report.launch
    groups: list[tuple[int, int]] = []
    for item in rest:
        first_index = next((i for i, token in enumerate(launch.args) if token is item.words[0]), None)
        if first_index is None:
            return None
        groups.append((first_index, len(item.words)))
    removals = remove_argv_groups(source, launch, groups)
    if removals is None:
        return None
    edits.extend(removals)
    return edits


def _kwargs_fix(ctx: RuleContext) -> list[Edit] | None:
    """``LLM(speculative_model=..., num_speculative_tokens=...)`` -> ``speculative_config={...}``."""
    launch = ctx.report.launch
    if launch.kwargs is None or "speculative_config" in launch.kwargs:
        return None
    source = launch.source
    old = [kw for name, kw in launch.kwargs.items() if KWARGS.get(name) is not None]
    if not old or any(kw.unresolved or kw.span is None for kw in old):
        return None
    config: dict[str, object] = {}
    quote = '"'
    for kw in old:
        key, value = _config_value(str(KWARGS[kw.name]), str(kw.value))
        if isinstance(kw.value, (int, float, bool)) or kw.value is None:
            value = kw.value
        config[key] = value
        raw = source.text[kw.span.start:kw.span.end] if kw.span else ""
        if isinstance(kw.value, str) and raw[:1] in "'\"":
            quote = raw[0]
    from mtplint.edits.jsonvalue import Style  # noqa: PLC0415 - fixing: only when a fix is built

    literal = Style(quote=quote, python=True).render(config)
    edits: list[Edit] = []
    for position, kw in enumerate(sorted(old, key=lambda k: k.span.start if k.span else 0)):
        assert kw.span is not None
        keyword = re.search(r"\b" + kw.name + r"\s*=\s*$", source.text[:kw.span.start])
        if keyword is None:
            return None
        start, end = keyword.start(), kw.span.end
        if position == 0:
            edits.append(Edit(source.span(start, end), "speculative_config=" + literal))
            continue
        edits.append(_remove_argument(source, start, end))
    return edits


def _remove_argument(source: SourceFile, start: int, end: int) -> Edit:
    """Remove ``name=value`` from a call: its whole line when it stands alone on one, else with the
    comma that joins it to its neighbour."""
    text = source.text
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end + 1
    if not text[line_start:start].strip() and re.fullmatch(r"\s*,?\s*(#[^\n]*)?\r?\n?", text[end:line_end]):
        return Edit(source.span(line_start, line_end), "")
    after = re.match(r"\s*,[ \t]*", text[end:])
    if after is not None:
        return Edit(source.span(start, end + after.end()), "")
    comma = text.rfind(",", 0, start)
    return Edit(source.span(comma if comma >= 0 else start, end), "")


def _fix(ctx: RuleContext) -> Fix | None:
    if ctx.report.launch.kwargs is not None:
        edits = _kwargs_fix(ctx)
    else:
        removed = _removed_words(ctx)
        edits = _argv_fix(ctx, removed) if removed else None
    if not edits:
        return None
    return Fix("safe", "Rewrite the removed speculative flags as one `--speculative-config` JSON", edits)


def check(ctx: RuleContext) -> Iterator[Finding]:
    version = ctx.report.version
    built: list[Fix | None] = []

    def fix_once() -> Fix | None:  # built when the first finding needs it, shared by all of them
        if not built:
            built.append(_fix(ctx))
        return built[0]

    removed = version.at_least("0.8.3")
    note = "" if version.known else " (removed in vLLM 0.8.3; the version is not pinned)"
    # 0.8.3+: the parser rejects them (one CliError per flag word)
    if removed is not False:
        for error in ctx.errors:
            if error.kind not in ("unknown", "ambiguous") or not error.flag:
                continue
            name = _normal(flag_name(error.flag)) if error.flag.startswith("-") else error.flag
            if name in REPLACEMENTS:
                yield ctx.report_finding(
                    f"`{name}` was removed in vLLM 0.8.3: the server exits with \"unrecognized arguments\"{note}; "
                    f"{_instead(name, REPLACEMENTS[name])}",
                    error.span,
                    fix=fix_once() if REPLACEMENTS[name] is not None else None,
                )
            elif name in KWARGS:
                yield ctx.report_finding(
                    f"`{name}=` was removed in vLLM 0.8.3: `EngineArgs` raises TypeError{note}; "
                    f"{_instead(name, KWARGS[name]).replace('`--speculative-config` key', '`speculative_config` key')}",
                    error.span,
                    fix=fix_once() if KWARGS[name] is not None else None,
                )
    # 0.8.2: accepted with a deprecation warning, but ignored when --speculative-config is also given
    if removed is not True and ctx.option("speculative_config") is not None:
        for dest, option in ctx.report.parsed.options.items():
            flag = _normal(option.flag) if option.flag.startswith("-") else option.flag
            if option.origin == "default" or (flag not in REPLACEMENTS and dest not in KWARGS):
                continue
            if dest == "speculative_config":
                continue
            yield ctx.report_finding(
                f"`{flag or dest}` is ignored by vLLM 0.8.2 because `--speculative-config` is also given "
                f"(and removed from 0.8.3); {_instead(flag, REPLACEMENTS.get(flag, KWARGS.get(dest)))}",
                option.span,
                fix=fix_once() if REPLACEMENTS.get(flag, KWARGS.get(dest)) is not None else None,
            )
