"""MTP106 speculative-config-overwritten: dotted ``--speculative-config.key`` flags replace the full JSON.

vLLM's ``FlexibleArgumentParser.parse_args`` (0.33.0 ``vllm/utils/argparse_utils.py`` L447-500, from
0.11; docs/vllm.md#command-line-parsing) collects every ``--x.key value`` into one dict and appends it as a last
``--x <json>``; argparse keeps the last value, so a full ``--speculative-config '{...}'`` (on the
command line, or a ``speculative-config:`` mapping in the ``--config`` YAML, which is spliced in
before) is dropped whole, not merged. The vLLM engine model records the dropped value as
``JsonOptionValue.replaced``.
"""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, Fix, RuleContext
from mtplint.engines.vllm import JsonOptionValue
from mtplint.source import Span

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: the spellings of the option a dotted flag extends (``-sc`` is vLLM's short alias)
DOTTED_PREFIXES = ("--speculative-config.", "--speculative_config.", "-sc.")


def _keys(value: Any) -> list[str]:
    return [str(key).replace("-", "_") for key in value] if isinstance(value, dict) else []


def _where(span: Span | None, launch_file: str) -> str:
    if span is None:
        return ""
    return f" (line {span.line})" if span.file == launch_file else f" ({span.file}:{span.line})"


def _fix(ctx: RuleContext, option: JsonOptionValue) -> Fix | None:
    """Merge the dotted keys into the full value (they win, as in vLLM) and drop the dotted flags."""
    from mtplint.edits.jsonvalue import remove_argv_groups, spec_site  # noqa: PLC0415 - fixing: only when a fix is built

    replaced = option.replaced
    dotted = option.value
    if replaced is None or not isinstance(dotted, dict) or any(isinstance(v, dict) for v in dotted.values()):
        return None  # a nested ``--x.a.b`` key: merging it by hand is not a one-token edit
    site = spec_site(ctx, replaced)
    if site is None:
        return None
    edits = site.update({str(key): value for key, value in dotted.items()})
    if edits is None:
        return None
    launch = ctx.report.launch
    groups: list[tuple[int, int]] = []
    index = 0
    while index < len(launch.args):
        token = launch.args[index]
        if not token.value.startswith(DOTTED_PREFIXES):
            index += 1
            continue
        count = 1 if "=" in token.value else 2
        groups.append((index, count))
        index += count
    removals = remove_argv_groups(launch.source, launch, groups)
    if removals is None:
        return None
    edits.extend(removals)
    return Fix("safe", "Merge the dotted `--speculative-config.*` flags into the one speculative config", edits)


#: a launch without ``speculative_config`` finds nothing here (not checked: :func:`mtplint.checks.run_rules`)
ONLY_WITH_OPTION = ("speculative_config",)


def check(ctx: RuleContext) -> Iterator[Finding]:
    option = ctx.option("speculative_config")
    if not isinstance(option, JsonOptionValue) or option.replaced is None:
        return
    replaced = option.replaced
    kept = _keys(option.value)
    source = "the `speculative-config:` mapping of the --config file" if replaced.origin == "config-file" \
        else "the full `--speculative-config` JSON"
    where = _where(replaced.span, ctx.launch_span.file)
    dotted = ", ".join(f"`{key}`" for key in kept)
    if replaced.unresolved or not isinstance(replaced.value, dict):
        lost_text = "whatever it sets is dropped"
    else:
        lost = [key for key in _keys(replaced.value) if key not in kept]
        if not lost:
            return  # every key is set again by a dotted flag: nothing is lost
        values = {str(k).replace("-", "_"): v for k, v in replaced.value.items()}
        lost_text = "dropped: " + ", ".join(f"`{key}: {values[key]!r}`" for key in lost)
    yield ctx.report_finding(
        f"dotted `--speculative-config.*` flags ({dotted}) replace {source}{where} instead of merging with it; "
        f"vLLM keeps only the dotted keys, {lost_text}; put every key in one `--speculative-config` JSON",
        option.span or ctx.launch_span,
        fix=_fix(ctx, option),
    )
