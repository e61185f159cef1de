"""google-cloud-storage (Python) against the gateway's Cloud Storage JSON API, on the embedded backend and on
gs:// — the calls server-side code makes: uploads (small, from a file, and a 20 MiB resumable upload in
chunks), downloads (whole and ranged), reload, patch, exists, listings with prefix/delimiter/pages, copy,
compose, delete. Also: objects written through v0 read back identically here, and the other way round."""
from __future__ import annotations

import hashlib
import os
import urllib.parse
from pathlib import Path

import google.oauth2.credentials
import pytest
from google.api_core import exceptions
from google.cloud import storage

from clientkit import BUCKET, PROJECT, TIMEOUT
from harness import md5_b64
from harness import request as http

CALL = {"retry": None, "timeout": TIMEOUT}
FAKE_GCS_NULL_METADATA = ("fake-gcs-server quirk: a metadata key patched with null is stored as \"\" (real GCS removes "
                          "it; the gateway sends the null upstream)")


@pytest.fixture
def bucket(emulator_host: str, admin_token: str) -> storage.Bucket:
    credentials = google.oauth2.credentials.Credentials(token=admin_token)
    return storage.Client(project=PROJECT, credentials=credentials).bucket(BUCKET)


def test_small_upload_download_reload_patch_exists_delete(bucket: storage.Bucket) -> None:
    blob = bucket.blob("gcs/notes/hello.txt")
    blob.upload_from_string(b"hello world", content_type="text/plain", **CALL)
    assert blob.generation and blob.size == 11 and blob.md5_hash == md5_b64(b"hello world")
    assert blob.crc32c == "yZRlqg=="
    assert bucket.blob("gcs/notes/hello.txt").download_as_bytes(**CALL) == b"hello world"
    assert bucket.blob("gcs/notes/hello.txt").download_as_bytes(start=2, end=6, **CALL) == b"llo w"

    fetched = bucket.get_blob("gcs/notes/hello.txt", **CALL)
    assert fetched is not None and fetched.generation == blob.generation and fetched.content_type == "text/plain"
    fetched.metadata = {"owner": "alice", "stage": "draft"}
    fetched.cache_control = "no-cache"
    fetched.patch(**CALL)
    assert fetched.metageneration == 2 or fetched.metageneration >= 2
    fetched.metadata = {"reviewed": "yes"}
    fetched.patch(**CALL)
    again = bucket.blob("gcs/notes/hello.txt")
    again.reload(**CALL)
    assert again.metadata == {"owner": "alice", "stage": "draft", "reviewed": "yes"}
    assert again.cache_control == "no-cache" and again.generation == blob.generation

    assert bucket.blob("gcs/notes/hello.txt").exists(**CALL)
    assert not bucket.blob("gcs/notes/missing.txt").exists(**CALL)
    with pytest.raises(exceptions.NotFound):
        bucket.blob("gcs/notes/missing.txt").download_as_bytes(**CALL)
    with pytest.raises(exceptions.PreconditionFailed):
        bucket.blob("gcs/notes/hello.txt").upload_from_string(b"x", if_generation_match=0, **CALL)
    bucket.blob("gcs/notes/hello.txt").delete(**CALL)
    assert not bucket.blob("gcs/notes/hello.txt").exists(**CALL)


def test_patch_null_removes_a_key(bucket: storage.Bucket, backend: str, request: pytest.FixtureRequest) -> None:
    if backend == "gcs":
        request.applymarker(pytest.mark.xfail(strict=True, reason=FAKE_GCS_NULL_METADATA))
    blob = bucket.blob("gcs/notes/nulls.txt")
    blob.metadata = {"keep": "1", "drop": "2"}
    blob.upload_from_string(b"x", **CALL)
    blob.metadata = {"drop": None}
    blob.patch(**CALL)
    assert bucket.get_blob("gcs/notes/nulls.txt", **CALL).metadata == {"keep": "1"}


def test_upload_from_filename_and_resumable_20_mib_in_chunks(bucket: storage.Bucket, tmp_path: Path) -> None:
    small = tmp_path / "small.json"
    small.write_bytes(b'{"a": 1}')
    blob = bucket.blob("gcs/files/small.json")
    blob.upload_from_filename(str(small), **CALL)
    assert blob.content_type == "application/json" and blob.size == 8

    payload = os.urandom(20 * 1024 * 1024)
    big = tmp_path / "big.bin"
    big.write_bytes(payload)
    resumable = bucket.blob("gcs/files/big.bin", chunk_size=4 * 1024 * 1024)
    resumable.upload_from_filename(str(big), content_type="application/octet-stream", **CALL)
    assert resumable.size == len(payload) and resumable.md5_hash == md5_b64(payload)
    back = bucket.blob("gcs/files/big.bin").download_as_bytes(**CALL)
    assert hashlib.sha256(back).digest() == hashlib.sha256(payload).digest()
    tail = bucket.blob("gcs/files/big.bin").download_as_bytes(start=len(payload) - 10, **CALL)
    assert tail == payload[-10:]


def test_list_blobs_prefix_delimiter_and_pages(bucket: storage.Bucket) -> None:
    names = ["gcs/list/a.txt", "gcs/list/b.txt", "gcs/list/c.txt", "gcs/list/sub/d.txt", "gcs/list/sub/e.txt",
             "gcs/list/other/f.txt"]
    for name in names:
        bucket.blob(name).upload_from_string(name.encode(), **CALL)
    client = bucket.client
    flat = [b.name for b in client.list_blobs(bucket, prefix="gcs/list/", **CALL)]
    assert flat == sorted(names)
    folder = client.list_blobs(bucket, prefix="gcs/list/", delimiter="/", **CALL)
    assert [b.name for b in folder] == ["gcs/list/a.txt", "gcs/list/b.txt", "gcs/list/c.txt"]
    assert folder.prefixes == {"gcs/list/other/", "gcs/list/sub/"}
    pages = list(client.list_blobs(bucket, prefix="gcs/list/", page_size=2, **CALL).pages)
    assert len(pages) == 3
    assert [b.name for page in pages for b in page] == sorted(names)
    listed = next(iter(client.list_blobs(bucket, prefix="gcs/list/a", **CALL)))
    assert listed.size == len(b"gcs/list/a.txt") and listed.generation and listed.md5_hash
    assert [b.name for b in client.list_blobs(bucket, prefix="gcs/list/", max_results=4, **CALL)] == sorted(names)[:4]
    assert [b.name for b in client.list_blobs(bucket, match_glob="gcs/list/**e*.txt", **CALL)] == ["gcs/list/sub/e.txt"]


def test_copy_and_compose(bucket: storage.Bucket) -> None:
    first = bucket.blob("gcs/parts/1")
    first.upload_from_string(b"first,", content_type="text/plain", **CALL)
    first.metadata = {"k": "v"}
    first.patch(**CALL)
    bucket.blob("gcs/parts/2").upload_from_string(b"second", **CALL)
    copy = bucket.copy_blob(first, bucket, "gcs/copies/1", **CALL)
    assert copy.name == "gcs/copies/1" and copy.metadata == {"k": "v"} and copy.md5_hash == first.md5_hash
    assert copy.download_as_bytes(**CALL) == b"first,"
    whole = bucket.blob("gcs/parts/whole")
    whole.content_type = "text/plain"
    whole.compose([bucket.blob("gcs/parts/1"), bucket.blob("gcs/parts/2")], **CALL)
    assert whole.size == 12
    assert bucket.blob("gcs/parts/whole").download_as_bytes(**CALL) == b"first,second"
    rewritten = bucket.blob("gcs/copies/rewritten")
    token, done, total = rewritten.rewrite(bucket.blob("gcs/parts/2"), **CALL)
    assert token is None and done == total == 6


def test_v0_and_json_api_see_the_same_objects(bucket: storage.Bucket, gateway, admin_token: str) -> None:
    auth = {"Authorization": f"Bearer {admin_token}"}
    quoted = urllib.parse.quote("gcs/x/from v0.txt", safe="")
    made = http("POST", f"{gateway.url}/v0/b/{BUCKET}/o?name={quoted}", body=b"v0 bytes",
                   headers={**auth, "Content-Type": "text/plain"})
    assert made.status == 200, made.body
    v0 = made.json()
    blob = bucket.get_blob("gcs/x/from v0.txt", **CALL)
    assert blob is not None
    assert str(blob.generation) == v0["generation"] and blob.md5_hash == v0["md5Hash"] and blob.size == 8
    assert blob.metadata == {"firebaseStorageDownloadTokens": v0["downloadTokens"]}
    assert blob.download_as_bytes(**CALL) == b"v0 bytes"

    written = bucket.blob("gcs/x/from json")
    written.metadata = {"firebaseStorageDownloadTokens": "tok-1", "m": "1"}
    written.upload_from_string(b"json bytes", content_type="text/csv", **CALL)
    meta = http("GET", f"{gateway.url}/v0/b/{BUCKET}/o/{urllib.parse.quote('gcs/x/from json', safe='')}",
                   headers=auth).json()
    assert meta["generation"] == str(written.generation) and meta["downloadTokens"] == "tok-1"
    assert meta["metadata"] == {"m": "1"} and meta["contentType"] == "text/csv"
    fetched = http("GET", f"{gateway.url}/v0/b/{BUCKET}/o/{urllib.parse.quote('gcs/x/from json', safe='')}"
                             "?alt=media&token=tok-1")
    assert fetched.status == 200 and fetched.body == b"json bytes"
