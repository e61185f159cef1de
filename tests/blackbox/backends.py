"""Fresh buckets on each storage backend, for suites that run once per backend (stdlib only: the browser venv
imports this too).

`file` is the embedded backend; `gcs` is `gs://` on fake-gcs-server (PC_FAKE_GCS_URL / STORAGE_EMULATOR_HOST)
and `s3` is `s3://` on moto (PC_MOTO_URL / AWS_ENDPOINT_URL), both started by `scripts/emulators.sh` as
`make test` does. Without an emulator, its backend's tests skip with the reason."""
from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

import pytest

from harness import request

BACKENDS = ("file", "gcs", "s3")


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
    return None


def params() -> list[object]:
    """`pytest.param` per backend, skipped with the reason when its emulator is absent."""
    return [pytest.param(backend, id=backend,
                         marks=[pytest.mark.skip(reason=reason)] if (reason := unavailable(backend)) else [])
            for backend in BACKENDS]


def bucket_url(backend: str, tmp: Path) -> str:
    """A fresh, empty bucket on `backend`, as the `--bucket NAME=URL` value that serves it."""
    if backend == "file":
        return f"file:{tmp / 'data'}"
    name = "iso-" + secrets.token_hex(6)
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
    raise AssertionError(backend)
