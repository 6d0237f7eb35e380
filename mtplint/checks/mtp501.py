"""MTP501 unknown-speculative-config-key: a key vLLM's ``SpeculativeConfig`` does not have."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Edit, Finding, Fix, RuleContext
from mtplint.checks.mtp5xx import (
    closest,
    json_key_span,
    key_history,
    spec_release,
    speculative_config,
    suggestion,
    version_label,
)
from mtplint.checks.mtp406 import CONSEQUENCE
from mtplint.engines import OptionValue
from mtplint.versions import compare


def _rename(ctx: RuleContext, option: OptionValue, raw_key: str, new: str, present: set[str]) -> Fix | None:
    """Rename the key where it was written: inside the JSON / dict / YAML mapping, or in the dotted
    ``--speculative-config.<key>`` flag."""
    from mtplint.edits.jsonvalue import replace_word_text, spec_site  # noqa: PLC0415 - fixing: only when a fix is built

    if new in present:
        return None  # the right key is there too: which value is meant is the user's call
    site = spec_site(ctx, option)
    edits: list[Edit] | None = site.rename_key(raw_key, new) if site is not None else None
    if edits is None:
        for token in ctx.report.launch.args:
            name = token.value.split("=", 1)[0]
            if token.resolved and token.span is not None and name.endswith("." + raw_key) \
                    and name.startswith(("--speculative-config.", "--speculative_config.", "-sc.")):
                source = ctx.source_for(token.span)
                edit = replace_word_text(source, token.span, "." + raw_key, "." + new) if source else None
                edits = [edit] if edit is not None else None
                break
    return Fix("safe", f"Rename `{raw_key}` to `{new}`", edits) if edits else None


#: a launch without ``speculative_config`` finds nothing here (not checked: :func:`mtplint.checks.run_rules`)
ONLY_WITH_OPTION = ("speculative_config",)


def check(ctx: RuleContext) -> Iterator[Finding]:
    found = speculative_config(ctx)
    if found is None:
        return
    option, spec = found
    release = spec_release(ctx.report.version.version)
    present = {key.replace("-", "_") for key in spec}
    for raw_key in spec:
        # top-level `-` is read as `_` (vLLM 0.33.0 arg_utils.py create_speculative_config ~L2126)
        key = raw_key.replace("-", "_")
        if (key in release.keys and key != "tensor_parallel_size") or key in release.internal:
            continue
        fix: Fix | None = None
        if key == "tensor_parallel_size":
            hint = "vLLM refuses it by name: use `draft_tensor_parallel_size`"
        else:
            first, _ = key_history(key)
            if first is not None and compare(first, release.version) > 0:
                hint = f"it was added in vLLM {first}; upgrade or remove it"
            else:
                hint = suggestion(key, release.keys) or "remove it"
                matches = closest(key, release.keys)
                if len(matches) == 1:  # safe only where exactly one name is close (rules/MTP501.yaml)
                    fix = _rename(ctx, option, raw_key, matches[0], present)
        yield ctx.report_finding(
            f"`{raw_key}` is not a speculative-config key of {version_label(ctx)}: "
            f"{CONSEQUENCE[release.unknown_keys]}; {hint}",
            json_key_span(ctx, option, raw_key),
            fix=fix,
        )
