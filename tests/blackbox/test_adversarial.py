"""The gateway tried as an attacker would, from the outside, against the shipped binary.

One section per item of the issue; each test names the class of bug it guards against and fails on a gateway
without the defence. Sections:

- item 1, identity by bytes: a signed URL, a download token and a page token minted for one spelling of a name
  open nothing under a canonically equivalent spelling (uids and names: `test_identity_names.py`);
- item 2, a denied caller learns nothing: an upload of unknown size (chunked, or a resumable start without a
  size) that the rules deny whatever its bytes is refused at the head — 403 for an existing object with a
  failing precondition as for a missing one — without reading or storing its body, on every backend;
- item 3, capabilities grant exactly what they say: a signed URL yields no download token; an upload URL
  carries nothing readable of the uploader or the object;
- item 4, ambiguous requests: `Host` outside `host[:port]`, absent on HTTP/1.1 or repeated, two
  `Authorization` headers and a repeated single-valued query parameter are refused with 400 before anything
  else happens;
- item 5, one name policy on every backend: `test_identity_names.py`;
- an accepted resumable start logs its decision;
- item 6, bounded upstream waits: an upstream that accepts connections and never answers costs a client about
  `--upstream-timeout`, then a 504 in the error shape, on gs:// and s3:// buckets.
"""
from __future__ import annotations

import base64
import json
import socket
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

import requests

from harness import ALLOW_ALL_RULES, Server, request, signing_key_file
from test_malformed_http import exchange
from test_v0_conformance import (  # noqa: F401  (fixtures and the backend parametrization hook)
    BUCKET, RulesServer, _backend_quirk, assert_error, backend, coll, enc, obj, pytest_generate_tests, read, rsrv,
)

COMPOSED, DECOMPOSED = "caf\u00e9", "cafe\u0301"


def status_and_body(response: bytes) -> tuple[int, bytes]:
    head, _, body = response.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


# ---------------------------------------------------------------------------------------------------------------
# Item 4 — ambiguous requests are refused (the HTTP part: Host and Authorization).
# ---------------------------------------------------------------------------------------------------------------

INVALID_HOSTS = [
    b"a b", b"evil.example/path", b"evil.example?x", b"user@evil.example", b"a:b", b"a:99999", b"a:-1",
    b"[::1", b"::1", b"[::1]x", b"[not-an-address]", b"a,b", b"caf\xc3\xa9.example", b"a%zz",
]


@pytest.fixture(scope="module")
def gateway(module_gateway: Server) -> Server:
    return module_gateway


@pytest.mark.parametrize("host", INVALID_HOSTS, ids=lambda h: h.decode("latin-1"))
def test_item4_a_host_outside_host_port_is_400_and_closes(gateway: Server, host: bytes) -> None:
    raw = b"GET /v0/b/test-bucket/o HTTP/1.1\r\nHost: " + host + b"\r\n\r\n"
    response, closed = exchange(gateway, raw)
    status, body = status_and_body(response)
    assert status == 400, response[:200]
    assert json.loads(body)["error"]["code"] == 400
    assert closed


@pytest.mark.parametrize("raw", [
    b"GET /v0/b/test-bucket/o HTTP/1.1\r\n\r\n",
    b"GET /v0/b/test-bucket/o HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
    b"GET /v0/b/test-bucket/o HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n",
    b"GET /v0/b/test-bucket/o HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n",
], ids=["missing", "two-different", "two-equal", "two-on-http10"])
def test_item4_missing_or_repeated_host_is_400(gateway: Server, raw: bytes) -> None:
    response, closed = exchange(gateway, raw)
    assert status_and_body(response)[0] == 400, response[:200]
    assert closed


@pytest.mark.parametrize("host", [b"127.0.0.1", b"localhost:8080", b"[::1]:8080", b"[2001:db8::7]",
                                  b"storage.example.com", b""])
def test_item4_valid_hosts_are_served(gateway: Server, host: bytes) -> None:
    raw = b"GET /healthz HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\n\r\n"
    response, _ = exchange(gateway, raw)
    assert status_and_body(response)[0] == 200, response[:200]


@pytest.mark.parametrize("second", [b"Bearer someone-else", b"Firebase x", b""], ids=["other", "scheme", "empty"])
def test_item4_two_authorization_headers_are_400_before_anything_runs(gateway: Server, second: bytes) -> None:
    # An upload under allow-all rules: were the request accepted, the object would exist afterwards.
    name = "ambiguous-" + second.decode().replace(" ", "-")
    body = b"payload"
    raw = (b"POST /v0/b/test-bucket/o?name=" + name.encode() + b" HTTP/1.1\r\nHost: x\r\n"
           b"Authorization: Bearer first\r\nAuthorization: " + second + b"\r\n"
           b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    response, closed = exchange(gateway, raw)
    status, payload = status_and_body(response)
    assert status == 400, response[:200]
    assert json.loads(payload)["error"]["code"] == 400
    assert closed
    assert request("GET", f"{gateway.url}/v0/b/test-bucket/o/{name}").status == 404


def test_item4_one_authorization_per_request_on_a_kept_alive_connection(gateway: Server) -> None:
    raw = (b"GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\r\n\r\n"
           b"GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer b\r\nConnection: close\r\n\r\n")
    response, _ = exchange(gateway, raw)
    assert response.count(b"HTTP/1.1 200") == 2, response[:400]


# ---------------------------------------------------------------------------------------------------------------
# Item 6 — upstream waits are bounded as a whole (--upstream-timeout → 504).
# ---------------------------------------------------------------------------------------------------------------

UPSTREAM_TIMEOUT = 2.0


@pytest.fixture
def silent_upstream() -> Iterator[str]:
    """A TCP server that accepts connections (the kernel completes the handshakes into the backlog) and never
    reads or answers: the shape of a hung upstream."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()


def _gateway_in_front_of(tmp_path: Path, servers: list[Server], scheme: str, upstream: str) -> Server:
    rules = tmp_path / "allow.rules"
    rules.write_text(ALLOW_ALL_RULES)
    key = tmp_path / "signing.key"
    signing_key_file(key, "k1")
    if scheme == "gs":
        env = {"STORAGE_EMULATOR_HOST": upstream}
    else:
        env = {"AWS_ENDPOINT_URL": upstream, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
               "AWS_REGION": "us-east-1"}
    server = Server(workdir=tmp_path / "gw", env=env, name=f"hung-{scheme}",
                    args=["--bucket", f"hung={scheme}://hung", "--rules", str(rules), "--signing-key", str(key),
                          "--upstream-timeout", f"{UPSTREAM_TIMEOUT}s"])
    servers.append(server)
    return server.start()


@pytest.mark.parametrize("scheme", ["gs", "s3"])
@pytest.mark.parametrize("query", ["", "?alt=media"], ids=["metadata", "media"])
def test_item6_a_hung_upstream_is_a_504_within_the_upstream_timeout(
        tmp_path: Path, servers: list[Server], silent_upstream: str, scheme: str, query: str) -> None:
    server = _gateway_in_front_of(tmp_path, servers, scheme, silent_upstream)
    url = f"{server.url}/v0/b/hung/o/{urllib.parse.quote('some/object.txt', safe='')}{query}"
    start = time.monotonic()
    # Without the overall deadline three 30 s attempts take 90 s; the bound is loose for loaded machines.
    response = request("GET", url, timeout=45)
    elapsed = time.monotonic() - start
    assert response.status == 504, response.body[:300]
    assert response.json()["error"]["code"] == 504
    assert elapsed >= UPSTREAM_TIMEOUT * 0.9
    assert elapsed < UPSTREAM_TIMEOUT + 15, f"answered after {elapsed:.1f} s"


def test_item6_a_hung_upstream_upload_is_a_504_too(tmp_path: Path, servers: list[Server],
                                                    silent_upstream: str) -> None:
    # A write is not retried, but its single wait is bounded the same way.
    server = _gateway_in_front_of(tmp_path, servers, "gs", silent_upstream)
    start = time.monotonic()
    response = request("POST", f"{server.url}/v0/b/hung/o?name=up.txt", body=b"hello",
                       headers={"Content-Type": "text/plain"}, timeout=45)
    elapsed = time.monotonic() - start
    assert response.status == 504, response.body[:300]
    assert response.json()["error"]["code"] == 504
    assert elapsed < UPSTREAM_TIMEOUT + 15, f"answered after {elapsed:.1f} s"


# ---------------------------------------------------------------------------------------------------------------
# Item 1 — capabilities are bound to the exact bytes of a name (uids and names themselves: test_identity_names.py).
# ---------------------------------------------------------------------------------------------------------------

def _admin(rsrv: RulesServer) -> dict[str, str]:
    return {"Authorization": f"Bearer {rsrv.admin_key}"}


def _put(rsrv: RulesServer, name: str, data: bytes, headers: dict[str, str]) -> dict[str, object]:
    r = requests.post(coll(rsrv.url), params={"name": name}, data=data,
                      headers={"Content-Type": "text/plain", **headers})
    assert r.status_code == 200, r.text
    return r.json()


def test_item1_a_signed_url_opens_exactly_the_name_it_was_minted_for(rsrv: RulesServer) -> None:
    for minted, other in ((COMPOSED, DECOMPOSED), (DECOMPOSED, COMPOSED)):
        _put(rsrv, f"users/owner/s-{minted}", b"minted", _admin(rsrv))
        _put(rsrv, f"users/owner/s-{other}", b"other", _admin(rsrv))
        r = requests.post(obj(rsrv.url, f"users/owner/s-{minted}") + "?signedUrl", json={"method": "GET"},
                          headers=_admin(rsrv))
        assert r.status_code == 200, r.text
        signed = r.json()["url"]
        assert requests.get(signed).content == b"minted"
        moved = signed.replace(enc(f"s-{minted}"), enc(f"s-{other}"))
        assert moved != signed
        answer = requests.get(moved)
        assert answer.status_code == 403 and answer.content != b"other", (minted, answer.status_code)


def test_item1_a_download_token_opens_exactly_its_own_object(rsrv: RulesServer) -> None:
    first = _put(rsrv, f"users/owner/t-{COMPOSED}", b"first", rsrv.auth("owner"))
    _put(rsrv, f"users/owner/t-{DECOMPOSED}", b"second", rsrv.auth("owner"))
    token = first["downloadTokens"]
    assert requests.get(obj(rsrv.url, f"users/owner/t-{COMPOSED}"), params={"alt": "media", "token": token}).content \
        == b"first"
    answer = requests.get(obj(rsrv.url, f"users/owner/t-{DECOMPOSED}"), params={"alt": "media", "token": token})
    assert_error(answer, 403)


def test_item1_a_page_token_is_bound_to_the_exact_prefix(rsrv: RulesServer) -> None:
    for i in range(3):
        _put(rsrv, f"users/owner/{COMPOSED}/{i}", b"x", _admin(rsrv))
        _put(rsrv, f"users/owner/{DECOMPOSED}/{i}", b"x", _admin(rsrv))
    page = requests.get(coll(rsrv.url), params={"prefix": f"users/owner/{COMPOSED}/", "delimiter": "/",
                                                "maxResults": "1"}, headers=_admin(rsrv))
    assert page.status_code == 200, page.text
    token = page.json()["nextPageToken"]
    replayed = requests.get(coll(rsrv.url), params={"prefix": f"users/owner/{DECOMPOSED}/", "delimiter": "/",
                                                    "maxResults": "1", "pageToken": token}, headers=_admin(rsrv))
    assert_error(replayed, 400)


# ---------------------------------------------------------------------------------------------------------------
# Item 2 — a caller the rules deny learns nothing and stores nothing.
# ---------------------------------------------------------------------------------------------------------------

def _chunked_head(rsrv: RulesServer, name: str, query: str, token: str) -> bytes:
    """The head of a chunked media upload; the test sends no chunk, so only an answer at the head arrives."""
    target = f"/v0/b/{BUCKET}/o?name={urllib.parse.quote(name, safe='')}{query}"
    return (f"POST {target} HTTP/1.1\r\nHost: 127.0.0.1:{rsrv.server.port}\r\nAuthorization: Firebase {token}\r\n"
            "Content-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n").encode()


def _first_response(server: Server, raw: bytes, timeout: float = 10) -> bytes:
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as sock:
        sock.sendall(raw)
        received = b""
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in received and time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            received += chunk
        return received


def test_item2_a_denied_upload_of_unknown_size_is_refused_at_the_head_whatever_the_object(
        rsrv: RulesServer) -> None:
    _put(rsrv, "users/owner/existing.bin", b"the owner's bytes", rsrv.auth("owner"))
    intruder = rsrv.token("intruder")
    for name in ("users/owner/existing.bin", "users/owner/missing.bin"):
        for query in ("", "&ifGenerationMatch=0", "&ifGenerationMatch=1"):
            head = _first_response(rsrv.server, _chunked_head(rsrv, name, query, intruder))
            assert head, f"{name}{query}: no answer before the body (the gateway waited for it)"
            status, _ = status_and_body(head)
            assert status == 403, (name, query, head[:200])
        # With the body sent, chunked, the answer is the same, and nothing is stored.
        sent = requests.post(coll(rsrv.url), params={"name": name, "ifGenerationMatch": "0"},
                             data=iter([b"x" * 65536] * 16), headers={"Authorization": f"Firebase {intruder}"})
        assert_error(sent, 403)
        # A resumable start that declares no size: the same 403 for both, no upload URL.
        start = requests.post(coll(rsrv.url), params={"name": name, "ifGenerationMatch": "0"},
                              headers={"Authorization": f"Firebase {intruder}", "X-Goog-Upload-Protocol": "resumable",
                                       "X-Goog-Upload-Command": "start"})
        assert_error(start, 403)
        assert "X-Goog-Upload-URL" not in start.headers
    assert read(rsrv.url, "users/owner/existing.bin", headers=rsrv.auth("owner")).content == b"the owner's bytes"
    assert_error(read(rsrv.url, "users/owner/missing.bin", headers=rsrv.auth("owner")), 404)


def test_item2_the_owner_of_unknown_size_is_judged_on_the_true_bytes(rsrv: RulesServer) -> None:
    # Undecided at the head (the rules read nothing of the size here, but the gateway cannot know that the body
    # will arrive): the owner's chunked upload goes through and a failing precondition is a 412.
    owner = rsrv.auth("owner")
    ok = requests.post(coll(rsrv.url), params={"name": "users/owner/chunked.bin"}, data=iter([b"abc", b"def"]),
                       headers=owner)
    assert ok.status_code == 200, ok.text
    failed = requests.post(coll(rsrv.url), params={"name": "users/owner/chunked.bin", "ifGenerationMatch": "0"},
                           data=iter([b"abc"]), headers=owner)
    assert_error(failed, 412)


# ---------------------------------------------------------------------------------------------------------------
# Item 3 — capabilities grant exactly what they say.
# ---------------------------------------------------------------------------------------------------------------

def test_item3_a_signed_url_yields_no_download_token(rsrv: RulesServer) -> None:
    meta = _put(rsrv, "users/owner/signed.txt", b"signed!", rsrv.auth("owner"))
    token = meta["downloadTokens"]
    r = requests.post(obj(rsrv.url, "users/owner/signed.txt") + "?signedUrl", json={"method": "GET"},
                      headers=_admin(rsrv))
    assert r.status_code == 200, r.text
    media = r.json()["url"]
    assert "token" not in urllib.parse.parse_qs(urllib.parse.urlsplit(media).query)
    bytes_ = requests.get(media)
    assert bytes_.status_code == 200 and bytes_.content == b"signed!"
    assert not any(token in value for value in bytes_.headers.values())
    metadata_url = media.replace("alt=media&", "")
    m = requests.get(metadata_url)
    assert m.status_code == 200, m.text
    assert m.json()["name"] == "users/owner/signed.txt" and "downloadTokens" not in m.json() and token not in m.text
    minted = requests.get(metadata_url + "&alt=downloadUrl")
    assert minted.status_code in (400, 403) and token not in minted.text


def test_item3_an_upload_url_carries_nothing_readable(rsrv: RulesServer) -> None:
    start = requests.post(coll(rsrv.url), params={"name": "users/carol/up.bin"},
                          headers={**rsrv.auth("carol"), "X-Goog-Upload-Protocol": "resumable",
                                   "X-Goog-Upload-Command": "start", "X-Goog-Upload-Header-Content-Length": "4",
                                   "Content-Type": "application/json"},
                          json={"contentType": "x/secret-type", "metadata": {"note": "private-note"}})
    assert start.status_code == 200, start.text
    url = start.headers["X-Goog-Upload-URL"]
    upload_id = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["upload_id"][0]
    decoded = ""
    for part in upload_id.split("."):
        try:
            decoded += base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)).decode("utf-8", "replace")
        except ValueError:
            pass
    # The name is in the URL by design (the route needs it); the uploader and the attributes are not, in any
    # decoding of the upload id.
    for secret in ("carol", "secret-type", "private-note"):
        assert secret not in upload_id and secret not in decoded, secret
    for secret in ("secret-type", "private-note"):
        assert secret not in url, secret
    done = requests.put(url, data=b"abcd", headers={"X-Goog-Upload-Command": "upload, finalize",
                                                    "X-Goog-Upload-Offset": "0"})
    assert done.status_code == 200, done.text
    token = done.json()["downloadTokens"]
    assert token and token not in url
    assert requests.get(obj(rsrv.url, "users/carol/up.bin"), params={"alt": "media", "token": token}).content == b"abcd"


# ---------------------------------------------------------------------------------------------------------------
# Item 4 (the query part) — a repeated single-valued parameter is ambiguous: 400 before anything runs.
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("parameter, value", [
    ("name", "x"), ("alt", "media"), ("uploadType", "media"), ("upload_id", "u"), ("pageToken", "t"),
    ("maxResults", "5"), ("prefix", "users/"), ("delimiter", "/"), ("ifGenerationMatch", "0"),
    ("ifMetagenerationMatch", "1"), ("ifGenerationNotMatch", "0"), ("ifMetagenerationNotMatch", "1"),
])
def test_item4_a_repeated_single_valued_parameter_is_400(rsrv: RulesServer, parameter: str, value: str) -> None:
    target = obj(rsrv.url, "users/owner/existing.bin") if parameter in ("alt",) else coll(rsrv.url)
    query = f"{parameter}={urllib.parse.quote(value)}&{parameter}={urllib.parse.quote(value)}"
    answer = requests.get(f"{target}?{query}", headers=_admin(rsrv))
    assert_error(answer, 400)


# ---------------------------------------------------------------------------------------------------------------
# Every request that reached a decision logs it, an accepted resumable start included.
# ---------------------------------------------------------------------------------------------------------------

def test_a_resumable_start_logs_its_decision(rsrv: RulesServer) -> None:
    # The access log may be flushed a short while after the answer: poll for the line.
    cases = [("users/owner/logged-sized.bin", rsrv.auth("owner"), {"X-Goog-Upload-Header-Content-Length": "3"},
              200, "allow"),
             ("users/owner/logged-unsized.bin", rsrv.auth("owner"), {}, 200, "allow"),
             ("users/owner/logged-denied.bin", rsrv.auth("intruder"), {}, 403, "deny")]
    for name, auth, extra, status, decision in cases:
        start = requests.post(coll(rsrv.url), params={"name": name},
                              headers={**auth, "X-Goog-Upload-Protocol": "resumable",
                                       "X-Goog-Upload-Command": "start", **extra})
        assert start.status_code == status, start.text
        request_id = start.headers["X-Request-Id"]
        deadline = time.monotonic() + 10
        entry = None
        while entry is None and time.monotonic() < deadline:
            entry = next((e for e in rsrv.server.access_log()
                          if e.get("request_id") == request_id or e.get("rid") == request_id), None)
            if entry is None:
                time.sleep(0.05)
        assert entry is not None, f"no access-log line for {request_id}"
        assert entry.get("decision") == decision, entry
