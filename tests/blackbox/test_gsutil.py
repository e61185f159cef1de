"""gsutil (PyPI, google-apitools over the JSON API; its own venv `.venv-gsutil`, requirements/gsutil.in) against a
real `portcullis serve` over TLS, once per storage backend (embedded and gs:// on fake-gcs-server): `cp` of a
small file, a resumable upload (above a lowered `resumable_threshold`) and a parallel composite upload (the file
is uploaded in components that the gateway composes), `ls`, `ls -l`, `stat`, `mv` and `rm -r`. What gsutil
reports is checked through the JSON API with the admin key: names, sizes and the bytes themselves.

gsutil speaks only HTTPS. The boto file, as tested (the key file comes from `portcullis service-account create
… --admin`; gsutil takes its token endpoint from `provider_token_uri`, not from the key file's `token_uri`):

    [Credentials]
    gs_json_host = 127.0.0.1
    gs_json_port = 8443
    gs_host = 127.0.0.1
    gs_port = 8443
    gs_service_key_file = /path/to/portcullis-sa.json

    [Boto]
    ca_certificates_file = /path/to/cert.pem

    [OAuth2]
    provider_token_uri = https://127.0.0.1:8443/oauth2/v4/token

    [GSUtil]
    prefer_api = json
    default_project_id = demo-project
    resumable_threshold = 1048576
    parallel_composite_upload_threshold = 3M
    parallel_composite_upload_component_size = 1M

Run as `BOTO_CONFIG=portcullis.boto gsutil …`. The suite runs the gsutil of `.venv-gsutil` (never a Cloud SDK
one on PATH, whose wrapper passes its own CA bundle); without that venv it skips with the reason
(`make test` builds it: scripts/deps.sh).
"""
from __future__ import annotations

import base64
import hashlib
import os
import secrets
import subprocess
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest
import requests

import backends
from harness import ROOT, allow_all_server, free_port, portcullis_bin, Server

GSUTIL = ROOT / ".venv-gsutil" / "bin" / "gsutil"
pytestmark = pytest.mark.skipif(not GSUTIL.exists(), reason="no .venv-gsutil (scripts/deps.sh test builds it)")

BUCKET = "gsutil-bucket"


@dataclass
class Gsutil:
    server: Server
    workdir: Path
    boto: Path
    cert: Path
    admin_key: str

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("BOTO", "GOOGLE", "CLOUDSDK", "STORAGE_"))}
        env.update({"BOTO_CONFIG": str(self.boto), "HOME": str(self.workdir), "CLOUDSDK_CONFIG": str(self.workdir)})
        done = subprocess.run([str(GSUTIL), *args], cwd=self.workdir, env=env, capture_output=True, text=True,
                              timeout=300)
        if check:
            assert done.returncode == 0, (args, done.stderr[-4000:])
        return done

    def admin(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.admin_key}"}

    def names(self, prefix: str = "") -> dict[str, int]:
        """name → size of the objects under `prefix`, through the JSON API."""
        page = requests.get(f"{self.server.url}/storage/v1/b/{BUCKET}/o", params={"prefix": prefix},
                            headers=self.admin(), verify=str(self.cert), timeout=30)
        assert page.status_code == 200, page.text
        return {item["name"]: int(item["size"]) for item in page.json().get("items", [])}

    def read(self, name: str) -> bytes:
        url = f"{self.server.url}/storage/v1/b/{BUCKET}/o/{urllib.parse.quote(name, safe='')}"
        resp = requests.get(url, params={"alt": "media"}, headers=self.admin(), verify=str(self.cert), timeout=60)
        assert resp.status_code == 200, (name, resp.status_code, resp.text[:300])
        return resp.content

    def access(self) -> list[dict[str, object]]:
        return [e for e in self.server.access_log() if e.get("msg") == "access"]


def make_cert(directory: Path) -> tuple[Path, Path]:
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    return cert, key


@pytest.fixture(params=backends.params(("file", "gcs")))
def gsutil(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Gsutil]:
    backend = request.param
    workdir = tmp_path / "gw"
    workdir.mkdir()
    cert, key = make_cert(workdir)
    port = free_port()
    admin_key = secrets.token_urlsafe(32)
    (workdir / "admin.key").write_text(admin_key + "\n")
    subprocess.run([portcullis_bin(), "service-account", "create", "gsutil", "--admin", "--project", "demo-project",
                    "--public-url", f"https://127.0.0.1:{port}", "--accounts", "service-accounts.json",
                    "--out", "portcullis-sa.json"], cwd=workdir, check=True, capture_output=True)
    server = allow_all_server(workdir, f"{BUCKET}={backends.bucket_url(backend, tmp_path)}", f"gsutil-{backend}")
    server.args += ["--admin-key", str(workdir / "admin.key"),
                    "--service-accounts", str(workdir / "service-accounts.json"),
                    "--tls-cert", str(cert), "--tls-key", str(key)]
    server.scheme = "https"
    server.start(port=port)
    boto = workdir / "portcullis.boto"
    boto.write_text(f"""[Credentials]
gs_json_host = 127.0.0.1
gs_json_port = {port}
gs_host = 127.0.0.1
gs_port = {port}
gs_service_key_file = {workdir / 'portcullis-sa.json'}

[Boto]
ca_certificates_file = {cert}
num_retries = 1
max_retry_delay = 1

[OAuth2]
provider_token_uri = https://127.0.0.1:{port}/oauth2/v4/token

[GSUtil]
prefer_api = json
default_project_id = demo-project
resumable_threshold = 1048576
parallel_composite_upload_threshold = 3M
parallel_composite_upload_component_size = 1M
parallel_process_count = 1
parallel_thread_count = 2
check_hashes = if_fast_else_skip
""")
    try:
        yield Gsutil(server, workdir, boto, cert, admin_key)
    finally:
        server.stop(timeout=10)
        server.kill()


def test_cp_ls_stat_mv_rm(gsutil: Gsutil) -> None:
    work = gsutil.workdir
    small = secrets.token_bytes(1000)
    resumable = secrets.token_bytes(2 * 1024 * 1024 + 123)
    composite = bytearray(secrets.token_bytes(5 * 1024 * 1024 + 7))
    # gsutil splits it into ceil(size / 1 MiB) = 6 equal components (the last shorter) and sends each as a
    # multipart upload with LF line breaks; each component's last byte is CR, which is then content.
    component = -(-len(composite) // 6)
    for end in range(component, len(composite) + component, component):
        composite[min(end, len(composite)) - 1] = 0x0D
    composite = bytes(composite)
    (work / "small.bin").write_bytes(small)
    (work / "resumable.bin").write_bytes(resumable)
    (work / "composite.bin").write_bytes(composite)
    base = f"gs://{BUCKET}/up"

    gsutil.run("cp", "small.bin", f"{base}/small.bin")
    gsutil.run("cp", "resumable.bin", f"{base}/resumable.bin")
    gsutil.run("cp", "composite.bin", f"{base}/composite.bin")
    assert gsutil.names("up/") == {"up/small.bin": len(small), "up/resumable.bin": len(resumable),
                                   "up/composite.bin": len(composite)}, "components are deleted after compose"
    assert gsutil.read("up/small.bin") == small
    assert gsutil.read("up/resumable.bin") == resumable
    assert gsutil.read("up/composite.bin") == composite

    # How each went up: a multipart upload, a resumable session, and components composed into one object.
    log = gsutil.access()
    def went_up(name: str, upload_type: str) -> bool:
        return any(f"uploadType={upload_type}" in str(e.get("path")) and e.get("object") == name for e in log)

    assert went_up("up/small.bin", "multipart") and went_up("up/resumable.bin", "resumable")
    assert any(str(e.get("route", "")).endswith("/compose") and e.get("status") == 200 for e in log), \
        "the composite upload was composed by the gateway"
    components = {str(e["object"]) for e in log if "parallel_composite_uploads" in str(e.get("object"))
                  and e.get("method") == "POST" and e.get("status") == 200}
    removed = {str(e["object"]) for e in log if "parallel_composite_uploads" in str(e.get("object"))
               and e.get("method") == "DELETE" and e.get("status") in (200, 204)}
    assert len(components) >= 2 and removed == components, (components, removed)

    # Downloads, back to disk.
    gsutil.run("cp", f"{base}/resumable.bin", "back.bin")
    assert (work / "back.bin").read_bytes() == resumable

    listed = gsutil.run("ls", f"{base}/").stdout.split()
    assert sorted(listed) == sorted(f"{base}/{n}" for n in ("small.bin", "resumable.bin", "composite.bin"))
    long = gsutil.run("ls", "-l", f"{base}/small.bin").stdout
    assert long.split()[0] == str(len(small)), long

    stat = gsutil.run("stat", f"{base}/small.bin").stdout
    assert f"{base}/small.bin:" in stat and str(len(small)) in stat, stat
    assert base64.b64encode(hashlib.md5(small).digest()).decode() in stat, stat

    missing = gsutil.run("stat", f"{base}/nothing-here", check=False)
    assert missing.returncode != 0 and "No URLs matched" in missing.stderr, missing.stderr[-2000:]

    gsutil.run("mv", f"{base}/small.bin", f"gs://{BUCKET}/moved/small.bin")
    assert "up/small.bin" not in gsutil.names("up/")
    assert gsutil.read("moved/small.bin") == small

    gsutil.run("rm", "-r", f"{base}")
    assert gsutil.names("up/") == {}
    assert gsutil.names() == {"moved/small.bin": len(small)}

    errors = [e for e in gsutil.access() if isinstance(e.get("status"), int) and int(e["status"]) >= 500]
    assert errors == [], "no request answered 5xx"


def test_rsync_and_recursive_cp(gsutil: Gsutil) -> None:
    """`rsync -r` lists with `fields=…items/metadata/goog-reserved-file-mtime` (a map key with `-` in a field
    mask); a second run finds nothing to copy. `cp -r` uploads a tree, `cat -r` reads a range."""
    tree = gsutil.workdir / "tree"
    (tree / "x").mkdir(parents=True)
    files = {"a.txt": b"hello\n", "x/b.bin": secrets.token_bytes(100_000), "x/c.txt": b"third\n"}
    for name, data in files.items():
        (tree / name).write_bytes(data)

    gsutil.run("-q", "rsync", "-r", "tree", f"gs://{BUCKET}/sync")
    assert gsutil.names("sync/") == {f"sync/{n}": len(d) for n, d in files.items()}
    assert all(gsutil.read(f"sync/{n}") == d for n, d in files.items())
    uploads = sum(1 for e in gsutil.access() if str(e.get("route", "")).startswith("/upload/"))
    again = gsutil.run("rsync", "-r", "tree", f"gs://{BUCKET}/sync")
    assert sum(1 for e in gsutil.access() if str(e.get("route", "")).startswith("/upload/")) == uploads, \
        ("an unchanged tree is not uploaded again", again.stderr[-2000:])

    (tree / "a.txt").write_bytes(b"changed\n")
    (tree / "x" / "c.txt").unlink()
    gsutil.run("-q", "rsync", "-r", "-d", "tree", f"gs://{BUCKET}/sync")
    assert gsutil.names("sync/") == {"sync/a.txt": 8, "sync/x/b.bin": 100_000}
    assert gsutil.read("sync/a.txt") == b"changed\n"

    # Into a folder that does not exist yet, `cp -r` names the objects after the tree's contents (as on GCS);
    # into one that exists, after the tree itself.
    gsutil.run("-q", "cp", "-r", "tree", f"gs://{BUCKET}/copied")
    assert gsutil.names("copied/") == {"copied/a.txt": 8, "copied/x/b.bin": 100_000}
    gsutil.run("-q", "cp", "-r", "tree", f"gs://{BUCKET}/copied")
    assert set(gsutil.names("copied/tree/")) == {"copied/tree/a.txt", "copied/tree/x/b.bin"}
    assert gsutil.run("cat", "-r", "1-4", f"gs://{BUCKET}/copied/tree/a.txt").stdout == "hang"
