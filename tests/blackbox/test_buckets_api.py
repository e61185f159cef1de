"""Buckets as API objects for the admin under a bucket root (`--bucket-root file:DIR`): `POST /storage/v1/b`
creates an embedded bucket that survives restarts and serves both surfaces; `PATCH`/`PUT` change its
`versioning` and `labels` (metageneration and etag move, `ifMetagenerationMatch` guards); `DELETE` removes it
only when it holds no object (409 otherwise; resumable-upload sessions, finished or not, are not objects and go
with it). Only the admin may do any of it; `--bucket` buckets stay configuration and the
errors say so (409); without a bucket root, managing one is 501 with a pointer to the flag.
"""
from __future__ import annotations

import json
import secrets
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import Response, Server, allow_all_server, request


class Gateway:
    def __init__(self, workdir: Path, root: bool = True) -> None:
        self.workdir = workdir
        self.admin_key = secrets.token_hex(24)
        (workdir / "admin.key").write_text(self.admin_key + "\n")
        self.server = allow_all_server(workdir, f"fixed=file:{workdir / 'fixed'}", "buckets")
        self.server.args += ["--admin-key", str(workdir / "admin.key")]
        if root:
            self.server.args += ["--bucket-root", f"file:{workdir / 'root'}"]

    @property
    def admin(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.admin_key}"}

    def call(self, method: str, path: str, body: dict | None = None, admin: bool = True) -> Response:
        headers = {"Content-Type": "application/json", **(self.admin if admin else {})}
        return request(method, self.server.url + path, json.dumps(body).encode() if body is not None else None,
                       headers)


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[Gateway]:
    g = Gateway(tmp_path)
    g.server.start()
    yield g
    g.server.stop(timeout=10)
    g.server.kill()


def _error(r: Response) -> str:
    return r.json()["error"]["message"]  # type: ignore[index]


def test_the_admin_creates_uses_changes_and_deletes_a_bucket(gateway: Gateway) -> None:
    made = gateway.call("POST", "/storage/v1/b?project=p", {"name": "made-here", "versioning": {"enabled": False},
                                                             "labels": {"team": "data"}})
    assert made.status == 200, made.body[:300]
    resource = made.json()
    assert resource["name"] == "made-here" and resource["kind"] == "storage#bucket"  # type: ignore[index]
    assert resource["metageneration"] == "1" and resource["etag"] == "CAE="  # type: ignore[index]
    assert resource["labels"] == {"team": "data"} and resource["versioning"] == {"enabled": False}  # type: ignore[index]

    listed = gateway.call("GET", "/storage/v1/b?project=p")
    assert [b["name"] for b in listed.json()["items"]] == ["fixed", "made-here"]  # type: ignore[index]

    # Both surfaces serve it at once.
    up = request("POST", gateway.server.url + "/upload/storage/v1/b/made-here/o?uploadType=media&name=a.txt",
                 b"hello", {"Content-Type": "text/plain"})
    assert up.status == 200, up.body[:300]
    v0 = request("GET", gateway.server.url + "/v0/b/made-here/o/a.txt?alt=media")
    assert v0.status == 200 and v0.body == b"hello"

    patched = gateway.call("PATCH", "/storage/v1/b/made-here", {"versioning": {"enabled": True},
                                                                 "labels": {"team": None, "env": "test"}})
    assert patched.status == 200, patched.body[:300]
    assert patched.json()["metageneration"] == "2" and patched.json()["etag"] == "CAI="  # type: ignore[index]
    assert patched.json()["versioning"] == {"enabled": True}  # type: ignore[index]
    assert patched.json()["labels"] == {"env": "test"}  # type: ignore[index]
    stale = gateway.call("PATCH", "/storage/v1/b/made-here?ifMetagenerationMatch=1", {"labels": {"x": "y"}})
    assert stale.status == 412, stale.body[:300]
    replaced = gateway.call("PUT", "/storage/v1/b/made-here", {"name": "made-here"})
    assert replaced.status == 200 and replaced.json()["versioning"] == {"enabled": False}  # type: ignore[index]
    assert "labels" not in replaced.json()  # type: ignore[operator]

    busy = gateway.call("DELETE", "/storage/v1/b/made-here")
    assert busy.status == 409 and _error(busy) == "The bucket you tried to delete is not empty."
    assert request("DELETE", gateway.server.url + "/storage/v1/b/made-here/o/a.txt").status == 204
    gone = gateway.call("DELETE", "/storage/v1/b/made-here")
    assert gone.status == 204, gone.body[:300]
    assert gateway.call("GET", "/storage/v1/b/made-here").status == 404
    assert request("GET", gateway.server.url + "/v0/b/made-here/o/a.txt").status == 404
    again = gateway.call("POST", "/storage/v1/b", {"name": "made-here"})
    assert again.status == 200 and again.json()["metageneration"] == "1"  # type: ignore[index]


def test_upload_sessions_do_not_keep_a_bucket_from_being_deleted(gateway: Gateway) -> None:
    """Sessions are not objects: a finished one (kept for its status query) and an unfinished one do not make the
    bucket non-empty, and the unfinished one is gone with the bucket (Google's system tests delete their buckets
    after resumable uploads and retry a 409 for hours)."""
    assert gateway.call("POST", "/storage/v1/b", {"name": "sessions"}).status == 200
    start = "/upload/storage/v1/b/sessions/o?uploadType=resumable&name="
    sessions = {}
    for name in ("done.txt", "open.txt"):
        started = gateway.call("POST", start + name, {"contentType": "text/plain"})
        assert started.status == 200, started.body[:300]
        sessions[name] = started.header("Location")
    finished = request("PUT", sessions["done.txt"], b"done", {"Content-Range": "bytes 0-3/4"})
    assert finished.status == 200, finished.body[:300]
    partial = request("PUT", sessions["open.txt"], b"x" * 262144, {"Content-Range": "bytes 0-262143/*"})
    assert partial.status == 308, partial.body[:300]

    busy = gateway.call("DELETE", "/storage/v1/b/sessions")
    assert busy.status == 409 and _error(busy) == "The bucket you tried to delete is not empty."
    assert request("DELETE", gateway.server.url + "/storage/v1/b/sessions/o/done.txt").status == 204
    gone = gateway.call("DELETE", "/storage/v1/b/sessions")
    assert gone.status == 204, gone.body[:300]
    late = request("PUT", sessions["open.txt"], b"y", {"Content-Range": "bytes 262144-262144/262145"})
    assert late.status in (404, 410), (late.status, late.body[:300])
    assert gateway.call("GET", "/storage/v1/b/sessions").status == 404
    staging = gateway.workdir / "root" / "staging"
    assert not staging.exists() or not any(staging.iterdir())


def test_created_buckets_survive_a_restart(gateway: Gateway) -> None:
    assert gateway.call("POST", "/storage/v1/b", {"name": "kept", "labels": {"k": "v"}}).status == 200
    assert request("POST", gateway.server.url + "/upload/storage/v1/b/kept/o?uploadType=media&name=x",
                   b"x", {"Content-Type": "text/plain"}).status == 200
    gateway.server.stop(timeout=10)
    gateway.server.start()
    info = gateway.call("GET", "/storage/v1/b/kept")
    assert info.status == 200 and info.json()["labels"] == {"k": "v"}  # type: ignore[index]
    assert request("GET", gateway.server.url + "/storage/v1/b/kept/o/x?alt=media").body == b"x"


def test_only_the_admin_manages_buckets(gateway: Gateway) -> None:
    assert gateway.call("POST", "/storage/v1/b", {"name": "mine"}, admin=False).status == 403
    assert gateway.call("POST", "/storage/v1/b", {"name": "mine"}).status == 200
    assert gateway.call("PATCH", "/storage/v1/b/mine", {"labels": {"a": "b"}}, admin=False).status == 403
    assert gateway.call("DELETE", "/storage/v1/b/mine", admin=False).status == 403
    assert gateway.call("GET", "/storage/v1/b/mine").status == 200


@pytest.mark.parametrize("name", ["ab", "UPPER", "-lead", "trail-", "goog-bucket", "sp ace", "a" * 64, "caf\u00e9"])
def test_invalid_bucket_names_are_refused(gateway: Gateway, name: str) -> None:
    r = gateway.call("POST", "/storage/v1/b", {"name": name})
    assert r.status == 400 and _error(r).startswith("Invalid bucket name"), (r.status, r.body[:200])


def test_names_in_use_and_configured_buckets(gateway: Gateway) -> None:
    assert gateway.call("POST", "/storage/v1/b", {"name": "twice"}).status == 200
    assert gateway.call("POST", "/storage/v1/b", {"name": "twice"}).status == 409
    assert gateway.call("POST", "/storage/v1/b", {"name": "fixed"}).status == 409
    for method in ("PATCH", "DELETE"):
        r = gateway.call(method, "/storage/v1/b/fixed", {"labels": {}} if method == "PATCH" else None)
        assert r.status == 409 and "--bucket" in _error(r), (method, r.status, r.body[:200])
    assert gateway.call("DELETE", "/storage/v1/b/never-made").status == 404


def test_bad_settings_are_refused(gateway: Gateway) -> None:
    assert gateway.call("POST", "/storage/v1/b", {"name": "settings"}).status == 200
    for body in ({"versioning": {"enabled": "yes"}}, {"versioning": True}, {"labels": {"Upper": "x"}},
                 {"labels": {"k": "UPPER"}}, {"labels": {"k": 1}}, {"labels": []}):
        r = gateway.call("PATCH", "/storage/v1/b/settings", body)
        assert r.status == 400, (body, r.status, r.body[:200])
    assert gateway.call("GET", "/storage/v1/b/settings").json()["metageneration"] == "1"  # type: ignore[index]


def test_without_a_bucket_root_creation_points_at_the_flag(tmp_path: Path) -> None:
    g = Gateway(tmp_path, root=False)
    g.server.start()
    try:
        r = g.call("POST", "/storage/v1/b", {"name": "nope"})
        assert r.status == 501 and "--bucket-root" in _error(r), (r.status, r.body[:200])
    finally:
        g.server.stop(timeout=10)
        g.server.kill()
