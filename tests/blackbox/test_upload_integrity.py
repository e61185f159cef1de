"""Declared digests are checked on every JSON API upload path, as Cloud Storage checks them: a `md5Hash` or
`crc32c` in the upload's resource (multipart metadata, resumable start) or an `X-Goog-Hash: md5=…, crc32c=…`
header (media upload, resumable start, the resumable upload's final chunk) that does not match the bytes is a
400 with Cloud Storage's message, and nothing is stored: the name stays absent (or keeps its previous
generation). Matching digests are accepted and reported back in the resource. Each case runs on the embedded
backend, gs:// (fake-gcs-server), s3:// on moto and s3:// on Ceph RGW.
"""
from __future__ import annotations

import base64
import json
import secrets
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

import backends
from harness import Response, Server, allow_all_server, crc32c_b64, md5_b64, request

DATA = b"integrity: the bytes the client meant to send\n" * 50


WRONG_MD5 = md5_b64(b"something else")
WRONG_CRC = crc32c_b64(b"something else")


def _multipart_body(boundary: str, metadata: dict[str, str], data: bytes, line_break: bytes = b"\r\n",
                    media_type: str = "application/octet-stream") -> bytes:
    """A `multipart/related` upload body (the resource JSON, then `data`) whose every line break is `line_break`
    (LF alone: google-apitools, so gsutil, and gcsfs write those), including the one before the closing
    delimiter."""
    br, meta, b = line_break, json.dumps(metadata).encode(), boundary.encode()
    return (b"--" + b + br + b"Content-Type: application/json; charset=utf-8" + br + br + meta + br
            + b"--" + b + br + b"Content-Type: " + media_type.encode() + br + br + data + br
            + b"--" + b + b"--")


class Gateway:
    def __init__(self, server: Server, bucket: str) -> None:
        self.server = server
        self.bucket = bucket

    @property
    def url(self) -> str:
        return self.server.url

    def resource(self, name: str) -> dict | None:
        r = request("GET", f"{self.url}/storage/v1/b/{self.bucket}/o/{urllib.parse.quote(name, safe='')}")
        if r.status == 404:
            return None
        assert r.status == 200, (r.status, r.body[:300])
        return r.json()  # type: ignore[return-value]

    def media(self, name: str, headers: dict[str, str]) -> Response:
        query = urllib.parse.urlencode({"uploadType": "media", "name": name})
        return request("POST", f"{self.url}/upload/storage/v1/b/{self.bucket}/o?{query}", DATA,
                       {"Content-Type": "text/plain", **headers})

    def multipart(self, name: str, metadata: dict[str, str], headers: dict[str, str] | None = None) -> Response:
        boundary = "b" + secrets.token_hex(8)
        body = _multipart_body(boundary, {"name": name, **metadata}, DATA, media_type="text/plain")
        return request("POST", f"{self.url}/upload/storage/v1/b/{self.bucket}/o?uploadType=multipart", body,
                       {"Content-Type": f"multipart/related; boundary={boundary}", **(headers or {})})

    def resumable(self, name: str, metadata: dict[str, str], start_headers: dict[str, str] | None = None,
                  final_headers: dict[str, str] | None = None) -> Response:
        """Starts a session, sends the bytes in two chunks (the second with `final_headers`); the last answer."""
        started = request("POST", f"{self.url}/upload/storage/v1/b/{self.bucket}/o?uploadType=resumable",
                          json.dumps({"name": name, **metadata}).encode(),
                          {"Content-Type": "application/json", **(start_headers or {})})
        if started.status != 200:
            return started
        session = started.header("Location")
        assert session
        half = 256 * 1024 if len(DATA) > 256 * 1024 else len(DATA) // 2
        first = request("PUT", session, DATA[:half], {"Content-Range": f"bytes 0-{half - 1}/*"})
        assert first.status == 308, (first.status, first.body[:300])
        return request("PUT", session, DATA[half:],
                       {"Content-Range": f"bytes {half}-{len(DATA) - 1}/{len(DATA)}", **(final_headers or {})})


@pytest.fixture(scope="module", params=backends.params(), name="gateway")
def _gateway(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    backend = request.param
    workdir = tmp_path_factory.mktemp(f"integrity-{backend}")
    server = allow_all_server(workdir, f"integrity={backends.bucket_url(backend, workdir)}", f"integrity-{backend}")
    server.env = {**server.env, **backends.backend_env(backend)}
    server.start()
    yield Gateway(server, "integrity")
    server.stop(timeout=10)
    server.kill()


def _fresh() -> str:
    return f"integrity/{secrets.token_hex(6)}.txt"


def _refused(r: Response, algorithm: str, declared: str, actual: str) -> None:
    assert r.status == 400, (r.status, r.body[:300])
    error = r.json()["error"]  # type: ignore[index]
    assert error["code"] == 400
    assert error["message"] == f'Provided {algorithm} "{declared}" doesn\'t match calculated {algorithm} "{actual}".'


MD5 = ("MD5 hash", "md5", "md5Hash", WRONG_MD5, md5_b64(DATA))
CRC = ("CRC32C", "crc32c", "crc32c", WRONG_CRC, crc32c_b64(DATA))


@pytest.mark.parametrize("digest", [MD5, CRC], ids=["md5", "crc32c"])
def test_media_upload_with_a_wrong_header_digest_stores_nothing(gateway: Gateway, digest: tuple) -> None:
    algorithm, header_key, _, wrong, right = digest
    name = _fresh()
    _refused(gateway.media(name, {"X-Goog-Hash": f"{header_key}={wrong}"}), algorithm, wrong, right)
    assert gateway.resource(name) is None
    ok = gateway.media(name, {"X-Goog-Hash": f"md5={md5_b64(DATA)},crc32c={crc32c_b64(DATA)}"})
    assert ok.status == 200, ok.body[:300]
    assert ok.json()["md5Hash"] == md5_b64(DATA) and ok.json()["crc32c"] == crc32c_b64(DATA)  # type: ignore[index]


@pytest.mark.parametrize("digest", [MD5, CRC], ids=["md5", "crc32c"])
def test_multipart_upload_with_a_wrong_declared_digest_stores_nothing(gateway: Gateway, digest: tuple) -> None:
    algorithm, _, field, wrong, right = digest
    name = _fresh()
    _refused(gateway.multipart(name, {field: wrong}), algorithm, wrong, right)
    assert gateway.resource(name) is None
    ok = gateway.multipart(name, {field: right})
    assert ok.status == 200, ok.body[:300]
    assert ok.json()[field] == right  # type: ignore[index]


def test_a_refused_overwrite_keeps_the_previous_generation(gateway: Gateway) -> None:
    name = _fresh()
    first = gateway.multipart(name, {})
    assert first.status == 200, first.body[:300]
    _refused(gateway.multipart(name, {"crc32c": WRONG_CRC}), "CRC32C", WRONG_CRC, crc32c_b64(DATA))
    assert gateway.resource(name)["generation"] == first.json()["generation"]  # type: ignore[index]


@pytest.mark.parametrize("digest", [MD5, CRC], ids=["md5", "crc32c"])
def test_resumable_upload_with_a_wrong_digest_in_its_start_metadata_stores_nothing(
        gateway: Gateway, digest: tuple) -> None:
    algorithm, _, field, wrong, right = digest
    name = _fresh()
    _refused(gateway.resumable(name, {field: wrong}), algorithm, wrong, right)
    assert gateway.resource(name) is None


@pytest.mark.parametrize("digest", [MD5, CRC], ids=["md5", "crc32c"])
def test_resumable_upload_with_a_wrong_digest_on_its_final_chunk_stores_nothing(
        gateway: Gateway, digest: tuple) -> None:
    algorithm, header_key, _, wrong, right = digest
    name = _fresh()
    _refused(gateway.resumable(name, {}, final_headers={"X-Goog-Hash": f"{header_key}={wrong}"}),
             algorithm, wrong, right)
    assert gateway.resource(name) is None
    ok = gateway.resumable(name, {}, final_headers={"X-Goog-Hash": f"{header_key}={right}"})
    assert ok.status == 200, ok.body[:300]


@pytest.mark.parametrize("surface", ["jsonapi", "v0"])
@pytest.mark.parametrize("line_break", [b"\n", b"\r\n"], ids=["lf", "crlf"])
def test_multipart_content_ending_in_cr_is_stored_whole(gateway: Gateway, surface: str, line_break: bytes) -> None:
    """Content whose last byte is CR keeps it: with LF line breaks that CR is the object's, not the delimiter's
    (one gsutil composite-upload component in 256 ends in CR), and with CRLF ones the delimiter's own CR is
    still not stored."""
    name, boundary = _fresh(), "b" + secrets.token_hex(8)
    data = secrets.token_bytes(70_000) + b"\r"
    body = _multipart_body(boundary, {"name": name}, data, line_break)
    headers = {"Content-Type": f"multipart/related; boundary={boundary}"}
    if surface == "jsonapi":
        url = f"{gateway.url}/upload/storage/v1/b/{gateway.bucket}/o?uploadType=multipart"
    else:
        url = f"{gateway.url}/v0/b/{gateway.bucket}/o?name={urllib.parse.quote(name, safe='')}"
    r = request("POST", url, body, headers)
    assert r.status == 200, (r.status, r.body[:300])
    answered = r.json()
    assert int(answered["size"]) == len(data) and answered["md5Hash"] == md5_b64(data), answered  # type: ignore[index]
    stored = request("GET", f"{gateway.url}/storage/v1/b/{gateway.bucket}/o/{urllib.parse.quote(name, safe='')}"
                            "?alt=media")
    assert stored.status == 200 and stored.body == data, (stored.status, len(stored.body), len(data))


def _gateway_writing_if(tmp_path: Path, condition: str) -> Server:
    """A started gateway on the embedded backend whose rules allow every read, and writes when `condition`."""
    rules = tmp_path / "write-if.rules"
    rules.write_text("rules_version = '2';\nservice firebase.storage {\n  match /b/{bucket}/o {\n"
                     "    match /{all=**} {\n      allow read;\n"
                     f"      allow write: if {condition};\n"
                     "    }\n  }\n}\n")
    server = allow_all_server(tmp_path, f"integrity=file:{tmp_path / 'data'}", "integrity-rules")
    server.args[server.args.index("--rules") + 1] = str(rules)
    return server.start()


def test_a_size_rule_judges_an_lf_writers_upload_by_its_true_size(tmp_path: Path) -> None:
    """The early rules check estimates the size of a multipart upload from its Content-Length; for a writer
    whose line breaks are LF alone the framing is shorter, and an upload of exactly the least size a rule
    allows must not be refused before its bytes arrive."""
    least = 5000
    server = _gateway_writing_if(tmp_path, f"request.resource.size >= {least}")
    try:
        url = f"{server.url}/upload/storage/v1/b/integrity/o?uploadType=multipart"
        for size, status in [(least, 200), (least - 1, 403)]:
            boundary = "b" + secrets.token_hex(8)
            body = _multipart_body(boundary, {"name": _fresh()}, secrets.token_bytes(size), b"\n")
            r = request("POST", url, body, {"Content-Type": f"multipart/related; boundary={boundary}"})
            assert r.status == status, (size, r.status, r.body[:300])
    finally:
        server.stop(timeout=10)
        server.kill()


def test_a_malformed_declared_crc32c_is_refused_before_any_byte(gateway: Gateway) -> None:
    name = _fresh()
    r = gateway.multipart(name, {"crc32c": "not-base64!"})
    assert r.status == 400 and "crc32c" in r.json()["error"]["message"]  # type: ignore[index]
    assert gateway.resource(name) is None


def test_rules_see_a_declared_crc32c_at_the_head(tmp_path: Path) -> None:
    """The early rules check treats a declared CRC32C as known: a rule on `request.resource.crc32c` decides at
    the head (403 before any byte), and a matching declaration is allowed."""
    server = _gateway_writing_if(tmp_path, f"request.resource.crc32c == '{crc32c_b64(DATA)}'")
    try:
        g = Gateway(server, "integrity")
        denied = g.multipart(_fresh(), {"crc32c": WRONG_CRC})
        assert denied.status == 403, (denied.status, denied.body[:300])
        allowed = g.multipart(_fresh(), {"crc32c": crc32c_b64(DATA)})
        assert allowed.status == 200, allowed.body[:300]
    finally:
        server.stop(timeout=10)
        server.kill()
