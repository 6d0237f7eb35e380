"""MTP402 removed-vllm-spec-flags: the pre-0.8.3 speculative flags (research/vllm.md §3)."""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext
from mtplint.checks.mtp5xx import flag_name

#: removed flag -> the ``--speculative-config`` key that replaced it (W082 arg_utils.py
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


def check(ctx: RuleContext) -> Iterator[Finding]:
    version = ctx.report.version
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
                )
            elif name in KWARGS:
                yield ctx.report_finding(
                    f"`{name}=` was removed in vLLM 0.8.3: `EngineArgs` raises TypeError{note}; "
                    f"{_instead(name, KWARGS[name]).replace('`--speculative-config` key', '`speculative_config` key')}",
                    error.span,
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
            )
