"""MTP508 conflicting-model-arguments: ``vllm serve <model>`` and ``--model`` together."""

from __future__ import annotations

import re
from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext

_MODEL_OPTION = re.compile(r"^--model(=.*)?$")


def check(ctx: RuleContext) -> Iterator[Finding]:
    launch = ctx.report.launch
    if launch.kwargs is not None or launch.entry.startswith("python"):
        return  # the api_server entry point has no positional model
    args = launch.args
    if not args or not args[0].resolved or args[0].value.startswith("-"):
        return
    positional = args[0]
    option_token = next((t for t in args[1:] if t.resolved and _MODEL_OPTION.match(t.value)), None)
    if option_token is None:
        return
    if option_token.value.startswith("--model="):
        value = option_token.value.split("=", 1)[1]
    else:
        index = args.index(option_token)
        value = args[index + 1].value if index + 1 < len(args) else ""
    new = ctx.report.version.at_least("0.11.1")
    if new is True:
        outcome = (f"vLLM moves `--model {value}` into the model slot, so `{positional.value}` is left over and the "
                   "server exits with \"unrecognized arguments\"")
    elif new is False:
        outcome = "vLLM refuses `--model` with `vllm serve` (\"you should provide the model as a positional argument\")"
    else:
        outcome = ("the server does not start (0.11.1+: the positional is left over as an unrecognized argument; "
                   "before: `--model` is refused with `vllm serve`; the version is not pinned)")
    same = "" if value == positional.value else f" — and they name different models (`{positional.value}` vs `{value}`)"
    yield ctx.report_finding(
        f"the model is given twice, as the positional `{positional.value}` and as `--model`{same}: {outcome}; "
        "keep only the positional model",
        option_token.span,
    )
