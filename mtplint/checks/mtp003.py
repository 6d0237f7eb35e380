"""MTP003 unresolved-setting: which rules could not judge a launch because a value is unknown.

mtplint never guesses (docs/versions.md#what-rules-do-with-a-range): a rule reading an unresolved
setting stays silent. This module makes that silence visible. It runs after the other rules, knows
which rules were selected, and for a launch with speculative decoding on (or a speculative method
that is itself unresolved) reports each unresolved input that a selected rule needed:

- an effective setting marked unresolved (``--kv-cache-dtype "$KV"``, a k8s ``valueFrom``);
- a flag whose value is an unresolved word that the engine's parser could not even read (compose
  ``--max-num-seqs ${SEQS}`` with ``SEQS`` unset may vanish, so the setting shows its default);

A launch without a GPU identity (no ``--gpu``, configuration ``gpu``, k8s node selector or
``# mtplint: gpu=`` directive) is not a finding: on a real repository that is most launches, and a
finding per launch buried the rest. :func:`rules_without_gpu` says which rules it kept from a
launch, and the run's summary says it once (:func:`gpu_note`).

Which rule reads which setting is the table :data:`NEEDS` (house rules read the
settings their ``when:`` names). A bare ``"$@"`` that may add flags is not reported: no rule skips a
launch because of it (rules judge the flags they can see), so saying one did would not be true. An
unknown options variable or array (``$EXTRA_ARGS``, a shell array that differs between too many
branches) is the script's own and is named, once per launch, as arguments mtplint cannot see.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from mtplint.checks import Finding, RuleContext
from mtplint.checks.catalog import Rule
from mtplint.extract.budget import EXPANSION_CHARS, EXPANSION_DEPTH, OVER_BUDGET_MARK, is_over_budget
from mtplint.source import Span, Token

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mtplint.pipeline import LaunchReport

#: rule code -> the effective settings its predicate reads (rules/MTP*.yaml and mtplint/checks, rule by rule)
NEEDS: dict[str, tuple[str, ...]] = {
    "MTP101": ("spec_method", "kv_cache_dtype"),
    "MTP102": ("spec_method", "prefix_caching", "model"),
    "MTP103": ("spec_method", "spec_topk", "spec_v2"),
    "MTP104": ("spec_v2", "spec_topk"),
    "MTP105": ("spec_method", "model"),
    "MTP109": ("spec_method", "spec_tokens"),
    "MTP110": ("model", "chunked_prefill", "prefix_caching"),
    "MTP111": ("model", "spec_method", "prefix_caching", "mamba_strategy"),
    "MTP112": ("spec_method", "spec_topk"),
    "MTP113": ("spec_method", "spec_model"),
    "MTP201": ("gpu", "model", "spec_method", "spec_tokens", "kv_cache_dtype", "memory_fraction",
               "max_concurrency", "tensor_parallel", "quantization"),
    "MTP202": ("spec_method", "memory_fraction"),
    "MTP203": ("model", "spec_tokens", "max_concurrency"),
    "MTP204": ("spec_method", "memory_fraction"),
    "MTP301": ("gpu", "model", "spec_tokens", "max_concurrency"),
    "MTP302": ("spec_method", "spec_tokens", "model"),
    "MTP303": ("spec_method",),
    "MTP304": ("spec_method", "max_concurrency"),
    "MTP305": ("spec_method", "cuda_graphs"),
    "MTP505": ("kv_cache_dtype",),
    "MTP507": ("spec_method", "spec_topk", "spec_draft_tokens", "spec_tokens"),
}

#: how an unread file is named in a setting's ``unresolved`` (:func:`mtplint.settings.open_to_config`,
#: SGLang's ``spec_v2`` under an unread env file: :attr:`mtplint.extract.launch.Launch.env_open`)
_UNREAD_FILES = ("--config ", "--env-file ", "env_file ", "EnvironmentFile=")

#: flag (without dashes, ``_`` as ``-``) -> the effective setting it sets, for every engine; used
#: when the parser could not read the flag's value at all
FLAG_SETTINGS: dict[str, str] = {
    # vLLM (``engine/arg_utils.py``; docs/vllm.md#speculative-config-keys)
    "model": "model", "speculative-config": "spec_method", "kv-cache-dtype": "kv_cache_dtype",
    "max-num-seqs": "max_concurrency", "enable-prefix-caching": "prefix_caching",
    "gpu-memory-utilization": "memory_fraction", "tensor-parallel-size": "tensor_parallel", "tp": "tensor_parallel",
    "enable-chunked-prefill": "chunked_prefill", "quantization": "quantization", "q": "quantization",
    "max-model-len": "max_model_len", "enforce-eager": "cuda_graphs",
    # SGLang (``srt/server_args.py``; docs/sglang.md#speculative-flags)
    "model-path": "model", "speculative-algorithm": "spec_method", "speculative-num-steps": "spec_tokens",
    "speculative-eagle-topk": "spec_topk", "speculative-num-draft-tokens": "spec_draft_tokens",
    "speculative-draft-model-path": "spec_model", "mem-fraction-static": "memory_fraction",
    "max-running-requests": "max_concurrency", "tp-size": "tensor_parallel", "disable-radix-cache": "prefix_caching",
    "mamba-scheduler-strategy": "mamba_strategy", "mamba-radix-cache-strategy": "mamba_strategy",
    "disable-cuda-graph": "cuda_graphs",
    # llama.cpp (``common/arg.cpp``; docs/llamacpp.md#current-flags)
    "m": "model", "spec-type": "spec_method", "spec-draft-n-max": "spec_tokens", "parallel": "max_concurrency",
    "np": "max_concurrency", "cache-type-k": "kv_cache_dtype", "ctk": "kv_cache_dtype", "ctx-size": "max_model_len",
    "c": "max_model_len", "spec-draft-model": "spec_model", "md": "spec_model",
}

#: environment variables the engines read as settings
ENV_SETTINGS: dict[str, str] = {"SGLANG_ENABLE_SPEC_V2": "spec_v2", "SGL_ENABLE_SPEC_V2": "spec_v2"}


class Unresolved:
    """One value mtplint could not resolve, and the setting it feeds; ``what``: how the user wrote
    it (``$KV``, ``${SEQS}``). A plain class: rule modules load on every run, and dataclass() costs
    start-up time."""

    __slots__ = ("setting", "span", "what")

    def __init__(self, setting: str, what: str, span: Span | None) -> None:
        self.setting = setting
        self.what = what
        self.span = span

    def __repr__(self) -> str:
        return f"Unresolved(setting={self.setting!r}, what={self.what!r}, span={self.span!r})"


def needs(rule: Rule) -> tuple[str, ...]:
    if rule.when is not None:
        return tuple(rule.when)
    return NEEDS.get(rule.code, ())


def speculation_may_be_on(report: LaunchReport) -> bool:
    setting = report.effective.get("spec_method")
    if setting is None:
        return False
    return bool(setting.unresolved) or setting.value not in (None, False, "", "off", "none")


def _flag_name(word: str) -> str:
    return word.lstrip("-").split("=", 1)[0].replace("_", "-")


def unresolved_inputs(report: LaunchReport) -> list[Unresolved]:
    """Settings of the launch whose value is unknown, each with the text that made it so."""
    found: dict[str, Unresolved] = {}
    for name, setting in report.effective.items():
        if setting.unresolved:
            found[name] = Unresolved(name, ", ".join(f"${v}" if v.isidentifier() else v for v in setting.unresolved),
                                     setting.span)
    words = report.launch.args
    for index, token in enumerate(words):
        if token.resolved:
            continue
        flag: str | None = None
        if token.value.startswith("-") and "=" in token.value:
            flag = _flag_name(token.value)
        elif index and words[index - 1].resolved and words[index - 1].value.startswith("-") \
                and "=" not in words[index - 1].value:
            flag = _flag_name(words[index - 1].value)
        setting_name = FLAG_SETTINGS.get(flag or "")
        if setting_name is None or setting_name in found:
            continue
        effective = report.effective.get(setting_name)
        if effective is not None and effective.origin != "default":
            continue  # the parser read a value from elsewhere (last one wins)
        # a value left unexpanded for the budget is named for that, not by the text left in its place
        what = next((name for name in token.unresolved if is_over_budget(name)), token.value)
        found[setting_name] = Unresolved(setting_name, what, token.span)
    for name, entry in report.launch.env.items():
        setting_name = ENV_SETTINGS.get(name)
        if setting_name and not entry.value.resolved and setting_name not in found:
            found[setting_name] = Unresolved(setting_name, entry.value.value, entry.span or entry.value.span)
    return list(found.values())


def hidden_arguments(report: LaunchReport) -> list[Token]:
    """Words of the launch that may stand for any number of arguments, none known: an unknown
    options variable (``$EXTRA_ARGS`` unquoted, ``"${ARGS[@]}"`` of an unknown array). The script's
    own arguments (``"$@"``) are not among them: they are the caller's to give, and the caller is not
    in the checkout. Nor is an unquoted word right after an option (``--port $PORT``): that is the
    option's value (:func:`unresolved_inputs` names it when a rule needs it), unless it is an array."""
    words = report.launch.args
    hidden = []
    for index, token in enumerate(words):
        if not token.splat or not token.unresolved or token.unresolved in (("$@",), ("$*",)):
            continue
        previous = words[index - 1] if index else None
        if previous is not None and previous.resolved and previous.value.startswith("-") and "=" not in previous.value \
                and "[@]" not in token.value and "[*]" not in token.value:
            continue  # `--port $PORT`: a flag's value written unquoted, not a list of arguments
        hidden.append(token)
    return hidden


def _could_run(rule: Rule, report: LaunchReport) -> bool:
    engine = report.launch.engine
    if not rule.applies_to(engine):
        return False
    # a rule with no version ranges for the engine affects every version (RuleContext.affected)
    return not rule.affected.get(engine) or RuleContext(rule, report).affected() is not False


def unresolved_findings(mtp003: Rule, report: LaunchReport, selected: Sequence[Rule]) -> Iterator[Finding]:
    """MTP003 findings for one launch, given the rules that ran."""
    if not speculation_may_be_on(report):
        return
    # one finding per thing mtplint could not read: an unread --config file leaves every setting
    # the command line does not give unknown, and that is one cause, not ten
    groups: dict[tuple[str, int | None], list[Unresolved]] = {}
    for item in unresolved_inputs(report):
        groups.setdefault((item.what, item.span.start if item.span else None), []).append(item)
    hidden = hidden_arguments(report)
    if not groups and not hidden:
        return  # nothing unread: no need to know which rules could have run
    candidates = [rule for rule in selected if rule.code != mtp003.code and _could_run(rule, report)]
    context = RuleContext(mtp003, report)
    for items in groups.values():
        settings = [item.setting for item in items if any(item.setting in needs(rule) for rule in candidates)]
        skipped = [rule.code for rule in candidates if any(name in needs(rule) for name in settings)]
        if not skipped:
            continue
        what, span = items[0].what, items[0].span
        named = ", ".join(f"`{name}`" for name in settings)
        if what.startswith(_UNREAD_FILES):
            yield context.report_finding(
                f"{named} may be set in `{what}`, which mtplint cannot read (not in the checkout, malformed, or "
                f"its path is only known at run time), so {', '.join(skipped)} did not check this launch; add the file to the "
                "checkout, or set what matters on the command line",
                span,
            )
            continue
        if OVER_BUDGET_MARK in what:
            yield context.report_finding(
                f"{named} {'comes' if len(settings) == 1 else 'come'} from `{what}`: expanding it would take more than "
                f"mtplint's budget ({EXPANSION_CHARS >> 20} MiB of expanded text per file, defaults nested "
                f"{EXPANSION_DEPTH} deep), so {', '.join(skipped)} did not check this launch; set what matters "
                "with a literal value",
                span,
            )
            continue
        yield context.report_finding(
            f"{named} {'comes' if len(settings) == 1 else 'come'} from `{what}`, which mtplint cannot resolve "
            f"(no default, no `.env` entry, or set at run time), so {', '.join(skipped)} did not check this launch; "
            "give it a default (`${VAR:-value}`) or a literal value",
            span,
        )
    for word in hidden:
        yield context.report_finding(
            f"`{word.value}` may add arguments mtplint cannot see (its value is only known at run time, or it "
            "differs between more branches of the script than mtplint follows), so this launch was checked by the "
            "flags written around it; a flag given there is not checked",
            word.span,
        )


def rules_without_gpu(mtp003: Rule, report: LaunchReport, selected: Sequence[Rule]) -> list[str]:
    """The selected rules that did not check this launch because nothing names its GPU (those
    ``only_when: [gpu-named]``, MTP201 and MTP301, and a house rule with a ``gpu`` condition); empty
    when the GPU is known or nothing needed it."""
    if not speculation_may_be_on(report):
        return []
    gpu = report.effective.get("gpu")
    if gpu is None or gpu.value is not None:
        return []
    return [rule.code for rule in _needing_gpu(selected) if rule.code != mtp003.code and _could_run(rule, report)]


#: the identities of a selection of rules -> the selection, and its rules that need the launch's GPU
#: named: worked out once per selection, not per launch (the selection is kept with them, so no other
#: rule takes one's identity while the entry lives)
_NEEDING_GPU: dict[tuple[int, ...], tuple[tuple[Rule, ...], tuple[Rule, ...]]] = {}

#: entries :data:`_NEEDING_GPU` holds at most (a long-lived process may read new house rules)
_MAX_NEEDING_GPU = 32


def _needing_gpu(selected: Sequence[Rule]) -> tuple[Rule, ...]:
    """The rules of ``selected`` that need the launch's GPU named (``only_when: [gpu-named]``, or a
    house rule with a ``gpu`` condition), in their order."""
    key = tuple(map(id, selected))
    known = _NEEDING_GPU.get(key)
    if known is None:
        if len(_NEEDING_GPU) >= _MAX_NEEDING_GPU:
            _NEEDING_GPU.clear()
        known = _NEEDING_GPU[key] = (tuple(selected), tuple(
            rule for rule in selected if "gpu-named" in rule.only_when or "gpu" in (rule.when or {})))
    return known[1]


def gpu_note(launches: int, rules: Sequence[str]) -> str:
    """The run summary's one sentence for the launches :func:`rules_without_gpu` found unchecked."""
    plural = "es" if launches != 1 else ""
    return (f"{launches} launch{plural} not checked by {', '.join(rules)} (memory and throughput need the GPU): "
            "name it with `--gpu ID[xN]` (e.g. `--gpu rtx-4090x2`), `gpu` in the configuration, a Kubernetes "
            "`nvidia.com/gpu.product` node selector, or a `# mtplint: gpu=…` line in the file.")
