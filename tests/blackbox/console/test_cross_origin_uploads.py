"""A page on another origin drives a Cloud Storage JSON API resumable upload in a real browser (Chromium).

The JSON API's route table declares its own CORS lists: a browser may send `Content-Range` and `X-Upload-*`,
and its script may read `Location` (the session URI) and `Range` (what a chunk persisted, on the 308 answer).
The page starts a session, sends two 256 KiB chunks, reads the persisted range between them, and gets the
object resource at the end; the gateway then holds exactly those bytes."""
from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from selenium.webdriver.remote.webdriver import WebDriver

from harness import ALLOW_ALL_RULES, Server, object_url, request

BUCKET = "cors-bucket"
PAGE = b"<!doctype html><html><head><title>another origin</title></head><body>app</body></html>"

UPLOAD = """
const [base, token, done] = [arguments[0], arguments[1], arguments[arguments.length - 1]];
(async () => {
  const chunk = (value) => new Uint8Array(262144).fill(value);
  const start = await fetch(base + '/upload/storage/v1/b/cors-bucket/o?uploadType=resumable&name=cors%2Ffile.bin', {
    method: 'POST',
    headers: {'Authorization': 'Bearer ' + token, 'Content-Type': 'application/json; charset=UTF-8',
              'X-Upload-Content-Type': 'application/octet-stream', 'X-Upload-Content-Length': '524288'},
    body: JSON.stringify({name: 'cors/file.bin'}),
  });
  const session = start.headers.get('Location');
  if (!session) return done({step: 'start', status: start.status, location: null});
  const first = await fetch(session, {method: 'PUT', headers: {'Content-Range': 'bytes 0-262143/524288'},
                                      body: chunk(1)});
  const persisted = first.headers.get('Range');
  const last = await fetch(session, {method: 'PUT', headers: {'Content-Range': 'bytes 262144-524287/524288'},
                                     body: chunk(2)});
  const resource = await last.json();
  done({step: 'done', startStatus: start.status, firstStatus: first.status, persisted,
        lastStatus: last.status, size: resource.size, name: resource.name});
})().catch((error) => done({step: 'error', error: String(error)}));
"""


class Page:
    """Serves one static page from a loopback port: the other origin."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(PAGE)))
                self.end_headers()
                self.wfile.write(PAGE)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    workdir = tmp_path_factory.mktemp("cors")
    (workdir / "storage.rules").write_text(ALLOW_ALL_RULES)
    admin_key = "cross-origin-admin-key-0123456789"
    (workdir / "admin.key").write_text(admin_key + "\n")
    server = Server(workdir=workdir, args=[
        "--bucket", f"{BUCKET}=file:{workdir / 'data'}", "--rules", str(workdir / "storage.rules"),
        "--admin-key", str(workdir / "admin.key")], name="cors").start()
    yield server, admin_key
    server.stop(timeout=10)
    server.kill()


def test_a_page_on_another_origin_uploads_through_the_json_api_in_chunks(
        gateway: tuple[Server, str], driver: WebDriver, tmp_path: Path) -> None:
    server, admin_key = gateway
    page = Page()
    try:
        driver.get(page.url)
        driver.set_script_timeout(30)
        result = driver.execute_async_script(UPLOAD, server.url, admin_key)
    finally:
        page.close()
    assert result.get("step") == "done", result
    assert result["startStatus"] == 200 and result["firstStatus"] == 308, result
    assert result["persisted"] == "bytes=0-262143", result
    assert result["lastStatus"] == 200 and result["size"] == "524288" and result["name"] == "cors/file.bin", result
    stored = request("GET", object_url(server.url, BUCKET, "cors/file.bin", alt="media"),
                     headers={"Authorization": f"Bearer {admin_key}"})
    assert stored.status == 200 and stored.body == bytes([1]) * 262144 + bytes([2]) * 262144
