"""schemathesis against openapi/portcullis.yaml and a live gateway, with every check (`--checks all`).

The server runs with allow-all rules and an admin key (sent on every request) so that generated requests
exercise the handlers rather than stopping at authorization. Examples are bounded (--max-examples) and seeded
so the run is repeatable and fits the CI budget.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness import ROOT

SPEC = ROOT / "openapi" / "portcullis.yaml"
ST = Path(sys.executable).parent / "st"


def run_schemathesis(url: str, report: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [
        str(ST), "run", str(SPEC), "--url", url, "--checks", "all",
        "--max-examples", "25", "--workers", "2", "--request-timeout", "10",
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
