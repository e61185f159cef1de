"""A browser form upload with a V4 POST policy, in Chromium: a page on another origin holds a plain HTML
`<form method="post" enctype="multipart/form-data">` whose hidden fields carry a policy signed with the key
file of a Portcullis service account (signed here with the `openssl` command, as any backend could); the user
picks a file and submits. The gateway checks the policy and stores the file as the signer; the page lands on
GCS's `<PostResponse>`."""
from __future__ import annotations

import base64
import datetime
import html
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from chromium import console_problems, wait_for
from harness import ALLOW_ALL_RULES, Server, object_url, portcullis_bin, request

BUCKET = "forms-bucket"
PROJECT = "demo"


class Page:
    """Serves one page from a loopback port: the other origin."""

    def __init__(self, body: bytes) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str, Path]]:
    workdir = tmp_path_factory.mktemp("policy")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PORTCULLIS_")}
    made = subprocess.run([portcullis_bin(), "service-account", "create", "uploader", "--admin", "--project", PROJECT,
                           "--accounts", "accounts.json", "--out", "uploader.json"],
                          cwd=workdir, capture_output=True, text=True, timeout=60, env=env)
    assert made.returncode == 0, made.stderr
    email = made.stdout.strip()
    (workdir / "storage.rules").write_text(ALLOW_ALL_RULES)
    admin_key = "policy-admin-key-0123456789abcdef"
    (workdir / "admin.key").write_text(admin_key + "\n")
    server = Server(workdir=workdir, args=[
        "--bucket", f"{BUCKET}=file:{workdir / 'data'}", "--rules", str(workdir / "storage.rules"),
        "--admin-key", str(workdir / "admin.key"), "--service-accounts", str(workdir / "accounts.json"),
        "--signed-url-accounts", email], name="policy").start()
    yield server, admin_key, workdir
    server.stop(timeout=10)
    server.kill()


def signed_fields(key_file: Path, key: str, workdir: Path) -> dict[str, str]:
    """The form's fields for a V4 POST policy (Google's documented format), signed with RSA-SHA256."""
    info = json.loads(key_file.read_text())
    now = datetime.datetime.now(datetime.timezone.utc)
    timestamp = now.strftime("%Y%m%dT%H%M%SZ")
    credential = f"{info['client_email']}/{now.strftime('%Y%m%d')}/auto/storage/goog4_request"
    fields = {"key": key, "x-goog-algorithm": "GOOG4-RSA-SHA256", "x-goog-credential": credential,
              "x-goog-date": timestamp, "success_action_status": "201"}
    expiration = (now + datetime.timedelta(minutes=10)).strftime("%Y-%m-%dT%H:%M:%SZ")
    conditions = [{"bucket": BUCKET}, *({k: v} for k, v in fields.items()), ["content-length-range", 1, 1 << 20]]
    policy = base64.b64encode(json.dumps({"conditions": conditions, "expiration": expiration},
                                         separators=(",", ":")).encode()).decode()
    pem = workdir / "uploader.pem"
    pem.write_text(info["private_key"])
    signature = subprocess.run(["openssl", "dgst", "-sha256", "-sign", str(pem)], input=policy.encode(),
                               capture_output=True, check=True, timeout=30).stdout
    pem.unlink()
    return {**fields, "policy": policy, "x-goog-signature": signature.hex()}


def test_a_browser_form_uploads_with_a_post_policy(gateway: tuple[Server, str, Path], driver: WebDriver,
                                                   tmp_path: Path) -> None:
    server, admin_key, workdir = gateway
    fields = signed_fields(workdir / "uploader.json", "forms/picked.txt", workdir)
    inputs = "".join(f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">' for k, v in fields.items())
    form = (f'<!doctype html><html><head><title>form</title></head><body>'
            f'<form method="post" enctype="multipart/form-data" action="{server.url}/{BUCKET}/">{inputs}'
            f'<input type="file" name="file" id="file"><button id="send" type="submit">Upload</button>'
            f'</form></body></html>').encode()
    picked = tmp_path / "picked.txt"
    picked.write_bytes(b"picked in the browser\n")
    page = Page(form)
    try:
        driver.get(page.url)
        driver.find_element(By.ID, "file").send_keys(str(picked))
        driver.find_element(By.ID, "send").click()
        wait_for(lambda: "PostResponse" in driver.page_source, message="the PostResponse page")
        assert "forms/picked.txt" in driver.page_source
        # The browser asks the gateway for /favicon.ico after rendering the XML answer: that 404 is expected.
        assert [p for p in console_problems(driver) if "/favicon.ico" not in p] == []
    finally:
        page.close()
    stored = request("GET", object_url(server.url, BUCKET, "forms/picked.txt", alt="media"),
                     headers={"Authorization": f"Bearer {admin_key}"})
    assert stored.status == 200 and stored.body == b"picked in the browser\n"
