"""Fixtures for the Cloud Storage JSON API client suites: Google's and Firebase's server-side libraries
(google-cloud-storage, firebase-admin, gcsfs) pointed at a live gateway with `STORAGE_EMULATOR_HOST`, as a
production user would point them, with the admin key passed through the libraries' ordinary credential objects.

Every client test runs once per backend: `file` (embedded) and `gcs` (`gs://` on fake-gcs-server, when
PC_FAKE_GCS_URL / STORAGE_EMULATOR_HOST is set; `make test` starts one). One gateway per backend per module.
The calls pass `retry=None` and short timeouts: the libraries retry 5xx and connection errors for minutes by
default, which would hide a failure behind a slow test.
"""
from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest

from clientkit import FAKE_GCS, start_gateway
from harness import Server


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" not in metafunc.fixturenames:
        return
    params = [pytest.param("file", id="file")]
    marks = [] if FAKE_GCS else [pytest.mark.skip(reason="no GCS emulator (PC_FAKE_GCS_URL unset; `make test` starts one)")]
    params.append(pytest.param("gcs", id="gcs", marks=marks))
    metafunc.parametrize("backend", params, indirect=True, scope="module")


@pytest.fixture(scope="module")
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="module")
def admin_token() -> str:
    return secrets.token_urlsafe(32)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory, backend: str, admin_token: str) -> Iterator[Server]:
    workdir = tmp_path_factory.mktemp(f"clients-{backend}")
    (workdir / "admin.key").write_text(admin_token + "\n")
    server = start_gateway(workdir, backend, extra=["--admin-key", str(workdir / "admin.key")])
    yield server
    server.stop(timeout=10)
    server.kill()


@pytest.fixture
def emulator_host(gateway: Server, monkeypatch: pytest.MonkeyPatch) -> str:
    """Points the libraries at the gateway, exactly as at the Firebase emulator."""
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", gateway.url)
    return gateway.url


# --- the S3 client suites (test_s3_*.py) ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Iterator["S3Gateway"]:
    """A gateway with its S3 listener on `backend` (skipped when the binary has no S3 surface)."""
    from s3kit import start_s3_gateway

    gateway = start_s3_gateway(tmp_path_factory.mktemp(f"s3-{backend}"), backend)
    yield gateway
    gateway.stop()
