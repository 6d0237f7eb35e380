"""``partialFingerprints.primaryLocationLineHash``: the same value GitHub's upload action computes.

GitHub matches alerts across uploads by this hash (docs/sarif.md#what-github-requires); mtplint computes it
itself so that uploads through the REST API, GitLab and other consumers get it too. The expected
values are the test vectors of github/codeql-action ``src/fingerprints.test.ts`` (data, MIT).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mtplint.report.sarif import line_hashes
from tests.conftest import run_cli

SAME_AFTER_NORMALISING = [
    "e9496ae3ebfced30:1", "fb7c023a8b9ccb3f:1", "ce8ba1a563dcdaca:1", "e20e36e16fcb0cc8:1",
    "b3edc88f2938467e:1", "c8e28b0b4002a3a0:1", "c129715d7a2bc9a3:1",
]


@pytest.mark.parametrize(("text", "expected"), [
    ("", ["c129715d7a2bc9a3:1"]),
    (" a\nb\n  \t\tc\n d", ["271789c17abda88f:1", "54703d4cd895b18:1", "180aee12dab6264:1", "a23a3dc5e078b07b:1"]),
    (" hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End",
     ["8b7cf3e952e7aeb2:1", "b1ae1287ec4718d9:1", "bff680108adb0fcc:1", "c6805c5e1288b612:1",
      "b86d3392aea1be30:1", "e6ceba753e1a442:1"]),
    # LF, CR, CRLF and mixed line ends hash alike
    (" hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End\n", SAME_AFTER_NORMALISING),
    (" hello; \t\nworld!!!\r\r\r  \t\tGreetings\r End\r", SAME_AFTER_NORMALISING),
    (" hello; \t\r\nworld!!!\r\n\r\n\r\n  \t\tGreetings\r\n End\r\n", SAME_AFTER_NORMALISING),
    (" hello; \t\nworld!!!\r\n\n\r  \t\tGreetings\r End\r\n", SAME_AFTER_NORMALISING),
    # identical lines are told apart by their occurrence count
    ("Lorem ipsum dolor sit amet.\n" * 10,
     [*(f"a7f2ff13bc495cf2:{n}" for n in range(1, 7)), "a7f2ff1481e87703:1", "a9cf91f7bbf1862b:1",
      "55ec222b86bcae53:1", "cc97dc7b1d7d8f7b:1", "c129715d7a2bc9a3:1"]),
], ids=["empty", "indented", "no-final-newline", "lf", "cr", "crlf", "mixed", "repeated-lines"])
def test_codeql_action_vectors(text: str, expected: list[str]) -> None:
    assert line_hashes(text) == {line: value for line, value in enumerate(expected, start=1)}


def test_characters_outside_the_bmp_count_as_two_utf16_units() -> None:
    # JavaScript strings are UTF-16: the hash of an emoji is the hash of its surrogate pair
    assert line_hashes("\U0001F600\n") == line_hashes("\ud83d\ude00\n")
    assert line_hashes("\U0001F600\n") != line_hashes("\u263a\n")


COMPOSE = """\
services:
  sglang:
    image: lmsysorg/sglang:v0.5.9-cu129
    ipc: host
    command: >
      python3 -m sglang.launch_server
      --model-path deepseek-ai/DeepSeek-V3-0324
      --tp 8
      --speculative-algorithm NEXTN
      --speculative-num-steps 3
      --speculative-eagle-topk 1
      --speculative-num-draft-tokens 4
"""


def _fingerprint(project: Path) -> tuple[int, str]:
    exit_code, out, err = run_cli(["check", "--output-format", "sarif", "--isolated", "--select", "MTP103", "."],
                                  cwd=project)
    assert exit_code == 1, err
    [result] = json.loads(out)["runs"][0]["results"]
    region = result["locations"][0]["physicalLocation"]["region"]
    return region["startLine"], result["partialFingerprints"]["primaryLocationLineHash"]


def test_fingerprint_survives_unrelated_lines_above(tmp_path: Path) -> None:
    (tmp_path / "before").mkdir()
    (tmp_path / "after").mkdir()
    (tmp_path / "edited").mkdir()
    (tmp_path / "before" / "compose.yaml").write_text(COMPOSE, encoding="utf-8")
    grown = COMPOSE.replace("services:\n", "# inference stack, see RUNBOOK.md\nname: inference\n\nservices:\n"
                            "  proxy:\n    image: nginx:1.27\n    ports: [\"8080:80\"]\n")
    (tmp_path / "after" / "compose.yaml").write_text(grown, encoding="utf-8")
    # the flagged line itself changes: a new alert
    edited = COMPOSE.replace("--speculative-algorithm NEXTN", "--speculative-algorithm  EAGLE")
    (tmp_path / "edited" / "compose.yaml").write_text(edited, encoding="utf-8")

    line_before, hash_before = _fingerprint(tmp_path / "before")
    line_after, hash_after = _fingerprint(tmp_path / "after")
    _, hash_edited = _fingerprint(tmp_path / "edited")
    assert (line_before, line_after) == (9, 15)
    assert hash_after == hash_before
    assert hash_edited != hash_before
