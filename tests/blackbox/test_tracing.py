"""Tracing (docs/configuration.md "Tracing"): W3C Trace Context in, out to every upstream, and spans exported as
OTLP/HTTP protobuf, decoded here with opentelemetry-proto's own classes.

One in-process HTTP server plays three peers and records what each request carried: the OTLP collector
(`POST /v1/traces`), a change-event webhook (`POST /hook`) and a JWKS endpoint (`GET /jwks`).

- an upload through gs:// (fake-gcs-server) with a caller's `traceparent` is one trace: the request span under
  the caller's span, and under it authentication, the rules decision, the storage lookup and commit and every
  upstream attempt (client spans with their HTTP status); the access-log line carries the same trace id;
- without a `traceparent` the gateway starts a trace: the request span is its root and the log has its id;
- the change event's webhook POST and the JWKS fetch carry a `traceparent` whose trace was exported with a span
  of that id as the parent;
- `--trace-sample-ratio 0` exports nothing for requests that start their trace here (while a sampled caller
  still is honoured), and tracing off still logs a trace id on every line and propagates the caller's context;
- a misconfiguration (ratio without an endpoint, a ratio out of range) stops start-up.
"""
from __future__ import annotations

import base64
import http.server
import json
import os
import secrets
import socketserver
import subprocess
import threading
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from harness import ALLOW_ALL_RULES, Server, portcullis_bin, request, signing_key_file, upload_url

CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
CALLER = f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"


def _jwks() -> bytes:
    numbers = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key().public_numbers()

    def b64(value: int) -> str:
        raw = value.to_bytes((value.bit_length() + 7) // 8, "big")
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    return json.dumps({"keys": [{"kty": "RSA", "kid": "k1", "alg": "RS256", "use": "sig",
                                 "n": b64(numbers.n), "e": b64(numbers.e)}]}).encode()


class Peers:
    """The collector, webhook and JWKS endpoint on one loopback port, recording what arrived."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.spans: list[Span] = []
        self.content_types: list[str] = []
        self.hooks: list[str | None] = []
        self.jwks: list[str | None] = []
        self.jwks_document = _jwks()
        peers = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def reply(self, status: int, body: bytes = b"", content_type: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path == "/v1/traces":
                    decoded = ExportTraceServiceRequest.FromString(body)
                    with peers.lock:
                        peers.content_types.append(self.headers.get("Content-Type", ""))
                        for resource in decoded.resource_spans:
                            for scope in resource.scope_spans:
                                peers.spans.extend(scope.spans)
                    self.reply(200, b"", "application/x-protobuf")
                elif self.path == "/hook":
                    with peers.lock:
                        peers.hooks.append(self.headers.get("traceparent"))
                    self.reply(200)
                else:
                    self.reply(404)

            def do_GET(self) -> None:
                if self.path == "/jwks":
                    with peers.lock:
                        peers.jwks.append(self.headers.get("traceparent"))
                    self.reply(200, peers.jwks_document)
                else:
                    self.reply(404)

        class Threading(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        self.server = Threading(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def trace(self, trace_id: str) -> list[Span]:
        with self.lock:
            return [s for s in self.spans if s.trace_id.hex() == trace_id]

    def wait(self, predicate, timeout: float = 15, what: str = "spans"):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                result = predicate(self)
            if result:
                return result
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}; spans: {[s.name for s in self.spans]}")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def peers():
    p = Peers()
    yield p
    p.close()


def gcs_bucket() -> tuple[str, str]:
    emulator = os.environ.get("STORAGE_EMULATOR_HOST") or os.environ.get("PC_FAKE_GCS_URL")
    if not emulator:
        pytest.skip("needs fake-gcs-server (scripts/emulators.sh; `make test` starts it)")
    emulator = emulator if emulator.startswith("http") else "http://" + emulator
    name = "trace-" + secrets.token_hex(4)
    made = request("POST", f"{emulator}/storage/v1/b?project=test", json.dumps({"name": name}).encode(),
                   {"Content-Type": "application/json"})
    assert made.status == 200, made.body[:300]
    return name, emulator


def gateway(workdir: Path, bucket: str, extra: list[str], env: dict[str, str] | None = None) -> Server:
    workdir.mkdir(parents=True, exist_ok=True)
    rules = workdir / "allow.rules"
    rules.write_text(ALLOW_ALL_RULES)
    key = workdir / "signing.key"
    signing_key_file(key, "k1")
    return Server(workdir=workdir, args=["--bucket", bucket, "--rules", str(rules), "--signing-key", str(key),
                                         *extra], env=env or {}, name="traced")


def log_line(server: Server, name: str) -> dict:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for entry in server.access_log():
            if entry.get("method") == "POST" and name in str(entry.get("object")):
                return entry
        time.sleep(0.05)
    raise AssertionError(f"no access-log line for {name}")


def attributes(span: Span) -> dict[str, object]:
    out: dict[str, object] = {}
    for kv in span.attributes:
        out[kv.key] = getattr(kv.value, kv.value.WhichOneof("value"))
    return out


def test_upload_through_gcs_is_one_trace_under_the_callers_span(tmp_path: Path, servers: list[Server],
                                                                 peers: Peers) -> None:
    bucket, emulator = gcs_bucket()
    server = gateway(tmp_path / "gw", f"{bucket}=gs://{bucket}",
                     ["--otlp-endpoint", peers.url, "--events-webhook", peers.url + "/hook"],
                     env={"STORAGE_EMULATOR_HOST": emulator})
    servers.append(server)
    server.start()

    resp = request("POST", upload_url(server.url, bucket, "traced.txt"), b"hello trace",
                   {"Content-Type": "text/plain", "traceparent": CALLER, "tracestate": "vendor=opaque"})
    assert resp.status == 200, resp.body[:300]

    spans = peers.wait(lambda p: (s := p.trace(CALLER_TRACE)) and any(x.kind == Span.SPAN_KIND_SERVER for x in s)
                       and sum(x.kind == Span.SPAN_KIND_CLIENT for x in s) >= 1 and s, what="the upload's trace")
    time.sleep(1.5)  # the batch holding the last spans of the request (ended with its log line) follows
    spans = peers.trace(CALLER_TRACE)
    assert all(ct == "application/x-protobuf" for ct in peers.content_types)
    by_id = {s.span_id.hex(): s for s in spans}
    assert len(by_id) == len(spans), "span ids are unique"

    [root] = [s for s in spans if s.kind == Span.SPAN_KIND_SERVER]
    assert root.parent_span_id.hex() == CALLER_SPAN
    assert root.name == "POST /v0/b/{bucket}/o"
    assert root.trace_state == "vendor=opaque"
    root_attributes = attributes(root)
    assert root_attributes["http.response.status_code"] == 200
    assert root_attributes["http.request.method"] == "POST"
    assert root.end_time_unix_nano >= root.start_time_unix_nano > 0

    children = [s for s in spans if s.parent_span_id == root.span_id]
    names = [s.name for s in children]
    for wanted in ("authenticate", "rules.decide", "storage.commit"):
        assert wanted in names, names
    attempts = [s for s in children if s.kind == Span.SPAN_KIND_CLIENT]
    assert attempts, names
    for attempt in attempts:
        values = attributes(attempt)
        assert values["portcullis.upstream.backend"] == f"gcs:{bucket}"
        # The lookup before the write answers 404 (a new object): an answer, not a failure.
        assert 200 <= values["http.response.status_code"] < 500, values
        assert attempt.status.code != Status.STATUS_CODE_ERROR
    assert any(attributes(a)["http.request.method"] in ("POST", "PUT") and
               attributes(a)["http.response.status_code"] == 200 for a in attempts), names
    # Every span of the request lies within it, and nothing points outside the trace.
    for span in spans:
        assert span is root or span.parent_span_id.hex() in by_id, span.name
        assert root.start_time_unix_nano <= span.start_time_unix_nano <= span.end_time_unix_nano

    assert log_line(server, "traced.txt")["trace_id"] == CALLER_TRACE

    # The change event's POST carries the delivery's trace: exported, with the POST's attempt as the parent.
    hook = peers.wait(lambda p: p.hooks and p.hooks[0], what="the webhook POST")
    _, hook_trace, hook_parent, flags = hook.split("-")
    assert flags == "01"
    delivery = peers.wait(lambda p: {s.span_id.hex(): s for s in p.trace(hook_trace)}.get(hook_parent),
                          what="the delivery's spans")
    assert delivery.kind == Span.SPAN_KIND_CLIENT
    [producer] = [s for s in peers.trace(hook_trace) if s.name == "event delivery"]
    assert delivery.parent_span_id == producer.span_id
    assert attributes(producer)["cloudevents.event_type"] == "google.cloud.storage.object.v1.finalized"


def test_a_trace_starts_here_without_traceparent(tmp_path: Path, servers: list[Server], peers: Peers) -> None:
    bucket, emulator = gcs_bucket()
    server = gateway(tmp_path / "gw", f"{bucket}=gs://{bucket}", ["--otlp-endpoint", peers.url],
                     env={"STORAGE_EMULATOR_HOST": emulator})
    servers.append(server)
    server.start()
    resp = request("POST", upload_url(server.url, bucket, "fresh.txt"), b"x", {"Content-Type": "text/plain"})
    assert resp.status == 200
    trace_id = log_line(server, "fresh.txt")["trace_id"]
    assert len(trace_id) == 32 and trace_id != "0" * 32
    root = peers.wait(lambda p: next((s for s in p.trace(trace_id) if s.kind == Span.SPAN_KIND_SERVER), None),
                      what="the request span")
    assert root.parent_span_id == b""
    client = peers.wait(lambda p: [s for s in p.trace(trace_id) if s.kind == Span.SPAN_KIND_CLIENT],
                        what="upstream attempts")
    assert all(s.parent_span_id == root.span_id for s in client)


def test_jwks_fetch_carries_its_trace(tmp_path: Path, servers: list[Server], peers: Peers) -> None:
    server = gateway(tmp_path / "gw", f"b=file:{tmp_path / 'data'}",
                     ["--otlp-endpoint", peers.url, "--jwt-keys", peers.url + "/jwks",
                      "--jwt-issuer", "iss", "--jwt-audience", "aud"])
    servers.append(server)
    server.start()
    header = peers.wait(lambda p: p.jwks and p.jwks[0], what="the JWKS fetch")
    _, trace_id, parent, flags = header.split("-")
    assert flags == "01"
    attempt = peers.wait(lambda p: {s.span_id.hex(): s for s in p.trace(trace_id)}.get(parent),
                         what="the JWKS attempt span")
    assert attempt.kind == Span.SPAN_KIND_CLIENT
    [fetch] = [s for s in peers.trace(trace_id) if s.name == "jwks fetch"]
    assert attempt.parent_span_id == fetch.span_id and fetch.parent_span_id == b""


def test_sampling_zero_exports_nothing_but_honours_a_sampled_caller(tmp_path: Path, servers: list[Server],
                                                                    peers: Peers) -> None:
    server = gateway(tmp_path / "gw", f"b=file:{tmp_path / 'data'}",
                     ["--trace-sample-ratio", "0"], env={"PORTCULLIS_OTLP_ENDPOINT": peers.url})
    servers.append(server)
    server.start()
    for i in range(20):
        assert request("POST", upload_url(server.url, "b", f"n{i}"), b"x", {"Content-Type": "text/plain"}).status == 200
    # Past two export intervals: a recorded span would have been sent by now.
    time.sleep(2.5)
    with peers.lock:
        assert peers.spans == []
    ids = {e["trace_id"] for e in server.access_log() if e.get("method") == "POST"}
    assert len(ids) == 20 and all(len(i) == 32 for i in ids)
    metrics = request("GET", server.url + "/metrics").body.decode()
    assert "portcullis_trace_spans_exported_total 0" in metrics

    assert request("POST", upload_url(server.url, "b", "sampled"), b"x",
                   {"Content-Type": "text/plain", "traceparent": CALLER}).status == 200
    peers.wait(lambda p: any(s.kind == Span.SPAN_KIND_SERVER for s in p.trace(CALLER_TRACE)),
               what="the sampled caller's request span")


def test_tracing_off_logs_and_propagates_ids(tmp_path: Path, servers: list[Server], peers: Peers) -> None:
    server = gateway(tmp_path / "gw", f"b=file:{tmp_path / 'data'}", ["--events-webhook", peers.url + "/hook"])
    servers.append(server)
    server.start()
    assert request("POST", upload_url(server.url, "b", "off"), b"x",
                   {"Content-Type": "text/plain", "traceparent": CALLER}).status == 200
    assert request("POST", upload_url(server.url, "b", "off2"), b"x", {"Content-Type": "text/plain"}).status == 200
    assert log_line(server, "off")["trace_id"] == CALLER_TRACE
    assert len(str(log_line(server, "off2")["trace_id"])) == 32
    hooks = peers.wait(lambda p: len(p.hooks) >= 2 and p.hooks, what="webhook POSTs")
    # Deliveries start unsampled traces of their own when nothing is exported.
    assert all(h and h.startswith("00-") and h.endswith("-00") for h in hooks)
    with peers.lock:
        assert peers.spans == []


@pytest.mark.parametrize("args, env, message", [
    (["--trace-sample-ratio", "0.5"], {}, "--otlp-endpoint"),
    (["--otlp-endpoint", "http://127.0.0.1:1", "--trace-sample-ratio", "2"], {}, "0 to 1"),
    ([], {"PORTCULLIS_OTLP_ENDPOINT": "ftp://x"}, "http"),
])
def test_misconfiguration_stops_start_up(tmp_path: Path, args: list[str], env: dict[str, str],
                                         message: str) -> None:
    run = subprocess.run([portcullis_bin(), "serve", "--bucket", f"b=file:{tmp_path}", *args],
                         env={**{k: v for k, v in os.environ.items() if not k.startswith("PORTCULLIS_")}, **env},
                         capture_output=True, timeout=30)
    assert run.returncode == 2, run
    assert message in (run.stderr + run.stdout).decode()
