#!/usr/bin/env python3
"""`make soak`: endurance of one gateway under mixed traffic (never part of `make test`).

Starts Portcullis exactly as bench/bench.py does (embedded backend, RS256 JWKS, bench/typical.rules), seeds a
set of objects, measures the maximum rate of the traffic mix for a short probe, then drives the same mix at
`--load` (default 80 %) of that rate for `--minutes` (default `SOAK_MINUTES`, else 30). The mix: metadata GETs,
4 KiB downloads, list pages, small uploads, resumable uploads (start, two 256 KiB chunks, finalize), PATCHes,
DELETEs, and clients that hang up in the middle of an upload body (half of them with a TCP reset).

Every minute it records the gateway's RSS, open descriptors and CPU time (/proc), the host's steal time, p50/p99
latency, requests and errors into bench/results/soak-<time>.json and redraws bench/results/soak-<time>.png
(matplotlib). At the end it prints the pass criteria and exits 1 when one fails:
  * no 5xx response;
  * RSS drift < 5 % between minute 5 (the middle minute of a run shorter than 10 minutes: the first minutes are
    warm-up, RSS grows while caches and allocator arenas fill) and the last minute;
  * open descriptors flat: the last minute within 8 (or 2 %) of that reference minute;
  * p99 not rising: from the reference minute on, the median p99 of the last third of the minutes ≤ 1.5 × that
    of the first third.

Load generation: `--workers` processes × `--threads` threads, each thread pacing its share of the rate with
keep-alive connections (http.client). The generator shares the machine with the gateway, so the "maximum" is
that of this generator against this gateway on this machine; the point is a steady load near it.
"""
from __future__ import annotations

import argparse
import collections
import datetime
import http.client
import json
import multiprocessing
import os
import random
import shutil
import socket
import statistics
import struct
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import BUCKET, ROOT, KeySet, Portcullis, cpu_seconds, log, proc_status  # noqa: E402

STABLE = 200      # objects only read (never deleted)
CHURN = 200       # objects uploaded over, patched and deleted
PREFIX = "bench/soak/"
CHUNK = 256 * 1024

# (kind, weight): the share of each operation in the mix.
MIX = [("get", 30), ("media", 20), ("list", 8), ("upload", 15), ("resumable", 3), ("patch", 10), ("delete", 9),
       ("vanish", 5)]


def quote(name: str) -> str:
    return urllib.parse.quote(name, safe="")


class Client:
    """One load thread's connection and operations. Each operation returns its HTTP status (0: none expected)."""

    def __init__(self, port: int, token: str, rng: random.Random) -> None:
        self.port = port
        self.auth = {"Authorization": f"Bearer {token}"}
        self.rng = rng
        self.conn: http.client.HTTPConnection | None = None

    def request(self, method: str, target: str, body: bytes | None = None, headers: dict | None = None
                ) -> tuple[int, http.client.HTTPResponse, bytes]:
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            try:
                self.conn.request(method, target, body=body, headers={**self.auth, **(headers or {})})
                response = self.conn.getresponse()
                data = response.read()
                if response.getheader("Connection", "").lower() == "close":
                    self.conn.close()
                    self.conn = None
                return response.status, response, data
            except (ConnectionError, http.client.RemoteDisconnected, http.client.BadStatusLine):
                # A keep-alive connection the server closed while idle: one retry on a new connection.
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def object_target(self, name: str, **query: str) -> str:
        target = f"/v0/b/{BUCKET}/o/{quote(name)}"
        return target + ("?" + urllib.parse.urlencode(query) if query else "")

    def get(self) -> int:
        return self.request("GET", self.object_target(f"{PREFIX}stable-{self.rng.randrange(STABLE)}"))[0]

    def media(self) -> int:
        return self.request("GET", self.object_target(f"{PREFIX}stable-{self.rng.randrange(STABLE)}",
                                                      alt="media"))[0]

    def list(self) -> int:
        query = urllib.parse.urlencode({"prefix": PREFIX, "maxResults": "100"})
        return self.request("GET", f"/v0/b/{BUCKET}/o?{query}")[0]

    def upload(self) -> int:
        name = f"{PREFIX}churn-{self.rng.randrange(CHURN)}"
        body = os.urandom(self.rng.choice((1, 512, 4096, 32768)))
        return self.request("POST", f"/v0/b/{BUCKET}/o?" + urllib.parse.urlencode({"name": name}), body=body,
                            headers={"Content-Type": "application/octet-stream"})[0]

    def resumable(self) -> int:
        name = f"{PREFIX}churn-{self.rng.randrange(CHURN)}"
        payload = os.urandom(2 * CHUNK)
        status, response, _ = self.request(
            "POST", f"/v0/b/{BUCKET}/o?" + urllib.parse.urlencode({"name": name}),
            body=json.dumps({"name": name}).encode(),
            headers={"Content-Type": "application/json", "X-Goog-Upload-Protocol": "resumable",
                     "X-Goog-Upload-Command": "start", "X-Goog-Upload-Header-Content-Length": str(len(payload))})
        if status != 200:
            return status
        session = urllib.parse.urlsplit(response.getheader("X-Goog-Upload-URL", ""))
        target = session.path + (f"?{session.query}" if session.query else "")
        for offset in (0, CHUNK):
            last = offset + CHUNK >= len(payload)
            status = self.request("POST", target, body=payload[offset:offset + CHUNK], headers={
                "X-Goog-Upload-Command": "upload, finalize" if last else "upload",
                "X-Goog-Upload-Offset": str(offset)})[0]
            if status != 200:
                return status
        return status

    def patch(self) -> int:
        name = f"{PREFIX}churn-{self.rng.randrange(CHURN)}"
        body = json.dumps({"customMetadata": {"soak": str(self.rng.randrange(1 << 30))}}).encode()
        return self.request("PATCH", self.object_target(name), body=body,
                            headers={"Content-Type": "application/json"})[0]

    def delete(self) -> int:
        return self.request("DELETE", self.object_target(f"{PREFIX}churn-{self.rng.randrange(CHURN)}"))[0]

    def vanish(self) -> int:
        """An upload whose client hangs up after a quarter of the body it announced (FIN or TCP reset)."""
        name = f"{PREFIX}vanished-{self.rng.randrange(CHURN)}"
        length = 64 * 1024
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        try:
            head = (f"POST /v0/b/{BUCKET}/o?{urllib.parse.urlencode({'name': name})} HTTP/1.1\r\n"
                    f"Host: soak\r\nAuthorization: {self.auth['Authorization']}\r\n"
                    f"Content-Type: application/octet-stream\r\nContent-Length: {length}\r\n\r\n")
            sock.sendall(head.encode() + os.urandom(length // 4))
            if self.rng.random() < 0.5:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        finally:
            sock.close()
        return 0


def load_thread(port: int, token: str, rate: float, stop_at: float, seed: int, out: list, lock: threading.Lock
                ) -> None:
    """Runs the mix at `rate` operations/s (unpaced when 0) until `stop_at`; appends (end time, kind, status,
    seconds) to `out`. Status -1: the operation raised (connection refused or reset, timeout)."""
    rng = random.Random(seed)
    client = Client(port, token, rng)
    kinds = [kind for kind, weight in MIX for _ in range(weight)]
    next_at = time.monotonic()
    while True:
        now = time.monotonic()
        if now >= stop_at:
            break
        if rate > 0:
            if next_at > now:
                time.sleep(next_at - now)
            # Open loop, but a thread that fell behind (a slow fsync) does not burst to catch up by more than 1 s.
            next_at = max(next_at + 1 / rate, time.monotonic() - 1)
        kind = rng.choice(kinds)
        started = time.monotonic()
        try:
            status = getattr(client, kind)()
        except (OSError, http.client.HTTPException):
            status = -1
            client.conn = None
        ended = time.monotonic()
        with lock:
            out.append((time.time(), kind, status, ended - started))


def load_process(port: int, token: str, rate: float, stop_at_wall: float, threads: int, seed: int,
                 queue: multiprocessing.Queue) -> None:
    """`threads` load threads sharing `rate`; ships their records to `queue` once a second, then None."""
    records: list = []
    lock = threading.Lock()
    stop_at = time.monotonic() + (stop_at_wall - time.time())
    workers = [threading.Thread(target=load_thread, args=(port, token, rate / threads, stop_at, seed * 1000 + i,
                                                          records, lock), daemon=True) for i in range(threads)]
    for worker in workers:
        worker.start()
    while any(worker.is_alive() for worker in workers):
        time.sleep(1)
        with lock:
            batch, records[:] = list(records), []
        if batch:
            queue.put(batch)
    with lock:
        if records:
            queue.put(list(records))
    queue.put(None)


def drive(port: int, token: str, rate: float, seconds: float, workers: int, threads: int, on_batch) -> None:
    """Runs the load processes for `seconds`, handing every record batch to `on_batch` as it arrives."""
    queue: multiprocessing.Queue = multiprocessing.Queue()
    stop_at = time.time() + seconds
    processes = [multiprocessing.Process(target=load_process,
                                         args=(port, token, rate / workers, stop_at, threads, 1 + i, queue))
                 for i in range(workers)]
    for process in processes:
        process.start()
    finished = 0
    while finished < workers:
        batch = queue.get()
        if batch is None:
            finished += 1
        else:
            on_batch(batch)
    for process in processes:
        process.join()


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def open_descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def host_cpu_ticks() -> tuple[int, int]:
    """(all ticks, steal ticks) of the machine's `cpu` line in /proc/stat: steal is time the hypervisor ran
    someone else while this machine had work — a minute that slows with steal slowed for the host's reasons."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return sum(values[:8]), values[7]


def seed_objects(gateway: Portcullis, token: str) -> None:
    client = Client(gateway.port, token, random.Random(0))
    body = os.urandom(4096)
    for i in range(STABLE):
        status = client.request("POST", f"/v0/b/{BUCKET}/o?" + urllib.parse.urlencode({"name": f"{PREFIX}stable-{i}"}),
                                body=body, headers={"Content-Type": "application/octet-stream"})[0]
        if status != 200:
            raise RuntimeError(f"seeding {PREFIX}stable-{i}: HTTP {status}")
    for i in range(CHURN):
        client.request("POST", f"/v0/b/{BUCKET}/o?" + urllib.parse.urlencode({"name": f"{PREFIX}churn-{i}"}),
                       body=b"x", headers={"Content-Type": "application/octet-stream"})


def plot(minutes: list[dict], path: Path, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [m["minute"] for m in minutes]
    figure, axes = plt.subplots(4, 1, figsize=(10, 11), sharex=True)
    axes[0].plot(xs, [m["rss_mib"] for m in minutes], marker="o")
    axes[0].set_ylabel("RSS (MiB)")
    axes[1].plot(xs, [m["open_fds"] for m in minutes], marker="o", color="tab:green")
    axes[1].set_ylabel("open descriptors")
    axes[2].plot(xs, [m["p50_ms"] for m in minutes], marker="o", label="p50")
    axes[2].plot(xs, [m["p99_ms"] for m in minutes], marker="o", label="p99")
    axes[2].set_ylabel("latency (ms)")
    axes[2].legend()
    axes[3].plot(xs, [m["requests_per_second"] for m in minutes], marker="o", label="ops/s")
    axes[3].set_ylabel("ops/s")
    errors = axes[3].twinx()
    errors.bar(xs, [m["status_5xx"] for m in minutes], color="tab:red", alpha=0.5, label="5xx")
    errors.bar(xs, [m["client_errors"] for m in minutes], bottom=[m["status_5xx"] for m in minutes],
               color="tab:orange", alpha=0.5, label="client errors")
    errors.set_ylim(0, max([1] + [m["status_5xx"] + m["client_errors"] for m in minutes]) * 1.1)
    errors.set_ylabel("5xx + client errors / minute")
    axes[3].set_xlabel("minute")
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def verdicts(minutes: list[dict]) -> list[tuple[str, bool, str]]:
    total = len(minutes)
    ref = minutes[min(4, total // 2)]  # minute 5; the middle minute of a run shorter than 10 minutes
    last = minutes[-1]
    drift = (last["rss_mib"] - ref["rss_mib"]) / ref["rss_mib"]
    fds = last["open_fds"] - ref["open_fds"]
    fd_slack = max(8, round(0.02 * ref["open_fds"]))
    window = [m["p99_ms"] for m in minutes[minutes.index(ref):]]
    third = max(1, len(window) // 3)
    early, late = statistics.median(window[:third]), statistics.median(window[-third:])
    fivexx = sum(m["status_5xx"] for m in minutes)
    return [
        ("no 5xx", fivexx == 0, f"{fivexx} responses with status ≥ 500"),
        ("RSS drift < 5 %", abs(drift) < 0.05,
         f"minute {ref['minute']} {ref['rss_mib']:.1f} MiB → minute {last['minute']} {last['rss_mib']:.1f} MiB "
         f"({drift * 100:+.1f} %)"),
        ("descriptors flat", fds <= fd_slack,
         f"minute {ref['minute']} {ref['open_fds']} → minute {last['minute']} {last['open_fds']} "
         f"({fds:+d}, allowed +{fd_slack})"),
        ("p99 not rising", late <= 1.5 * early,
         f"median p99 first third {early:.2f} ms, last third {late:.2f} ms ({late / early:.2f}×, allowed 1.5×)"),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=float(os.environ.get("SOAK_MINUTES", "30")))
    parser.add_argument("--load", type=float, default=float(os.environ.get("SOAK_LOAD", "0.8")),
                        help="fraction of the measured maximum rate (default 0.8)")
    parser.add_argument("--probe-seconds", type=float, default=20, help="length of the maximum-rate probe")
    parser.add_argument("--workers", type=int, default=4, help="load processes")
    parser.add_argument("--threads", type=int, default=4, help="threads per load process")
    parser.add_argument("--binary", default=os.environ.get("PORTCULLIS_BIN", str(ROOT / ".build/release/portcullis")))
    parser.add_argument("--rules", default=str(ROOT / "bench" / "typical.rules"))
    parser.add_argument("--out", default=str(ROOT / "bench" / "results"), help="directory of the JSON and PNG")
    args = parser.parse_args()

    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, png_path = out_dir / f"soak-{stamp}.json", out_dir / f"soak-{stamp}.png"
    workdir = Path(tempfile.mkdtemp(prefix="pc-soak-"))
    keys = KeySet.create(workdir)
    token = keys.token("benchuser", role="bench")
    gateway = Portcullis(args.binary, workdir, keys, Path(args.rules))
    gateway.start()
    pid = gateway.process.pid
    try:
        seed_objects(gateway, token)
        log(f"probing the maximum rate of the mix for {args.probe_seconds:.0f} s "
            f"({args.workers} processes × {args.threads} threads)")
        probe: list = []
        drive(gateway.port, token, 0, args.probe_seconds, args.workers, args.threads, probe.extend)
        maximum = len(probe) / args.probe_seconds
        rate = maximum * args.load
        log(f"maximum {maximum:,.0f} ops/s; soaking at {rate:,.0f} ops/s for {args.minutes:g} minutes")

        started = time.time()
        buckets: dict[int, list] = {}
        minutes: list[dict] = []
        lock = threading.Lock()
        result = {"commit": os.popen(f"git -C {ROOT} rev-parse HEAD").read().strip(), "started": stamp,
                  "binary": args.binary, "maximum_ops_per_second": maximum, "target_ops_per_second": rate,
                  "load": args.load, "mix": dict(MIX), "minutes": minutes}

        def on_batch(batch: list) -> None:
            with lock:
                for record in batch:
                    buckets.setdefault(int((record[0] - started) // 60), []).append(record)

        def sampler() -> None:
            cpu_before, (ticks_before, steal_before) = cpu_seconds(pid), host_cpu_ticks()
            for minute in range(1, int(args.minutes) + 1):
                time.sleep(max(0.0, started + 60 * minute - time.time()))
                rss, fds = proc_status(pid, "VmRSS"), open_descriptors(pid)
                cpu_now, (ticks_now, steal_now) = cpu_seconds(pid), host_cpu_ticks()
                gateway_cpu = cpu_now - cpu_before
                steal = (steal_now - steal_before) / max(1, ticks_now - ticks_before)
                cpu_before, ticks_before, steal_before = cpu_now, ticks_now, steal_now
                time.sleep(2)  # records of the minute's last second arrive once a second
                with lock:
                    records = buckets.pop(minute - 1, [])
                latencies = [r[3] * 1000 for r in records if r[2] > 0]
                statuses = [r[2] for r in records]
                entry = {"minute": minute, "rss_mib": rss / 2**20, "open_fds": fds,
                         "threads": proc_status(pid, "Threads"), "requests": len(records),
                         "requests_per_second": len(records) / 60,
                         "gateway_cpu_cores": gateway_cpu / 60,
                         "gateway_cpu_us_per_request": gateway_cpu * 1e6 / max(1, len(records)),
                         "host_steal_fraction": steal,
                         "p50_ms": percentile(latencies, 0.50), "p99_ms": percentile(latencies, 0.99),
                         "status_2xx": sum(1 for s in statuses if 200 <= s < 300),
                         "status_4xx": sum(1 for s in statuses if 400 <= s < 500),
                         "status_5xx": sum(1 for s in statuses if s >= 500),
                         "client_errors": sum(1 for s in statuses if s < 0),
                         "vanished": sum(1 for r in records if r[1] == "vanish"),
                         "status_by_kind": {kind: dict(sorted(collections.Counter(r[2] for r in records
                                                                                 if r[1] == kind).items()))
                                            for kind, _ in MIX},
                         "by_kind_p99_ms": {kind: percentile([r[3] * 1000 for r in records if r[1] == kind and r[2] > 0],
                                                             0.99) for kind, _ in MIX}}
                minutes.append(entry)
                json_path.write_text(json.dumps(result, indent=2))
                plot(minutes, png_path, f"Portcullis soak {stamp}: {rate:,.0f} ops/s "
                                        f"({args.load:.0%} of {maximum:,.0f})")
                log(f"minute {minute}: RSS {entry['rss_mib']:.1f} MiB, {fds} fds, {entry['requests_per_second']:,.0f} "
                    f"ops/s, p50 {entry['p50_ms']:.2f} ms, p99 {entry['p99_ms']:.2f} ms, 4xx {entry['status_4xx']}, "
                    f"5xx {entry['status_5xx']}, client errors {entry['client_errors']}, gateway CPU "
                    f"{entry['gateway_cpu_us_per_request']:.0f} µs/op, host steal {steal:.1%}")

        sampling = threading.Thread(target=sampler, daemon=True)
        sampling.start()
        drive(gateway.port, token, rate, args.minutes * 60 + 1, args.workers, args.threads, on_batch)
        sampling.join()
        if gateway.process.poll() is not None:
            log(f"the gateway exited with {gateway.process.returncode}")
            return 1
    finally:
        gateway.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    checks = verdicts(minutes)
    result["verdicts"] = [{"criterion": name, "pass": ok, "detail": detail} for name, ok, detail in checks]
    json_path.write_text(json.dumps(result, indent=2))
    print(f"\nsoak: {args.minutes:g} minutes at {rate:,.0f} ops/s ({args.load:.0%} of a measured {maximum:,.0f})")
    for name, ok, detail in checks:
        print(f"  {'PASS' if ok else 'FAIL'}  {name}: {detail}")
    print(f"minutes: {json_path.relative_to(ROOT) if json_path.is_relative_to(ROOT) else json_path}")
    print(f"plot:    {png_path.relative_to(ROOT) if png_path.is_relative_to(ROOT) else png_path}")
    return 0 if all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
