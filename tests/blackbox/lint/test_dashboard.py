"""deploy/grafana/portcullis.json is an importable Grafana dashboard: a `datasource` variable every panel and
query uses, unique panel ids, grid positions inside the 24-column grid, a PromQL query per panel, and the topics
docs/operations.md promises. (That every query returns data is checked against a real Prometheus in
tests/blackbox/test_prometheus.py.)"""
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DASHBOARD = ROOT / "deploy" / "grafana" / "portcullis.json"
TOPICS = [
    "portcullis_http_requests_total", "portcullis_http_request_duration_seconds_bucket",
    "portcullis_http_response_bytes_total", "portcullis_auth_failures_total", "portcullis_rules_decisions_total",
    "portcullis_upstream_requests_total", "portcullis_upstream_duration_seconds_bucket",
    "portcullis_events_pending", "portcullis_events_delivered_total", "portcullis_events_failed_attempts_total",
    "portcullis_events_dead_lettered_total", "process_resident_memory_bytes", "process_open_fds",
    "portcullis_open_connections", "portcullis_embedded_disk_free_bytes", "portcullis_ready",
]


def load() -> dict:
    return json.loads(DASHBOARD.read_text())


def test_dashboard_is_importable() -> None:
    dashboard = load()
    assert dashboard["title"] and dashboard["uid"]
    assert isinstance(dashboard["schemaVersion"], int) and dashboard["schemaVersion"] >= 30
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    for name in ("job", "instance"):
        assert variables[name]["datasource"]["uid"] == "${datasource}"
    assert variables["instance"]["includeAll"] and variables["instance"]["allValue"] == ".*"

    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids)), "duplicate panel ids"
    queries = 0
    for panel in dashboard["panels"]:
        grid = panel["gridPos"]
        assert grid["x"] >= 0 and grid["w"] > 0 and grid["x"] + grid["w"] <= 24, panel["title"]
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
        targets = panel["targets"]
        assert targets, f"{panel['title']}: no query"
        assert len({t["refId"] for t in targets}) == len(targets), panel["title"]
        for target in targets:
            assert target["datasource"]["uid"] == "${datasource}" and target["expr"].strip(), panel["title"]
            # Selections are regex matchers, so the `All` value (.*) of a variable matches everything.
            assert 'job="$job"' not in target["expr"] and 'instance="$instance"' not in target["expr"]
            queries += 1
    assert queries >= 20


def test_dashboard_covers_the_documented_topics() -> None:
    text = " ".join(t["expr"] for p in load()["panels"] for t in p.get("targets", []))
    missing = [name for name in TOPICS if name not in text]
    assert not missing, f"the dashboard shows nothing of {missing}"
