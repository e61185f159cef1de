"""Service accounts issued by `portcullis service-account create`, used by Google's and Firebase's libraries
with no change but the key file: google-cloud-storage (`Client.from_service_account_json`) and firebase-admin
(`credentials.Certificate`) obtain access tokens from the gateway's `token_uri` (the JWT-bearer grant) and act
as the account's grant — admin, or a uid with claims the rules judge. google-auth's self-signed JWT credentials
work too. Removing an account (and SIGHUP) revokes its tokens; a bad assertion is Google's `invalid_grant`."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import firebase_admin
import google.auth.exceptions
import google.auth.jwt
import google.auth.transport.requests
import pytest
import requests
from firebase_admin import credentials, storage as fb_storage
from google.api_core import exceptions
from google.cloud import storage
from google.oauth2 import service_account

from clientkit import BUCKET, PROJECT, TIMEOUT, start_gateway
from harness import Server, free_port, portcullis_bin

CALL = {"retry": None, "timeout": TIMEOUT}

# The worker may touch only worker/**; the admin account bypasses the rules.
RULES = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /worker/{rest=**} {
      allow read, write: if request.auth != null && request.auth.uid == 'worker'
                         && request.auth.token.role == 'worker';
    }
  }
}
"""


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([portcullis_bin(), "service-account", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60, env={k: v for k, v in os.environ.items() if not k.startswith("PORTCULLIS_")})


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    workdir = tmp_path_factory.mktemp("service-accounts")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    for name, grant in [("ci", ["--admin"]), ("worker", ["--uid", "worker", "--claims", '{"role":"worker"}']),
                        ("temp", ["--admin"])]:
        made = cli("create", name, *grant, "--accounts", "accounts.json", "--out", f"{name}.json",
                   "--project", PROJECT, "--public-url", url, cwd=workdir)
        assert made.returncode == 0, made.stderr
        assert made.stdout.strip() == f"{name}@{PROJECT}.iam.portcullis"
    assert (workdir / "ci.json").stat().st_mode & 0o077 == 0
    server = start_gateway(workdir, "file", rules=RULES, name="sa",
                           extra=["--service-accounts", str(workdir / "accounts.json")])
    if server.port != port:
        server.stop(timeout=10)
        server.start(port=port)
    yield server, workdir
    server.stop(timeout=10)
    server.kill()


@pytest.fixture
def emulator(setup: tuple[Server, Path], monkeypatch: pytest.MonkeyPatch) -> tuple[Server, Path]:
    server, workdir = setup
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", server.url)
    return server, workdir


def test_key_file_is_googles_format(setup: tuple[Server, Path]) -> None:
    server, workdir = setup
    key = json.loads((workdir / "ci.json").read_text())
    assert key["type"] == "service_account" and key["project_id"] == PROJECT
    assert key["token_uri"] == f"{server.url}/oauth2/v4/token"
    assert key["client_email"] == f"ci@{PROJECT}.iam.portcullis"
    assert key["private_key"].startswith("-----BEGIN PRIVATE KEY-----")
    accounts = json.loads((workdir / "accounts.json").read_text())["accounts"]
    assert [a["client_email"] for a in accounts] == [f"{n}@{PROJECT}.iam.portcullis" for n in ("ci", "worker", "temp")]
    assert all("PRIVATE" not in a["public_key"] for a in accounts)
    listed = cli("list", "--accounts", "accounts.json", cwd=workdir)
    assert listed.returncode == 0 and "uid=worker" in listed.stdout


def test_google_cloud_storage_admin_account(emulator: tuple[Server, Path]) -> None:
    server, workdir = emulator
    client = storage.Client.from_service_account_json(str(workdir / "ci.json"))
    bucket = client.bucket(BUCKET)
    blob = bucket.blob("anywhere/report.txt")
    blob.upload_from_string(b"quarterly", content_type="text/plain", **CALL)
    assert bucket.blob("anywhere/report.txt").download_as_bytes(**CALL) == b"quarterly"
    assert [b.name for b in client.list_blobs(BUCKET, prefix="anywhere/", **CALL)] == ["anywhere/report.txt"]
    bucket.blob("anywhere/report.txt").delete(**CALL)
    assert not bucket.blob("anywhere/report.txt").exists(**CALL)
    # The calls carried the gateway's access token, and the access log names the admin.
    uploads = [e for e in server.access_log() if e.get("object") == "anywhere/report.txt"]
    assert uploads and all(e.get("uid") == "admin" for e in uploads)


def test_firebase_admin_worker_account_is_judged_by_the_rules(emulator: tuple[Server, Path]) -> None:
    _, workdir = emulator
    app = firebase_admin.initialize_app(credentials.Certificate(str(workdir / "worker.json")),
                                        {"storageBucket": BUCKET}, name=f"sa-{os.urandom(4).hex()}")
    try:
        bucket = fb_storage.bucket(app=app)
        bucket.blob("worker/job.json").upload_from_string(b"{}", content_type="application/json", **CALL)
        assert bucket.blob("worker/job.json").download_as_bytes(**CALL) == b"{}"
        with pytest.raises(exceptions.Forbidden):
            bucket.blob("elsewhere/job.json").upload_from_string(b"{}", **CALL)
        bucket.blob("worker/job.json").delete(**CALL)
    finally:
        firebase_admin.delete_app(app)


def test_objects_name_their_writer_as_owner_under_full_projection(emulator: tuple[Server, Path]) -> None:
    _, workdir = emulator
    ci = storage.Client.from_service_account_json(str(workdir / "ci.json")).bucket(BUCKET)
    worker = storage.Client.from_service_account_json(str(workdir / "worker.json")).bucket(BUCKET)
    ci.blob("owners/by-ci.txt").upload_from_string(b"ci", **CALL)
    worker.blob("worker/by-worker.txt").upload_from_string(b"worker", **CALL)

    plain = ci.blob("owners/by-ci.txt")
    plain.reload(**CALL)
    assert plain.owner is None  # noAcl, the default projection, carries no owner
    full = ci.blob("owners/by-ci.txt")
    full.reload(projection="full", **CALL)
    email = f"ci@{PROJECT}.iam.portcullis"
    assert full.owner == {"entity": f"user-{email}", "entityId": email}
    theirs = worker.blob("worker/by-worker.txt")
    theirs.reload(projection="full", **CALL)
    assert theirs.owner == {"entity": "user-worker", "entityId": "worker"}  # a uid account: its uid
    listed = {b.name: b.owner for b in ci.client.list_blobs(BUCKET, prefix="owners/", projection="full", **CALL)}
    assert listed == {"owners/by-ci.txt": {"entity": f"user-{email}", "entityId": email}}
    # A copy is the copier's: the new object's owner is who wrote it.
    copied = ci.copy_blob(worker.blob("worker/by-worker.txt"), ci, "owners/copied.txt", **CALL)
    copied.reload(projection="full", **CALL)
    assert copied.owner["entity"] == f"user-{email}"
    for name in ("owners/by-ci.txt", "owners/copied.txt", "worker/by-worker.txt"):
        ci.blob(name).delete(**CALL)


def test_gcsfs_with_key_file(emulator: tuple[Server, Path]) -> None:
    import gcsfs  # imported here: clientkit sets gcsfs's environment before any module imports it

    server, workdir = emulator
    fs = gcsfs.GCSFileSystem(project=PROJECT, token=str(workdir / "worker.json"), endpoint_url=server.url,
                             skip_instance_cache=True, retries=1)
    fs.pipe(f"{BUCKET}/worker/fs.txt", b"gcsfs")
    assert fs.cat(f"{BUCKET}/worker/fs.txt") == b"gcsfs"
    with pytest.raises(OSError, match="Forbidden"):
        fs.pipe(f"{BUCKET}/other/fs.txt", b"no")
    fs.rm(f"{BUCKET}/worker/fs.txt")


def test_self_signed_jwt_credentials(emulator: tuple[Server, Path]) -> None:
    """google-auth's JWT credentials skip the token endpoint and send a JWT signed with the account's key."""
    _, workdir = emulator
    signed = google.auth.jwt.Credentials.from_service_account_file(
        str(workdir / "worker.json"), audience="https://storage.googleapis.com/")
    client = storage.Client(project=PROJECT, credentials=signed)
    client.bucket(BUCKET).blob("worker/self-signed").upload_from_string(b"s", **CALL)
    with pytest.raises(exceptions.Forbidden):
        client.bucket(BUCKET).blob("other/self-signed").upload_from_string(b"s", **CALL)
    other = google.auth.jwt.Credentials.from_service_account_file(
        str(workdir / "worker.json"), audience="https://example.com/")
    with pytest.raises(exceptions.Unauthorized):
        storage.Client(project=PROJECT, credentials=other).bucket(BUCKET).blob("worker/x").upload_from_string(
            b"s", **CALL)


def assertion(key_file: Path, **overrides: object) -> str:
    """A JWT-bearer assertion as google-auth makes it, with some claims overridden."""
    info = json.loads(key_file.read_text())
    now = int(time.time())
    claims = {"iss": info["client_email"], "aud": info["token_uri"], "iat": now, "exp": now + 3600,
              "scope": "https://www.googleapis.com/auth/devstorage.full_control", **overrides}
    signer = service_account.Credentials.from_service_account_info(info).signer
    return google.auth.jwt.encode(signer, claims).decode()


def test_bad_assertions_are_invalid_grant(setup: tuple[Server, Path]) -> None:
    server, workdir = setup
    token_uri = f"{server.url}/oauth2/v4/token"
    grant = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    def post(jwt: str, grant_type: str = grant) -> requests.Response:
        return requests.post(token_uri, data={"grant_type": grant_type, "assertion": jwt}, timeout=TIMEOUT)

    good = post(assertion(workdir / "ci.json"))
    assert good.status_code == 200, good.text
    body = good.json()
    assert body["token_type"] == "Bearer" and 0 < body["expires_in"] <= 3600 and body["access_token"]
    assert good.headers["Cache-Control"] == "no-store"

    # Signed with another account's key, claiming to be ci.
    ci_email = json.loads((workdir / "ci.json").read_text())["client_email"]
    forged = post(assertion(workdir / "worker.json", iss=ci_email))
    now = int(time.time())
    expired = post(assertion(workdir / "ci.json", iat=now - 7300, exp=now - 3700))
    wrong_aud = post(assertion(workdir / "ci.json", aud="https://elsewhere.example/token"))
    for response, description in [(forged, "Invalid JWT Signature."),
                                  (expired, "Invalid JWT: Token must be a short-lived token"),
                                  (wrong_aud, "Invalid JWT: Failed audience check.")]:
        assert response.status_code == 400, response.text
        assert response.json()["error"] == "invalid_grant"
        assert response.json()["error_description"].startswith(description)
    metrics = requests.get(f"{server.url}/metrics", timeout=TIMEOUT).text
    for reason in ["badSignature", "wrongAudience", "expired"]:
        line = next(l for l in metrics.splitlines() if l.startswith(f'portcullis_auth_failures_total{{reason="{reason}"}}'))
        assert float(line.split()[-1]) >= 1, line
    unsupported = post(assertion(workdir / "ci.json"), grant_type="client_credentials")
    assert unsupported.status_code == 400 and unsupported.json()["error"] == "unsupported_grant_type"
    assert requests.get(token_uri, timeout=TIMEOUT).status_code == 405

    # google-auth reports the refusal as a RefreshError, as against Google.
    info = json.loads((workdir / "ci.json").read_text())
    info["private_key"] = json.loads((workdir / "worker.json").read_text())["private_key"]
    wrong_key = service_account.Credentials.from_service_account_info(
        info, scopes=["https://www.googleapis.com/auth/devstorage.full_control"])
    with pytest.raises(google.auth.exceptions.RefreshError, match="invalid_grant"):
        wrong_key.refresh(google.auth.transport.requests.Request())


def test_removed_account_stops_working(emulator: tuple[Server, Path]) -> None:
    server, workdir = emulator
    client = storage.Client.from_service_account_json(str(workdir / "temp.json"))
    client.bucket(BUCKET).blob("temp/a").upload_from_string(b"a", **CALL)
    token = client._credentials.token
    assert token
    object_url = f"{server.url}/storage/v1/b/{BUCKET}/o/{urllib.parse.quote('temp/a', safe='')}"
    assert requests.get(object_url, headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT).status_code == 200

    removed = cli("remove", "temp", "--accounts", "accounts.json", cwd=workdir)
    assert removed.returncode == 0, removed.stderr
    server.signal(signal.SIGHUP)
    deadline = time.monotonic() + 15
    status = 200
    while time.monotonic() < deadline:
        status = requests.get(object_url, headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT).status_code
        if status != 200:
            break
        time.sleep(0.1)
    assert status == 401
    # A fresh assertion is refused too, and the other accounts still work.
    response = requests.post(f"{server.url}/oauth2/v4/token", timeout=TIMEOUT, data={
        "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": assertion(workdir / "temp.json")})
    assert response.status_code == 400 and response.json() == {
        "error": "invalid_grant", "error_description": "Invalid grant: account not found"}
    fresh = storage.Client.from_service_account_json(str(workdir / "ci.json"))
    assert fresh.bucket(BUCKET).blob("temp/a").download_as_bytes(**CALL) == b"a"
