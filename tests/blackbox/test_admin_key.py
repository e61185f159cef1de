"""The admin key (`--admin-key`) in either `Authorization` scheme: `Bearer <key>` and
`Firebase <key>` — what pyrebase, its forks and portcullis-cli send — both act as admin under rules that deny
everything; a wrong key is 401 and no key is the rules' 403."""
from __future__ import annotations

import urllib.parse
from pathlib import Path

import pytest

from harness import Server, object_url, request, upload_url

DENY_ALL = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /{all=**} {
      allow read, write: if false;
    }
  }
}
"""


@pytest.fixture
def gateway(start_server, tmp_path: Path, admin_key: tuple[Path, str]) -> tuple[Server, str]:
    rules = tmp_path / "deny.rules"
    rules.write_text(DENY_ALL)
    key_path, key = admin_key
    return start_server(rules=rules, extra=["--admin-key", str(key_path)]), key


@pytest.mark.parametrize("scheme", ["Bearer", "Firebase", "bearer", "FIREBASE"])
def test_the_admin_key_is_admin_in_either_scheme(gateway: tuple[Server, str], scheme: str) -> None:
    server, key = gateway
    auth = {"Authorization": f"{scheme} {key}"}
    name = f"admin/{scheme}.txt"
    created = request("POST", upload_url(server.url, "test-bucket", name), body=b"admin bytes",
                      headers={**auth, "Content-Type": "text/plain"})
    assert created.status == 200, created.body
    assert request("GET", object_url(server.url, "test-bucket", name), headers=auth).status == 200
    media = request("GET", object_url(server.url, "test-bucket", name, alt="media"), headers=auth)
    assert media.body == b"admin bytes"
    # pyrebase deletes with the name in the query.
    query = "?name=" + urllib.parse.quote(name, safe="")
    deleted = request("DELETE", f"{server.url}/v0/b/test-bucket/o{query}", headers=auth)
    assert deleted.status in (200, 204), deleted.body
    assert request("GET", object_url(server.url, "test-bucket", name), headers=auth).status == 404


@pytest.mark.parametrize("scheme", ["Bearer", "Firebase"])
def test_a_wrong_key_is_401_and_no_key_is_the_rules_decision(gateway: tuple[Server, str], scheme: str) -> None:
    server, key = gateway
    wrong = request("POST", upload_url(server.url, "test-bucket", "x.txt"), body=b"x",
                    headers={"Authorization": f"{scheme} {key}x", "Content-Type": "text/plain"})
    assert wrong.status == 401
    anonymous = request("POST", upload_url(server.url, "test-bucket", "x.txt"), body=b"x",
                        headers={"Content-Type": "text/plain"})
    assert anonymous.status == 403
