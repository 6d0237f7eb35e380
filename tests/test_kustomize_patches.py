"""A manifest that a kustomization beside it (or one folder up) uses as a patch is not a launch of
its own; telling so reads each kustomization's patches once per run, not once per manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mtplint.extract import FileLoader, k8s, kustomize
from mtplint.pipeline import Options, run
from mtplint.source import SourceFile
from tests.conftest import write_files

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.2
          args: ["Qwen/Qwen3-8B", "--max-num-seqs", "64"]
"""

KUSTOMIZATION = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../base
patches:
  - path: first-patch.yaml
  - path: patches/second-patch.yaml
images:
  - name: vllm/vllm-openai
    newTag: v0.11.0
"""


def _tree(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "base/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                                   "resources:\n  - web.yaml\n",
        "base/web.yaml": DEPLOYMENT.format(name="web"),
        "prod/kustomization.yaml": KUSTOMIZATION,
        "prod/first-patch.yaml": DEPLOYMENT.format(name="web").replace('"64"', '"512"'),
        "prod/patches/second-patch.yaml": DEPLOYMENT.format(name="web"),
        **{f"prod/worker-{number}.yaml": DEPLOYMENT.format(name=f"worker-{number}") for number in range(4)},
        **{f"prod/patches/other-{number}.yaml": DEPLOYMENT.format(name=f"other-{number}") for number in range(3)},
    })


def test_patches_are_left_to_their_kustomization_and_its_patches_read_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path)
    read: list[str] = []
    patch_paths = kustomize._patch_paths

    def counted(kustomization: Any, directory: str, loader: FileLoader) -> set[str]:
        read.append(directory)
        return patch_paths(kustomization, directory, loader)

    monkeypatch.setattr(kustomize, "_patch_paths", counted)
    result = run([tmp_path / "prod"], Options(root=tmp_path))
    files = sorted(report.launch.source.display for report in result.launches)
    assert files == sorted([
        "prod/kustomization.yaml",  # the patched deployment, reported by its kustomization
        *(f"prod/worker-{number}.yaml" for number in range(4)),
        *(f"prod/patches/other-{number}.yaml" for number in range(3)),
    ])
    # nine manifests asked about prod/ (the ones in patches/ from one folder down): read once
    assert read == [str((tmp_path / "prod").resolve())]


def test_a_kustomization_given_a_new_text_is_read_anew(tmp_path: Path) -> None:
    _tree(tmp_path)
    loader = FileLoader(tmp_path)
    prod = (tmp_path / "prod").resolve()
    assert kustomize.patched_files(str(prod), loader) == {str(prod / "first-patch.yaml"),
                                                           str(prod / "patches/second-patch.yaml")}
    source = loader.load(str(prod / "kustomization.yaml"))
    assert source is not None
    loader.put(SourceFile(source.path, source.display, "resources:\n  - ../base\n"))
    assert kustomize.patched_files(str(prod), loader) == frozenset()


def test_a_folder_of_manifests_is_asked_for_its_kustomization_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a folder of plain manifests (no kustomization in it or above): each manifest asks its folder
    # and the one above, and each folder is looked in once per run, not once per manifest
    write_files(tmp_path, {f"k8s/dev/app-{number}.yaml": DEPLOYMENT.format(name=f"app-{number}")
                           for number in range(6)})
    looked_in: list[str] = []
    find = k8s.find_kustomization

    def counted(directory: str, loader: FileLoader) -> str | None:
        looked_in.append(directory)
        return find(directory, loader)

    monkeypatch.setattr(k8s, "find_kustomization", counted)
    result = run([tmp_path / "k8s"], Options(root=tmp_path))
    assert sorted(report.launch.source.display for report in result.launches) == [
        f"k8s/dev/app-{number}.yaml" for number in range(6)]
    dev = (tmp_path / "k8s/dev").resolve()
    assert sorted(looked_in) == [str(dev.parent), str(dev)]


def test_a_kustomizations_patches_are_forgotten_with_its_text(tmp_path: Path) -> None:
    """The run's loader forgets the texts it read every so many files; the patches worked out from a
    kustomization's text go with it (they answer only for that text), or a tree's kustomizations
    would all stay in memory to the end of the run."""
    _tree(tmp_path)
    loader = FileLoader(tmp_path)
    prod = (tmp_path / "prod").resolve()
    patched = kustomize.patched_files(prod, loader)
    assert len(patched) == 2
    loader.forget_files()
    assert not [memo for memo in (*loader.memos.values(), *loader.path_memos.values()) if memo]
    assert kustomize.patched_files(prod, loader) == patched
