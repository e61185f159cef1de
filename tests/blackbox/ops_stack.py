"""Real operations tooling for the black-box suites: Debian's Prometheus and Alertmanager on free loopback ports
with temporary storage, a fake-gcs-server upstream, a webhook receiver, and the metrics reference table of
docs/operations.md.

Each process is polled until ready (never a blind sleep) and stopped by its fixture. Prometheus scrapes every
second, so a test sees its traffic within seconds.
"""
from __future__ import annotations

import calendar
import http.server
import json
import os
import re
import shutil
import subprocess
import threading
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import harness
from harness import ROOT, free_port, request

SCRAPE_INTERVAL = "1s"


def binary(name: str) -> str:
    """A Debian binary the suites need; missing means the test packages are not installed (a failure)."""
    path = shutil.which(name)
    assert path, f"{name} not found: install Debian's prometheus and prometheus-alertmanager (scripts/deps.sh test)"
    return path


def wait_for(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.2) -> Any:
    """Polls `check` until it returns something truthy; fails with `what` and the last value after `timeout`."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except OSError as error:
            last = error
        else:
            if last:
                return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}; last: {last!r}"[:4000])


class Process:
    """A child process logging to a file in its work directory."""

    def __init__(self, workdir: Path, name: str) -> None:
        self.workdir, self.name = workdir, name
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        workdir.mkdir(parents=True, exist_ok=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def spawn(self, args: list[str]) -> None:
        log = open(self.workdir / f"{self.name}.log", "ab")
        self.process = subprocess.Popen(args, cwd=self.workdir, stdout=log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL)
        log.close()

    def log_text(self) -> str:
        try:
            return (self.workdir / f"{self.name}.log").read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def wait_http(self, path: str, timeout: float = 30) -> None:
        def ready() -> bool:
            assert self.process is not None
            if self.process.poll() is not None:
                raise AssertionError(f"{self.name} exited with {self.process.returncode}:\n{self.log_text()}")
            return request("GET", self.url + path, timeout=1).status == 200
        wait_for(ready, timeout, f"{self.name} {path}", interval=0.05)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Prometheus(Process):
    """`prometheus` scraping `targets` (host:port strings) every second as job `portcullis`, with `rule_files`
    loaded and alerts sent to `alertmanager` (a URL) when given."""

    def __init__(self, workdir: Path, targets: list[str], rule_files: list[Path] | None = None,
                 alertmanager: str | None = None) -> None:
        super().__init__(workdir, "prometheus")
        config: dict[str, Any] = {
            "global": {"scrape_interval": SCRAPE_INTERVAL, "evaluation_interval": SCRAPE_INTERVAL,
                       "scrape_timeout": SCRAPE_INTERVAL},
            "scrape_configs": [{"job_name": "portcullis", "static_configs": [{"targets": targets}]}],
            "rule_files": [str(p) for p in rule_files or []],
        }
        if alertmanager:
            host = urllib.parse.urlsplit(alertmanager).netloc
            config["alerting"] = {"alertmanagers": [{"static_configs": [{"targets": [host]}]}]}
        # JSON is YAML: no YAML writer needed.
        (workdir / "prometheus.yml").write_text(json.dumps(config, indent=1))

    def start(self) -> "Prometheus":
        self.spawn([binary("prometheus"), "--config.file", str(self.workdir / "prometheus.yml"),
                    "--storage.tsdb.path", str(self.workdir / "data"),
                    "--web.listen-address", f"127.0.0.1:{self.port}", "--log.level", "warn"])
        self.wait_http("/-/ready")
        return self

    def api(self, path: str, **params: Any) -> Any:
        query = urllib.parse.urlencode(params, doseq=True)
        response = request("GET", f"{self.url}/api/v1/{path}?{query}", timeout=10)
        body = json.loads(response.body)
        assert response.status == 200 and body["status"] == "success", (path, params, body)
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        data = self.api("query", query=expr)
        assert data["resultType"] == "vector", (expr, data)
        return data["result"]

    def series(self, match: str) -> list[dict[str, str]]:
        return self.api("series", **{"match[]": match, "start": time.time() - 3600, "end": time.time() + 60})

    def targets_up(self, count: int) -> list[dict[str, Any]]:
        """Waits until `count` active targets report health `up` and returns them."""
        def ready() -> list[dict[str, Any]]:
            active = self.api("targets")["activeTargets"]
            up = [t for t in active if t["health"] == "up"]
            return up if len(up) == count else []
        return wait_for(ready, 20, f"{count} targets up")

    def scraped_after(self, moment: float, instances: int = 1) -> None:
        """Waits until every target has been scraped completely after `moment` (a time.time() value)."""
        def done() -> bool:
            active = self.api("targets")["activeTargets"]
            stamps = [t["lastScrape"] for t in active if t["health"] == "up"]
            return len(stamps) == instances and all(parse_rfc3339(s) > moment + 0.05 for s in stamps)
        wait_for(done, 20, "a scrape after the traffic")


class Alertmanager(Process):
    """`prometheus-alertmanager` routing every alert to `webhook` at once (no clustering, 1 s grouping)."""

    def __init__(self, workdir: Path, webhook: str) -> None:
        super().__init__(workdir, "alertmanager")
        config = {
            "route": {"receiver": "test", "group_by": ["alertname", "instance"], "group_wait": "0s",
                      "group_interval": "1s", "repeat_interval": "1h"},
            "receivers": [{"name": "test", "webhook_configs": [{"url": webhook, "send_resolved": False}]}],
        }
        (workdir / "alertmanager.yml").write_text(json.dumps(config, indent=1))

    def start(self) -> "Alertmanager":
        self.spawn([binary("prometheus-alertmanager"), "--config.file", str(self.workdir / "alertmanager.yml"),
                    "--storage.path", str(self.workdir / "data"),
                    "--web.listen-address", f"127.0.0.1:{self.port}", "--cluster.listen-address=",
                    "--log.level", "warn"])
        self.wait_http("/-/ready")
        return self


def parse_rfc3339(text: str) -> float:
    """Prometheus's target timestamps (`2026-01-02T03:04:05.123456789Z`) as seconds since the epoch."""
    match = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)", text)
    assert match, text
    base = calendar.timegm(time.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S"))
    zone = match.group(3)
    offset = 0 if zone == "Z" else (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60) * (1 if zone[0] == "+" else -1)
    return base - offset + float(match.group(2) or 0)


class Receiver:
    """A loopback HTTP server recording every POST body (webhooks: change events, Alertmanager). The first
    `fail_first` requests are answered 500, the rest 200."""

    def __init__(self, fail_first: int = 0) -> None:
        self.bodies: list[bytes] = []
        self.lock = threading.Lock()
        self.fail_first = fail_first
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.lock:
                    receiver.bodies.append(body)
                    status = 500 if len(receiver.bodies) <= receiver.fail_first else 200
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/"

    def received(self) -> list[bytes]:
        with self.lock:
            return list(self.bodies)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def fake_gcs_binary() -> str:
    return harness.fake_gcs_binary() or pytest.fail("fake-gcs-server not installed (make test builds .venv-emulators)")


class FakeGCS(Process):
    """A fake-gcs-server (memory backend) holding `buckets`, as the gs:// upstream of a gateway."""

    def __init__(self, workdir: Path, buckets: list[str]) -> None:
        super().__init__(workdir, "fake-gcs")
        self.buckets = buckets

    def start(self) -> "FakeGCS":
        self.spawn([fake_gcs_binary(), "-scheme", "http", "-host", "127.0.0.1", "-port", str(self.port),
                    "-backend", "memory", "-external-url", self.url, "-log-level", "warn"])
        self.wait_http("/storage/v1/b")
        for bucket in self.buckets:
            created = request("POST", f"{self.url}/storage/v1/b?project=test", body=json.dumps({"name": bucket}).encode(),
                              headers={"Content-Type": "application/json"})
            assert created.status in (200, 409), created.body
        return self


def documented_metrics() -> dict[str, tuple[str, set[str]]]:
    """docs/operations.md's metrics reference: name → (type, label names)."""
    text = (ROOT / "docs" / "operations.md").read_text()
    section = text.split("## Metrics reference", 1)[1].split("\n## ", 1)[0]
    out: dict[str, tuple[str, set[str]]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        labels = set(re.findall(r"`([a-z_]+)`", cells[2]))
        out[cells[0].strip("`")] = (cells[1], labels)
    assert len(out) > 20, f"the metrics table of docs/operations.md did not parse: {sorted(out)}"
    return out
