"""An end user's JWT through google-cloud-storage: the JSON API judges it by the same rules as v0 (what the
Firebase emulator does not do) — alice works in her own folder and is refused everywhere else, and a listing
shows her other people's objects by name only."""
from __future__ import annotations

import secrets
import time
from collections.abc import Iterator

import google.oauth2.credentials
import jwt
import pytest
from google.api_core import exceptions
from google.cloud import storage

from clientkit import BUCKET, PROJECT, TIMEOUT, start_gateway
from harness import Server

CALL = {"retry": None, "timeout": TIMEOUT}
RULES = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /users/{uid}/{file=**} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
    match /users/{rest=**} {
      allow list: if request.auth != null;
    }
  }
}
"""


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Iterator[tuple[Server, bytes, str]]:
    workdir = tmp_path_factory.mktemp(f"rules-{backend}")
    secret = secrets.token_hex(32).encode()  # no surrounding whitespace: the gateway trims secret files
    (workdir / "hmac.secret").write_bytes(secret)
    admin = secrets.token_urlsafe(24)
    (workdir / "admin.key").write_text(admin)
    server = start_gateway(workdir, backend, rules=RULES, name="rules",
                           extra=["--jwt-hmac-secret", str(workdir / "hmac.secret"),
                                  "--admin-key", str(workdir / "admin.key")])
    yield server, secret, admin
    server.stop(timeout=10)
    server.kill()


def client_for(token: str) -> storage.Client:
    return storage.Client(project=PROJECT, credentials=google.oauth2.credentials.Credentials(token=token))


def test_end_user_jwt_is_confined_by_the_rules(secured, monkeypatch: pytest.MonkeyPatch) -> None:
    server, secret, admin = secured
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", server.url)
    now = int(time.time())
    alice_token = jwt.encode({"sub": "alice", "iat": now, "exp": now + 600}, secret, algorithm="HS256")
    client_for(admin).bucket(BUCKET).blob("users/bob/private.txt").upload_from_string(b"bob's", **CALL)

    alice = client_for(alice_token).bucket(BUCKET)
    mine = alice.blob("users/alice/notes.txt")
    mine.upload_from_string(b"alice's", **CALL)
    assert alice.blob("users/alice/notes.txt").download_as_bytes(**CALL) == b"alice's"
    with pytest.raises(exceptions.Forbidden):
        alice.blob("users/bob/intrusion.txt").upload_from_string(b"x", **CALL)
    with pytest.raises(exceptions.Forbidden):
        alice.blob("users/bob/private.txt").download_as_bytes(**CALL)
    with pytest.raises(exceptions.Forbidden):
        alice.blob("users/bob/missing.txt").reload(**CALL)  # 403 before existence is revealed
    with pytest.raises(exceptions.Forbidden):
        alice.copy_blob(alice.blob("users/bob/private.txt"), alice, "users/alice/stolen.txt", **CALL)
    listed = {b.name: b for b in client_for(alice_token).list_blobs(BUCKET, prefix="users/", **CALL)}
    assert set(listed) == {"users/alice/notes.txt", "users/bob/private.txt"}
    assert listed["users/alice/notes.txt"].size == 7
    assert listed["users/bob/private.txt"].size is None, "metadata only for objects alice may read"
    with pytest.raises(exceptions.Forbidden):
        list(client_for(alice_token).list_blobs(BUCKET, prefix="", **CALL))
    anonymous = storage.Client.create_anonymous_client()
    with pytest.raises(exceptions.Forbidden):
        anonymous.bucket(BUCKET).blob("users/alice/notes.txt").download_as_bytes(**CALL)
    mine.delete(**CALL)
