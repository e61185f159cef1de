"""gcsfs (fsspec) against the gateway: ls, info, cat, pipe, rm — with the admin key as a google credential."""
from __future__ import annotations

import gcsfs
import google.oauth2.credentials
import pytest

from clientkit import BUCKET, PROJECT


@pytest.fixture
def fs(emulator_host: str, admin_token: str) -> gcsfs.GCSFileSystem:
    token = google.oauth2.credentials.Credentials(token=admin_token)
    return gcsfs.GCSFileSystem(project=PROJECT, token=token, endpoint_url=emulator_host, skip_instance_cache=True,
                               retries=1)


def test_ls_info_cat_pipe_rm(fs: gcsfs.GCSFileSystem) -> None:
    root = f"{BUCKET}/fs"
    fs.pipe(f"{root}/a.txt", b"alpha")
    fs.pipe({f"{root}/dir/b.txt": b"beta", f"{root}/dir/c.txt": b"gamma"})
    assert fs.cat(f"{root}/a.txt") == b"alpha"
    assert fs.cat_file(f"{root}/dir/c.txt", start=1, end=3) == b"am"
    assert sorted(fs.ls(root, detail=False)) == [f"{root}/a.txt", f"{root}/dir"]
    entries = {e["name"]: e for e in fs.ls(f"{root}/dir", detail=True)}
    assert set(entries) == {f"{root}/dir/b.txt", f"{root}/dir/c.txt"}
    assert entries[f"{root}/dir/b.txt"]["size"] == 4
    info = fs.info(f"{root}/a.txt")
    assert info["type"] == "file" and info["size"] == 5 and info["generation"]
    assert fs.info(f"{root}/dir")["type"] == "directory"
    assert fs.exists(f"{root}/dir/b.txt") and not fs.exists(f"{root}/nope")
    fs.rm(f"{root}/dir", recursive=True)
    fs.invalidate_cache()
    assert fs.ls(root, detail=False) == [f"{root}/a.txt"]
    fs.rm(f"{root}/a.txt")
    fs.invalidate_cache()
    assert not fs.exists(f"{root}/a.txt")
