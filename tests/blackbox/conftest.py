"""Fixtures shared by the black-box suites (stdlib only: the pyrebase venv imports this too)."""
from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness import ALLOW_ALL_RULES, Server, allow_all_server, signing_key_file


@pytest.fixture(scope="module")
def module_gateway(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One started allow-all gateway on an embedded `test-bucket`, shared by the tests of a module."""
    name = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")
    workdir = tmp_path_factory.mktemp(name)
    server = allow_all_server(workdir, f"test-bucket=file:{workdir / 'data'}", name)
    server.start()
    yield server
    server.stop(timeout=10)
    server.kill()


@pytest.fixture
def servers() -> Iterator[list[Server]]:
    """Every Server a test creates is registered here and stopped (then killed) at teardown."""
    started: list[Server] = []
    yield started
    for server in started:
        server.stop(timeout=10)
        server.kill()


@pytest.fixture
def allow_all_rules(tmp_path: Path) -> Path:
    path = tmp_path / "allow-all.rules"
    path.write_text(ALLOW_ALL_RULES)
    return path


@pytest.fixture
def admin_key(tmp_path: Path) -> tuple[Path, str]:
    key = secrets.token_hex(24)
    path = tmp_path / "admin.key"
    path.write_text(key + "\n")
    return path, key


@pytest.fixture
def start_server(tmp_path: Path, servers: list[Server], allow_all_rules: Path
                 ) -> Callable[..., Server]:
    """start_server(bucket="b", rules=None, extra=[...]) → a ready Server on a temp data dir."""
    counter = iter(range(1000))

    def start(bucket: str = "test-bucket", rules: Path | None = None, extra: list[str] | None = None,
              data_dir: Path | None = None, name: str | None = None, signing_key: Path | None = None) -> Server:
        index = next(counter)
        workdir = tmp_path / f"server{index}"
        workdir.mkdir(parents=True, exist_ok=True)
        data = data_dir or (workdir / "data")
        if signing_key is None:
            signing_key = workdir / "signing.key"
            signing_key_file(signing_key, "k1")
        args = ["--bucket", f"{bucket}=file:{data}", "--rules", str(rules or allow_all_rules),
                "--signing-key", str(signing_key), *(extra or [])]
        server = Server(workdir=workdir, args=args, name=name or f"portcullis{index}")
        servers.append(server)
        return server.start()

    return start
