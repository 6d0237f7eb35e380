"""``# noqa`` suppressions: only real comments count, in every kind of file that holds a launch or a finding."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mtplint.checks.suppress import comment_starts, suppressions_in
from mtplint.source import SourceFile
from tests.conftest import run_cli

SPEC = """'{"method": "mtp", "num_speculative_tokens": 2}'"""
TURBO = "--kv-cache-dtype turboquant_4bit_nc"  # MTP101 with any speculation


def check(tmp_path: Path, files: dict[str, str], *args: str) -> list[dict[str, Any]]:
    for name, text in files.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    exit_code, out, err = run_cli(["check", "--isolated", "--output-format", "json", "--engine-version", "vllm=0.30.0",
                                   "--select", "MTP101,MTP107,MTP002,MTP001", *args, "."], cwd=tmp_path)
    assert exit_code in (0, 1), err
    findings: list[dict[str, Any]] = json.loads(out)
    return findings


def where(findings: list[dict[str, Any]]) -> list[tuple[str, str, int]]:
    return [(f["code"], f["filename"], f["location"]["row"]) for f in findings]


SHELL = f"""#!/usr/bin/env bash
set -euo pipefail
exec vllm serve Qwen/Qwen3.6-27B \\
  {TURBO} \\
  --speculative-config {SPEC} \\
  --no-enable-prefix-caching@COMMENT@
"""


@pytest.mark.parametrize("comment", ["  # mtplint: noqa: MTP101", "  # noqa: MTP101", "  # noqa", "  #noqa:MTP101,MTP102"])
def test_shell_noqa_on_the_last_line_of_a_continued_command(tmp_path: Path, comment: str) -> None:
    findings = check(tmp_path, {"serve.sh": SHELL.replace("@COMMENT@", comment)})
    assert "MTP101" not in [f["code"] for f in findings]
    if "MTP102" in comment:  # MTP102 is not selected: its code is not judged
        assert findings == []


def test_shell_without_comment_reports_on_the_token(tmp_path: Path) -> None:
    assert where(check(tmp_path, {"serve.sh": SHELL.replace("@COMMENT@", "")})) == [("MTP101", "serve.sh", 4)]


def test_shell_hash_inside_quotes_is_not_a_comment(tmp_path: Path) -> None:
    text = f"#!/bin/sh\nexec vllm serve Qwen/Qwen3.6-27B {TURBO} --served-model-name \"qwen # noqa: MTP101\" " \
           f"--speculative-config {SPEC}\n"
    assert where(check(tmp_path, {"serve.sh": text})) == [("MTP101", "serve.sh", 2)]


COMPOSE = f"""services:
  vllm:
    image: vllm/vllm-openai:v0.30.0
    command: >@HEADER@
      Qwen/Qwen3.6-27B
      {TURBO}@INSIDE@
      --speculative-config {SPEC}
      --no-enable-prefix-caching
"""


def test_yaml_noqa_on_the_block_scalar_header_covers_the_block(tmp_path: Path) -> None:
    text = COMPOSE.replace("@HEADER@", "  # mtplint: noqa: MTP101 (turboquant verified with our build)").replace("@INSIDE@", "")
    assert check(tmp_path, {"compose.yaml": text}) == []


def test_yaml_noqa_inside_a_folded_block_is_text(tmp_path: Path) -> None:
    text = COMPOSE.replace("@HEADER@", "").replace("@INSIDE@", "  # noqa: MTP101")
    # the comment is part of the command (compose passes `#`, `noqa:` … to vLLM): not a suppression, not MTP002
    assert where(check(tmp_path, {"compose.yaml": text})) == [("MTP101", "compose.yaml", 6)]


def test_yaml_noqa_on_a_flow_sequence_line(tmp_path: Path) -> None:
    text = ("services:\n  vllm:\n    image: vllm/vllm-openai:v0.30.0\n"
            "    command: [\"Qwen/Qwen3.6-27B\", \"--kv-cache-dtype\", \"turboquant_4bit_nc\", \"--speculative-config\",\n"
            "              '{\"method\":\"mtp\",\"num_speculative_tokens\":2}', \"--no-enable-prefix-caching\"]  # noqa: MTP101\n"
            "    environment:\n      NOTE: \"a # noqa: MTP101 in a string\"\n")
    assert check(tmp_path, {"compose.yaml": text}) == []


def test_python_noqa_comment_and_not_a_string(tmp_path: Path) -> None:
    text = ('from vllm import LLM\n\n'
            'llm = LLM(\n'
            '    model="Qwen/Qwen3.6-27B",\n'
            '    kv_cache_dtype="turboquant_4bit_nc",{comment}\n'
            '    speculative_config={{"method": "mtp", "num_speculative_tokens": 2}},\n'
            '    served_model_name="q # noqa: MTP101",\n'
            '    enable_prefix_caching=False,\n'
            ')\n')
    assert where(check(tmp_path, {"launch.py": text.format(comment="")})) == [("MTP101", "launch.py", 5)]
    assert check(tmp_path, {"launch.py": text.format(comment="  # noqa: MTP101 -- measured, no loops on 0.30")}) == []


PY_ONE_LINE = ('from vllm import LLM\n\n'
               'llm = LLM(model="Qwen/Qwen3.6-27B", kv_cache_dtype="turboquant_4bit_nc", enable_prefix_caching=False, '
               'speculative_config={{"method": "mtp", "num_speculative_tokens": 2}}){comment}\n')


@pytest.mark.parametrize("comment", ["  # noqa: E501", "  # noqa: PLR0913", "  # noqa:E501,W291"])
def test_python_noqa_of_another_linter_suppresses_nothing_of_ours(tmp_path: Path, comment: str) -> None:
    """A long launch line carries ruff's/flake8's ``# noqa: E501``: it is not a bare ``# noqa``
    (which would hide the MTP101 error on that line) and not an unused suppression of ours."""
    findings = check(tmp_path, {"launch.py": PY_ONE_LINE.format(comment=comment)})
    assert where(findings) == [("MTP101", "launch.py", 3)]


def test_python_noqa_mixing_our_code_and_another_linters(tmp_path: Path) -> None:
    assert check(tmp_path, {"launch.py": PY_ONE_LINE.format(comment="  # noqa: MTP101, E501")}) == []


def test_foreign_code_in_an_mtplint_noqa_is_unknown(tmp_path: Path) -> None:
    findings = check(tmp_path, {"launch.py": PY_ONE_LINE.format(comment="  # mtplint: noqa: MTP101, E501")})
    assert [(f["code"], f["message"]) for f in findings] == [
        ("MTP002", "unknown code E501 in `noqa` (see `mtplint rules`)")]


def test_dockerfile_shell_form_comment(tmp_path: Path) -> None:
    text = (f"FROM vllm/vllm-openai:v0.30.0\n"
            f"CMD vllm serve Qwen/Qwen3.6-27B {TURBO} --speculative-config {SPEC} --no-enable-prefix-caching@C@\n")
    assert where(check(tmp_path, {"Dockerfile": text.replace("@C@", "")})) == [("MTP101", "Dockerfile", 2)]
    assert check(tmp_path, {"Dockerfile": text.replace("@C@", "  # mtplint: noqa: MTP101")}) == []


SYSTEMD = f"""[Unit]
Description=vLLM with MTP
@FILE_LEVEL@
[Service]
ExecStart=/usr/bin/vllm serve Qwen/Qwen3.6-27B {TURBO} --speculative-config {SPEC} --no-enable-prefix-caching
Restart=always
"""


def test_systemd_whole_line_comments_only(tmp_path: Path) -> None:
    assert check(tmp_path, {"vllm.service": SYSTEMD.replace("@FILE_LEVEL@", "# mtplint: noqa: MTP101")}) == []
    findings = check(tmp_path, {"vllm.service": SYSTEMD.replace("@FILE_LEVEL@", "; mtplint: noqa")})
    assert findings == []


def test_file_level_noqa_without_codes_and_with_other_codes(tmp_path: Path) -> None:
    text = "# mtplint: noqa: MTP102\n" + SHELL.replace("@COMMENT@", "")
    findings = check(tmp_path, {"serve.sh": text.replace("#!/usr/bin/env bash\n", "")}, "--extend-select", "MTP102")
    assert [f["code"] for f in findings] == ["MTP002", "MTP101"]  # MTP102 does not fire here: the noqa is unused


def test_noqa_in_a_vllm_config_file_that_holds_no_launch(tmp_path: Path) -> None:
    files = {
        "deploy/run.sh": "#!/bin/sh\nexec vllm serve --config serve.yaml\n",
        "deploy/serve.yaml": ("model: Qwen/Qwen3.6-27B\nspeculative-config: {{method: mtp, num_speculative_tokens: 2}}\n"
                              "enable-prefix-caching: false{comment}\n"),
    }
    assert where(check(tmp_path, {**files, "deploy/serve.yaml": files["deploy/serve.yaml"].format(comment="")})) == [
        ("MTP107", "deploy/serve.yaml", 3)]
    files["deploy/serve.yaml"] = files["deploy/serve.yaml"].format(comment="  # noqa: MTP107")
    assert check(tmp_path, files) == []


def test_noqa_in_an_env_file(tmp_path: Path) -> None:
    rule = """code: ACME002
name: no-spec-v2-env
severity: warning
engines: [sglang]
fix: none
summary: The platform image sets spec V2; deployments must not set it themselves.
when:
  spec_v2: {set: true}
docs:
  what: Flags SGLang launches that set SGLANG_ENABLE_SPEC_V2 themselves.
  why: The platform image sets it; a per-deployment value drifts from the fleet default.
  example: SGLANG_ENABLE_SPEC_V2=1
  fix_safety: No fix.
  references:
    - title: Platform runbook
      url: https://wiki.example.com/sglang
"""
    compose = """services:
  sglang:
    image: lmsysorg/sglang:v0.5.9-cu129
    env_file: [sglang.env]
    command: >
      python3 -m sglang.launch_server --model-path Qwen/Qwen3.6-27B
      --speculative-algorithm NEXTN --speculative-num-steps 3 --speculative-eagle-topk 1
"""
    files = {"policy/ACME002.yaml": rule, "compose.yaml": compose, "sglang.env": "# overlap scheduling\nSGLANG_ENABLE_SPEC_V2=1\n"}
    args = ("--extend-rules", "policy", "--extend-select", "ACME002")
    assert where(check(tmp_path, files, *args)) == [("ACME002", "sglang.env", 2)]
    files["sglang.env"] = "# overlap scheduling\nSGLANG_ENABLE_SPEC_V2=1  # mtplint: noqa: ACME002\n"
    assert check(tmp_path, files, *args) == []


def test_malformed_yaml_can_be_suppressed_on_its_line(tmp_path: Path) -> None:
    text = "services:\n  vllm:\n    command: [vllm, serve, Qwen/Qwen3.6-27B\n    ports: [\"8000:8000\"]  # noqa: MTP001\n"
    assert check(tmp_path, {"compose.yaml": text}) == []


# -- the comment scanner ---------------------------------------------------------------------------

def starts(name: str, text: str) -> list[str]:
    source = SourceFile.from_text(text, name)
    return [text[i:].split("\n", 1)[0] for i in comment_starts(source)]


def test_comment_scanner_per_syntax() -> None:
    assert starts("c.yaml", "a: '#x' # one\nb: >  # two\n  # text\nc: x#y\n# three\n") == ["# one", "# two", "# three"]
    assert starts("s.sh", "echo '#a' \"#b\" c#d # one\nx='\n# text\n' # two\n") == ["# one", "# two"]
    assert starts("l.py", "x = '# text'  # one\ns = '''\n# text\n'''\n# two\n") == ["# one", "# two"]
    assert starts("u.service", "# one\nExecStart=/bin/vllm serve x # text\n  ; two\n") == ["# one", "; two"]
    assert starts("x.json", '{"a": "# text"}\n') == []
    assert starts(".env", "A=1 # one\nB='x # text'\n") == ["# one"]


def test_comment_scanner_survives_broken_input() -> None:
    assert starts("c.yaml", "a: [1, 2\nb: c  # one\n") == ["# one"]
    assert starts("l.py", "x = (1,\n# one\n") == ["# one"]


def test_file_level_and_codes_are_parsed() -> None:
    source = SourceFile.from_text("# mtplint: noqa: MTP101, mtp102\nx: 1  # mtplint: noqa\n# noqa: MTP105 MTP106\n", "c.yaml")
    found = suppressions_in(source)
    assert [(s.line, s.file_level, sorted(s.codes or [])) for s in found] == [
        (1, True, ["MTP101", "MTP102"]), (2, False, []), (3, False, ["MTP105", "MTP106"])]
    assert suppressions_in(SourceFile.from_text("# noqanything\n# mtplint: gpu=rtx-4090\n", "c.yaml")) == []
    plain = suppressions_in(SourceFile.from_text("import os  # noqa: F401\nx = 1  # noqa: PLR2004, MTP101\n", "l.py"))
    assert [sorted(s.codes or []) for s in plain] == [["F401"], ["MTP101", "PLR2004"]]
