"""schemathesis against the OpenAPI documents (openapi/portcullis.yaml for v0, openapi/gcs-json.yaml for the
Cloud Storage JSON API) and a live gateway, with every check (`--checks all`).

The server runs with allow-all rules and an admin key (sent on every request) so that generated requests
exercise the handlers rather than stopping at authorization. Examples are bounded (--max-examples) and seeded
so the run is repeatable and fits the CI budget. One worker: with two, schemathesis's own generator sometimes
fails inside Python's `ast` (a race between its threads, reported as a runtime error, not a finding).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness import ROOT

SPEC = ROOT / "openapi" / "portcullis.yaml"
JSON_API_SPEC = ROOT / "openapi" / "gcs-json.yaml"
ST = Path(sys.executable).parent / "st"


def run_schemathesis(url: str, report: Path, *extra: str, spec: Path = SPEC, workers: int = 1
                     ) -> subprocess.CompletedProcess[str]:
    command = [
        str(ST), "run", str(spec), "--url", url, "--checks", "all",
        "--max-examples", "25", "--workers", str(workers), "--request-timeout", "10",
        "--seed", "20261130", "--suppress-health-check", "all", "--no-color",
        "--report", "junit", "--report-junit-path", str(report), *extra,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)


@pytest.fixture
def spec() -> Path:
    assert SPEC.exists(), "openapi/portcullis.yaml is missing"
    return SPEC


def test_schemathesis_all_checks(spec: Path, start_server, admin_key, tmp_path: Path) -> None:
    key_path, key = admin_key
    server = start_server(bucket="default-bucket", extra=["--admin-key", str(key_path)])
    result = run_schemathesis(server.url, tmp_path / "st.xml", "--header", f"Authorization: Bearer {key}")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-12000:]


def test_schemathesis_json_api_all_checks(start_server, admin_key, tmp_path: Path) -> None:
    """The JSON API document."""
    assert JSON_API_SPEC.exists(), "openapi/gcs-json.yaml is missing"
    key_path, key = admin_key
    # A bucket root, so the bucket calls are served (generated names create buckets there).
    server = start_server(bucket="default-bucket",
                          extra=["--admin-key", str(key_path), "--bucket-root", f"file:{tmp_path / 'root'}"])
    result = run_schemathesis(server.url, tmp_path / "st.xml", "--header", f"Authorization: Bearer {key}",
                              spec=JSON_API_SPEC, workers=1)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-12000:]
