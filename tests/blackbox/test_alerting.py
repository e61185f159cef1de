"""End to end: the shipped alerting rules, loaded into a real Prometheus, reach a real Alertmanager
(`prometheus-alertmanager`), which posts them to a webhook receiver in this test.

The rules are deploy/prometheus's own, with every `for:` shortened to 1 s in a test copy so the suite takes
seconds. Two gateways are scraped; one serves an s3:// bucket whose endpoint is a closed port. Its 503s make
PortcullisHigh5xxRatio arrive at the receiver through the recording rules, from real traffic. While the other
gateway runs, PortcullisInstanceDown stays silent; after it is killed, that alert arrives firing, with the
instance, severity and runbook of the rules file.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import yaml

from harness import ROOT, Server, allow_all_server, free_port, object_url, request
from ops_stack import Alertmanager, Prometheus, Receiver, wait_for

RULES_DIR = ROOT / "deploy" / "prometheus"


def short_for_copy(workdir: Path) -> list[Path]:
    """The rules files with every alert's `for:` set to 1 s (everything else unchanged)."""
    out = []
    for path in sorted(RULES_DIR.glob("*.yaml")):
        document = yaml.safe_load(path.read_text())
        for group in document["groups"]:
            for rule in group["rules"]:
                if "for" in rule:
                    rule["for"] = "1s"
        copy = workdir / path.name
        copy.write_text(yaml.safe_dump(document, sort_keys=False))
        out.append(copy)
    return out


def received_alerts(receiver: Receiver, name: str) -> list[dict[str, Any]]:
    alerts = []
    for body in receiver.received():
        for alert in json.loads(body)["alerts"]:
            if alert["labels"].get("alertname") == name:
                alerts.append(alert)
    return alerts


def test_alerts_reach_alertmanager(tmp_path: Path) -> None:
    receiver = Receiver()
    alertmanager = Alertmanager(tmp_path / "am", receiver.url)
    gateway = allow_all_server(tmp_path / "gw", f"b=file:{tmp_path / 'data'}", "alerting")
    failing = allow_all_server(tmp_path / "failing", "dead=s3://dead", "failing")
    failing.env = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}", "AWS_REGION": "us-east-1",
                   "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}
    prometheus: Prometheus | None = None
    try:
        alertmanager.start()
        gateway.start()
        failing.start()
        target = f"127.0.0.1:{gateway.port}"
        prometheus = Prometheus(tmp_path / "prom", [target, f"127.0.0.1:{failing.port}"],
                                rule_files=short_for_copy(tmp_path), alertmanager=alertmanager.url).start()
        prometheus.targets_up(2)

        # Every download from the dead upstream is a 503: the fleet's 5xx ratio crosses the SLO. The first few
        # create the 503 series and are scraped before the rest, so rate() sees the rest as an increase.
        def download_dead(count: int) -> None:
            for _ in range(count):
                assert request("GET", object_url(failing.url, "dead", "x.txt", alt="media")).status == 503
        download_dead(3)
        prometheus.scraped_after(time.time(), instances=2)
        download_dead(60)
        [ratio] = wait_for(lambda: received_alerts(receiver, "PortcullisHigh5xxRatio"), 30,
                           "PortcullisHigh5xxRatio at the Alertmanager webhook")
        assert ratio["status"] == "firing" and ratio["labels"]["job"] == "portcullis"
        assert ratio["labels"]["severity"] == "page"
        # The rules are loaded and evaluated (lastEvaluation is year 1 before the first evaluation), and with the
        # instance up InstanceDown is not among the alerts.
        wait_for(lambda: any(g["name"] == "portcullis.alerts" and g["lastEvaluation"] > "2000"
                             for g in prometheus.api("rules")["groups"]), 20, "the alert group to be evaluated")
        prometheus.scraped_after(time.time(), instances=2)
        assert not [a for a in prometheus.api("alerts")["alerts"]
                    if a["labels"]["alertname"] == "PortcullisInstanceDown"]
        assert not received_alerts(receiver, "PortcullisInstanceDown")

        gateway.kill()
        [alert] = wait_for(lambda: received_alerts(receiver, "PortcullisInstanceDown"), 30,
                           "PortcullisInstanceDown at the Alertmanager webhook")
        assert alert["status"] == "firing"
        assert alert["labels"]["instance"] == target
        assert alert["labels"]["job"] == "portcullis"
        assert alert["labels"]["severity"] == "page"
        assert alert["annotations"]["runbook"] == "docs/operations.md#portcullisinstancedown"
        assert target in alert["annotations"]["summary"]
        # Alertmanager holds it too (its own API), as the source of truth for silences and inhibitions.
        listed = json.loads(request("GET", alertmanager.url + "/api/v2/alerts").body)
        assert any(a["labels"]["alertname"] == "PortcullisInstanceDown" for a in listed), listed
    finally:
        if prometheus:
            prometheus.stop()
        alertmanager.stop()
        gateway.kill()
        failing.kill()
        receiver.close()
