"""User content never runs with the gateway's authority (docs/security.md), on every backend.

Every response that carries an object's bytes — v0 `alt=media` with a download token, with a credential or with
a signature (`?signedUrl`), the JSON API's `alt=media` and `/download/storage/v1/…` — must make the browser
treat the document as an opaque origin that runs no script (`Content-Security-Policy: sandbox`) and must not be
MIME-sniffed (`X-Content-Type-Options: nosniff`): whole, ranged (206), HEAD and not modified (304). Error bodies
(which echo object names) are JSON with `nosniff`. The objects are active types an uploader may choose (HTML,
SVG, XHTML, JavaScript). The browser proof — an uploaded page opened in the console's tab cannot read the
credential — is tests/blackbox/console/test_console_isolation.py."""
from __future__ import annotations

import json
import os
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import backends
from harness import Server, object_url, request as http, signing_key_file, upload_url

BUCKET = "iso-bucket"
RULES = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /{all=**} {
      allow read, write: if request.auth != null;
    }
  }
}
"""
PAGE = b"<!doctype html><title>x</title><script>document.title = sessionStorage.length</script>"
OBJECTS = {
    "active/page.html": (PAGE, "text/html"),
    "active/pic.svg": (b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', "image/svg+xml"),
    "active/doc.xhtml": (b'<html xmlns="http://www.w3.org/1999/xhtml"><body/></html>', "application/xhtml+xml"),
    "active/app.js": (b"alert(document.domain)", "application/javascript"),
    "active/untyped": (PAGE, ""),
    # Stored as given (Cloud Storage keeps contentType as free text) but not a media type: served as unknown bytes.
    "active/not-a-type": (PAGE, "text/html x"),
}


@pytest.fixture(scope="module", params=backends.params())
def gateway(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    backend = request.param
    workdir = tmp_path_factory.mktemp(f"isolation-{backend}")
    (workdir / "storage.rules").write_text(RULES)
    signing_key_file(workdir / "signing.key", "k1")
    admin_key = os.urandom(24).hex()
    (workdir / "admin.key").write_text(admin_key + "\n")
    server = Server(workdir=workdir, name=f"isolation-{backend}", args=[
        "--bucket", f"{BUCKET}={backends.bucket_url(backend, workdir)}", "--rules", "storage.rules",
        "--signing-key", "signing.key", "--admin-key", "admin.key"], env=backends.backend_env(backend)).start()
    admin = {"Authorization": f"Bearer {admin_key}"}
    tokens = {}
    for name, (body, content_type) in OBJECTS.items():
        headers = {**admin, **({"Content-Type": content_type} if content_type else {})}
        made = http("POST", upload_url(server.url, BUCKET, name), body=body, headers=headers)
        assert made.status == 200, made.body
        tokens[name] = json.loads(made.body)["downloadTokens"].split(",")[0]
    yield {"server": server, "admin": admin, "tokens": tokens}
    server.stop(timeout=10)
    server.kill()


def v0_token(g: dict[str, object], name: str) -> tuple[str, dict[str, str]]:
    return object_url(g["server"].url, BUCKET, name, alt="media", token=g["tokens"][name]), {}  # type: ignore[attr-defined,index]


def v0_credential(g: dict[str, object], name: str) -> tuple[str, dict[str, str]]:
    return object_url(g["server"].url, BUCKET, name, alt="media"), dict(g["admin"])  # type: ignore[attr-defined,arg-type]


def v0_signed(g: dict[str, object], name: str) -> tuple[str, dict[str, str]]:
    minted = http("POST", object_url(g["server"].url, BUCKET, name) + "?signedUrl",  # type: ignore[attr-defined]
                     body=json.dumps({"method": "GET", "expiresIn": 600}).encode(),
                     headers={"Content-Type": "application/json", **g["admin"]})  # type: ignore[dict-item]
    assert minted.status == 200, minted.body
    url = json.loads(minted.body)["url"]
    assert "signature=" in url
    return url, {}


def json_media(g: dict[str, object], name: str) -> tuple[str, dict[str, str]]:
    quoted = urllib.parse.quote(name, safe="")
    return f"{g['server'].url}/storage/v1/b/{BUCKET}/o/{quoted}?alt=media", dict(g["admin"])  # type: ignore[attr-defined,arg-type]


def json_download(g: dict[str, object], name: str) -> tuple[str, dict[str, str]]:
    quoted = urllib.parse.quote(name, safe="")
    return f"{g['server'].url}/download/storage/v1/b/{BUCKET}/o/{quoted}?alt=media", dict(g["admin"])  # type: ignore[attr-defined,arg-type]


ROUTES: dict[str, Callable[[dict[str, object], str], tuple[str, dict[str, str]]]] = {
    "v0-token": v0_token, "v0-credential": v0_credential, "v0-signed-url": v0_signed,
    "json-alt-media": json_media, "json-download": json_download,
}


def assert_isolated(response, what: str) -> None:  # type: ignore[no-untyped-def]
    csp = response.header("content-security-policy") or ""
    directives = [d.strip().split()[0].lower() for d in csp.split(";") if d.strip()]
    assert "sandbox" in directives, f"{what}: Content-Security-Policy {csp!r} has no sandbox"
    assert csp.lower().find("allow-scripts") < 0 and csp.lower().find("allow-same-origin") < 0, (what, csp)
    assert (response.header("x-content-type-options") or "").lower() == "nosniff", (what, response.headers)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("name", OBJECTS)
def test_every_byte_serving_response_is_sandboxed(gateway: dict[str, object], route: str, name: str) -> None:
    url, headers = ROUTES[route](gateway, name)
    body = OBJECTS[name][0]

    whole = http("GET", url, headers=headers)
    assert whole.status == 200 and whole.body == body, (whole.status, whole.body[:200])
    assert_isolated(whole, f"GET {route}")

    head = http("HEAD", url, headers=headers)
    assert head.status == 200 and head.header("content-length") == str(len(body)), head.status
    assert_isolated(head, f"HEAD {route}")

    ranged = http("GET", url, headers={**headers, "Range": "bytes=0-4"})
    assert ranged.status == 206 and ranged.body == body[:5], ranged.status
    assert_isolated(ranged, f"206 {route}")

    etag = whole.header("etag")
    assert etag
    unchanged = http("GET", url, headers={**headers, "If-None-Match": etag})
    assert unchanged.status == 304, unchanged.status
    assert_isolated(unchanged, f"304 {route}")


@pytest.mark.parametrize("route", ROUTES)
def test_a_stored_type_that_is_no_media_type_is_served_as_unknown_bytes(gateway: dict[str, object], route: str
                                                                        ) -> None:
    url, headers = ROUTES[route](gateway, "active/not-a-type")
    served = http("GET", url, headers=headers)
    assert served.status == 200 and served.header("content-type") == "application/octet-stream", served.headers
    quoted = urllib.parse.quote("active/not-a-type", safe="")
    meta = http("GET", f"{gateway['server'].url}/storage/v1/b/{BUCKET}/o/{quoted}", headers=gateway["admin"])  # type: ignore[attr-defined,arg-type]
    assert json.loads(meta.body)["contentType"] == "text/html x", meta.body


def test_error_bodies_are_json_and_not_sniffed(gateway: dict[str, object]) -> None:
    """A 404 echoes the object name and a 403 refuses an anonymous reader: JSON, never sniffed as HTML."""
    base = gateway["server"].url  # type: ignore[attr-defined]
    name = "<script>alert(1)</script>.html"
    quoted = urllib.parse.quote(name, safe="")
    for url, headers, status in (
        (object_url(base, BUCKET, name, alt="media"), gateway["admin"], 404),
        (object_url(base, BUCKET, "active/page.html", alt="media"), {}, 403),
        (object_url(base, BUCKET, "active/page.html", alt="media", token="wrong"), {}, 403),
        (f"{base}/storage/v1/b/{BUCKET}/o/{quoted}?alt=media", gateway["admin"], 404),
        (f"{base}/download/storage/v1/b/{BUCKET}/o/{quoted}?alt=media", gateway["admin"], 404),
        (f"{base}/no/such/route/{quoted}", {}, 404),
    ):
        response = http("GET", url, headers=headers)  # type: ignore[arg-type]
        assert response.status == status, (url, response.status)
        assert (response.header("content-type") or "").startswith("application/json"), (url, response.headers)
        assert (response.header("x-content-type-options") or "").lower() == "nosniff", (url, response.headers)
