"""Two `portcullis serve` processes on one embedded directory (`file:DIR`) see each other's commits at once.

Each process answers point reads from its event loops' row cache while the SQLite index is unchanged
(bench/NOTES.md, "Where the time goes"); a commit by the other process — an upload, an overwrite, a metadata
update, a delete — must be visible to the very next read, for metadata and for the bytes. Every read below is
made twice in a row, so that the second is the one a warm cache would answer.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import Server, allow_all_server, object_url, request, upload_url

BUCKET = "shared-bucket"


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[Server, Server]]:
    data = tmp_path / "data"
    servers = [allow_all_server(tmp_path / name, f"{BUCKET}=file:{data}", f"shared-{name}") for name in "ab"]
    try:
        for server in servers:
            server.start()
        yield servers[0], servers[1]
    finally:
        for server in servers:
            server.stop(timeout=10)
            server.kill()


def upload(server: Server, name: str, payload: bytes) -> dict:
    response = request("POST", upload_url(server.url, BUCKET, name), body=payload,
                       headers={"Content-Type": "application/octet-stream"})
    assert response.status == 200, (response.status, response.body[:300])
    return response.json()


def metadata_twice(server: Server, name: str) -> dict | None:
    """The object's metadata read twice on one instance; both answers must agree (None: 404 both times)."""
    answers = []
    for _ in range(2):
        response = request("GET", object_url(server.url, BUCKET, name))
        assert response.status in (200, 404), (response.status, response.body[:300])
        answers.append(response.json() if response.status == 200 else None)
    assert answers[0] == answers[1]
    return answers[0]


def bytes_twice(server: Server, name: str) -> bytes | None:
    answers = []
    for _ in range(2):
        response = request("GET", object_url(server.url, BUCKET, name, alt="media"))
        assert response.status in (200, 404), (response.status, response.body[:300])
        answers.append(response.body if response.status == 200 else None)
    assert answers[0] == answers[1]
    return answers[0]


def test_each_instance_sees_the_other_instances_commits_at_once(pair: tuple[Server, Server]) -> None:
    a, b = pair
    name = "shared/ü-object.bin"
    assert metadata_twice(b, name) is None, "absent before anything is written"
    for round_ in range(12):
        writer, reader = (a, b) if round_ % 2 == 0 else (b, a)
        payload = os.urandom(100 + round_)
        written = upload(writer, name, payload)
        seen = metadata_twice(reader, name)
        assert seen is not None and seen["generation"] == written["generation"], (round_, seen, written)
        assert bytes_twice(reader, name) == payload

        patched = request("PATCH", object_url(writer.url, BUCKET, name),
                          body=json.dumps({"metadata": {"round": str(round_)}}).encode(),
                          headers={"Content-Type": "application/json"})
        assert patched.status == 200, patched.body[:300]
        seen = metadata_twice(reader, name)
        assert seen is not None and seen["metageneration"] == patched.json()["metageneration"]
        assert seen.get("metadata", {}).get("round") == str(round_)

        if round_ % 3 == 2:
            deleted = request("DELETE", object_url(writer.url, BUCKET, name))
            assert deleted.status == 204, deleted.body[:300]
            assert metadata_twice(reader, name) is None, f"round {round_}: a delete by the other instance is seen"
            assert bytes_twice(reader, name) is None
