"""rclone (the Debian package) against a real `portcullis serve`, once per storage backend (embedded and gs:// on
fake-gcs-server): `copy`, `check`, `sync`, `copyto`, `moveto` and `purge` of a directory tree that holds a 64 MiB
file, which rclone's Go client uploads in 16 MiB chunks with `X-GUploader-No-308: yes`. What rclone reports is
not taken on trust: after each step the objects are listed and read back through the JSON API with the admin key
and compared byte for byte with the local tree.

The remote, as tested (a service-account key file from `portcullis service-account create … --admin`, whose
`token_uri` is the gateway's own token endpoint; rclone's Go oauth2 client honours it):

    [portcullis]
    type = google cloud storage
    service_account_file = /path/to/portcullis-sa.json
    endpoint = http://127.0.0.1:8080/storage/v1/
    bucket_policy_only = true

`bucket_policy_only` keeps rclone from sending object ACLs (not served). Without rclone installed the suite
skips with that reason (`make test` installs it: scripts/lib.sh PC_APT_TEST).
"""
from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import subprocess
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest
import requests

import backends
from harness import allow_all_server, free_port, portcullis_bin, Server

RCLONE = shutil.which("rclone")
pytestmark = pytest.mark.skipif(RCLONE is None, reason="rclone is not installed (apt-get install rclone)")

BUCKET = "tree"
BIG = 64 * 1024 * 1024


@dataclass
class Remote:
    server: Server
    workdir: Path
    config: Path
    admin_key: str

    def rclone(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """rclone with the remote's config; retries off so a failing request fails the command."""
        done = subprocess.run(
            [RCLONE, "--config", str(self.config), "--retries", "1", "--low-level-retries", "1", *args],
            cwd=self.workdir, capture_output=True, text=True, timeout=600,
            env={k: v for k, v in os.environ.items() if not k.startswith("RCLONE_")})
        if check:
            assert done.returncode == 0, (args, done.stderr[-4000:])
        return done

    def admin(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.admin_key}"}

    def listing(self, prefix: str) -> dict[str, dict[str, object]]:
        """name → resource of every object under `prefix`, through the JSON API (all pages)."""
        found: dict[str, dict[str, object]] = {}
        token = None
        while True:
            params = {"prefix": prefix, "maxResults": "3"}
            if token:
                params["pageToken"] = token
            page = requests.get(f"{self.server.url}/storage/v1/b/{BUCKET}/o", params=params, headers=self.admin(),
                                timeout=30)
            assert page.status_code == 200, page.text
            body = page.json()
            for item in body.get("items", []):
                found[item["name"]] = item
            token = body.get("nextPageToken")
            if not token:
                return found

    def sha256(self, name: str) -> str:
        """SHA-256 of the object's bytes, streamed from the JSON API's media read."""
        url = f"{self.server.url}/storage/v1/b/{BUCKET}/o/{urllib.parse.quote(name, safe='')}"
        digest = hashlib.sha256()
        with requests.get(url, params={"alt": "media"}, headers=self.admin(), stream=True, timeout=60) as resp:
            assert resp.status_code == 200, (name, resp.status_code, resp.text[:300])
            for chunk in resp.iter_content(1 << 20):
                digest.update(chunk)
        return digest.hexdigest()

    def assert_mirrors(self, local: Path, prefix: str) -> None:
        """The objects under `prefix` are exactly the files under `local`, with the same bytes."""
        want = {p.relative_to(local).as_posix(): p for p in local.rglob("*") if p.is_file()}
        listed = self.listing(prefix)
        assert sorted(listed) == sorted(prefix + name for name in want)
        for name, path in want.items():
            item = listed[prefix + name]
            assert int(item["size"]) == path.stat().st_size, name
            assert self.sha256(prefix + name) == file_sha256(path), name

    def server_errors(self) -> list[dict[str, object]]:
        return [e for e in self.server.access_log() if isinstance(e.get("status"), int) and e["status"] >= 500]


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def write_random(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        left = size
        while left:
            n = min(left, 1 << 20)
            f.write(secrets.token_bytes(n))
            left -= n


def make_tree(root: Path) -> None:
    """A tree with nesting, an empty file, names that need escaping and one 64 MiB file (four 16 MiB chunks)."""
    write_random(root / "big.bin", BIG)
    write_random(root / "a" / "b" / "c.bin", 300_000)
    (root / "a" / "one.txt").write_text("one\n")
    (root / "a" / "déjà vu & co.txt").write_text("accents, a space and an ampersand\n")
    (root / "a" / "100%.txt").write_text("percent\n")
    (root / "empty").write_bytes(b"")


@pytest.fixture(params=backends.params(("file", "gcs")))
def remote(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Remote]:
    backend = request.param
    workdir = tmp_path / "gw"
    workdir.mkdir()
    port = free_port()
    admin_key = secrets.token_urlsafe(32)
    (workdir / "admin.key").write_text(admin_key + "\n")
    subprocess.run([portcullis_bin(), "service-account", "create", "rclone", "--admin", "--project", "demo-project",
                    "--public-url", f"http://127.0.0.1:{port}", "--accounts", "service-accounts.json",
                    "--out", "portcullis-sa.json"], cwd=workdir, check=True, capture_output=True)
    server = allow_all_server(workdir, f"{BUCKET}={backends.bucket_url(backend, tmp_path)}", f"rclone-{backend}")
    server.args += ["--admin-key", str(workdir / "admin.key"),
                    "--service-accounts", str(workdir / "service-accounts.json")]
    server.start(port=port)
    config = workdir / "rclone.conf"
    config.write_text("[portcullis]\n"
                      "type = google cloud storage\n"
                      f"service_account_file = {workdir / 'portcullis-sa.json'}\n"
                      f"endpoint = {server.url}/storage/v1/\n"
                      "bucket_policy_only = true\n")
    try:
        yield Remote(server, workdir, config, admin_key)
    finally:
        server.stop(timeout=10)
        server.kill()


def test_copy_check_sync_copyto_moveto_purge(remote: Remote, tmp_path: Path) -> None:
    local = tmp_path / "site"
    make_tree(local)

    # copy: the whole tree, the 64 MiB file in chunks.
    remote.rclone("copy", str(local), f"portcullis:{BUCKET}/site")
    remote.assert_mirrors(local, "site/")
    assert int(remote.listing("site/big.bin")["site/big.bin"]["size"]) == BIG
    # The big file went up as a resumable session in four 16 MiB chunks, each answered 2xx (Go's No-308
    # protocol); rclone authenticated with a token from the gateway's own token endpoint.
    log = [e for e in remote.server.access_log() if e.get("msg") == "access"]
    chunks = [e for e in log if "upload_id=" in str(e.get("path")) and "name=site%2Fbig.bin" in str(e.get("path"))]
    assert len(chunks) >= 4 and all(200 <= int(e["status"]) < 300 for e in chunks), chunks
    assert any(e.get("route") == "/oauth2/v4/token" and e.get("status") == 200 for e in log)
    assert {e.get("uid") for e in log if str(e.get("route", "")).startswith("/storage/")} == {"admin"}

    # check: sizes and MD5s agree; a changed local file makes it fail (so a pass means something).
    remote.rclone("check", str(local), f"portcullis:{BUCKET}/site")
    (local / "a" / "one.txt").write_text("ONE\n")
    changed = remote.rclone("check", str(local), f"portcullis:{BUCKET}/site", check=False)
    assert changed.returncode != 0 and "a/one.txt" in changed.stderr, changed.stderr[-2000:]

    # sync: the changed file is replaced, a removed one deleted, a new one added.
    (local / "a" / "100%.txt").unlink()
    write_random(local / "a" / "new.bin", 70_000)
    remote.rclone("sync", str(local), f"portcullis:{BUCKET}/site")
    remote.assert_mirrors(local, "site/")
    remote.rclone("check", str(local), f"portcullis:{BUCKET}/site")

    # copyto: one local file under another name, then a server-side copy of the big object.
    remote.rclone("copyto", str(local / "a" / "one.txt"), f"portcullis:{BUCKET}/single/renamed.txt")
    remote.rclone("copyto", f"portcullis:{BUCKET}/site/big.bin", f"portcullis:{BUCKET}/single/big-copy.bin")
    assert remote.sha256("single/renamed.txt") == file_sha256(local / "a" / "one.txt")
    assert remote.sha256("single/big-copy.bin") == file_sha256(local / "big.bin")

    # moveto: server-side within the bucket (the source is gone afterwards), then a local file moved up.
    remote.rclone("moveto", f"portcullis:{BUCKET}/single/big-copy.bin", f"portcullis:{BUCKET}/moved/big.bin")
    extra = tmp_path / "extra.txt"
    extra.write_text("moved from disk\n")
    remote.rclone("moveto", str(extra), f"portcullis:{BUCKET}/moved/extra.txt")
    assert not extra.exists()
    listed = remote.listing("")
    assert "single/big-copy.bin" not in listed and "moved/big.bin" in listed
    assert remote.sha256("moved/big.bin") == file_sha256(local / "big.bin")
    assert remote.sha256("moved/extra.txt") == hashlib.sha256(b"moved from disk\n").hexdigest()

    # purge: the synced tree goes, everything else stays.
    remote.rclone("purge", f"portcullis:{BUCKET}/site")
    assert remote.listing("site/") == {}
    assert sorted(remote.listing("")) == ["moved/big.bin", "moved/extra.txt", "single/renamed.txt"]

    assert remote.server_errors() == [], "no request answered 5xx"
