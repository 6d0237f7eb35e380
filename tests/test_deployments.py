"""Realistic deployments (``tests/data/deployments``): the codes each file gets, and why.

The expected codes come from what the engine would do with the launch, as the comments say; MTP003
(an unresolved setting or no GPU identity) is left out, as it says what mtplint could not check.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli

DEPLOYMENTS = Path(__file__).parent / "data" / "deployments"

EXPECTED: dict[str, set[str]] = {
    # build.args sets VLLM_VERSION=0.30.0 over the Dockerfile's ARG default 0.27.1, and the runtime
    # stage pip-installs vllm==${VLLM_VERSION}: vLLM 0.30.0. There `qwen3_next_mtp` is a deprecated
    # alias of `mtp` (MTP401), and Qwen3-Next is a hybrid whose prefix caching is on by default
    # from 0.28, so the EAGLE-style MTP drafter drops the last cached block on every hit (MTP102;
    # 0.33's lookahead hashes are not in 0.30).
    "compose-build-args/compose.yaml": {"MTP102", "MTP401"},
    # the Dockerfile alone runs `vllm serve` with no model and no speculation: nothing to say
    "compose-build-args/docker/Dockerfile.vllm": set(),
    # `build: .` with no command: the container runs the Dockerfile's CMD on lmsysorg/sglang
    # v0.5.9. Qwen3.6 is a hybrid GDN model; NEXTN with the radix cache on and the mamba strategy
    # left at `auto` (no_buffer on 0.5.9) makes SGLang 0.5.9 silently disable the radix cache
    # (MTP111). Spec V2 is not available to hybrids on 0.5.9, so MTP103 has nothing to add. The
    # compose launch and the Dockerfile's own launch are the same words: one finding, in the
    # Dockerfile.
    "compose-build-dot/Dockerfile": {"MTP111"},
    "compose-build-dot/docker-compose.yml": set(),
    # kustomize keeps the base's container order and appends the patch's new container, so
    # containers/1 is still `vllm` when the JSON patch appends the speculative config: vLLM 0.30.0
    # (images: newTag) with `deepseek_mtp` (MTP401, deprecated alias) and prefix caching on by
    # default for DeepSeek-V3.2 with an MTP drafter before 0.33 (MTP102). The base alone runs
    # without speculation.
    "kustomize-sidecar-order/overlays/prod/kustomization.yaml": {"MTP102", "MTP401"},
    "kustomize-sidecar-order/base/deployment.yaml": set(),
    # `:latest` is the newest release (0.33.0 here) or later: `qwen3_5_mtp` is a deprecated alias
    # (MTP401); 0.33 keeps the last cached block with lookahead hashes, so no MTP102. The node
    # selector names an H100, and vLLM's default of 1024 sequences is far above where MTP with
    # k=2 still pays on it (MTP301, info with the latency objective).
    "k8s-latest-tag/qwen36-27b.yaml": {"MTP301", "MTP401"},
    # SGLang 0.5.10: NEXTN with topk 1 and SGLANG_ENABLE_SPEC_V2 unset runs the V1 worker without
    # the overlap scheduler (MTP103); hybrid Qwen3.6 with the radix cache on and mamba strategy
    # `auto` -> no_buffer makes 0.5.10 refuse to start (MTP111).
    "k8s-sglang-statefulset/statefulset.yaml": {"MTP103", "MTP111"},
    # `server-cuda` follows the newest llama.cpp build: `--spec-type mtp` is not an upstream name
    # (MTP404: `draft-mtp`) and `--draft-max` was removed in b8955 and now stops startup (MTP403).
    "dockerfile-llamacpp-floating/Dockerfile": {"MTP403", "MTP404"},
    # the build context's requirements.txt pins vllm>=0.20.0,<0.28; the dotted
    # --speculative-config.num_speculative_tokens replaces the JSON given before it instead of
    # merging (MTP106). Before 0.28 Qwen3.6's prefix caching is off by default: no MTP102.
    "compose-build-requirements/compose.yaml": {"MTP106"},
    # `target: vllm` builds FROM vllm/vllm-openai:${VLLM_TAG} = v0.28.0, whose entrypoint is
    # `vllm serve`. From 0.28 hybrid Qwen3.6 has prefix caching on by default, which with chunked
    # prefill off fails an assertion at startup (MTP110), and drops the last cached block with an
    # MTP drafter (MTP102).
    "compose-build-target/compose.yaml": {"MTP102", "MTP110"},
    # nothing pins vLLM (the virtualenv's pyproject asks for any release): Qwen3-Next runs on
    # 0.10.2 or later, where prefix caching for hybrids is off before 0.28 and on from it, so
    # MTP102 cannot decide and MTP004 says so; `qwen3_next_mtp` is a deprecated alias (MTP401).
    "venv-script-unpinned/scripts/serve_qwen_next.sh": {"MTP004", "MTP401"},
    # vLLM 0.11.0 rejects the pre-0.8.3 speculative flags (MTP402, one per flag); VLLM_USE_V1 is
    # still read by 0.11.0 (removed in 0.11.1), so no MTP405. The image runs `vllm serve`, whose
    # argument check in 0.8.3-0.11.0 (FlexibleArgumentParser.parse_args) exits on `--model`: MTP509.
    "k8s-legacy-flags/deployment.yaml": {"MTP402", "MTP509"},
}


@pytest.fixture(scope="module")
def reported() -> dict[str, set[str]]:
    code, out, err = run_cli(["check", "--output-format", "json", "--isolated", "--no-cache", "--ignore", "MTP003",
                              "."], cwd=DEPLOYMENTS)
    assert code in (0, 1), err
    found: dict[str, set[str]] = {}
    for finding in json.loads(out):
        found.setdefault(finding["filename"], set()).add(finding["code"])
    return found


def test_there_are_enough_deployments() -> None:
    assert len({path.split("/")[0] for path in EXPECTED}) >= 10


@pytest.mark.parametrize("path", sorted(EXPECTED))
def test_deployment_gets_the_codes_the_engine_behaviour_calls_for(path: str, reported: dict[str, set[str]]) -> None:
    assert reported.get(path, set()) == EXPECTED[path]


def test_no_other_file_gets_findings(reported: dict[str, set[str]]) -> None:
    assert set(reported) <= set(EXPECTED)
