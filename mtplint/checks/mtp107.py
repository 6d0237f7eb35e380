"""MTP107 config-file-false-ignored: ``some-flag: false`` in a ``vllm serve --config`` YAML is dropped.

vLLM turns each YAML key into CLI words (``argparse_utils.py`` ``load_config_file``, vLLM 0.33.0 L606-673;
docs/vllm.md#config-file): ``key: true`` becomes ``--key``; ``key: false`` becomes ``--no-key`` only when
the *top-level* ``vllm`` parser knows ``--no-key`` -- which it never does for serve options, so under
``vllm serve`` the entry is silently dropped in every release read (0.8.2 … 0.33.0; 0.8-0.27 never
emitted anything for ``false``). Under ``python -m vllm.entrypoints.openai.api_server`` the lookup
runs on the right parser from 0.28 (PR #51573), for dash spellings only.

The engine model (mtplint/engines/vllm.py ``_load_config``) applies the same logic and leaves the
option at its default; this check re-reads the YAML to point at the ``key: false`` entry.
"""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Edit, Finding, Fix, RuleContext
from mtplint.engines.vllm import load_table
from mtplint.extract import MAX_FILE_BYTES, decode
from mtplint.files import read_regular
from mtplint.source import SourceFile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mtplint.extract.yamlpos import YNode

#: effective setting that shows what a dropped boolean pair resolves to instead
_EFFECTIVE_OF = {"enable_prefix_caching": "prefix_caching", "enable_chunked_prefill": "chunked_prefill"}
#: from this release the api_server entry point converts ``key: false`` into ``--no-key`` (vLLM 0.28.0, PR #51573; docs/vllm.md#config-file)
_NO_KEY_LOOKUP = "0.28.0"


def _config_source(ctx: RuleContext) -> SourceFile | None:
    """The YAML the launch passes with ``--config FILE`` (the exact token), as the engine read it."""
    launch = ctx.report.launch
    shown = ctx.report.parsed.config_files
    if launch.kwargs is not None or not shown:
        return None
    args = launch.args
    for index, token in enumerate(args[:-1]):
        if token.resolved and not token.splat and token.value == "--config":
            path_token = args[index + 1]
            if not path_token.resolved:
                return None
            path = launch.host_path(path_token.value)  # through the container's bind mounts
            try:
                # `--config /dev/zero` or a FIFO is refused unopened, a file over the limit unread
                return SourceFile(path, shown[0], decode(read_regular(path, MAX_FILE_BYTES)))
            except (OSError, UnicodeDecodeError):
                return None
    return None


def check(ctx: RuleContext) -> Iterator[Finding]:
    source = _config_source(ctx)
    if source is None:
        return
    from mtplint.extract.yamlpos import YamlError, load_all  # noqa: PLC0415 - PyYAML: only for a launch with --config

    try:
        documents = load_all(source)
    except YamlError:
        return  # reported as MTP001 by the engine
    root = documents[0] if documents else None
    if root is None or not root.is_map:
        return
    version = ctx.report.version
    table = load_table(version.version)
    serve = not ctx.report.launch.entry.startswith("python -m")
    for key, key_node, value_node in root.entries():
        try:
            value = value_node.python()
        except YamlError:
            continue
        if value is not False:
            continue
        name = "--" + key.replace("_", "-")
        flag = table.by_option.get(name)
        if flag is None:
            continue  # an unknown key: vLLM drops it too, but there is no flag to speak of
        if not serve and "_" not in key and f"--no-{key}" in flag.negative:
            # api_server entry: converted to --no-key from 0.28 (docs/vllm.md#config-file)
            converted = version.at_least(_NO_KEY_LOOKUP)
            if converted is True:
                continue
            note = "" if converted is False else f" (the api_server entry point converts it from vLLM {_NO_KEY_LOOKUP}; " \
                "the version in play is not pinned)"
        else:
            note = ""
        key_span = key_node.span()
        option = ctx.option(flag.dest)
        if option is not None and option.span != key_span:
            continue  # set by another token (the CLI or another key): the dropped entry changes nothing
        if flag.default is False:
            continue  # `false` is the default already: dropping it changes nothing
        yield ctx.report_finding(_message(ctx, key, flag.dest, flag.negative, flag.default, note), key_span,
                                 fix=_negative_key_fix(source, key, key_node, value_node, flag.negative)
                                 if root.get(f"no-{key.replace('_', '-')}") is None else None)


def _negative_name(key: str, negative: frozenset[str]) -> str | None:
    """The ``--no-…`` flag that says what ``key: false`` meant, as in the message."""
    positive = "--" + key.replace("_", "-")
    return next((n for n in (f"--no-{positive[2:]}", *sorted(negative)) if n in negative), None)


def _negative_key_fix(source: SourceFile, key: str, key_node: YNode, value_node: YNode,
                      negative: frozenset[str]) -> Fix | None:
    """``some-flag: false`` → ``no-some-flag: true``: only the key's text (inside its quotes) and the
    value's text change; vLLM turns ``key: true`` into ``--key`` (docs/vllm.md#config-file)."""
    replacement = _negative_name(key, negative)
    if replacement is None or key_node.text is None or value_node.text is None or not key_node.str:
        return None
    text = source.text
    key_start = key_node.text.offsets[0]
    key_end = key_node.text.offsets[len(key_node.str) - 1] + 1
    value_start, value_end = value_node.start, value_node.end
    if text[key_start:key_end] != key or value_node.style:
        return None  # an escaped or quoted spelling: leave it to the user
    written = text[value_start:value_end]
    true = "True" if written[:1].isupper() and not written.isupper() else "TRUE" if written.isupper() else "true"
    return Fix("safe", f"Write `{replacement[2:]}: true`", [
        Edit(source.span(key_start, key_end), replacement[2:]),
        Edit(source.span(value_start, value_end), true),
    ])


def _message(ctx: RuleContext, key: str, dest: str, negative: frozenset[str], default: object, note: str) -> str:
    effective = _EFFECTIVE_OF.get(dest)
    if effective is not None and ctx.value(effective) is True:
        stays = "it stays on"
    elif default is True:
        stays = "it stays on (the default)"
    else:
        stays = "the option keeps its default"
    positive = "--" + key.replace("_", "-")
    replacement = _negative_name(key, negative)
    fix = (f"write `{replacement[2:]}: true` instead" if replacement is not None
           else f"remove it; `{positive}` cannot be turned off from the config file")
    return (f"`{key}: false` in a `vllm serve --config` file is silently dropped by vLLM{note}: {stays}; {fix}")
