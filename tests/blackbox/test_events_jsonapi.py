"""Change events from the Cloud Storage JSON API surface (`/storage/v1`, `/upload/storage/v1`): the same service,
so the same events — media upload, PATCH, copyTo, compose and DELETE each arrive at a Functions Framework
receiver as Cloud Storage's CloudEvents (docs/events.md). Skipped while the gateway serves no JSON API."""
from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest

from events_receiver import Receiver
from harness import Server, request
from test_events import BUCKET, by_object, gateway, kind, write_secret


def test_json_api_changes_arrive_as_events(tmp_path: Path, servers: list[Server]) -> None:
    secret = write_secret(tmp_path / "events.secret")
    receiver = Receiver(tmp_path / "receiver", secret=secret).start()
    try:
        server = gateway(tmp_path / "gw", [receiver.url], secret=secret)
        servers.append(server)
        server.start()
        base = server.url
        api = f"{base}/storage/v1/b/{BUCKET}/o"
        resp = request("POST", f"{base}/upload/storage/v1/b/{BUCKET}/o?uploadType=media&name=src.txt", b"json api",
                       {"Content-Type": "text/plain"})
        if resp.status == 404:
            pytest.skip("this build serves no JSON API surface")
        assert resp.status == 200, resp.body
        source = resp.json()
        resp = request("PATCH", f"{api}/src.txt", json.dumps({"metadata": {"k": "v"}}).encode(),
                       {"Content-Type": "application/json"})
        assert resp.status == 200, resp.body
        resp = request("POST", f"{api}/src.txt/copyTo/b/{BUCKET}/o/copy.txt", b"{}", {"Content-Type": "application/json"})
        assert resp.status == 200, resp.body
        copied = resp.json()
        body = {"sourceObjects": [{"name": "src.txt"}, {"name": "copy.txt"}], "destination": {"contentType": "text/plain"}}
        resp = request("POST", f"{api}/{urllib.parse.quote('both.txt', safe='')}/compose", json.dumps(body).encode(),
                       {"Content-Type": "application/json"})
        assert resp.status == 200, resp.body
        composed = resp.json()
        assert request("DELETE", f"{api}/src.txt").status == 204
        records = receiver.wait_for(lambda rs: len(rs) >= 5, what="5 events")
        assert by_object(records) == {
            "src.txt": [("finalized", source["generation"], "1"), ("metadataUpdated", source["generation"], "2"),
                        ("deleted", source["generation"], "2")],
            "copy.txt": [("finalized", copied["generation"], "1")],
            "both.txt": [("finalized", composed["generation"], "1")],
        }
        assert all(r["verified"] for r in records)
        deleted = next(r["data"] for r in records if kind(r) == "deleted")  # order is promised per object only
        assert deleted["name"] == "src.txt" and deleted["size"] == str(len(b"json api"))
    finally:
        receiver.stop()
