"""MTP509 engine-rejects-arguments: what the engine refuses and no more specific rule reports."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext
from mtplint.checks.mtp5xx import ENGINE_LABELS, flag_name, version_label
from mtplint.checks.mtp404 import RENAMED, UNKNOWN_TYPE
from mtplint.engines import CliError
from mtplint.startup import DeferredPattern

#: kinds with rules of their own: unknown/ambiguous flags (MTP402, MTP403, MTP406, MTP407, MTP506),
#: removed flags (MTP403), values given to switches (MTP504); a stray word that is no flag
#: ("unrecognized arguments: 4" from a k8s item "--tensor-parallel-size 4") is this rule's
_ELSEWHERE = frozenset({"ambiguous", "removed", "bool-value"})
_MODEL_OPTION = DeferredPattern(r"^--model(=.*)?$")  # compiled when first used: most launches are not vLLM's
#: (kind, flag) pairs a specific rule reports: the kv-cache dtype (MTP505), the speculative JSON (MTP503)
_SPECIFIC = {
    "invalid-choice": frozenset({"--kv-cache-dtype", "kv_cache_dtype"}),
    "invalid-json": frozenset({"--speculative-config", "-sc", "speculative_config"}),
}


def reported_elsewhere(error: CliError, ctx: RuleContext) -> bool:
    """Whether another rule reports this rejection (so it is not reported twice)."""
    if error.kind in _ELSEWHERE:
        return True
    if error.kind == "unknown":
        stray = not error.flag or not flag_name(error.flag).startswith("-")
        python = ctx.report.launch.kwargs is not None
        if python or not stray or (error.flag or "").startswith("LLAMA_ARG_"):
            return True  # a flag or keyword the engine does not know: MTP506 and the MTP4xx renames
        return _model_given_twice(ctx)
    if error.kind == "startup" and _model_given_twice(ctx) and "positional" in error.message:
        return True  # vLLM 0.8.3-0.11.0 refusing `--model` under `vllm serve`: MTP508
    if flag_name(error.flag) in _SPECIFIC.get(error.kind, ()):
        return True
    # an old spelling of a llama.cpp ``--spec-type`` is MTP404's
    renamed = UNKNOWN_TYPE.search(error.message)
    if renamed is not None and renamed.group(1) in RENAMED:
        return True
    # an unreadable or malformed ``--config`` file is MTP001's, at the file itself
    return error.kind == "startup" and error.message.startswith("cannot read config file")


def _model_given_twice(ctx: RuleContext) -> bool:
    """``vllm serve <model> --model <model>``: MTP508 reports what the parser makes of it (the
    positional left over as an unrecognized argument, or ``--model`` refused)."""
    args = ctx.report.launch.args
    if ctx.engine != "vllm" or not args or not args[0].resolved or args[0].value.startswith("-"):
        return False
    return any(token.resolved and _MODEL_OPTION.match(token.value) for token in args[1:])


def check(ctx: RuleContext) -> Iterator[Finding]:
    engine = ENGINE_LABELS.get(ctx.engine, ctx.engine)
    for error in ctx.errors:
        if reported_elsewhere(error, ctx):
            continue
        when = "when it starts" if error.kind == "startup" else "before it loads the model"
        yield ctx.report_finding(f"{version_label(ctx)} refuses this launch {when}: \"{error.message}\"; "
                                 f"{engine} exits", error.span)
