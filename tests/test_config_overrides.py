"""The command line as a typed overrides record, and the settings configuration builds from it.

:mod:`mtplint.cli` turns its arguments into an :class:`~mtplint.config.Overrides`; configuration
takes that record (not argparse's namespace) and gives the settings of each configuration, the
GPU and model catalogs included -- no catalog is switched process-wide.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mtplint.catalogs import SHIPPED
from mtplint.config import Overrides, settings_for
from mtplint.config_files import ConfigError
from mtplint.versions import parse_engine_versions
from tests.test_user_catalog import PYPROJECT

#: a team's configuration: its own GPU, a pinned vLLM, MTP2 rules selected
TEAM = PYPROJECT.replace('select = ["MTP2"]', 'select = ["MTP2"]\ngpu = "rtx-4060-ti-16g"\n'
                         '[tool.mtplint.engine-versions]\nvllm = "0.27.1"\n', 1)


def test_engine_versions_are_parsed_below_cli_and_configuration() -> None:
    assert parse_engine_versions(["vllm=0.11.0,sglang=v0.5.9", "llama.cpp = b9180", "vllm=0.30.0"]) == {
        "vllm": "0.30.0", "sglang": "v0.5.9", "llama.cpp": "b9180"}
    with pytest.raises(ValueError, match=r"expects ENGINE=VERSION .* got 'vllm'"):
        parse_engine_versions(["vllm"])


def test_settings_come_from_the_configuration_with_the_command_line_on_top(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(TEAM, encoding="utf-8")
    compose = tmp_path / "compose.yaml"
    settings, output_format = settings_for(Overrides(), compose)
    options = settings.pipeline
    assert (options.gpu, options.engine_versions, output_format) == ("rtx-4060-ti-16g", {"vllm": "0.27.1"}, "full")
    assert all(code.startswith("MTP2") for code in settings.select or []) and settings.select
    # the configuration's GPU is in these settings' catalogs, and only there
    own = options.catalogs.find_gpu("rtx-4060-ti-16g")
    assert own is not None and own.memory_mib == 16380 and own.user
    assert SHIPPED.find_gpu("rtx-4060-ti-16g") is None
    assert settings.configs is not None and settings.configs.groups == [settings]

    overrides = Overrides(gpu="h100-sxmx2", engine_versions={"vllm": "0.32.0"}, select=["MTP1"],
                          excludes=("legacy/*",), respect_gitignore=False, objective="throughput",
                          output_format="json")
    settings, output_format = settings_for(overrides, compose)
    options = settings.pipeline
    assert (options.gpu, options.engine_versions, output_format) == ("h100-sxmx2", {"vllm": "0.32.0"}, "json")
    assert (options.excludes, options.respect_gitignore, settings.objective) == (("legacy/*",), False, "throughput")
    assert settings.select and all(code.startswith("MTP1") for code in settings.select)
    # the configured GPU stays known with another one chosen on the command line
    assert options.catalogs.find_gpu("rtx-4060-ti-16g") is not None


def test_isolated_and_an_unknown_command_line_version_are_the_records(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(TEAM, encoding="utf-8")
    settings, _ = settings_for(Overrides(isolated=True), tmp_path / "compose.yaml")
    assert settings.pipeline.gpu is None and settings.pipeline.catalogs is SHIPPED and settings.configs is None
    with pytest.raises(ConfigError, match=r"--engine-version: key `engine-versions.tgi`: unknown engine 'tgi'"):
        settings_for(Overrides(engine_versions={"tgi": "1.0"}), tmp_path / "compose.yaml")
