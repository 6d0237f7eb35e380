"""Generate a synthetic monorepo for benchmarking mtplint (deterministic for a given seed).

About 70% of the files are the kind of thing mtplint must skip quickly: Python/JS/Go sources,
Markdown docs and READMEs, GitHub workflows, Helm values, generic YAML and JSON configs, and a few
build scripts. About 30% are deployment files of every kind mtplint reads -- docker compose (with
``.env`` files), shell launch scripts, Kubernetes Deployments, kustomize overlays, Dockerfiles,
systemd units, Python ``LLM(...)`` scripts, llama-swap configs and llama-server preset INI files --
for vLLM, SGLang and llama.cpp, some with MTP/speculative settings (and known problems: deprecated
method aliases, removed flags, too many draft tokens, TurboQuant KV with MTP, ...), some without.

File sizes follow a log-normal distribution (a few hundred bytes to tens of KB), roughly what a real
repository holds. A root ``.gitignore`` is written, plus a few files it ignores (not counted in N).

With ``--deployment-only`` every file is a deployment file (the tree of the files mtplint lints).

    python bench/generate.py --files 10000 --seed 7 /tmp/tree
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

DEFAULT_FILES = 10_000
DEFAULT_SEED = 20261122
DEPLOYMENT_SHARE = 0.30

WORDS = ["alpha", "account", "api", "audit", "auth", "batch", "billing", "cache", "catalog", "chat", "checkout", "config", "core", "data", "deploy", "edge", "embed", "event", "feed", "file", "gateway", "graph", "health", "index", "ingest", "inventory", "job", "ledger", "log", "mail", "metric", "model", "notify", "order", "payment", "pipeline", "policy", "profile", "proxy", "queue", "rank", "report", "router", "runner", "search", "session", "shard", "store", "stream", "sync", "task", "tenant", "token", "trace", "user", "vector", "worker"]

HF_MODELS = (
    "Qwen/Qwen3.6-27B-FP8", "Qwen/Qwen3.6-27B", "Qwen/Qwen3.6-35B-A3B", "Qwen/Qwen3-Next-80B-A3B-Instruct",
    "deepseek-ai/DeepSeek-V3.2", "zai-org/GLM-4.6-FP8", "XiaomiMiMo/MiMo-7B-RL", "meta-llama/Llama-3.1-8B-Instruct",
    "Qwen/Qwen3-8B", "moonshotai/Kimi-K2-Instruct",
)
GGUF_MODELS = (
    "Qwen3.6-27B-MTP-Q4_K_M.gguf", "Qwen3.6-35B-A3B-MTP-Q4_K_M.gguf", "Qwen3-8B-Q6_K.gguf",
    "gemma-3-27b-it-Q4_K_M.gguf", "GLM-4.7-Flash-Q4_K_M.gguf", "Llama-3.1-8B-Instruct-Q5_K_M.gguf",
)
VLLM_TAGS = ("v0.10.2", "v0.11.0", "v0.11.2", "v0.28.0", "v0.30.0", "v0.32.0", "v0.33.1", "latest")
SGLANG_TAGS = ("v0.5.4-cu126", "v0.5.9-cu129", "v0.5.10-cu129", "latest")
LLAMA_TAGS = ("server-cuda", "server-cuda-b8955", "server-cuda-b10454", "server")
GPU_PRODUCTS = (
    "NVIDIA-H100-80GB-HBM3", "NVIDIA-H200", "NVIDIA-L40S", "NVIDIA-A100-SXM4-80GB", "NVIDIA-GeForce-RTX-4090",
    "NVIDIA-L4", "NVIDIA-B200",
)
GPU_DIRECTIVES = ("rtx-4090", "rtx-5090", "rtx-3090", "h100-sxm", "h200", "l40s", "a100-80g", "h100-sxmx4", "b200x8")
VLLM_METHODS = ("mtp", "mtp", "mtp", "qwen3_next_mtp", "deepseek_mtp", "eagle3", "ngram")


class Tree:
    """Files to write, by relative path; paths are made unique with a counter."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.files: dict[str, str] = {}
        self.kinds: Counter[str] = Counter()
        self._serial = 0

    def serial(self) -> int:
        self._serial += 1
        return self._serial

    def name(self) -> str:
        return f"{self.rng.choice(WORDS)}-{self.rng.choice(WORDS)}-{self.serial():05d}"

    def add(self, path: str, text: str, kind: str) -> None:
        assert path not in self.files, path
        self.files[path] = text
        self.kinds[kind] += 1


def target_size(rng: random.Random, median: int, sigma: float = 1.0, low: int = 200, high: int = 60_000) -> int:
    return int(min(high, max(low, median * math.exp(rng.gauss(0.0, sigma)))))


def ident(rng: random.Random) -> str:
    return f"{rng.choice(WORDS)}_{rng.choice(WORDS)}"


# ----------------------------------------------------------------------------------- unrelated


def python_source(rng: random.Random) -> str:
    size = target_size(rng, 3000)
    parts = ['"""' + f"{rng.choice(WORDS).title()} {rng.choice(WORDS)} helpers." + '"""\n\nfrom __future__ import annotations\n\n'
             "import logging\nfrom dataclasses import dataclass\n\nlog = logging.getLogger(__name__)\n"]
    total = len(parts[0])
    while total < size:
        name = ident(rng)
        if rng.random() < 0.3:
            block = (f"\n\n@dataclass\nclass {name.title().replace('_', '')}:\n"
                     f"    {ident(rng)}: int = {rng.randint(0, 999)}\n    {ident(rng)}: str = \"{rng.choice(WORDS)}\"\n"
                     f"\n    def total(self) -> int:\n        return self.{ident(rng)} if False else {rng.randint(1, 9)}\n")
        else:
            arg = ident(rng)
            block = (f"\n\ndef {name}({arg}: list[int], limit: int = {rng.randint(1, 500)}) -> int:\n"
                     f'    """Sum the first ``limit`` values of ``{arg}``."""\n'
                     f"    result = 0\n    for index, value in enumerate({arg}):\n        if index >= limit:\n"
                     f"            break\n        result += value * {rng.randint(1, 9)}\n"
                     f"    log.debug(\"{name}: %d\", result)\n    return result\n")
        parts.append(block)
        total += len(block)
    return "".join(parts)


def js_source(rng: random.Random) -> str:
    size = target_size(rng, 2500)
    parts = [f"import {{ {rng.choice(WORDS)} }} from './{rng.choice(WORDS)}.js';\n\n"]
    total = len(parts[0])
    while total < size:
        name = rng.choice(WORDS) + rng.choice(WORDS).title()
        block = (f"export async function {name}(request, options = {{}}) {{\n"
                 f"  const limit = options.limit ?? {rng.randint(1, 100)};\n"
                 f"  const response = await fetch(`/api/{rng.choice(WORDS)}?limit=${{limit}}`);\n"
                 f"  if (!response.ok) {{\n    throw new Error('{name} failed: ' + response.status);\n  }}\n"
                 f"  return (await response.json()).items.slice(0, limit);\n}}\n\n")
        parts.append(block)
        total += len(block)
    return "".join(parts)


def go_source(rng: random.Random) -> str:
    size = target_size(rng, 3500)
    parts = [f"package {rng.choice(WORDS)}\n\nimport (\n\t\"context\"\n\t\"fmt\"\n)\n\n"]
    total = len(parts[0])
    while total < size:
        name = rng.choice(WORDS).title() + rng.choice(WORDS).title()
        block = (f"// {name} loads the {rng.choice(WORDS)} records for a tenant.\n"
                 f"func {name}(ctx context.Context, id string, limit int) ([]string, error) {{\n"
                 f"\tif limit <= 0 {{\n\t\treturn nil, fmt.Errorf(\"{name}: bad limit %d\", limit)\n\t}}\n"
                 f"\tout := make([]string, 0, limit)\n\tfor i := 0; i < limit; i++ {{\n"
                 f"\t\tout = append(out, fmt.Sprintf(\"%s-%d\", id, i*{rng.randint(1, 9)}))\n\t}}\n\treturn out, nil\n}}\n\n")
        parts.append(block)
        total += len(block)
    return "".join(parts)


def markdown_doc(rng: random.Random, title: str) -> str:
    size = target_size(rng, 4000)
    parts = [f"# {title}\n\n"]
    total = len(parts[0])
    while total < size:
        roll = rng.random()
        if roll < 0.15:
            block = f"## {rng.choice(WORDS).title()} {rng.choice(WORDS)}\n\n"
        elif roll < 0.3:
            block = (f"```bash\nmake {rng.choice(WORDS)}\n./scripts/{rng.choice(WORDS)}.sh --env staging\n```\n\n")
        elif roll < 0.33:
            # docs talk about the inference stack too; mentions like this reach the prefilter
            block = ("The chat service calls the internal inference endpoint (vLLM behind the gateway); "
                     "see the platform runbook for speculative decoding settings.\n\n")
        else:
            block = " ".join(rng.choice(WORDS) for _ in range(rng.randint(30, 90))).capitalize() + ".\n\n"
        parts.append(block)
        total += len(block)
    return "".join(parts)


def github_workflow(rng: random.Random) -> str:
    jobs = []
    for _ in range(rng.randint(1, 4)):
        job = rng.choice(WORDS)
        jobs.append(f"""  {job}-{rng.randint(1, 99)}:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python: ["3.10", "3.11", "3.12"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{{{ matrix.python }}}}
      - name: Install
        run: |
          python -m pip install --upgrade pip
          pip install -e '.[test]'
      - name: Test {job}
        run: pytest -q tests/{job}
""")
    return (f"name: {rng.choice(WORDS)}-ci\n\non:\n  push:\n    branches: [main]\n  pull_request:\n\n"
            "permissions:\n  contents: read\n\njobs:\n" + "".join(jobs))


def helm_values(rng: random.Random) -> str:
    size = target_size(rng, 2500)
    parts = [f"# Default values for {rng.choice(WORDS)}.\nreplicaCount: {rng.randint(1, 5)}\n\nimage:\n"
             f"  repository: ghcr.io/acme/{rng.choice(WORDS)}\n  pullPolicy: IfNotPresent\n  tag: \"\"\n\n"
             "service:\n  type: ClusterIP\n  port: 80\n\n"]
    total = len(parts[0])
    while total < size:
        key = rng.choice(WORDS)
        block = (f"{key}{rng.randint(1, 999)}:\n  enabled: {rng.choice(['true', 'false'])}\n"
                 f"  resources:\n    limits:\n      cpu: {rng.randint(1, 8)}\n      memory: {rng.choice([256, 512, 1024])}Mi\n"
                 f"  annotations:\n    prometheus.io/scrape: \"true\"\n    prometheus.io/port: \"{rng.randint(8000, 9999)}\"\n")
        parts.append(block)
        total += len(block)
    return "".join(parts)


def generic_yaml(rng: random.Random) -> str:
    size = target_size(rng, 2000, sigma=1.2)
    if rng.random() < 0.3:
        # an OpenAPI-ish spec: the big YAML files of a repository
        parts = [f"openapi: 3.0.3\ninfo:\n  title: {rng.choice(WORDS)} API\n  version: 1.{rng.randint(0, 9)}.0\npaths:\n"]
        total = len(parts[0])
        while total < size:
            resource = rng.choice(WORDS)
            block = (f"  /{resource}/{{id}}/{rng.choice(WORDS)}{rng.randint(1, 999)}:\n    get:\n"
                     f"      summary: Get a {resource}\n      parameters:\n        - name: id\n          in: path\n"
                     f"          required: true\n          schema:\n            type: string\n      responses:\n"
                     f"        \"200\":\n          description: OK\n          content:\n            application/json:\n"
                     f"              schema:\n                $ref: '#/components/schemas/{resource.title()}'\n")
            parts.append(block)
            total += len(block)
        return "".join(parts)
    parts = [f"# {rng.choice(WORDS)} service configuration\n"]
    total = len(parts[0])
    while total < size:
        section = f"{rng.choice(WORDS)}_{rng.randint(1, 999)}"
        block = (f"{section}:\n  host: {rng.choice(WORDS)}.internal\n  port: {rng.randint(1000, 65000)}\n"
                 f"  timeout_seconds: {rng.randint(1, 120)}\n  retries: {rng.randint(0, 5)}\n"
                 f"  tags: [{rng.choice(WORDS)}, {rng.choice(WORDS)}]\n")
        if rng.random() < 0.03:
            block += "  smtp_host: smtp.example.com\n"  # "smtp" passes the byte prefilter ("mtp")
        parts.append(block)
        total += len(block)
    return "".join(parts)


def json_config(rng: random.Random) -> str:
    if rng.random() < 0.5:
        data: object = {"name": f"@acme/{rng.choice(WORDS)}", "version": f"1.{rng.randint(0, 20)}.0", "private": True,
                        "scripts": {"build": "tsc -p .", "test": "vitest run"},
                        "dependencies": {rng.choice(WORDS): f"^{rng.randint(1, 9)}.0.0" for _ in range(rng.randint(2, 12))}}
    else:
        count = target_size(rng, 3000, sigma=1.2) // 80
        data = [{"id": i, "name": ident(rng), "score": rng.random(), "active": rng.random() < 0.5} for i in range(count)]
    return json.dumps(data, indent=2) + "\n"


def build_script(rng: random.Random) -> str:
    target = rng.choice(WORDS)
    return f"""#!/usr/bin/env bash
# Build and push the {target} image.
set -euo pipefail

REGISTRY="${{REGISTRY:-ghcr.io/acme}}"
TAG="${{1:-$(git rev-parse --short HEAD)}}"

cd "$(dirname "$0")/.."
docker build -t "$REGISTRY/{target}:$TAG" -f services/{target}/Dockerfile .
if [[ "${{PUSH:-0}}" == "1" ]]; then
  docker push "$REGISTRY/{target}:$TAG"
fi
for file in dist/*.tar.gz; do
  echo "artifact: $file"
done
"""


# ---------------------------------------------------------------------------------- deployment


def _speculative(rng: random.Random) -> bool:
    return rng.random() < 0.6


def vllm_flags(rng: random.Random, spec: bool, quote_json: bool = True) -> list[str]:
    flags = [f"--max-model-len {rng.choice([8192, 32768, 65536, 131072])}",
             f"--gpu-memory-utilization {rng.choice(['0.85', '0.9', '0.92', '0.95'])}",
             f"--max-num-seqs {rng.choice([8, 16, 64, 128, 256])}"]
    if rng.random() < 0.4:
        flags.append(f"--tensor-parallel-size {rng.choice([1, 2, 4, 8])}")
    if spec:
        payload = json.dumps({"method": rng.choice(VLLM_METHODS), "num_speculative_tokens": rng.randint(1, 5)})
        flags.append(f"--speculative-config '{payload}'" if quote_json else f"--speculative-config {payload}")
        if rng.random() < 0.2:
            flags.append("--kv-cache-dtype turboquant_4bit_nc")  # MTP101 material
        if rng.random() < 0.15:
            flags.append("--no-enable-chunked-prefill")
    if rng.random() < 0.3:
        flags.append(rng.choice(["--enable-prefix-caching", "--reasoning-parser qwen3", "--enable-auto-tool-choice --tool-call-parser hermes"]))
    return flags


def compose_vllm(rng: random.Random, spec: bool) -> tuple[str, str]:
    model = rng.choice(HF_MODELS)
    flags = "\n      ".join(vllm_flags(rng, spec))
    directive = f"# mtplint: gpu={rng.choice(GPU_DIRECTIVES)}\n" if rng.random() < 0.4 else ""
    text = f"""# {model} on vLLM{' with MTP' if spec else ''}
{directive}x-hf-cache: &hf-cache
  HF_HOME: /models/hf
  HF_HUB_ENABLE_HF_TRANSFER: "1"

services:
  vllm:
    image: vllm/vllm-openai:${{VLLM_TAG:-{rng.choice(VLLM_TAGS)}}}
    ipc: host
    env_file: .env
    ports:
      - "8000:8000"
    volumes:
      - ${{MODELS_DIR:-/srv/models}}:/models
    environment:
      <<: *hf-cache
      VLLM_LOGGING_LEVEL: INFO{chr(10) + '      VLLM_USE_V1: "1"' if rng.random() < 0.2 else ''}
    command: >
      ${{MODEL:-{model}}}
      {flags}
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: {rng.choice([1, 1, 2, 4])}
              capabilities: [gpu]
  gateway:
    image: nginx:1.27
    ports: ["80:80"]
    depends_on: [vllm]
"""
    env = f"VLLM_TAG={rng.choice(VLLM_TAGS)}\nMODELS_DIR=/data/models\nHF_TOKEN=hf_xxx\n"
    return text, env


def compose_sglang(rng: random.Random, spec: bool) -> tuple[str, str]:
    model = rng.choice(HF_MODELS)
    args = ["python3", "-m", "sglang.launch_server", "--model-path", model,
            "--mem-fraction-static", rng.choice(["0.8", "0.85", "0.9"]), "--host", "0.0.0.0", "--port", "30000"]
    if spec:
        args += ["--speculative-algo", rng.choice(["NEXTN", "EAGLE", "NEXTN"]), "--speculative-num-steps", str(rng.randint(1, 4)),
                 "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", str(rng.randint(2, 5))]
    if rng.random() < 0.3:
        args += ["--tp", str(rng.choice([2, 4, 8]))]
    command = "\n".join(f"      - {json.dumps(a) if a[0].isdigit() or a == '0.0.0.0' else a}" for a in args)
    text = f"""services:
  sglang:
    image: lmsysorg/sglang:{rng.choice(SGLANG_TAGS)}
    shm_size: 32g
    ipc: host
    env_file: .env
    command:
{command}
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              device_ids: ["0"]
              capabilities: [gpu]
"""
    env = "HF_TOKEN=hf_xxx\nSGLANG_LOG_LEVEL=info\n" + ("SGLANG_ENABLE_SPEC_V2=1\n" if rng.random() < 0.5 else "")
    return text, env


def compose_llamacpp(rng: random.Random, spec: bool) -> tuple[str, str]:
    gguf = rng.choice(GGUF_MODELS)
    extra = ""
    if spec:
        extra = rng.choice(["--spec-type draft-mtp --spec-draft-n-max 2", "--spec-type mtp --draft-max 6",
                            "--spec-type draft-mtp --spec-draft-n-max 4"])
    text = f"""services:
  llama:
    image: ghcr.io/ggml-org/llama.cpp:{rng.choice(LLAMA_TAGS)}
    restart: unless-stopped
    ports:
      - "${{LLAMA_PORT:-8080}}:8080"
    volumes:
      - ./models:/models
    environment:
      LLAMA_ARG_CTX_SIZE: "${{CTX:-32768}}"
      LLAMA_ARG_N_GPU_LAYERS: "99"
    command: >
      -m /models/{gguf}
      -fa on --jinja {extra}
      --host 0.0.0.0 --port 8080
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: all
              capabilities: [gpu]
"""
    return text, "CTX=65536\nLLAMA_PORT=8081\n"


def compose_unrelated(rng: random.Random, spec: bool) -> tuple[str, str]:
    del spec
    text = f"""services:
  db:
    image: postgres:16
    environment:
      POSTGRES_PASSWORD: ${{POSTGRES_PASSWORD:-postgres}}
    volumes: [pgdata:/var/lib/postgresql/data]
  cache:
    image: redis:7
  {rng.choice(WORDS)}:
    build: .
    command: ["gunicorn", "-w", "4", "app:app", "--bind", "0.0.0.0:8000"]
    depends_on: [db, cache]
volumes:
  pgdata: {{}}
"""
    return text, "POSTGRES_PASSWORD=secret\n"


def shell_launch(rng: random.Random, spec: bool) -> str:
    engine = rng.choice(["vllm", "vllm", "sglang", "llama", "docker"])
    head = "#!/usr/bin/env bash\n# Start the inference server.\nset -euo pipefail\n\n"
    if rng.random() < 0.3:
        head += f"# mtplint: gpu={rng.choice(GPU_DIRECTIVES)}\n"
    if engine == "vllm":
        model = rng.choice(HF_MODELS)
        lines = [f'vllm serve "${{MODEL:-{model}}}"', *vllm_flags(rng, spec), '--port "${PORT:-8000}" "$@"']
        return head + f"export VLLM_LOGGING_LEVEL=${{LOG_LEVEL:-INFO}}\nNUM_SPEC={rng.randint(1, 4)}\n\n" + " \\\n  ".join(lines) + "\n"
    if engine == "sglang":
        lines = ["exec python3 -m sglang.launch_server", f"--model-path {rng.choice(HF_MODELS)}",
                 f"--mem-fraction-static {rng.choice(['0.8', '0.9'])}", "--port 30000"]
        if spec:
            lines += ["--speculative-algorithm NEXTN", f"--speculative-num-steps {rng.randint(1, 4)}",
                      "--speculative-eagle-topk 1", f"--speculative-num-draft-tokens {rng.randint(2, 5)}"]
        return head + "export SGLANG_ENABLE_SPEC_V2=${SGLANG_ENABLE_SPEC_V2:-1}\n\n" + " \\\n  ".join(lines) + "\n"
    if engine == "llama":
        lines = ["exec llama-server", f"-m \"$MODEL_DIR/{rng.choice(GGUF_MODELS)}\"", "-ngl 99 -fa on", "-c \"$CTX\""]
        if spec:
            lines.append(rng.choice(["--spec-type draft-mtp --spec-draft-n-max 3", "--spec-type mtp --draft-max 6"]))
        lines.append("--host 0.0.0.0 --port 8080")
        return head + "MODEL_DIR=\"${MODEL_DIR:-/models}\"\nCTX=32768\n\n" + " \\\n  ".join(lines) + "\n"
    flags = " \\\n  ".join(vllm_flags(rng, spec))
    return head + f"""docker run --rm --gpus all --ipc=host \\
  -v "${{HOME}}/.cache/huggingface:/root/.cache/huggingface" \\
  -p 8000:8000 \\
  vllm/vllm-openai:{rng.choice(VLLM_TAGS)} \\
  --model {rng.choice(HF_MODELS)} \\
  {flags}
"""


def k8s_deployment(rng: random.Random, spec: bool, name: str) -> str:
    if rng.random() < 0.25:
        return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: {rng.randint(1, 6)}
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      containers:
        - name: web
          image: ghcr.io/acme/{name}:1.{rng.randint(0, 40)}.0
          ports: [{{containerPort: 8080}}]
          resources:
            limits: {{cpu: "1", memory: 512Mi}}
---
apiVersion: v1
kind: Service
metadata:
  name: {name}
spec:
  selector: {{app: {name}}}
  ports: [{{port: 80, targetPort: 8080}}]
"""
    model = rng.choice(HF_MODELS)
    args = [model, "--gpu-memory-utilization", rng.choice(["0.85", "0.9"]), "--max-num-seqs", str(rng.choice([32, 64, 128]))]
    if spec:
        args += ["--speculative-config", json.dumps({"method": rng.choice(VLLM_METHODS), "num_speculative_tokens": rng.randint(1, 4)})]
    gpus = rng.choice([1, 2, 4, 8])
    if gpus > 1:
        args += ["--tensor-parallel-size", str(gpus)]
    rendered = "\n".join(f"            - {json.dumps(a) if a[:1].isdigit() else (repr(a) if a.startswith('{') else a)}" for a in args)
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  labels:
    app: {name}
spec:
  replicas: 1
  selector:
    matchLabels:
      app: {name}
  template:
    metadata:
      labels:
        app: {name}
    spec:
      nodeSelector:
        nvidia.com/gpu.product: {rng.choice(GPU_PRODUCTS)}
      containers:
        - name: vllm
          image: vllm/vllm-openai:{rng.choice(VLLM_TAGS)}
          args:
{rendered}
          env:
            - name: HF_TOKEN
              valueFrom:
                secretKeyRef: {{name: hf-token, key: token}}
          ports:
            - containerPort: 8000
          resources:
            limits:
              nvidia.com/gpu: {gpus}
"""


def kustomize_overlay(rng: random.Random, spec: bool, name: str) -> dict[str, str]:
    base = f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:{rng.choice(VLLM_TAGS)}
          args: ["{rng.choice(HF_MODELS)}", "--max-num-seqs", "64"]
          resources:
            limits:
              nvidia.com/gpu: 1
"""
    tokens = rng.randint(1, 4)
    patch_args = '\n            - --speculative-config\n            - \'{"method":"mtp","num_speculative_tokens":' + str(tokens) + "}'" if spec else ""
    return {
        "base/deployment.yaml": base,
        "base/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - deployment.yaml\n",
        "overlays/prod/args-patch.yaml": f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  template:
    spec:
      containers:
        - name: vllm
          args:
            - {rng.choice(HF_MODELS)}{patch_args}
            - --max-num-seqs
            - "32"
""",
        "overlays/prod/kustomization.yaml": f"""apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: prod
resources:
  - ../../base
images:
  - name: vllm/vllm-openai
    newTag: {rng.choice(VLLM_TAGS)}
patches:
  - path: args-patch.yaml
  - target:
      kind: Deployment
      name: {name}
    patch: |-
      - op: add
        path: /spec/template/spec/nodeSelector
        value:
          nvidia.com/gpu.product: {rng.choice(GPU_PRODUCTS)}
""",
    }


def dockerfile(rng: random.Random, spec: bool) -> str:
    roll = rng.random()
    if roll < 0.35:
        return f"""FROM node:22-alpine AS build
WORKDIR /app
COPY package*.json ./
RUN npm ci
COPY . .
RUN npm run build

FROM node:22-alpine
WORKDIR /app
COPY --from=build /app/dist ./dist
EXPOSE {rng.randint(3000, 9000)}
CMD ["node", "dist/server.js"]
"""
    if roll < 0.75:
        cmd = ", ".join(json.dumps(a) for a in ["--model", rng.choice(HF_MODELS), "--max-num-seqs", str(rng.choice([16, 64]))])
        spec_line = ""
        if spec:
            payload = json.dumps({"method": rng.choice(VLLM_METHODS), "num_speculative_tokens": rng.randint(1, 4)})
            spec_line = ", " + json.dumps("--speculative-config") + ", " + json.dumps(payload)
        return f"""FROM vllm/vllm-openai:{rng.choice(VLLM_TAGS)}
ENV HF_HOME=/models/hf \\
    VLLM_LOGGING_LEVEL=INFO
RUN pip install --no-cache-dir hf_transfer
CMD [{cmd}{spec_line}]
"""
    extra = " --spec-type draft-mtp --spec-draft-n-max 2" if spec else ""
    return f"""FROM ghcr.io/ggml-org/llama.cpp:{rng.choice(LLAMA_TAGS)}
COPY models/{rng.choice(GGUF_MODELS)} /models/model.gguf
ENV LLAMA_ARG_HOST=0.0.0.0 LLAMA_ARG_PORT=8080
ENTRYPOINT ["/app/llama-server"]
CMD ["-m", "/models/model.gguf", "-ngl", "99"{', ' + ', '.join(json.dumps(w) for w in extra.split()) if extra else ''}]
"""


def systemd_unit(rng: random.Random, spec: bool) -> str:
    if rng.random() < 0.3:
        return f"""[Unit]
Description={rng.choice(WORDS)} worker
After=network-online.target

[Service]
ExecStart=/usr/bin/python3 -m {rng.choice(WORDS)}.worker --queue default
Restart=on-failure

[Install]
WantedBy=multi-user.target
"""
    extra = "    --spec-type draft-mtp --spec-draft-n-max 3 \\\n" if spec else ""
    return f"""[Unit]
Description=llama.cpp server
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
User=llama
Environment=LLAMA_ARG_CTX_SIZE={rng.choice([8192, 16384, 32768])}
Environment="LLAMA_ARG_N_GPU_LAYERS=99" "LLAMA_ARG_HOST=127.0.0.1"
ExecStart=/usr/local/bin/llama-server \\
    -m /var/lib/llama/models/{rng.choice(GGUF_MODELS)} \\
{extra}    --port {rng.randint(8080, 8099)} \\
    --parallel {rng.choice([1, 2, 4])} \\
    --jinja
Restart=on-failure

[Install]
WantedBy=multi-user.target
"""


def python_llm(rng: random.Random, spec: bool) -> str:
    spec_line = ""
    if spec:
        spec_line = f"    speculative_config={{\"method\": \"{rng.choice(VLLM_METHODS)}\", \"num_speculative_tokens\": {rng.randint(1, 5)}}},\n"
    directive = f"# mtplint: gpu={rng.choice(GPU_DIRECTIVES)}\n" if rng.random() < 0.4 else ""
    return f'''"""Offline batch generation for the {rng.choice(WORDS)} pipeline."""
{directive}
import json
import sys

from vllm import LLM, SamplingParams

MODEL = "{rng.choice(HF_MODELS)}"

llm = LLM(
    model=MODEL,
    tensor_parallel_size={rng.choice([1, 2, 4])},
{spec_line}    max_num_seqs={rng.choice([16, 64, 128])},
    gpu_memory_utilization={rng.choice([0.85, 0.9])},
)


def main(path: str) -> None:
    prompts = [json.loads(line)["prompt"] for line in open(path, encoding="utf-8")]
    for output in llm.generate(prompts, SamplingParams(max_tokens={rng.choice([64, 256, 1024])})):
        print(output.outputs[0].text)


if __name__ == "__main__":
    main(sys.argv[1])
'''


def llama_swap(rng: random.Random, spec: bool) -> str:
    models = []
    for _ in range(rng.randint(2, 5)):
        gguf = rng.choice(GGUF_MODELS)
        extra = "\n      --spec-type draft-mtp --spec-draft-n-max 2" if spec and "MTP" in gguf else ""
        models.append(f"""  "{gguf.split('-Q')[0].lower()}-{rng.randint(1, 999)}":
    cmd: |
      ${{server}}
      -m ${{models}}/{gguf}
      -c {rng.choice([8192, 16384, 32768])}{extra}
    ttl: {rng.choice([300, 600, 1800])}
""")
    return f"""# llama-swap: one model loaded at a time
healthCheckTimeout: 300
logLevel: info

macros:
  "server": >
    /app/llama-server
    --host 127.0.0.1 --port ${{PORT}}
    -ngl 99 -fa on --jinja
  "models": /models

models:
{''.join(models)}"""


def llama_preset(rng: random.Random, spec: bool) -> str:
    sections = []
    for _ in range(rng.randint(1, 4)):
        gguf = rng.choice(GGUF_MODELS)
        lines = [f"[{gguf.removesuffix('.gguf').lower()}-{rng.randint(1, 999)}]", f"model = /models/{gguf}",
                 f"c = {rng.choice([16384, 32768, 65536])}"]
        if spec:
            lines += ["spec-type = draft-mtp   ; the MTP head is inside the GGUF", f"spec-draft-n-max = {rng.randint(1, 4)}"]
        sections.append("\n".join(lines) + "\n")
    return "version = 1\n\n; shared by every model\n[*]\nn-gpu-layers = 99\nLLAMA_ARG_FLASH_ATTN = on\n\n" + "\n".join(sections)


# ---------------------------------------------------------------------------------- the tree

Maker = Callable[[Tree], int]


def _service_dir(tree: Tree) -> str:
    return f"services/{tree.name()}"


def _unrelated_makers() -> list[tuple[float, Maker]]:
    def py(tree: Tree) -> int:
        tree.add(f"packages/{tree.name()}/src/{ident(tree.rng)}.py", python_source(tree.rng), "python-source")
        return 1

    def js(tree: Tree) -> int:
        tree.add(f"web/{tree.name()}/src/{tree.rng.choice(WORDS)}.js", js_source(tree.rng), "js-source")
        return 1

    def go(tree: Tree) -> int:
        tree.add(f"cmd/{tree.name()}/main.go", go_source(tree.rng), "go-source")
        return 1

    def md(tree: Tree) -> int:
        tree.add(f"docs/{tree.rng.choice(WORDS)}/{tree.name()}.md", markdown_doc(tree.rng, tree.rng.choice(WORDS).title()), "markdown")
        return 1

    def readme(tree: Tree) -> int:
        tree.add(f"packages/{tree.name()}/README.md", markdown_doc(tree.rng, "Overview"), "readme")
        return 1

    def ci(tree: Tree) -> int:
        tree.add(f".github/workflows/{tree.name()}.yml", github_workflow(tree.rng), "ci-yaml")
        return 1

    def helm(tree: Tree) -> int:
        tree.add(f"charts/{tree.name()}/values.yaml", helm_values(tree.rng), "helm-values")
        return 1

    def yml(tree: Tree) -> int:
        tree.add(f"config/{tree.rng.choice(WORDS)}/{tree.name()}.yaml", generic_yaml(tree.rng), "generic-yaml")
        return 1

    def js_conf(tree: Tree) -> int:
        tree.add(f"config/{tree.rng.choice(WORDS)}/{tree.name()}.json", json_config(tree.rng), "json")
        return 1

    def script(tree: Tree) -> int:
        tree.add(f"scripts/build-{tree.name()}.sh", build_script(tree.rng), "build-script")
        return 1

    return [(0.25, py), (0.13, js), (0.10, go), (0.13, md), (0.05, readme), (0.05, ci), (0.06, helm),
            (0.11, yml), (0.09, js_conf), (0.03, script)]


def _deployment_makers() -> list[tuple[float, Maker]]:
    def compose(tree: Tree) -> int:
        rng = tree.rng
        make = rng.choice([compose_vllm, compose_vllm, compose_sglang, compose_llamacpp, compose_unrelated])
        text, env = make(rng, _speculative(rng))
        base = f"deploy/{tree.name()}"
        tree.add(f"{base}/{rng.choice(['compose.yaml', 'docker-compose.yml', 'compose.yml'])}", text, "compose")
        tree.add(f"{base}/.env", env, "dotenv")
        return 2

    def shell(tree: Tree) -> int:
        tree.add(f"{_service_dir(tree)}/serve.sh", shell_launch(tree.rng, _speculative(tree.rng)), "shell-launch")
        return 1

    def k8s(tree: Tree) -> int:
        name = tree.name()
        tree.add(f"k8s/{tree.rng.choice(['prod', 'staging', 'dev'])}/{name}.yaml", k8s_deployment(tree.rng, _speculative(tree.rng), name), "k8s")
        return 1

    def kustomize(tree: Tree) -> int:
        name = tree.name()
        for path, text in kustomize_overlay(tree.rng, _speculative(tree.rng), name).items():
            tree.add(f"kustomize/{name}/{path}", text, "kustomize")
        return 4

    def docker(tree: Tree) -> int:
        tree.add(f"{_service_dir(tree)}/Dockerfile", dockerfile(tree.rng, _speculative(tree.rng)), "dockerfile")
        return 1

    def systemd(tree: Tree) -> int:
        tree.add(f"ops/systemd/{tree.name()}.service", systemd_unit(tree.rng, _speculative(tree.rng)), "systemd")
        return 1

    def python(tree: Tree) -> int:
        tree.add(f"jobs/{tree.name()}/batch_generate.py", python_llm(tree.rng, _speculative(tree.rng)), "python-llm")
        return 1

    def swap(tree: Tree) -> int:
        tree.add(f"ops/llama-swap/{tree.name()}/config.yaml", llama_swap(tree.rng, _speculative(tree.rng)), "llama-swap")
        return 1

    def preset(tree: Tree) -> int:
        tree.add(f"ops/presets/{tree.name()}.ini", llama_preset(tree.rng, _speculative(tree.rng)), "llama-preset")
        return 1

    return [(0.22, compose), (0.18, shell), (0.16, k8s), (0.08, kustomize), (0.10, docker), (0.06, systemd),
            (0.10, python), (0.05, swap), (0.05, preset)]


def _fill(tree: Tree, count: int, makers: list[tuple[float, Maker]], single: Maker) -> None:
    weights = [weight for weight, _ in makers]
    functions = [function for _, function in makers]
    made = 0
    while made < count:
        maker = tree.rng.choices(functions, weights)[0]
        if count - made < 4:
            maker = single  # a group (compose + .env, kustomize) must not overshoot N
        made += maker(tree)


GITIGNORE = """# build output and local state
node_modules/
dist/
*.log
.cache/
tmp/
"""


def build(files: int, seed: int, deployment_only: bool = False) -> Tree:
    """The synthetic tree in memory: ``files`` tracked files (plus the .gitignore and a few ignored ones).
    ``deployment_only``: every file but the .gitignore is a deployment file (the kinds mtplint lints)."""
    tree = Tree(random.Random(seed))
    deployment = files - 1 if deployment_only else round(files * DEPLOYMENT_SHARE)
    unrelated = files - deployment - 1  # the .gitignore counts as one
    tree.add(".gitignore", GITIGNORE, "gitignore")
    deployment_makers = _deployment_makers()
    _fill(tree, deployment, deployment_makers, deployment_makers[1][1])
    unrelated_makers = _unrelated_makers()
    _fill(tree, unrelated, unrelated_makers, unrelated_makers[0][1])
    # ignored files (not counted): a linter must not read them
    for index in range(max(1, files // 200)):
        tree.files[f"tmp/scratch-{index}/compose.yaml"], _ = compose_vllm(tree.rng, True)
    return tree


def write(tree: Tree, root: Path) -> None:
    for relative, text in tree.files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if relative.endswith(".sh"):
            path.chmod(0o755)


def generate(root: Path, files: int = DEFAULT_FILES, seed: int = DEFAULT_SEED, deployment_only: bool = False) -> Tree:
    tree = build(files, seed, deployment_only)
    write(tree, root)
    return tree


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", nargs="?", type=Path, help="directory to write (default: a new temporary directory)")
    parser.add_argument("--files", type=int, default=DEFAULT_FILES, help=f"tracked files to write (default {DEFAULT_FILES})")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--deployment-only", action="store_true",
                        help="only deployment files (compose, k8s, scripts, Dockerfiles, units, Python launchers, .env)")
    args = parser.parse_args(argv)
    root = args.target or Path(tempfile.mkdtemp(prefix="mtplint-bench-"))
    if root.exists() and any(root.iterdir()):
        parser.error(f"{root} is not empty")
    tree = generate(root, args.files, args.seed, args.deployment_only)
    size = sum(len(text.encode()) for text in tree.files.values())
    print(f"{root}: {sum(tree.kinds.values())} files, {size / 1e6:.1f} MB")
    for kind, count in sorted(tree.kinds.items(), key=lambda item: -item[1]):
        print(f"  {kind:16} {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
