"""Engine version evidence and GPU identity."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mtplint.catalogs import SHIPPED
from mtplint.extract import FileLoader
from mtplint.extract.launch import VersionHint
from mtplint.pipeline import Options, run
from mtplint.versions import PinMemo, compare, pins_in_text, pins_near, resolve
from tests.conftest import write_files

KNOWN = ["0.5.5", "0.5.9", "0.5.10", "0.5.23"]


def test_compare_versions_and_builds() -> None:
    assert compare("0.5.10", "0.5.9") > 0
    assert compare("0.5.10.post1", "0.5.10") > 0
    assert compare("0.5.10rc0", "0.5.10") < 0
    assert compare("b10413", "b9464") > 0


def test_exact_pin_fixes_the_version() -> None:
    version = resolve("sglang", KNOWN, [VersionHint("sglang", "==0.5.9", "image")])
    assert version.known and version.version == "0.5.9"
    assert version.at_least("0.5.7") is True and version.at_least("0.5.10") is False


def test_lower_bound_narrows_but_does_not_fix() -> None:
    version = resolve("sglang", KNOWN, [VersionHint("sglang", ">=0.5.9", "pin"), VersionHint("sglang", "<0.5.11", "pin")])
    assert not version.known and version.version == "0.5.10"
    assert version.at_least("0.5.9") is True
    assert version.at_least("0.5.10") is None
    assert version.in_range("0.5.5", "0.5.11") is True


def test_unknown_version_assumes_newest() -> None:
    version = resolve("vllm", ["0.11.0", "0.33.0"], [])
    assert version.assumed and version.version == "0.33.0" and version.at_least("0.28.0") is None
    assert version.to_json()["assumed_version"] is True


def test_configured_version_wins() -> None:
    version = resolve("vllm", ["0.33.0"], [VersionHint("vllm", "==0.20.0", "image")], forced="0.11.0")
    assert version.known and version.version == "0.11.0" and version.source == "config"


def test_pins_in_requirements_pyproject_and_dockerfile(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("# vllm==0.1.0 is old\ntorch\nvllm[flashinfer]==0.11.0\n")
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "Dockerfile").write_text('FROM python:3.11\nRUN pip install "sglang[all]>=0.5.9,<0.5.11"\n')
    launch_file = tmp_path / "deploy" / "serve.sh"
    launch_file.write_text("vllm serve m\n")
    hints = pins_near(launch_file, tmp_path, FileLoader(tmp_path).load)
    assert {(h.engine, h.spec) for h in hints} == {("vllm", "==0.11.0"), ("sglang", ">=0.5.9"), ("sglang", "<0.5.11")}
    assert pins_in_text('dependencies = ["vllm>=0.28"]')[0].spec == ">=0.28"


def test_pins_of_a_symlinked_launch_file_are_those_beside_its_target(tmp_path: Path) -> None:
    """As before the per-directory memo: the file is resolved first, then its directory's pins read."""
    (tmp_path / "real").mkdir()
    (tmp_path / "app").mkdir()
    (tmp_path / "real" / "requirements.txt").write_text("vllm==0.8.5\n")
    (tmp_path / "app" / "requirements.txt").write_text("vllm==0.11.0\n")
    (tmp_path / "real" / "serve.sh").write_text("vllm serve m\n")
    (tmp_path / "app" / "serve.sh").symlink_to(tmp_path / "real" / "serve.sh")
    for memo in (None, PinMemo()):
        hints = pins_near(tmp_path / "app" / "serve.sh", tmp_path, FileLoader(tmp_path).load, memo)
        assert [h.spec for h in hints] == ["==0.8.5"], memo



def test_pins_through_a_symlinked_directory_are_those_of_its_target_chain(tmp_path: Path) -> None:
    """One run's memo gives each launch the pins a fresh lookup gives: a directory reached through a
    symlinked parent reads the target's parents, a ``requirements/`` folder is read, a sibling is not."""
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "serve.txt").write_text("sglang>=0.5.9\n")
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "real" / "requirements.txt").write_text("vllm==0.8.5\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "requirements.txt").write_text("vllm==0.11.0\n")
    (tmp_path / "linked").symlink_to(tmp_path / "real", target_is_directory=True)
    launches = [tmp_path / "linked" / "sub" / "serve.sh", tmp_path / "real" / "sub" / "serve.sh",
                tmp_path / "other" / "serve.sh", tmp_path / "serve.sh"]
    (tmp_path / "real" / "sub" / "serve.sh").write_text("vllm serve m\n")
    (tmp_path / "other" / "serve.sh").write_text("vllm serve m\n")
    (tmp_path / "serve.sh").write_text("vllm serve m\n")
    expected = {
        launches[0]: ["==0.8.5", ">=0.5.9"],
        launches[1]: ["==0.8.5", ">=0.5.9"],
        launches[2]: ["==0.11.0", ">=0.5.9"],
        launches[3]: [">=0.5.9"],
    }
    # the memo resolves by os.path.realpath, or by a run's loader (as the pipeline's does)
    for real_path in (os.path.realpath, FileLoader(tmp_path).real_path):
        memo = PinMemo()
        for launch in [*launches, *launches]:
            load = FileLoader(tmp_path).load
            fresh = [h.spec for h in pins_near(launch, tmp_path, load)]
            remembered = [h.spec for h in pins_near(launch, tmp_path, load, memo, real_path)]
            assert fresh == remembered == expected[launch], launch
    # a root reached through a symlink stops the walk at the same place
    assert [h.spec for h in pins_near(launches[0], tmp_path / "linked", FileLoader(tmp_path).load, PinMemo())] == ["==0.8.5"]


def test_a_directory_without_pin_names_is_passed_over_as_each_pattern_would(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One test per name says a directory has no pin file: what matching every pattern finds."""
    from mtplint import versions

    layouts = [
        [], ["serve.sh", "README.md"], ["requirements.txt"], ["requirements-dev.txt", "x.py"], ["REQUIREMENTS.txt"],
        ["pyproject.toml"], ["pyproject.toml.bak"], ["Dockerfile"], ["Dockerfile.gpu"], ["app.Dockerfile"],
        ["dockerfile"], ["constraints.txt"], ["constraints-cu12.txt"], ["requirements/serve.txt"],
        ["Requirements/serve.txt"], ["requirements/"], ["requirements.txt/"], ["notrequirements.txt"],
    ]
    texts = {}
    for number, layout in enumerate(layouts):
        directory = tmp_path / str(number)
        directory.mkdir()
        for name in layout:
            if name.endswith("/"):
                (directory / name).mkdir()
                continue
            (directory / name).parent.mkdir(exist_ok=True)
            (directory / name).write_text("vllm>=0.11\n")
        texts[number] = directory
    quick = {number: versions._pins_in_directory(directory, FileLoader(tmp_path).load)
             for number, directory in texts.items()}
    monkeypatch.setattr(versions, "_PIN_NAME_ENDS", None)
    every_pattern = {number: versions._pins_in_directory(directory, FileLoader(tmp_path).load)
                     for number, directory in texts.items()}
    assert quick == every_pattern
    assert sum(1 for hints, _ in quick.values() if hints) >= 8


def test_gpu_names_map_to_catalog_ids() -> None:
    cases = {
        "NVIDIA-GeForce-RTX-4090": "rtx-4090",
        "NVIDIA GeForce RTX 3090": "rtx-3090",
        "NVIDIA-H100-80GB-HBM3": "h100-sxm",
        "nvidia-h100-80gb": "h100-sxm",
        "NVIDIA H100 PCIe": "h100-pcie",
        "NVIDIA GH200 480GB": "gh200",
        "NVIDIA-H200": "h200",
        "NVIDIA-L40S": "l40s",
        "NVIDIA-A100-SXM4-40GB": "a100-40g",
        "NVIDIA-A100-80GB-PCIe": "a100-80g",
        "NVIDIA-L4-SHARED": "l4",
    }
    for name, expected in cases.items():
        gpu = SHIPPED.find_gpu(name)
        assert gpu is not None and gpu.id == expected, name
    assert SHIPPED.find_gpu("some laptop") is None
    gpu, count, _ = SHIPPED.parse_gpu_spec("rtx-4090x2")
    assert gpu is not None and gpu.memory_mib == 24564 and count == 2


def test_open_ranges() -> None:
    version = resolve("vllm", ["0.11.0", "0.33.0"], [VersionHint("vllm", "==0.32.0", "image")])
    assert version.in_range(None, None) is True
    assert version.in_range("0.28.0", None) is True
    assert version.in_range(None, "0.28.0") is False
    assert version.in_range(None, "0.33.0") is True


def test_a_launch_folder_is_listed_once_for_its_compose_files_and_version_pins(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # compose looks for the override and .env beside the file, the version pins for a requirements
    # file in the same folders: one listing of each folder serves both
    compose = ("services:\n  vllm:\n    image: vllm/vllm-openai:latest\n"
               "    command: [\"--model\", \"Qwen/Qwen3-8B\", \"--max-num-seqs\", \"64\"]\n")
    write_files(tmp_path, {
        "requirements.txt": "vllm==0.10.2\n",
        **{f"deploy/app-{number}/compose.yaml": compose for number in range(3)},
    })
    listed: list[str] = []
    listdir = os.listdir

    def counted(path: str = ".") -> list[str]:
        if os.path.realpath(path).startswith(str(tmp_path.resolve())):
            listed.append(os.path.realpath(path))
        return listdir(path)

    monkeypatch.setattr(os, "listdir", counted)
    result = run([tmp_path / "deploy"], Options(root=tmp_path))
    assert [report.version.version for report in result.launches] == ["0.10.2"] * 3
    assert sorted(set(listed)) == sorted(listed)
    app = (tmp_path / "deploy/app-0").resolve()
    assert app.as_posix() in listed and app.parent.parent.as_posix() in listed
