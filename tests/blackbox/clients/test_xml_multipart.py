"""Cloud Storage's XML API multipart upload, as google-cloud-storage's transfer manager drives it
(`transfer_manager.upload_chunks_concurrently`: `POST ?uploads`, parts in parallel with `PUT ?partNumber=&uploadId=`,
`POST ?uploadId=` with the completion document) with a bearer token, on the embedded backend and gs://: the object
arrives whole with the metadata given at the start, the rules judge the caller as on the JSON API (403 before
anything is learned; another user's upload id is NoSuchUpload), failures carry S3's codes in GCS's XML error
shape, and staging leaves nothing behind — not in listings, not as noncurrent generations of a versioned bucket,
not as something that keeps a bucket from being deleted."""
from __future__ import annotations

import base64
import datetime
import hashlib
import os
import re
import secrets
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import google.oauth2.credentials
import jwt
import pytest
import requests
from google.cloud import storage
from google.cloud.storage import transfer_manager

from clientkit import BUCKET, PROJECT, TIMEOUT, start_gateway
from harness import Server

CALL = {"retry": None, "timeout": TIMEOUT}
MiB = 1 << 20
RULES = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /users/{uid}/{file=**} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
    match /{all=**} {
      allow read, write: if request.auth != null && request.auth.token.admin == true;
    }
  }
}
"""


@pytest.fixture(scope="module")
def xml_gateway(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Iterator[tuple[Server, bytes, str]]:
    workdir = tmp_path_factory.mktemp(f"xml-multipart-{backend}")
    secret = secrets.token_hex(32).encode()
    (workdir / "hmac.secret").write_bytes(secret)
    admin = secrets.token_urlsafe(24)
    (workdir / "admin.key").write_text(admin)
    server = start_gateway(workdir, backend, rules=RULES, name="xml-multipart",
                           extra=["--jwt-hmac-secret", str(workdir / "hmac.secret"),
                                  "--admin-key", str(workdir / "admin.key"),
                                  "--bucket-root", f"file:{workdir / 'root'}"])
    yield server, secret, admin
    server.stop(timeout=10)
    server.kill()


def user_token(secret: bytes, uid: str) -> str:
    now = int(time.time())
    return jwt.encode({"sub": uid, "iat": now, "exp": now + 600}, secret, algorithm="HS256")


def client_for(server: Server, token: str, monkeypatch: pytest.MonkeyPatch) -> storage.Client:
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", server.url)
    return storage.Client(project=PROJECT, credentials=google.oauth2.credentials.Credentials(token=token))


def object_url(server: Server, bucket: str, name: str, query: str = "") -> str:
    return f"{server.url}/{bucket}/{urllib.parse.quote(name, safe='')}" + (f"?{query}" if query else "")


def xml_field(body: bytes, name: str) -> str | None:
    found = re.search(rf"<{name}>([^<]*)</{name}>".encode(), body)
    return found.group(1).decode() if found else None


def completion(parts: list[tuple[int, str]]) -> bytes:
    items = "".join(f"<Part><PartNumber>{n}</PartNumber><ETag>{etag}</ETag></Part>" for n, etag in parts)
    return f"<CompleteMultipartUpload>{items}</CompleteMultipartUpload>".encode()


def write_random(path: Path, size: int) -> bytes:
    data = os.urandom(size)
    path.write_bytes(data)
    return data


def test_transfer_manager_uploads_parts_in_parallel(xml_gateway, monkeypatch, tmp_path: Path) -> None:
    server, _, admin = xml_gateway
    client = client_for(server, admin, monkeypatch)
    bucket = client.bucket(BUCKET)
    data = write_random(tmp_path / "big.bin", 13 * MiB + 17)
    blob = bucket.blob("reports/2026/big file.bin")
    blob.content_type = "application/x-report"
    blob.cache_control = "private"
    blob.metadata = {"owner": "ops", "stage": "final"}
    custom_time = datetime.datetime(2026, 5, 1, 12, 0, 0, tzinfo=datetime.timezone.utc)
    blob.custom_time = custom_time
    transfer_manager.upload_chunks_concurrently(str(tmp_path / "big.bin"), blob, chunk_size=5 * MiB,
                                                max_workers=3, deadline=120)

    stored = bucket.get_blob("reports/2026/big file.bin", **CALL)
    assert stored.size == len(data)
    assert stored.md5_hash == base64.b64encode(hashlib.md5(data).digest()).decode()
    assert stored.content_type == "application/x-report" and stored.cache_control == "private"
    assert stored.metadata == {"owner": "ops", "stage": "final"}  # nothing of the staging leaks into it
    assert stored.custom_time == custom_time
    assert stored.download_as_bytes(**CALL) == data
    # The staged parts are gone and never listed.
    assert [b.name for b in client.list_blobs(BUCKET, prefix="", **CALL)] == ["reports/2026/big file.bin"]
    listed = requests.get(f"{server.url}/{BUCKET}?uploads", headers={"Authorization": f"Bearer {admin}"},
                          timeout=TIMEOUT)
    assert listed.status_code == 200 and b"<Upload>" not in listed.content
    stored.delete(**CALL)


def test_the_rules_judge_each_call_and_an_upload_is_its_starters(xml_gateway, tmp_path: Path) -> None:
    server, secret, admin = xml_gateway
    alice = {"Authorization": f"Bearer {user_token(secret, 'alice')}"}
    bob = {"Authorization": f"Bearer {user_token(secret, 'bob')}"}
    # Outside her folder alice is refused before anything is learned, in GCS's XML error shape.
    refused = requests.post(object_url(server, BUCKET, "users/bob/x.bin", "uploads"), headers=alice, timeout=TIMEOUT)
    assert refused.status_code == 403 and xml_field(refused.content, "Code") == "AccessDenied"
    anonymous = requests.post(object_url(server, BUCKET, "users/alice/x.bin", "uploads"), timeout=TIMEOUT)
    assert anonymous.status_code in (401, 403)

    started = requests.post(object_url(server, BUCKET, "users/alice/x.bin", "uploads"), headers=alice,
                            timeout=TIMEOUT)
    assert started.status_code == 200, started.text
    assert b'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"' in started.content
    upload_id = xml_field(started.content, "UploadId")
    assert upload_id

    first, last = os.urandom(5 * MiB), b"tail bytes"
    put = requests.put(object_url(server, BUCKET, "users/alice/x.bin", f"partNumber=1&uploadId={upload_id}"),
                       data=first, headers=alice, timeout=TIMEOUT)
    assert put.status_code == 200, put.text
    assert put.headers["ETag"] == f'"{hashlib.md5(first).hexdigest()}"'
    assert f"md5={base64.b64encode(hashlib.md5(first).digest()).decode()}" in put.headers["x-goog-hash"]
    # Bob cannot add to, list, complete or abort alice's upload: to him it does not exist.
    for method, query, body in (("PUT", f"partNumber=2&uploadId={upload_id}", b"x"), ("GET", f"uploadId={upload_id}", b""),
                                ("POST", f"uploadId={upload_id}", completion([(1, put.headers["ETag"])])),
                                ("DELETE", f"uploadId={upload_id}", b"")):
        answer = requests.request(method, object_url(server, BUCKET, "users/alice/x.bin", query), data=body,
                                  headers=bob, timeout=TIMEOUT)
        assert answer.status_code in (403, 404), (method, answer.status_code)
        assert xml_field(answer.content, "Code") in ("AccessDenied", "NoSuchUpload"), (method, answer.text)
    # The same upload id under another object name is unknown too.
    elsewhere = requests.get(object_url(server, BUCKET, "users/alice/other.bin", f"uploadId={upload_id}"),
                             headers=alice, timeout=TIMEOUT)
    assert elsewhere.status_code == 404 and xml_field(elsewhere.content, "Code") == "NoSuchUpload"

    put2 = requests.put(object_url(server, BUCKET, "users/alice/x.bin", f"partNumber=2&uploadId={upload_id}"),
                        data=last, headers=alice, timeout=TIMEOUT)
    assert put2.status_code == 200
    parts = requests.get(object_url(server, BUCKET, "users/alice/x.bin", f"uploadId={upload_id}"), headers=alice,
                         timeout=TIMEOUT)
    assert parts.status_code == 200 and parts.content.count(b"<Part>") == 2
    done = requests.post(object_url(server, BUCKET, "users/alice/x.bin", f"uploadId={upload_id}"),
                         data=completion([(1, put.headers["ETag"]), (2, put2.headers["ETag"])]), headers=alice,
                         timeout=TIMEOUT)
    assert done.status_code == 200, done.text
    assert xml_field(done.content, "Key") == "users/alice/x.bin"
    read = requests.get(f"{server.url}/storage/v1/b/{BUCKET}/o/{urllib.parse.quote('users/alice/x.bin', safe='')}"
                        "?alt=media", headers=alice, timeout=TIMEOUT)
    assert read.status_code == 200 and read.content == first + last
    # Completed uploads are gone.
    again = requests.get(object_url(server, BUCKET, "users/alice/x.bin", f"uploadId={upload_id}"), headers=alice,
                         timeout=TIMEOUT)
    assert again.status_code == 404 and xml_field(again.content, "Code") == "NoSuchUpload"


def test_failures_carry_their_codes_and_commit_nothing(xml_gateway) -> None:
    server, _, admin = xml_gateway
    headers = {"Authorization": f"Bearer {admin}"}
    name = "codes/object.bin"
    unknown = requests.put(object_url(server, BUCKET, name, f"partNumber=1&uploadId={secrets.token_hex(16)}"),
                           data=b"x", headers=headers, timeout=TIMEOUT)
    assert unknown.status_code == 404 and xml_field(unknown.content, "Code") == "NoSuchUpload"

    upload_id = xml_field(requests.post(object_url(server, BUCKET, name, "uploads"), headers=headers,
                                        timeout=TIMEOUT).content, "UploadId")
    small = [requests.put(object_url(server, BUCKET, name, f"partNumber={n}&uploadId={upload_id}"), data=b"small",
                          headers=headers, timeout=TIMEOUT).headers["ETag"] for n in (1, 2)]
    too_small = requests.post(object_url(server, BUCKET, name, f"uploadId={upload_id}"),
                              data=completion([(1, small[0]), (2, small[1])]), headers=headers, timeout=TIMEOUT)
    assert too_small.status_code == 400 and xml_field(too_small.content, "Code") == "EntityTooSmall"
    wrong_etag = requests.post(object_url(server, BUCKET, name, f"uploadId={upload_id}"),
                               data=completion([(1, '"' + "0" * 32 + '"')]), headers=headers, timeout=TIMEOUT)
    assert wrong_etag.status_code == 400 and xml_field(wrong_etag.content, "Code") == "InvalidPart"
    malformed = requests.post(object_url(server, BUCKET, name, f"uploadId={upload_id}"), data=b"<Complete",
                              headers=headers, timeout=TIMEOUT)
    assert malformed.status_code == 400 and xml_field(malformed.content, "Code") == "InvalidArgument"
    missing = requests.get(f"{server.url}/storage/v1/b/{BUCKET}/o/{urllib.parse.quote(name, safe='')}",
                           headers=headers, timeout=TIMEOUT)
    assert missing.status_code == 404  # nothing was committed

    aborted = requests.delete(object_url(server, BUCKET, name, f"uploadId={upload_id}"), headers=headers,
                              timeout=TIMEOUT)
    assert aborted.status_code == 204
    gone = requests.get(object_url(server, BUCKET, name, f"uploadId={upload_id}"), headers=headers, timeout=TIMEOUT)
    assert gone.status_code == 404 and xml_field(gone.content, "Code") == "NoSuchUpload"


def test_staging_leaves_no_generation_in_a_versioned_bucket(xml_gateway, backend, monkeypatch, tmp_path) -> None:
    if backend != "file":
        pytest.skip("the bucket root's buckets are embedded; once is enough")
    server, _, admin = xml_gateway
    client = client_for(server, admin, monkeypatch)
    bucket = client.bucket("mpu-" + secrets.token_hex(4))
    bucket.versioning_enabled = True
    bucket = client.create_bucket(bucket, **CALL)
    data = write_random(tmp_path / "v.bin", 11 * MiB)
    blob = bucket.blob("v.bin")
    transfer_manager.upload_chunks_concurrently(str(tmp_path / "v.bin"), blob, chunk_size=5 * MiB, deadline=120)
    assert bucket.blob("v.bin").download_as_bytes(**CALL) == data
    # Every kept generation is the object's own: the parts and manifest were removed for good.
    assert [(b.name, b.time_deleted) for b in client.list_blobs(bucket, versions=True, **CALL)] == [("v.bin", None)]

    # An unfinished upload whose part was sent twice does not keep the bucket from being deleted.
    headers = {"Authorization": f"Bearer {admin}"}
    upload_id = xml_field(requests.post(object_url(server, bucket.name, "pending.bin", "uploads"), headers=headers,
                                        timeout=TIMEOUT).content, "UploadId")
    for payload in (b"one", b"two"):
        sent = requests.put(object_url(server, bucket.name, "pending.bin", f"partNumber=1&uploadId={upload_id}"),
                            data=payload, headers=headers, timeout=TIMEOUT)
        assert sent.status_code == 200
    for version in client.list_blobs(bucket, versions=True, **CALL):
        bucket.blob(version.name, generation=version.generation).delete(**CALL)
    bucket.delete(**CALL)
    assert client.lookup_bucket(bucket.name, **CALL) is None
