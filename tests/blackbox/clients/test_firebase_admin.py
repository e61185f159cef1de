"""firebase-admin (`firebase_admin.storage.bucket()`) against the gateway: the same flows as
google-cloud-storage, through the Admin SDK's app, options and credential objects (a credential whose token is
the gateway's admin key, as a deployment hands it over)."""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import firebase_admin
import google.oauth2.credentials
import pytest
from firebase_admin import credentials, storage
from google.api_core import exceptions

from clientkit import BUCKET, PROJECT, TIMEOUT
from harness import md5_b64

CALL = {"retry": None, "timeout": TIMEOUT}


class KeyCredential(credentials.Base):
    """A firebase_admin credential holding a bearer token (the admin key)."""

    def __init__(self, token: str) -> None:
        self._credential = google.oauth2.credentials.Credentials(token=token)

    def get_credential(self) -> google.oauth2.credentials.Credentials:
        return self._credential


@pytest.fixture
def bucket(emulator_host: str, admin_token: str) -> Iterator[object]:
    app = firebase_admin.initialize_app(KeyCredential(admin_token),
                                        {"storageBucket": BUCKET, "projectId": PROJECT},
                                        name=f"app-{os.urandom(4).hex()}")
    try:
        yield storage.bucket(app=app)
    finally:
        firebase_admin.delete_app(app)


def test_admin_sdk_flows(bucket, tmp_path: Path) -> None:
    blob = bucket.blob("admin/users/alice/avatar.png")
    blob.metadata = {"firebaseStorageDownloadTokens": "token-1"}
    blob.upload_from_string(b"\x89PNG...", content_type="image/png", **CALL)
    assert blob.size == 7 and blob.md5_hash == md5_b64(b"\x89PNG...")
    assert bucket.blob("admin/users/alice/avatar.png").download_as_bytes(**CALL) == b"\x89PNG..."
    assert bucket.blob("admin/users/alice/avatar.png").download_as_bytes(start=1, end=3, **CALL) == b"PNG"
    blob.reload(**CALL)
    assert blob.metadata == {"firebaseStorageDownloadTokens": "token-1"}
    blob.metadata = {"resized": "true"}
    blob.patch(**CALL)
    assert blob.metadata == {"firebaseStorageDownloadTokens": "token-1", "resized": "true"}
    assert blob.exists(**CALL) and not bucket.blob("admin/none").exists(**CALL)

    payload = os.urandom(20 * 1024 * 1024)
    source = tmp_path / "video.bin"
    source.write_bytes(payload)
    big = bucket.blob("admin/videos/v.bin", chunk_size=8 * 1024 * 1024)
    big.upload_from_filename(str(source), **CALL)
    assert big.size == len(payload) and big.md5_hash == md5_b64(payload)
    assert bucket.blob("admin/videos/v.bin").download_as_bytes(start=5, end=9, **CALL) == payload[5:10]

    for name in ["admin/users/bob/a", "admin/users/bob/b", "admin/users/carol/c"]:
        bucket.blob(name).upload_from_string(b"1", **CALL)
    listing = bucket.list_blobs(prefix="admin/users/", delimiter="/", **CALL)
    assert list(listing) == [] and listing.prefixes == {"admin/users/alice/", "admin/users/bob/", "admin/users/carol/"}
    paged = list(bucket.list_blobs(prefix="admin/users/", page_size=1, **CALL).pages)
    assert [b.name for page in paged for b in page] == ["admin/users/alice/avatar.png", "admin/users/bob/a",
                                                         "admin/users/bob/b", "admin/users/carol/c"]

    copy = bucket.copy_blob(blob, bucket, "admin/copies/avatar.png", **CALL)
    assert copy.metadata == {"firebaseStorageDownloadTokens": "token-1", "resized": "true"}
    composed = bucket.blob("admin/composed")
    composed.compose([bucket.blob("admin/users/bob/a"), bucket.blob("admin/users/bob/b")], **CALL)
    assert composed.download_as_bytes(**CALL) == b"11"
    for name in ["admin/composed", "admin/copies/avatar.png", "admin/videos/v.bin"]:
        bucket.blob(name).delete(**CALL)
    with pytest.raises(exceptions.NotFound):
        bucket.blob("admin/composed").delete(**CALL)
