"""A real Prometheus (Debian's `prometheus`) scrapes a gateway under real traffic — v0 and the JSON API, allowed,
denied, missing, unauthenticated, an embedded bucket, a gs:// bucket on fake-gcs-server, an s3:// bucket whose
upstream is down (5xx, connection errors, the circuit breaker, readiness turning 503) and change events to a
webhook that fails twice — and everything is checked through Prometheus's HTTP API:

- the target is up, and every metric of docs/operations.md's reference is scraped with the documented type
  (/api/v1/metadata) and exactly the documented labels (/api/v1/series);
- label values are bounded: 200 more distinct object names on both surfaces add no series, and no route label
  holds a raw path;
- the reference table and the gateway's own /metrics agree both ways (every documented family exists with its
  type, every exposed `portcullis_*`/`process_*` family is documented);
- every PromQL expression of deploy/grafana/portcullis.json returns data.
"""
from __future__ import annotations

import json
import os
import re
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from harness import ROOT, Server, free_port, object_url, request, signing_key_file, upload_url
from ops_stack import FakeGCS, Prometheus, Receiver, documented_metrics, wait_for

RULES = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /open/{all=**} {
      allow read, write: if true;
    }
  }
}
"""
GCS_BUCKET = "ops-gcs"
# Families that need a fault this suite does not stage: an upstream body broken after its head.
NEEDS_BROKEN_BODY = {"portcullis_upstream_stream_errors_total"}
DASHBOARD = ROOT / "deploy" / "grafana" / "portcullis.json"


@dataclass
class Stack:
    gateway: Server
    prometheus: Prometheus
    receiver: Receiver


def json_api_object(base: str, bucket: str, name: str, **query: str) -> str:
    url = f"{base}/storage/v1/b/{bucket}/o/{urllib.parse.quote(name, safe='')}"
    return url + ("?" + urllib.parse.urlencode(query) if query else "")


def json_api_upload(base: str, bucket: str, name: str) -> str:
    return f"{base}/upload/storage/v1/b/{bucket}/o?" + urllib.parse.urlencode({"uploadType": "media", "name": name})


def drive_traffic(base: str) -> None:
    """One of each kind of exchange the dashboard and the reference describe."""
    text = {"Content-Type": "text/plain"}
    for bucket in ("emb", "gcs"):
        assert request("POST", upload_url(base, bucket, "open/a.txt"), body=b"a" * 2000, headers=text).status == 200
        assert request("GET", object_url(base, bucket, "open/a.txt")).status == 200
        assert request("GET", object_url(base, bucket, "open/a.txt", alt="media")).body == b"a" * 2000
        assert request("GET", f"{base}/v0/b/{bucket}/o?prefix=open%2F&delimiter=%2F").status == 200
        assert request("GET", object_url(base, bucket, "open/missing.txt")).status == 404
        assert request("GET", object_url(base, bucket, "closed/secret.txt")).status == 403
        assert request("POST", json_api_upload(base, bucket, "open/j.txt"), body=b"j" * 500, headers=text).status == 200
        assert request("GET", json_api_object(base, bucket, "open/j.txt")).status == 200
        assert request("GET", json_api_object(base, bucket, "open/j.txt", alt="media")).body == b"j" * 500
        assert request("GET", f"{base}/storage/v1/b/{bucket}/o?prefix=open%2F").status == 200
        assert request("GET", json_api_object(base, bucket, "closed/secret.txt")).status == 403
        assert request("DELETE", object_url(base, bucket, "open/j.txt")).status in (200, 204)
    assert request("GET", object_url(base, "emb", "open/a.txt"),
                   headers={"Authorization": "Bearer not.a.jwt"}).status in (401, 403)
    assert request("GET", base + "/no/such/route").status == 404
    # The s3:// bucket's endpoint is a closed port: 503s, connection errors, then the open circuit breaker
    # refuses without sending, and /readyz turns 503.
    statuses = {request("GET", object_url(base, "dead", "open/x.txt")).status for _ in range(6)}
    assert statuses == {503}, statuses
    wait_for(lambda: request("GET", base + "/readyz").status == 503, 10, "/readyz to report the dead backend")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    workdir = tmp_path_factory.mktemp("prometheus")
    fake = FakeGCS(workdir / "gcs", [GCS_BUCKET]).start()
    receiver = Receiver(fail_first=2)
    rules = workdir / "storage.rules"
    rules.write_text(RULES)
    key = workdir / "signing.key"
    signing_key_file(key, "k1")
    gateway = Server(
        workdir=workdir / "gw", name="ops",
        args=["--bucket", f"emb=file:{workdir / 'data'}", "--bucket", f"gcs=gs://{GCS_BUCKET}",
              "--bucket", "dead=s3://dead", "--rules", str(rules), "--signing-key", str(key),
              "--events-webhook", receiver.url,
              # Tracing on, towards a collector that is not there: its counters exist and drops are counted.
              "--otlp-endpoint", f"http://127.0.0.1:{free_port()}", "--trace-sample-ratio", "0.01"],
        env={"STORAGE_EMULATOR_HOST": fake.url, "AWS_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}",
             "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"})
    prometheus: Prometheus | None = None
    try:
        gateway.start()
        prometheus = Prometheus(workdir / "prom", [f"127.0.0.1:{gateway.port}"]).start()
        prometheus.targets_up(1)
        drive_traffic(gateway.url)
        # Deliveries: two refused by the receiver, then every event acknowledged.
        wait_for(lambda: len(receiver.received()) >= 6, 20, "change events at the receiver")
        moment = time.time()
        prometheus.scraped_after(moment)
        # A second scrape after the first, so every counter has two samples for rate() over the traffic.
        prometheus.scraped_after(time.time())
        yield Stack(gateway, prometheus, receiver)
    finally:
        if prometheus:
            prometheus.stop()
        gateway.stop(timeout=10)
        gateway.kill()
        receiver.close()
        fake.stop()


def test_target_is_up_and_labelled(stack: Stack) -> None:
    [target] = stack.prometheus.targets_up(1)
    assert target["labels"]["job"] == "portcullis"
    assert target["scrapeUrl"] == f"{stack.gateway.url}/metrics"
    [up] = stack.prometheus.query('up{job="portcullis"}')
    assert up["value"][1] == "1"


def series_matcher(name: str, kind: str) -> str:
    names = f"{name}|{name}_bucket|{name}_sum|{name}_count" if kind == "histogram" else name
    return f'{{__name__=~"{names}",job="portcullis"}}'


def test_every_documented_metric_is_scraped_with_its_type_and_labels(stack: Stack) -> None:
    metadata = stack.prometheus.api("metadata")
    problems = []
    for name, (kind, labels) in documented_metrics().items():
        entries = metadata.get(name)
        if not entries:
            problems.append(f"{name}: no metadata in Prometheus")
            continue
        if entries[0]["type"] != kind:
            problems.append(f"{name}: Prometheus has type {entries[0]['type']}, docs say {kind}")
        series = stack.prometheus.series(series_matcher(name, kind))
        if not series:
            if name not in NEEDS_BROKEN_BODY:
                problems.append(f"{name}: no series scraped")
            continue
        for one in series:
            seen = set(one) - {"__name__", "job", "instance"} - ({"le"} if one["__name__"].endswith("_bucket") else set())
            if seen != labels:
                problems.append(f"{name}: series labels {sorted(seen)}, docs say {sorted(labels)}")
                break
    assert not problems, "\n".join(problems)


def test_traffic_is_visible_per_route_and_outcome(stack: Stack) -> None:
    prom = stack.prometheus
    statuses = {s["metric"]["status"] for s in prom.query('sum by (status) (portcullis_http_requests_total)')}
    assert {"200", "403", "404", "503"} <= statuses, statuses
    routes = {s["metric"]["route"] for s in prom.query('sum by (route) (portcullis_http_requests_total)')}
    assert {"/v0/b/{bucket}/o/{object}", "/storage/v1/b/{bucket}/o/{object}", "unmatched"} <= routes, routes
    decisions = {(s["metric"]["method"], s["metric"]["decision"])
                 for s in prom.query('portcullis_rules_decisions_total > 0')}
    assert ("get", "allow") in decisions and ("get", "deny") in decisions, decisions
    upstream = {(s["metric"]["backend"], s["metric"]["status"])
                for s in prom.query('sum by (backend, status) (portcullis_upstream_requests_total)')}
    assert (f"gcs:{GCS_BUCKET}", "200") in upstream, upstream
    assert ("s3:dead", "connect_error") in upstream and ("s3:dead", "circuit_open") in upstream, upstream
    [ready] = prom.query("portcullis_ready")
    assert ready["value"][1] == "0"
    [changes] = prom.query("portcullis_readiness_changes_total")
    assert float(changes["value"][1]) >= 2  # not ready → ready at start, → not ready with the dead backend
    delivered = prom.query("sum(portcullis_events_delivered_total)")
    failed = prom.query("sum(portcullis_events_failed_attempts_total)")
    assert float(delivered[0]["value"][1]) >= 4 and float(failed[0]["value"][1]) >= 2, (delivered, failed)
    [disk] = prom.query('portcullis_embedded_disk_free_bytes{bucket="emb"}')
    assert float(disk["value"][1]) > 0


def count_series(prom: Prometheus) -> int:
    # The span exporter's own upstream series (backend "otlp") come and go with its export timing towards the
    # absent collector, not with what the requests name: they are left out of this count.
    result = prom.query('count({job="portcullis",__name__=~"portcullis_.+",backend!="otlp"})')
    return int(result[0]["value"][1])


def test_label_values_stay_bounded(stack: Stack) -> None:
    """200 distinct object names on each surface, each in every shape seen before, add no series."""
    base, prom = stack.gateway.url, stack.prometheus
    text = {"Content-Type": "text/plain"}

    def shapes(name: str) -> None:
        assert request("POST", upload_url(base, "emb", name), body=b"x", headers=text).status == 200
        assert request("GET", object_url(base, "emb", name, alt="media")).status == 200
        assert request("GET", object_url(base, "emb", name + ".missing")).status == 404
        assert request("GET", json_api_object(base, "emb", name)).status == 200
        assert request("GET", json_api_object(base, "emb", name + ".missing")).status == 404
        assert request("GET", object_url(base, "emb", "closed/" + name)).status == 403

    shapes("open/warm-up")
    prom.scraped_after(time.time())
    before = count_series(prom)
    names = [f"open/distinct-{i:03d}-{os.urandom(3).hex()}" for i in range(200)]
    for name in names:
        shapes(name)
    prom.scraped_after(time.time())
    after = count_series(prom)
    assert after == before, f"{after - before} new series from 200 object names"
    for label in ("route", "bucket", "backend", "webhook", "status", "method"):
        for value in prom.api(f"label/{label}/values"):
            assert "distinct-" not in value and "warm-up" not in value and "/no/such" not in value, (label, value)


def scrape_families(url: str) -> dict[str, str]:
    """The gateway's own /metrics: family name as exposed (counters with `_total`) → type."""
    text = request("GET", url + "/metrics").body.decode()
    types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.MULTILINE))
    # The exposition must also parse with prometheus_client's parser, with the same types.
    for family in text_string_to_metric_families(text):
        exposed = family.name + "_total" if family.type == "counter" else family.name
        assert types.get(exposed) == family.type, (family.name, family.type)
    return types


def test_reference_table_matches_metrics_endpoint(stack: Stack) -> None:
    documented = documented_metrics()
    exposed = scrape_families(stack.gateway.url)
    missing = {name for name in documented if name not in exposed}
    assert not missing, f"documented in docs/operations.md but not exposed: {sorted(missing)}"
    wrong = {name: (exposed[name], kind) for name, (kind, _) in documented.items() if exposed[name] != kind}
    assert not wrong, f"exposed type vs documented type: {wrong}"
    undocumented = {name for name in exposed if name.startswith(("portcullis_", "process_")) and name not in documented}
    assert not undocumented, f"exposed but missing from docs/operations.md's metrics reference: {sorted(undocumented)}"


def dashboard_expressions() -> list[tuple[str, str]]:
    dashboard = json.loads(DASHBOARD.read_text())
    out = []
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            out.append((panel["title"], target["expr"]))
        for inner in panel.get("panels", []):
            for target in inner.get("targets", []):
                out.append((inner["title"], target["expr"]))
    return out


def substitute(expr: str) -> str:
    """Grafana's variables as a single-instance query would see them: every selection matches all."""
    expr = expr.replace("$__rate_interval", "1m").replace("$__interval", "15s").replace("$__range", "1h")
    return re.sub(r"\$\{?(job|instance)(?::[a-z]+)?\}?", ".*", expr)


def test_dashboard_queries_return_data(stack: Stack) -> None:
    """Every query returns data, and every metric a query names is one Prometheus scraped (so a fallback such as
    `or vector(0)` cannot hide a renamed metric)."""
    expressions = dashboard_expressions()
    assert len(expressions) >= 20, f"only {len(expressions)} queries in the dashboard"
    metadata = stack.prometheus.api("metadata")
    for title, expr in expressions:
        for name in re.findall(r"\b((?:portcullis|process)_[a-z_]+)", expr):
            family = re.sub(r"_(bucket|sum|count)$", "", name)
            assert name in metadata or family in metadata, f"{title}: {name} is not a scraped metric"
    empty = []
    for title, expr in expressions:
        query = substitute(expr)
        assert "$" not in query, f"{title}: unsubstituted variable in {expr}"
        if not stack.prometheus.query(query):
            empty.append(f"{title}: {query}")
    assert not empty, "dashboard queries without data:\n" + "\n".join(empty)
