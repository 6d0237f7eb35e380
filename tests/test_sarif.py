"""``--output-format sarif``: a SARIF 2.1.0 log that code scanning and SARIF viewers accept.

Every fixture -- the rule cases (tests/rules), the golden fix cases (tests/fixes), the fixture
projects under tests/data (headline, compose, k8s, negative, python) -- and the bundled examples
must produce a log that validates against the OASIS schema (JSON Schema draft 4, vendored in
tests/data/vendor-schemas, see ORIGIN.md); the shape GitHub reads is checked on realistic files.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.case_files import case_file, case_files
from tests.conftest import run_cli, write_files

ROOT = Path(__file__).parent.parent
SCHEMA = Path(__file__).parent / "data" / "vendor-schemas" / "sarif-2.1.0.json"
RULE_CASES = Path(__file__).parent / "rules"
FIX_CASES = Path(__file__).parent / "fixes"
DATA = Path(__file__).parent / "data"
HEADLINE = DATA / "headline"
#: fixture projects under tests/data besides the headline ones (conformance, spec and vendor-schemas
#: hold reference data, not projects)
DATA_PROJECTS = ("compose", "k8s", "negative", "python")

COMPOSE = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.30.0
    ipc: host
    command: >
      --model Qwen/Qwen3.6-27B
      --kv-cache-dtype turboquant_4bit_nc
      --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}'
      --no-enable-prefix-caching
"""


@cache
def _validator() -> Any:
    import jsonschema

    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


def assert_valid(log: dict[str, Any]) -> None:
    errors = sorted(_validator().iter_errors(log), key=lambda e: list(map(str, e.absolute_path)))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:10])


def sarif(args: list[str], cwd: Path) -> tuple[int, dict[str, Any]]:
    exit_code, out, err = run_cli(["check", "--output-format", "sarif", *args], cwd=cwd)
    assert exit_code in (0, 1), err
    log: dict[str, Any] = json.loads(out)
    return exit_code, log


def _rule_cases() -> list[tuple[str, dict[str, Any]]]:
    cases = []
    for path in case_files(RULE_CASES):
        data = case_file(path)
        for polarity in ("positive", "negative"):
            for case in data.get(polarity) or []:
                cases.append((f"{path.stem}-{polarity}-{case['name']}", case))
    return cases


RULE_CASE_LIST = _rule_cases()


@pytest.mark.parametrize("case", [case for _, case in RULE_CASE_LIST], ids=[name for name, _ in RULE_CASE_LIST])
def test_every_rule_fixture_validates(case: dict[str, Any], tmp_path: Path) -> None:
    write_files(tmp_path, case["files"])
    _, log = sarif(["--isolated", *case.get("args", []), "."], tmp_path)
    assert_valid(log)


@pytest.mark.parametrize("project", sorted(p.name for p in HEADLINE.iterdir() if p.is_dir()))
def test_every_headline_fixture_validates(project: str) -> None:
    _, log = sarif(["--isolated", "."], HEADLINE / project)
    assert_valid(log)
    # a fixture of a GPU rule run without its GPU reports that once, as a notification
    notes = log["runs"][0]["invocations"][0].get("toolExecutionNotifications", [])
    assert log["runs"][0]["results"] or notes, f"{project}: the headline fixture reports nothing"


@pytest.mark.parametrize("project", DATA_PROJECTS)
def test_every_data_fixture_validates(project: str) -> None:
    _, log = sarif(["--isolated", "."], DATA / project)
    assert_valid(log)


def _fix_cases() -> list[tuple[str, dict[str, Any]]]:
    return [(path.stem, case) for path in case_files(FIX_CASES) for case in case_file(path)["cases"]]


FIX_CASE_LIST = _fix_cases()


def _offset(text: str, line: int, column: int) -> int:
    """The index in ``text`` of a 1-based SARIF line and column (``columnKind: unicodeCodePoints``)."""
    lines = text.splitlines(keepends=True)
    return sum(len(earlier) for earlier in lines[: line - 1]) + column - 1


def _apply_sarif_fixes(files: dict[str, str], results: list[dict[str, Any]], unsafe: bool) -> dict[str, str]:
    """What a SARIF consumer makes of the files by applying the results' ``fixes`` (each edit once:
    findings that share a fix carry it each)."""
    replacements: dict[str, list[tuple[int, int, str]]] = {}
    for result in results:
        for fix in result.get("fixes", []):
            if fix["properties"]["applicability"] not in (("safe", "unsafe") if unsafe else ("safe",)):
                continue
            for change in fix["artifactChanges"]:
                uri = change["artifactLocation"]["uri"]
                for replacement in change["replacements"]:
                    deleted = replacement["deletedRegion"]
                    edit = (_offset(files[uri], deleted["startLine"], deleted["startColumn"]),
                            _offset(files[uri], deleted["endLine"], deleted["endColumn"]),
                            replacement["insertedContent"]["text"])
                    if edit not in replacements.setdefault(uri, []):
                        replacements[uri].append(edit)
    fixed = dict(files)
    for uri, edits in replacements.items():
        for start, end, content in sorted(edits, reverse=True):
            fixed[uri] = fixed[uri][:start] + content + fixed[uri][end:]
    return fixed


@pytest.mark.parametrize(("code", "case"), FIX_CASE_LIST, ids=[f"{code}-{case['name']}" for code, case in FIX_CASE_LIST])
def test_every_fix_case_validates_and_its_sarif_fixes_give_the_golden_result(
        code: str, case: dict[str, Any], tmp_path: Path) -> None:
    """The SARIF ``fixes`` of a golden fix case, applied as a viewer would, give exactly the files
    ``--fix`` writes: regions (1-based, endColumn one past the end) and inserted texts are right."""
    for name, text in case["files"].items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))
    args = case.get("args", [])
    _, log = sarif(["--isolated", "--select", code, *args, "."], tmp_path)
    assert_valid(log)
    results = [result for result in log["runs"][0]["results"] if result["ruleId"] == code]
    assert any("fixes" in result for result in results), f"{case['name']}: no SARIF fix"
    fixed = _apply_sarif_fixes(case["files"], results, unsafe="--unsafe-fixes" in args)
    for name, expected in case["after"].items():
        assert fixed[name] == expected, f"{case['name']}: {name}"


def test_every_rule_descriptor_fits_what_github_reads() -> None:
    from mtplint.checks.catalog import builtin_rules
    from mtplint.report.sarif import rule_descriptor

    for rule in builtin_rules():
        descriptor = rule_descriptor(rule)
        assert descriptor["id"] == rule.code and descriptor["name"], rule.code
        for key in ("shortDescription", "fullDescription"):
            assert 0 < len(descriptor[key]["text"]) <= 1024, f"{rule.code} {key}"
        assert descriptor["help"]["text"].strip() and descriptor["help"]["markdown"].startswith("# "), rule.code
        assert descriptor["helpUri"].startswith("https://"), rule.code
        assert descriptor["defaultConfiguration"]["level"] in ("error", "warning", "note"), rule.code
        assert descriptor["properties"]["tags"][0] == "mtplint", rule.code
        assert descriptor["properties"]["precision"] in ("very-high", "high", "medium", "low"), rule.code


def test_examples_validate() -> None:
    exit_code, log = sarif(["examples"], ROOT)
    assert exit_code == 1
    assert_valid(log)
    run = log["runs"][0]
    assert {r["ruleId"] for r in run["results"]} >= {"MTP101", "MTP102", "MTP103", "MTP201"}
    for result in run["results"]:
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"].startswith("examples/")
        assert location["artifactLocation"]["uriBaseId"] == "%SRCROOT%"


def test_the_log_github_reads(tmp_path: Path) -> None:
    write_files(tmp_path, {"compose.yaml": COMPOSE})
    (tmp_path / ".git").mkdir()  # the repository root that relative URIs are resolved against
    exit_code, log = sarif(["--isolated", "--select", "MTP101", "."], tmp_path / ".")
    assert exit_code == 1
    assert_valid(log)
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "mtplint" and driver["semanticVersion"] == driver["version"]
    assert driver["informationUri"].startswith("https://")
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"
    assert run["invocations"] == [{"executionSuccessful": True}]

    [rule] = driver["rules"]
    assert rule["id"] == "MTP101" and rule["name"]
    assert 0 < len(rule["shortDescription"]["text"]) <= 1024
    assert 0 < len(rule["fullDescription"]["text"]) <= 1024
    assert rule["help"]["markdown"].startswith(f"# {rule['name']} (MTP101)")
    assert "## " not in rule["help"]["text"] and "What it does" in rule["help"]["text"]
    assert rule["helpUri"].startswith("https://")
    assert rule["defaultConfiguration"]["level"] == "error"
    assert "mtplint" in rule["properties"]["tags"] and rule["properties"]["precision"] in ("very-high", "high")

    [result] = run["results"]
    assert result["ruleId"] == "MTP101" and driver["rules"][result["ruleIndex"]]["id"] == "MTP101"
    assert result["level"] == "error"
    assert result["message"]["text"].startswith("KV-cache dtype `turboquant_4bit_nc`")
    [location] = result["locations"]
    physical = location["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": "compose.yaml", "uriBaseId": "%SRCROOT%"}
    # `turboquant_4bit_nc` on line 7, columns 24..41; endColumn is one past the end
    token = "turboquant_4bit_nc"
    column = COMPOSE.splitlines()[6].index(token) + 1
    assert physical["region"] == {"startLine": 7, "startColumn": column, "endLine": 7, "endColumn": column + len(token)}
    assert result["partialFingerprints"]["primaryLocationLineHash"].endswith(":1")
    assert "suppressions" not in result


def test_uri_relative_to_repository_root_from_a_subdirectory(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    project = write_files(tmp_path / "deploy" / "my stack", {"compose.yaml": COMPOSE})
    _, log = sarif(["--isolated", "--select", "MTP101", "."], project)
    [result] = log["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "deploy/my%20stack/compose.yaml", "uriBaseId": "%SRCROOT%"}


def test_suppressed_findings_are_included_with_their_kind(tmp_path: Path) -> None:
    # inside a block scalar, the suppression goes on the `command: >` line
    noqa = COMPOSE.replace("    command: >", "    command: >  # mtplint: noqa: MTP101")
    write_files(tmp_path / "a", {"compose.yaml": noqa})
    write_files(tmp_path / "b", {"compose.yaml": COMPOSE, "mtplint.toml": '[per-file-ignores]\n"compose.yaml" = ["MTP101"]\n'})
    exit_code, log = sarif(["--isolated", "--select", "MTP101", "."], tmp_path / "a")
    assert exit_code == 0
    assert_valid(log)
    [result] = log["runs"][0]["results"]
    assert result["suppressions"] == [{"kind": "inSource"}]
    assert log["runs"][0]["tool"]["driver"]["rules"][0]["id"] == "MTP101"

    exit_code, log = sarif(["--select", "MTP101", "."], tmp_path / "b")
    assert exit_code == 0
    [result] = log["runs"][0]["results"]
    assert result["suppressions"] == [{"kind": "external"}]


def test_fixes_become_sarif_fixes() -> None:
    from mtplint.checks import Edit, Finding, Fix
    from mtplint.checks.catalog import load_catalog
    from mtplint.report.sarif import build_log
    from mtplint.source import SourceFile

    source = SourceFile.from_text(COMPOSE, "compose.yaml")
    start = COMPOSE.index("turboquant_4bit_nc")
    span = source.span(start, start + len("turboquant_4bit_nc"))
    fix = Fix("unsafe", "use `fp8_e5m2`", [Edit(span, "fp8_e5m2")])
    finding = Finding(load_catalog()["MTP101"], "KV-cache dtype …", span, fix)
    log = build_log([finding], texts={"compose.yaml": COMPOSE})
    assert_valid(log)
    [result] = log["runs"][0]["results"]
    [sarif_fix] = result["fixes"]
    assert sarif_fix["description"]["text"] == "use `fp8_e5m2`"
    assert sarif_fix["properties"]["applicability"] == "unsafe"
    [change] = sarif_fix["artifactChanges"]
    assert change["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    assert change["replacements"] == [{
        "deletedRegion": {"startLine": 7, "startColumn": span.column, "endLine": 7, "endColumn": span.end_column},
        "insertedContent": {"text": "fp8_e5m2"},
    }]


def test_github_limits_are_respected() -> None:
    from mtplint.checks import Finding
    from mtplint.checks.catalog import load_catalog
    from mtplint.report.sarif import build_log, render
    from mtplint.source import SourceFile

    catalog = load_catalog()
    text = "".join(f"line {n}\n" for n in range(60))
    source = SourceFile.from_text(text, "serve.sh")
    findings = [Finding(catalog["MTP303" if n % 2 else "MTP101"], f"finding {n}", source.span(source.line_start(n + 1)))
                for n in range(40)]
    suppressed = [Finding(catalog["MTP102"], "hidden", source.span(0), suppressed=True)]
    log = build_log(findings, suppressed, texts={"serve.sh": text}, max_results=25)
    results = log["runs"][0]["results"]
    assert len(results) == 25
    # the suppressed finding goes first, then the least severe ones
    assert all("suppressions" not in r for r in results)
    assert sum(r["ruleId"] == "MTP101" for r in results) == 20
    [notification] = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert "16 of 41 findings left out" in notification["message"]["text"]
    assert_valid(log)

    # the size limit: the log is halved until it fits
    small = json.loads(render(findings, texts={"serve.sh": text}, max_gzipped_bytes=2_500))
    assert 0 < len(small["runs"][0]["results"]) < 40
    assert "gzipped" in small["runs"][0]["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"]


def test_output_file_and_environment_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_files(tmp_path, {"compose.yaml": COMPOSE})
    exit_code, out, err = run_cli(["check", "--isolated", "--select", "MTP101", "--output-format", "sarif",
                                   "-o", "reports/mtplint.sarif", "."], cwd=tmp_path)
    assert exit_code == 1, err
    assert out == ""
    log = json.loads((tmp_path / "reports" / "mtplint.sarif").read_text(encoding="utf-8"))
    assert_valid(log)
    assert log["runs"][0]["results"][0]["ruleId"] == "MTP101"

    monkeypatch.setenv("MTPLINT_OUTPUT_FORMAT", "sarif")
    exit_code, out, err = run_cli(["check", "--isolated", "--select", "MTP101", "."], cwd=tmp_path)
    assert exit_code == 1, err
    assert json.loads(out)["version"] == "2.1.0"

    # the flag wins over the variable; a value that is no format is refused, not read as `full`
    exit_code, out, err = run_cli(["check", "--isolated", "--select", "MTP101", "--output-format", "concise", "."],
                                  cwd=tmp_path)
    assert exit_code == 1 and out.startswith("compose.yaml:7:"), err
    monkeypatch.setenv("MTPLINT_OUTPUT_FORMAT", "sarf")
    exit_code, out, err = run_cli(["check", "--isolated", "-o", "mtplint.sarif", "."], cwd=tmp_path)
    assert exit_code == 2 and "MTPLINT_OUTPUT_FORMAT='sarf' is not an output format" in err
    assert not (tmp_path / "mtplint.sarif").exists()


def test_stdin_filename_lints_the_buffer_not_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An editor passes its unsaved buffer on stdin; positions, fingerprints and the `.env` next to
    the named file all follow the buffer's name."""
    import io

    write_files(tmp_path, {"compose.yaml": "services: {}\n"})
    monkeypatch.setattr("sys.stdin", io.StringIO(COMPOSE))
    exit_code, log = sarif(["--isolated", "--select", "MTP101", "--stdin-filename", "compose.yaml"], tmp_path)
    assert exit_code == 1
    [result] = log["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 7
    from mtplint.report.sarif import line_hashes

    assert result["partialFingerprints"]["primaryLocationLineHash"] == line_hashes(COMPOSE)[7]
    assert (tmp_path / "compose.yaml").read_text(encoding="utf-8") == "services: {}\n"


def test_stdin_filename_refusals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(COMPOSE))
    (tmp_path / "deploy").mkdir()
    code, _, err = run_cli(["check", "--isolated", "--stdin-filename", "deploy"], cwd=tmp_path)
    assert code == 2 and "is a directory" in err
    write_files(tmp_path, {"compose.yaml": COMPOSE})
    code, _, err = run_cli(["check", "--isolated", "--fix", "--stdin-filename", "compose.yaml"], cwd=tmp_path)
    assert code == 2 and "--stdin-filename cannot be combined" in err
    assert (tmp_path / "compose.yaml").read_text(encoding="utf-8") == COMPOSE


def test_house_rules_in_the_log(tmp_path: Path) -> None:
    from tests.test_house_rules import COMPOSE as HOUSE_COMPOSE
    from tests.test_house_rules import MAX_64

    write_files(tmp_path, {"policy/ACME001.yaml": MAX_64, "compose.yaml": HOUSE_COMPOSE})
    _, log = sarif(["--isolated", "--extend-rules", "policy", "--select", "ACME001", "."], tmp_path)
    assert_valid(log)
    [rule] = log["runs"][0]["tool"]["driver"]["rules"]
    assert rule["id"] == "ACME001" and "helpUri" not in rule
    assert rule["properties"]["tags"] == ["mtplint", "vllm", "sglang", "house-rule"]
    assert rule["defaultConfiguration"]["level"] == "warning"
    assert log["runs"][0]["results"][0]["ruleIndex"] == 0
