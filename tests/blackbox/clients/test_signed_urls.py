"""Google's signed URLs (V4 and V2, RSA) on the XML-style path `/{bucket}/{object}`: URLs made by
google-cloud-storage's `blob.generate_signed_url()` with a key file from `portcullis service-account create`,
used with plain `requests` for GET, HEAD, PUT and DELETE. Expired and tampered URLs and a signer not listed in
`--signed-url-accounts` get GCS's XML errors; the grant is the signer's (a uid account stays under the rules);
paths of other surfaces are not shadowed."""
from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import json
import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from google.cloud import storage

from clientkit import BUCKET, PROJECT, TIMEOUT, start_gateway
from harness import Server, free_port, portcullis_bin

CALL = {"retry": None, "timeout": TIMEOUT}
RULES = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /worker/{rest=**} {
      allow read, write: if request.auth != null && request.auth.uid == 'worker';
    }
  }
}
"""
TEN_MINUTES = datetime.timedelta(minutes=10)
HMAC_ID = "GOOG1EPORTCULLISTESTKEY"
HMAC_SECRET = "bGoa+V7g/yqDXvKRqq+JTFn4uQZbPiQJo4pf9RzJ"


def outsider_key_file(path: Path, name: str = "outsider") -> rsa.RSAPrivateKey:
    """A service-account key file of an account Portcullis did not issue (as Google's would be)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    path.write_text(json.dumps({
        "type": "service_account", "project_id": PROJECT, "private_key_id": "0" * 40, "private_key": pem,
        "client_email": f"{name}@{PROJECT}.iam.gserviceaccount.com", "client_id": "1",
        "token_uri": "https://oauth2.googleapis.com/token"}))
    return key


def certificate_map(key: rsa.RSAPrivateKey) -> bytes:
    """Google's x509 map for an account: `{key id: certificate PEM}` (a self-signed certificate here)."""
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mapped")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(1).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    return json.dumps({"k1": cert.public_bytes(serialization.Encoding.PEM).decode()}).encode()


class KeyMapServer:
    """Serves one certificate map over HTTP (what https://www.googleapis.com/service_accounts/v1/metadata/x509/…
    serves), with Cache-Control as Google sends it."""

    def __init__(self, body: bytes) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                self.send_response(200)
                self.send_header("Content-Type", "application/json; charset=UTF-8")
                self.send_header("Cache-Control", "public, max-age=3600")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/x509/mapped"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def email(name: str) -> str:
    return f"{name}@{PROJECT}.iam.portcullis"


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    workdir = tmp_path_factory.mktemp("signed-urls")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PORTCULLIS_")}
    for name, grant in [("signer", ["--admin"]), ("worker", ["--uid", "worker"]), ("stranger", ["--admin"])]:
        made = subprocess.run([portcullis_bin(), "service-account", "create", name, *grant, "--accounts",
                               "accounts.json", "--project", PROJECT, "--public-url", f"http://127.0.0.1:{port}"],
                              cwd=workdir, capture_output=True, text=True, timeout=60, env=env)
        assert made.returncode == 0, made.stderr
    outsider_key_file(workdir / "outsider.json")
    keys = KeyMapServer(certificate_map(outsider_key_file(workdir / "mapped.json", name="mapped")))
    (workdir / "hmac.secret").write_text(HMAC_SECRET + "\n")
    server = start_gateway(workdir, "file", rules=RULES, name="signed", extra=[
        "--service-accounts", str(workdir / "accounts.json"),
        "--signed-url-accounts", email("signer"), "--signed-url-accounts", email("worker"),
        "--signed-url-accounts", str(workdir / "outsider.json"),
        "--signed-url-accounts", f"hmac:{HMAC_ID}={workdir / 'hmac.secret'}",
        "--signed-url-accounts", f"mapped@{PROJECT}.iam.gserviceaccount.com={keys.url}"])
    if server.port != port:
        server.stop(timeout=10)
        server.start(port=port)
    yield server, workdir
    server.stop(timeout=10)
    server.kill()
    keys.close()


@pytest.fixture
def client_for(setup: tuple[Server, Path], monkeypatch: pytest.MonkeyPatch):
    server, workdir = setup
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", server.url)

    def make(name: str) -> storage.Client:
        return storage.Client.from_service_account_json(str(workdir / f"{name}.json"))
    return make


def error_code(response: requests.Response) -> str:
    assert response.headers["Content-Type"].startswith("application/xml"), response.text
    return response.text.split("<Code>")[1].split("</Code>")[0]


@pytest.mark.parametrize("version", ["v4", "v2"])
def test_get_put_delete_with_plain_requests(client_for, setup: tuple[Server, Path], version: str) -> None:
    server, _ = setup
    blob = client_for("signer").bucket(BUCKET).blob(f"signed/{version}/report one.txt")

    put = blob.generate_signed_url(version=version, expiration=TEN_MINUTES, method="PUT", content_type="text/plain",
                                   headers={"x-goog-meta-owner": "alice"})
    assert put.startswith(server.url + f"/{BUCKET}/signed/{version}/report%20one.txt?")
    uploaded = requests.put(put, data=b"signed bytes", timeout=TIMEOUT, headers={
        "Content-Type": "text/plain", "x-goog-meta-owner": "alice", "Cache-Control": "no-cache"})
    assert uploaded.status_code == 200, uploaded.text
    assert uploaded.headers["x-goog-generation"]
    stored = client_for("signer").bucket(BUCKET).get_blob(blob.name, **CALL)
    assert stored.metadata == {"owner": "alice"} and stored.cache_control == "no-cache"
    assert stored.content_type == "text/plain"

    get = blob.generate_signed_url(version=version, expiration=TEN_MINUTES)
    fetched = requests.get(get, timeout=TIMEOUT)
    assert fetched.status_code == 200, fetched.text
    assert fetched.content == b"signed bytes" and fetched.headers["Content-Type"] == "text/plain"
    ranged = requests.get(get, headers={"Range": "bytes=0-5"}, timeout=TIMEOUT)
    assert ranged.status_code == 206 and ranged.content == b"signed"
    head = blob.generate_signed_url(version=version, expiration=TEN_MINUTES, method="HEAD")
    headed = requests.head(head, timeout=TIMEOUT)
    assert headed.status_code == 200 and headed.headers["Content-Length"] == "12"

    # A URL signed for GET does not delete.
    assert requests.delete(get, timeout=TIMEOUT).status_code == 403
    delete = blob.generate_signed_url(version=version, expiration=TEN_MINUTES, method="DELETE")
    assert requests.delete(delete, timeout=TIMEOUT).status_code == 204
    missing = requests.get(get, timeout=TIMEOUT)
    assert missing.status_code == 404 and error_code(missing) == "NoSuchKey"


@pytest.mark.parametrize("version", ["v4", "v2"])
def test_expired_tampered_and_untrusted_urls_are_refused(client_for, version: str) -> None:
    client_for("signer").bucket(BUCKET).blob("signed/kept.txt").upload_from_string(b"kept", **CALL)
    blob = client_for("signer").bucket(BUCKET).blob("signed/kept.txt")
    expired = blob.generate_signed_url(version=version, expiration=datetime.timedelta(seconds=1))
    time.sleep(2.2)
    response = requests.get(expired, timeout=TIMEOUT)
    assert response.status_code == 400 and error_code(response) == "ExpiredToken"

    good = blob.generate_signed_url(version=version, expiration=TEN_MINUTES)
    assert requests.get(good, timeout=TIMEOUT).content == b"kept"
    other_object = good.replace("/signed/kept.txt?", "/signed/other.txt?")
    for tampered in [other_object, good[:-6] + ("000000" if not good.endswith("000000") else "111111")]:
        response = requests.get(tampered, timeout=TIMEOUT)
        assert response.status_code in (400, 403), response.text
        assert error_code(response) in ("SignatureDoesNotMatch", "InvalidArgument")
    response = requests.get(other_object, timeout=TIMEOUT)
    assert response.status_code == 403 and error_code(response) == "SignatureDoesNotMatch"

    metrics = requests.get(blob.client._connection.API_BASE_URL + "/metrics", timeout=TIMEOUT).text
    line = next(l for l in metrics.splitlines() if l.startswith('portcullis_auth_failures_total{reason="expired"}'))
    assert float(line.split()[-1]) >= 1, line

    stranger = client_for("stranger").bucket(BUCKET).blob("signed/kept.txt").generate_signed_url(
        version=version, expiration=TEN_MINUTES)
    response = requests.get(stranger, timeout=TIMEOUT)
    assert response.status_code == 403 and error_code(response) == "SignatureDoesNotMatch"


def test_grant_is_the_signers(client_for) -> None:
    client_for("signer").bucket(BUCKET).blob("private/secret.txt").upload_from_string(b"secret", **CALL)
    worker = client_for("worker").bucket(BUCKET)
    denied = requests.get(worker.blob("private/secret.txt").generate_signed_url(version="v4", expiration=TEN_MINUTES),
                          timeout=TIMEOUT)
    assert denied.status_code == 403 and error_code(denied) == "AccessDenied"
    put = worker.blob("worker/upload.bin").generate_signed_url(version="v4", expiration=TEN_MINUTES, method="PUT")
    assert requests.put(put, data=b"w", timeout=TIMEOUT).status_code == 200
    assert client_for("signer").bucket(BUCKET).blob("worker/upload.bin").download_as_bytes(**CALL) == b"w"


def test_other_surfaces_are_not_shadowed(setup: tuple[Server, Path]) -> None:
    server, _ = setup
    # Without a signature the path-style form is not served, and other surfaces' paths answer as before.
    plain = requests.get(f"{server.url}/{BUCKET}/signed/kept.txt", timeout=TIMEOUT)
    assert plain.status_code == 404 and plain.headers["Content-Type"].startswith("application/json")
    for method in ["GET", "PUT", "DELETE"]:
        v0 = requests.request(method, f"{server.url}/v0/b/{BUCKET}/o", timeout=TIMEOUT)
        assert v0.headers["Content-Type"].startswith("application/json"), (method, v0.status_code)
        assert "<Error>" not in v0.text


def test_browser_preflight_of_a_signed_put(client_for) -> None:
    put = client_for("signer").bucket(BUCKET).blob("signed/browser.bin").generate_signed_url(
        version="v4", expiration=TEN_MINUTES, method="PUT", content_type="application/octet-stream")
    preflight = requests.options(put, timeout=TIMEOUT, headers={
        "Origin": "http://app.example", "Access-Control-Request-Method": "PUT",
        "Access-Control-Request-Headers": "content-type"})
    assert preflight.status_code in (200, 204), preflight.text
    assert preflight.headers["Access-Control-Allow-Origin"] in ("*", "http://app.example")
    assert "PUT" in preflight.headers["Access-Control-Allow-Methods"]


@pytest.mark.parametrize("version", ["v4", "v2"])
def test_resumable_upload_started_by_a_signed_url(client_for, version: str) -> None:
    blob = client_for("signer").bucket(BUCKET).blob(f"signed/resumable-{version}.bin")
    start = blob.generate_signed_url(version=version, expiration=TEN_MINUTES, method="RESUMABLE",
                                     content_type="application/octet-stream")
    # Without the signed header the signature does not match.
    unsigned = requests.post(start, headers={"Content-Type": "application/octet-stream"}, timeout=TIMEOUT)
    assert unsigned.status_code == 403 and error_code(unsigned) == "SignatureDoesNotMatch"
    started = requests.post(start, timeout=TIMEOUT, headers={
        "x-goog-resumable": "start", "Content-Type": "application/octet-stream"})
    assert started.status_code == 201, started.text
    session = started.headers["Location"]
    payload = os.urandom(256 * 1024 + 1000)
    first = requests.put(session, data=payload[:256 * 1024], timeout=TIMEOUT,
                         headers={"Content-Range": f"bytes 0-{256 * 1024 - 1}/*"})
    assert first.status_code == 308 and first.headers["Range"] == f"bytes=0-{256 * 1024 - 1}"
    last = requests.put(session, data=payload[256 * 1024:], timeout=TIMEOUT,
                        headers={"Content-Range": f"bytes {256 * 1024}-{len(payload) - 1}/{len(payload)}"})
    assert last.status_code == 200, last.text
    assert client_for("signer").bucket(BUCKET).blob(blob.name).download_as_bytes(**CALL) == payload


def test_key_file_signer_acts_as_admin(client_for, setup: tuple[Server, Path]) -> None:
    """A key file listed in --signed-url-accounts whose account Portcullis did not issue: its URLs act as admin."""
    _, workdir = setup
    client_for("signer").bucket(BUCKET).blob("private/outsider.txt").upload_from_string(b"o", **CALL)
    outsider = storage.Client.from_service_account_json(str(workdir / "outsider.json"))
    url = outsider.bucket(BUCKET).blob("private/outsider.txt").generate_signed_url(
        version="v4", expiration=TEN_MINUTES)
    response = requests.get(url, timeout=TIMEOUT)
    assert response.status_code == 200 and response.content == b"o"


def hmac_signed_url(base: str, bucket: str, name: str, method: str, expires: int, secret: str = HMAC_SECRET,
                    now: datetime.datetime | None = None) -> str:
    """A GOOG4-HMAC-SHA256 signed URL built by Google's documented V4 process (the Python client signs RSA only)."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    timestamp, datestamp = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    scope = f"{datestamp}/auto/storage/goog4_request"
    host = urllib.parse.urlparse(base).netloc
    path = "/" + bucket + "/" + urllib.parse.quote(name, safe="/~")
    query = {"X-Goog-Algorithm": "GOOG4-HMAC-SHA256", "X-Goog-Credential": f"{HMAC_ID}/{scope}",
             "X-Goog-Date": timestamp, "X-Goog-Expires": str(expires), "X-Goog-SignedHeaders": "host"}
    canonical_query = "&".join(sorted(f"{urllib.parse.quote(k, safe='~')}={urllib.parse.quote(v, safe='~')}"
                                      for k, v in query.items()))
    canonical_request = "\n".join([method, path, canonical_query, f"host:{host}\n", "host", "UNSIGNED-PAYLOAD"])
    string_to_sign = "\n".join(["GOOG4-HMAC-SHA256", timestamp, scope,
                                hashlib.sha256(canonical_request.encode()).hexdigest()])
    key = ("GOOG4" + secret).encode()
    for part in [datestamp, "auto", "storage", "goog4_request"]:
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, string_to_sign.encode(), hashlib.sha256).hexdigest()
    return f"{base}{path}?{canonical_query}&X-Goog-Signature={signature}"


def test_hmac_signed_urls(setup: tuple[Server, Path]) -> None:
    server, _ = setup
    put = hmac_signed_url(server.url, BUCKET, "signed/hmac file.txt", "PUT", 600)
    assert requests.put(put, data=b"hmac", timeout=TIMEOUT).status_code == 200
    get = hmac_signed_url(server.url, BUCKET, "signed/hmac file.txt", "GET", 600)
    fetched = requests.get(get, timeout=TIMEOUT)
    assert fetched.status_code == 200 and fetched.content == b"hmac"
    wrong = hmac_signed_url(server.url, BUCKET, "signed/hmac file.txt", "GET", 600, secret="not-the-secret-at-all")
    response = requests.get(wrong, timeout=TIMEOUT)
    assert response.status_code == 403 and error_code(response) == "SignatureDoesNotMatch"
    old = hmac_signed_url(server.url, BUCKET, "signed/hmac file.txt", "GET", 60,
                          now=datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=5))
    response = requests.get(old, timeout=TIMEOUT)
    assert response.status_code == 400 and error_code(response) == "ExpiredToken"


def hmac_v2_signed_url(base: str, bucket: str, name: str, method: str, expires: int, secret: str = HMAC_SECRET,
                       content_type: str = "") -> str:
    """A V2 URL signed with an HMAC key (HMAC-SHA1 over Google's documented V2 string to sign: method, MD5,
    content type, expiry, canonical resource), as Cloud Storage's interoperability mode accepts."""
    path = "/" + bucket + "/" + urllib.parse.quote(name, safe="/~")
    string_to_sign = "\n".join([method, "", content_type, str(expires), path])
    signature = base64.b64encode(hmac.new(secret.encode(), string_to_sign.encode(), hashlib.sha1).digest()).decode()
    query = urllib.parse.urlencode({"GoogleAccessId": HMAC_ID, "Expires": str(expires), "Signature": signature})
    return f"{base}{path}?{query}"


def test_hmac_v2_signed_urls(setup: tuple[Server, Path]) -> None:
    server, _ = setup
    expires = int(time.time()) + 600
    put = hmac_v2_signed_url(server.url, BUCKET, "signed/hmac v2.txt", "PUT", expires, content_type="text/plain")
    assert requests.put(put, data=b"v2", headers={"Content-Type": "text/plain"}, timeout=TIMEOUT).status_code == 200
    get = hmac_v2_signed_url(server.url, BUCKET, "signed/hmac v2.txt", "GET", expires)
    fetched = requests.get(get, timeout=TIMEOUT)
    assert fetched.status_code == 200 and fetched.content == b"v2"
    # The signature binds the method, the secret and the expiry.
    response = requests.delete(get, timeout=TIMEOUT)
    assert response.status_code == 403 and error_code(response) == "SignatureDoesNotMatch"
    wrong = hmac_v2_signed_url(server.url, BUCKET, "signed/hmac v2.txt", "GET", expires, secret="not-the-secret")
    response = requests.get(wrong, timeout=TIMEOUT)
    assert response.status_code == 403 and error_code(response) == "SignatureDoesNotMatch"
    response = requests.get(get.replace(f"Expires={expires}", f"Expires={expires + 1}"), timeout=TIMEOUT)
    assert response.status_code == 403 and error_code(response) == "SignatureDoesNotMatch"
    old = hmac_v2_signed_url(server.url, BUCKET, "signed/hmac v2.txt", "GET", int(time.time()) - 1)
    response = requests.get(old, timeout=TIMEOUT)
    assert response.status_code == 400 and error_code(response) == "ExpiredToken"


def test_post_policy_form_upload(client_for, setup: tuple[Server, Path]) -> None:
    """A V4 POST policy from `generate_signed_post_policy_v4`, posted as a multipart form (what a browser's
    <form enctype="multipart/form-data"> sends), with the policy's conditions enforced."""
    server, _ = setup
    signer = client_for("signer")
    expiration = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None) + TEN_MINUTES

    def policy(name: str, **extra):
        return signer.generate_signed_post_policy_v4(
            BUCKET, name, expiration=expiration, conditions=[["content-length-range", 1, 100]],
            fields={"x-goog-meta-source": "form", "success_action_status": "201"}, **extra)

    made = policy("forms/upload.txt")
    assert made["url"] == f"{server.url}/{BUCKET}/"
    posted = requests.post(made["url"], data=made["fields"], timeout=TIMEOUT,
                           files={"file": ("upload.txt", b"from a form", "text/plain")})
    assert posted.status_code == 201, posted.text
    assert "<Key>forms/upload.txt</Key>" in posted.text
    stored = signer.bucket(BUCKET).get_blob("forms/upload.txt", **CALL)
    assert stored.download_as_bytes(**CALL) == b"from a form"
    assert stored.metadata == {"source": "form"} and stored.content_type == "text/plain"

    too_big = requests.post(made["url"], data=made["fields"], timeout=TIMEOUT,
                            files={"file": ("big.bin", b"x" * 101, "application/octet-stream")})
    assert too_big.status_code == 400, too_big.text
    assert signer.bucket(BUCKET).blob("forms/upload.txt").download_as_bytes(**CALL) == b"from a form"
    other_key = dict(made["fields"], key="forms/elsewhere.txt")
    moved = requests.post(made["url"], data=other_key, timeout=TIMEOUT, files={"file": ("a", b"a", "text/plain")})
    assert moved.status_code == 400 and error_code(moved) == "InvalidArgument"
    tampered = dict(made["fields"], **{"x-goog-signature": "00" * 256})
    refused = requests.post(made["url"], data=tampered, timeout=TIMEOUT, files={"file": ("a", b"a", "text/plain")})
    assert refused.status_code == 403 and error_code(refused) == "SignatureDoesNotMatch"
    extra = dict(made["fields"], **{"x-goog-meta-sneaky": "1"})
    uncovered = requests.post(made["url"], data=extra, timeout=TIMEOUT, files={"file": ("a", b"a", "text/plain")})
    assert uncovered.status_code == 400 and error_code(uncovered) == "InvalidArgument"
    assert not signer.bucket(BUCKET).blob("forms/elsewhere.txt").exists(**CALL)
    # A field Cloud Storage's form upload does not know is refused even when the policy covers it.
    unknown = signer.generate_signed_post_policy_v4(
        BUCKET, "forms/unknown.txt", expiration=expiration, fields={"x-goog-random": "invalid_field"})
    invalid = requests.post(unknown["url"], data=unknown["fields"], timeout=TIMEOUT,
                            files={"file": ("u.txt", b"u", "text/plain")})
    assert invalid.status_code == 400 and error_code(invalid) == "InvalidArgument", invalid.text
    assert not signer.bucket(BUCKET).blob("forms/unknown.txt").exists(**CALL)
    redirecting = signer.generate_signed_post_policy_v4(
        BUCKET, "forms/redirected.txt", expiration=expiration,
        fields={"success_action_redirect": "http://app.example/done?step=2"})
    redirected = requests.post(redirecting["url"], data=redirecting["fields"], timeout=TIMEOUT, allow_redirects=False,
                               files={"file": ("r.txt", b"r", "text/plain")})
    assert redirected.status_code == 303, redirected.text
    target = urllib.parse.urlsplit(redirected.headers["Location"])
    query = urllib.parse.parse_qs(target.query)
    assert target.netloc == "app.example" and query["step"] == ["2"] and query["key"] == ["forms/redirected.txt"]
    assert query["bucket"] == [BUCKET] and query["etag"]
    # A form post to a path of another surface is not taken for a policy upload.
    elsewhere = requests.post(f"{server.url}/v0/b/{BUCKET}/o", data=made["fields"], timeout=TIMEOUT,
                              files={"file": ("a", b"a", "text/plain")})
    assert "<Error>" not in elsewhere.text


def test_firebase_admin_signed_url(client_for, setup: tuple[Server, Path]) -> None:
    """firebase-admin's bucket (a Certificate credential from the same key file) signs URLs the gateway honours."""
    import firebase_admin
    from firebase_admin import credentials, storage as fb_storage

    _, workdir = setup
    client_for("signer").bucket(BUCKET).blob("signed/firebase.txt").upload_from_string(b"fb", **CALL)
    app = firebase_admin.initialize_app(credentials.Certificate(str(workdir / "signer.json")),
                                        {"storageBucket": BUCKET}, name=f"signed-{os.urandom(4).hex()}")
    try:
        url = fb_storage.bucket(app=app).blob("signed/firebase.txt").generate_signed_url(
            version="v4", expiration=TEN_MINUTES)
        response = requests.get(url, timeout=TIMEOUT)
        assert response.status_code == 200 and response.content == b"fb"
    finally:
        firebase_admin.delete_app(app)


def test_signer_from_a_certificate_map_url(client_for, setup: tuple[Server, Path]) -> None:
    """`EMAIL=URL`: the account's keys come from its x509 certificate map (Google's format), fetched by the gateway."""
    _, workdir = setup
    client_for("signer").bucket(BUCKET).blob("signed/mapped.txt").upload_from_string(b"m", **CALL)
    mapped = storage.Client.from_service_account_json(str(workdir / "mapped.json"))
    url = mapped.bucket(BUCKET).blob("signed/mapped.txt").generate_signed_url(version="v2", expiration=TEN_MINUTES)
    deadline = time.monotonic() + 10
    response = requests.get(url, timeout=TIMEOUT)
    while response.status_code == 403 and time.monotonic() < deadline:  # the first fetch runs in the background
        time.sleep(0.1)
        response = requests.get(url, timeout=TIMEOUT)
    assert response.status_code == 200 and response.content == b"m"
    forged = outsider_key_file(workdir / "forger.json", name="mapped")
    assert forged
    other = storage.Client.from_service_account_json(str(workdir / "forger.json"))
    bad = other.bucket(BUCKET).blob("signed/mapped.txt").generate_signed_url(version="v4", expiration=TEN_MINUTES)
    response = requests.get(bad, timeout=TIMEOUT)
    assert response.status_code == 403 and error_code(response) == "SignatureDoesNotMatch"


@pytest.mark.parametrize("version", ["v4", "v2"])
def test_signed_bucket_url_lists_objects(client_for, version: str) -> None:
    """A signed URL for the bucket (`bucket.generate_signed_url()`) lists it as the XML API's ListBucketResult —
    prefix, delimiter, max-keys and the opaque NextMarker — under the signer's grant."""
    signer = client_for("signer")
    for name in ("listing/a.txt", "listing/b.txt", "listing/sub/c.txt"):
        signer.bucket(BUCKET).blob(name).upload_from_string(b"x", **CALL)

    def signed(client: storage.Client, **query: str) -> requests.Response:
        url = client.bucket(BUCKET).generate_signed_url(expiration=TEN_MINUTES, version=version,
                                                        query_parameters=query or None)
        return requests.get(url, timeout=TIMEOUT)

    def keys(response: requests.Response) -> list[str]:
        return [part.split("</Key>")[0] for part in response.text.split("<Key>")[1:]]

    listed = signed(signer, prefix="listing/", delimiter="/")
    assert listed.status_code == 200 and listed.headers["Content-Type"].startswith("application/xml"), listed.text
    assert keys(listed) == ["listing/a.txt", "listing/b.txt"]
    assert "<CommonPrefixes><Prefix>listing/sub/</Prefix></CommonPrefixes>" in listed.text
    assert "<IsTruncated>false</IsTruncated>" in listed.text and "<Size>1</Size>" in listed.text
    first = signed(signer, prefix="listing/", **{"max-keys": "2"})
    assert keys(first) == ["listing/a.txt", "listing/b.txt"] and "<IsTruncated>true</IsTruncated>" in first.text
    marker = first.text.split("<NextMarker>")[1].split("</NextMarker>")[0]
    rest = signed(signer, prefix="listing/", marker=marker, **{"max-keys": "2"})
    assert rest.status_code == 200 and keys(rest) == ["listing/sub/c.txt"], rest.text
    assert signed(signer, marker="listing/a.txt").status_code == 400
    # The worker's grant is a uid under rules that allow it nothing at the bucket's top.
    assert signed(client_for("worker")).status_code == 403
    tampered = signer.bucket(BUCKET).generate_signed_url(expiration=TEN_MINUTES, version=version) + "0"
    refused = requests.get(tampered.replace("Signature=", "Signature=00", 1), timeout=TIMEOUT)
    assert refused.status_code in (400, 403) and error_code(refused) in ("SignatureDoesNotMatch", "InvalidArgument")


@pytest.mark.parametrize("version", ["v4", "v2"])
def test_parameters_the_signature_does_not_cover_are_refused(client_for, setup: tuple[Server, Path],
                                                             version: str) -> None:
    """A signed URL grants what was signed: adding a query parameter (another listing prefix, a multipart call)
    to it fails its signature, in V2 as in V4 — V2 signs the path alone only when the URL carries no other
    parameter."""
    signer = client_for("signer")
    signer.bucket(BUCKET).blob("covered/a.txt").upload_from_string(b"a", **CALL)
    listing = signer.bucket(BUCKET).generate_signed_url(expiration=TEN_MINUTES, version=version,
                                                        query_parameters={"prefix": "covered/"})
    assert requests.get(listing, timeout=TIMEOUT).status_code == 200
    widened = requests.get(listing.replace("prefix=covered", "prefix=other"), timeout=TIMEOUT)
    assert widened.status_code == 403 and error_code(widened) == "SignatureDoesNotMatch"

    put = signer.bucket(BUCKET).blob("covered/b.txt").generate_signed_url(
        version=version, expiration=TEN_MINUTES, method="POST", headers={"x-goog-resumable": "start"})
    started = requests.post(put + "&uploads", timeout=TIMEOUT, headers={"x-goog-resumable": "start"})
    assert started.status_code == 403 and error_code(started) == "SignatureDoesNotMatch"
    plain = signer.bucket(BUCKET).blob("covered/a.txt").generate_signed_url(version=version, expiration=TEN_MINUTES)
    listed_parts = requests.get(plain + "&uploadId=" + "0" * 32, timeout=TIMEOUT)
    assert listed_parts.status_code == 403 and error_code(listed_parts) == "SignatureDoesNotMatch"
    bucket_url = signer.bucket(BUCKET).generate_signed_url(expiration=TEN_MINUTES, version=version)
    uploads = requests.get(bucket_url + "&uploads", timeout=TIMEOUT)
    assert uploads.status_code == 403 and error_code(uploads) == "SignatureDoesNotMatch"
