"""SigV4 checked by a real S3 engine (Ceph RGW, `scripts/rgw.sh`), seen from the gateway's clients: a gateway
holding a wrong secret is refused by the engine as AWS refuses it (SignatureDoesNotMatch), and its clients get a
502 in their surface's error shape that names the upstream's refusal and never the secret — never a 404 or 200.

A wrong payload hash or a skewed clock cannot be produced through the gateway (libfaketime, preloaded, breaks the
Swift runtime's reading of the command line); `S3RGWContractTests.signatureFailuresAreRefusedAsOnAWS`
(swift test) sends both straight to RGW with the backend's own signer: 400 XAmzContentSHA256Mismatch and
403 RequestTimeTooSkewed, as on AWS, and a 403 is what the gateway turns into this 502.
"""
from __future__ import annotations

import os
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

import backends
from harness import ALLOW_ALL_RULES, Server, signing_key_file

BUCKET = "sig-bucket"
WRONG_SECRET = "wrong-secret-" + "x" * 27

pytestmark = pytest.mark.skipif(backends.unavailable("rgw") is not None, reason=backends.unavailable("rgw") or "")


@pytest.fixture(scope="module")
def bucket_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An RGW bucket holding `a.txt`, written through a correctly configured gateway."""
    tmp = tmp_path_factory.mktemp("sig-good")
    url = backends.bucket_url("rgw", tmp)
    server = start(tmp, url, backends.rgw_env())
    try:
        made = requests.post(f"{server.url}/v0/b/{BUCKET}/o", params={"name": "a.txt"}, data=b"hello",
                             headers={"Content-Type": "text/plain"})
        assert made.status_code == 200, made.text
    finally:
        server.stop(timeout=10)
        server.kill()
    return url


def start(tmp: Path, bucket_url: str, env: dict[str, str]) -> Server:
    (tmp / "storage.rules").write_text(ALLOW_ALL_RULES)
    signing_key_file(tmp / "signing.key", "k1")
    return Server(workdir=tmp, name="sig", env=env, args=[
        "--bucket", f"{BUCKET}={bucket_url}", "--rules", str(tmp / "storage.rules"),
        "--signing-key", str(tmp / "signing.key")]).start()


@pytest.fixture
def wrong_secret(tmp_path: Path, bucket_url: str) -> Iterator[Server]:
    """A gateway on the same bucket whose secret RGW does not know."""
    server = start(tmp_path, bucket_url, {**backends.rgw_env(), "AWS_SECRET_ACCESS_KEY": WRONG_SECRET})
    yield server
    server.stop(timeout=10)
    server.kill()


def assert_refused(response: requests.Response, code: str | None = None) -> None:
    """502 in the error shape; `code`, the engine's own word, when its answer had a body (a HEAD's has none)."""
    assert response.status_code == 502, (response.status_code, response.text[:300])
    assert response.headers["Content-Type"].startswith("application/json")
    error = response.json()["error"]
    assert error["code"] == 502 and "refused the gateway's credentials" in error["message"], error
    assert code is None or code in error["message"], error
    assert WRONG_SECRET not in response.text and os.environ["PC_RGW_SECRET_KEY"] not in response.text


def test_a_wrong_secret_is_refused_and_clients_get_the_error_shape(wrong_secret: Server) -> None:
    server, code = wrong_secret, "SignatureDoesNotMatch"
    v0 = f"{server.url}/v0/b/{BUCKET}/o/a.txt"
    json_api = f"{server.url}/storage/v1/b/{BUCKET}/o/{urllib.parse.quote('a.txt', safe='')}"
    assert_refused(requests.get(v0))
    assert_refused(requests.get(v0, params={"alt": "media"}))
    assert_refused(requests.get(json_api))
    assert_refused(requests.get(json_api, params={"alt": "media"}))
    # A listing is a GET: the engine's error document names the refusal.
    assert_refused(requests.get(f"{server.url}/v0/b/{BUCKET}/o", params={"prefix": ""}), code)
    assert_refused(requests.get(f"{server.url}/storage/v1/b/{BUCKET}/o"), code)
    # An upload first reads the object it may replace (a HEAD).
    assert_refused(requests.post(f"{server.url}/v0/b/{BUCKET}/o", params={"name": "b.txt"}, data=b"x",
                                 headers={"Content-Type": "text/plain"}))
