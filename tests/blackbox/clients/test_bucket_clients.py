"""Buckets made by the clients themselves, on a gateway with a bucket root (`--bucket-root`): google-cloud-storage
creates, patches (versioning, labels), lists and deletes one; gcsfs's `mkdir`/`rmdir` of a bucket work."""
from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import gcsfs
import google.oauth2.credentials
import pytest
from google.cloud import storage

from clientkit import PROJECT, start_gateway
from harness import Server


@pytest.fixture(scope="module")
def rooted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    workdir = tmp_path_factory.mktemp("bucket-clients")
    token = secrets.token_urlsafe(32)
    (workdir / "admin.key").write_text(token + "\n")
    server = start_gateway(workdir, "file", name="bucket-clients",
                           extra=["--admin-key", str(workdir / "admin.key"), "--bucket-root", f"file:{workdir / 'root'}"])
    yield server, token
    server.stop(timeout=10)
    server.kill()


def test_google_cloud_storage_manages_its_own_bucket(rooted: tuple[Server, str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    server, token = rooted
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", server.url)
    client = storage.Client(project=PROJECT, credentials=google.oauth2.credentials.Credentials(token=token))
    bucket = client.create_bucket("gcs-made-" + secrets.token_hex(4), retry=None, timeout=20)
    assert not bucket.versioning_enabled
    bucket.versioning_enabled = True
    bucket.labels = {"team": "data"}
    bucket.patch(retry=None, timeout=20)
    fresh = client.get_bucket(bucket.name, retry=None, timeout=20)
    assert fresh.versioning_enabled and fresh.labels == {"team": "data"} and fresh.metageneration == 2
    fresh.blob("a.txt").upload_from_string(b"hello", retry=None, timeout=20)
    assert bucket.name in [b.name for b in client.list_buckets(retry=None, timeout=20)]
    fresh.delete(force=True, retry=None, timeout=20)  # the client deletes the objects first, then the bucket
    assert bucket.name not in [b.name for b in client.list_buckets(retry=None, timeout=20)]


def test_gcsfs_mkdir_and_rmdir_of_a_bucket(rooted: tuple[Server, str]) -> None:
    server, token = rooted
    fs = gcsfs.GCSFileSystem(project=PROJECT, token=google.oauth2.credentials.Credentials(token=token),
                             endpoint_url=server.url, skip_instance_cache=True, retries=1)
    name = "fs-made-" + secrets.token_hex(4)
    fs.mkdir(name)
    fs.pipe(f"{name}/x.txt", b"x")
    assert fs.cat(f"{name}/x.txt") == b"x"
    fs.rm(f"{name}/x.txt")
    fs.rmdir(name)
    fs.invalidate_cache()
    assert not fs.exists(name)
