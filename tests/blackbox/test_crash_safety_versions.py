"""Crash safety of versioned overwrites on the embedded backend: `kill -9` while many objects of a bucket with
versioning enabled are being overwritten, then restart.

For every object, after the restart, exactly one of two states holds: the old generation live and no new one, or
the new generation live (its exact bytes) and the old one noncurrent with `timeDeleted` — never the new one
without the old, never both live, never torn. Every blob file belongs to a listed generation.
"""
from __future__ import annotations

import http.client
import json
import os
import secrets
import threading
import time
import urllib.parse
from pathlib import Path

from harness import Server, md5_b64, request

BUCKET = "versioned-crash"
OBJECTS = 24


def slow_overwrite(base: str, token: str, name: str, payload: bytes, acked: threading.Semaphore,
                   outcome: dict[str, int | None]) -> None:
    """A JSON API media upload whose body trickles out, so many overwrites are mid-body at the kill."""
    parts = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        conn.putrequest("POST", f"/upload/storage/v1/b/{BUCKET}/o?"
                        + urllib.parse.urlencode({"uploadType": "media", "name": name}))
        conn.putheader("Authorization", f"Bearer {token}")
        conn.putheader("Content-Type", "application/octet-stream")
        conn.putheader("Content-Length", str(len(payload)))
        conn.endheaders()
        view = memoryview(payload)
        for offset in range(0, len(view), 65536):
            conn.send(view[offset:offset + 65536])
            time.sleep(0.01)
        response = conn.getresponse()
        response.read()
        outcome[name] = response.status
        if response.status == 200:
            acked.release()
    except (OSError, http.client.HTTPException):
        pass
    finally:
        conn.close()


def versions_of(base: str, token: str, name: str) -> list[dict]:
    response = request("GET", f"{base}/storage/v1/b/{BUCKET}/o?"
                       + urllib.parse.urlencode({"prefix": name, "versions": "true"}),
                       headers={"Authorization": f"Bearer {token}"})
    assert response.status == 200, response.body
    return [item for item in response.json().get("items", []) if item["name"] == name]


def test_kill_dash_nine_mid_versioned_overwrite(start_server, tmp_path: Path) -> None:
    token = secrets.token_urlsafe(32)
    (tmp_path / "admin.key").write_text(token + "\n")
    root = tmp_path / "root"
    server: Server = start_server(extra=["--admin-key", str(tmp_path / "admin.key"), "--bucket-root", f"file:{root}"])
    auth = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    created = request("POST", f"{server.url}/storage/v1/b?project=p",
                      body=json.dumps({"name": BUCKET, "versioning": {"enabled": True}}).encode(), headers=auth)
    assert created.status == 200, created.body

    old = {f"obj-{i:02d}": os.urandom(1000 + i) for i in range(OBJECTS)}
    new = {name: os.urandom(1024 * 1024 + i) for i, name in enumerate(old)}
    for name, payload in old.items():
        response = request("POST", f"{server.url}/upload/storage/v1/b/{BUCKET}/o?"
                           + urllib.parse.urlencode({"uploadType": "media", "name": name}), body=payload,
                           headers={"Authorization": f"Bearer {token}"})
        assert response.status == 200, response.body

    acked = threading.Semaphore(0)
    outcome: dict[str, int | None] = {name: None for name in old}
    threads = [threading.Thread(target=slow_overwrite, args=(server.url, token, name, new[name], acked, outcome),
                                daemon=True) for name in old]
    for thread in threads:
        thread.start()
    for _ in range(3):
        assert acked.acquire(timeout=60), "overwrites are not being acknowledged"
    server.kill()
    for thread in threads:
        thread.join(timeout=60)
    assert any(status is None for status in outcome.values()), "every overwrite finished before the kill"

    server.start()
    total = 0
    for name in old:
        versions = versions_of(server.url, token, name)
        total += len(versions)
        assert len(versions) in (1, 2), f"{name}: {len(versions)} generations"
        live = [v for v in versions if "timeDeleted" not in v]
        assert len(live) == 1, f"{name}: {len(live)} live generations"
        if len(versions) == 1:
            assert outcome[name] != 200, f"{name}: acknowledged overwrite lost"
            assert live[0]["md5Hash"] == md5_b64(old[name]), f"{name}: old generation changed"
        else:
            noncurrent, current = versions
            assert "timeDeleted" in noncurrent and "timeDeleted" not in current, f"{name}: wrong order"
            assert noncurrent["md5Hash"] == md5_b64(old[name]), f"{name}: noncurrent generation torn"
            assert current["md5Hash"] == md5_b64(new[name]), f"{name}: new generation torn"
            kept = request("GET", f"{server.url}/storage/v1/b/{BUCKET}/o/{name}?"
                           + urllib.parse.urlencode({"alt": "media", "generation": noncurrent["generation"]}),
                           headers={"Authorization": f"Bearer {token}"})
            assert kept.status == 200 and kept.body == old[name], f"{name}: noncurrent bytes differ"
    blob_files = [p for p in (root / "blobs").rglob("*") if p.is_file()]
    assert len(blob_files) == total, f"{len(blob_files)} blob files for {total} generations"
