"""Object versioning on a bucket the API created under `--bucket-root` with `versioning.enabled`: overwrites and
deletes keep noncurrent generations (with `timeDeleted`), addressed by `generation=` through google-cloud-storage
(reload, get_blob, download, delete, copy_blob's source generation) and gcsfs's version-aware mode, and listed with
`versions=true`. A bucket without versioning keeps nothing, and v0 only ever sees the live object. On gs://
(fake-gcs-server) the generation passes through to the upstream bucket, which keeps its own versions."""
from __future__ import annotations

import json
import secrets
import urllib.parse
from collections.abc import Iterator

import gcsfs
import google.oauth2.credentials
import pytest
import requests
from google.api_core import exceptions
from google.cloud import storage

from clientkit import FAKE_GCS, PROJECT, start_gateway
from harness import ALLOW_ALL_RULES, Server, request, signing_key_file


@pytest.fixture(scope="module")
def rooted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    workdir = tmp_path_factory.mktemp("versioning")
    token = secrets.token_urlsafe(32)
    (workdir / "admin.key").write_text(token + "\n")
    server = start_gateway(workdir, "file", name="versioning",
                           extra=["--admin-key", str(workdir / "admin.key"), "--bucket-root", f"file:{workdir / 'root'}"])
    yield server, token
    server.stop(timeout=10)
    server.kill()


@pytest.fixture
def client(rooted: tuple[Server, str], monkeypatch: pytest.MonkeyPatch) -> storage.Client:
    server, token = rooted
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", server.url)
    return storage.Client(project=PROJECT, credentials=google.oauth2.credentials.Credentials(token=token))


def versioned_bucket(client: storage.Client, enabled: bool = True) -> storage.Bucket:
    bucket = client.bucket("ver-" + secrets.token_hex(4))
    bucket.versioning_enabled = enabled
    return client.create_bucket(bucket, retry=None, timeout=20)


def test_overwrite_keeps_the_previous_generation_addressable(client: storage.Client) -> None:
    bucket = versioned_bucket(client)
    assert bucket.versioning_enabled
    blob = bucket.blob("doc.txt")
    blob.upload_from_string(b"first", retry=None, timeout=20)
    first = blob.generation
    blob.upload_from_string(b"second", retry=None, timeout=20)
    second = blob.generation
    assert second > first

    live = bucket.get_blob("doc.txt", retry=None, timeout=20)
    assert live.generation == second and live.time_deleted is None
    assert live.download_as_bytes(retry=None, timeout=20) == b"second"

    old = bucket.get_blob("doc.txt", generation=first, retry=None, timeout=20)
    assert old is not None and old.generation == first and old.size == 5
    assert old.time_deleted is not None
    assert old.download_as_bytes(retry=None, timeout=20) == b"first"

    reloaded = bucket.blob("doc.txt", generation=first)
    reloaded.reload(retry=None, timeout=20)
    assert reloaded.md5_hash == old.md5_hash and reloaded.time_deleted is not None
    assert bucket.get_blob("doc.txt", generation=first + second, retry=None, timeout=20) is None

    listed = [(b.name, b.generation, b.time_deleted is not None)
              for b in client.list_blobs(bucket, versions=True, retry=None, timeout=20)]
    assert listed == [("doc.txt", first, True), ("doc.txt", second, False)]
    assert [b.generation for b in client.list_blobs(bucket, retry=None, timeout=20)] == [second]

    # A compose source may name a noncurrent generation.
    joined = bucket.blob("joined.txt")
    joined.compose([bucket.blob("doc.txt", generation=first), bucket.blob("doc.txt", generation=second)],
                   retry=None, timeout=20)
    assert joined.download_as_bytes(retry=None, timeout=20) == b"firstsecond"


def test_delete_keeps_a_noncurrent_generation_and_delete_by_generation_removes_it(client: storage.Client) -> None:
    bucket = versioned_bucket(client)
    blob = bucket.blob("gone.txt")
    blob.upload_from_string(b"kept", retry=None, timeout=20)
    generation = blob.generation
    # By name only: `blob.delete()` would name the generation the upload returned and remove it for good.
    bucket.delete_blob("gone.txt", retry=None, timeout=20)

    assert bucket.get_blob("gone.txt", retry=None, timeout=20) is None
    assert list(client.list_blobs(bucket, retry=None, timeout=20)) == []
    versions = list(client.list_blobs(bucket, versions=True, retry=None, timeout=20))
    assert [(b.name, b.generation) for b in versions] == [("gone.txt", generation)]
    assert versions[0].time_deleted is not None

    # A copy from the noncurrent generation restores it as a new live generation.
    restored = bucket.copy_blob(bucket.blob("gone.txt"), bucket, "gone.txt", source_generation=generation,
                                retry=None, timeout=20)
    assert restored.generation > generation
    assert bucket.blob("gone.txt").download_as_bytes(retry=None, timeout=20) == b"kept"

    # Deleting by generation removes that generation for good; the live one stays.
    bucket.blob("gone.txt", generation=generation).delete(retry=None, timeout=20)
    assert bucket.get_blob("gone.txt", generation=generation, retry=None, timeout=20) is None
    with pytest.raises(exceptions.NotFound):
        bucket.blob("gone.txt", generation=generation).delete(retry=None, timeout=20)
    assert [b.generation for b in client.list_blobs(bucket, versions=True, retry=None, timeout=20)] == [
        restored.generation]

    # Deleting the live generation by number keeps nothing; the bucket is then empty and deletable.
    bucket.blob("gone.txt", generation=restored.generation).delete(retry=None, timeout=20)
    assert list(client.list_blobs(bucket, versions=True, retry=None, timeout=20)) == []
    bucket.delete(retry=None, timeout=20)


def test_preconditions_apply_to_the_generation_named(client: storage.Client) -> None:
    bucket = versioned_bucket(client)
    blob = bucket.blob("p.txt")
    blob.upload_from_string(b"one", retry=None, timeout=20)
    first = blob.generation
    blob.upload_from_string(b"two", if_generation_match=first, retry=None, timeout=20)
    with pytest.raises(exceptions.PreconditionFailed):
        blob.upload_from_string(b"three", if_generation_match=first, retry=None, timeout=20)
    with pytest.raises(exceptions.PreconditionFailed):
        bucket.blob("p.txt", generation=first).delete(if_metageneration_match=7, retry=None, timeout=20)
    old = bucket.get_blob("p.txt", generation=first, retry=None, timeout=20)
    assert old is not None and old.download_as_bytes(retry=None, timeout=20) == b"one"


def test_a_bucket_with_versioning_off_keeps_nothing(client: storage.Client) -> None:
    bucket = versioned_bucket(client, enabled=False)
    blob = bucket.blob("plain.txt")
    blob.upload_from_string(b"a", retry=None, timeout=20)
    first = blob.generation
    blob.upload_from_string(b"b", retry=None, timeout=20)
    assert bucket.get_blob("plain.txt", generation=first, retry=None, timeout=20) is None
    assert [b.generation for b in client.list_blobs(bucket, versions=True, retry=None, timeout=20)] == [
        blob.generation]
    bucket.delete(force=True, retry=None, timeout=20)


def test_force_delete_of_a_versioned_bucket_removes_every_generation(client: storage.Client) -> None:
    bucket = versioned_bucket(client)
    for body in (b"1", b"2", b"3"):
        bucket.blob("many.txt").upload_from_string(body, retry=None, timeout=20)
    assert len(list(client.list_blobs(bucket, versions=True, retry=None, timeout=20))) == 3
    # Noncurrent generations count: the bucket is not empty until they are gone.
    bucket.blob("many.txt").delete(retry=None, timeout=20)
    with pytest.raises(exceptions.Conflict):
        bucket.delete(retry=None, timeout=20)
    bucket.delete(force=True, retry=None, timeout=20)
    assert bucket.name not in [b.name for b in client.list_buckets(retry=None, timeout=20)]


def test_v0_sees_only_the_live_object(rooted: tuple[Server, str], client: storage.Client) -> None:
    server, token = rooted
    bucket = versioned_bucket(client)
    blob = bucket.blob("v0.txt")
    blob.upload_from_string(b"old", retry=None, timeout=20)
    first = blob.generation
    blob.upload_from_string(b"new", retry=None, timeout=20)
    url = f"{server.url}/v0/b/{bucket.name}/o/{urllib.parse.quote('v0.txt', safe='')}"
    headers = {"Authorization": f"Bearer {token}"}
    meta = requests.get(url, headers=headers, timeout=10)
    assert meta.status_code == 200 and meta.json()["generation"] == str(blob.generation)
    media = requests.get(url, params={"alt": "media", "generation": str(first)}, headers=headers, timeout=10)
    assert media.status_code == 200 and media.content == b"new"
    listing = requests.get(f"{server.url}/v0/b/{bucket.name}/o", params={"versions": "true"}, headers=headers,
                           timeout=10)
    assert listing.status_code == 200 and [i["name"] for i in listing.json()["items"]] == ["v0.txt"]


def test_gcsfs_version_aware_reads_and_lists_generations(rooted: tuple[Server, str], client: storage.Client) -> None:
    server, token = rooted
    bucket = versioned_bucket(client)
    fs = gcsfs.GCSFileSystem(project=PROJECT, token=google.oauth2.credentials.Credentials(token=token),
                             endpoint_url=server.url, skip_instance_cache=True, retries=1, version_aware=True)
    path = f"{bucket.name}/dir/f.txt"
    fs.pipe(path, b"one")
    first = fs.info(path)["generation"]
    fs.pipe(path, b"two")
    second = fs.info(path)["generation"]
    assert str(first) != str(second)
    assert fs.cat(f"{path}#{first}") == b"one"
    with fs.open(f"{path}#{first}", "rb") as f:
        assert f.read() == b"one"
    assert fs.cat(path) == b"two"
    fs.invalidate_cache()
    listed = sorted(fs.ls(f"{bucket.name}/dir", versions=True))
    assert listed == sorted([f"{path}#{first}", f"{path}#{second}"])
    assert fs.info(f"{path}#{first}")["size"] == 3


def test_patch_and_move_act_on_the_live_generation_only(rooted: tuple[Server, str], client: storage.Client) -> None:
    server, token = rooted
    bucket = versioned_bucket(client)
    blob = bucket.blob("m.txt")
    blob.upload_from_string(b"old", retry=None, timeout=20)
    first = blob.generation
    blob.upload_from_string(b"new", retry=None, timeout=20)
    headers = {"Authorization": f"Bearer {token}"}
    base = f"{server.url}/storage/v1/b/{bucket.name}/o"
    patched = requests.patch(f"{base}/m.txt", params={"generation": str(first)}, json={"metadata": {"k": "v"}},
                             headers=headers, timeout=10)
    assert patched.status_code == 404, patched.text
    moved = requests.post(f"{base}/m.txt/moveTo/o/n.txt", params={"sourceGeneration": str(first)}, headers=headers,
                          timeout=10)
    assert moved.status_code == 412, moved.text
    assert bucket.get_blob("n.txt", retry=None, timeout=20) is None
    # The live generation moves; the source's noncurrent generation stays under its name.
    moved = requests.post(f"{base}/m.txt/moveTo/o/n.txt", headers=headers, timeout=10)
    assert moved.status_code == 200, moved.text
    names = [(b.name, b.generation == first) for b in client.list_blobs(bucket, versions=True, retry=None, timeout=20)]
    assert names == [("m.txt", True), ("n.txt", False)]


@pytest.mark.skipif(not FAKE_GCS, reason="fake-gcs-server not running (scripts/emulators.sh start)")
def test_gs_buckets_pass_the_generation_through(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = "ver-gs-" + secrets.token_hex(4)
    made = request("POST", f"{FAKE_GCS}/storage/v1/b?project=test",
                   body=json.dumps({"name": name, "versioning": {"enabled": True}}).encode(),
                   headers={"Content-Type": "application/json"})
    assert made.status == 200, made.body[:300]
    token = secrets.token_urlsafe(32)
    (tmp_path / "admin.key").write_text(token + "\n")
    (tmp_path / "storage.rules").write_text(ALLOW_ALL_RULES)
    signing_key_file(tmp_path / "signing.key", "k1")
    server = Server(workdir=tmp_path, name="versioning-gs", env={"STORAGE_EMULATOR_HOST": FAKE_GCS},
                    args=["--bucket", f"{name}=gs://{name}", "--rules", str(tmp_path / "storage.rules"),
                          "--signing-key", str(tmp_path / "signing.key"), "--admin-key",
                          str(tmp_path / "admin.key")]).start()
    try:
        monkeypatch.setenv("STORAGE_EMULATOR_HOST", server.url)
        client = storage.Client(project=PROJECT, credentials=google.oauth2.credentials.Credentials(token=token))
        bucket = client.bucket(name)
        blob = bucket.blob("g.txt")
        blob.upload_from_string(b"first", retry=None, timeout=20)
        first = blob.generation
        blob.upload_from_string(b"second", retry=None, timeout=20)
        old = bucket.get_blob("g.txt", generation=first, retry=None, timeout=20)
        assert old is not None and old.generation == first and old.time_deleted is not None
        assert old.download_as_bytes(retry=None, timeout=20) == b"first"
        listed = [(b.name, b.generation) for b in client.list_blobs(bucket, versions=True, retry=None, timeout=20)]
        assert listed == [("g.txt", first), ("g.txt", blob.generation)]
        assert bucket.get_blob("g.txt", generation=first + 1, retry=None, timeout=20) is None
        restored = bucket.copy_blob(bucket.blob("g.txt"), bucket, "g.txt", source_generation=first, retry=None,
                                    timeout=20)
        assert restored.generation > blob.generation
        assert bucket.blob("g.txt").download_as_bytes(retry=None, timeout=20) == b"first"
        # Deleting by generation is passed through as well; fake-gcs-server ignores `generation` on DELETE, so
        # what it then keeps is the emulator's business and is not asserted here.
    finally:
        server.stop(timeout=10)
        server.kill()
