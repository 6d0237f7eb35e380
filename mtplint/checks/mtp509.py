"""MTP509 engine-rejects-arguments: what the engine refuses and no more specific rule reports."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext
from mtplint.checks.mtp5xx import ENGINE_LABELS, flag_name, version_label
from mtplint.checks.mtp404 import RENAMED, UNKNOWN_TYPE
from mtplint.engines import CliError

#: kinds with rules of their own: unknown/ambiguous flags (MTP402, MTP403, MTP406, MTP407, MTP506,
#: MTP508's left-over positional), removed flags (MTP403), values given to switches (MTP504)
_ELSEWHERE = frozenset({"unknown", "ambiguous", "removed", "bool-value"})
#: (kind, flag) pairs a specific rule reports: the kv-cache dtype (MTP505), the speculative JSON (MTP503)
_SPECIFIC = {
    "invalid-choice": frozenset({"--kv-cache-dtype", "kv_cache_dtype"}),
    "invalid-json": frozenset({"--speculative-config", "-sc", "speculative_config"}),
}


def reported_elsewhere(error: CliError) -> bool:
    """Whether another rule reports this rejection (so it is not reported twice)."""
    if error.kind in _ELSEWHERE:
        return True
    if flag_name(error.flag) in _SPECIFIC.get(error.kind, ()):
        return True
    # an old spelling of a llama.cpp ``--spec-type`` is MTP404's
    renamed = UNKNOWN_TYPE.search(error.message)
    if renamed is not None and renamed.group(1) in RENAMED:
        return True
    # an unreadable or malformed ``--config`` file is MTP001's, at the file itself
    return error.kind == "startup" and error.message.startswith("cannot read config file")


def check(ctx: RuleContext) -> Iterator[Finding]:
    engine = ENGINE_LABELS.get(ctx.engine, ctx.engine)
    for error in ctx.errors:
        if reported_elsewhere(error):
            continue
        when = "when it starts" if error.kind == "startup" else "before it loads the model"
        yield ctx.report_finding(f"{version_label(ctx)} refuses this launch {when}: \"{error.message}\"; "
                                 f"{engine} exits", error.span)
