"""s3fs (fsspec) against the S3 surface: pipe, cat (ranges), ls, info, find, open for writing in parts, put/get of
files and rm, objects checked through v0."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import s3fs

from clientkit import BUCKET
from s3kit import REGION, S3Gateway


@pytest.fixture
def fs(s3: S3Gateway) -> s3fs.S3FileSystem:
    return s3fs.S3FileSystem(key=s3.admin.id, secret=s3.admin.secret, endpoint_url=s3.endpoint,
                             client_kwargs={"region_name": REGION},
                             config_kwargs={"s3": {"addressing_style": "path"}, "retries": {"max_attempts": 1}},
                             skip_instance_cache=True, use_listings_cache=False)


def test_pipe_cat_ls_info_find_rm(fs: s3fs.S3FileSystem, s3: S3Gateway) -> None:
    root = f"{BUCKET}/fsspec"
    fs.pipe(f"{root}/a.txt", b"alpha")
    fs.pipe({f"{root}/dir/b.txt": b"beta", f"{root}/dir/c.txt": b"gamma"})
    assert s3.v0_media("fsspec/dir/c.txt") == (200, b"gamma")
    assert fs.cat(f"{root}/a.txt") == b"alpha"
    assert fs.cat_file(f"{root}/dir/c.txt", start=1, end=3) == b"am"
    assert sorted(fs.ls(root, detail=False)) == [f"{root}/a.txt", f"{root}/dir"]
    info = fs.info(f"{root}/dir/b.txt")
    assert info["type"] == "file" and info["size"] == 4
    assert fs.info(f"{root}/dir")["type"] == "directory"
    assert fs.find(root) == [f"{root}/a.txt", f"{root}/dir/b.txt", f"{root}/dir/c.txt"]
    assert fs.exists(f"{root}/dir/b.txt") and not fs.exists(f"{root}/nope")
    fs.rm(f"{root}/dir", recursive=True)
    assert fs.find(root) == [f"{root}/a.txt"]
    assert s3.v0_media("fsspec/dir/b.txt")[0] == 404
    fs.rm(f"{root}/a.txt")
    assert not fs.exists(f"{root}/a.txt")


def test_open_write_in_parts_put_and_get(fs: s3fs.S3FileSystem, s3: S3Gateway, tmp_path: Path) -> None:
    s3.require_multipart()
    body = os.urandom(12 * (1 << 20) + 9)
    with fs.open(f"{BUCKET}/fsspec/big.bin", "wb", block_size=5 * (1 << 20)) as out:  # a multipart upload
        for start in range(0, len(body), 1 << 20):
            out.write(body[start:start + (1 << 20)])
    assert s3.v0_media("fsspec/big.bin") == (200, body)
    with fs.open(f"{BUCKET}/fsspec/big.bin", "rb") as source:
        source.seek(7 * (1 << 20))
        assert source.read(100) == body[7 * (1 << 20):7 * (1 << 20) + 100]

    local = tmp_path / "local.bin"
    local.write_bytes(b"from a file")
    fs.put(str(local), f"{BUCKET}/fsspec/put.bin")
    s3.v0_upload("fsspec/from-v0.txt", b"written by v0", "text/plain")
    fs.get(f"{BUCKET}/fsspec/from-v0.txt", str(tmp_path / "got.txt"))
    assert (tmp_path / "got.txt").read_bytes() == b"written by v0"
    assert s3.v0_media("fsspec/put.bin") == (200, b"from a file")
    fs.rm(f"{BUCKET}/fsspec", recursive=True)
    assert s3.v0_media("fsspec/big.bin")[0] == 404
