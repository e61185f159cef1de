"""The S3 surface (`--s3-listen`, docs/s3-api.md) driven by botocore — AWS's own signer and XML parser — against a
started gateway: every served operation, every refusal of a signature (wrong secret, unknown key, skewed clock,
expired presigned URL, payload hash mismatch, tampered aws-chunked chunk), the rules judging a uid key and a user's
JWT as session token (403 before existence), 501 for what is not served, the same objects seen through v0, and
the S3 routes in the access log.
"""
from __future__ import annotations

import datetime
import hashlib
import io
import json
import secrets
import time
import urllib.parse
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import boto3
import botocore.auth
import botocore.awsrequest
import botocore.credentials
import jwt
import pytest
import requests
from botocore.config import Config
from botocore.exceptions import ClientError

from harness import Server, crc32c_b64, free_port, signing_key_file

BUCKET = "s3-bucket"
ADMIN = ("admin-key-id", "admin-secret-" + "a" * 20)
ALICE = ("alice-key-id", "alice-secret-" + "b" * 20)

RULES = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /public/{rest=**} { allow read, write: if true; }
    match /users/{uid}/{rest=**} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
    match /users { allow list: if request.auth != null; }
  }
}
"""


@dataclass
class Gateway:
    server: Server
    s3_url: str
    hmac_secret: str

    def client(self, key: tuple[str, str] = ADMIN, session_token: str | None = None, **config: object):
        return boto3.client(
            "s3", endpoint_url=self.s3_url, aws_access_key_id=key[0], aws_secret_access_key=key[1],
            aws_session_token=session_token, region_name="us-east-1",
            config=Config(s3={"addressing_style": "path"}, signature_version="s3v4", retries={"max_attempts": 1},
                          **config))

    def user_token(self, uid: str) -> str:
        now = int(time.time())
        return jwt.encode({"sub": uid, "iat": now, "exp": now + 600}, self.hmac_secret, algorithm="HS256")


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    tmp = tmp_path_factory.mktemp("s3surface")
    (tmp / "storage.rules").write_text(RULES)
    hmac_secret = secrets.token_hex(32)
    (tmp / "hmac.secret").write_text(hmac_secret)
    (tmp / "keys.json").write_text(json.dumps({"keys": [
        {"id": ADMIN[0], "secret": ADMIN[1], "admin": True},
        {"id": ALICE[0], "secret": ALICE[1], "uid": "alice", "claims": {"team": "blue"}},
    ]}))
    signing_key_file(tmp / "signing.key", "k1")
    port = free_port()
    server = Server(workdir=tmp, name="s3surface", args=[
        "--bucket", f"{BUCKET}=file:{tmp / 'data'}", "--rules", str(tmp / "storage.rules"),
        "--signing-key", str(tmp / "signing.key"), "--jwt-hmac-secret", str(tmp / "hmac.secret"),
        "--s3-listen", f"127.0.0.1:{port}", "--s3-keys", str(tmp / "keys.json"),
        "--s3-domain", "s3.portcullis.test"]).start()
    yield Gateway(server, f"http://127.0.0.1:{port}", hmac_secret)
    server.stop(timeout=10)
    server.kill()


def code_of(call) -> tuple[int, str]:
    with pytest.raises(ClientError) as caught:
        call()
    error = caught.value.response
    return error["ResponseMetadata"]["HTTPStatusCode"], error["Error"]["Code"]


# --- Operations -------------------------------------------------------------------------------------------------

def test_put_get_head_with_metadata_range_and_overrides(gw: Gateway) -> None:
    s3 = gw.client()
    body = b"hello, s3 surface"
    put = s3.put_object(Bucket=BUCKET, Key="public/a b+é.txt", Body=body, ContentType="text/plain",
                        CacheControl="max-age=60", ContentDisposition="inline", Metadata={"Colour": "blue"})
    assert put["ETag"] == '"' + hashlib.md5(body).hexdigest() + '"'
    got = s3.get_object(Bucket=BUCKET, Key="public/a b+é.txt")
    assert got["Body"].read() == body
    assert got["ContentType"] == "text/plain" and got["CacheControl"] == "max-age=60"
    assert got["ContentDisposition"] == "inline" and got["Metadata"] == {"colour": "blue"}
    assert got["ETag"] == put["ETag"]
    part = s3.get_object(Bucket=BUCKET, Key="public/a b+é.txt", Range="bytes=7-8")
    assert part["Body"].read() == b"s3" and part["ContentRange"] == f"bytes 7-8/{len(body)}"
    head = s3.head_object(Bucket=BUCKET, Key="public/a b+é.txt")
    assert head["ContentLength"] == len(body)
    over = s3.get_object(Bucket=BUCKET, Key="public/a b+é.txt", ResponseContentType="application/x-over",
                         ResponseContentDisposition="attachment")
    assert over["ContentType"] == "application/x-over" and over["ContentDisposition"] == "attachment"
    # The same object through v0: one store, metadata mapped once.
    v0 = requests.get(f"{gw.server.url}/v0/b/{BUCKET}/o/" + urllib.parse.quote("public/a b+é.txt", safe=""))
    assert v0.status_code == 200
    assert v0.json()["metadata"] == {"colour": "blue"} and v0.json()["contentType"] == "text/plain"


def test_conditionals_use_the_s3_etag(gw: Gateway) -> None:
    s3 = gw.client()
    etag = s3.put_object(Bucket=BUCKET, Key="public/cond.txt", Body=b"v1")["ETag"]
    assert s3.get_object(Bucket=BUCKET, Key="public/cond.txt", IfMatch=etag)["Body"].read() == b"v1"
    assert code_of(lambda: s3.get_object(Bucket=BUCKET, Key="public/cond.txt", IfMatch='"00"')) == (
        412, "PreconditionFailed")
    assert code_of(lambda: s3.get_object(Bucket=BUCKET, Key="public/cond.txt", IfNoneMatch=etag))[0] == 304
    assert code_of(lambda: s3.put_object(Bucket=BUCKET, Key="public/cond.txt", Body=b"v2", IfNoneMatch="*")) == (
        412, "PreconditionFailed")


def test_content_md5_and_crc32c_are_checked(gw: Gateway) -> None:
    s3 = gw.client()
    import base64
    good = base64.b64encode(hashlib.md5(b"digest").digest()).decode()
    s3.put_object(Bucket=BUCKET, Key="public/md5.txt", Body=b"digest", ContentMD5=good)
    bad = base64.b64encode(hashlib.md5(b"other").digest()).decode()
    assert code_of(lambda: s3.put_object(Bucket=BUCKET, Key="public/md5-bad.txt", Body=b"digest",
                                         ContentMD5=bad)) == (400, "BadDigest")
    assert code_of(lambda: s3.head_object(Bucket=BUCKET, Key="public/md5-bad.txt")) == (404, "404")
    assert code_of(lambda: s3.put_object(Bucket=BUCKET, Key="public/md5-bad.txt", Body=b"digest",
                                         ContentMD5="nope")) == (400, "InvalidDigest")
    ok = signed(gw, "PUT", f"/{BUCKET}/public/crc.txt", b"digest", extra={"x-amz-checksum-crc32c": crc32c_b64(b"digest")})
    assert ok.status_code == 200, ok.text
    assert s3.get_object(Bucket=BUCKET, Key="public/crc.txt")["Body"].read() == b"digest"
    bad = signed(gw, "PUT", f"/{BUCKET}/public/crc-bad.txt", b"digest", extra={"x-amz-checksum-crc32c": crc32c_b64(b"x")})
    assert bad.status_code == 400 and b"<Code>BadDigest</Code>" in bad.content


def test_copy_with_metadata_directive(gw: Gateway) -> None:
    s3 = gw.client()
    s3.put_object(Bucket=BUCKET, Key="public/src.txt", Body=b"source", ContentType="text/plain",
                  Metadata={"k": "v"})
    copied = s3.copy_object(Bucket=BUCKET, Key="public/dst.txt", CopySource={"Bucket": BUCKET, "Key": "public/src.txt"})
    assert copied["CopyObjectResult"]["ETag"] == '"' + hashlib.md5(b"source").hexdigest() + '"'
    dst = s3.head_object(Bucket=BUCKET, Key="public/dst.txt")
    assert dst["Metadata"] == {"k": "v"} and dst["ContentType"] == "text/plain"
    s3.copy_object(Bucket=BUCKET, Key="public/dst.txt", CopySource={"Bucket": BUCKET, "Key": "public/src.txt"},
                   MetadataDirective="REPLACE", ContentType="text/csv", Metadata={"n": "w"})
    dst = s3.head_object(Bucket=BUCKET, Key="public/dst.txt")
    assert dst["Metadata"] == {"n": "w"} and dst["ContentType"] == "text/csv"
    assert code_of(lambda: s3.copy_object(Bucket=BUCKET, Key="public/dst2.txt",
                                          CopySource={"Bucket": BUCKET, "Key": "public/src.txt"},
                                          CopySourceIfMatch='"0"')) == (412, "PreconditionFailed")
    assert code_of(lambda: s3.copy_object(Bucket=BUCKET, Key="public/dst2.txt",
                                          CopySource={"Bucket": BUCKET, "Key": "public/missing"})) == (
        404, "NoSuchKey")


def test_listings_v2_v1_and_paging(gw: Gateway) -> None:
    s3 = gw.client()
    names = [f"public/list/{c}/{i}.txt" for c in "ab" for i in range(3)] + ["public/list/top.txt"]
    for name in names:
        s3.put_object(Bucket=BUCKET, Key=name, Body=b"x")
    flat = s3.list_objects_v2(Bucket=BUCKET, Prefix="public/list/")
    assert [o["Key"] for o in flat["Contents"]] == sorted(names) and flat["KeyCount"] == len(names)
    assert all(o["Size"] == 1 for o in flat["Contents"])
    folders = s3.list_objects_v2(Bucket=BUCKET, Prefix="public/list/", Delimiter="/")
    assert [p["Prefix"] for p in folders["CommonPrefixes"]] == ["public/list/a/", "public/list/b/"]
    assert [o["Key"] for o in folders["Contents"]] == ["public/list/top.txt"]
    seen = [o["Key"] for page in s3.get_paginator("list_objects_v2").paginate(
        Bucket=BUCKET, Prefix="public/list/", PaginationConfig={"PageSize": 2}) for o in page.get("Contents", [])]
    assert seen == sorted(names)
    after = s3.list_objects_v2(Bucket=BUCKET, Prefix="public/list/", StartAfter="public/list/b/0.txt")
    assert [o["Key"] for o in after["Contents"]] == sorted(names)[4:]
    v1 = [o["Key"] for page in s3.get_paginator("list_objects").paginate(
        Bucket=BUCKET, Prefix="public/list/", PaginationConfig={"PageSize": 3}) for o in page.get("Contents", [])]
    assert v1 == sorted(names)
    v1_folders = [p["Prefix"] for page in s3.get_paginator("list_objects").paginate(
        Bucket=BUCKET, Prefix="public/list/", Delimiter="/", PaginationConfig={"PageSize": 1})
        for p in page.get("CommonPrefixes", [])]
    assert v1_folders == ["public/list/a/", "public/list/b/"]
    assert s3.list_objects_v2(Bucket=BUCKET, Prefix="public/list/", MaxKeys=0)["KeyCount"] == 0


def test_listing_escapes_markup_glued_to_a_mark(gw: Gateway) -> None:
    """A markup character with a combining mark after it, or a prepended mark (U+0600) before it, is one Swift
    `Character`; escaped one `Character` at a time it went out raw, and this key closed its `<Key>` element and
    opened a key of its own in everyone's listing."""
    s3 = gw.client()
    names = ["public/markup/x\u0600</Key>\u0301\u0600<Key>injected</Key>\u0301", "public/markup/a&\u0301amp;b",
             "public/markup/q\"\u0301", "public/markup/<\u20dd>", "public/markup/plain"]
    for name in names:
        s3.put_object(Bucket=BUCKET, Key=name, Body=b"x")
    for listed in (s3.list_objects_v2(Bucket=BUCKET, Prefix="public/markup/"),
                   s3.list_objects(Bucket=BUCKET, Prefix="public/markup/")):
        assert [o["Key"] for o in listed["Contents"]] == sorted(names)
    # The XML itself, without `encoding-type=url` (which botocore adds to its own listings).
    raw = signed(gw, "GET", f"/{BUCKET}?list-type=2&prefix=public%2Fmarkup%2F", b"")
    assert raw.status_code == 200, raw.text
    assert [k.text for k in ET.fromstring(raw.content).iter("{http://s3.amazonaws.com/doc/2006-03-01/}Key")] == \
        sorted(names)
    assert "\u0600<Key>" not in raw.text and "&\u0301" not in raw.text


def test_buckets_location_and_head_bucket(gw: Gateway) -> None:
    s3 = gw.client()
    assert [b["Name"] for b in s3.list_buckets()["Buckets"]] == [BUCKET]
    assert s3.head_bucket(Bucket=BUCKET)["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert s3.get_bucket_location(Bucket=BUCKET)["LocationConstraint"] is None
    assert code_of(lambda: s3.list_objects_v2(Bucket="no-such-bucket")) == (404, "NoSuchBucket")
    assert code_of(lambda: gw.client(ALICE).list_buckets()) == (403, "AccessDenied")


def test_delete_and_delete_objects(gw: Gateway) -> None:
    s3 = gw.client()
    for name in ("public/del/d1", "public/del/d2", "public/del/d3"):
        s3.put_object(Bucket=BUCKET, Key=name, Body=b"x")
    s3.delete_object(Bucket=BUCKET, Key="public/del/d1")
    assert code_of(lambda: s3.get_object(Bucket=BUCKET, Key="public/del/d1")) == (404, "NoSuchKey")
    s3.delete_object(Bucket=BUCKET, Key="public/del/d1")  # absent: still 204
    out = s3.delete_objects(Bucket=BUCKET, Delete={"Objects": [{"Key": "public/del/d2"}, {"Key": "public/del/d3"}]})
    assert sorted(d["Key"] for d in out["Deleted"]) == ["public/del/d2", "public/del/d3"]
    assert "Contents" not in s3.list_objects_v2(Bucket=BUCKET, Prefix="public/del/")
    # A uid key's batch: each key judged by the rules on its own.
    s3.put_object(Bucket=BUCKET, Key="users/bob/keep", Body=b"x")
    s3.put_object(Bucket=BUCKET, Key="users/alice/go", Body=b"x")
    out = gw.client(ALICE).delete_objects(Bucket=BUCKET, Delete={
        "Objects": [{"Key": "users/alice/go"}, {"Key": "users/bob/keep"}]})
    assert [d["Key"] for d in out["Deleted"]] == ["users/alice/go"]
    assert [(e["Key"], e["Code"]) for e in out["Errors"]] == [("users/bob/keep", "AccessDenied")]
    assert s3.head_object(Bucket=BUCKET, Key="users/bob/keep")["ContentLength"] == 1


def test_signature_version_2_is_refused_never_anonymous(gw: Gateway) -> None:
    v2 = boto3.client("s3", endpoint_url=gw.s3_url, aws_access_key_id=ADMIN[0], aws_secret_access_key=ADMIN[1],
                      region_name="us-east-1", config=Config(s3={"addressing_style": "path"}, signature_version="s3"))
    gw.client().put_object(Bucket=BUCKET, Key="public/v2.txt", Body=b"x")
    url = v2.generate_presigned_url("get_object", Params={"Bucket": BUCKET, "Key": "public/v2.txt"})
    assert "AWSAccessKeyId=" in url
    refused = requests.get(url)
    assert refused.status_code == 400 and b"Signature Version 2" in refused.content


def test_presigned_get_and_put_with_plain_requests(gw: Gateway) -> None:
    s3 = gw.client()
    put_url = s3.generate_presigned_url("put_object", Params={"Bucket": BUCKET, "Key": "public/pre.txt"},
                                        ExpiresIn=60)
    assert requests.put(put_url, data=b"presigned body").status_code == 200
    get_url = s3.generate_presigned_url("get_object", Params={"Bucket": BUCKET, "Key": "public/pre.txt"},
                                        ExpiresIn=60)
    for _ in range(2):  # the second is answered from the verified requests the surface keeps
        got = requests.get(get_url)
        assert got.status_code == 200 and got.content == b"presigned body"
    # A request with the kept URL is answered from the memo only when the signed headers are the same too.
    moved = requests.get(get_url, headers={"Host": "elsewhere.example"})
    assert moved.status_code == 403 and b"<Code>SignatureDoesNotMatch</Code>" in moved.content
    tampered = get_url.replace("public/pre.txt", "public/src.txt")
    denied = requests.get(tampered)
    assert denied.status_code == 403 and b"<Code>SignatureDoesNotMatch</Code>" in denied.content


def test_large_upload_streams_through_aws_chunked_and_multipart_threshold(gw: Gateway) -> None:
    """upload_fileobj below the multipart threshold: one PutObject whose body botocore frames as it chooses
    (signed payload or aws-chunked); the bytes read back are the bytes sent."""
    s3 = gw.client()
    data = secrets.token_bytes(3 * 1024 * 1024 + 17)
    s3.upload_fileobj(io.BytesIO(data), BUCKET, "public/big.bin")
    assert s3.get_object(Bucket=BUCKET, Key="public/big.bin")["Body"].read() == data


def test_unserved_subresources_are_501(gw: Gateway) -> None:
    s3 = gw.client()
    s3.put_object(Bucket=BUCKET, Key="public/x", Body=b"x")
    for call in (lambda: s3.get_bucket_versioning(Bucket=BUCKET), lambda: s3.get_bucket_acl(Bucket=BUCKET),
                 lambda: s3.get_object_tagging(Bucket=BUCKET, Key="public/x"),
                 lambda: s3.get_bucket_lifecycle_configuration(Bucket=BUCKET),
                 lambda: s3.get_bucket_policy(Bucket=BUCKET)):
        assert code_of(call) == (501, "NotImplemented")


# --- Authentication failures ------------------------------------------------------------------------------------

def test_wrong_secret_and_unknown_key_are_refused(gw: Gateway) -> None:
    assert code_of(lambda: gw.client((ADMIN[0], "wrong-secret-xxxxxxxx")).list_objects_v2(Bucket=BUCKET)) == (
        403, "SignatureDoesNotMatch")
    assert code_of(lambda: gw.client(("nobody", "whatever-secret")).list_objects_v2(Bucket=BUCKET)) == (
        403, "InvalidAccessKeyId")


def signed(gw: Gateway, method: str, path: str, body: bytes, payload_hash: str | None = None,
           when: datetime.datetime | None = None, key: tuple[str, str] = ADMIN,
           extra: dict[str, str] | None = None) -> requests.Response:
    """A request signed by botocore's SigV4 signer, with a chosen x-amz-content-sha256 and signing time."""
    url = gw.s3_url + path
    headers = {"x-amz-content-sha256": payload_hash or hashlib.sha256(body).hexdigest(), **(extra or {})}
    request = botocore.awsrequest.AWSRequest(method=method, url=url, data=body, headers=headers)
    declared = headers["x-amz-content-sha256"]

    class DeclaredPayload(botocore.auth.S3SigV4Auth):
        """botocore's S3 signer, declaring the payload hash the test chose instead of the body's."""
        def payload(self, request: object) -> str:
            return declared

    signer = DeclaredPayload(botocore.credentials.Credentials(*key), "s3", "us-east-1")
    if when is not None:
        real = datetime.datetime
        class Frozen(real):
            @classmethod
            def utcnow(cls): return when
            @classmethod
            def now(cls, tz=None): return when if tz is None else when.replace(tzinfo=tz)
        botocore.auth.datetime.datetime = Frozen
        try:
            signer.add_auth(request)
        finally:
            botocore.auth.datetime.datetime = real
    else:
        signer.add_auth(request)
    prepared = request.prepare()
    return requests.request(method, url, data=body, headers=dict(prepared.headers))


def test_clock_skew_is_refused(gw: Gateway) -> None:
    now = datetime.datetime.utcnow()
    ok = signed(gw, "PUT", f"/{BUCKET}/public/skew.txt", b"x", when=now)
    assert ok.status_code == 200, ok.text
    late = signed(gw, "PUT", f"/{BUCKET}/public/skew.txt", b"x", when=now - datetime.timedelta(minutes=16))
    assert late.status_code == 403 and b"<Code>RequestTimeTooSkewed</Code>" in late.content


def test_payload_hash_mismatch_commits_nothing(gw: Gateway) -> None:
    wrong = signed(gw, "PUT", f"/{BUCKET}/public/hash.txt", b"the body",
                   payload_hash=hashlib.sha256(b"another body").hexdigest())
    assert wrong.status_code == 400 and b"<Code>XAmzContentSHA256Mismatch</Code>" in wrong.content
    assert code_of(lambda: gw.client().head_object(Bucket=BUCKET, Key="public/hash.txt"))[0] == 404
    unsigned = signed(gw, "PUT", f"/{BUCKET}/public/hash.txt", b"unsigned body", payload_hash="UNSIGNED-PAYLOAD")
    assert unsigned.status_code == 200, unsigned.text


def test_expired_presigned_url_is_refused(gw: Gateway) -> None:
    s3 = gw.client()
    s3.put_object(Bucket=BUCKET, Key="public/exp.txt", Body=b"x")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": BUCKET, "Key": "public/exp.txt"}, ExpiresIn=2)
    # Verified once while valid (the surface keeps verified presigned requests): expiry still applies after.
    assert requests.get(url).status_code == 200
    time.sleep(3.1)
    expired = requests.get(url)
    assert expired.status_code == 403 and b"Request has expired" in expired.content


def chunked_put(gw: Gateway, key: str, chunks: list[bytes], tamper: bool) -> requests.Response:
    """A STREAMING-AWS4-HMAC-SHA256-PAYLOAD upload built as AWS documents it: the seed signature from botocore's
    signer, each chunk's signature chained from it."""
    import hmac
    decoded = b"".join(chunks)
    amz_date = datetime.datetime.utcnow().strftime("%Y%m%dT%H%M%SZ")
    day = amz_date[:8]
    scope = f"{day}/us-east-1/s3/aws4_request"
    frames_len = sum(len(f"{len(c):x};chunk-signature=".encode()) + 64 + 2 + len(c) + 2 for c in chunks + [b""])
    headers = {"x-amz-content-sha256": "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", "Content-Encoding": "aws-chunked",
               "x-amz-decoded-content-length": str(len(decoded)), "Content-Length": str(frames_len),
               "X-Amz-Date": amz_date}
    request = botocore.awsrequest.AWSRequest(method="PUT", url=f"{gw.s3_url}/{BUCKET}/{key}", headers=headers)

    class Streaming(botocore.auth.S3SigV4Auth):
        def payload(self, request: object) -> str:
            return "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"

    signer = Streaming(botocore.credentials.Credentials(*ADMIN), "s3", "us-east-1")
    request.headers["Host"] = urllib.parse.urlsplit(gw.s3_url).netloc
    canonical = signer.canonical_request(request)
    string_to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key_bytes = ("AWS4" + ADMIN[1]).encode()
    for part in (day, "us-east-1", "s3", "aws4_request"):
        key_bytes = hmac.new(key_bytes, part.encode(), hashlib.sha256).digest()
    previous = hmac.new(key_bytes, string_to_sign.encode(), hashlib.sha256).hexdigest()
    signed_headers = signer.signed_headers(signer.headers_to_sign(request))
    authorization = (f"AWS4-HMAC-SHA256 Credential={ADMIN[0]}/{scope}, SignedHeaders={signed_headers}, "
                     f"Signature={previous}")
    body = b""
    empty = hashlib.sha256(b"").hexdigest()
    for index, chunk in enumerate(chunks + [b""]):
        to_sign = "\n".join(["AWS4-HMAC-SHA256-PAYLOAD", amz_date, scope, previous, empty,
                             hashlib.sha256(chunk).hexdigest()])
        previous = hmac.new(key_bytes, to_sign.encode(), hashlib.sha256).hexdigest()
        sent = chunk
        if tamper and index == 1:
            sent = b"Z" + chunk[1:]
        body += f"{len(chunk):x};chunk-signature={previous}\r\n".encode() + sent + b"\r\n"
    assert len(body) == frames_len
    final_headers = {k: v for k, v in request.headers.items()}
    final_headers["Authorization"] = authorization
    return requests.put(f"{gw.s3_url}/{BUCKET}/{key}", data=body, headers=final_headers)


def test_aws_chunked_upload_verifies_every_chunk(gw: Gateway) -> None:
    chunks = [secrets.token_bytes(64 * 1024), secrets.token_bytes(64 * 1024), secrets.token_bytes(100)]
    good = chunked_put(gw, "public/chunked.bin", chunks, tamper=False)
    assert good.status_code == 200, good.text
    assert gw.client().get_object(Bucket=BUCKET, Key="public/chunked.bin")["Body"].read() == b"".join(chunks)
    bad = chunked_put(gw, "public/chunked-bad.bin", chunks, tamper=True)
    assert bad.status_code == 403 and b"<Code>SignatureDoesNotMatch</Code>" in bad.content, bad.text
    assert code_of(lambda: gw.client().head_object(Bucket=BUCKET, Key="public/chunked-bad.bin"))[0] == 404


# --- Rules ------------------------------------------------------------------------------------------------------

def test_uid_key_is_judged_by_the_rules_with_403_before_existence(gw: Gateway) -> None:
    admin, alice = gw.client(), gw.client(ALICE)
    alice.put_object(Bucket=BUCKET, Key="users/alice/mine.txt", Body=b"mine")
    assert alice.get_object(Bucket=BUCKET, Key="users/alice/mine.txt")["Body"].read() == b"mine"
    admin.put_object(Bucket=BUCKET, Key="users/bob/secret.txt", Body=b"bob's")
    # Denied is 403 whether the object exists or not: nothing learned about bob's names.
    assert code_of(lambda: alice.get_object(Bucket=BUCKET, Key="users/bob/secret.txt")) == (403, "AccessDenied")
    assert code_of(lambda: alice.get_object(Bucket=BUCKET, Key="users/bob/missing.txt")) == (403, "AccessDenied")
    assert code_of(lambda: alice.put_object(Bucket=BUCKET, Key="users/bob/x", Body=b"x")) == (403, "AccessDenied")
    assert code_of(lambda: alice.delete_object(Bucket=BUCKET, Key="users/bob/secret.txt")) == (403, "AccessDenied")
    assert code_of(lambda: alice.list_objects_v2(Bucket=BUCKET, Prefix="users/bob/")) == (403, "AccessDenied")
    assert [o["Key"] for o in alice.list_objects_v2(Bucket=BUCKET, Prefix="users/alice/")["Contents"]] == [
        "users/alice/mine.txt"]


def test_jwt_session_token_acts_as_its_user(gw: Gateway) -> None:
    from harness import request as raw_request  # noqa: F401 (keeps the harness import style)
    session = gw.client(("portcullis-session", "portcullis-session"), session_token=gw.user_token("carol"))
    session.put_object(Bucket=BUCKET, Key="users/carol/c.txt", Body=b"carol")
    assert session.get_object(Bucket=BUCKET, Key="users/carol/c.txt")["Body"].read() == b"carol"
    assert code_of(lambda: session.get_object(Bucket=BUCKET, Key="users/alice/mine.txt")) == (403, "AccessDenied")
    forged = gw.client(("portcullis-session", "portcullis-session"), session_token="not.a.jwt")
    assert code_of(lambda: forged.get_object(Bucket=BUCKET, Key="users/carol/c.txt"))[1] == "InvalidToken"
    no_token = gw.client(("portcullis-session", "portcullis-session"))
    assert code_of(lambda: no_token.get_object(Bucket=BUCKET, Key="users/carol/c.txt")) == (403, "InvalidToken")


def test_anonymous_requests_are_judged_by_the_rules(gw: Gateway) -> None:
    gw.client().put_object(Bucket=BUCKET, Key="public/anon.txt", Body=b"anon")
    assert requests.get(f"{gw.s3_url}/{BUCKET}/public/anon.txt").content == b"anon"
    denied = requests.get(f"{gw.s3_url}/{BUCKET}/users/alice/mine.txt")
    assert denied.status_code == 403 and b"<Code>AccessDenied</Code>" in denied.content


def test_access_log_lines_name_the_s3_routes_and_never_the_secret(gw: Gateway) -> None:
    gw.client().get_object(Bucket=BUCKET, Key="public/anon.txt")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        lines = [e for e in gw.server.access_log() if e.get("route") == "s3:/{bucket}/{key}"]
        if any(e.get("object") == "public/anon.txt" and e.get("method") == "GET" for e in lines):
            break
        time.sleep(0.05)
    assert any(e.get("object") == "public/anon.txt" for e in lines)
    assert ADMIN[1] not in gw.server.log_text() and ALICE[1] not in gw.server.log_text()
    metrics = requests.get(f"{gw.server.url}/metrics").text
    assert 'route="s3:/{bucket}/{key}"' in metrics


# --- Multipart ----------------------------------------------------------------------------------------------------

def test_multipart_upload_parallel_parts_complete_atomically(gw: Gateway) -> None:
    """boto3's managed upload: 8 MiB parts sent in parallel, completed into one object whose ETag is S3's
    multipart ETag; the staging area is never listed nor nameable."""
    s3 = gw.client()
    data = secrets.token_bytes(20 * 1024 * 1024 + 5)
    s3.upload_fileobj(io.BytesIO(data), BUCKET, "public/mp/big.bin")
    got = s3.get_object(Bucket=BUCKET, Key="public/mp/big.bin")
    assert got["Body"].read() == data
    size = 8 * 1024 * 1024
    digests = b"".join(hashlib.md5(data[i:i + size]).digest() for i in range(0, len(data), size))
    assert got["ETag"] == f'"{hashlib.md5(digests).hexdigest()}-3"'
    listed = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]]
    assert not any(k.startswith(".portcullis-multipart/") for k in listed)
    v0 = requests.get(f"{gw.server.url}/v0/b/{BUCKET}/o", params={"prefix": ""}).json()
    assert not any(i["name"].startswith(".portcullis-multipart/") for i in v0.get("items", []))
    staged = requests.get(f"{gw.server.url}/v0/b/{BUCKET}/o/" + urllib.parse.quote(".portcullis-multipart/x", safe=""))
    assert staged.status_code == 400


def test_multipart_list_parts_abort_and_part_rules(gw: Gateway) -> None:
    s3 = gw.client()
    upload = s3.create_multipart_upload(Bucket=BUCKET, Key="public/mp/parts.bin", ContentType="text/plain",
                                        Metadata={"m": "1"})["UploadId"]
    small = s3.upload_part(Bucket=BUCKET, Key="public/mp/parts.bin", UploadId=upload, PartNumber=1, Body=b"tiny")
    assert small["ETag"] == '"' + hashlib.md5(b"tiny").hexdigest() + '"'
    s3.upload_part(Bucket=BUCKET, Key="public/mp/parts.bin", UploadId=upload, PartNumber=2, Body=b"last")
    parts = s3.list_parts(Bucket=BUCKET, Key="public/mp/parts.bin", UploadId=upload)["Parts"]
    assert [(p["PartNumber"], p["Size"]) for p in parts] == [(1, 4), (2, 4)]
    complete = {"Parts": [{"PartNumber": 1, "ETag": small["ETag"]}, {"PartNumber": 2, "ETag": parts[1]["ETag"]}]}
    assert code_of(lambda: s3.complete_multipart_upload(
        Bucket=BUCKET, Key="public/mp/parts.bin", UploadId=upload, MultipartUpload=complete)) == (
        400, "EntityTooSmall")
    assert code_of(lambda: s3.complete_multipart_upload(
        Bucket=BUCKET, Key="public/mp/parts.bin", UploadId=upload,
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": '"' + "0" * 32 + '"'}]})) == (400, "InvalidPart")
    # Another caller, or another key, cannot use the upload id: nothing is learned about it.
    assert code_of(lambda: gw.client(ALICE).list_parts(Bucket=BUCKET, Key="public/mp/parts.bin", UploadId=upload)) == (
        404, "NoSuchUpload")
    assert code_of(lambda: s3.list_parts(Bucket=BUCKET, Key="public/mp/other.bin", UploadId=upload)) == (
        404, "NoSuchUpload")
    one = s3.complete_multipart_upload(Bucket=BUCKET, Key="public/mp/parts.bin", UploadId=upload,
                                       MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": small["ETag"]}]})
    assert one["ETag"] == f'"{hashlib.md5(hashlib.md5(b"tiny").digest()).hexdigest()}-1"'
    head = s3.head_object(Bucket=BUCKET, Key="public/mp/parts.bin")
    assert head["ContentLength"] == 4 and head["ContentType"] == "text/plain" and head["Metadata"]["m"] == "1"
    assert code_of(lambda: s3.list_parts(Bucket=BUCKET, Key="public/mp/parts.bin", UploadId=upload)) == (
        404, "NoSuchUpload")
    aborted = s3.create_multipart_upload(Bucket=BUCKET, Key="public/mp/aborted.bin")["UploadId"]
    s3.upload_part(Bucket=BUCKET, Key="public/mp/aborted.bin", UploadId=aborted, PartNumber=1, Body=b"x")
    s3.abort_multipart_upload(Bucket=BUCKET, Key="public/mp/aborted.bin", UploadId=aborted)
    assert code_of(lambda: s3.head_object(Bucket=BUCKET, Key="public/mp/aborted.bin"))[0] == 404


def test_multipart_is_judged_by_the_rules(gw: Gateway) -> None:
    alice = gw.client(ALICE)
    assert code_of(lambda: alice.create_multipart_upload(Bucket=BUCKET, Key="users/bob/mp.bin")) == (
        403, "AccessDenied")
    upload = alice.create_multipart_upload(Bucket=BUCKET, Key="users/alice/mp.bin")["UploadId"]
    part = alice.upload_part(Bucket=BUCKET, Key="users/alice/mp.bin", UploadId=upload, PartNumber=1, Body=b"mine")
    alice.complete_multipart_upload(Bucket=BUCKET, Key="users/alice/mp.bin", UploadId=upload,
                                    MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
    assert alice.get_object(Bucket=BUCKET, Key="users/alice/mp.bin")["Body"].read() == b"mine"


def test_virtual_host_style_addresses_the_bucket_by_host(gw: Gateway) -> None:
    """With --s3-domain, `BUCKET.DOMAIN` names the bucket and the path is the key (signed for that host)."""
    port = urllib.parse.urlsplit(gw.s3_url).port
    host = f"{BUCKET}.s3.portcullis.test:{port}"
    body = b"virtual host"
    request = botocore.awsrequest.AWSRequest(method="PUT", url=f"http://{host}/public/vhost.txt", data=body,
                                             headers={"x-amz-content-sha256": hashlib.sha256(body).hexdigest()})
    botocore.auth.S3SigV4Auth(botocore.credentials.Credentials(*ADMIN), "s3", "us-east-1").add_auth(request)
    headers = {**dict(request.headers), "Host": host}
    put = requests.put(f"{gw.s3_url}/public/vhost.txt", data=body, headers=headers)
    assert put.status_code == 200, put.text
    assert gw.client().get_object(Bucket=BUCKET, Key="public/vhost.txt")["Body"].read() == body
    listing = requests.get(f"{gw.s3_url}/?list-type=2&prefix=public/vhost", headers={"Host": host})
    assert listing.status_code == 200 and b"<Key>public/vhost.txt</Key>" in listing.content


def test_upload_part_copy_with_ranges(gw: Gateway) -> None:
    s3 = gw.client()
    source = secrets.token_bytes(6 * 1024 * 1024)
    s3.put_object(Bucket=BUCKET, Key="public/mp/source.bin", Body=source)
    upload = s3.create_multipart_upload(Bucket=BUCKET, Key="public/mp/copied.bin")["UploadId"]
    cut = 5 * 1024 * 1024
    first = s3.upload_part_copy(Bucket=BUCKET, Key="public/mp/copied.bin", UploadId=upload, PartNumber=1,
                                CopySource={"Bucket": BUCKET, "Key": "public/mp/source.bin"},
                                CopySourceRange=f"bytes=0-{cut - 1}")["CopyPartResult"]
    second = s3.upload_part_copy(Bucket=BUCKET, Key="public/mp/copied.bin", UploadId=upload, PartNumber=2,
                                 CopySource={"Bucket": BUCKET, "Key": "public/mp/source.bin"},
                                 CopySourceRange=f"bytes={cut}-{len(source) - 1}")["CopyPartResult"]
    assert first["ETag"] == '"' + hashlib.md5(source[:cut]).hexdigest() + '"'
    s3.complete_multipart_upload(Bucket=BUCKET, Key="public/mp/copied.bin", UploadId=upload, MultipartUpload={
        "Parts": [{"PartNumber": 1, "ETag": first["ETag"]}, {"PartNumber": 2, "ETag": second["ETag"]}]})
    assert s3.get_object(Bucket=BUCKET, Key="public/mp/copied.bin")["Body"].read() == source
    # The source is judged by the rules for the caller: alice may not copy bob's object into her upload.
    s3.put_object(Bucket=BUCKET, Key="users/bob/private.bin", Body=b"bob")
    alice = gw.client(ALICE)
    mine = alice.create_multipart_upload(Bucket=BUCKET, Key="users/alice/steal.bin")["UploadId"]
    assert code_of(lambda: alice.upload_part_copy(Bucket=BUCKET, Key="users/alice/steal.bin", UploadId=mine,
                                                  PartNumber=1,
                                                  CopySource={"Bucket": BUCKET, "Key": "users/bob/private.bin"})) == (
        403, "AccessDenied")


def test_list_multipart_uploads_shows_only_the_callers(gw: Gateway) -> None:
    alice = gw.client(ALICE)
    mine = alice.create_multipart_upload(Bucket=BUCKET, Key="users/alice/pending.bin")["UploadId"]
    theirs = gw.client().create_multipart_upload(Bucket=BUCKET, Key="public/pending.bin")["UploadId"]
    seen = [(u["Key"], u["UploadId"]) for u in alice.list_multipart_uploads(Bucket=BUCKET).get("Uploads", [])]
    assert ("users/alice/pending.bin", mine) in seen and all(key.startswith("users/alice/") for key, _ in seen)
    admin_seen = [u["UploadId"] for u in gw.client().list_multipart_uploads(Bucket=BUCKET, Prefix="public/pending")
                  .get("Uploads", [])]
    assert admin_seen == [theirs]
    alice.abort_multipart_upload(Bucket=BUCKET, Key="users/alice/pending.bin", UploadId=mine)
    seen = [u["UploadId"] for u in alice.list_multipart_uploads(Bucket=BUCKET).get("Uploads", [])]
    assert mine not in seen


def test_keys_file_is_reloaded_on_sighup(tmp_path: Path) -> None:
    """SIGHUP re-reads --s3-keys: a new key works, a removed one is refused; an invalid file keeps the keys."""
    import signal
    keys = tmp_path / "keys.json"
    first, second = ("first-key", "first-secret-xxxx"), ("second-key", "second-secret-xxxx")
    keys.write_text(json.dumps({"keys": [{"id": first[0], "secret": first[1], "admin": True}]}))
    (tmp_path / "storage.rules").write_text(RULES)
    port = free_port()
    server = Server(workdir=tmp_path, name="s3reload", args=[
        "--bucket", f"{BUCKET}=file:{tmp_path / 'data'}", "--rules", str(tmp_path / "storage.rules"),
        "--s3-listen", f"127.0.0.1:{port}", "--s3-keys", str(keys)]).start()
    try:
        gw = Gateway(server, f"http://127.0.0.1:{port}", "")
        assert gw.client(first).list_objects_v2(Bucket=BUCKET)["KeyCount"] == 0
        keys.write_text(json.dumps({"keys": [{"id": second[0], "secret": second[1], "admin": True}]}))
        server.signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while "s3 keys reloaded" not in server.log_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert gw.client(second).list_objects_v2(Bucket=BUCKET)["KeyCount"] == 0
        assert code_of(lambda: gw.client(first).list_objects_v2(Bucket=BUCKET)) == (403, "InvalidAccessKeyId")
        keys.write_text("{not json")
        server.signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while "s3 keys reload failed" not in server.log_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert gw.client(second).list_objects_v2(Bucket=BUCKET)["KeyCount"] == 0
        assert second[1] not in server.log_text()
        # A presigned URL verified under a key's secret stops working when the secret is rotated under the same
        # id, although it was verified (and kept as verified) before.
        listing = gw.client(second).generate_presigned_url("list_objects_v2", Params={"Bucket": BUCKET}, ExpiresIn=300)
        assert requests.get(listing).status_code == 200
        assert requests.get(listing).status_code == 200
        keys.write_text(json.dumps({"keys": [{"id": second[0], "secret": "rotated-secret-xxxx", "admin": True}]}))
        reloads = server.log_text().count("s3 keys reloaded")
        server.signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while server.log_text().count("s3 keys reloaded") == reloads and time.monotonic() < deadline:
            time.sleep(0.05)
        refused = requests.get(listing)
        assert refused.status_code == 403 and b"<Code>SignatureDoesNotMatch</Code>" in refused.content
    finally:
        server.stop(timeout=10)
        server.kill()
