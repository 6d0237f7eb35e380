"""Kubernetes YAML, as one kind of YAML file (:mod:`mtplint.extract.yamlfiles`): a kustomization
goes to :mod:`mtplint.extract.kustomize`, which builds the patched workloads; plain manifests,
Helm-rendered streams and ``List`` documents to :mod:`mtplint.extract.k8s`. Above both, since
kustomize builds on the manifest model of k8s.
"""

from __future__ import annotations

import os

from mtplint.extract import ExtractContext, k8s
from mtplint.extract.launch import Launch
from mtplint.extract.yamlfiles import parse
from mtplint.extract.yamlpos import YNode
from mtplint.pathtext import parent_dir
from mtplint.source import SourceFile


def claims(documents: list[YNode]) -> bool:
    """Whether the documents are Kubernetes objects or a kustomization."""
    return k8s.claims(documents)


def extract_documents(source: SourceFile, documents: list[YNode], ctx: ExtractContext) -> list[Launch]:
    if any(k8s.is_kustomization(document) for document in documents):
        from mtplint.extract import kustomize  # noqa: PLC0415 - kustomize: only for a kustomization

        return kustomize.extract_kustomization(source, documents, ctx)
    if _is_overlay_patch(source, ctx):
        return []  # its kustomization reports the patched launch
    base_dir = parent_dir(source.path)
    configmaps = k8s.config_maps(documents)
    launches: list[Launch] = []
    for workload in k8s.workloads(source, documents):
        launches.extend(k8s.workload_launches(workload, configmaps, source=source, ctx=ctx, base_dir=base_dir))
    return launches


def extract(source: SourceFile, ctx: ExtractContext) -> list[Launch]:
    return extract_documents(source, parse(source), ctx)


#: the key, in a loader's path memos, of whether each real folder holds a kustomization (forgotten
#: with the listings it is read from)
_HOLDS_KUSTOMIZATION = "kustomize.holds_kustomization"


def _is_overlay_patch(source: SourceFile, ctx: ExtractContext) -> bool:
    """Whether a kustomization next to (or one level above) this file uses it as a patch: a patch
    alone is not a deployment, its kustomization reports the patched launch."""
    loader = ctx.loader
    if not loader.exists(source.path):
        return False
    me = loader.real_path(source.path)
    parent = os.path.dirname(me)
    # a tree's manifests share their folders, and most folders hold no kustomization: whether one
    # does is asked once per folder, and the kustomization is read (and its reader imported) only
    # for a folder that has one
    holds: dict[str, bool] = loader.path_memos.setdefault(_HOLDS_KUSTOMIZATION, {})
    for directory in (parent, os.path.dirname(parent)):
        found = holds.get(directory)
        if found is None:
            found = holds[directory] = k8s.find_kustomization(directory, loader) is not None
        if found:
            from mtplint.extract import kustomize  # noqa: PLC0415 - only near a kustomization

            if me in kustomize.patched_files(directory, loader):
                return True
    return False
