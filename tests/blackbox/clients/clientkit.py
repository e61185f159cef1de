"""Shared constants and helpers of the Cloud Storage JSON API client suites (see conftest.py)."""
from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

from harness import ALLOW_ALL_RULES, Server, request, signing_key_file

BUCKET = "demo-project.appspot.com"
PROJECT = "demo-project"
# Captured at import: the tests below point STORAGE_EMULATOR_HOST at the gateway, the gs:// backend needs the
# emulator's own address.
FAKE_GCS = os.environ.get("PC_FAKE_GCS_URL") or os.environ.get("STORAGE_EMULATOR_HOST")
if FAKE_GCS and not FAKE_GCS.startswith("http"):
    FAKE_GCS = "http://" + FAKE_GCS
TIMEOUT = 20
# gcsfs probes gRPC for about a minute against a custom endpoint unless told not to; it reads
# this when it is imported, so it is set before any test module imports it.
os.environ["GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT"] = "false"


def bucket_url(backend: str, workdir: Path) -> str:
    """A fresh, empty bucket on `backend`, as the `--bucket NAME=URL` value."""
    if backend == "file":
        return f"file:{workdir / 'data'}"
    name = "clients-" + secrets.token_hex(6)
    made = request("POST", f"{FAKE_GCS}/storage/v1/b?project=test", body=json.dumps({"name": name}).encode(),
                   headers={"Content-Type": "application/json"})
    assert made.status == 200, (made.status, made.body[:300])
    return f"gs://{name}"


def start_gateway(workdir: Path, backend: str, rules: str = ALLOW_ALL_RULES, extra: list[str] | None = None,
                  name: str = "clients") -> Server:
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "storage.rules").write_text(rules)
    signing_key_file(workdir / "signing.key", "k1")
    args = ["--bucket", f"{BUCKET}={bucket_url(backend, workdir)}", "--rules", str(workdir / "storage.rules"),
            "--signing-key", str(workdir / "signing.key"), *(extra or [])]
    env = {"STORAGE_EMULATOR_HOST": FAKE_GCS} if backend == "gcs" else {}
    return Server(workdir=workdir, args=args, env=env, name=f"{name}-{backend}").start()
