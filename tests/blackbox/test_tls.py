"""TLS on the listener (--tls-cert/--tls-key): HTTPS through real clients (`ssl`, `requests`) against a real
`portcullis serve`, with a self-signed certificate made here by `openssl req`. scripts/test.sh runs this file
once per event-loop driver ($PC_EVENT_LOOP)."""
from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import ssl
import subprocess
import time
from pathlib import Path

import pytest
import requests
import urllib3

from harness import allow_all_server, free_port, object_url, portcullis_bin, request, upload_url

urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)


def make_cert(directory: Path, serial: int) -> tuple[Path, Path]:
    """A self-signed P-256 certificate for 127.0.0.1 with `serial`; returns (cert, key) paths."""
    directory.mkdir(parents=True, exist_ok=True)
    cert, key = directory / f"cert-{serial}.pem", directory / f"key-{serial}.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=portcullis-test",
         "-addext", "subjectAltName=IP:127.0.0.1", "-set_serial", str(serial)],
        check=True, capture_output=True)
    return cert, key


def served_serial(port: int) -> int:
    """The serial number of the certificate the server presents, read with `openssl x509`."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with context.wrap_socket(raw) as tls:
            der = tls.getpeercert(binary_form=True)
    out = subprocess.run(["openssl", "x509", "-inform", "DER", "-noout", "-serial"], input=der,
                         capture_output=True, check=True).stdout.decode()
    return int(out.strip().split("=", 1)[1], 16)


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("tls")
    cert, key = make_cert(workdir / "certs", 4097)
    live_cert, live_key = workdir / "live-cert.pem", workdir / "live-key.pem"
    live_cert.write_bytes(cert.read_bytes())
    live_key.write_bytes(key.read_bytes())
    (workdir / "data").mkdir()
    server = allow_all_server(workdir, f"b=file:{workdir / 'data'}", "tls")
    server.args += ["--tls-cert", str(live_cert), "--tls-key", str(live_key)]
    server.scheme = "https"
    server.start()
    server.ca = cert  # type: ignore[attr-defined]
    yield server
    server.stop()


def verified_session(server) -> requests.Session:
    session = requests.Session()
    session.trust_env = False  # REQUESTS_CA_BUNDLE would override `verify`
    session.verify = str(server.ca)
    return session


def test_v0_upload_and_get_over_verified_https(tls_server):
    session = verified_session(tls_server)
    body = os.urandom(300_000)
    up = session.post(upload_url(tls_server.url, "b", "dir/a.bin"), data=body,
                      headers={"Content-Type": "application/octet-stream"}, timeout=30)
    assert up.status_code == 200, up.text
    got = session.get(object_url(tls_server.url, "b", "dir/a.bin", alt="media"), timeout=30)
    assert got.status_code == 200
    assert got.content == body
    small = session.post(upload_url(tls_server.url, "b", "small.txt"), data=b"hello",
                         headers={"Content-Type": "text/plain"}, timeout=30)
    assert small.status_code == 200
    assert session.get(object_url(tls_server.url, "b", "small.txt", alt="media"), timeout=30).content == b"hello"


def test_json_api_over_https(tls_server):
    session = verified_session(tls_server)
    session.post(upload_url(tls_server.url, "b", "json/x.txt"), data=b"x",
                 headers={"Content-Type": "text/plain"}, timeout=30).raise_for_status()
    listing = session.get(f"{tls_server.url}/storage/v1/b/b/o", params={"prefix": "json/"}, timeout=30)
    assert listing.status_code == 200, listing.text
    assert [item["name"] for item in listing.json()["items"]] == ["json/x.txt"]
    missing = session.get(f"{tls_server.url}/storage/v1/b/b/o/none", timeout=30)
    assert missing.status_code == 404
    assert "error" in missing.json()


def test_alpn_and_protocol_defaults(tls_server):
    context = ssl.create_default_context(cafile=str(tls_server.ca))
    context.set_alpn_protocols(["h2", "http/1.1"])
    with socket.create_connection(("127.0.0.1", tls_server.port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            assert tls.selected_alpn_protocol() == "http/1.1"
            assert tls.version() == "TLSv1.3"
            assert tls.compression() is None


def test_keep_alive_reuses_one_tls_connection(tls_server):
    context = ssl.create_default_context(cafile=str(tls_server.ca))
    with socket.create_connection(("127.0.0.1", tls_server.port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            reader = tls.makefile("rb")
            for _ in range(5):
                tls.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                status = reader.readline()
                assert status.startswith(b"HTTP/1.1 200"), status
                length = 0
                while (line := reader.readline()) not in (b"\r\n", b""):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                reader.read(length)


def test_plain_http_to_tls_port_gets_a_plain_400(tls_server):
    started = time.monotonic()
    plain = request("GET", f"http://127.0.0.1:{tls_server.port}/healthz", timeout=10)
    assert time.monotonic() - started < 5
    assert plain.status == 400
    assert plain.header("connection") == "close"
    assert "https" in plain.json()["error"]["message"]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the old versions are the point
@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1])
def test_old_protocol_versions_refused(tls_server, version):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_ciphers("ALL:@SECLEVEL=0")
    context.minimum_version = version
    context.maximum_version = version
    with socket.create_connection(("127.0.0.1", tls_server.port), timeout=10) as raw:
        with pytest.raises(ssl.SSLError) as refused:
            context.wrap_socket(raw)
    # The server's refusal (an alert), not the client declining to offer the version.
    assert "ALERT_PROTOCOL_VERSION" in str(refused.value).upper()


def vm_hwm_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_large_download_streams_with_bounded_memory(tls_server):
    size = 64 * 1024 * 1024
    block = os.urandom(1024 * 1024)
    session = verified_session(tls_server)

    def chunks():
        for _ in range(size // len(block)):
            yield block

    up = session.post(upload_url(tls_server.url, "b", "big.bin"), data=chunks(),
                      headers={"Content-Type": "application/octet-stream"}, timeout=120)
    assert up.status_code == 200, up.text
    before = vm_hwm_kib(tls_server.process.pid)
    digest = hashlib.sha256()
    received = 0
    with session.get(object_url(tls_server.url, "b", "big.bin", alt="media"), stream=True, timeout=120) as got:
        assert got.status_code == 200
        for index, piece in enumerate(got.iter_content(256 * 1024)):
            if index < 8:
                time.sleep(0.05)  # a slow reader first: the server must wait, not buffer the file
            digest.update(piece)
            received += len(piece)
    assert received == size
    assert digest.hexdigest() == hashlib.sha256(block * (size // len(block))).hexdigest()
    grown = vm_hwm_kib(tls_server.process.pid) - before
    assert grown < 24 * 1024, f"peak RSS grew by {grown} KiB serving a 64 MiB file"


def test_sighup_reloads_certificate_and_keeps_open_connections(tls_server, tmp_path):
    assert served_serial(tls_server.port) == 4097
    context = ssl.create_default_context(cafile=str(tls_server.ca))
    raw = socket.create_connection(("127.0.0.1", tls_server.port), timeout=10)
    tls = context.wrap_socket(raw, server_hostname="127.0.0.1")
    reader = tls.makefile("rb")

    def exchange() -> bytes:
        tls.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        status = reader.readline()
        length = 0
        while (line := reader.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        reader.read(length)
        return status

    try:
        assert exchange().startswith(b"HTTP/1.1 200")
        live_cert = tls_server.workdir / "live-cert.pem"
        live_key = tls_server.workdir / "live-key.pem"
        old_cert, old_key = live_cert.read_bytes(), live_key.read_bytes()

        # A broken pair at reload is refused: the old certificate keeps serving.
        live_cert.write_bytes(b"not a certificate\n")
        tls_server.signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while "keeping the current" not in tls_server.log_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "keeping the current" in tls_server.log_text()
        assert served_serial(tls_server.port) == 4097

        new_cert, new_key = make_cert(tmp_path, 8191)
        live_key.write_bytes(new_key.read_bytes())
        live_cert.write_bytes(new_cert.read_bytes())
        tls_server.signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while served_serial(tls_server.port) != 8191 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert served_serial(tls_server.port) == 8191
        # The connection opened before the reload still works.
        assert exchange().startswith(b"HTTP/1.1 200")
    finally:
        tls.close()
        (tls_server.workdir / "live-cert.pem").write_bytes(old_cert)
        (tls_server.workdir / "live-key.pem").write_bytes(old_key)
        tls_server.signal(signal.SIGHUP)


def run_serve(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PORTCULLIS_")}
    (tmp_path / "data").mkdir(exist_ok=True)
    return subprocess.run(
        [portcullis_bin(), "serve", "--listen", "127.0.0.1:0", "--bucket", f"b=file:{tmp_path / 'data'}", *extra],
        cwd=tmp_path, env=env, capture_output=True, timeout=30)


def test_bad_certificate_at_start_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.pem"
    bad.write_text("garbage\n")
    cert, key = make_cert(tmp_path, 5)
    done = run_serve(tmp_path, "--tls-cert", str(bad), "--tls-key", str(key))
    assert done.returncode == 2
    assert b"no certificate in the certificate file" in done.stderr
    other_cert, _ = make_cert(tmp_path / "other", 6)
    done = run_serve(tmp_path, "--tls-cert", str(other_cert), "--tls-key", str(key))
    assert done.returncode == 2
    assert b"does not match the certificate" in done.stderr


def test_cert_without_key_is_refused(tmp_path):
    cert, _ = make_cert(tmp_path, 7)
    done = run_serve(tmp_path, "--tls-cert", str(cert))
    assert done.returncode == 2
    assert b"--tls-cert and --tls-key go together" in done.stderr


def test_console_listener_shares_the_certificate(tmp_path):
    cert, key = make_cert(tmp_path / "certs", 9001)
    (tmp_path / "data").mkdir()
    server = allow_all_server(tmp_path, f"b=file:{tmp_path / 'data'}", "tls-console")
    console_port = free_port()
    server.args += ["--tls-cert", str(cert), "--tls-key", str(key), "--console-listen", f"127.0.0.1:{console_port}"]
    server.scheme = "https"
    server.start()
    try:
        assert served_serial(console_port) == 9001
        session = requests.Session()
        session.trust_env = False
        page = session.get(f"https://127.0.0.1:{console_port}/console/", verify=str(cert), timeout=30)
        assert page.status_code == 200
        assert f'content="https://127.0.0.1:{server.port}"' in page.text
        assert session.get(f"{server.url}/console/", verify=str(cert), timeout=30).status_code == 404
    finally:
        server.stop()


def test_unfinished_handshake_ends_at_the_header_timeout(tmp_path):
    cert, key = make_cert(tmp_path / "certs", 11)
    (tmp_path / "data").mkdir()
    server = allow_all_server(tmp_path, f"b=file:{tmp_path / 'data'}", "tls-timeout")
    server.args += ["--tls-cert", str(cert), "--tls-key", str(key), "--header-timeout", "1"]
    server.scheme = "https"
    server.start()
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
            raw.sendall(bytes([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]))  # the start of a ClientHello, never finished
            started = time.monotonic()
            try:
                data = raw.recv(4096)
            except ConnectionResetError:
                data = b""
            waited = time.monotonic() - started
        assert data == b""
        assert 0.5 < waited < 5, f"closed after {waited:.2f} s with --header-timeout 1"
    finally:
        server.stop()
