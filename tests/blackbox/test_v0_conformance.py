"""v0 protocol conformance, driven from the outside the way the Firebase SDKs and curl talk to a server.

Each test sends the exact request shape a client sends (JS multipart, iOS resumable, pyrebase raw media, curl)
to a real `portcullis serve` and checks the reply against the protocol the README ("What it serves") and openapi/portcullis.yaml
describe. Hashes are computed here, independently of the server. Stdlib + `requests`.

Every server-backed test runs once per backend: `file` (embedded), `gcs` (`gs://` on fake-gcs-server,
when PC_FAKE_GCS_URL / STORAGE_EMULATOR_HOST is set), `s3` (`s3://` on moto, when PC_MOTO_URL / AWS_ENDPOINT_URL
is set) and `rgw` (`s3://` on Ceph's RADOS Gateway, a real S3 engine, when PC_RGW_* is set by `scripts/rgw.sh`:
every request shape below, odd names included, checked by a real SigV4 verifier).
`make test` starts the emulators (scripts/emulators.sh), so there all of them run; a local run without them
skips the upstream parameters with the reason. One server per backend per module (a fresh upstream bucket
each). The expectations are the same for every backend; the few differences are listed, with their reasons, in
BACKEND_QUIRKS and applied as strict xfails — a quirk that goes away fails the run until the entry is removed.
"""
from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
import secrets
import subprocess
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

import backends
from harness import ALLOW_ALL_RULES, Server, crc32c, crc32c_b64, portcullis_bin, signing_key_file
from harness import request as harness_request

BUCKET = "qa-bucket"
GRANULE = 262_144
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


# ---------------------------------------------------------------------------------------------------------------
# Independent checksums


def md5_b64(data: bytes) -> str:
    return base64.b64encode(hashlib.md5(data).digest()).decode()


def test_crc32c_reference_value() -> None:
    """The helper itself: the known vector crc32c("hello world") = yZRlqg== (decimal 3381945770)."""
    assert crc32c(b"hello world") == 3381945770
    assert crc32c_b64(b"hello world") == "yZRlqg=="


# ---------------------------------------------------------------------------------------------------------------
# Backends and servers

BACKENDS = ("file", "gcs", "s3", "rgw")

FAKE_GCS_METAGENERATION = ("fake-gcs-server quirk: PATCH does not bump metageneration (real GCS does; the gateway "
                           "answers the PATCH with metageneration+1, a later GET shows the emulator's unchanged value)")
FAKE_GCS_NULL_METADATA = ("fake-gcs-server quirk: PATCH metadata {\"k\": null} stores \"\" instead of removing the key "
                          "(real GCS removes it)")

# (test, backend) → why that backend cannot meet the shared expectation. `test` is a test function's name, or
# `name[param]` for one value of a test's own parameter. Applied as xfail(strict=True) by `_backend_quirk`:
# when the cause is fixed the test XPASSes, the run fails, and the entry must go.
# Not quirks but the object-name policy, the same on every backend: the whole names '.' and '..' are refused
# (400, nothing sent upstream; see test_dot_and_double_slash_names_are_just_names and test_identity_names.py).
BACKEND_QUIRKS: dict[tuple[str, str], str] = {
    ("test_patch_bumps_metageneration_every_time", "gcs"): FAKE_GCS_METAGENERATION,
    ("test_patch_null_custom_key_is_gone_on_get", "gcs"): FAKE_GCS_NULL_METADATA,
}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every test that (indirectly) uses `backend` runs once per backend; one whose emulator is absent skips."""
    if "backend" not in metafunc.fixturenames:
        return
    params = []
    for backend in BACKENDS:
        marks = []
        missing = backends.unavailable(backend)
        if missing:
            marks.append(pytest.mark.skip(reason=missing))
        params.append(pytest.param(backend, marks=marks, id=backend))
    metafunc.parametrize("backend", params, indirect=True, scope="module")


def test_backend_quirks_name_real_tests() -> None:
    """Every BACKEND_QUIRKS entry names an existing test and backend (a renamed test must not orphan it)."""
    for test, backend in BACKEND_QUIRKS:
        assert backend in BACKENDS, backend
        assert callable(globals().get(test.split("[", 1)[0])), test


@pytest.fixture(scope="module")
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(autouse=True)
def _backend_quirk(request: pytest.FixtureRequest) -> None:
    """Marks this (test, backend) pair xfail(strict=True) when BACKEND_QUIRKS lists it."""
    callspec = getattr(request.node, "callspec", None)
    if callspec is None or "backend" not in callspec.params:
        return
    backend = callspec.params["backend"]
    function = request.node.originalname
    own = "-".join(str(value) for key, value in callspec.params.items() if key != "backend")
    reason = BACKEND_QUIRKS.get((f"{function}[{own}]", backend)) or BACKEND_QUIRKS.get((function, backend))
    if reason:
        request.applymarker(pytest.mark.xfail(strict=True, reason=f"{backend}: {reason}"))


def _start(tmp: Path, rules: str, extra: list[str], backend: str = "file") -> Server:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "storage.rules").write_text(rules)
    key = tmp / "signing.key"
    signing_key_file(key, "k1")
    args = ["--bucket", f"{BUCKET}={backends.bucket_url(backend, tmp)}", "--rules", str(tmp / "storage.rules"),
            "--signing-key", str(key), *extra]
    env = backends.backend_env(backend)
    return Server(workdir=tmp, args=args, env=env, name=f"conformance-{backend}").start()


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Iterator[Server]:
    server = _start(tmp_path_factory.mktemp(f"open-{backend}"), ALLOW_ALL_RULES, [], backend)
    yield server
    server.stop(timeout=10)
    server.kill()


RULES_V2 = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /users/{uid}/{file=**} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
    match /images/{name} {
      allow read;
      allow write: if request.resource.size < 1024 && request.resource.contentType.matches('image/.*');
    }
    match /once/{name} {
      allow read;
      allow create: if resource == null;
    }
    match /hashed/{name} {
      allow read;
      allow create: if request.resource.md5Hash == request.resource.metadata.expectedMd5;
    }
    match /nonempty/{name} {
      allow read;
      allow create: if request.resource.size > 0;
    }
    match /lists/{uid}/{name} {
      allow read: if request.auth != null && request.auth.uid == uid;
    }
    match /meta/{name} {
      allow read, create;
      allow update: if request.resource.contentType == 'text/ok' && request.resource.size == resource.size;
      allow delete: if resource.size < 5;
    }
    match /private/{name} {
      allow read: if resource.metadata.public == 'yes';
      allow write;
    }
  }
}
"""

RULES_V1 = """service firebase.storage {
  match /b/{bucket}/o {
    match /{all=**} {
      allow read, write;
    }
  }
}
"""


class RulesServer:
    def __init__(self, server: Server, secret: Path, admin_key: str) -> None:
        self.server = server
        self.secret = secret
        self.admin_key = admin_key

    @property
    def url(self) -> str:
        return self.server.url

    def token(self, uid: str) -> str:
        out = subprocess.run([portcullis_bin(), "token", "--hmac-secret", str(self.secret), "--uid", uid],
                             check=True, capture_output=True, text=True)
        return out.stdout.strip()

    def auth(self, uid: str) -> dict[str, str]:
        return {"Authorization": f"Firebase {self.token(uid)}"}


@pytest.fixture(scope="module")
def rsrv(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Iterator[RulesServer]:
    tmp = tmp_path_factory.mktemp(f"rules-{backend}")
    secret = tmp / "hs.key"
    secret.write_text(base64.b64encode(secrets.token_bytes(32)).decode() + "\n")
    admin_key = secrets.token_hex(24)
    (tmp / "admin.key").write_text(admin_key + "\n")
    server = _start(tmp, RULES_V2, ["--jwt-hmac-secret", str(secret), "--admin-key", str(tmp / "admin.key")],
                    backend)
    yield RulesServer(server, secret, admin_key)
    server.stop(timeout=10)
    server.kill()


# ---------------------------------------------------------------------------------------------------------------
# Helpers


def enc(name: str) -> str:
    """encodeURIComponent, as the JS SDK encodes path segments."""
    return urllib.parse.quote(name, safe="-_.!~*'()")


def obj(base: str, name: str) -> str:
    return f"{base}/v0/b/{BUCKET}/o/{enc(name)}"


def coll(base: str) -> str:
    return f"{base}/v0/b/{BUCKET}/o"


def put_media(base: str, name: str, data: bytes, content_type: str | None = "application/octet-stream",
              headers: dict[str, str] | None = None) -> requests.Response:
    h = dict(headers or {})
    if content_type is not None:
        h["Content-Type"] = content_type
    return requests.post(coll(base), params={"name": name}, data=data, headers=h)


def js_multipart(base: str, name: str, data: bytes, metadata: dict[str, object] | None = None,
                 headers: dict[str, str] | None = None, content_type: str = "text/plain") -> requests.Response:
    """Exactly the JS SDK's multipart upload body: digits-only boundary, JSON part, bytes part,
    closing boundary without a trailing CRLF."""
    boundary = str(secrets.randbelow(10**10)) + str(secrets.randbelow(10**10))
    meta = {"name": name, "contentType": content_type, **(metadata or {})}
    body = (f"--{boundary}\r\nContent-Type: application/json; charset=utf-8\r\n\r\n{json.dumps(meta)}\r\n"
            f"--{boundary}\r\nContent-Type: {content_type}\r\n\r\n").encode() + data + f"\r\n--{boundary}--".encode()
    h = {"X-Goog-Upload-Protocol": "multipart", "Content-Type": f"multipart/related; boundary={boundary}",
         "X-Firebase-Storage-Version": "webjs/11.0.0", **(headers or {})}
    return requests.post(coll(base) + "?name=" + enc(name), data=body, headers=h)


def assert_error(resp: requests.Response, status: int) -> dict[str, object]:
    assert resp.status_code == status, (resp.status_code, resp.text)
    assert resp.headers.get("Content-Type", "").startswith("application/json"), resp.headers
    body = resp.json()
    assert set(body) == {"error"}, body
    assert body["error"]["code"] == status, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"], body
    return body["error"]


def ios_start(base: str, name: str, size: int, content_type: str = "application/octet-stream",
              headers: dict[str, str] | None = None, metadata: dict[str, object] | None = None) -> requests.Response:
    """iOS (GTMSessionUploadFetcher) start: uploadType=resumable, the X-Goog-Upload-Content-* spellings."""
    meta = {"bucket": "", "name": name, "contentType": content_type, "metadata": None, **(metadata or {})}
    h = {"X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start",
         "X-Goog-Upload-Content-Length": str(size), "X-Goog-Upload-Content-Type": content_type,
         "Content-Type": "application/json; charset=UTF-8", "x-firebase-storage-version": "ios/11.0.0",
         "User-Agent": "app (GTMSUF/1)", **(headers or {})}
    url = coll(base) + "?uploadType=resumable&name=" + urllib.parse.quote(name, safe="-._~!$'()*,=:@")
    return requests.post(url, data=json.dumps(meta).encode(), headers=h)


def js_start(base: str, name: str, size: int, content_type: str = "application/octet-stream",
             headers: dict[str, str] | None = None, metadata: dict[str, object] | None = None) -> requests.Response:
    meta = {"name": name, "contentType": content_type, **(metadata or {})}
    h = {"X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start",
         "X-Goog-Upload-Header-Content-Length": str(size), "X-Goog-Upload-Header-Content-Type": content_type,
         "Content-Type": "application/json; charset=utf-8", **(headers or {})}
    return requests.post(coll(base) + "?name=" + enc(name), data=json.dumps(meta).encode(), headers=h)


def chunk(url: str, data: bytes, offset: int, command: str = "upload", method: str = "PUT",
          headers: dict[str, str] | None = None) -> requests.Response:
    h = {"X-Goog-Upload-Command": command, "X-Goog-Upload-Offset": str(offset), **(headers or {})}
    return requests.request(method, url, data=data, headers=h)


def query(url: str) -> requests.Response:
    return requests.put(url, data=b"", headers={"X-Goog-Upload-Command": "query"})


def read(base: str, name: str, params: dict[str, str] | None = None, **kw: object) -> requests.Response:
    return requests.get(obj(base, name), params={"alt": "media", **(params or {})}, **kw)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------------------
# metadata JSON


def test_metadata_json_shape_matches_v0_section_4(srv: Server) -> None:
    data = b"hello world"
    up = put_media(srv.url, "meta/hello.txt", data, "text/plain")
    assert up.status_code == 200, up.text
    for meta in (up.json(), requests.get(obj(srv.url, "meta/hello.txt")).json()):
        assert meta["name"] == "meta/hello.txt" and meta["bucket"] == BUCKET
        for key in ("generation", "metageneration", "size"):
            assert isinstance(meta[key], str) and meta[key].isdigit(), (key, meta)
        assert meta["size"] == "11" and meta["metageneration"] == "1"
        assert TIMESTAMP.match(meta["timeCreated"]) and TIMESTAMP.match(meta["updated"]), meta
        assert meta["md5Hash"] == md5_b64(data) == "XrY7u+Ae7tCTyyK7j1rNww=="
        assert meta["crc32c"] == crc32c_b64(data)
        assert meta["contentEncoding"] == "identity"
        assert meta["contentDisposition"] == "inline"
        assert meta["contentType"] == "text/plain"
        assert isinstance(meta["downloadTokens"], str) and meta["downloadTokens"]
        assert "metadata" not in meta, meta
        assert "cacheControl" not in meta
        assert all(isinstance(v, str) for v in meta.values()), meta


def test_custom_metadata_is_a_string_map_and_present_when_set(srv: Server) -> None:
    r = js_multipart(srv.url, "meta/custom.txt", b"x", {"metadata": {"owner": "u1", "n": "7"}})
    assert r.status_code == 200, r.text
    assert r.json()["metadata"] == {"owner": "u1", "n": "7"}


def test_ios_upload_body_with_empty_bucket_and_null_metadata_is_accepted(srv: Server) -> None:
    data = b"i" * 10
    start = ios_start(srv.url, "meta/ios.bin", len(data))
    assert start.status_code == 200, start.text
    fin = chunk(start.headers["X-Goog-Upload-URL"], data, 0, "upload, finalize")
    assert fin.status_code == 200, fin.text
    meta = fin.json()
    assert meta["bucket"] == BUCKET and "metadata" not in meta and meta["md5Hash"] == md5_b64(data)


# ---------------------------------------------------------------------------------------------------------------
# downloads


@pytest.fixture(scope="module")
def blob(srv: Server) -> bytes:
    data = bytes(range(256)) * 40  # 10240 bytes
    assert put_media(srv.url, "dl/blob.bin", data).status_code == 200
    return data


def test_download_full_headers(srv: Server, blob: bytes) -> None:
    r = read(srv.url, "dl/blob.bin")
    assert r.status_code == 200 and r.content == blob
    assert r.headers["Accept-Ranges"] == "bytes"
    assert r.headers["Content-Length"] == str(len(blob))
    etag = r.headers["ETag"]
    assert etag.startswith('"') and etag.endswith('"') and not etag.startswith('W/'), etag
    hashes = dict(part.split("=", 1) for part in r.headers["x-goog-hash"].split(","))
    assert hashes == {"crc32c": crc32c_b64(blob), "md5": md5_b64(blob)}
    meta = requests.get(obj(srv.url, "dl/blob.bin")).json()
    assert r.headers["x-goog-generation"] == meta["generation"]


def test_download_range_206_and_suffix(srv: Server, blob: bytes) -> None:
    r = read(srv.url, "dl/blob.bin", headers={"Range": "bytes=10-19"})
    assert r.status_code == 206 and r.content == blob[10:20]
    assert r.headers["Content-Range"] == f"bytes 10-19/{len(blob)}"
    assert r.headers["Content-Length"] == "10"
    r = read(srv.url, "dl/blob.bin", headers={"Range": "bytes=-5"})
    assert r.status_code == 206 and r.content == blob[-5:]
    assert r.headers["Content-Range"] == f"bytes {len(blob) - 5}-{len(blob) - 1}/{len(blob)}"
    r = read(srv.url, "dl/blob.bin", headers={"Range": "bytes=10200-"})
    assert r.status_code == 206 and r.content == blob[10200:]
    # JS getBytes(max): bytes=0-max with max beyond the end → the whole object (200 or 206 both fine for JS).
    r = read(srv.url, "dl/blob.bin", headers={"Range": "bytes=0-999999"})
    assert r.status_code in (200, 206) and r.content == blob


def test_download_unsatisfiable_range_416(srv: Server, blob: bytes) -> None:
    r = read(srv.url, "dl/blob.bin", headers={"Range": "bytes=20000-20010"})
    assert r.status_code == 416, r.status_code
    assert r.headers["Content-Range"] == f"bytes */{len(blob)}"


def test_download_range_on_empty_object_is_not_416(srv: Server) -> None:
    """JS getBytes(ref, N) sends bytes=0-N; on a zero-length object that must not be 416."""
    assert put_media(srv.url, "dl/empty", b"").status_code == 200
    r = read(srv.url, "dl/empty", headers={"Range": "bytes=0-100"})
    assert r.status_code == 200 and r.content == b""
    assert r.headers["Content-Length"] == "0"


def test_download_conditional_requests(srv: Server, blob: bytes) -> None:
    etag = read(srv.url, "dl/blob.bin").headers["ETag"]
    r = read(srv.url, "dl/blob.bin", headers={"If-None-Match": etag})
    assert r.status_code == 304 and r.content == b""
    r = read(srv.url, "dl/blob.bin", headers={"Range": "bytes=0-9", "If-Range": etag})
    assert r.status_code == 206 and r.content == blob[:10]
    r = read(srv.url, "dl/blob.bin", headers={"Range": "bytes=0-9", "If-Range": '"stale"'})
    assert r.status_code == 200 and r.content == blob


def test_download_content_disposition_rfc8187(srv: Server) -> None:
    name = "dl/folder/naïve café €.txt"
    assert put_media(srv.url, name, b"x", "text/plain").status_code == 200
    r = read(srv.url, name)
    cd = r.headers["Content-Disposition"]
    last = "naïve café €.txt"
    assert f"filename*=UTF-8''{urllib.parse.quote(last, safe='')}" in cd.replace("utf-8''", "UTF-8''"), cd
    assert "folder" not in cd, cd
    assert cd.startswith("inline"), cd


def test_head_matches_get_without_body(srv: Server, blob: bytes) -> None:
    r = requests.head(obj(srv.url, "dl/blob.bin"), params={"alt": "media"})
    assert r.status_code == 200 and r.content == b""
    assert r.headers["Content-Length"] == str(len(blob))
    r = requests.head(obj(srv.url, "dl/nope"), params={"alt": "media"})
    assert r.status_code == 404 and r.content == b""


def test_download_missing_object_404_json(srv: Server) -> None:
    assert_error(read(srv.url, "dl/does-not-exist"), 404)
    assert_error(requests.get(obj(srv.url, "dl/does-not-exist")), 404)


# ---------------------------------------------------------------------------------------------------------------
# object names


def test_percent_decoded_exactly_once(srv: Server) -> None:
    url = f"{srv.url}/v0/b/{BUCKET}/o/names%2F%2541"
    assert requests.post(url, data=b"pct", headers={"Content-Type": "text/plain"}).status_code == 200
    meta = requests.get(url).json()
    assert meta["name"] == "names/%41"
    assert requests.get(obj(srv.url, "names/A")).status_code == 404


def test_plus_in_path_is_a_plus_and_in_query_is_a_space(srv: Server) -> None:
    assert requests.post(f"{srv.url}/v0/b/{BUCKET}/o/names%2Fa+b", data=b"p").json()["name"] == "names/a+b"
    assert requests.post(coll(srv.url) + "?name=names%2Fc+d", data=b"p").json()["name"] == "names/c d"
    assert requests.post(coll(srv.url) + "?name=names%2Fe%2Bf", data=b"p").json()["name"] == "names/e+f"


def test_raw_slashes_after_o_accepted(srv: Server) -> None:
    assert put_media(srv.url, "names/raw/slash.txt", b"r").status_code == 200
    r = requests.get(f"{srv.url}/v0/b/{BUCKET}/o/names/raw/slash.txt", params={"alt": "media"})
    assert r.status_code == 200 and r.content == b"r"


@pytest.mark.parametrize("name", ["names/../x", "names/./x", "names//x", "..", ".", "names/x/"])
def test_dot_and_double_slash_names_are_just_names(srv: Server, backend: str, name: str) -> None:
    data = name.encode()
    up = put_media(srv.url, name, data)
    if name in (".", ".."):
        # The object-name policy refuses these two whole names on every backend (GCS cannot store them: they
        # would be path segments in its JSON API): a clear 400 for writes and reads — never another resource.
        assert_error(up, 400)
        assert_error(requests.get(f"{srv.url}/v0/b/{BUCKET}/o/" + enc(name).replace(".", "%2E")), 400)
        return
    assert up.status_code == 200, up.text
    assert up.json()["name"] == name
    # `requests` (like browsers) removes literal dot segments from a URL path, so dots go out as %2E here;
    # the raw form is checked through http.client, which sends the path untouched.
    dotted = f"{srv.url}/v0/b/{BUCKET}/o/" + enc(name).replace(".", "%2E")
    assert requests.get(dotted, params={"alt": "media"}).content == data
    raw = harness_request("GET", f"{srv.url}/v0/b/{BUCKET}/o/{enc(name)}?alt=media")
    assert raw.status == 200 and raw.body == data, (raw.status, raw.body)
    # They did not collide with a normalised name (what RFC 3986 dot-segment removal would make of them).
    normalised = {"names/../x": "x", "names/./x": "names/x"}.get(name)
    if normalised:
        assert read(srv.url, normalised).status_code == 404


def test_name_length_limit(srv: Server) -> None:
    ok = "n/" + "a" * 1022
    assert len(ok.encode()) == 1024
    assert put_media(srv.url, ok, b"1").status_code == 200
    assert requests.get(obj(srv.url, ok)).json()["name"] == ok
    assert_error(put_media(srv.url, ok + "b", b"1"), 400)
    assert_error(requests.get(obj(srv.url, ok + "b")), 400)
    # Multibyte: 341 × "€" (3 bytes) + "n/" = 1025 bytes.
    assert_error(put_media(srv.url, "n/" + "€" * 341, b"1"), 400)


def test_name_with_newline_rejected(srv: Server) -> None:
    assert_error(put_media(srv.url, "names/bad\nname", b"1"), 400)


# ---------------------------------------------------------------------------------------------------------------
# list


def list_(base: str, prefix: str = "", headers: dict[str, str] | None = None, **params: object
          ) -> requests.Response:
    return requests.get(coll(base), params={"prefix": prefix, "delimiter": "/", **params}, headers=headers)


def test_list_filters_invalid_names_like_production(srv: Server) -> None:
    for name in ("listAll/abc/", "listAll//foo", "listAll/bar//", "listAll/baz//qux"):
        assert put_media(srv.url, name, b"x").status_code == 200, name
    r = list_(srv.url, "listAll/")
    assert r.status_code == 200
    body = r.json()
    assert sorted(body["prefixes"]) == ["listAll/abc/", "listAll/bar/", "listAll/baz/"], body
    assert body["items"] == [] and "nextPageToken" not in body
    body = list_(srv.url, "listAll/abc/").json()
    assert body == {"prefixes": [], "items": []}, body
    body = list_(srv.url, "listAll/bar/").json()
    assert body == {"prefixes": [], "items": []}, body


def test_list_empty_has_both_arrays(srv: Server) -> None:
    assert list_(srv.url, "nothing-here/").json() == {"prefixes": [], "items": []}


def test_list_items_are_name_and_bucket_only(srv: Server) -> None:
    put_media(srv.url, "shape/a.txt", b"a")
    body = list_(srv.url, "shape/").json()
    assert body["items"] == [{"name": "shape/a.txt", "bucket": BUCKET}]


def test_list_pagination_is_one_stream(srv: Server) -> None:
    names = [f"page/f{i:02d}" for i in range(7)] + [f"page/d{i}/x" for i in range(5)] + ["page/d0/y", "page/d3/z"]
    for name in names:
        assert put_media(srv.url, name, b"x").status_code == 200
    seen_items: list[str] = []
    seen_prefixes: list[str] = []
    token = None
    pages = 0
    while True:
        params: dict[str, object] = {"maxResults": 3}
        if token:
            params["pageToken"] = token
        body = list_(srv.url, "page/", **params).json()
        pages += 1
        assert len(body["items"]) + len(body["prefixes"]) <= 3
        seen_items += [i["name"] for i in body["items"]]
        seen_prefixes += body["prefixes"]
        token = body.get("nextPageToken")
        if token is None:
            break
        assert token != ""
        assert pages < 20
    assert sorted(seen_items) == [f"page/f{i:02d}" for i in range(7)]
    assert seen_prefixes == sorted(set(seen_prefixes)) == [f"page/d{i}/" for i in range(5)]
    assert pages == 4  # 12 entries / 3


def test_list_parameter_errors(srv: Server) -> None:
    for bad in ("0", "1001", "-1", "abc"):
        assert_error(list_(srv.url, "page/", maxResults=bad), 400)
    assert list_(srv.url, "page/", maxResults=1000).status_code == 200
    err = assert_error(list_(srv.url, "page"), 400)
    assert err["message"] == "The prefix parameter is required to be empty or ends with a single / character."
    token = list_(srv.url, "page/", maxResults=2).json()["nextPageToken"]
    tampered = token[:-2] + ("A" if token[-2] != "A" else "B") + token[-1]
    assert_error(list_(srv.url, "page/", maxResults=2, pageToken=tampered), 400)
    assert_error(list_(srv.url, "listAll/", maxResults=2, pageToken=token), 400)


def test_list_root_without_prefix_ios_style(srv: Server) -> None:
    r = requests.get(coll(srv.url), params={"delimiter": "/"})
    assert r.status_code == 200
    assert "page/" in r.json()["prefixes"]


# ---------------------------------------------------------------------------------------------------------------
# PATCH, DELETE


def test_patch_semantics(srv: Server) -> None:
    up = js_multipart(srv.url, "patch/a.txt", b"data", {"metadata": {"k1": "v1", "k2": "v2"},
                                                         "cacheControl": "max-age=60"})
    assert up.status_code == 200, up.text
    first = up.json()
    token0 = first["downloadTokens"]
    r = requests.patch(obj(srv.url, "patch/a.txt"), json={
        "bucket": "", "contentLanguage": "en", "cacheControl": None,
        "metadata": {"k1": None, "k3": "v3", "firebaseStorageDownloadTokens": "tok-a,tok-b"}},
        headers={"Content-Type": "application/json; charset=utf-8"})
    assert r.status_code == 200, r.text
    meta = r.json()
    assert meta["contentLanguage"] == "en" and "cacheControl" not in meta
    assert meta["metadata"] == {"k2": "v2", "k3": "v3"}
    # Download tokens are the server's: an end user's patch does not choose them (the admin's does —
    # test_capability_bounds.py).
    assert meta["downloadTokens"].split(",") == [token0]
    assert meta["generation"] == first["generation"] and meta["md5Hash"] == first["md5Hash"]
    # contentEncoding null → reported as identity; metadata null → key gone.
    r = requests.patch(obj(srv.url, "patch/a.txt"), json={"contentEncoding": None, "metadata": None})
    assert r.status_code == 200
    assert r.json()["contentEncoding"] == "identity" and "metadata" not in r.json()
    # Android: PUT + X-HTTP-Method-Override.
    r = requests.put(obj(srv.url, "patch/a.txt"), json={"contentType": "text/x-test"},
                     headers={"X-HTTP-Method-Override": "PATCH"})
    assert r.status_code == 200 and r.json()["contentType"] == "text/x-test"
    assert requests.get(obj(srv.url, "patch/a.txt")).json()["contentType"] == "text/x-test"


def test_patch_bumps_metageneration_every_time(srv: Server) -> None:
    """Every PATCH (an empty one and the Android PUT override too) bumps metageneration by one, keeps the
    generation, and a GET afterwards reports what the PATCH answered."""
    first = put_media(srv.url, "patch/mg.txt", b"data").json()
    assert first["metageneration"] == "1"
    patches = [({"contentLanguage": "en"}, {}), ({"metadata": {"k": "v"}}, {}), ({}, {}),
               ({"contentType": "text/x-test"}, {"X-HTTP-Method-Override": "PATCH"})]
    for expected, (body, override) in enumerate(patches, start=2):
        send = requests.put if override else requests.patch
        r = send(obj(srv.url, "patch/mg.txt"), json=body, headers=override)
        assert r.status_code == 200, r.text
        assert r.json()["metageneration"] == str(expected) and r.json()["generation"] == first["generation"]
        got = requests.get(obj(srv.url, "patch/mg.txt")).json()
        assert got["metageneration"] == str(expected), (expected, got)


def test_patch_null_custom_key_is_gone_on_get(srv: Server) -> None:
    """A null custom-metadata value deletes the key — in the answer and for later readers."""
    up = js_multipart(srv.url, "patch/null.txt", b"x", {"metadata": {"keep": "1", "drop": "2"}})
    assert up.status_code == 200, up.text
    r = requests.patch(obj(srv.url, "patch/null.txt"), json={"metadata": {"drop": None}})
    assert r.status_code == 200 and r.json()["metadata"] == {"keep": "1"}, r.text
    assert requests.get(obj(srv.url, "patch/null.txt")).json()["metadata"] == {"keep": "1"}
    r = requests.patch(obj(srv.url, "patch/null.txt"), json={"metadata": None})
    assert r.status_code == 200 and "metadata" not in r.json(), r.text
    assert "metadata" not in requests.get(obj(srv.url, "patch/null.txt")).json()


def test_patch_bad_bodies(srv: Server) -> None:
    put_media(srv.url, "patch/b.txt", b"x")
    assert_error(requests.patch(obj(srv.url, "patch/b.txt"), data=b"{not json",
                                headers={"Content-Type": "application/json"}), 400)
    assert_error(requests.patch(obj(srv.url, "patch/b.txt"), json=["x"]), 400)
    assert_error(requests.patch(obj(srv.url, "patch/missing.txt"), json={}), 404)


def test_patch_precondition_412(srv: Server) -> None:
    put_media(srv.url, "patch/c.txt", b"x")
    r = requests.patch(obj(srv.url, "patch/c.txt"), params={"ifMetagenerationMatch": "7"}, json={})
    assert_error(r, 412)


def test_delete_204_then_404(srv: Server) -> None:
    put_media(srv.url, "del/a.txt", b"x")
    r = requests.delete(obj(srv.url, "del/a.txt"))
    assert r.status_code == 204 and r.content == b""
    assert_error(requests.delete(obj(srv.url, "del/a.txt")), 404)
    assert_error(requests.get(obj(srv.url, "del/a.txt")), 404)


# ---------------------------------------------------------------------------------------------------------------
# Uploads


def test_js_multipart_upload_exact_shape(srv: Server) -> None:
    data = bytes(range(256)) * 3 + b"\r\n--tail"
    r = js_multipart(srv.url, "up/js.bin", data, {"metadata": {"a": "b"}}, content_type="application/x-thing")
    assert r.status_code == 200, r.text
    meta = r.json()
    assert meta["size"] == str(len(data)) and meta["md5Hash"] == md5_b64(data)
    assert meta["contentType"] == "application/x-thing"
    assert read(srv.url, "up/js.bin").content == data


def test_multipart_with_trailing_crlf_and_quoted_boundary(srv: Server) -> None:
    data = b"payload"
    body = (b'--XyZ\r\nContent-Type: application/json\r\n\r\n{"contentType":"text/plain"}\r\n'
            b"--XyZ\r\nContent-Type: text/plain\r\n\r\n" + data + b"\r\n--XyZ--\r\n")
    r = requests.post(coll(srv.url) + "?name=up/quoted.txt", data=body,
                      headers={"Content-Type": 'multipart/related; boundary="XyZ"'})
    assert r.status_code == 200, r.text
    assert r.json()["md5Hash"] == md5_b64(data)


def test_multipart_md5_mismatch_is_400_and_no_object(srv: Server) -> None:
    r = js_multipart(srv.url, "up/badmd5.bin", b"abc", {"md5Hash": md5_b64(b"abd")})
    assert_error(r, 400)
    assert_error(requests.get(obj(srv.url, "up/badmd5.bin")), 404)
    r = js_multipart(srv.url, "up/goodmd5.bin", b"abc", {"md5Hash": md5_b64(b"abc")})
    assert r.status_code == 200


def test_pyrebase_raw_upload(srv: Server) -> None:
    """pyrebase4 Storage.put: raw body, no Content-Type, unencoded name in ?name=."""
    data = b"pyrebase bytes"
    r = requests.post(f"{srv.url}/v0/b/{BUCKET}/o?name=py/dir/file.txt", data=data)
    assert r.status_code == 200, r.text
    meta = r.json()
    assert meta["name"] == "py/dir/file.txt" and meta["contentType"] == "application/octet-stream"
    url = f"{srv.url}/v0/b/{BUCKET}/o/{enc(meta['name'])}?alt=media&token={meta['downloadTokens']}"
    assert requests.get(url).content == data


def test_ios_resumable_upload(srv: Server) -> None:
    data = secrets.token_bytes(3 * GRANULE + 1234)
    start = ios_start(srv.url, "up/ios file.bin", len(data))
    assert start.status_code == 200, start.text
    assert start.headers["X-Goog-Upload-Status"] == "active"
    assert start.headers["X-Goog-Upload-Chunk-Granularity"] == str(GRANULE)
    url = start.headers["X-Goog-Upload-URL"]
    assert url.startswith(srv.url + "/v0/b/")
    # PUT chunks, no Authorization, chunk = 2 granules.
    r = chunk(url, data[:2 * GRANULE], 0)
    assert r.status_code == 200 and r.headers["X-Goog-Upload-Status"] == "active"
    assert r.headers["X-Goog-Upload-Size-Received"] == str(2 * GRANULE)
    q = query(url)
    assert q.status_code == 200 and q.headers["X-Goog-Upload-Size-Received"] == str(2 * GRANULE)
    assert q.headers["X-Goog-Upload-Status"] == "active"
    # Final chunk is not a granularity multiple.
    r = chunk(url, data[2 * GRANULE:], 2 * GRANULE, "upload, finalize",
              headers={"X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Content-Length": str(len(data))})
    assert r.status_code == 200, r.text
    assert r.headers["X-Goog-Upload-Status"] == "final"
    meta = r.json()
    assert meta["name"] == "up/ios file.bin" and meta["size"] == str(len(data)) and meta["md5Hash"] == md5_b64(data)
    assert meta["crc32c"] == crc32c_b64(data)
    assert read(srv.url, "up/ios file.bin").content == data
    # Repeated finalize replays the metadata; query says final.
    again = chunk(url, b"", len(data), "finalize")
    assert again.status_code == 200 and again.headers["X-Goog-Upload-Status"] == "final"
    assert again.json()["generation"] == meta["generation"]
    q = query(url)
    assert q.headers["X-Goog-Upload-Status"] == "final" and q.headers["X-Goog-Upload-Size-Received"] == str(len(data))


def test_resumable_wrong_offset_reports_current_size_and_appends_nothing(srv: Server) -> None:
    data = secrets.token_bytes(2 * GRANULE)
    url = js_start(srv.url, "up/offset.bin", len(data)).headers["X-Goog-Upload-URL"]
    assert chunk(url, data[:GRANULE], 0, method="POST").status_code == 200
    bad = chunk(url, data[GRANULE:], GRANULE + 10, method="POST")
    assert 400 <= bad.status_code < 500
    assert bad.headers.get("X-Goog-Upload-Size-Received") == str(GRANULE), bad.headers
    assert bad.headers.get("X-Goog-Upload-Status") == "active"
    # Re-sending the first chunk (offset 0, already stored) must not duplicate it either.
    again = chunk(url, data[:GRANULE], 0, method="POST")
    assert 400 <= again.status_code < 500 and again.headers.get("X-Goog-Upload-Size-Received") == str(GRANULE)
    assert query(url).headers["X-Goog-Upload-Size-Received"] == str(GRANULE)
    fin = chunk(url, data[GRANULE:], GRANULE, "upload, finalize", method="POST")
    assert fin.status_code == 200 and fin.json()["md5Hash"] == md5_b64(data)


def test_resumable_query_after_failure_then_resume(srv: Server) -> None:
    """iOS: a chunk fails mid-way (connection dropped) → query → resume at the reported granule offset."""
    data = secrets.token_bytes(2 * GRANULE + 100)
    url = ios_start(srv.url, "up/resume.bin", len(data)).headers["X-Goog-Upload-URL"]
    assert chunk(url, data[:GRANULE], 0).status_code == 200
    # A chunk whose declared length exceeds what is sent: the server sees a truncated body.
    import socket
    parts = urllib.parse.urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port)) as s:
        head = (f"PUT {parts.path}?{parts.query} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                f"X-Goog-Upload-Command: upload\r\nX-Goog-Upload-Offset: {GRANULE}\r\n"
                f"Content-Length: {GRANULE}\r\n\r\n").encode()
        s.sendall(head + data[GRANULE:GRANULE + 5000])
    received = None
    for _ in range(200):
        q = query(url)
        assert q.status_code == 200 and q.headers["X-Goog-Upload-Status"] == "active"
        received = int(q.headers["X-Goog-Upload-Size-Received"])
        if received == GRANULE:
            break
    assert received is not None and received % GRANULE == 0, received
    # The dropped request may still be winding down on the server: resume from whatever it reports.
    for _ in range(50):
        fin = chunk(url, data[received:], received, "upload, finalize")
        if fin.status_code == 200:
            break
        assert fin.headers.get("X-Goog-Upload-Status") == "active", fin.text
        received = int(query(url).headers["X-Goog-Upload-Size-Received"])
        assert received % GRANULE == 0
    assert fin.status_code == 200, fin.text
    assert fin.json()["md5Hash"] == md5_b64(data)


def test_resumable_cancel_then_finalize_400(srv: Server) -> None:
    url = ios_start(srv.url, "up/cancel.bin", 10).headers["X-Goog-Upload-URL"]
    c = requests.put(url, headers={"X-Goog-Upload-Command": "cancel"})
    assert c.status_code == 200
    assert query(url).headers["X-Goog-Upload-Status"] == "cancelled"
    assert_error(chunk(url, b"0123456789", 0, "upload, finalize"), 400)
    assert_error(chunk(url, b"", 0, "finalize"), 400)
    assert_error(requests.get(obj(srv.url, "up/cancel.bin")), 404)


def test_resumable_md5_mismatch_no_object(srv: Server) -> None:
    data = b"resumable-md5"
    url = js_start(srv.url, "up/rmd5.bin", len(data), metadata={"md5Hash": md5_b64(b"other")}).headers[
        "X-Goog-Upload-URL"]
    r = chunk(url, data, 0, "upload, finalize", method="POST")
    assert_error(r, 400)
    assert_error(requests.get(obj(srv.url, "up/rmd5.bin")), 404)


def test_resumable_size_mismatch_at_finalize(srv: Server) -> None:
    url = js_start(srv.url, "up/short.bin", 100).headers["X-Goog-Upload-URL"]
    r = chunk(url, b"x" * 50, 0, "upload, finalize", method="POST")
    assert 400 <= r.status_code < 500
    assert_error(requests.get(obj(srv.url, "up/short.bin")), 404)


def test_resumable_bad_upload_ids(srv: Server) -> None:
    url = js_start(srv.url, "up/ids.bin", 1).headers["X-Goog-Upload-URL"]
    tampered = re.sub(r"upload_id=([^&]+)", lambda m: "upload_id=" + m.group(1)[:-3] + "AAA", url)
    assert_error(query(tampered), 404)
    assert_error(requests.put(coll(srv.url), headers={"X-Goog-Upload-Command": "query"}), 400)
    assert_error(requests.post(url, headers={}), 400)  # no command


def test_resumable_zero_byte_upload_with_bare_finalize(srv: Server) -> None:
    url = js_start(srv.url, "up/zero.bin", 0).headers["X-Goog-Upload-URL"]
    r = requests.post(url, headers={"X-Goog-Upload-Command": "finalize", "X-Goog-Upload-Offset": "0"})
    assert r.status_code == 200, r.text
    assert r.json()["size"] == "0" and r.json()["md5Hash"] == md5_b64(b"")


def test_overwrite_creates_new_generation_and_token(srv: Server) -> None:
    a = put_media(srv.url, "up/over.bin", b"one").json()
    b = put_media(srv.url, "up/over.bin", b"two").json()
    assert int(b["generation"]) > int(a["generation"]) and b["metageneration"] == "1"
    assert b["downloadTokens"] != a["downloadTokens"]
    assert read(srv.url, "up/over.bin", params={"alt": "media", "token": a["downloadTokens"]}).status_code in (
        200, 403)  # allow-all rules: the stale token simply falls back to rules


# ---------------------------------------------------------------------------------------------------------------
# CORS


def test_cors_preflight_and_exposed_headers(srv: Server) -> None:
    origin = "http://localhost:5173"
    r = requests.options(coll(srv.url), headers={
        "Origin": origin, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,x-firebase-appcheck,x-firebase-storage-version,"
                                          "x-goog-upload-protocol,x-goog-upload-command,"
                                          "x-goog-upload-header-content-length,x-goog-upload-header-content-type,"
                                          "content-type,range"})
    assert r.status_code in (200, 204)
    assert r.headers["Access-Control-Allow-Origin"] == origin
    allowed_methods = {m.strip().upper() for m in r.headers["Access-Control-Allow-Methods"].split(",")}
    assert {"GET", "POST", "PUT", "DELETE"} <= allowed_methods
    allowed = {h.strip().lower() for h in r.headers["Access-Control-Allow-Headers"].split(",")}
    for h in ("authorization", "x-firebase-appcheck", "x-firebase-storage-version", "x-goog-upload-protocol",
              "x-goog-upload-command", "x-goog-upload-header-content-length", "content-type", "range"):
        assert h in allowed or "*" in allowed, (h, allowed)
    r = requests.options(obj(srv.url, "a"), headers={"Origin": origin, "Access-Control-Request-Method": "PATCH"})
    assert "PATCH" in r.headers["Access-Control-Allow-Methods"].upper()
    r = requests.options(obj(srv.url, "a"), headers={"Origin": origin, "Access-Control-Request-Method": "GET",
                                                      "Access-Control-Request-Private-Network": "true"})
    assert r.headers.get("Access-Control-Allow-Private-Network") == "true"
    start = js_start(srv.url, "cors/up.bin", 1, headers={"Origin": origin})
    assert start.headers["Access-Control-Allow-Origin"] == origin
    exposed = {h.strip().lower() for h in start.headers["Access-Control-Expose-Headers"].split(",")}
    for h in ("x-goog-upload-status", "x-goog-upload-url", "x-goog-upload-size-received",
              "x-goog-upload-chunk-granularity", "content-type", "x-firebase-storage-version",
              "x-goog-upload-command", "x-gupload-uploadid", "x-goog-upload-header-content-length",
              "x-goog-upload-header-content-type", "x-goog-upload-protocol", "x-goog-upload-control-url"):
        assert h in exposed, (h, exposed)


# ---------------------------------------------------------------------------------------------------------------
# errors


def test_error_shapes(srv: Server) -> None:
    assert_error(requests.get(f"{srv.url}/v0/b/no-such-bucket/o/x"), 404)
    bad = harness_request("GET", f"{srv.url}/v0/b/{BUCKET}/o/x%ZZ")  # requests would re-encode the %
    assert bad.status == 400 and json.loads(bad.body)["error"]["code"] == 400, bad
    assert_error(requests.request("TRACE", obj(srv.url, "x")), 405)
    assert_error(requests.get(obj(srv.url, "x"), params={"alt": "weird"}), 400)
    assert_error(requests.post(coll(srv.url), data=b"x"), 400)  # no name


# ---------------------------------------------------------------------------------------------------------------
# Rules integration


def test_rules_owner_folder(rsrv: RulesServer) -> None:
    alice = rsrv.auth("alice")
    bob = rsrv.auth("bob")
    assert put_media(rsrv.url, "users/alice/a.txt", b"a", headers=alice).status_code == 200
    assert_error(put_media(rsrv.url, "users/alice/b.txt", b"a", headers=bob), 403)
    assert_error(put_media(rsrv.url, "users/alice/c.txt", b"a"), 403)  # anonymous
    assert read(rsrv.url, "users/alice/a.txt", headers=alice).content == b"a"
    err = assert_error(read(rsrv.url, "users/alice/a.txt", headers=bob), 403)
    assert err["message"] == "Permission denied. No READ permission."
    # Anonymous read denied; denial of a missing object is 403 (rules before existence).
    assert_error(read(rsrv.url, "users/alice/a.txt"), 403)
    assert_error(read(rsrv.url, "users/alice/missing.txt", headers=bob), 403)
    assert_error(read(rsrv.url, "users/alice/missing.txt", headers=alice), 404)
    assert_error(requests.delete(obj(rsrv.url, "users/alice/a.txt"), headers=bob), 403)


def test_rules_size_and_content_type(rsrv: RulesServer) -> None:
    assert put_media(rsrv.url, "images/ok.png", b"p" * 100, "image/png").status_code == 200
    assert_error(put_media(rsrv.url, "images/big.png", b"p" * 2000, "image/png"), 403)
    assert_error(put_media(rsrv.url, "images/doc.pdf", b"p", "application/pdf"), 403)
    assert_error(js_multipart(rsrv.url, "images/big2.png", b"p" * 2000, content_type="image/png"), 403)
    assert js_multipart(rsrv.url, "images/ok2.png", b"p" * 10, content_type="image/png").status_code == 200
    assert_error(requests.get(obj(rsrv.url, "images/big.png")), 404)
    # Resumable: a declared size over the limit, and a finalize whose true size is over it.
    r = js_start(rsrv.url, "images/r.png", 5000, "image/png")
    if r.status_code == 200:
        fin = chunk(r.headers["X-Goog-Upload-URL"], b"p" * 5000, 0, "upload, finalize", method="POST")
        assert_error(fin, 403)
    else:
        assert_error(r, 403)
    assert_error(requests.get(obj(rsrv.url, "images/r.png")), 404)


def test_rules_overwrite_is_create_with_existing_resource(rsrv: RulesServer) -> None:
    assert put_media(rsrv.url, "once/a.txt", b"1").status_code == 200
    err = assert_error(put_media(rsrv.url, "once/a.txt", b"2"), 403)
    assert err["message"] == "Permission denied. No WRITE permission."
    assert_error(js_multipart(rsrv.url, "once/a.txt", b"3"), 403)
    assert read(rsrv.url, "once/a.txt").content == b"1"
    # No update grant → PATCH denied.
    assert_error(requests.patch(obj(rsrv.url, "once/a.txt"), json={"contentType": "x/y"}), 403)


def test_rules_reading_md5_are_judged_on_true_hash(rsrv: RulesServer) -> None:
    """A rule on request.resource.md5Hash must be judged with the bytes' real hash (final check), not denied
    by an early check that does not know the hash yet."""
    data = b"hash me"
    good = {"metadata": {"expectedMd5": md5_b64(data)}}
    r = js_multipart(rsrv.url, "hashed/a.bin", data, good)
    assert r.status_code == 200, r.text
    url = js_start(rsrv.url, "hashed/b.bin", len(data), metadata=good).headers["X-Goog-Upload-URL"]
    assert chunk(url, data, 0, "upload, finalize", method="POST").status_code == 200
    assert_error(js_multipart(rsrv.url, "hashed/c.bin", b"other", good), 403)
    assert_error(requests.get(obj(rsrv.url, "hashed/c.bin")), 404)


def test_rules_unknown_size_upload_not_wrongly_denied(rsrv: RulesServer) -> None:
    """A chunked media upload (no Content-Length) must be judged on its true size."""
    def gen() -> Iterator[bytes]:
        yield b"abc"
        yield b"def"
    r = requests.post(coll(rsrv.url), params={"name": "nonempty/chunked.bin"}, data=gen())
    assert r.status_code == 200, r.text
    assert r.json()["size"] == "6"
    # And a truly empty upload is still denied.
    assert_error(put_media(rsrv.url, "nonempty/empty.bin", b""), 403)
    # Resumable without a declared size.
    start = requests.post(coll(rsrv.url) + "?name=nonempty%2Fr.bin", data=b"{}", headers={
        "X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start",
        "Content-Type": "application/json"})
    assert start.status_code == 200, start.text
    fin = chunk(start.headers["X-Goog-Upload-URL"], b"xyz", 0, "upload, finalize", method="POST")
    assert fin.status_code == 200, fin.text


def test_rules_resource_based_read(rsrv: RulesServer) -> None:
    assert js_multipart(rsrv.url, "private/pub.txt", b"p", {"metadata": {"public": "yes"}}).status_code == 200
    assert js_multipart(rsrv.url, "private/sec.txt", b"s").status_code == 200
    assert read(rsrv.url, "private/pub.txt").status_code == 200
    assert_error(read(rsrv.url, "private/sec.txt"), 403)
    assert_error(read(rsrv.url, "private/missing.txt"), 403)  # resource == null → error → deny → 403


def test_rules_download_token_and_admin_bypass(rsrv: RulesServer) -> None:
    meta = put_media(rsrv.url, "users/alice/t.txt", b"tok", headers=rsrv.auth("alice")).json()
    token = meta["downloadTokens"]
    assert read(rsrv.url, "users/alice/t.txt").status_code == 403
    r = requests.get(obj(rsrv.url, "users/alice/t.txt"), params={"alt": "media", "token": token})
    assert r.status_code == 200 and r.content == b"tok"
    assert requests.get(obj(rsrv.url, "users/alice/t.txt"), params={"token": token}).status_code == 200
    assert_error(requests.get(obj(rsrv.url, "users/alice/t.txt"), params={"alt": "media", "token": "nope"}), 403)
    admin = {"Authorization": f"Bearer {rsrv.admin_key}"}
    assert read(rsrv.url, "users/alice/t.txt", headers=admin).content == b"tok"
    assert put_media(rsrv.url, "once/t.txt", b"1", headers=admin).status_code == 200
    assert put_media(rsrv.url, "once/t.txt", b"2", headers=admin).status_code == 200
    r = requests.post(obj(rsrv.url, "users/alice/t.txt"), params={"create_token": "true"}, headers=admin)
    assert r.status_code == 200 and len(r.json()["downloadTokens"].split(",")) == 2
    assert_error(requests.post(obj(rsrv.url, "users/alice/t.txt"), params={"create_token": "true"},
                               headers=rsrv.auth("alice")), 403)


def test_rules_bad_token_401_and_anonymous(rsrv: RulesServer) -> None:
    r = read(rsrv.url, "images/ok.png", headers={"Authorization": "Firebase not.a.jwt"})
    assert_error(r, 401)
    assert r.headers["WWW-Authenticate"].startswith("Bearer")
    assert read(rsrv.url, "images/ok.png").status_code == 200  # anonymous read allowed by `allow read`


def test_rules_list_and_resumable_identity(rsrv: RulesServer) -> None:
    alice = rsrv.auth("alice")
    assert list_(rsrv.url, "users/alice/", headers=alice).status_code == 200
    err = assert_error(list_(rsrv.url, "users/alice/", headers=rsrv.auth("bob")), 403)
    assert err["message"] == "Permission denied. No LIST permission."
    # Resumable: start with auth, chunks without (iOS), rules judged with the starter's identity.
    data = b"r" * 10
    start = ios_start(rsrv.url, "users/alice/r.bin", len(data), headers=alice)
    assert start.status_code == 200
    fin = chunk(start.headers["X-Goog-Upload-URL"], data, 0, "upload, finalize")
    assert fin.status_code == 200, fin.text
    denied = ios_start(rsrv.url, "users/alice/r2.bin", len(data), headers=rsrv.auth("bob"))
    if denied.status_code == 200:
        assert_error(chunk(denied.headers["X-Goog-Upload-URL"], data, 0, "upload, finalize"), 403)
    else:
        assert_error(denied, 403)


def test_rules_version_1_denies_list(tmp_path: Path, backend: str) -> None:
    server = _start(tmp_path, RULES_V1, [], backend)
    try:
        assert put_media(server.url, "a/b.txt", b"x").status_code == 200
        err = assert_error(list_(server.url, "a/"), 403)
        assert err["message"] == "Permission denied. No LIST permission."
        assert read(server.url, "a/b.txt").status_code == 200
    finally:
        server.stop(timeout=10)
        server.kill()


def test_rules_decisions_counted_once_per_upload(rsrv: RulesServer) -> None:
    def counter(method: str, decision: str) -> float:
        text = requests.get(rsrv.url + "/metrics").text
        pattern = re.compile(r'^portcullis_rules_decisions_total\{([^}]*)\}\s+(\S+)$', re.M)
        for labels, value in pattern.findall(text):
            if f'method="{method}"' in labels and f'decision="{decision}"' in labels:
                return float(value)
        return 0.0
    before = counter("create", "allow")
    assert put_media(rsrv.url, "images/count.png", b"c", "image/png").status_code == 200
    assert js_multipart(rsrv.url, "images/count2.png", b"c", content_type="image/png").status_code == 200
    url = js_start(rsrv.url, "images/count3.png", 1, "image/png").headers["X-Goog-Upload-URL"]
    assert chunk(url, b"c", 0, "upload, finalize", method="POST").status_code == 200
    assert counter("create", "allow") - before == 3
    denied_before = counter("create", "deny")
    assert_error(put_media(rsrv.url, "images/count.pdf", b"c", "application/pdf"), 403)
    assert counter("create", "deny") - denied_before == 1


def test_rules_list_through_single_segment_wildcard(rsrv: RulesServer) -> None:
    """docs/rules-language.md "Listing and wildcards" / firebase-tools#3533: `match /lists/{uid}/{name} { allow read }` permits
    listAll('lists/<uid>/') for that user."""
    assert list_(rsrv.url, "lists/alice/", headers=rsrv.auth("alice")).status_code == 200
    assert_error(list_(rsrv.url, "lists/alice/", headers=rsrv.auth("bob")), 403)


def test_rules_update_and_delete_see_the_right_resources(rsrv: RulesServer) -> None:
    assert put_media(rsrv.url, "meta/a.txt", b"1234567", "text/plain").status_code == 200
    # update: request.resource = current metadata with the patch applied (size unchanged).
    assert requests.patch(obj(rsrv.url, "meta/a.txt"), json={"contentType": "text/ok"}).status_code == 200
    assert_error(requests.patch(obj(rsrv.url, "meta/a.txt"), json={"contentType": "text/no"}), 403)
    # delete: resource = current object (7 bytes → denied); a missing object → resource null → 403, not 404.
    assert_error(requests.delete(obj(rsrv.url, "meta/a.txt")), 403)
    assert_error(requests.delete(obj(rsrv.url, "meta/missing.txt")), 403)
    assert put_media(rsrv.url, "meta/b.txt", b"12", "text/plain").status_code == 200
    assert requests.delete(obj(rsrv.url, "meta/b.txt")).status_code == 204


def test_list_cursor_skips_a_whole_prefix_and_keeps_neighbours(srv: Server) -> None:
    """Keys sorting around a prefix (`d0-x` < `d0/` < `d00` < `d0é`) survive pagination at every page size."""
    names = ["s/d0-x", "s/d0/x", "s/d0/y", "s/d00", "s/d0", "s/d0/z/w", "s/d0é", "s/d0/é", "s/e"]
    for name in names:
        assert put_media(srv.url, name, b"x").status_code == 200
    for page_size in (1, 2, 3, 1000):
        items: list[str] = []
        prefixes: list[str] = []
        token = None
        while True:
            params: dict[str, object] = {"maxResults": page_size}
            if token:
                params["pageToken"] = token
            body = list_(srv.url, "s/", **params).json()
            items += [i["name"] for i in body["items"]]
            prefixes += body["prefixes"]
            token = body.get("nextPageToken")
            if token is None:
                break
        assert items == ["s/d0", "s/d0-x", "s/d00", "s/d0é", "s/e"], (page_size, items)
        assert prefixes == ["s/d0/"], (page_size, prefixes)


def test_head_content_length_is_the_get_length(srv: Server) -> None:
    """RFC 9110 §9.3.2: a HEAD answer carries the Content-Length a GET would (metadata JSON and errors too)."""
    put_media(srv.url, "head/m.txt", b"m")
    for url in (obj(srv.url, "head/m.txt"), obj(srv.url, "head/missing.txt")):
        got = requests.get(url)
        head = requests.head(url)
        assert head.status_code == got.status_code and head.content == b""
        assert head.headers["Content-Length"] == str(len(got.content)), (url, head.headers)


# --- Decompressive transcoding (objects stored with Content-Encoding: gzip), on every backend ----------------

def _put_gzip(base: str, name: str, data: bytes, cache_control: str | None = None) -> bytes:
    stored = gzip.compress(data, mtime=0)
    metadata: dict[str, object] = {"contentEncoding": "gzip", "contentType": "text/plain"}
    if cache_control:
        metadata["cacheControl"] = cache_control
    resp = js_multipart(base, name, stored, metadata, content_type="text/plain")
    assert resp.status_code == 200, resp.text
    return stored


def test_gzip_object_is_decompressed_for_clients_without_accept_encoding(srv: Server) -> None:
    data = (b"portcullis transcoding " * 40_000)[:900_000]  # several gunzip buffers, ~900 KB decompressed
    stored = _put_gzip(srv.url, "gz/plain.txt", data)
    # A client that does not accept gzip gets the original bytes, streamed, without Content-Encoding or a length.
    r = requests.get(obj(srv.url, "gz/plain.txt"), params={"alt": "media"}, headers={"Accept-Encoding": "identity"})
    assert r.status_code == 200
    assert r.content == data
    assert "Content-Encoding" not in r.headers
    assert "Content-Length" not in r.headers
    assert r.headers["X-Goog-Stored-Content-Encoding"] == "gzip"
    assert r.headers["X-Goog-Stored-Content-Length"] == str(len(stored))
    assert "gunzipped" in r.headers["Warning"]
    assert "x-goog-hash" not in r.headers
    # A Range on a transcoded object is ignored: the whole decompressed object, 200.
    ranged = requests.get(obj(srv.url, "gz/plain.txt"), params={"alt": "media"},
                          headers={"Accept-Encoding": "identity", "Range": "bytes=0-9"})
    assert ranged.status_code == 200 and ranged.content == data
    # HEAD says the same without a body.
    head = requests.head(obj(srv.url, "gz/plain.txt"), params={"alt": "media"}, headers={"Accept-Encoding": "identity"})
    assert head.status_code == 200 and "Content-Length" not in head.headers and "Content-Encoding" not in head.headers


def test_gzip_object_is_served_as_stored_to_gzip_clients_and_with_no_transform(srv: Server) -> None:
    data = b"as stored " * 5000
    stored = _put_gzip(srv.url, "gz/stored.txt", data)
    r = requests.get(obj(srv.url, "gz/stored.txt"), params={"alt": "media"},
                     headers={"Accept-Encoding": "gzip"}, stream=True)
    raw = r.raw.read(decode_content=False)
    assert r.status_code == 200 and r.headers["Content-Encoding"] == "gzip"
    assert raw == stored and r.headers["Content-Length"] == str(len(stored))
    # Ranges apply to the stored bytes when nothing is transcoded.
    part = requests.get(obj(srv.url, "gz/stored.txt"), params={"alt": "media"},
                        headers={"Accept-Encoding": "gzip", "Range": "bytes=0-9"}, stream=True)
    assert part.status_code == 206 and part.raw.read(decode_content=False) == stored[:10]
    # Cache-Control: no-transform: served as stored whatever the client accepts.
    kept = _put_gzip(srv.url, "gz/kept.txt", data, cache_control="no-transform")
    r = requests.get(obj(srv.url, "gz/kept.txt"), params={"alt": "media"}, headers={"Accept-Encoding": "identity"},
                     stream=True)
    assert r.headers["Content-Encoding"] == "gzip" and r.raw.read(decode_content=False) == kept


def test_corrupt_gzip_object_ends_the_transfer_short(srv: Server) -> None:
    # Declared gzip but not: the decompressed stream fails; the client sees a cut-off chunked body, never a
    # crash and never garbage presented as complete.
    resp = js_multipart(srv.url, "gz/bad.txt", b"this is not gzip at all",
                        {"contentEncoding": "gzip", "contentType": "text/plain"}, content_type="text/plain")
    assert resp.status_code == 200
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        requests.get(obj(srv.url, "gz/bad.txt"), params={"alt": "media"}, headers={"Accept-Encoding": "identity"})
    assert requests.get(obj(srv.url, "gz/bad.txt")).status_code == 200
