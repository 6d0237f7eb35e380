"""Kubernetes YAML, as one kind of YAML file (:mod:`mtplint.extract.yamlfiles`): a kustomization
goes to :mod:`mtplint.extract.kustomize`, which builds the patched workloads; plain manifests,
Helm-rendered streams and ``List`` documents to :mod:`mtplint.extract.k8s`. Above both, since
kustomize builds on the manifest model of k8s.
"""

from __future__ import annotations

from mtplint.extract import ExtractContext, k8s, kustomize
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
        return kustomize.extract_kustomization(source, documents, ctx)
    if kustomize.is_overlay_patch(source, ctx):
        return []  # its kustomization reports the patched launch
    base_dir = parent_dir(source.path)
    configmaps = k8s.config_maps(documents)
    launches: list[Launch] = []
    for workload in k8s.workloads(source, documents):
        launches.extend(k8s.workload_launches(workload, configmaps, source=source, ctx=ctx, base_dir=base_dir))
    return launches


def extract(source: SourceFile, ctx: ExtractContext) -> list[Launch]:
    return extract_documents(source, parse(source), ctx)
