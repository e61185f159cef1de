"""The gateway tried as an attacker would, from the outside, against the shipped binary (issue 13).

One section per item of the issue; each test names the class of bug it guards against and fails on a gateway
without the defence. Sections:

- item 4, ambiguous requests: `Host` outside `host[:port]`, absent on HTTP/1.1 or repeated, and two
  `Authorization` headers are refused with 400 before anything else happens;
- item 6, bounded upstream waits: an upstream that accepts connections and never answers costs a client about
  `--upstream-timeout`, then a 504 in the error shape, on gs:// and s3:// buckets.
"""
from __future__ import annotations

import json
import socket
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import ALLOW_ALL_RULES, Server, request, signing_key_file


def exchange(server: Server, raw: bytes, timeout: float = 10) -> tuple[bytes, bool]:
    """Send raw bytes; read until the server closes (True) or the timeout passes (False)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as sock:
        sock.sendall(raw)
        deadline = time.monotonic() + timeout
        received = b""
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                return received, True
            except socket.timeout:
                break
            if not chunk:
                return received, True
            received += chunk
        return received, False


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
