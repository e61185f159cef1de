#!/usr/bin/env python3
"""CPU time and heap allocations per request of one or more gateway binaries, measured side by side.

    bench/request_cost.py --binary before=/path/a --binary after=/path/b [--rounds 3] [--seconds 5]
                          [--scenarios S2 S3 S13 S14] [--allocations]
                          [--gateway-env LABEL:KEY=VALUE ...] [--otlp-sink LABEL ...]

Each binary serves the S2 (metadata GET + JWT + rules) and S3 (4 KiB alt=media + JWT + rules) objects of
`bench.py` from a gateway started exactly as `bench.py` starts it; S13/S14 request the same two objects through
the JSON API (`/storage/v1/b/{bucket}/o/{name}`, metadata and `alt=media`); S19 GETs the 4 KiB object through the
S3 surface (`--s3-listen`) with one presigned URL, its access key mapped to the bench user as `bench.py` maps it;
S16 reads a 17-byte object's metadata through v0 from a second bucket, `gs://` on one fake-gcs-server started here
and shared by every gateway (the proxied metadata read of `bench.py` S16). Rounds alternate the binaries (the order
flips every round), each run is `wrk -t2 -c64`, and a run's figures are:

- CPU µs per request: utime + stime of the gateway process (all threads, /proc/PID/stat) over the run,
  divided by the requests wrk completed;
- allocations per request (`--allocations`): the gateway runs with bench/alloc_count.c preloaded (built
  here with the system C compiler), which counts malloc/calloc/realloc/posix_memalign/aligned_alloc calls;
  the count is read before and after the run (SIGUSR2). The preload slows every allocation a little, so
  CPU figures of a run with `--allocations` are not comparable to runs without it.

Labels name gateways, not files: one binary may serve under several labels with different settings.
`--gateway-env LABEL:KEY=VALUE` sets an environment variable for that gateway only; `--otlp-sink LABEL` points
that gateway's `PORTCULLIS_OTLP_ENDPOINT` at a collector started here that accepts every OTLP export and discards
it (counting exports and bytes, printed at the end). Tracing off against 1 % sampling, same binary, same run:

    bench/request_cost.py --binary off=.build/release/portcullis --binary traced=.build/release/portcullis \
        --otlp-sink traced --gateway-env traced:PORTCULLIS_TRACE_SAMPLE_RATIO=0.01

Prints one line per run and the medians per binary and scenario, with ratios to the first binary.
"""
from __future__ import annotations

import argparse
import http.server
import json
import os
import secrets
import signal
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (bench.py: Portcullis, KeySet, http helpers)
import s3bench  # noqa: E402  (s3bench.py: presign)


def build_shim(workdir: Path) -> Path:
    return bench.build_c("alloc_count.c", workdir / "alloc_count.so", "-shared", "-fPIC")


class DiscardingCollector:
    """An OTLP/HTTP collector that answers 200 to every `POST /v1/traces` and keeps nothing but counts."""

    def __init__(self) -> None:
        self.exports = 0
        self.bytes = 0
        collector = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                self.rfile.read(length)
                collector.exports += 1
                collector.bytes += length
                self.send_response(200 if self.path == "/v1/traces" else 404)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


class Gateway:
    def __init__(self, label: str, binary: str, workdir: Path, keys: bench.KeySet, shim: Path | None,
                 extra_env: dict[str, str] | None = None, gcs: bench.FakeGCS | None = None) -> None:
        self.label = label
        self.counts = workdir / "alloc-counts.txt"
        env = {"LD_PRELOAD": str(shim), "ALLOC_COUNT_FILE": str(self.counts)} if shim else {}
        env.update(extra_env or {})
        self.s3_secret = secrets.token_urlsafe(30)
        self.s3_port = bench.free_port()
        s3_keys = workdir / "s3-keys.json"
        s3_keys.write_text(json.dumps({"keys": [{"id": bench.Bench.S3_KEY_ID, "secret": self.s3_secret,
                                                 "uid": "benchuser", "claims": {"role": "bench"}}]}))
        s3_keys.chmod(0o600)
        buckets = None
        self.gcs = gcs
        if gcs:
            env["STORAGE_EMULATOR_HOST"] = gcs.url
            buckets = [f"{bench.BUCKET}=file:{workdir / 'data'}",
                       f"{bench.Bench.GCS_BUCKET}=gs://{bench.Bench.GCS_BUCKET}"]
        self.server = bench.Portcullis(binary, workdir, keys, env=env or None, buckets=buckets,
                                       extra_args=["--s3-listen", f"127.0.0.1:{self.s3_port}", "--s3-keys",
                                                   str(s3_keys)])
        self.auth: dict[str, str] = {}
        self.presigned = ""

    def start(self, token: str) -> None:
        self.server.start()
        self.auth = {"Authorization": f"Bearer {token}"}
        url = f"{self.server.url}/v0/b/{bench.BUCKET}/o?name="
        deadline = time.monotonic() + 10
        while True:  # the key source may load just after /readyz
            status, _, body = bench.http_request("POST", url + "bench%2Fmeta.json", body=b'{"hello":"world"}',
                                                 headers={"Content-Type": "application/json", **self.auth})
            if status == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        assert status == 200, body
        status, _, body = bench.http_request("POST", url + "bench%2F4k.bin", body=os.urandom(4096),
                                             headers={"Content-Type": "application/octet-stream", **self.auth})
        assert status == 200, body
        self.presigned = s3bench.presign("GET", f"http://127.0.0.1:{self.s3_port}", bench.BUCKET, "bench/4k.bin",
                                         bench.Bench.S3_KEY_ID, self.s3_secret)
        status, _, body = bench.http_request("GET", self.presigned)
        assert status == 200 and len(body) == 4096, (status, body[:200])
        if self.gcs:
            # One read before any load: the first v0 read of the object gives it a download token (an update).
            status, _, body = bench.http_request("GET", self.url("S16"), headers=self.auth)
            assert status == 200, (status, body[:200])

    def url(self, scenario: str) -> str:
        if scenario == "S19":
            return self.presigned
        if scenario == "S16":
            return f"{self.server.url}/v0/b/{bench.Bench.GCS_BUCKET}/o/bench%2Fmeta.json"
        surface = "/storage/v1/b/" if scenario in ("S13", "S14") else "/v0/b/"
        base = f"{self.server.url}{surface}{bench.BUCKET}/o/"
        return base + ("bench%2Fmeta.json" if scenario in ("S2", "S13") else "bench%2F4k.bin?alt=media")

    def allocation_count(self) -> int:
        pid = self.server.process.pid
        self.counts.unlink(missing_ok=True)
        os.kill(pid, signal.SIGUSR2)
        for _ in range(500):
            if self.counts.exists() and self.counts.read_text().endswith("\n"):
                return int(self.counts.read_text().split()[0])
            time.sleep(0.002)
        raise RuntimeError("the allocation counter did not answer")

    def run(self, scenario: str, seconds: int, allocations: bool) -> tuple[float, float | None, float]:
        pid = self.server.process.pid
        allocated = self.allocation_count() if allocations else 0
        cpu = bench.cpu_seconds(pid)
        result = bench.wrk(self.url(scenario), seconds, headers=None if scenario == "S19" else self.auth)
        cpu = bench.cpu_seconds(pid) - cpu
        allocated = self.allocation_count() - allocated if allocations else 0
        if result.non_2xx or result.errors:
            status, _, body = bench.http_request("GET", self.url(scenario), headers=None if scenario == "S19" else self.auth)
            raise RuntimeError(f"{self.label} {scenario}: {result.non_2xx} non-2xx, {result.errors} socket errors; "
                               f"now {status} {body[:200]!r}")
        served = result.requests
        return cpu / served * 1e6, (allocated / served if allocations else None), result.requests_per_second


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", action="append", required=True, metavar="LABEL=PATH")
    parser.add_argument("--scenarios", nargs="*", default=["S2", "S3"], choices=["S2", "S3", "S13", "S14", "S16", "S19"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--allocations", action="store_true", help="count heap allocations (slower runs)")
    parser.add_argument("--gateway-env", action="append", default=[], metavar="LABEL:KEY=VALUE",
                        help="an environment variable for one gateway (repeatable)")
    parser.add_argument("--otlp-sink", action="append", default=[], metavar="LABEL",
                        help="export that gateway's spans to a discarding collector started here (repeatable)")
    args = parser.parse_args()
    labels = [spec.partition("=")[0] for spec in args.binary]
    extra_env: dict[str, dict[str, str]] = {label: {} for label in labels}
    for spec in args.gateway_env:
        label, _, assignment = spec.partition(":")
        key, equals, value = assignment.partition("=")
        if label not in extra_env or not equals or not key:
            parser.error(f"--gateway-env {spec}: expected LABEL:KEY=VALUE with a LABEL of --binary")
        extra_env[label][key] = value
    collector = DiscardingCollector() if args.otlp_sink else None
    for label in args.otlp_sink:
        if label not in extra_env:
            parser.error(f"--otlp-sink {label}: not a label of --binary")
        extra_env[label]["PORTCULLIS_OTLP_ENDPOINT"] = collector.url

    workdir = Path(tempfile.mkdtemp(prefix="pc-cost-"))
    workdir.chmod(0o755)
    keys = bench.KeySet.create(workdir)
    token = keys.token("benchuser", role="bench")
    shim = build_shim(workdir) if args.allocations else None
    gcs = None
    if "S16" in args.scenarios:
        gcs = bench.FakeGCS(bench.find_fake_gcs(None), workdir)
        gcs.start()
        gcs.create_bucket(bench.Bench.GCS_BUCKET)
        meta = workdir / "meta.json"
        meta.write_bytes(b'{"hello":"world"}')
        gcs.upload(bench.Bench.GCS_BUCKET, "bench/meta.json", meta)
    gateways = []
    for spec in args.binary:
        label, _, path = spec.partition("=")
        (workdir / label).mkdir()
        gateways.append(Gateway(label, path, workdir / label, keys, shim, extra_env[label], gcs))
    results: dict[tuple[str, str], list[tuple[float, float | None, float]]] = {}
    try:
        for gateway in gateways:
            gateway.start(token)
        for round_index in range(args.rounds):
            order = gateways if round_index % 2 == 0 else list(reversed(gateways))
            for scenario in args.scenarios:
                for gateway in order:
                    cpu, allocs, rate = gateway.run(scenario, args.seconds, args.allocations)
                    results.setdefault((gateway.label, scenario), []).append((cpu, allocs, rate))
                    extra = f", {allocs:.1f} allocations/req" if allocs is not None else ""
                    print(f"round {round_index + 1} {scenario} {gateway.label}: {cpu:.1f} CPU µs/req{extra}, "
                          f"{rate:,.0f} req/s", flush=True)
    finally:
        for gateway in gateways:
            gateway.server.stop()
        if gcs:
            gcs.stop()
        # The gateways' data and access logs: gigabytes after a few rounds, which repeated runs would pile up.
        shutil.rmtree(workdir, ignore_errors=True)
    print("\nmedians:")
    first = gateways[0].label
    for scenario in args.scenarios:
        base = statistics.median(r[0] for r in results[(first, scenario)])
        for gateway in gateways:
            runs = results[(gateway.label, scenario)]
            cpu = statistics.median(r[0] for r in runs)
            rate = statistics.median(r[2] for r in runs)
            allocs = [r[1] for r in runs if r[1] is not None]
            text = f", {statistics.median(allocs):.1f} allocations/req" if allocs else ""
            print(f"{scenario} {gateway.label}: {cpu:.1f} CPU µs/req ({cpu / base:.2f}× {first}){text}, "
                  f"{rate:,.0f} req/s")
    if collector:
        print(f"\nOTLP sink: {collector.exports} exports, {collector.bytes:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
