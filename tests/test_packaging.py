"""The wheel carries the rule catalog and the schemas, not only the checkout (DEVELOPERS: layout)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_ships_rules_schemas_and_data(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path),
                    str(ROOT)], check=True, capture_output=True)
    [wheel] = tmp_path.glob("mtplint-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    rules = {Path(n).name for n in names if n.startswith("mtplint/_shipped/rules/")}
    assert rules >= {p.name for p in (ROOT / "rules").glob("MTP*.yaml")}
    schemas = {Path(n).name for n in names if n.startswith("mtplint/_shipped/schemas/")}
    assert schemas >= {p.name for p in (ROOT / "schemas").glob("*.json")}
    assert "mtplint/data/gpus.json" in names and "mtplint/py.typed" in names
    # the compiled rule catalog and its documentation: without them every run parses the YAML
    assert {"mtplint/checks/builtin_rules.json", "mtplint/checks/builtin_docs.json"} <= names
    assert any(n.startswith("mtplint/engines/data/vllm/") for n in names)
