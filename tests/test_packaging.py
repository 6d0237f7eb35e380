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


def test_a_wheel_is_not_built_with_a_stale_compiled_rule_catalog(tmp_path: Path) -> None:
    """An installed package trusts its compiled rule catalog (it reads no rule file to check it), so
    a wheel is built only with the catalog compiled from the rule files it ships (hatch_build.py)."""
    import shutil

    source = tmp_path / "source"
    source.mkdir()
    for name in ("mtplint", "rules", "schemas"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "hatch_build.py", "README.md"):
        shutil.copy(ROOT / name, source / name)
    edited = source / "rules" / "MTP507.yaml"
    edited.write_text(edited.read_text(encoding="utf-8").replace("severity: warning", "severity: error", 1),
                      encoding="utf-8")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                            str(tmp_path / "dist"), str(source)], capture_output=True, text=True)
    assert built.returncode != 0
    assert "builtin_rules.json, builtin_docs.json: not compiled from rules/*.yaml" in built.stdout + built.stderr
    assert not list((tmp_path / "dist").glob("*.whl"))
