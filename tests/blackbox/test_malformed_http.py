"""Outside-in check of the HTTP parser's defences over a raw socket: request-smuggling shapes and limit
breaches get the stated status and the connection is closed. The exhaustive cases live in the
HTTPServer unit tests; these prove the shipped binary behaves the same."""
from __future__ import annotations

import socket
import time

import pytest

from harness import Server

SMUGGLING = {
    "content-length-and-transfer-encoding":
        b"POST /v0/b/test-bucket/o?name=a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "conflicting-content-length":
        b"POST /v0/b/test-bucket/o?name=a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
    "comma-content-length":
        b"POST /v0/b/test-bucket/o?name=a HTTP/1.1\r\nHost: x\r\nContent-Length: 5, 6\r\n\r\nhello!",
    "invalid-chunk-size":
        b"POST /v0/b/test-bucket/o?name=a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
    "obs-fold":
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n\r\n",
    "space-before-colon":
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length : 0\r\n\r\n",
    "nul-in-header-value":
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: a\x00b\r\n\r\n",
    "bare-cr-in-header-value":
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: a\rb\r\n\r\n",
    "bad-request-line":
        b"GET  /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
    "bad-version":
        b"GET /healthz HTTP/9.9x\r\nHost: x\r\n\r\n",
}


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


@pytest.fixture(scope="module")
def server(module_gateway: Server) -> Server:
    return module_gateway


@pytest.mark.parametrize("case", sorted(SMUGGLING))
def test_smuggling_shape_is_400_and_closed(server: Server, case: str) -> None:
    response, closed = exchange(server, SMUGGLING[case])
    assert response.startswith(b"HTTP/1.1 400"), response[:200]
    assert closed, "connection left open after a malformed request"


def test_request_line_too_long_is_414(server: Server) -> None:
    response, closed = exchange(server, b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert response.startswith(b"HTTP/1.1 414"), response[:200]
    assert closed


def test_too_many_header_fields_is_431(server: Server) -> None:
    headers = b"".join(b"X-H%d: v\r\n" % i for i in range(150))
    response, closed = exchange(server, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n")
    assert response.startswith(b"HTTP/1.1 431"), response[:200]
    assert closed


def test_well_formed_pipelined_requests_still_work(server: Server) -> None:
    """Control case: the same socket code accepts valid pipelined requests and answers them in order."""
    raw = (b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
           b"GET /no-such-route HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    response, closed = exchange(server, raw)
    first = response.find(b"HTTP/1.1 200")
    second = response.find(b"HTTP/1.1 404")
    assert 0 <= first < second, response[:400]
    assert closed
