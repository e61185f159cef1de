"""/metrics is valid Prometheus text exposition (parsed by prometheus_client's own parser) and carries the
docs/operations.md families, labelled by route template — never by raw object paths — after real traffic."""
from __future__ import annotations

import json
import os
import urllib.parse

import pytest

from prometheus_client.parser import text_string_to_metric_families

from harness import allow_all_server, object_url, request, upload_url

# docs/operations.md. prometheus_client strips `_total` from counter family names.
REQUIRED_FAMILIES = {
    "portcullis_http_requests": "counter",
    "portcullis_http_request_duration_seconds": "histogram",
    "portcullis_http_response_bytes": "counter",
    "portcullis_http_request_bytes": "counter",
    "portcullis_http_inflight_requests": "gauge",
    "portcullis_open_connections": "gauge",
    "portcullis_auth_failures": "counter",
    "portcullis_rules_decisions": "counter",
    "portcullis_stream_buffered_bytes": "gauge",
}
# Upstream families describe calls to GCS/S3; the embedded backend makes none, so they are checked by the
# test that runs against the GCS emulator.
UPSTREAM_FAMILIES = {
    "portcullis_upstream_requests": "counter",
    "portcullis_upstream_duration_seconds": "histogram",
}
SECRET_NAME = "private/obj-7f3a9c.txt"


def scrape(url: str) -> dict[str, object]:
    response = request("GET", url + "/metrics")
    assert response.status == 200
    content_type = response.header("content-type") or ""
    assert content_type.startswith("text/plain"), content_type
    assert "version=0.0.4" in content_type, content_type
    return {family.name: family for family in text_string_to_metric_families(response.body.decode())}


def test_metrics_families_after_traffic(start_server) -> None:
    server = start_server(bucket="metrics-bucket")
    base = server.url
    assert request("POST", upload_url(base, "metrics-bucket", SECRET_NAME), body=b"x" * 1000,
                   headers={"Content-Type": "text/plain"}).status == 200
    assert request("GET", object_url(base, "metrics-bucket", SECRET_NAME)).status == 200
    assert request("GET", object_url(base, "metrics-bucket", SECRET_NAME, alt="media")).status == 200
    assert request("GET", f"{base}/v0/b/metrics-bucket/o?prefix=private%2F&delimiter=%2F").status == 200
    assert request("GET", object_url(base, "metrics-bucket", "missing/" + SECRET_NAME)).status == 404
    # A malformed bearer token must be counted as an authentication failure.
    assert request("GET", object_url(base, "metrics-bucket", SECRET_NAME),
                   headers={"Authorization": "Bearer not.a.jwt"}).status in (401, 403)
    assert request("GET", base + "/no/such/route").status == 404

    families = scrape(base)
    missing = [name for name in REQUIRED_FAMILIES if name not in families]
    assert not missing, f"missing metric families: {missing}; have {sorted(families)}"
    for name, kind in REQUIRED_FAMILIES.items():
        assert families[name].type == kind, f"{name} is {families[name].type}, expected {kind}"

    # Process metrics: RSS, open fds, uptime/start time (names as prometheus_client's process collector uses).
    names = " ".join(families)
    assert "resident_memory" in names, names
    assert "open_fds" in names, names
    assert "start_time" in names or "uptime" in names, names

    requests_family = families["portcullis_http_requests"]
    samples = [s for s in requests_family.samples if s.name.endswith("_total")]
    assert samples, "no request counter samples after traffic"
    statuses = {s.labels.get("status") for s in samples}
    assert {"200", "404"} <= statuses, statuses
    for sample in samples:
        assert {"route", "method", "status"} <= sample.labels.keys(), sample.labels

    # Route labels are templates: no object name (raw or encoded) and no unknown raw path leaks into labels.
    encoded = urllib.parse.quote(SECRET_NAME, safe="")
    for family in families.values():
        for sample in family.samples:
            for value in sample.labels.values():
                assert SECRET_NAME not in value and encoded not in value and "obj-7f3a9c" not in value, sample
                assert "/no/such/route" not in value, sample

    histogram = families["portcullis_http_request_duration_seconds"]
    buckets = [s for s in histogram.samples if s.name.endswith("_bucket")]
    assert buckets and any(s.labels.get("le") == "+Inf" for s in buckets)
    assert all("route" in s.labels for s in buckets)

    reasons = {s.labels.get("reason") for s in families["portcullis_auth_failures"].samples
               if s.name.endswith("_total") and s.value > 0}
    assert reasons, "an invalid bearer token did not count as an auth failure"

    decisions = {(s.labels.get("method"), s.labels.get("decision"))
                 for s in families["portcullis_rules_decisions"].samples if s.value > 0}
    assert decisions, "no rules decisions counted"

    sent = sum(s.value for s in families["portcullis_http_response_bytes"].samples if s.name.endswith("_total"))
    received = sum(s.value for s in families["portcullis_http_request_bytes"].samples if s.name.endswith("_total"))
    assert sent >= 1000 and received >= 1000, (sent, received)


def test_metrics_scrape_is_stable_under_repeats(start_server) -> None:
    """Two scrapes parse the same families; the counter for /metrics itself grows monotonically."""
    server = start_server(bucket="metrics-bucket")
    first = scrape(server.url)
    second = scrape(server.url)
    assert set(first) <= set(second)


def test_upstream_metrics_with_gcs_backend(tmp_path, servers) -> None:
    emulator = os.environ.get("STORAGE_EMULATOR_HOST")
    if not emulator:
        pytest.skip("STORAGE_EMULATOR_HOST not set (scripts/emulators.sh not running)")
    emulator = emulator if emulator.startswith("http") else "http://" + emulator
    bucket = "metrics-" + os.urandom(4).hex()
    created = request("POST", f"{emulator}/storage/v1/b?project=test", body=json.dumps({"name": bucket}).encode(),
                      headers={"Content-Type": "application/json"})
    assert created.status in (200, 409), created.body
    server = allow_all_server(tmp_path / "gcs", f"gcs-bucket=gs://{bucket}", "metrics-gcs")
    servers.append(server)
    try:
        server.start()
    except RuntimeError as error:
        if "not available in this build" in str(error):
            pytest.skip("this build has no GCS backend")
        raise
    assert request("POST", upload_url(server.url, "gcs-bucket", "a/b.txt"), body=b"hello",
                   headers={"Content-Type": "text/plain"}).status == 200
    assert request("GET", object_url(server.url, "gcs-bucket", "a/b.txt", alt="media")).body == b"hello"
    families = scrape(server.url)
    for name, kind in UPSTREAM_FAMILIES.items():
        assert name in families, f"missing {name}; have {sorted(families)}"
        assert families[name].type == kind
    samples = [s for s in families["portcullis_upstream_requests"].samples if s.name.endswith("_total")]
    assert samples and all({"backend", "op", "status"} <= s.labels.keys() for s in samples), samples
