"""Fresh buckets on each storage backend, for suites that run once per backend (stdlib only: the browser venv
imports this too).

`file` is the embedded backend; `gcs` is `gs://` on fake-gcs-server (PC_FAKE_GCS_URL / STORAGE_EMULATOR_HOST),
`s3` is `s3://` on moto (PC_MOTO_URL / AWS_ENDPOINT_URL), both started by `scripts/emulators.sh` as `make test`
does; `rgw` is `s3://` on Ceph's RADOS Gateway (PC_RGW_URL, PC_RGW_ACCESS_KEY, PC_RGW_SECRET_KEY), a real S3
engine that checks SigV4, started by `scripts/rgw.sh`. Without an emulator, its backend's tests skip with the
reason."""
from __future__ import annotations

import hashlib
import json
import os
import secrets
import subprocess
from pathlib import Path

import pytest

from harness import request

BACKENDS = ("file", "gcs", "s3", "rgw")


def emulator(*names: str) -> str | None:
    for name in names:
        value = os.environ.get(name)
        if value:
            return value if value.startswith("http") else "http://" + value
    return None


def unavailable(backend: str) -> str | None:
    """Why `backend` cannot run here, or None."""
    if backend == "gcs" and not emulator("PC_FAKE_GCS_URL", "STORAGE_EMULATOR_HOST"):
        return "no GCS emulator (PC_FAKE_GCS_URL / STORAGE_EMULATOR_HOST unset; `make test` starts one)"
    if backend == "s3" and not emulator("PC_MOTO_URL", "AWS_ENDPOINT_URL"):
        return "no S3 emulator (PC_MOTO_URL / AWS_ENDPOINT_URL unset; `make test` starts one)"
    if backend == "rgw" and not all(os.environ.get(f"PC_RGW_{v}") for v in ("URL", "ACCESS_KEY", "SECRET_KEY")):
        return "no Ceph RGW (PC_RGW_* unset; `make test` starts one with scripts/rgw.sh)"
    return None


def rgw_env() -> dict[str, str]:
    """What a gateway on Ceph RGW reads: its endpoint and the test user's key."""
    return {"AWS_ENDPOINT_URL": os.environ["PC_RGW_URL"], "AWS_ACCESS_KEY_ID": os.environ["PC_RGW_ACCESS_KEY"],
            "AWS_SECRET_ACCESS_KEY": os.environ["PC_RGW_SECRET_KEY"],
            "AWS_REGION": os.environ.get("PC_RGW_REGION", "us-east-1")}


def backend_env(backend: str) -> dict[str, str]:
    """The environment a gateway serving `backend` needs beyond the test process's own."""
    return rgw_env() if backend == "rgw" else {}


def signed_s3(backend: str, method: str, url_path: str, *, body: bytes = b"",
              env: dict[str, str] | None = None) -> tuple[int, bytes]:
    """A request to the S3 server of a signature-checking backend (`rgw`), signed by curl; status and body.
    `url_path` is `/bucket[/key][?query]`, already encoded; `env` (AWS_* as a gateway reads them) picks another
    server than the shared one."""
    env = env or backend_env(backend)
    data = ["--data-binary", "@-", "-H", "Content-Type: application/octet-stream"] if body else []
    out = subprocess.run(["curl", "-sS", "-o", "-", "-w", "\\n%{http_code}", "-X", method, *data,
                          "--aws-sigv4", f"aws:amz:{env['AWS_REGION']}:s3",
                          "--user", f"{env['AWS_ACCESS_KEY_ID']}:{env['AWS_SECRET_ACCESS_KEY']}",
                          "-H", "x-amz-content-sha256: " + hashlib.sha256(body).hexdigest(),
                          env["AWS_ENDPOINT_URL"] + url_path],
                         input=body, capture_output=True, timeout=30)
    answer, _, status = out.stdout.rpartition(b"\n")
    assert status.isdigit(), (out.stdout[-300:], out.stderr)
    return int(status), answer


def params(backends: tuple[str, ...] = BACKENDS) -> list[object]:
    """`pytest.param` per backend, skipped with the reason when its emulator is absent."""
    return [pytest.param(backend, id=backend,
                         marks=[pytest.mark.skip(reason=reason)] if (reason := unavailable(backend)) else [])
            for backend in backends]


def bucket_url(backend: str, tmp: Path) -> str:
    """A fresh, empty bucket on `backend`, as the `--bucket NAME=URL` value that serves it."""
    if backend == "file":
        return f"file:{tmp / 'data'}"
    name = "qa-" + secrets.token_hex(6)
    if backend == "gcs":
        base = emulator("PC_FAKE_GCS_URL", "STORAGE_EMULATOR_HOST")
        made = request("POST", f"{base}/storage/v1/b?project=test", body=json.dumps({"name": name}).encode(),
                       headers={"Content-Type": "application/json"})
        assert made.status == 200, (made.status, made.body[:300])
        return f"gs://{name}"
    if backend == "s3":
        made = request("PUT", f"{emulator('PC_MOTO_URL', 'AWS_ENDPOINT_URL')}/{name}", body=b"")
        assert made.status == 200, (made.status, made.body[:300])
        return f"s3://{name}"
    if backend == "rgw":
        status, answer = signed_s3(backend, "PUT", f"/{name}")
        assert status == 200, (status, answer[:300])
        return f"s3://{name}"
    raise AssertionError(backend)
