"""Crash safety of the embedded backend: 50 concurrent uploads, `kill -9` mid-flight, restart.

After the restart:
- every upload that got a 200 is there, intact, with the MD5 it was acknowledged with;
- an object whose upload was not acknowledged is either absent or complete and correct — never torn — and only
  uploads whose body was fully sent before the kill may appear at all;
- no orphan files: DIR/tmp is empty, and DIR/blobs holds exactly one file per visible object
  (layout of Sources/Storage/Embedded/DirectoryLayout.swift).
"""
from __future__ import annotations

import hashlib
import http.client
import json
import os
import random
import threading
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from harness import Server, md5_b64, object_url, request

BUCKET = "crash-bucket"
UPLOADS = 50


@dataclass
class Upload:
    name: str
    payload: bytes
    body_sent: bool = False
    status: int | None = None
    acknowledged_md5: str | None = None
    error: str | None = None


def slow_upload(base: str, upload: Upload, acked: threading.Semaphore) -> None:
    """Media upload whose body trickles out in 64 KiB pieces, so many uploads are mid-body at the kill."""
    parts = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        conn.putrequest("POST", f"/v0/b/{BUCKET}/o?" + urllib.parse.urlencode({"name": upload.name}))
        conn.putheader("Content-Type", "application/octet-stream")
        conn.putheader("Content-Length", str(len(upload.payload)))
        conn.endheaders()
        view = memoryview(upload.payload)
        for offset in range(0, len(view), 65536):
            conn.send(view[offset:offset + 65536])
            time.sleep(0.01)
        upload.body_sent = True
        response = conn.getresponse()
        body = response.read()
        upload.status = response.status
        if response.status == 200:
            upload.acknowledged_md5 = json.loads(body)["md5Hash"]
            acked.release()
    except (OSError, http.client.HTTPException, ValueError) as error:
        upload.error = repr(error)
    finally:
        conn.close()


def list_all(base: str, prefix: str) -> list[str]:
    names: list[str] = []
    token = None
    while True:
        query = {"prefix": prefix, "maxResults": "100"}
        if token:
            query["pageToken"] = token
        response = request("GET", f"{base}/v0/b/{BUCKET}/o?" + urllib.parse.urlencode(query))
        assert response.status == 200, response.body
        page = response.json()
        names += [item["name"] for item in page["items"]]
        token = page.get("nextPageToken")
        if not token:
            return names


def test_kill_dash_nine_mid_upload(start_server, tmp_path: Path) -> None:
    data_dir = tmp_path / "crash-data"
    server: Server = start_server(bucket=BUCKET, data_dir=data_dir)
    rng = random.Random(1130)
    uploads = [Upload(f"crash/obj-{i:02d}", os.urandom(rng.randrange(64 * 1024, 3 * 1024 * 1024)))
               for i in range(UPLOADS)]
    acked = threading.Semaphore(0)
    threads = [threading.Thread(target=slow_upload, args=(server.url, u, acked), daemon=True) for u in uploads]
    for thread in threads:
        thread.start()

    # Kill once a handful are acknowledged and most are still in flight (event-driven, bounded wait).
    for _ in range(5):
        assert acked.acquire(timeout=60), "uploads are not being acknowledged"
    server.kill()
    for thread in threads:
        thread.join(timeout=60)

    acknowledged = [u for u in uploads if u.status == 200]
    in_flight = [u for u in uploads if u.status is None]
    assert len(acknowledged) >= 5
    assert in_flight, "every upload finished before the kill: the test proved nothing"
    for upload in acknowledged:
        assert upload.acknowledged_md5 == md5_b64(upload.payload), upload.name

    server.start()
    by_name = {u.name: u for u in uploads}
    visible = list_all(server.url, "crash/")
    assert len(visible) == len(set(visible)), "duplicate names in listing"
    for upload in acknowledged:
        assert upload.name in visible, f"acknowledged upload {upload.name} lost"
    for name in visible:
        upload = by_name[name]
        assert upload.status == 200 or upload.body_sent, f"{name} visible although its body never fully arrived"
        meta = request("GET", object_url(server.url, BUCKET, name))
        assert meta.status == 200
        assert meta.json()["md5Hash"] == md5_b64(upload.payload), f"{name} torn"
        assert meta.json()["size"] == str(len(upload.payload))
        body = request("GET", object_url(server.url, BUCKET, name, alt="media")).body
        assert hashlib.md5(body).digest() == hashlib.md5(upload.payload).digest(), f"{name} bytes differ"

    # No orphans after start-up garbage collection.
    tmp_files = list((data_dir / "tmp").glob("*")) if (data_dir / "tmp").exists() else []
    assert not tmp_files, f"temp files left behind: {tmp_files[:5]}"
    blob_files = [p for p in (data_dir / "blobs").rglob("*") if p.is_file()]
    assert len(blob_files) == len(visible), f"{len(blob_files)} blob files for {len(visible)} objects"
    staging = list((data_dir / "staging").glob("*")) if (data_dir / "staging").exists() else []
    assert not staging, f"staging files left behind: {staging[:5]}"
