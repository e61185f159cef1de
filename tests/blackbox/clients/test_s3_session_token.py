"""A signed-in user through an S3 SDK: alice's JWT as the session token (`X-Amz-Security-Token`, with the
documented access key id), and her own access key (`uid` alice), both judged by the same rules as on v0 —
allowed under `users/alice/`, 403 AccessDenied everywhere else, before existence is revealed."""
from __future__ import annotations

import secrets
import time

import boto3
import botocore.config
import jwt
import pytest
import requests
from botocore.exceptions import ClientError

from clientkit import BUCKET
from s3kit import REGION, SESSION_KEY_ID, SESSION_SECRET, S3Gateway


def client(s3: S3Gateway, key_id: str, secret: str, token: str | None = None):
    config = botocore.config.Config(s3={"addressing_style": "path"}, signature_version="s3v4",
                                    retries={"max_attempts": 1})
    return boto3.client("s3", endpoint_url=s3.endpoint, region_name=REGION, aws_access_key_id=key_id,
                        aws_secret_access_key=secret, aws_session_token=token, config=config)


def as_jwt(s3: S3Gateway, token: str | None = None):
    return client(s3, SESSION_KEY_ID, SESSION_SECRET, token or s3.alice_jwt())


def refused(call, *args, **kwargs) -> tuple[int, str]:
    with pytest.raises(ClientError) as caught:
        call(*args, **kwargs)
    response = caught.value.response
    return response["ResponseMetadata"]["HTTPStatusCode"], response["Error"]["Code"]


@pytest.mark.parametrize("who", ["jwt", "uid-key"])
def test_alice_is_confined_to_her_folder(s3: S3Gateway, who: str) -> None:
    admin = client(s3, s3.admin.id, s3.admin.secret)
    admin.put_object(Bucket=BUCKET, Key="users/bob/private.txt", Body=b"bob's")
    alice = as_jwt(s3) if who == "jwt" else client(s3, s3.alice.id, s3.alice.secret)
    mine = f"users/alice/{who}/notes.txt"

    alice.put_object(Bucket=BUCKET, Key=mine, Body=b"alice's", Metadata={"by": who})
    assert alice.get_object(Bucket=BUCKET, Key=mine)["Body"].read() == b"alice's"
    assert alice.head_object(Bucket=BUCKET, Key=mine)["Metadata"] == {"by": who}
    listed = alice.list_objects_v2(Bucket=BUCKET, Prefix=f"users/alice/{who}/")
    assert [o["Key"] for o in listed["Contents"]] == [mine]
    assert s3.v0_media(mine) == (200, b"alice's"), "the same object on v0"
    alice.copy_object(Bucket=BUCKET, Key=f"users/alice/{who}/copy.txt", CopySource={"Bucket": BUCKET, "Key": mine})
    assert s3.v0_media(f"users/alice/{who}/copy.txt") == (200, b"alice's")

    assert refused(alice.put_object, Bucket=BUCKET, Key="users/bob/intrusion.txt", Body=b"x") == (403, "AccessDenied")
    assert refused(alice.get_object, Bucket=BUCKET, Key="users/bob/private.txt") == (403, "AccessDenied")
    assert refused(alice.head_object, Bucket=BUCKET, Key="users/bob/missing.txt")[0] == 403  # not 404
    assert refused(alice.get_object, Bucket=BUCKET, Key="users/bob/missing.txt") == (403, "AccessDenied")
    assert refused(alice.delete_object, Bucket=BUCKET, Key="users/bob/private.txt") == (403, "AccessDenied")
    assert refused(alice.copy_object, Bucket=BUCKET, Key=f"users/alice/{who}/stolen.txt",
                   CopySource={"Bucket": BUCKET, "Key": "users/bob/private.txt"}) == (403, "AccessDenied")
    assert refused(alice.list_objects_v2, Bucket=BUCKET, Prefix="users/bob/") == (403, "AccessDenied")
    batch = alice.delete_objects(Bucket=BUCKET, Delete={"Objects": [{"Key": "users/bob/private.txt"}]})
    assert [e["Code"] for e in batch.get("Errors", [])] == ["AccessDenied"]
    assert s3.v0_media("users/bob/private.txt") == (200, b"bob's"), "nothing of bob's changed"
    assert s3.v0_media("users/bob/intrusion.txt")[0] == 404

    url = alice.generate_presigned_url("get_object", Params={"Bucket": BUCKET, "Key": mine}, ExpiresIn=120)
    assert requests.get(url, timeout=20).content == b"alice's"
    url = alice.generate_presigned_url("get_object", Params={"Bucket": BUCKET, "Key": "users/bob/private.txt"},
                                       ExpiresIn=120)
    assert requests.get(url, timeout=20).status_code == 403


def test_bad_session_tokens_are_refused(s3: S3Gateway) -> None:
    expired = s3.alice_jwt(lifetime=-120)
    assert refused(as_jwt(s3, expired).get_object, Bucket=BUCKET, Key="users/alice/x")[0] in (400, 403)
    now = int(time.time())
    forged = jwt.encode({"sub": "alice", "iat": now, "exp": now + 600}, secrets.token_bytes(32), algorithm="HS256")
    assert refused(as_jwt(s3, forged).get_object, Bucket=BUCKET, Key="users/alice/x")[0] in (400, 403)
    # The documented key id without a token is no credential at all.
    assert refused(client(s3, SESSION_KEY_ID, SESSION_SECRET).list_objects_v2, Bucket=BUCKET,
                   Prefix="users/alice/")[0] == 403


@pytest.mark.parametrize("who", ["jwt", "uid-key"])
def test_alice_uploads_in_parts_only_in_her_folder(s3: S3Gateway, who: str) -> None:
    s3.require_multipart()
    alice = as_jwt(s3) if who == "jwt" else client(s3, s3.alice.id, s3.alice.secret)
    mine = f"users/alice/{who}/parts.bin"
    upload_id = alice.create_multipart_upload(Bucket=BUCKET, Key=mine)["UploadId"]
    part = alice.upload_part(Bucket=BUCKET, Key=mine, UploadId=upload_id, PartNumber=1, Body=b"one part")
    alice.complete_multipart_upload(Bucket=BUCKET, Key=mine, UploadId=upload_id,
                                    MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
    assert s3.v0_media(mine) == (200, b"one part")
    assert refused(alice.create_multipart_upload, Bucket=BUCKET, Key="users/bob/big.bin") == (403, "AccessDenied")
