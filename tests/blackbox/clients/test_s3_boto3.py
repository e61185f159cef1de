"""boto3 against the S3 surface: every operation the surface serves, as boto3 sends it by default (SigV4 headers,
path style), with the admin's access key. Each test also reads what it wrote through v0 or the JSON API: an
object written over S3 is the same object the other surfaces serve."""
from __future__ import annotations

import datetime
import hashlib
import io
import os
import socket
import secrets
import time
import urllib.parse

import boto3
import botocore.config
import pytest
import requests
from boto3.s3.transfer import TransferConfig
from botocore.exceptions import ClientError

from clientkit import BUCKET
from harness import crc32c_b64, md5_b64, request
from s3kit import REGION, S3_DOMAIN, Key, S3Gateway

MIB = 1 << 20


def client(s3: S3Gateway, key: Key | None = None, **extra: object):
    key = key or s3.admin
    # s3v4: without it botocore presigns with SigV2 (`AWSAccessKeyId=…&Signature=…`), which the gateway refuses.
    config = botocore.config.Config(s3={"addressing_style": "path"}, signature_version="s3v4",
                                    retries={"max_attempts": 1}, connect_timeout=5, read_timeout=60)
    return boto3.client("s3", endpoint_url=s3.endpoint, region_name=REGION, aws_access_key_id=key.id,
                        aws_secret_access_key=key.secret, config=config, **extra)


def error_of(caught: pytest.ExceptionInfo[ClientError]) -> tuple[int, str]:
    response = caught.value.response
    return response["ResponseMetadata"]["HTTPStatusCode"], response["Error"]["Code"]


def quoted_md5(body: bytes) -> str:
    return '"' + hashlib.md5(body).hexdigest() + '"'


def test_put_head_get_with_metadata_seen_by_v0_and_json_api(s3: S3Gateway) -> None:
    c = client(s3)
    body = b"hello from boto3\n" * 100
    put = c.put_object(Bucket=BUCKET, Key="boto/hello.txt", Body=body, ContentType="text/plain",
                       Metadata={"owner": "ops", "purpose": "tests"}, ContentMD5=md5_b64(body),
                       CacheControl="max-age=60", ContentDisposition="inline", ContentLanguage="en")
    assert put["ETag"] == quoted_md5(body)
    head = c.head_object(Bucket=BUCKET, Key="boto/hello.txt")
    assert head["ContentLength"] == len(body) and head["ContentType"] == "text/plain"
    assert head["Metadata"] == {"owner": "ops", "purpose": "tests"}
    assert head["ETag"] == quoted_md5(body)
    assert head["CacheControl"] == "max-age=60" and head["ContentDisposition"] == "inline"
    assert head["ContentLanguage"] == "en"
    assert c.get_object(Bucket=BUCKET, Key="boto/hello.txt")["Body"].read() == body

    assert s3.v0_media("boto/hello.txt") == (200, body)
    meta = s3.v0_metadata("boto/hello.txt")
    assert meta["contentType"] == "text/plain" and meta["size"] == str(len(body))
    assert meta["metadata"] == {"owner": "ops", "purpose": "tests"}
    assert meta["cacheControl"] == "max-age=60" and meta["contentDisposition"] == "inline"
    status, resource = s3.json_api_metadata("boto/hello.txt")
    assert status == 200 and resource["md5Hash"] == md5_b64(body)
    # The JSON API also shows the download token the gateway minted at the write, as for any other upload.
    assert {k: v for k, v in resource["metadata"].items() if k != "firebaseStorageDownloadTokens"} == \
        {"owner": "ops", "purpose": "tests"}


def test_an_object_written_by_v0_is_read_by_boto3(s3: S3Gateway) -> None:
    body = os.urandom(3000)
    s3.v0_upload("boto/from-v0.bin", body, "application/x-test")
    got = client(s3).get_object(Bucket=BUCKET, Key="boto/from-v0.bin")
    assert got["Body"].read() == body and got["ContentType"] == "application/x-test"
    assert got["ETag"] == quoted_md5(body)


def test_put_checks_content_md5_and_crc32c(s3: S3Gateway) -> None:
    c = client(s3)
    body = os.urandom(5000)
    with pytest.raises(ClientError) as caught:
        c.put_object(Bucket=BUCKET, Key="boto/bad-md5.bin", Body=body, ContentMD5=md5_b64(body + b"x"))
    assert error_of(caught) == (400, "BadDigest")
    c.put_object(Bucket=BUCKET, Key="boto/crc.bin", Body=body, ChecksumCRC32C=crc32c_b64(body))
    status, resource = s3.json_api_metadata("boto/crc.bin")
    assert status == 200 and resource["crc32c"] == crc32c_b64(body)
    with pytest.raises(ClientError) as caught:
        c.put_object(Bucket=BUCKET, Key="boto/bad-crc.bin", Body=body, ChecksumCRC32C=crc32c_b64(body + b"x"))
    assert error_of(caught) == (400, "BadDigest")
    for name in ("boto/bad-md5.bin", "boto/bad-crc.bin"):  # a refused body leaves nothing behind
        assert s3.v0_media(name)[0] == 404


def test_get_range_conditionals_and_response_overrides(s3: S3Gateway) -> None:
    c = client(s3)
    body = bytes(range(256)) * 8
    etag = c.put_object(Bucket=BUCKET, Key="boto/range.bin", Body=body)["ETag"]
    part = c.get_object(Bucket=BUCKET, Key="boto/range.bin", Range="bytes=10-19")
    assert part["Body"].read() == body[10:20]
    assert part["ContentRange"] == f"bytes 10-19/{len(body)}" and part["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert c.get_object(Bucket=BUCKET, Key="boto/range.bin", Range="bytes=-5")["Body"].read() == body[-5:]
    with pytest.raises(ClientError) as caught:
        c.get_object(Bucket=BUCKET, Key="boto/range.bin", Range=f"bytes={len(body)}-")
    assert error_of(caught) == (416, "InvalidRange")

    assert c.get_object(Bucket=BUCKET, Key="boto/range.bin", IfMatch=etag)["Body"].read() == body
    with pytest.raises(ClientError) as caught:
        c.get_object(Bucket=BUCKET, Key="boto/range.bin", IfMatch='"0123456789abcdef0123456789abcdef"')
    assert error_of(caught) == (412, "PreconditionFailed")
    with pytest.raises(ClientError) as caught:
        c.get_object(Bucket=BUCKET, Key="boto/range.bin", IfNoneMatch=etag)
    assert error_of(caught)[0] == 304
    later = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
    with pytest.raises(ClientError) as caught:
        c.get_object(Bucket=BUCKET, Key="boto/range.bin", IfModifiedSince=later)
    assert error_of(caught)[0] == 304
    with pytest.raises(ClientError) as caught:
        c.get_object(Bucket=BUCKET, Key="boto/range.bin",
                     IfUnmodifiedSince=datetime.datetime(2001, 1, 1, tzinfo=datetime.timezone.utc))
    assert error_of(caught) == (412, "PreconditionFailed")

    got = c.get_object(Bucket=BUCKET, Key="boto/range.bin", ResponseContentType="application/x-override",
                       ResponseContentDisposition='attachment; filename="r.bin"', ResponseCacheControl="no-store",
                       ResponseContentLanguage="fr")
    assert got["ContentType"] == "application/x-override"
    assert got["ContentDisposition"] == 'attachment; filename="r.bin"'
    assert got["CacheControl"] == "no-store" and got["ContentLanguage"] == "fr"
    assert s3.v0_metadata("boto/range.bin")["contentType"] != "application/x-override", "overrides are per response"


def test_copy_object_with_metadata_directive_and_conditions(s3: S3Gateway) -> None:
    c = client(s3)
    body = os.urandom(4096)
    etag = c.put_object(Bucket=BUCKET, Key="boto/copy-src.bin", Body=body, ContentType="image/png",
                        Metadata={"k": "v"})["ETag"]
    source = {"Bucket": BUCKET, "Key": "boto/copy-src.bin"}
    copied = c.copy_object(Bucket=BUCKET, Key="boto/copy-same.bin", CopySource=source)
    assert copied["CopyObjectResult"]["ETag"] == etag
    head = c.head_object(Bucket=BUCKET, Key="boto/copy-same.bin")
    assert head["ContentType"] == "image/png" and head["Metadata"] == {"k": "v"}
    c.copy_object(Bucket=BUCKET, Key="boto/copy-new.bin", CopySource=source, MetadataDirective="REPLACE",
                  ContentType="text/plain", Metadata={"fresh": "yes"})
    head = c.head_object(Bucket=BUCKET, Key="boto/copy-new.bin")
    assert head["ContentType"] == "text/plain" and head["Metadata"] == {"fresh": "yes"}
    assert s3.v0_media("boto/copy-new.bin") == (200, body)
    assert s3.v0_metadata("boto/copy-new.bin")["metadata"] == {"fresh": "yes"}

    c.copy_object(Bucket=BUCKET, Key="boto/copy-if.bin", CopySource=source, CopySourceIfMatch=etag)
    with pytest.raises(ClientError) as caught:
        c.copy_object(Bucket=BUCKET, Key="boto/copy-no.bin", CopySource=source,
                      CopySourceIfMatch='"0123456789abcdef0123456789abcdef"')
    assert error_of(caught) == (412, "PreconditionFailed")
    with pytest.raises(ClientError) as caught:
        c.copy_object(Bucket=BUCKET, Key="boto/copy-no.bin", CopySource=source, CopySourceIfNoneMatch=etag)
    assert error_of(caught) == (412, "PreconditionFailed")
    assert s3.v0_media("boto/copy-no.bin")[0] == 404
    with pytest.raises(ClientError) as caught:
        c.copy_object(Bucket=BUCKET, Key="boto/copy-no.bin", CopySource={"Bucket": BUCKET, "Key": "boto/absent"})
    assert error_of(caught) == (404, "NoSuchKey")


def test_delete_object_and_delete_objects(s3: S3Gateway) -> None:
    c = client(s3)
    for name in ("boto/del/one", "boto/del/two", "boto/del/three", "boto/del/keep"):
        c.put_object(Bucket=BUCKET, Key=name, Body=name.encode())
    c.delete_object(Bucket=BUCKET, Key="boto/del/one")
    with pytest.raises(ClientError) as caught:
        c.head_object(Bucket=BUCKET, Key="boto/del/one")
    assert error_of(caught)[0] == 404
    assert s3.v0_media("boto/del/one")[0] == 404
    c.delete_object(Bucket=BUCKET, Key="boto/del/one")  # deleting what is gone succeeds, as on S3

    answer = c.delete_objects(Bucket=BUCKET, Delete={"Objects": [{"Key": "boto/del/two"}, {"Key": "boto/del/three"},
                                                                 {"Key": "boto/del/never-was"}]})
    assert sorted(d["Key"] for d in answer["Deleted"]) == ["boto/del/never-was", "boto/del/three", "boto/del/two"]
    assert not answer.get("Errors")
    quiet = c.delete_objects(Bucket=BUCKET, Delete={"Objects": [{"Key": "boto/del/keep"}], "Quiet": True})
    assert not quiet.get("Deleted") and not quiet.get("Errors")
    for name in ("boto/del/two", "boto/del/three", "boto/del/keep"):
        assert s3.v0_media(name)[0] == 404
    assert c.list_objects_v2(Bucket=BUCKET, Prefix="boto/del/")["KeyCount"] == 0


NAMES = ["list/a/1.txt", "list/a/2.txt", "list/a/deep/3.txt", "list/b/1.txt", "list/c.txt",
         "list/sp ace+plus/é.txt", "list/z.txt"]


@pytest.fixture(scope="module")
def listed(s3: S3Gateway) -> list[str]:
    c = client(s3)
    for name in NAMES:
        c.put_object(Bucket=BUCKET, Key=name, Body=name.encode())
    return NAMES


def test_list_objects_v2_prefix_delimiter_pages_start_after(s3: S3Gateway, listed: list[str]) -> None:
    c = client(s3)
    flat = c.list_objects_v2(Bucket=BUCKET, Prefix="list/")
    assert [o["Key"] for o in flat["Contents"]] == sorted(listed)
    sizes = {o["Key"]: o["Size"] for o in flat["Contents"]}
    assert sizes["list/c.txt"] == len(b"list/c.txt")
    assert {o["Key"]: o["ETag"] for o in flat["Contents"]}["list/z.txt"] == quoted_md5(b"list/z.txt")

    tree = c.list_objects_v2(Bucket=BUCKET, Prefix="list/", Delimiter="/")
    assert [o["Key"] for o in tree["Contents"]] == ["list/c.txt", "list/z.txt"]
    assert [p["Prefix"] for p in tree["CommonPrefixes"]] == ["list/a/", "list/b/", "list/sp ace+plus/"]
    # The JSON API lists the same folder the same way.
    same = request("GET", f"{s3.server.url}/storage/v1/b/{BUCKET}/o?" + urllib.parse.urlencode(
        {"prefix": "list/", "delimiter": "/"}), headers=s3.bearer).json()
    assert [i["name"] for i in same["items"]] == ["list/c.txt", "list/z.txt"]
    assert same["prefixes"] == ["list/a/", "list/b/", "list/sp ace+plus/"]

    pages = list(c.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix="list/",
                                                            PaginationConfig={"PageSize": 2}))
    assert len(pages) == 4 and all(p["KeyCount"] <= 2 for p in pages)
    assert pages[0]["IsTruncated"] and pages[0]["NextContinuationToken"]
    assert [o["Key"] for p in pages for o in p.get("Contents", [])] == flat_keys(flat)

    after = c.list_objects_v2(Bucket=BUCKET, Prefix="list/", StartAfter="list/b/1.txt")
    assert [o["Key"] for o in after["Contents"]] == ["list/c.txt", "list/sp ace+plus/é.txt", "list/z.txt"]
    # Left alone, botocore asks for encoding-type=url and decodes (the listings above hold the name with a space,
    # a plus and UTF-8 intact); asked for explicitly, the encoded names reach the caller as the server sent them.
    encoded = c.list_objects_v2(Bucket=BUCKET, Prefix="list/sp ace+plus/", EncodingType="url")
    [key] = [o["Key"] for o in encoded["Contents"]]
    assert key.isascii() and " " not in key and urllib.parse.unquote_plus(key) == "list/sp ace+plus/é.txt"
    assert c.get_object(Bucket=BUCKET, Key="list/sp ace+plus/é.txt")["Body"].read() == "list/sp ace+plus/é.txt".encode()


def flat_keys(page: dict) -> list[str]:
    return [o["Key"] for o in page["Contents"]]


def test_list_objects_v1_marker_and_delimiter(s3: S3Gateway, listed: list[str]) -> None:
    c = client(s3)
    first = c.list_objects(Bucket=BUCKET, Prefix="list/", MaxKeys=3)
    assert first["IsTruncated"] and [o["Key"] for o in first["Contents"]] == sorted(listed)[:3]
    rest = c.list_objects(Bucket=BUCKET, Prefix="list/", Marker=first["Contents"][-1]["Key"])
    assert [o["Key"] for o in rest["Contents"]] == sorted(listed)[3:]
    tree = c.list_objects(Bucket=BUCKET, Prefix="list/", Delimiter="/", MaxKeys=2)
    assert tree["IsTruncated"] and tree["NextMarker"]
    everything = list(c.get_paginator("list_objects").paginate(Bucket=BUCKET, Prefix="list/", Delimiter="/",
                                                               PaginationConfig={"PageSize": 2}))
    assert [p["Prefix"] for page in everything for p in page.get("CommonPrefixes", [])] == \
        ["list/a/", "list/b/", "list/sp ace+plus/"]
    assert [o["Key"] for page in everything for o in page.get("Contents", [])] == ["list/c.txt", "list/z.txt"]


def test_buckets_listed_headed_and_located(s3: S3Gateway) -> None:
    c = client(s3)
    assert BUCKET in [b["Name"] for b in c.list_buckets()["Buckets"]]
    assert request("GET", f"{s3.server.url}/storage/v1/b/{BUCKET}", headers=s3.bearer).json()["name"] == BUCKET
    assert c.head_bucket(Bucket=BUCKET)["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert c.get_bucket_location(Bucket=BUCKET)["LocationConstraint"] in (None, REGION)
    with pytest.raises(ClientError) as caught:
        c.head_bucket(Bucket="no-such-bucket-here")
    assert error_of(caught)[0] == 404
    with pytest.raises(ClientError) as caught:
        c.get_object(Bucket="no-such-bucket-here", Key="x")
    assert error_of(caught) == (404, "NoSuchBucket")
    with pytest.raises(ClientError) as caught:
        c.get_object(Bucket=BUCKET, Key="boto/never-written")
    assert error_of(caught) == (404, "NoSuchKey")


def test_multipart_upload_with_8_mib_parts(s3: S3Gateway) -> None:
    s3.require_multipart()
    c = client(s3)
    name = f"boto/multi-{secrets.token_hex(4)}.bin"
    parts_data = [os.urandom(8 * MIB), os.urandom(8 * MIB), os.urandom(MIB + 17)]
    whole = b"".join(parts_data)
    upload = c.create_multipart_upload(Bucket=BUCKET, Key=name, ContentType="application/x-multi",
                                       Metadata={"parts": "3"})
    upload_id = upload["UploadId"]
    listed = c.list_multipart_uploads(Bucket=BUCKET, Prefix=name)
    assert [(u["Key"], u["UploadId"]) for u in listed.get("Uploads", [])] == [(name, upload_id)]
    etags = []
    for number, data in enumerate(parts_data, start=1):
        answer = c.upload_part(Bucket=BUCKET, Key=name, UploadId=upload_id, PartNumber=number,
                               Body=data)
        assert answer["ETag"] == quoted_md5(data)
        etags.append(answer["ETag"])
    parts = c.list_parts(Bucket=BUCKET, Key=name, UploadId=upload_id)["Parts"]
    assert [(p["PartNumber"], p["Size"], p["ETag"]) for p in parts] == \
        [(n, len(d), e) for n, (d, e) in enumerate(zip(parts_data, etags), start=1)]
    assert s3.v0_media(name)[0] == 404, "nothing is visible before completion"

    with pytest.raises(ClientError) as caught:
        c.complete_multipart_upload(Bucket=BUCKET, Key=name, UploadId=upload_id, MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": etags[1]}, {"PartNumber": 2, "ETag": etags[1]}]})
    assert error_of(caught) == (400, "InvalidPart")
    done = c.complete_multipart_upload(Bucket=BUCKET, Key=name, UploadId=upload_id, MultipartUpload={
        "Parts": [{"PartNumber": n, "ETag": e} for n, e in enumerate(etags, start=1)]})
    digests = b"".join(hashlib.md5(d).digest() for d in parts_data)
    assert done["ETag"] == f'"{hashlib.md5(digests).hexdigest()}-3"'
    got = c.get_object(Bucket=BUCKET, Key=name)
    assert got["ContentLength"] == len(whole) and got["ContentType"] == "application/x-multi"
    assert got["Metadata"] == {"parts": "3"}
    assert hashlib.sha256(got["Body"].read()).digest() == hashlib.sha256(whole).digest()
    status, v0_body = s3.v0_media(name)
    assert status == 200 and hashlib.sha256(v0_body).digest() == hashlib.sha256(whole).digest()
    assert s3.json_api_metadata(name)[1]["md5Hash"] == md5_b64(whole)
    assert not c.list_multipart_uploads(Bucket=BUCKET, Prefix=name).get("Uploads")
    with pytest.raises(ClientError) as caught:
        c.list_parts(Bucket=BUCKET, Key=name, UploadId=upload_id)
    assert error_of(caught) == (404, "NoSuchUpload")


def test_multipart_upload_part_copy_small_parts_and_abort(s3: S3Gateway) -> None:
    s3.require_multipart()
    c = client(s3)
    source = os.urandom(6 * MIB)
    c.put_object(Bucket=BUCKET, Key="boto/copy-source.bin", Body=source)
    upload_id = c.create_multipart_upload(Bucket=BUCKET, Key="boto/assembled.bin")["UploadId"]
    copied = c.upload_part_copy(Bucket=BUCKET, Key="boto/assembled.bin", UploadId=upload_id, PartNumber=1,
                                CopySource={"Bucket": BUCKET, "Key": "boto/copy-source.bin"},
                                CopySourceRange=f"bytes=0-{5 * MIB}")
    tail = b"tail bytes"
    second = c.upload_part(Bucket=BUCKET, Key="boto/assembled.bin", UploadId=upload_id, PartNumber=2, Body=tail)
    c.complete_multipart_upload(Bucket=BUCKET, Key="boto/assembled.bin", UploadId=upload_id, MultipartUpload={
        "Parts": [{"PartNumber": 1, "ETag": copied["CopyPartResult"]["ETag"]},
                  {"PartNumber": 2, "ETag": second["ETag"]}]})
    assert s3.v0_media("boto/assembled.bin") == (200, source[:5 * MIB + 1] + tail)

    small = c.create_multipart_upload(Bucket=BUCKET, Key="boto/too-small.bin")["UploadId"]
    first = c.upload_part(Bucket=BUCKET, Key="boto/too-small.bin", UploadId=small, PartNumber=1, Body=b"a" * 1024)
    last = c.upload_part(Bucket=BUCKET, Key="boto/too-small.bin", UploadId=small, PartNumber=2, Body=b"b")
    with pytest.raises(ClientError) as caught:
        c.complete_multipart_upload(Bucket=BUCKET, Key="boto/too-small.bin", UploadId=small, MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": first["ETag"]}, {"PartNumber": 2, "ETag": last["ETag"]}]})
    assert error_of(caught) == (400, "EntityTooSmall")

    c.abort_multipart_upload(Bucket=BUCKET, Key="boto/too-small.bin", UploadId=small)
    with pytest.raises(ClientError) as caught:
        c.list_parts(Bucket=BUCKET, Key="boto/too-small.bin", UploadId=small)
    assert error_of(caught) == (404, "NoSuchUpload")
    assert s3.v0_media("boto/too-small.bin")[0] == 404


def test_managed_transfer_in_8_mib_chunks(s3: S3Gateway) -> None:
    """boto3's transfer manager (what `upload_file` and most tools use): parallel 8 MiB parts, ranged GETs."""
    s3.require_multipart()
    c = client(s3)
    body = os.urandom(20 * MIB + 3)
    config = TransferConfig(multipart_threshold=8 * MIB, multipart_chunksize=8 * MIB, max_concurrency=3)
    c.upload_fileobj(io.BytesIO(body), BUCKET, "boto/transfer.bin", Config=config)
    assert c.head_object(Bucket=BUCKET, Key="boto/transfer.bin")["ETag"].endswith('-3"')
    out = io.BytesIO()
    c.download_fileobj(BUCKET, "boto/transfer.bin", out, Config=config)
    assert hashlib.sha256(out.getvalue()).digest() == hashlib.sha256(body).digest()
    assert s3.json_api_metadata("boto/transfer.bin")[1]["size"] == str(len(body))


def test_presigned_get_and_put_used_with_requests(s3: S3Gateway) -> None:
    c = client(s3)
    body = os.urandom(10_000)
    put_url = c.generate_presigned_url("put_object", Params={"Bucket": BUCKET, "Key": "boto/presigned.bin"},
                                       ExpiresIn=300)
    put = requests.put(put_url, data=body, timeout=20)
    assert put.status_code == 200, put.text
    assert s3.v0_media("boto/presigned.bin") == (200, body)
    get_url = c.generate_presigned_url("get_object", Params={"Bucket": BUCKET, "Key": "boto/presigned.bin"},
                                       ExpiresIn=300)
    got = requests.get(get_url, timeout=20)
    assert got.status_code == 200 and got.content == body
    assert requests.get(get_url, headers={"Range": "bytes=0-9"}, timeout=20).content == body[:10]

    tampered = get_url.replace("boto/presigned.bin", "boto/presigned.bin2")
    refused = requests.get(tampered, timeout=20)
    assert refused.status_code == 403 and b"<Code>SignatureDoesNotMatch</Code>" in refused.content
    short = c.generate_presigned_url("get_object", Params={"Bucket": BUCKET, "Key": "boto/presigned.bin"},
                                     ExpiresIn=1)
    time.sleep(2.1)  # let the URL expire: the clock is the thing under test
    expired = requests.get(short, timeout=20)
    assert expired.status_code == 403 and b"<Code>AccessDenied</Code>" in expired.content
    assert body not in expired.content


def test_bad_credentials_are_refused(s3: S3Gateway) -> None:
    wrong_secret = client(s3, Key(s3.admin.id, s3.admin.secret + "x"))
    with pytest.raises(ClientError) as caught:
        wrong_secret.get_object(Bucket=BUCKET, Key="boto/hello.txt")
    assert error_of(caught) == (403, "SignatureDoesNotMatch")
    unknown = client(s3, Key("PCUNKNOWNKEY0000", "secret"))
    with pytest.raises(ClientError) as caught:
        unknown.list_objects_v2(Bucket=BUCKET)
    assert error_of(caught) == (403, "InvalidAccessKeyId")
    anonymous = requests.get(f"{s3.endpoint}/{BUCKET}/boto/hello.txt", timeout=20)
    assert anonymous.status_code == 403 and b"<Error>" in anonymous.content



def test_virtual_host_style(s3: S3Gateway, monkeypatch: pytest.MonkeyPatch) -> None:
    """boto3 with `addressing_style = virtual` against `--s3-domain`: the bucket travels in the Host header.
    `*.s3.portcullis.test` resolves to 127.0.0.1 in this process only (a test domain has no DNS)."""
    resolve = socket.getaddrinfo

    def loopback(host, *args, **kwargs):
        if isinstance(host, str) and host.endswith("." + S3_DOMAIN):
            host = "127.0.0.1"
        return resolve(host, *args, **kwargs)
    monkeypatch.setattr(socket, "getaddrinfo", loopback)
    port = s3.endpoint.rsplit(":", 1)[1]
    config = botocore.config.Config(s3={"addressing_style": "virtual"}, signature_version="s3v4",
                                    retries={"max_attempts": 1})
    c = boto3.client("s3", endpoint_url=f"http://{S3_DOMAIN}:{port}", region_name=REGION,
                     aws_access_key_id=s3.admin.id, aws_secret_access_key=s3.admin.secret, config=config)
    seen: list[str] = []
    c.meta.events.register("before-send.s3", lambda request, **_: seen.append(request.url))
    c.put_object(Bucket=BUCKET, Key="boto/virtual.txt", Body=b"by host name")
    assert seen[-1].startswith(f"http://{BUCKET}.{S3_DOMAIN}:{port}/boto/virtual.txt"), seen
    assert c.get_object(Bucket=BUCKET, Key="boto/virtual.txt")["Body"].read() == b"by host name"
    assert [o["Key"] for o in c.list_objects_v2(Bucket=BUCKET, Prefix="boto/virtual")["Contents"]] == \
        ["boto/virtual.txt"]
    url = c.generate_presigned_url("get_object", Params={"Bucket": BUCKET, "Key": "boto/virtual.txt"}, ExpiresIn=60)
    assert requests.get(url, timeout=20).content == b"by host name"
    assert s3.v0_media("boto/virtual.txt") == (200, b"by host name")
