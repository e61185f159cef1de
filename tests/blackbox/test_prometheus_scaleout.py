"""A real Prometheus scrapes three gateways as a scale-out deployment runs them (one shared embedded directory,
one signing key, one rules file), with deploy/prometheus's recording and alerting rules loaded:

- all three targets are up under job `portcullis`, one `instance` each;
- requests spread over the instances are counted exactly once: per instance what it served, and the fleet sum
  is what the client sent;
- the recording rules aggregate the fleet (one series per job or route, no `instance` label) and agree with
  the raw series; no alert fires on a healthy fleet.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import ALLOW_ALL_RULES, ROOT, Server, object_url, request, signing_key_file, upload_url
from ops_stack import Prometheus, wait_for

RULES_DIR = ROOT / "deploy" / "prometheus"
UPLOAD_ROUTE = "/v0/b/{bucket}/o"
ROUNDS = 12


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[list[Server]]:
    rules = tmp_path / "allow.rules"
    rules.write_text(ALLOW_ALL_RULES)
    key = tmp_path / "signing.key"
    signing_key_file(key, "k1")
    servers = [Server(workdir=tmp_path / f"gw{i}", name=f"gw{i}",
                      args=["--bucket", f"shared=file:{tmp_path / 'data'}", "--rules", str(rules),
                            "--signing-key", str(key)]) for i in range(3)]
    try:
        for server in servers:
            server.start()
        yield servers
    finally:
        for server in servers:
            server.stop(timeout=10)
            server.kill()


def value(prom: Prometheus, expr: str) -> float:
    result = prom.query(expr)
    assert len(result) == 1, (expr, result)
    return float(result[0]["value"][1])


def test_three_instances_counted_once_and_aggregated(tmp_path: Path, fleet: list[Server]) -> None:
    targets = [f"127.0.0.1:{server.port}" for server in fleet]
    prom = Prometheus(tmp_path / "prom", targets,
                      rule_files=sorted(RULES_DIR.glob("*.yaml"))).start()
    try:
        up = prom.targets_up(3)
        assert sorted(t["labels"]["instance"] for t in up) == sorted(targets)
        assert {t["labels"]["job"] for t in up} == {"portcullis"}

        # Round-robin, as a load balancer would: each instance uploads ROUNDS objects and reads each of the
        # others' (the directory is shared, so any instance serves any object).
        for round_ in range(ROUNDS):
            for index, server in enumerate(fleet):
                name = f"fleet/{round_}-{index}.txt"
                assert request("POST", upload_url(server.url, "shared", name), body=name.encode(),
                               headers={"Content-Type": "text/plain"}).status == 200
                reader = fleet[(index + 1) % 3]
                assert request("GET", object_url(reader.url, "shared", name, alt="media")).body == name.encode()
        prom.scraped_after(time.time(), instances=3)

        uploads = f'portcullis_http_requests_total{{job="portcullis",route="{UPLOAD_ROUTE}",method="POST",status="200"}}'
        per_instance = {s["metric"]["instance"]: float(s["value"][1]) for s in prom.query(uploads)}
        assert per_instance == {target: ROUNDS for target in targets}, per_instance
        assert value(prom, f"sum({uploads})") == 3 * ROUNDS

        # Recording rules: one fleet-wide series, no instance label, consistent with the raw series.
        def evaluated() -> bool:
            return all(g["lastEvaluation"] > "2000" for g in prom.api("rules")["groups"])
        wait_for(evaluated, 20, "the rule groups to be evaluated")
        prom.scraped_after(time.time(), instances=3)
        # The first evaluations may precede two samples of the new series (a rate of 0): wait for the traffic.
        [fleet_rate] = wait_for(lambda: prom.query("job:portcullis_http_requests:rate5m > 0"), 20,
                                "a positive job:portcullis_http_requests:rate5m")
        assert fleet_rate["metric"] == {"__name__": "job:portcullis_http_requests:rate5m", "job": "portcullis"}
        # The recorded fleet rate is the sum of the instances' rates at the moment of the evaluation.
        [recorded] = prom.api("query", query="job:portcullis_http_requests:rate5m[30s]")["result"]
        stamp, recorded_value = recorded["values"][-1]  # a raw sample: its timestamp is the evaluation's
        [raw] = prom.api("query", query='sum(rate(portcullis_http_requests_total{job="portcullis"}[5m]))',
                         time=stamp)["result"]
        assert float(raw["value"][1]) == pytest.approx(float(recorded_value), rel=1e-9), (raw, recorded)
        routes = prom.query(f'route:portcullis_http_requests:rate5m{{route="{UPLOAD_ROUTE}"}}')
        assert routes and all("instance" not in s["metric"] for s in routes), routes
        latency = prom.query(f'route:portcullis_http_request_duration_seconds:p99_5m{{route="{UPLOAD_ROUTE}"}}')
        assert len(latency) == 1 and "instance" not in latency[0]["metric"], latency
        disk = prom.query("instance:portcullis_embedded_disk_free:ratio")
        assert sorted(s["metric"]["instance"] for s in disk) == sorted(targets)
        assert all(0 < float(s["value"][1]) <= 1 for s in disk), disk
        firing = [a["labels"]["alertname"] for a in prom.api("alerts")["alerts"]
                  if a["labels"]["alertname"] in ("PortcullisInstanceDown", "PortcullisHigh5xxRatio",
                                                  "PortcullisNotReady", "PortcullisReadinessFlapping")]
        assert not firing, firing
    finally:
        prom.stop()
