#!/usr/bin/env python3
"""List-page latency vs bucket size on the embedded backend, up to 1M objects (cost should scale with the page, not the bucket).

Filling a bucket through the API runs at ~700 objects/s on the 2-core machine, so each bucket is made by
uploading one object through v0 and cloning its index row N times with sqlite3 (names `big/n0000000…`, every
row sharing the one blob: a list reads only the index). Then a sequential keep-alive client times the first
page (300 requests) and a walk through every page, 1000 items each, interleaving the buckets.

    python3 bench/list_scaling.py --binary .build/release/portcullis --sizes 100000 1000000
"""
from __future__ import annotations

import argparse
import http.client
import json
import socket
import sqlite3
import subprocess
import tempfile
import time
import urllib.parse
from pathlib import Path

RULES = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /{all=**} { allow read, write: if true; }
  }
}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def clone_index_row(index: Path, count: int) -> None:
    """Fills an embedded index with `count` copies of its one object row, named `big/n0000000…`, all sharing
    that row's blob: a bucket of any size in seconds, without uploading it (the gateway must be stopped)."""
    db = sqlite3.connect(index)
    cursor = db.execute("SELECT * FROM objects LIMIT 1")
    row, columns = cursor.fetchone(), [d[0] for d in cursor.description]
    name = columns.index("name")
    insert = f"INSERT OR REPLACE INTO objects VALUES ({','.join('?' * len(columns))})"
    db.execute("BEGIN")
    for start in range(0, count, 50_000):
        batch = []
        for i in range(start, min(count, start + 50_000)):
            clone = list(row)
            clone[name] = f"big/n{i:07d}".encode() if isinstance(row[name], bytes) else f"big/n{i:07d}"
            batch.append(clone)
        db.executemany(insert, batch)
    db.commit()
    db.close()


class Gateway:
    def __init__(self, binary: str, root: Path, name: str) -> None:
        self.binary, self.data, self.port = binary, root / name, free_port()
        self.rules = root / "allow.rules"
        self.rules.write_text(RULES)
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [self.binary, "serve", "--listen", f"127.0.0.1:{self.port}", "--bucket", f"b=file:{self.data}",
             "--rules", str(self.rules)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                c.request("GET", "/readyz")
                if c.getresponse().status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("gateway did not become ready")

    def stop(self) -> None:
        if self.process:
            self.process.terminate()
            self.process.wait(timeout=30)

    def fill(self, count: int) -> None:
        self.start()
        c = http.client.HTTPConnection("127.0.0.1", self.port)
        c.request("POST", "/v0/b/b/o?name=seed", body=b"x")
        assert c.getresponse().status == 200
        self.stop()
        clone_index_row(self.data / "index.sqlite", count)
        self.start()


def page(c: http.client.HTTPConnection, token: str | None) -> tuple[float, str | None]:
    query = {"prefix": "big/", "delimiter": "/", "maxResults": "1000", **({"pageToken": token} if token else {})}
    started = time.perf_counter()
    c.request("GET", "/v0/b/b/o?" + urllib.parse.urlencode(query))
    response = c.getresponse()
    body = response.read()
    elapsed = (time.perf_counter() - started) * 1000
    assert response.status == 200, body[:200]
    return elapsed, json.loads(body).get("nextPageToken")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=".build/release/portcullis")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="portcullis-list-scaling-") as tmp:
        gateways = []
        try:
            for size in args.sizes:
                gateway = Gateway(args.binary, Path(tmp), f"d{size}")
                gateways.append((size, gateway))
                gateway.fill(size)
            for _ in range(args.runs):
                for size, gateway in gateways:
                    c = http.client.HTTPConnection("127.0.0.1", gateway.port)
                    for _ in range(20):
                        page(c, None)
                    first = [page(c, None)[0] for _ in range(300)]
                    walk, token = [], None
                    while True:
                        elapsed, token = page(c, token)
                        walk.append(elapsed)
                        if not token:
                            break
                    load = open("/proc/loadavg").read().split()[0]
                    print(f"{size:>9} objects: first page p50 {percentile(first, 50):.2f} ms p99 "
                          f"{percentile(first, 99):.2f} ms | {len(walk)} pages p50 {percentile(walk, 50):.2f} ms "
                          f"p99 {percentile(walk, 99):.2f} ms | load {load}", flush=True)
        finally:
            for _, gateway in gateways:
                gateway.stop()


if __name__ == "__main__":
    main()
