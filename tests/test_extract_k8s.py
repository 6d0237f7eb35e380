"""Kubernetes manifests and kustomize overlays -> launches (mtplint/extract/kubernetes.py, k8s.py, kustomize.py)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtplint.extract import ExtractContext, FileLoader, k8s, kubernetes
from mtplint.extract.launch import Launch
from mtplint.source import SourceFile

DATA = Path(__file__).parent / "data" / "k8s"


def extract_file(path: Path, root: Path | None = None) -> tuple[list[Launch], ExtractContext]:
    ctx = ExtractContext(FileLoader(root or path.parent))
    source = ctx.loader.load(path)
    assert source is not None
    return kubernetes.extract(source, ctx), ctx


def extract_text(text: str, tmp_path: Path, name: str = "deploy.yaml") -> list[Launch]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return extract_file(path)[0]


def at(launch: Launch, value: str) -> tuple[int, int]:
    token = next(token for token in launch.argv if token.value == value)
    assert token.span is not None
    return token.span.line, token.span.column


def test_helm_rendered_deployment(tmp_path: Path) -> None:
    launches, _ = extract_file(DATA / "helm-rendered.yaml")
    assert len(launches) == 1  # the Service and ConfigMap are not workloads; the init container is no server
    launch = launches[0]
    assert launch.engine == "vllm"
    assert launch.context == "Deployment/qwen-mtp container vllm"
    assert [t.value for t in launch.argv] == [
        "vllm", "serve", "Qwen/Qwen3.6-27B-FP8", "--served-model-name", "qwen", "--speculative-config",
        '{"method": "mtp", "num_speculative_tokens": 2}', "--tensor-parallel-size", "2", "--port=8000",
        "--api-key=$(not-expanded)",
    ]
    # $(MODEL_ID) comes from the ConfigMap in the same stream; the token stays where it is written
    assert at(launch, "Qwen/Qwen3.6-27B-FP8") == (53, 16)
    assert at(launch, '{"method": "mtp", "num_speculative_tokens": 2}') == (57, 16)
    assert all(token.resolved for token in launch.argv)
    assert launch.env["VLLM_LOGGING_LEVEL"].value.value == "INFO"
    assert launch.env["PORT"].value.value == "8000"
    assert launch.env["HF_TOKEN"].value.unresolved
    assert launch.gpu is not None
    assert (launch.gpu.product, launch.gpu.count) == ("NVIDIA-H100-80GB-HBM3", 2)
    assert launch.gpu.span is not None and (launch.gpu.span.line, launch.gpu.span.column) == (43, 33)
    assert [hint.spec for hint in launch.version_hints] == ["==0.11.0"]
    assert "rendered by Helm from qwen-mtp/templates/deployment.yaml" in launch.notes
    assert any("secret hf-credentials" in note for note in launch.notes)


def test_sh_c_block_scalar_with_affinity(tmp_path: Path) -> None:
    launches, _ = extract_file(DATA / "sglang-sh-c.yaml")
    assert len(launches) == 1
    launch = launches[0]
    assert launch.engine == "sglang"
    assert [t.value for t in launch.args] == [
        "--model-path", "Qwen/Qwen3.6-35B-A3B", "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3",
        "--tp", "$(TP)", "--port", "30000",
    ]
    assert at(launch, "--speculative-num-steps") == (28, 17)
    assert at(launch, "Qwen/Qwen3.6-35B-A3B") == (26, 30)  # the $(MODEL) reference inside the block
    tp = next(token for token in launch.args if token.value == "$(TP)")
    assert not tp.resolved  # TP is not defined: kubelet leaves it, the shell then runs `TP`
    assert launch.env["SGLANG_ENABLE_SPEC_V2"].value.value == "1"
    assert launch.gpu is not None and (launch.gpu.product, launch.gpu.count) == ("nvidia-h100-80gb", 4)
    assert launch.image is not None and launch.image.value == "lmsysorg/sglang:v0.5.9-cu129"


def test_kustomize_overlay_patches_args(tmp_path: Path) -> None:
    root = DATA / "kustomize"
    launches, ctx = extract_file(root / "overlays" / "prod" / "kustomization.yaml", root)
    assert not ctx.issues.items
    assert len(launches) == 1
    launch = launches[0]
    assert [t.value for t in launch.args] == [
        "Qwen/Qwen3.6-27B", "--speculative-config", '{"method":"mtp","num_speculative_tokens":2}', "--max-num-seqs",
        "32", "--no-enable-prefix-caching",
    ]
    spec = next(t for t in launch.args if t.value.startswith("{"))
    assert spec.span is not None and spec.span.file.endswith("args-patch.yaml") and spec.span.line == 13
    appended = launch.args[-1]
    assert appended.span is not None and appended.span.file.endswith("kustomization.yaml") and appended.span.line == 21
    assert launch.image is not None and launch.image.value == "vllm/vllm-openai:v0.11.0"
    assert [hint.spec for hint in launch.version_hints] == ["==0.11.0"]
    assert launch.env["VLLM_LOGGING_LEVEL"].value.value == "DEBUG"  # configMapGenerator resolves envFrom
    assert launch.gpu is not None and (launch.gpu.product, launch.gpu.count) == ("NVIDIA-L40S", 1)
    assert launch.source.path.name == "kustomization.yaml"


def test_kustomize_base_and_patch_files(tmp_path: Path) -> None:
    root = DATA / "kustomize"
    base, _ = extract_file(root / "base" / "deployment.yaml", root)
    assert [t.value for t in base[0].args] == ["Qwen/Qwen3.6-27B", "--max-num-seqs", "64"]
    # a kustomization that changes nothing reports nothing (the manifest reports itself)
    assert extract_file(root / "base" / "kustomization.yaml", root)[0] == []
    # a patch file alone is not a deployment
    assert extract_file(root / "overlays" / "prod" / "args-patch.yaml", root)[0] == []


def test_kustomize_patches_strategic_merge_and_json6902(tmp_path: Path) -> None:
    shutil.copytree(DATA / "kustomize" / "base", tmp_path / "base")
    overlay = tmp_path / "gpu"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(
        "resources: [../base]\n"
        "patchesStrategicMerge:\n"
        "  - |-\n"
        "    apiVersion: apps/v1\n"
        "    kind: Deployment\n"
        "    metadata: {name: qwen-mtp}\n"
        "    spec:\n"
        "      template:\n"
        "        spec:\n"
        "          containers:\n"
        "            - name: vllm\n"
        "              env:\n"
        "                - {name: VLLM_USE_V1, value: '1'}\n"
        "patchesJson6902:\n"
        "  - target: {group: apps, version: v1, kind: Deployment, name: qwen-mtp}\n"
        "    path: ops.json\n",
        encoding="utf-8",
    )
    (overlay / "ops.json").write_text(
        '[{"op": "replace", "path": "/spec/template/spec/containers/0/args/2", "value": "8"},\n'
        ' {"op": "add", "path": "/spec/template/spec/containers/0/args/-", "value": "--enforce-eager"}]\n',
        encoding="utf-8",
    )
    launches, _ = extract_file(overlay / "kustomization.yaml", tmp_path)
    assert len(launches) == 1
    launch = launches[0]
    assert [t.value for t in launch.args] == ["Qwen/Qwen3.6-27B", "--max-num-seqs", "8", "--enforce-eager"]
    eight = launch.args[2]
    assert eight.span is not None and eight.span.file.endswith("ops.json") and (eight.span.line, eight.span.column) == (1, 81)
    assert launch.env["VLLM_USE_V1"].value.value == "1"
    env_span = launch.env["VLLM_USE_V1"].span
    assert env_span is not None and env_span.file.endswith("kustomization.yaml") and env_span.line == 13


def test_command_and_args_semantics(tmp_path: Path) -> None:
    launches = extract_text(
        "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\nspec:\n  jobTemplate:\n    spec:\n"
        "      template:\n        spec:\n          containers:\n"
        "            - name: a\n              image: vllm/vllm-openai:v0.11.0\n"
        "              command: [python3, -m, vllm.entrypoints.openai.api_server]\n"
        "              args: [--model, Qwen/Qwen3.6-27B]\n"
        "            - name: b\n              image: vllm/vllm-openai:v0.11.0\n"
        "              command: [python3, bench.py]\n              args: [--model, x]\n",
        tmp_path,
    )
    assert [launch.context for launch in launches] == ["CronJob/nightly container a"]
    assert launches[0].entry == "python -m vllm.entrypoints.openai.api_server"
    assert [t.value for t in launches[0].args] == ["--model", "Qwen/Qwen3.6-27B"]


def test_list_kind_and_native_sidecar(tmp_path: Path) -> None:
    launches = extract_text(
        "apiVersion: v1\nkind: List\nitems:\n"
        "  - apiVersion: v1\n    kind: Pod\n    metadata: {name: p}\n    spec:\n"
        "      initContainers:\n"
        "        - name: sidecar\n          restartPolicy: Always\n"
        "          image: ghcr.io/ggml-org/llama.cpp:server-b9200\n          args: [-m, /models/q.gguf]\n"
        "      containers:\n        - name: main\n          image: busybox\n          command: [sleep, infinity]\n",
        tmp_path,
    )
    assert [(launch.engine, launch.context) for launch in launches] == [("llama.cpp", "Pod/p container sidecar")]


def test_dollar_expansion_rules(tmp_path: Path) -> None:
    launches = extract_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: c\n"
        "      image: vllm/vllm-openai\n"
        "      env:\n        - {name: A, value: one}\n        - {name: B, value: '$(A)-two'}\n"
        "        - {name: K, valueFrom: {fieldRef: {fieldPath: metadata.name}}}\n"
        "      args: ['$(B)', '$$(A)', '$(K)', '$(MISSING)', '$(A', 'cost$5']\n",
        tmp_path,
    )
    args = launches[0].args
    assert [t.value for t in args] == ["one-two", "$(A)", "$(K)", "$(MISSING)", "$(A", "cost$5"]
    assert [t.resolved for t in args] == [True, True, False, False, True, True]


def test_not_workloads_yield_nothing(tmp_path: Path) -> None:
    assert extract_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: vllm}\ndata: {a: vllm}\n", tmp_path) == []
    assert k8s.claims([]) is False


def test_claims() -> None:
    from mtplint.extract.yamlpos import load_all

    assert k8s.claims(load_all(SourceFile.from_text("apiVersion: v1\nkind: Service\n")))
    assert k8s.claims(load_all(SourceFile.from_text("resources:\n  - ../base\npatches:\n  - path: p.yaml\n")))
    # Helm values: `resources:` is a map there
    assert not k8s.claims(load_all(SourceFile.from_text("resources:\n  limits: {nvidia.com/gpu: 1}\n")))


@pytest.mark.parametrize(
    ("selector", "product"),
    [
        ("nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}", "nvidia-l4"),
        ("affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
         "[{matchExpressions: [{key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-A10G, NVIDIA-L4]}]}]}}}", None),
        ("affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference: "
         "{matchExpressions: [{key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-L4]}]}}]}}", None),
    ],
)
def test_gpu_product_only_when_pinned(tmp_path: Path, selector: str, product: str | None) -> None:
    launches = extract_text(
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  {selector}\n  containers:\n"
        "    - name: c\n      image: vllm/vllm-openai:v0.11.0\n      args: [m]\n", tmp_path)
    hint = launches[0].gpu
    assert (hint.product if hint else None) == product


def test_inspect_sglang_statefulset(inspect: Callable[..., dict[str, Any]]) -> None:
    data = inspect({"deploy/sglang.yaml": (DATA / "sglang-sh-c.yaml").read_text(encoding="utf-8")}, "deploy")
    [launch] = data["launches"]
    assert (launch["engine"], launch["context"]) == ("sglang", "StatefulSet/sglang-mtp container server")
    assert launch["options"]["speculative_algorithm"] == "NEXTN"
    assert launch["env"]["SGLANG_ENABLE_SPEC_V2"] == "1"
    assert (launch["effective"]["gpu"]["value"], launch["effective"]["gpu"]["count"]) == ("h100-sxm", 4)


def test_inspect_kustomize_overlay(inspect: Callable[..., dict[str, Any]]) -> None:
    pytest.importorskip("mtplint.engines.vllm")
    root = DATA / "kustomize"
    files = {path.relative_to(root).as_posix(): path.read_text(encoding="utf-8")
             for path in root.rglob("*.yaml")}
    data = inspect(files, ".")
    by_file = {launch["file"]: launch for launch in data["launches"]}
    assert set(by_file) == {"base/deployment.yaml", "overlays/prod/kustomization.yaml"}
    overlay = by_file["overlays/prod/kustomization.yaml"]
    assert overlay["options"]["speculative_config"] == {"method": "mtp", "num_speculative_tokens": 2}
    assert overlay["engine_version"] == "0.11.0"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.text(alphabet="aZ0_-.*()+", max_size=6), actual=st.text(alphabet="aZ0_-.*", max_size=6))
def test_a_patch_target_name_matches_as_the_regular_expression_it_is(monkeypatch: pytest.MonkeyPatch,
                                                                      name: str, actual: str) -> None:
    # a name without regex syntax is compared as text; read as a pattern it must match the same names
    import re

    from mtplint.extract import kustomize
    from mtplint.extract.yamlpos import load

    document = load(SourceFile.from_text(f"kind: Deployment\nmetadata:\n  name: {json.dumps(actual)}\n"))
    target = load(SourceFile.from_text(f"kind: Deployment\nname: {json.dumps(name)}\n"))
    assert document is not None and target is not None
    quick = kustomize._target_matches(document, target, [])
    with monkeypatch.context() as patched:
        patched.setattr(kustomize, "_LITERAL_NAME", re.compile(r"(?!)"))  # every name read as a pattern
        assert kustomize._target_matches(document, target, []) == quick


def test_an_inline_patch_keeps_the_positions_of_the_kustomization_it_is_written_in() -> None:
    # the patch is YAML inside a block string: each of its scalars maps, character by character,
    # where the same scalar of the patch read on its own maps, carried through the block's offsets
    from mtplint.extract.kustomize import embedded_documents
    from mtplint.extract.yamlpos import YNode, load

    outer = ("patches:\n  - patch: |-\n      kind: Deployment\n      args: [\"--port\", '8000', \"a\\tb\\u00e9\"]\n"
             "      note: >\n        folded\n        text\n")
    kustomization = load(SourceFile.from_text(outer))
    assert kustomization is not None
    body = kustomization.get("patches").items[0].get("patch")  # type: ignore[union-attr]
    assert body is not None and body.text is not None
    (patch,) = embedded_documents(body)
    alone = load(SourceFile.from_text(body.text.text))
    assert alone is not None

    def scalars(node: YNode) -> list[YNode]:
        if node.is_scalar:
            return [node]
        return [leaf for child in [*node.items, *(n for pair in node.pairs for n in pair)] for leaf in scalars(child)]

    moved, read = scalars(patch), scalars(alone)
    assert len(moved) == len(read) == 8
    for node, inner in zip(moved, read, strict=True):
        assert node.text is not None and inner.text is not None and node.source is body.source
        assert node.text.text == inner.text.text
        assert list(node.text.offsets) == [body.text.offsets[offset] for offset in inner.text.offsets]
    assert outer[moved[1].text.offsets[0]:moved[1].text.offsets[-1]] == "Deployment"  # type: ignore[union-attr]


def test_a_kustomize_path_resolves_as_pathlib_resolves_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A name that climbs out of a kustomization's directory first (``../../base``) climbs from the
    directory's real path: through linked directories, to missing ones, with links after the climb."""
    from mtplint.extract.kustomize import _resolve

    (tmp_path / "real" / "overlays" / "prod").mkdir(parents=True)
    (tmp_path / "real" / "base").mkdir()
    (tmp_path / "elsewhere" / "deep").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "overlays" / "prodlink").symlink_to(tmp_path / "elsewhere" / "deep")
    (tmp_path / "real" / "baselink").symlink_to(tmp_path / "elsewhere")
    monkeypatch.chdir(tmp_path)
    loader = FileLoader(tmp_path)
    names = ["../../base", "../base", "..", "../", "../..", "../../..", "..//base", "../../base/", "../../baselink",
             "../../baselink/deep", "../../missing/x", "a/../b", "../a/../b", "./../base", "base", "/tmp/../x",
             "../../base/../baselink", "../../baselink/../base", "../" * 12 + "etc"]
    directories = [Path("real/overlays/prod"), Path("link/overlays/prod"), Path("real/overlays/prodlink"),
                   tmp_path / "link" / "overlays" / "prodlink", Path("real/overlays/missing"), Path("real/base")]
    for directory in directories:
        for name in names:
            assert _resolve(loader, str(directory), name) == str((directory / name).resolve()), (directory, name)
