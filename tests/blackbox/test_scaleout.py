"""Three `portcullis serve` instances behind nginx act as one (docs/deploying.md).

The instances share one signing-key file, one rules file, one admin key and one backend. Backend: the GCS
emulator (fake-gcs-server, started by scripts/emulators.sh) when STORAGE_EMULATOR_HOST is set and the gateway
accepts gs:// buckets; otherwise the embedded backend on one shared directory. Caveat of the latter: the
embedded backend is single-host — the processes share the SQLite index through file locks (one writer at a time,
WAL readers), which is what lets this test run on one machine, but it is not how a fleet on several hosts is
deployed (use GCS or S3 there; docs/deploying.md).

nginx (deploy/nginx/lb.conf.template) balances round-robin with `proxy_next_upstream` for idempotent requests.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from harness import (ALLOW_ALL_RULES, ROOT, Nginx, Server, free_port, md5_b64, object_url, request,
                     signing_key_file, upload_url)

BUCKET = "fleet-bucket"
TEMPLATE = ROOT / "deploy" / "nginx" / "lb.conf.template"


@dataclass
class Fleet:
    shared: Path
    backend: str
    signing_key: Path
    rules: Path
    admin_key: str
    admin_key_path: Path
    instances: list[Server] = field(default_factory=list)
    lb: Nginx | None = None
    key_material: dict[str, bytes] = field(default_factory=dict)

    @property
    def url(self) -> str:
        assert self.lb is not None
        return self.lb.url

    def admin(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.admin_key}"}

    def restart(self, index: int) -> None:
        """SIGTERM one instance (drain), start it again on the same port, and wait until the balancer sends it
        traffic again (what a rolling update's readiness gate does) before the caller moves on."""
        server = self.instances[index]
        port = server.port
        assert server.stop(timeout=40) == 0, server.log_text()[-2000:]
        server.start(port=port)
        baseline = request_counts(server, ("GET",))
        deadline = time.monotonic() + 20
        while request_counts(server, ("GET",)) <= baseline:
            assert time.monotonic() < deadline, f"{server.name} gets no traffic after its restart"
            time.sleep(0.05)


def create_gcs_bucket(emulator: str, bucket: str) -> None:
    body = json.dumps({"name": bucket}).encode()
    response = request("POST", f"{emulator}/storage/v1/b?project=test", body=body,
                       headers={"Content-Type": "application/json"})
    assert response.status in (200, 409), response.body


def start_instances(fleet: Fleet, lb_port: int, backend: str, count: int = 3) -> None:
    for index in range(count):
        args = ["--bucket", f"{BUCKET}={backend}", "--rules", str(fleet.rules),
                "--signing-key", str(fleet.signing_key), "--admin-key", str(fleet.admin_key_path),
                "--public-url", f"http://127.0.0.1:{lb_port}", "--drain-timeout", "20"]
        server = Server(workdir=fleet.shared / f"instance{index}", args=args, name=f"instance{index}")
        fleet.instances.append(server)
        server.start()


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Fleet]:
    shared = tmp_path / "shared"
    shared.mkdir()
    rules = shared / "storage.rules"
    rules.write_text(ALLOW_ALL_RULES)
    admin_key = "fleet-admin-" + os.urandom(12).hex()
    admin_path = shared / "admin.key"
    admin_path.write_text(admin_key + "\n")
    signing = shared / "signing.key"
    material = signing_key_file(signing, "k1")
    fleet = Fleet(shared=shared, backend="", signing_key=signing, rules=rules, admin_key=admin_key,
                  admin_key_path=admin_path, key_material=material)
    lb_port = free_port()
    emulator = os.environ.get("STORAGE_EMULATOR_HOST")
    try:
        if emulator and os.environ.get("PC_SCALEOUT_BACKEND", "gcs") == "gcs":
            # With an emulator present the fleet must run on it: a failure here is a failure, not a fallback.
            emulator = emulator if emulator.startswith("http") else "http://" + emulator
            bucket = "fleet-" + os.urandom(4).hex()
            create_gcs_bucket(emulator, bucket)
            start_instances(fleet, lb_port, f"gs://{bucket}")
            fleet.backend = "gcs"
        if not fleet.instances:
            start_instances(fleet, lb_port, f"file:{shared / 'data'}")
            fleet.backend = "embedded"
        upstreams = "\n".join(f"        server 127.0.0.1:{s.port} max_fails=1 fail_timeout=2s;"
                              for s in fleet.instances)
        fleet.lb = Nginx(TEMPLATE, {"PORT": str(lb_port), "UPSTREAMS": upstreams}).start()
        yield fleet
    finally:
        if fleet.lb:
            fleet.lb.stop()
        for server in fleet.instances:
            server.stop(timeout=10)
            server.kill()


def direct(url: str, server: Server) -> str:
    """The same URL, sent straight to one instance instead of the load balancer."""
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(parts._replace(netloc=f"127.0.0.1:{server.port}"))


def put_object(base: str, name: str, payload: bytes, headers: dict[str, str] | None = None) -> dict:
    response = request("POST", upload_url(base, BUCKET, name), body=payload,
                       headers={"Content-Type": "application/octet-stream", **(headers or {})})
    assert response.status == 200, (response.status, response.body[:300])
    return response.json()


def request_counts(server: Server, methods: tuple[str, ...]) -> float:
    """v0 API requests with these methods this instance has answered (from its own /metrics)."""
    text = request("GET", server.url + "/metrics").body.decode()
    total = 0.0
    for family in text_string_to_metric_families(text):
        if family.name == "portcullis_http_requests":
            total += sum(s.value for s in family.samples
                         if s.name.endswith("_total") and s.labels.get("method") in methods
                         and s.labels.get("route", "").startswith("/v0/"))
    return total


def write_counts(server: Server) -> float:
    return request_counts(server, ("POST", "PUT"))


# --- 1. resumable upload whose chunks land on different instances --------------------------------------------

def test_resumable_upload_chunks_on_different_instances(fleet: Fleet) -> None:
    payload = os.urandom(4 * 1024 * 1024 + 12345)
    name = "resumable/big file.bin"
    before = [write_counts(s) for s in fleet.instances]
    start = request("POST", upload_url(fleet.url, BUCKET, name),
                    body=json.dumps({"name": name, "contentType": "application/octet-stream"}).encode(),
                    headers={"Content-Type": "application/json; charset=utf-8",
                             "X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start",
                             "X-Goog-Upload-Header-Content-Length": str(len(payload)),
                             "X-Goog-Upload-Header-Content-Type": "application/octet-stream"})
    assert start.status == 200, start.body
    assert start.header("x-goog-upload-status") == "active"
    session = start.header("x-goog-upload-url")
    assert session and session.startswith(fleet.url + "/"), session

    chunk = 1024 * 1024
    offsets = list(range(0, len(payload), chunk))
    # Chunk i goes straight to instance i % 3, the last one through the balancer; a status query on yet
    # another instance in between must report exactly what was stored.
    for i, offset in enumerate(offsets):
        last = i == len(offsets) - 1
        target = session if last else direct(session, fleet.instances[i % 3])
        body = payload[offset:offset + chunk]
        response = request("POST", target, body=body,
                           headers={"X-Goog-Upload-Command": "upload, finalize" if last else "upload",
                                    "X-Goog-Upload-Offset": str(offset)})
        assert response.status == 200, (i, response.status, response.body[:300])
        if not last:
            assert response.header("x-goog-upload-status") == "active"
            query = request("POST", direct(session, fleet.instances[(i + 1) % 3]),
                            headers={"X-Goog-Upload-Command": "query"})
            assert query.status == 200
            assert query.header("x-goog-upload-size-received") == str(offset + len(body))
        else:
            assert response.header("x-goog-upload-status") == "final"
            metadata = response.json()
            assert metadata["md5Hash"] == md5_b64(payload)
            assert metadata["size"] == str(len(payload))

    after = [write_counts(s) for s in fleet.instances]
    assert sum(1 for b, a in zip(before, after) if a > b) == 3, "chunks did not reach all three instances"
    downloaded = request("GET", object_url(fleet.url, BUCKET, name, alt="media")).body
    assert hashlib.md5(downloaded).digest() == hashlib.md5(payload).digest()


# --- 2. a list paginated across instances returns every object exactly once ----------------------------------

def test_paginated_list_across_instances(fleet: Fleet) -> None:
    names = [f"list/item-{i:03d}.txt" for i in range(23)] + [f"list/sub{i}/x.txt" for i in range(4)]
    for name in names + ["other/outside.txt"]:
        put_object(fleet.url, name, name.encode())
    items: list[str] = []
    prefixes: list[str] = []
    token = None
    page = 0
    while True:
        query = {"prefix": "list/", "delimiter": "/", "maxResults": "4"}
        if token:
            query["pageToken"] = token
        base = fleet.instances[page % 3].url if page % 4 != 3 else fleet.url
        response = request("GET", f"{base}/v0/b/{BUCKET}/o?" + urllib.parse.urlencode(query))
        assert response.status == 200, response.body
        body = response.json()
        assert len(body["items"]) + len(body["prefixes"]) <= 4
        items += [item["name"] for item in body["items"]]
        prefixes += body["prefixes"]
        token = body.get("nextPageToken")
        page += 1
        if not token:
            break
        assert page < 50, "pagination does not terminate"
    assert page >= 7
    assert sorted(items) == sorted(n for n in names if n.count("/") == 1)
    assert len(items) == len(set(items))
    assert sorted(prefixes) == [f"list/sub{i}/" for i in range(4)]


# --- 3. a signed URL minted on one instance works on the others ----------------------------------------------

def test_signed_and_download_urls_work_on_every_instance(fleet: Fleet) -> None:
    payload = os.urandom(50_000)
    put_object(fleet.url, "signed/report.pdf", payload)
    minted = request("POST", object_url(fleet.instances[0].url, BUCKET, "signed/report.pdf") + "?signedUrl",
                     body=json.dumps({"method": "GET", "expiresIn": 600}).encode(),
                     headers={"Content-Type": "application/json", **fleet.admin()})
    assert minted.status == 200, minted.body
    signed = minted.json()["url"]
    assert signed.startswith(fleet.url)
    for server in fleet.instances:
        response = request("GET", direct(signed, server))
        assert response.status == 200, (server.name, response.status, response.body[:200])
        assert response.body == payload
    assert request("GET", signed).body == payload

    # Tampering with any query value breaks the seal everywhere.
    parts = urllib.parse.urlsplit(signed)
    query = urllib.parse.parse_qsl(parts.query)
    tampered_query = [(k, (v[:-1] + ("A" if v[-1:] != "A" else "B")) if i == len(query) - 1 else v)
                      for i, (k, v) in enumerate(query)]
    tampered = urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(tampered_query)))
    for server in fleet.instances:
        assert request("GET", direct(tampered, server)).status in (400, 401, 403)

    download = request("GET", object_url(fleet.instances[1].url, BUCKET, "signed/report.pdf",
                                         alt="downloadUrl"))
    assert download.status == 200, download.body
    url = download.json()["downloadUrl"]
    for server in fleet.instances:
        assert request("GET", direct(url, server)).body == payload


# --- 4. SIGKILL one instance mid-load -------------------------------------------------------------------------

@dataclass
class LoadStats:
    reads: int = 0
    read_failures: int = 0
    failure_samples: list[str] = field(default_factory=list)
    acked: dict[str, bytes] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


def reader(base: str, objects: dict[str, bytes], stats: LoadStats, stop: threading.Event, seed: int) -> None:
    rng = random.Random(seed)
    names = sorted(objects)
    while not stop.is_set():
        name = rng.choice(names)
        media = rng.random() < 0.5
        ok = False
        detail = ""
        try:
            if media:
                response = request("GET", object_url(base, BUCKET, name, alt="media"), timeout=10)
                ok = response.status == 200 and response.body == objects[name]
            else:
                response = request("GET", object_url(base, BUCKET, name), timeout=10)
                ok = response.status == 200 and response.json()["md5Hash"] == md5_b64(objects[name])
            detail = f"{response.status} {response.body[:100]!r}"
        except Exception as error:  # noqa: BLE001 — any failure counts against the success rate
            detail = repr(error)
        with stats.lock:
            stats.reads += 1
            if not ok:
                stats.read_failures += 1
                if len(stats.failure_samples) < 10:
                    stats.failure_samples.append(f"{name}: {detail}")


def writer(base: str, stats: LoadStats, stop: threading.Event, seed: int) -> None:
    counter = 0
    while not stop.is_set():
        counter += 1
        name = f"load/w{seed}-{counter:05d}"
        payload = os.urandom(32 * 1024)
        try:
            response = request("POST", upload_url(base, BUCKET, name), body=payload, timeout=10,
                               headers={"Content-Type": "application/octet-stream"})
            if response.status == 200 and response.json()["md5Hash"] == md5_b64(payload):
                with stats.lock:
                    stats.acked[name] = payload
        except Exception:  # noqa: BLE001 — an unacknowledged upload may fail; only acked ones must survive
            pass


def test_sigkill_one_instance_mid_load(fleet: Fleet) -> None:
    objects = {f"hot/obj-{i:02d}": os.urandom(8 * 1024 + i) for i in range(20)}
    for name, payload in objects.items():
        put_object(fleet.url, name, payload)
    stats = LoadStats()
    stop = threading.Event()
    threads = [threading.Thread(target=reader, args=(fleet.url, objects, stats, stop, i)) for i in range(4)]
    threads += [threading.Thread(target=writer, args=(fleet.url, stats, stop, i)) for i in range(2)]
    for thread in threads:
        thread.start()
    try:
        deadline = time.monotonic() + 120
        while stats.reads < 500 and time.monotonic() < deadline:
            time.sleep(0.01)
        fleet.instances[1].kill()
        killed_at = stats.reads
        while stats.reads < killed_at + 3000 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)
    assert stats.reads >= killed_at + 1000, f"too little load after the kill ({stats.reads - killed_at} reads)"
    success = 1 - stats.read_failures / stats.reads
    assert success >= 0.999, f"read success {success:.5f} over {stats.reads}: {stats.failure_samples}"
    assert stats.acked, "no upload was acknowledged during the load"
    for name, payload in stats.acked.items():
        response = request("GET", object_url(fleet.url, BUCKET, name, alt="media"))
        assert response.status == 200 and response.body == payload, f"acknowledged upload {name} lost"


# --- 5. a SIGTERM'd instance finishes its in-flight downloads ------------------------------------------------

def slow_download(url: str, result: dict, progress: threading.Event) -> None:
    import http.client
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    digest = hashlib.md5()
    received = 0
    try:
        conn.request("GET", parts.path + "?" + parts.query)
        response = conn.getresponse()
        result["status"] = response.status
        while True:
            block = response.read(256 * 1024)
            if not block:
                break
            digest.update(block)
            received += len(block)
            if received >= 1024 * 1024:
                progress.set()
            time.sleep(0.02)
    except Exception as error:  # noqa: BLE001
        result["error"] = repr(error)
    finally:
        result["received"] = received
        result["md5"] = digest.digest()
        conn.close()


def test_sigterm_instance_finishes_inflight_downloads(fleet: Fleet) -> None:
    payload = os.urandom(24 * 1024 * 1024)
    put_object(fleet.url, "drain/big.bin", payload)
    url = object_url(fleet.url, BUCKET, "drain/big.bin", alt="media")
    results = [dict() for _ in range(3)]
    progress = [threading.Event() for _ in range(3)]
    threads = []
    for i in range(3):  # round robin: one download per instance
        thread = threading.Thread(target=slow_download, args=(url, results[i], progress[i]))
        thread.start()
        threads.append(thread)
        assert progress[i].wait(30), "download did not start"
    victim = fleet.instances[0]
    victim.signal(15)
    # While it drains, the fleet keeps answering through the balancer.
    for _ in range(20):
        assert request("GET", object_url(fleet.url, BUCKET, "drain/big.bin")).status == 200
    for thread in threads:
        thread.join(90)
    for result in results:
        assert result.get("status") == 200 and "error" not in result, result
        assert result["received"] == len(payload)
        assert result["md5"] == hashlib.md5(payload).digest()
    assert victim.wait_exit(30) == 0
    assert "big.bin" in victim.log_text(), "the SIGTERM'd instance served none of the downloads"


# --- 6. signing-key rotation across the fleet ----------------------------------------------------------------

def mint_signed(fleet: Fleet, name: str) -> str:
    response = request("POST", object_url(fleet.url, BUCKET, name) + "?signedUrl",
                       body=json.dumps({"method": "GET", "expiresIn": 600}).encode(),
                       headers={"Content-Type": "application/json", **fleet.admin()})
    assert response.status == 200, response.body
    return response.json()["url"]


def rolling_restart(fleet: Fleet, probe: str) -> None:
    """Restart every instance in turn while a reader hammers the balancer: no read may fail."""
    stats = LoadStats()
    stop = threading.Event()
    objects = {probe: request("GET", object_url(fleet.url, BUCKET, probe, alt="media")).body}
    thread = threading.Thread(target=reader, args=(fleet.url, objects, stats, stop, 7))
    thread.start()
    try:
        for index in range(len(fleet.instances)):
            fleet.restart(index)
    finally:
        stop.set()
        thread.join(30)
    assert stats.reads > 0 and stats.read_failures == 0, stats.failure_samples


def test_signing_key_rotation(fleet: Fleet) -> None:
    payload = b"rotate me"
    put_object(fleet.url, "rotation/doc.txt", payload)
    for i in range(5):
        put_object(fleet.url, f"rotation/page-{i}", b"x")
    old_url = mint_signed(fleet, "rotation/doc.txt")
    first_page = request("GET", f"{fleet.url}/v0/b/{BUCKET}/o?prefix=rotation%2F&maxResults=2").json()
    old_cursor = first_page["nextPageToken"]

    # Step 1: add k2 as the signing key, keep k1 for verification; roll the fleet.
    fleet.key_material = signing_key_file(fleet.signing_key, "k2", "k1", secrets_by_id=fleet.key_material)
    rolling_restart(fleet, "rotation/doc.txt")
    new_url = mint_signed(fleet, "rotation/doc.txt")
    assert new_url != old_url
    for server in fleet.instances:
        assert request("GET", direct(old_url, server)).body == payload, "old key no longer verifies"
        assert request("GET", direct(new_url, server)).body == payload
        resumed = request("GET", f"{server.url}/v0/b/{BUCKET}/o?prefix=rotation%2F&maxResults=2&pageToken="
                          + urllib.parse.quote(old_cursor))
        assert resumed.status == 200, resumed.body

    # Step 2: remove k1; roll again. Capabilities sealed with k1 are now refused, k2's still work.
    signing_key_file(fleet.signing_key, "k2", secrets_by_id=fleet.key_material)
    rolling_restart(fleet, "rotation/doc.txt")
    for server in fleet.instances:
        assert request("GET", direct(old_url, server)).status in (400, 401, 403)
        fresh = request("GET", direct(new_url, server))
        assert fresh.body == payload, (new_url, fresh.status, fresh.body)
        stale = request("GET", f"{server.url}/v0/b/{BUCKET}/o?prefix=rotation%2F&maxResults=2&pageToken="
                        + urllib.parse.quote(old_cursor))
        assert stale.status == 400


# --- 7. rules update via SIGHUP without downtime ------------------------------------------------------------

RULES_PUBLIC_ONLY = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /public/{all=**} {
      allow read, write: if true;
    }
  }
}
"""
RULES_WITH_REPORTS = RULES_PUBLIC_ONLY.replace("""  }
}
""", """    match /reports/{file} {
      allow read: if file.matches('.*[.]csv');
    }
  }
}
""", 1)


def replace_file(path: Path, text: str) -> None:
    temporary = path.with_suffix(".tmp")
    temporary.write_text(text)
    temporary.replace(path)


def test_rules_update_via_sighup_without_downtime(fleet: Fleet) -> None:
    replace_file(fleet.rules, RULES_PUBLIC_ONLY)
    for server in fleet.instances:
        server.signal(1)
    put_object(fleet.url, "public/a.txt", b"public", headers=fleet.admin())
    put_object(fleet.url, "reports/q1.csv", b"secret,report", headers=fleet.admin())
    report = object_url("", BUCKET, "reports/q1.csv")

    def all_instances(status: int, timeout: float = 15) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(request("GET", server.url + report).status == status for server in fleet.instances):
                return True
            time.sleep(0.05)
        return False

    assert all_instances(403), "public-only rules not in force"
    stats = LoadStats()
    stop = threading.Event()
    thread = threading.Thread(target=reader, args=(fleet.url, {"public/a.txt": b"public"}, stats, stop, 3))
    thread.start()
    try:
        replace_file(fleet.rules, RULES_WITH_REPORTS)
        for server in fleet.instances:
            server.signal(1)
        assert all_instances(200), "new rules not picked up after SIGHUP"
        # Broken rules are refused: the fleet keeps the last good ruleset and keeps serving.
        replace_file(fleet.rules, "rules_version = '2'; service firebase.storage { match /b/{bucket}/o { allow")
        for server in fleet.instances:
            server.signal(1)
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            assert all(request("GET", server.url + report).status == 200 for server in fleet.instances)
            time.sleep(0.1)
    finally:
        stop.set()
        thread.join(30)
    assert all(server.process and server.process.poll() is None for server in fleet.instances)
    assert stats.reads > 0 and stats.read_failures == 0, stats.failure_samples
