"""MTP506 unknown-or-ambiguous-flag: a flag the engine's parser rejects, with the closest real flag."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, Fix, RuleContext
from mtplint.checks.mtp5xx import ENGINE_LABELS, closest, engine_flags, flag_name, suggestion, version_label
from mtplint.source import Span
from mtplint.versions import compare

#: the other engines whose flags people carry over (vLLM flags given to SGLang and back)
_OTHER = {"sglang": "vllm", "vllm": "sglang"}
#: the same setting under the other engine's name (docs/sglang.md#memory-flags)
_COUNTERPART = {
    "sglang": {"--gpu-memory-utilization": "--mem-fraction-static", "--max-num-seqs": "--max-running-requests",
               "--max-model-len": "--context-length", "--enforce-eager": "--disable-cuda-graph",
               "--no-enable-prefix-caching": "--disable-radix-cache",
               "--speculative-config": "--speculative-algorithm with --speculative-num-steps and friends",
               "--model": "--model-path"},
    "vllm": {"--mem-fraction-static": "--gpu-memory-utilization", "--max-running-requests": "--max-num-seqs",
             "--context-length": "--max-model-len", "--disable-cuda-graph": "--enforce-eager",
             "--disable-radix-cache": "--no-enable-prefix-caching", "--model-path": "the positional model",
             "--speculative-algorithm": "--speculative-config '{\"method\": ...}'"},
}

#: unknown flags of one launch that get a "did you mean" (difflib is slow, each flag against a
#: release's ~500): past them, a launch of thousands of unknown flags is still reported whole, in
#: linear time, each finding saying "remove it"
SUGGESTED_FLAGS = 50


def _other_engine_has(ctx: RuleContext, flag: str) -> str | None:
    other = _OTHER.get(ctx.engine)
    if other is None:
        return None
    try:
        if other == "vllm":
            from mtplint.engines.vllm import load_table as load_vllm  # noqa: PLC0415 - engine lookup: vLLM's table only

            found = flag in load_vllm("99").by_option
        else:
            from mtplint.engines.sglang import load_table as load_sglang  # noqa: PLC0415 - engine lookup: SGLang's table only

            found = flag in load_sglang("99").index
    except (KeyError, OSError, ValueError):
        return None
    return ENGINE_LABELS[other] if found else None


def _history(ctx: RuleContext, flag: str) -> str:
    """`` (a flag of SGLang 0.5.4…0.5.19; gone in 0.5.20)`` when other releases of the engine know it."""
    versions: tuple[str, ...]
    if ctx.engine == "vllm":
        from mtplint.engines import vllm  # noqa: PLC0415 - engine lookup: the launch's engine only

        versions = vllm.table_versions()
        has = [v for v in versions if flag in vllm.load_table(v).by_option]
    elif ctx.engine == "sglang":
        from mtplint.engines import sglang  # noqa: PLC0415 - engine lookup: the launch's engine only

        versions = sglang.table_versions()
        has = [v for v in versions if flag in sglang.load_table(v).index]
    else:
        return ""
    if not has:
        return ""
    current = ctx.report.version.version
    engine = ENGINE_LABELS[ctx.engine]
    older = [v for v in has if compare(v, current) < 0]
    newer = [v for v in has if compare(v, current) > 0]
    if older and not newer:
        gone = next(v for v in versions if compare(v, older[-1]) > 0)
        return f" (a flag of {engine} {older[0]}…{older[-1]} among the releases read; renamed or removed in {gone})"
    if newer:
        return f" (added in {engine} {newer[0]})"
    return ""


def check(ctx: RuleContext) -> Iterator[Finding]:
    engine = ENGINE_LABELS.get(ctx.engine, ctx.engine)
    python = ctx.report.launch.kwargs is not None
    flags: list[str] | None = None
    suggested = 0
    for error in ctx.errors:
        if error.kind not in ("unknown", "ambiguous") or not error.flag:
            continue
        flag = flag_name(error.flag)
        if not python and not flag.startswith("-"):
            continue  # a stray word, not a flag
        if flag.startswith("LLAMA_ARG_"):
            continue
        if flags is None:
            flags = engine_flags(ctx)
        where = version_label(ctx)
        if error.kind == "ambiguous":
            matches = error.message.split("could match", 1)[-1].strip()
            yield ctx.report_finding(
                f"`{flag}` is ambiguous to {engine}'s parser: it abbreviates {matches} (flags of {where}), and the "
                "server exits with \"ambiguous option\"; write the full flag name",
                error.span,
            )
            continue
        suggesting = suggested < SUGGESTED_FLAGS
        suggested += 1
        if python:
            from mtplint.engines.vllm import load_table as load_vllm  # noqa: PLC0415 - engine lookup: vLLM's table only

            fields = [f.dest for f in load_vllm(ctx.report.version.version).flags] if ctx.engine == "vllm" else \
                [f.lstrip("-").replace("-", "_") for f in flags]
            hint = (suggestion(flag, fields) if suggesting else "") or "remove it"
            yield ctx.report_finding(
                f"`{flag}=` is not a keyword argument of {where}: the constructor raises TypeError; {hint}",
                error.span,
                fix=_rename_keyword_fix(ctx, flag, closest(flag, fields) if suggesting else []),
            )
            continue
        hint = suggestion(flag, flags) if suggesting else ""
        other = _other_engine_has(ctx, flag.replace("_", "-"))
        if other is not None and not (ctx.engine == "sglang" and "_" in flag):
            counterpart = _COUNTERPART.get(ctx.engine, {}).get(flag)
            hint = f"`{flag}` is a {other} flag; " + (
                f"{engine}'s counterpart is `{counterpart}`" if counterpart else "remove it")
        yield ctx.report_finding(
            f"`{flag}` is not a flag of {where}{_history(ctx, flag)}: the server exits with "
            "\"unrecognized arguments\"; " + (hint or "remove it"),
            error.span,
            fix=_rename_flag_fix(ctx, error.span, flag, closest(flag, flags)) if other is None and suggesting else None,
        )


def _rename_flag_fix(ctx: RuleContext, span: Span | None, flag: str, matches: list[str]) -> Fix | None:
    """Rename the flag to the one close match (none offered for two or more: the user must choose)."""
    from mtplint.edits.argv import rename_flag, token_containing  # noqa: PLC0415 - fixing: only when a fix is built

    if len(matches) != 1:
        return None
    launch = ctx.report.launch
    token = token_containing(launch.args, span)
    if token is None or token.value.split("=", 1)[0] != flag:
        return None
    edit = rename_flag(launch.source, token, matches[0])
    return Fix("safe", f"Write `{matches[0]}`", [edit]) if edit is not None else None


def _rename_keyword_fix(ctx: RuleContext, name: str, matches: list[str]) -> Fix | None:
    from mtplint.edits.argv import rename_keyword  # noqa: PLC0415 - fixing: only when a fix is built

    kwargs = ctx.report.launch.kwargs
    if len(matches) != 1 or kwargs is None or name not in kwargs:
        return None
    edit = rename_keyword(ctx.report.launch.source, kwargs[name], matches[0])
    return Fix("safe", f"Write `{matches[0]}=`", [edit]) if edit is not None else None
