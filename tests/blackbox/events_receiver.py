"""A real CloudEvents receiver for the change-event suites: Google's Functions Framework for Python running a
`@functions_framework.cloud_event` function, in its own venv (.venv-functions, requirements/functions.txt).

The function verifies `Portcullis-Signature` with the exact code docs/events.md shows (extracted from the page
between its `verify-signature` markers), appends one JSON line per request it receives to a log file, and
answers with what a control file says (status and delay), so tests can make it fail, stall or recover while it
runs. Standard library only on the test side.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

from harness import ROOT, free_port, request

DOCS = ROOT / "docs" / "events.md"

MAIN = '''
import json, os, threading, time
import flask
import functions_framework
from verify import verify

LOG = os.environ["RECEIVER_LOG"]
CONTROL = os.environ["RECEIVER_CONTROL"]
SECRET_FILE = os.environ.get("RECEIVER_SECRET")
SECRET = open(SECRET_FILE, "rb").read().strip() if SECRET_FILE else None
LOCK = threading.Lock()


def control():
    try:
        with open(CONTROL) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


@functions_framework.cloud_event
def receive(event):
    arrived = time.time()
    mode = control()
    header = flask.request.headers.get("Portcullis-Signature")
    body = flask.request.get_data()
    record = {
        "attributes": {k: v for k, v in event.get_attributes().items()},
        "data": event.data,
        "signature": header,
        "verified": verify(SECRET, header or "", body) if SECRET is not None else None,
        "tampered_rejected": (not verify(SECRET, header or "", body + b" ")) if SECRET is not None else None,
        "arrived": arrived,
        "status": int(mode.get("status", 200)),
    }
    delay = float(mode.get("delay", 0))
    if delay:
        time.sleep(delay)
    line = (json.dumps(record) + "\\n").encode()
    with LOCK:
        fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    if record["status"] >= 300:
        flask.abort(record["status"])
'''


def verify_snippet() -> str:
    """The signature-verification code block of docs/events.md."""
    text = DOCS.read_text()
    match = re.search(r"<!-- verify-signature:begin -->\s*```python\n(.*?)```\s*<!-- verify-signature:end -->", text,
                      re.S)
    if not match:
        raise AssertionError("docs/events.md has no verify-signature code block")
    return match.group(1)


def functions_framework_bin() -> str:
    path = ROOT / ".venv-functions" / "bin" / "functions-framework"
    if not path.exists():
        raise RuntimeError(f"{path} is missing: run scripts/deps.sh test")
    return str(path)


class Receiver:
    """`functions-framework --signature-type cloudevent` on 127.0.0.1:<port>, logging what it receives."""

    def __init__(self, workdir: Path, secret: Path | None = None, port: int | None = None) -> None:
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.secret = secret
        self.log = workdir / "received.jsonl"
        self.control_file = workdir / "control.json"
        self.process: subprocess.Popen[bytes] | None = None
        (workdir / "verify.py").write_text(verify_snippet())
        (workdir / "main.py").write_text(MAIN)
        self.set(status=200, delay=0)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/events"

    def set(self, status: int = 200, delay: float = 0) -> None:
        """What the function answers from now on."""
        tmp = self.control_file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"status": status, "delay": delay}))
        tmp.replace(self.control_file)

    def start(self, timeout: float = 30) -> "Receiver":
        env = {**os.environ, "RECEIVER_LOG": str(self.log), "RECEIVER_CONTROL": str(self.control_file),
               "PYTHONDONTWRITEBYTECODE": "1"}
        if self.secret:
            env["RECEIVER_SECRET"] = str(self.secret)
        out = open(self.workdir / "functions-framework.log", "ab")
        self.process = subprocess.Popen(
            [functions_framework_bin(), "--target", "receive", "--source", str(self.workdir / "main.py"),
             "--signature-type", "cloudevent", "--host", "127.0.0.1", "--port", str(self.port)],
            cwd=self.workdir, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)
        out.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            try:
                # A GET is not a CloudEvent: any HTTP answer means the server is up.
                request("GET", f"http://127.0.0.1:{self.port}/", timeout=1)
                return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        log = (self.workdir / "functions-framework.log").read_text(errors="replace")
        raise RuntimeError(f"functions-framework did not start:\n{log[-3000:]}")

    def stop(self) -> None:
        """Ends the framework and its workers (its own process group, started by us)."""
        if self.process is None:
            return
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.process.wait()
        self.process = None

    def records(self) -> list[dict]:
        """Every request received so far (acknowledged or not), in arrival order."""
        try:
            text = self.log.read_text()
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def acknowledged(self) -> list[dict]:
        return [r for r in self.records() if r["status"] < 300]

    def wait_for(self, predicate, timeout: float = 30, what: str = "events") -> list[dict]:
        """Polls the log until `predicate(acknowledged records)` holds; returns them."""
        deadline = time.monotonic() + timeout
        while True:
            records = self.acknowledged()
            if predicate(records):
                return records
            if time.monotonic() > deadline:
                summary = [(r["attributes"].get("type"), r["data"].get("name")) for r in records]
                raise AssertionError(f"timed out waiting for {what}; received {summary}")
            time.sleep(0.05)
