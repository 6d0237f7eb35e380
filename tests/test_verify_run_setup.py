"""The fixing that verifies a ``check``'s fixes (:func:`mtplint.fix.verify.verified`) sets up its
tries with what the run built: the run's configuration groups (rules selected once) and its
loader's answers about paths (the folders from the launch up to the root, listed once for the
version pins). Counted by hooking the listing and the rule selection, not timed.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest

from mtplint.checks import Finding, applies
from mtplint.checks.selection import selected_rules as real_selection
from mtplint.config import LintSettings
from mtplint.extract.launch import VersionHint
from mtplint.files import Listing
from mtplint.files import listing_of as real_listing
from mtplint.fix.verify import verified
from mtplint.lint import LintResult, lint
from mtplint.pipeline import Options
from mtplint.source import SourceFile
from mtplint.versions import may_be_pin_file
from mtplint.versions import pins_in_text as real_pins
from tests.conftest import write_files
from tests.test_startup_by_kind import SCRIPT

#: a script whose finding offers a fix ``--fix`` applies (SGLang resets the draft tokens to steps
#: + 1: MTP507 rewrites the value), a few folders below the root, beside a version pin the try reads again
TREE = {
    "services/api/serve.sh": SCRIPT,
    "services/api/requirements.txt": "sglang==0.5.2\n",
    "services/other/serve.sh": "#!/bin/sh\necho not a launch\n",
}


def _counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Count the directories listed and the rule selections resolved from now on."""
    calls: dict[str, list[str]] = {"listed": [], "selected": [], "pins read": []}

    def listing_of(directory: str) -> Listing:
        calls["listed"].append(directory)
        return real_listing(directory)

    def selected_rules(*args: Any) -> Any:
        calls["selected"].append("")
        return real_selection(*args)

    def pins_in_text(text: str, source: SourceFile | None = None) -> list[VersionHint]:
        calls["pins read"].append(source.display if source is not None else "")
        return real_pins(text, source)

    # where the loader lists folders, a configuration group selects its rules and the pins are read
    monkeypatch.setattr("mtplint.versions.pins_in_text", pins_in_text)
    monkeypatch.setattr("mtplint.extract.listing_of", listing_of)
    monkeypatch.setattr("mtplint.analysis.selected_rules", selected_rules)
    return calls


def _linted(root: Path) -> tuple[LintSettings, LintResult]:
    """The settings and the run of a one-file check of :data:`TREE`'s script (in ``root``, the
    working directory)."""
    write_files(root, TREE)
    settings = LintSettings(pipeline=Options(root=root))
    result = lint([root / "services/api/serve.sh"], settings, jobs=1)
    assert any(applies(finding.fix, False) for finding in result.findings)
    return settings, result


def _shown(findings: list[Finding]) -> list[tuple[str, str, object]]:
    return [(f.code, f.span.file, f.fix and (f.fix.applicability, f.fix.message)) for f in findings]


def test_the_verification_lists_no_folder_again_nor_selects_the_rules_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-file check whose finding offers a fix: the try of the fix reads the script's new text
    and its version pin, and lists no folder the run listed, nor resolves the rule selection again;
    the version pins beside it are those the run found (the fix changes no pin file). The fix is
    still marked as one ``--fix`` applies, as when the fixing sets itself up alone."""
    with contextlib.chdir(tmp_path):
        settings, result = _linted(tmp_path)
        findings = list(result.findings)
        calls = _counted(monkeypatch)
        with_run = list(verified(findings, settings, False, analysed=result.analysed))
        assert calls == {"listed": [], "selected": [], "pins read": []}
        # the fixing set up on its own lists the folders up to the root, and selects the rules
        alone = list(verified(findings, settings, False))
        assert calls["listed"] and calls["selected"]
        assert calls["pins read"] == ["services/api/requirements.txt"]
    assert _shown(with_run) == _shown(alone)
    assert any(applies(finding.fix, False) for finding in with_run)


def test_the_runs_loader_is_lent_to_one_fixing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's loader serves the first fixing only (a large run's batches do not pile up their
    paths in it); the run's rule selections serve every fixing."""
    with contextlib.chdir(tmp_path):
        settings, result = _linted(tmp_path)
        findings = list(result.findings)
        verified(findings, settings, False, analysed=result.analysed)
        calls = _counted(monkeypatch)
        verified(findings, settings, False, analysed=result.analysed)
    assert calls["listed"]
    assert calls["selected"] == []


@pytest.mark.parametrize(("path", "pins"), [
    ("svc/requirements.txt", True), ("svc/requirements-gpu.txt", True), ("svc/requirements/base.txt", True),
    ("svc/constraints.txt", True), ("svc/pyproject.toml", True), ("svc/Dockerfile", True),
    ("svc/Dockerfile.cuda", True), ("svc/api.Dockerfile", True),
    ("svc/serve.sh", False), ("svc/compose.yaml", False), ("svc/.env", False), ("svc/vllm.service", False),
])
def test_a_try_changing_a_pin_file_reads_the_pins_again(path: str, pins: bool) -> None:
    """A try whose texts stand for a file that may hold version pins (a Dockerfile's ``FROM`` tag
    too) does not take the pins the run found: the fix may have changed them."""
    assert may_be_pin_file(path) is pins


def test_the_batches_do_not_list_again_a_long_folder_without_pins(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree's services sit side by side in a long folder that holds no version pin: the run lists
    it once for the pins of the launches below it, and so does the verification of their fixes,
    whatever its batches (one a service here): each batch's tries look for the pins up to the root
    again, and know that folder holds none. The fixes are marked as they are when every batch looks."""
    monkeypatch.setattr("mtplint.versions.LONG_LISTING", 4)
    monkeypatch.setattr("mtplint.fix.verify.VERIFY_BATCH_FILES", 1)
    write_files(tmp_path, {f"services/svc{number}/serve.sh": SCRIPT for number in range(6)})
    with contextlib.chdir(tmp_path):
        settings = LintSettings(pipeline=Options(root=tmp_path))
        result = lint([tmp_path], settings, jobs=1)
        findings = list(result.findings)
        assert sum(applies(finding.fix, False) for finding in findings) >= 6
        calls = _counted(monkeypatch)
        with_run = list(verified(findings, settings, False, analysed=result.analysed))
        assert str(tmp_path / "services") not in calls["listed"]
        # set up without the run's analyses, each batch lists it anew
        alone = list(verified(findings, settings, False))
    assert calls["listed"].count(str(tmp_path / "services")) == 1
    assert _shown(with_run) == _shown(alone)
