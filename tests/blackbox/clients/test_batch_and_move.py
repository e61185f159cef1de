"""objects.move (`Bucket.move_blob`) and Cloud Storage's batch endpoint (`POST /batch/storage/v1`) through the
clients that use them: google-cloud-storage's `client.batch()` (deletes, patches, a missing object among them)
and gcsfs's bulk delete (`fs.rm([...])`, which gcsfs batches on Google's endpoint). Each batch part is a request
of its own: it is authorized by the rules and gets its own access-log line."""
from __future__ import annotations

import json

import gcsfs
import google.oauth2.credentials
import pytest
from google.api_core import exceptions
from google.cloud import storage

from clientkit import BUCKET, PROJECT, TIMEOUT
from harness import Server

CALL = {"retry": None, "timeout": TIMEOUT}


@pytest.fixture
def client(emulator_host: str, admin_token: str) -> storage.Client:
    return storage.Client(project=PROJECT, credentials=google.oauth2.credentials.Credentials(token=admin_token))


def test_client_batch_runs_every_call(client: storage.Client, gateway: Server) -> None:
    bucket = client.bucket(BUCKET)
    names = [f"batch/{i}.txt" for i in range(5)]
    for name in names:
        bucket.blob(name).upload_from_string(name.encode(), **CALL)
    with client.batch():
        for name in names[:3]:
            bucket.delete_blob(name, **CALL)
        patched = bucket.blob(names[3])
        patched.metadata = {"color": "blue"}
        patched.patch(**CALL)
    assert [b.name for b in client.list_blobs(BUCKET, prefix="batch/", **CALL)] == names[3:]
    assert bucket.get_blob(names[3], **CALL).metadata == {"color": "blue"}
    # A failing part fails the batch as GCS's would (the client raises the part's error), the others still run.
    with pytest.raises(exceptions.NotFound):
        with client.batch():
            bucket.delete_blob("batch/never-was.txt", **CALL)
            bucket.delete_blob(names[4], **CALL)
    assert not bucket.blob(names[4]).exists(**CALL)
    # Every part was logged as its own request (with its own decision), besides the batches themselves.
    records = [json.loads(line) for line in gateway.log_path.read_text().splitlines() if '"msg":"access"' in line]
    assert sum(r["route"] == "/batch/storage/v1" and r["status"] == 200 for r in records) == 2
    deletes = [r for r in records if r["method"] == "DELETE" and r["object"].startswith("batch/")]
    assert sorted((r["object"], r["status"], r["decision"]) for r in deletes) == sorted(
        [(n, 204, "admin") for n in names[:3] + names[4:]] + [("batch/never-was.txt", 404, "admin")])


def test_gcsfs_bulk_delete(emulator_host: str, admin_token: str, gateway: Server,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    # gcsfs batches deletes only on Google's own endpoint (it assumes emulators cannot): take that path here.
    monkeypatch.setattr(gcsfs.GCSFileSystem, "on_google", property(lambda self: True))
    fs = gcsfs.GCSFileSystem(project=PROJECT, token=google.oauth2.credentials.Credentials(token=admin_token),
                             endpoint_url=emulator_host, skip_instance_cache=True, retries=1)
    root = f"{BUCKET}/bulk"
    fs.pipe({f"{root}/{i}.txt": b"x" for i in range(4)})
    batches_before = gateway.log_path.read_text().count('"route":"/batch/storage/v1"')
    fs.rm([f"{root}/{i}.txt" for i in range(3)])
    fs.invalidate_cache()
    assert fs.ls(root, detail=False) == [f"{root}/3.txt"]
    assert gateway.log_path.read_text().count('"route":"/batch/storage/v1"') == batches_before + 1


def test_move_blob(client: storage.Client) -> None:
    """`Bucket.move_blob` (objects.move): one commit on the embedded backend, copy + guarded delete on gs://."""
    bucket = client.bucket(BUCKET)
    source = bucket.blob("moves/from.txt")
    source.upload_from_string(b"moved", content_type="text/x-moved", **CALL)
    moved = bucket.move_blob(source, "moves/to.txt", if_source_generation_match=source.generation,
                             if_generation_match=0, **CALL)
    assert moved.name == "moves/to.txt" and moved.content_type == "text/x-moved"
    assert moved.download_as_bytes(**CALL) == b"moved"
    assert not bucket.blob("moves/from.txt").exists(**CALL)
    with pytest.raises(exceptions.NotFound):
        bucket.move_blob(bucket.blob("moves/from.txt"), "moves/again.txt", **CALL)
