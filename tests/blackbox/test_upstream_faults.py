"""Upstream faults seen from a v0 client: a gateway serving a gs:// bucket from its own fake-gcs-server process,
or an s3:// bucket from its own Ceph RGW (a one-node cluster started by `scripts/rgw.sh` for this module), whose
upstream process (fake-gcs-server, radosgw) the tests kill and restart.

- upstream killed mid-download: the client gets a response that ends short of its Content-Length (never a clean
  end), and `portcullis_upstream_stream_errors_total` counts it;
- upstream down at request time: 503 with `Retry-After` in the protocol's error shape, `/readyz` 503, the breaker
  answers fast while open, and everything recovers once the upstream is back;
- clients that disconnect mid-download: the upstream transfers are aborted (active transfers back to 0, file
  descriptors back to where they were).
"""
from __future__ import annotations

import json
import os
import socket
import signal
import subprocess
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

import harness
from backends import signed_s3, unavailable
from harness import ALLOW_ALL_RULES, Server, free_port, request, signing_key_file

BUCKET = "faults"
OBJECT = "big.bin"
SIZE = 64 << 20


def _fake_gcs_binary() -> str:
    return harness.fake_gcs_binary() or pytest.skip("fake-gcs-server not installed (make test builds .venv-emulators)")


class FakeGCS:
    """One fake-gcs-server process (memory backend) on a fixed port, so it can be killed and brought back."""

    def __init__(self, binary: str, workdir: Path) -> None:
        self.binary, self.workdir, self.port = binary, workdir, free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        log = open(self.workdir / "fake-gcs.log", "ab")
        self.process = subprocess.Popen(
            [self.binary, "-scheme", "http", "-host", "127.0.0.1", "-port", str(self.port), "-backend", "memory",
             "-external-url", self.url, "-log-level", "warn"], stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL)
        log.close()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if request("GET", f"{self.url}/storage/v1/b").status == 200:
                    break
            except OSError:
                pass
            time.sleep(0.05)
        else:
            raise RuntimeError("fake-gcs-server did not start")
        created = request("POST", f"{self.url}/storage/v1/b?project=test", body=json.dumps({"name": BUCKET}).encode(),
                          headers={"Content-Type": "application/json"})
        assert created.status in (200, 409), created.body
        data = bytes(range(256)) * (SIZE // 256)
        put = request("POST", f"{self.url}/upload/storage/v1/b/{BUCKET}/o?uploadType=media&name={OBJECT}", body=data,
                      headers={"Content-Type": "application/octet-stream"})
        assert put.status == 200, put.body[:300]

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


class RadosGateway:
    """radosgw of a private one-node Ceph cluster (`scripts/rgw.sh start` with its own state directory): killing
    it leaves the cluster, and so the object, in place; `start` brings radosgw back on the same port."""

    def __init__(self, state: Path) -> None:
        self.state = state
        self.env: dict[str, str] = {}
        self.process: subprocess.Popen[bytes] | None = None

    def boot(self) -> None:
        script = Path(__file__).resolve().parents[2] / "scripts" / "rgw.sh"
        out = subprocess.run([str(script), "start"], env={**os.environ, "PC_RGW_STATE": str(self.state)},
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        for line in out.stdout.splitlines():
            name, _, value = line.removeprefix("export ").partition("=")
            self.env[name] = value
        status, answer = signed_s3("rgw", "PUT", f"/{BUCKET}", env=self.gateway_env())
        assert status == 200, answer[:300]
        status, answer = signed_s3("rgw", "PUT", f"/{BUCKET}/{OBJECT}", body=bytes(range(256)) * (SIZE // 256),
                                   env=self.gateway_env())
        assert status == 200, answer[:300]

    def gateway_env(self) -> dict[str, str]:
        return {"AWS_ENDPOINT_URL": self.env["PC_RGW_URL"], "AWS_ACCESS_KEY_ID": self.env["PC_RGW_ACCESS_KEY"],
                "AWS_SECRET_ACCESS_KEY": self.env["PC_RGW_SECRET_KEY"], "AWS_REGION": self.env["PC_RGW_REGION"]}

    def start(self) -> None:
        log = open(self.state / "log" / "radosgw-restarted.out", "ab")
        self.process = subprocess.Popen(
            ["radosgw", "-c", str(self.state / "ceph.conf"), "-n", "client.rgw", "-f"], stdout=log,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        (self.state / "radosgw.pid").write_text(f"{self.process.pid}\n")  # so `rgw.sh stop` stops it too
        assert _wait(lambda: _answers(self.env["PC_RGW_URL"]), timeout=60), "radosgw did not come back"

    def kill(self) -> None:
        pid = int((self.state / "radosgw.pid").read_text())
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        if self.process and self.process.pid == pid:
            self.process.wait(timeout=10)
        else:
            _wait(lambda: not Path(f"/proc/{pid}").exists() or "Z" in _process_state(pid), timeout=10)

    def stop_cluster(self) -> None:
        script = Path(__file__).resolve().parents[2] / "scripts" / "rgw.sh"
        subprocess.run([str(script), "stop"], env={**os.environ, "PC_RGW_STATE": str(self.state)}, timeout=60)


def _answers(url: str) -> bool:
    try:
        return request("GET", url + "/").status in (200, 403)
    except OSError:
        return False


def _process_state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


@pytest.fixture(scope="module")
def rados_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RadosGateway]:
    if unavailable("rgw"):
        pytest.skip(unavailable("rgw") or "")
    rgw = RadosGateway(tmp_path_factory.mktemp("faults-rgw") / "state")
    try:
        rgw.boot()
        yield rgw
    finally:
        rgw.stop_cluster()


@pytest.fixture(params=["gcs", "rgw"])
def fleet(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[FakeGCS | RadosGateway, Server]]:
    if request.param == "gcs":
        fake: FakeGCS | RadosGateway = FakeGCS(_fake_gcs_binary(), tmp_path)
        fake.start()
        bucket, env = f"gs://{BUCKET}", {"STORAGE_EMULATOR_HOST": fake.url}
    else:
        fake = request.getfixturevalue("rados_gateway")
        if not _answers(fake.env["PC_RGW_URL"]):
            fake.start()  # killed by the previous test
        bucket, env = f"s3://{BUCKET}", fake.gateway_env()
    rules = tmp_path / "allow.rules"
    rules.write_text(ALLOW_ALL_RULES)
    key = tmp_path / "signing.key"
    signing_key_file(key, "k1")
    server = Server(workdir=tmp_path / "gw", args=["--bucket", f"{BUCKET}={bucket}", "--rules", str(rules),
                                                   "--signing-key", str(key)],
                    env=env, name="faults")
    try:
        server.start()
        yield fake, server
    finally:
        server.stop(timeout=10)
        server.kill()
        if isinstance(fake, FakeGCS):
            fake.kill()  # radosgw stays up for the next test (its cluster is the module's)


def _media_path() -> str:
    return f"/v0/b/{BUCKET}/o/{urllib.parse.quote(OBJECT, safe='')}?alt=media"


def _open_download(server: Server) -> tuple[socket.socket, int, bytes]:
    """Sends a download request on a small receive buffer; returns the socket, Content-Length and body bytes read."""
    sock = socket.create_connection(("127.0.0.1", server.port))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    sock.sendall(f"GET {_media_path()} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(65536)
        assert chunk, head
        head += chunk
    head, _, body = head.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    assert lines[0].split()[1] == "200", lines[0]
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    return sock, int(headers["content-length"]), body


def _metrics(server: Server) -> dict[str, float]:
    text = request("GET", f"{server.url}/metrics").body.decode()
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            values[sample.name] = values.get(sample.name, 0.0) + sample.value
    return values


def _open_fds(server: Server) -> int:
    assert server.process is not None
    return len(os.listdir(f"/proc/{server.process.pid}/fd"))


def _wait(predicate, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def test_upstream_killed_mid_download_truncates_and_is_counted(fleet: tuple[FakeGCS | RadosGateway, Server]) -> None:
    fake, server = fleet
    sock, length, body = _open_download(server)
    assert length == SIZE
    received = len(body)
    while received < (1 << 20):
        chunk = sock.recv(65536)
        assert chunk
        received += len(chunk)
    fake.kill()
    sock.settimeout(30)
    while True:
        try:
            chunk = sock.recv(1 << 20)
        except ConnectionResetError:  # the gateway aborts the connection (RST): also never a clean end
            break
        if not chunk:
            break
        received += len(chunk)
    sock.close()
    # The connection ended before Content-Length bytes: a client can tell this from a complete download.
    assert received < SIZE, received
    assert _wait(lambda: _metrics(server).get("portcullis_upstream_stream_errors_total", 0) >= 1)


def test_upstream_down_is_503_with_retry_after_then_recovers(fleet: tuple[FakeGCS | RadosGateway, Server]) -> None:
    fake, server = fleet
    meta_url = f"{server.url}/v0/b/{BUCKET}/o/{OBJECT}"
    assert request("GET", meta_url).status == 200
    fake.kill()
    answers = [request("GET", meta_url) for _ in range(8)]
    for answer in answers:
        assert answer.status == 503, (answer.status, answer.body[:200])
        assert int(answer.headers["retry-after"]) >= 1
        error = json.loads(answer.body)["error"]
        assert error["code"] == 503 and error["message"]
    # Once the breaker is open the answer comes without trying the upstream.
    started = time.monotonic()
    assert request("GET", meta_url).status == 503
    assert time.monotonic() - started < 1.0
    assert _wait(lambda: request("GET", f"{server.url}/readyz").status == 503)
    fake.start()  # same port; fake-gcs-server: a fresh memory backend with the object uploaded again
    assert _wait(lambda: request("GET", meta_url).status == 200, timeout=30)
    assert _wait(lambda: request("GET", f"{server.url}/readyz").status == 200, timeout=30)


def test_client_disconnects_abort_upstream_transfers(fleet: tuple[FakeGCS | RadosGateway, Server]) -> None:
    _, server = fleet
    # Warm up: connection pools, metrics families and lazily opened files exist before the baseline.
    sock, _, _ = _open_download(server)
    sock.close()
    assert _wait(lambda: _metrics(server).get("portcullis_upstream_active_transfers", 1) == 0)
    baseline = _open_fds(server)
    for _ in range(100):
        sock, _, _ = _open_download(server)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        sock.close()  # RST mid-stream
    assert _wait(lambda: _metrics(server).get("portcullis_upstream_active_transfers", 1) == 0)
    # Pooled keep-alive connections to the upstream may stay open; nothing may grow with the disconnects.
    assert _wait(lambda: _open_fds(server) <= baseline + 8), (_open_fds(server), baseline)
