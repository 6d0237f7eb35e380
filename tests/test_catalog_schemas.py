"""The data catalogs shipped in the package validate against their schemas in schemas/."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(("data", "schema"), [("gpus.json", "gpus.schema.json"), ("models.json", "models.schema.json")])
def test_catalog_matches_schema(data: str, schema: str) -> None:
    document = json.loads((ROOT / "mtplint" / "data" / data).read_text())
    jsonschema.Draft202012Validator(json.loads((ROOT / "schemas" / schema).read_text())).validate(document)


def test_gpu_ids_unique_and_model_patterns_compile() -> None:
    gpus = json.loads((ROOT / "mtplint" / "data" / "gpus.json").read_text())["gpus"]
    assert len({g["id"] for g in gpus}) == len(gpus)
    for model in json.loads((ROOT / "mtplint" / "data" / "models.json").read_text())["models"]:
        for pattern in model["patterns"]:
            re.compile(pattern)
