"""Connections that end in every awkward state release everything (the event loops and the connection lifecycle).

The HTTP server runs its connections on epoll loops of its own and closes a descriptor only at the end of a loop
turn; this drives the shipped binary through hundreds of connections that end abruptly — before a byte, in the
middle of a head, with a request unanswered, in the middle of an upload body, after a half-close, with requests
pipelined and left unread — and checks that the process returns to its descriptor baseline and keeps serving."""
from __future__ import annotations

import json
import os
import socket
import struct
import threading
import time
import urllib.request

import pytest

from harness import Server


@pytest.fixture(scope="module")
def server(module_gateway: Server) -> Server:
    return module_gateway


def descriptors(server: Server) -> int:
    assert server.process is not None
    return len(os.listdir(f"/proc/{server.process.pid}/fd"))


def reset(sock: socket.socket) -> None:
    """Close with RST instead of FIN."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def healthz(server: Server) -> int:
    with urllib.request.urlopen(server.url + "/healthz", timeout=10) as response:
        return response.status


UPLOAD_HEAD = (b"POST /v0/b/test-bucket/o?name=churn%2Fpartial HTTP/1.1\r\nHost: x\r\n"
               b"Content-Type: application/octet-stream\r\nContent-Length: 1048576\r\n\r\n")


def churn_once(port: int, shape: int) -> None:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        if shape == 0:                      # connect, then leave at once
            sock.close()
        elif shape == 1:                    # half a head, then RST
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHo")
            reset(sock)
        elif shape == 2:                    # a request, RST before reading the answer
            sock.sendall(b"GET /v0/b/test-bucket/o?prefix=churn%2F&delimiter=%2F HTTP/1.1\r\nHost: x\r\n\r\n")
            reset(sock)
        elif shape == 3:                    # an upload that stops after 64 KiB of its 1 MiB body
            sock.sendall(UPLOAD_HEAD + b"\0" * 65536)
            sock.close()
        elif shape == 4:                    # the same, ended with RST
            sock.sendall(UPLOAD_HEAD + b"\0" * 65536)
            reset(sock)
        elif shape == 5:                    # a request, then half-close; read the answer to the end
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            sock.shutdown(socket.SHUT_WR)
            while sock.recv(65536):
                pass
            sock.close()
        else:                               # 20 pipelined requests, nothing read, then close
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" * 20)
            sock.close()
    except OSError:
        sock.close()


def test_abrupt_connections_release_every_descriptor(server: Server) -> None:
    assert healthz(server) == 200
    baseline = descriptors(server)
    errors: list[BaseException] = []

    def worker(offset: int) -> None:
        try:
            for index in range(100):
                churn_once(server.port, (offset + index) % 7)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(7)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors[:3]
    assert server.process is not None and server.process.poll() is None, "server died"

    # Upload bodies that stop mid-way wait out nothing: the peer's FIN or RST ends them. Allow a little for
    # SQLite reader connections the uploads opened lazily (the index and its WAL).
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and descriptors(server) > baseline + 6:
        time.sleep(0.1)
    assert descriptors(server) <= baseline + 6, (baseline, descriptors(server))
    assert healthz(server) == 200
    # No upload that stopped mid-body became an object.
    listing_url = server.url + "/v0/b/test-bucket/o?prefix=churn%2F&delimiter=%2F"
    with urllib.request.urlopen(listing_url, timeout=10) as response:
        listing = json.loads(response.read())
    assert listing.get("items", []) == [], listing
