"""pyrebase4 with the gateway's admin key as its token: it sends `Authorization: Firebase
<token>`, and under rules that deny everything the admin key must still upload and delete."""
from __future__ import annotations

import os
from pathlib import Path

from harness import md5_b64, object_url, request
from test_pyrebase_flow import BUCKET, storage_for

DENY_ALL = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /{all=**} {
      allow read, write: if false;
    }
  }
}
"""


def test_pyrebase_uploads_and_deletes_with_the_admin_key(start_server, tmp_path: Path,
                                                          admin_key: tuple[Path, str]) -> None:
    rules = tmp_path / "deny.rules"
    rules.write_text(DENY_ALL)
    key_path, key = admin_key
    server = start_server(bucket=BUCKET, rules=rules, extra=["--admin-key", str(key_path)])
    storage = storage_for(server.url)
    payload = os.urandom(50_000)
    name = "admin/report.bin"

    created = storage.child(name).put(payload, key)
    assert created["name"] == name
    assert created["md5Hash"] == md5_b64(payload)
    admin = {"Authorization": f"Firebase {key}"}
    assert request("GET", object_url(server.url, BUCKET, name), headers=admin).status == 200
    # Without the key the rules deny it.
    assert request("GET", object_url(server.url, BUCKET, name)).status == 403

    storage.delete(name, key)
    assert request("GET", object_url(server.url, BUCKET, name), headers=admin).status == 404
