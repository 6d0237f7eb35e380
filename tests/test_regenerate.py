"""``tools/regenerate.py``: one command rewrites every artefact derived from files in the
repository, and ``--check`` proves the committed ones are current."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _regenerate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("regenerate", ROOT / "tools" / "regenerate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_artefacts_are_current() -> None:
    done = subprocess.run([sys.executable, "tools/regenerate.py", "--check"], cwd=ROOT, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_artefact_is_covered() -> None:
    """The rule catalog's two files, and each engine's compact tables and flag index."""
    names = sorted(artefact.path.relative_to(ROOT).as_posix() for artefact in _regenerate().artefacts())
    assert names == ["mtplint/checks/builtin_docs.json", "mtplint/checks/builtin_rules.json",
                     "mtplint/engines/data/sglang-flags.txt", "mtplint/engines/data/sglang-tables.json",
                     "mtplint/engines/data/vllm-flags.txt", "mtplint/engines/data/vllm-tables.json"]


def test_a_rule_edited_without_regenerating_is_named_then_rewritten(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The compiled catalog as it was before a rule's summary changed: ``--check`` names it and
    writes nothing; the plain command rewrites it to what the rule files give."""
    regenerate = _regenerate()
    real = next(artefact for artefact in regenerate.artefacts() if artefact.path.name == "builtin_rules.json")
    compiled = json.loads(real.path.read_text(encoding="utf-8"))
    compiled["rules"][0]["data"]["summary"] = "An older summary."
    stale_copy = tmp_path / "builtin_rules.json"
    stale_copy.write_text(json.dumps(compiled), encoding="utf-8")
    artefact = regenerate.Artefact(stale_copy, real.render)

    assert regenerate.main(["--check"], chosen=[artefact]) == 1
    assert f"stale: {stale_copy}" in capsys.readouterr().out
    assert json.loads(stale_copy.read_text(encoding="utf-8")) == compiled

    assert regenerate.main([], chosen=[artefact]) == 0
    assert stale_copy.read_text(encoding="utf-8") == real.render()
    assert regenerate.main(["--check"], chosen=[artefact]) == 0
