"""MTP004 version-undecided: which rules an unpinned engine version left undecided.

A rule whose finding would rest only on a default that differs between engine versions fires only
when the version is known (docs/versions.md#what-rules-do-with-a-range). Each such rule records its silence
(:meth:`mtplint.checks.RuleContext.rests_on_version_default`); once the other rules have run, this
module says so once per launch: which rules, the versions where each would fire, the range still
possible and what it was told from, and how to pin the version. A known version (an ``==`` pin,
``--engine-version``, configuration ``engine-versions``) leaves nothing undecided.
"""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext

#: how each engine is named in the message, and how its version is pinned in an image tag and a pin
_PINNING: dict[str, tuple[str, str, str | None]] = {
    "vllm": ("vLLM", "vllm/vllm-openai:v{version}", "vllm=={version}"),
    "sglang": ("SGLang", "lmsysorg/sglang:v{version}", "sglang=={version}"),
    "llama.cpp": ("llama.cpp", "ghcr.io/ggml-org/llama.cpp:server-{version}", None),
    "vllm-mlx": ("vllm-mlx", "", "vllm-mlx=={version}"),
    "mlx-lm": ("mlx-lm", "", "mlx-lm=={version}"),
}


def check(ctx: RuleContext) -> Iterator[Finding]:
    """Run after the launch's other rules (:func:`mtplint.checks.run_rules`): one finding when
    they left a default undecided."""
    if ctx.report.undecided:
        yield undecided_finding(ctx)


def undecided_finding(ctx: RuleContext) -> Finding:
    """The one MTP004 finding of a launch whose rules recorded an undecided default."""
    report = ctx.report
    version = report.version
    name, image, pin = _PINNING.get(ctx.engine, (ctx.engine, "", None))
    undecided = list(dict.fromkeys(report.undecided))  # a rule that asks about two settings is named per setting
    rules = "; ".join(f"{code} (default `{setting}`) would fire on {name} {fires_on}"
                      for code, setting, fires_on in undecided)
    kinds = list(dict.fromkeys(evidence.kind for evidence in version.evidence))
    told = f"; told from: {', '.join(kinds)}" if kinds else "; nothing pins it"
    newest = version.version
    ways = [f"an image tag (`{image.format(version=newest)}`)" if image else "",
            f"a requirements.txt pin (`{pin.format(version=newest)}`)" if pin else "",
            f"`--engine-version {ctx.engine}={newest}`",
            f"configuration `engine-versions` (`{ctx.engine} = \"{newest}\"`)"]
    return ctx.report_finding(
        f"the {name} version is not pinned (possible: {version.describe_range()}{told}), so "
        f"{len(undecided)} rule{'s' if len(undecided) != 1 else ''} resting on a version-dependent default "
        f"could not decide: {rules}; pin the version with {', '.join(way for way in ways if way)}",
    )
