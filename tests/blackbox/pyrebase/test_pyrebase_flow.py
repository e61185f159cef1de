"""A real Firebase client: pyrebase4's Storage class against a running gateway (put, get_url, download,
delete). Its base URL is the instance attribute `storage_bucket` (checked with pyrebase4's source). Runs in its own venv
because pyrebase4 pins urllib3<2."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pyrebase
import requests

from harness import md5_b64, object_url, request

BUCKET = "demo-project.appspot.com"


def storage_for(base_url: str):
    app = pyrebase.initialize_app({
        "apiKey": "test-api-key",
        "authDomain": "demo-project.firebaseapp.com",
        "databaseURL": "https://demo-project.firebaseio.com",
        "storageBucket": BUCKET,
    })
    storage = app.storage()
    storage.storage_bucket = f"{base_url}/v0/b/{BUCKET}"
    return storage


def test_put_get_url_download_delete(start_server, tmp_path: Path) -> None:
    server = start_server(bucket=BUCKET)
    storage = storage_for(server.url)
    payload = os.urandom(300_000) + "unicode ✓".encode()
    source = tmp_path / "upload.bin"
    source.write_bytes(payload)
    name = "users/alice/photos/cat 1.png"

    created = storage.child(name).put(str(source))
    assert created["name"] == name
    assert created["bucket"] == BUCKET
    assert created["size"] == str(len(payload))
    assert created["md5Hash"] == md5_b64(payload)
    token = created["downloadTokens"].split(",")[0]
    assert token

    url = storage.child(name).get_url(token)
    assert url == object_url(server.url, BUCKET, name) + "?alt=media&token=" + token
    fetched = requests.get(url, timeout=30)
    assert fetched.status_code == 200
    assert hashlib.md5(fetched.content).digest() == hashlib.md5(payload).digest()

    target = tmp_path / "download.bin"
    storage.child(name).download(name, str(target))
    assert target.read_bytes() == payload

    storage.delete(name, None)
    assert request("GET", object_url(server.url, BUCKET, name)).status == 404


def test_put_bytes_object_and_overwrite_mints_new_token(start_server) -> None:
    server = start_server(bucket=BUCKET)
    storage = storage_for(server.url)
    first = storage.child("notes/hello.txt").put(b"hello world")
    assert first["md5Hash"] == "XrY7u+Ae7tCTyyK7j1rNww=="
    second = storage.child("notes/hello.txt").put(b"hello again")
    assert int(second["generation"]) > int(first["generation"])
    assert second["downloadTokens"] != first["downloadTokens"]
    old_url = storage.child("notes/hello.txt").get_url(first["downloadTokens"])
    new_url = storage.child("notes/hello.txt").get_url(second["downloadTokens"])
    assert requests.get(new_url, timeout=30).content == b"hello again"
    # The old token belonged to the old generation; with allow-all rules the read still succeeds, so only
    # check that it now returns the new bytes (never the overwritten ones).
    assert requests.get(old_url, timeout=30).content == b"hello again"
