"""Property (issue 21, acceptance 2): whatever the files hold, the command line ends in 0, 1 or 2.

For each kind of file mtplint reads -- compose, shell, Kubernetes, Dockerfile, systemd, Python,
llama.cpp INI presets, ``.env``, ``--config`` YAML and JSON, house rules, ``mtplint.toml`` --
hypothesis generates raw bytes and near-valid files (a realistic file of that kind with hostile
edits: huge numbers, deep brackets, control characters, stray quotes, ``${`` and ``\\``, NULs,
BOMs, truncation, repeated lines, paths out of the project). Each example is a fresh copy of a small
project, run in-process through ``check``, ``inspect`` and ``check --fix``; each must

* raise nothing and print no traceback, and exit 0, 1 or 2 (2 with a message on stderr);
* touch no file outside the copy (a sibling folder the files point into stays as it was).

CI runs 200 examples per kind (derandomized with ``CI=true``, see conftest). The fuzz run is the
same test with more examples::

    MTPLINT_FUZZ_EXAMPLES=10000 python -m pytest tests/test_fuzz_cli.py -q -p no:randomly

(10,000 per kind takes hours on two cores; ``-k compose`` picks one kind).
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtplint.cli import main
from tests.test_extract_llama_preset import PRESET as INI

EXAMPLES = int(os.environ.get("MTPLINT_FUZZ_EXAMPLES", "200"))

COMPOSE = """\
services:
  vllm:
    image: vllm/vllm-openai:${VLLM_TAG:-v0.30.0}
    env_file: .env
    environment:
      HF_HOME: /models
      VLLM_USE_V1: "1"
    command: >
      Qwen/Qwen3.6-27B
      --kv-cache-dtype turboquant_4bit_nc
      --max-num-seqs ${MAX_SEQS:-64}
      --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}'
    deploy:
      resources:
        reservations:
          devices: [{driver: nvidia, count: 2, capabilities: [gpu]}]
"""

SHELL = """\
#!/usr/bin/env bash
set -euo pipefail
MODEL="${MODEL:-Qwen/Qwen3.6-27B}"
EXTRA_ARGS=(--enable-prefix-caching --max-num-seqs 8)
exec vllm serve "$MODEL" \\
  --tensor-parallel-size 2 \\
  --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}' \\
  "${EXTRA_ARGS[@]}" "$@"
"""

K8S = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen
spec:
  template:
    spec:
      containers:
        - name: sglang
          image: lmsysorg/sglang:v0.5.9
          command: ["python3", "-m", "sglang.launch_server"]
          args:
            - --model-path=Qwen/Qwen3.6-27B
            - --speculative-algorithm
            - NEXTN
            - --speculative-num-steps=3
            - --speculative-eagle-topk=1
          env:
            - name: SGLANG_ENABLE_SPEC_V2
              value: "1"
          resources:
            limits:
              nvidia.com/gpu: 1
"""

DOCKERFILE = """\
FROM vllm/vllm-openai:v0.30.0
ENV MODEL=Qwen/Qwen3.6-27B \\
    VLLM_USE_V1=1
ARG TOKENS=2
ENTRYPOINT ["vllm", "serve"]
CMD ["Qwen/Qwen3.6-27B", "--speculative-config", "{\\"method\\": \\"mtp\\", \\"num_speculative_tokens\\": 2}"]
"""

SYSTEMD = """\
[Unit]
Description=vLLM
[Service]
Environment="MODEL=Qwen/Qwen3.6-27B" PORT=8000
Environment=EXTRA="--max-num-seqs 8 --enforce-eager"
EnvironmentFile=-/etc/vllm/vllm.env
ExecStart=/opt/venv/bin/vllm serve ${MODEL} \\
    --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}' $EXTRA
[Install]
WantedBy=multi-user.target
"""

PYTHON = """\
import subprocess
from vllm import LLM

llm = LLM(
    model="Qwen/Qwen3.6-27B",
    speculative_config={"method": "mtp", "num_speculative_tokens": 2},
    kv_cache_dtype="turboquant_4bit_nc",
    max_num_seqs=64,
)
subprocess.run(["vllm", "serve", "Qwen/Qwen3.6-27B", "--speculative-config",
                '{"method": "mtp", "num_speculative_tokens": 2}'], check=True)
"""


DOTENV = """\
# model server settings
VLLM_TAG=v0.30.0
MAX_SEQS=256
export HF_TOKEN='hf_xxx'
EXTRA="--enable-prefix-caching"
"""

CONFIG_YAML = """\
model: Qwen/Qwen3.6-27B
max-model-len: 32768
kv-cache-dtype: turboquant_4bit_nc
speculative-config:
  method: mtp
  num_speculative_tokens: 2
"""

CONFIG_JSON = """\
{"model": "Qwen/Qwen3.6-27B", "max-model-len": 32768,
 "speculative-config": {"method": "mtp", "num_speculative_tokens": 2}, "max-num-seqs": 256}
"""

HOUSE_RULE = """\
code: ACME001
name: acme-few-draft-tokens
severity: warning
engines: [vllm]
fix: none
summary: "Our serving budget allows at most 3 draft tokens."
docs:
  what: |
    Flags more than 3 speculative tokens.
when:
  spec_tokens: {gt: 3}
message: "{spec_tokens} draft tokens is over our budget of 3"
"""

MTPLINT_TOML = """\
select = ["MTP1", "MTP5"]
ignore = ["MTP102"]
objective = "throughput"
engine-versions = { vllm = "0.30.0" }
exclude = ["vendor/**"]

[per-file-ignores]
"compose.yaml" = ["MTP405"]

[[gpus]]
id = "acme-x1"
name = "ACME X1"
memory_mib = 24576
bandwidth_gbs = 1000
bf16_tflops = 160
fp8 = true
"""

SERVE_WITH_CONFIG = "#!/bin/sh\nexec vllm serve --config {name} --tensor-parallel-size 2\n"

#: kind -> (the generated file's name, its seed, the other files of the project, extra arguments)
KINDS: dict[str, tuple[str, str, dict[str, str], tuple[str, ...]]] = {
    "compose": ("compose.yaml", COMPOSE, {".env": DOTENV}, ()),
    "shell": ("serve.sh", SHELL, {}, ()),
    "k8s": ("deploy.yaml", K8S, {}, ()),
    "dockerfile": ("Dockerfile", DOCKERFILE, {}, ()),
    "systemd": ("vllm.service", SYSTEMD, {}, ()),
    "python": ("launch.py", PYTHON, {}, ()),
    "ini": ("presets.ini", INI, {}, ()),
    "dotenv": (".env", DOTENV, {"compose.yaml": COMPOSE}, ()),
    "config-yaml": ("config.yaml", CONFIG_YAML, {"serve.sh": SERVE_WITH_CONFIG.format(name="config.yaml")}, ()),
    "config-json": ("config.json", CONFIG_JSON, {"serve.sh": SERVE_WITH_CONFIG.format(name="config.json")}, ()),
    "house-rule": ("rules/ACME001.yaml", HOUSE_RULE, {"compose.yaml": COMPOSE}, ("--extend-rules", "rules")),
    "mtplint-toml": ("mtplint.toml", MTPLINT_TOML, {"compose.yaml": COMPOSE}, ()),
}

#: what hostile edits insert: numbers past Python's digit limit, deep nesting, control characters,
#: quoting and expansion syntax, encodings, and paths that lead out of the project
HOSTILE = [
    "9" * 4400, "1e308", "inf", "nan", "-0", "[" * 600, "]" * 600, "{" * 600, '{"a":' * 300, "\x1b[2J", "\x00",
    "\x07", "\r", "\t", "\\", "\\\n", "'", '"', "`", "$(", "${", "${A:-", "${A:?x}", "$@", "&a ", "*a", "<<: ",
    "!!python/object/apply:os.system", "---\n", "...\n", "# noqa: MTP102", "# mtplint: noqa", "\ufeff",
    "\ud7ff", "\u202e", "é", "--speculative-config", "--config ../outside/cfg.yaml", "../outside/cfg.yaml",
    "/etc/passwd", "--kv-cache-dtype", "turboquant_4bit_nc", "--num-speculative-tokens", "num_speculative_tokens",
    ": ", "- ", "  ", "\n", "=", ";", "[*]", "[Service]", "ExecStart=", "FROM ", "CMD ", "LLM(", "**kwargs",
    "command:", "args:", "env_file: ../outside/x.env", "extend = \"../outside/mtplint.toml\"",
    "extend-rules = [\"../outside\"]", "{max_concurrency[0]}", "{spec_tokens!r}", "{spec_tokens:>40}",
]
# (a template's width is bounded by the house-rule loader; the property does not ask for a huge one:
# before that bound, one example would allocate gigabytes)


@st.composite
def near_valid(draw: st.DrawFn, seed: str) -> bytes:
    """``seed`` with a few hostile edits, encoded as UTF-8 (or, sometimes, UTF-16 or Latin-1)."""
    text = seed
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(text)))
        edit = draw(st.sampled_from(("insert", "insert", "delete", "repeat", "truncate", "swap")))
        if edit == "insert":
            piece = draw(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=8)))
            text = text[:at] + piece + text[at:]
        elif edit == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 40)):]
        elif edit == "repeat":
            line_start = text.rfind("\n", 0, at) + 1
            line_end = text.find("\n", at)
            line = text[line_start:line_end + 1 if line_end >= 0 else len(text)]
            text = text[:line_start] + line * draw(st.integers(2, 4)) + text[line_start:]
        elif edit == "truncate":
            text = text[:at]
        else:
            other = draw(st.integers(0, len(text)))
            low, high = sorted((at, other))
            text = text[:low] + text[high:] + text[low:high]
    encoding = draw(st.sampled_from(("utf-8",) * 8 + ("utf-16", "latin-1")))
    return text.encode(encoding, "surrogatepass" if encoding != "latin-1" else "replace")


def content(seed: str) -> st.SearchStrategy[bytes]:
    return st.one_of(near_valid(seed), near_valid(seed), st.binary(max_size=512))


#: a file outside the linted project that a generated file may point at (``--config ../outside/…``)
OUTSIDE = {"cfg.yaml": CONFIG_YAML, "x.env": DOTENV, "mtplint.toml": MTPLINT_TOML,
           "ACME002.yaml": HOUSE_RULE.replace("ACME001", "ACME002")}


def _snapshot(root: Path) -> dict[str, tuple[str, int]]:
    return {str(path.relative_to(root)): (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
            for path in sorted(root.rglob("*")) if path.is_file()}


def _fill_outside(outside: Path) -> None:
    shutil.rmtree(outside, ignore_errors=True)
    outside.mkdir()
    for file, text in OUTSIDE.items():
        (outside / file).write_text(text, encoding="utf-8")


@contextmanager
def outside_folder() -> Iterator[Path]:
    """A folder of files a generated file may point at (``outside/``), beside the place of each
    example's project: written once per kind, checked after every example."""
    base = Path(tempfile.mkdtemp(prefix="mtplint-fuzz-"))
    try:
        _fill_outside(base / "outside")
        yield base / "outside"
    finally:
        shutil.rmtree(base, ignore_errors=True)


@contextmanager
def project(outside: Path, name: str, data: bytes, others: dict[str, str]) -> Iterator[Path]:
    """A fresh project (``project/``) beside ``outside``, which it must not touch."""
    base = outside.parent
    before = _snapshot(outside)
    root = base / "project"
    try:
        root.mkdir()
        for file, text in others.items():
            (root / file).write_text(text, encoding="utf-8")
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        yield root
        assert _snapshot(outside) == before, "a file outside the project was changed"
        assert sorted(p.name for p in base.iterdir()) == ["outside", "project"], "a file was written beside it"
    finally:
        # the next example (hypothesis goes on after a failure, to shrink it) starts from the same folders
        for path in base.iterdir():
            if path == outside:
                continue
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        if _snapshot(outside) != before:
            _fill_outside(outside)


def run(root: Path, args: list[str]) -> None:
    out, err = io.StringIO(), io.StringIO()
    previous = Path.cwd()
    os.chdir(root)
    try:
        code = main(args, out, err)  # an exception here fails the property: nothing may escape
    finally:
        os.chdir(previous)
    message = err.getvalue()
    assert "Traceback" not in message, message
    assert code in (0, 1, 2), (code, message)
    if code == 2:
        assert message.startswith("mtplint: error: "), (args, message)


def check_every_command(outside: Path, kind: str, data: bytes) -> None:
    name, _, others, extra = KINDS[kind]
    isolated = () if kind == "mtplint-toml" else ("--isolated",)
    with project(outside, name, data, others) as root:
        run(root, ["check", "--no-cache", *isolated, *extra, "."])
        run(root, ["inspect", "--format", "json", "."])
        run(root, ["check", "--no-cache", *isolated, *extra, "--fix", "--unsafe-fixes", "."])


def property_for(kind: str, outside: Path) -> Callable[[], None]:
    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(data=content(KINDS[kind][1]))
    def test(data: bytes) -> None:
        check_every_command(outside, kind, data)

    return test


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_any_file_ends_in_0_1_or_2_and_touches_nothing_outside(kind: str) -> None:
    with outside_folder() as outside:
        property_for(kind, outside)()


def test_the_seeds_are_real_launches() -> None:
    """The near-valid files start from files mtplint reads as launches (else the edits would test
    only the prefilter)."""
    for kind, (name, seed, others, extra) in KINDS.items():
        if kind in ("house-rule", "mtplint-toml", "dotenv"):
            continue
        with outside_folder() as outside, project(outside, name, seed.encode(), others) as root:
            out, err = io.StringIO(), io.StringIO()
            previous = Path.cwd()
            os.chdir(root)
            try:
                assert main(["inspect", "--format", "json", *extra, "."], out, err) == 0, err.getvalue()
            finally:
                os.chdir(previous)
            assert '"engine"' in out.getvalue(), kind


def test_an_example_that_writes_outside_fails_and_the_next_starts_from_the_same_folders() -> None:
    """The outside folder is written once per kind: an example that changes it, or writes beside
    the project, fails, and what it left is undone before the next example."""
    def contents(outside: Path) -> dict[str, str]:  # (restored files have new modification times)
        return {name: digest for name, (digest, _) in _snapshot(outside).items()}

    with outside_folder() as outside:
        pristine = contents(outside)
        with pytest.raises(AssertionError, match="outside the project was changed"), \
                project(outside, "compose.yaml", COMPOSE.encode(), {}) as root:
            (root.parent / "outside" / "cfg.yaml").write_text("model: changed\n", encoding="utf-8")
            (root.parent / "outside" / "new.env").write_text("A=1\n", encoding="utf-8")
        assert contents(outside) == pristine
        with pytest.raises(AssertionError, match="a file was written beside it"), \
                project(outside, "compose.yaml", COMPOSE.encode(), {}) as root:
            (root.parent / "stray.yaml").write_text("a: 1\n", encoding="utf-8")
            (root.parent / "stray").mkdir()
        assert sorted(path.name for path in outside.parent.iterdir()) == ["outside"]
        assert contents(outside) == pristine
        with project(outside, "compose.yaml", COMPOSE.encode(), {".env": DOTENV}) as root:
            assert sorted(path.name for path in root.iterdir()) == [".env", "compose.yaml"]
