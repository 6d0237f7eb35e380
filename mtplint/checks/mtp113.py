"""MTP113 llama-draft-model-unused: ``-md`` without a ``draft-*`` ``--spec-type`` loads a draft that never drafts.

llama.cpp b9464 (PR #23988) stopped enabling ``draft-simple`` merely because a draft model was given:
speculation now follows ``--spec-type`` alone, so ``-md draft.gguf`` without a ``draft-*`` type loads
the draft's weights and KV cache and never uses them (llama.cpp PR #23988; docs/llamacpp.md#limits). From
b10413 a draft without a type is typed from its GGUF metadata (MTP, DFlash, DSpark heads); a plain
draft model still needs ``--spec-type draft-simple`` there, but mtplint cannot read the GGUF.
"""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, Fix, RuleContext
from mtplint.engines.llamacpp import DRAFT_TYPES

#: a launch without a draft model finds nothing here (not checked: :func:`mtplint.checks.run_rules`)
ONLY_WITH_OPTION = ("spec_draft_model", "spec_draft_hf_repo")


def check(ctx: RuleContext) -> Iterator[Finding]:
    draft = ctx.option("spec_draft_model") or ctx.option("spec_draft_hf_repo")
    if draft is None or draft.unresolved or not draft.value:
        return
    if ctx.report.parsed.open_ended:
        return  # "$@" may add --spec-type (MTP003 says so)
    spec_type = ctx.option("spec_type")
    if spec_type is not None and spec_type.unresolved:
        return
    types = spec_type.value if spec_type is not None and isinstance(spec_type.value, list) else []
    # the pre-b9131 names `draft` / `eagle3` are MTP404's business; they still name a draft type
    if any(name in DRAFT_TYPES or name in ("draft", "eagle3") for name in types):
        return
    given = [name for name in types if name != "none"]
    also = f" (`--spec-type {','.join(given)}` has no draft type)" if given else ""
    yield ctx.report_finding(
        f"draft model {draft.value} is loaded but never used{also}: since llama.cpp b9464 only a `draft-*` "
        f"`--spec-type` turns model-based drafting on{ctx.version_note()}; add `--spec-type draft-simple` "
        "(or `draft-mtp` / `draft-eagle3` for those drafts)",
        draft.span,
        fix=_spec_type_fix(ctx) if spec_type is None else None,
    )


def _spec_type_fix(ctx: RuleContext) -> Fix | None:
    """Add ``--spec-type draft-simple`` (only when no ``--spec-type`` is written: a list the user
    chose is theirs to extend). A launch configured through ``LLAMA_ARG_*`` variables with no
    arguments written gets ``LLAMA_ARG_SPEC_TYPE=draft-simple`` next to them instead."""
    from mtplint.edits.argv import append_flags, written_args  # noqa: PLC0415 - fixing: only when a fix is built

    launch = ctx.report.launch
    if written_args(launch, launch.source):
        edits = append_flags(launch, ["--spec-type", "draft-simple"])
        return Fix("safe", "Add `--spec-type draft-simple`", edits) if edits else None
    if not any(name.startswith("LLAMA_ARG_") for name in launch.env):
        return None
    from mtplint.edits.env import set_env  # noqa: PLC0415 - fixing: only when a fix is built

    edits = set_env(launch, "LLAMA_ARG_SPEC_TYPE", "draft-simple")
    return Fix("safe", "Set `LLAMA_ARG_SPEC_TYPE=draft-simple`", edits) if edits else None
