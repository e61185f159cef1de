"""The web console and the rules explain endpoint over real HTTP against a started gateway: the console's files
come from the binary alone with their caching and security headers, `--console off` / `PORTCULLIS_CONSOLE=off`
remove it, `--console-listen` / `PORTCULLIS_CONSOLE_LISTEN` move it to a listener (an origin) of its own, and
`POST /admin/v1/rules/explain` answers admins only. (The console in a browser is
tests/blackbox/console/.)"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

from harness import free_port, portcullis_bin, request

RULES = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /users/{uid}/{path=**} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
  }
}
"""


def test_the_console_is_served_from_the_binary_alone(start_server, tmp_path: Path, monkeypatch) -> None:
    # A copy of the binary in an empty directory, run from another: nothing beside it to serve files from.
    alone = tmp_path / "bin"
    alone.mkdir()
    shutil.copy(portcullis_bin(), alone / "portcullis")
    monkeypatch.setenv("PORTCULLIS_BIN", str(alone / "portcullis"))
    server = start_server()
    assert f"console: {server.url}/console/" in server.log_text()
    page = request("GET", server.url + "/console/")
    assert page.status == 200
    assert page.header("content-type") == "text/html; charset=utf-8"
    assert page.header("cache-control") == "no-cache"
    csp = page.header("content-security-policy") or ""
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert "frame-ancestors 'none'" in csp
    assert page.header("x-frame-options") == "DENY"
    assert page.header("x-content-type-options") == "nosniff"
    scripts = re.findall(rb'<script[^>]*src="(static/[0-9a-f]+/app\.js)"', page.body)
    assert scripts, page.body[:500]
    asset = request("GET", f"{server.url}/console/{scripts[0].decode()}")
    assert asset.status == 200
    assert asset.header("content-type") == "text/javascript; charset=utf-8"
    assert asset.header("cache-control") == "public, max-age=31536000, immutable"
    etag = asset.header("etag")
    assert etag and etag.startswith('"')
    again = request("GET", f"{server.url}/console/{scripts[0].decode()}", headers={"If-None-Match": etag})
    assert again.status == 304 and again.body == b"" and again.header("etag") == etag
    assert request("GET", server.url + "/console").header("location") == "console/"
    # Access log and metrics label console requests by template, never by file.
    routes = {e.get("route") for e in server.access_log()}
    assert "/console/static/{version}/{file}" in routes and "/console/" in routes


def test_console_off_removes_the_route(start_server) -> None:
    off = start_server(extra=["--console", "off"])
    assert request("GET", off.url + "/console/").status == 404
    assert "console:" not in off.log_text()


def test_the_environment_variable_turns_it_off_too(start_server) -> None:
    server = start_server(name="env-off")
    server.stop(timeout=10)
    server.env["PORTCULLIS_CONSOLE"] = "off"
    server.start()
    assert request("GET", server.url + "/console/").status == 404
    assert request("GET", server.url + "/healthz").status == 200


def test_console_listen_serves_the_console_on_its_own_origin_only(start_server) -> None:
    console_port = free_port()
    server = start_server(extra=["--console-listen", f"127.0.0.1:{console_port}",
                                 "--cors-origins", "https://app.example.com"])
    console = f"http://127.0.0.1:{console_port}"
    assert f"console: {console}/console/" in server.log_text()
    assert request("GET", server.url + "/console/").status == 404
    assert request("GET", server.url + "/console").status == 404
    page = request("GET", console + "/console/")
    assert page.status == 200
    # The page calls the main listener, on the host name it was loaded from, and its policy allows only that.
    assert f'<meta name="portcullis-api" content="{server.url}">'.encode() in page.body
    csp = page.header("content-security-policy") or ""
    assert f"connect-src 'self' {server.url};" in csp and "script-src 'self';" in csp
    assert request("GET", console + "/console").header("location") == "console/"
    assert request("GET", console + "/readyz").status == 200
    # The console's own origin is allowed by the API beside the configured list; others still are not.
    for origin, allowed in ((console, True), ("https://app.example.com", True), ("http://evil.test", False)):
        preflight = request("OPTIONS", f"{server.url}/storage/v1/b", headers={
            "Origin": origin, "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "authorization"})
        assert (preflight.status == 204 and preflight.header("access-control-allow-origin") == origin) == allowed, \
            (origin, preflight.status, preflight.headers)
    # The API is not on the console's listener.
    assert request("GET", console + "/storage/v1/b").status == 404


def test_console_listen_from_the_environment(start_server) -> None:
    server = start_server(name="env-console-listen")
    server.stop(timeout=10)
    console_port = free_port()
    server.env["PORTCULLIS_CONSOLE_LISTEN"] = f"127.0.0.1:{console_port}"
    server.start()
    assert request("GET", server.url + "/console/").status == 404
    assert request("GET", f"http://127.0.0.1:{console_port}/console/").status == 200


def test_rules_explain_answers_admins_only(start_server, admin_key, tmp_path: Path) -> None:
    key_path, key = admin_key
    rules = tmp_path / "users.rules"
    rules.write_text(RULES)
    secret = tmp_path / "hs.key"
    secret.write_text("an hmac secret of at least sixteen bytes\n")
    server = start_server(rules=rules, extra=["--admin-key", str(key_path), "--jwt-hmac-secret", str(secret),
                                              "--console", "off"])
    url = server.url + "/admin/v1/rules/explain"

    def explain(body: dict[str, object], token: str | None = key):
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return request("POST", url, body=json.dumps(body).encode(), headers=headers)

    allowed = explain({"method": "get", "bucket": "test-bucket", "path": "users/alice/a.txt", "auth": {"sub": "alice"}})
    assert allowed.status == 200, allowed.body
    assert allowed.json()["decision"] == "allow" and allowed.json()["allowed"] is True
    assert "users.rules:5:" in allowed.json()["explanation"]
    denied = explain({"method": "create", "bucket": "test-bucket", "path": "users/alice/a.txt", "auth": {"sub": "bob"},
                      "requestResource": {"size": "12", "contentType": "text/plain"}})
    assert denied.json()["decision"] == "deny" and "evaluated to false" in denied.json()["explanation"]
    # The endpoint is there whether or not the console is, and only for the admin key.
    user = subprocess.run([portcullis_bin(), "token", "--hmac-secret", str(secret), "--uid", "alice"],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert explain({"method": "get", "bucket": "test-bucket", "path": "users/alice/a.txt"}, token=user).status == 403
    assert explain({"method": "get", "bucket": "test-bucket", "path": "users/alice/a.txt"}, token=None).status == 403
    assert explain({"method": "fetch", "bucket": "test-bucket", "path": "x"}).status == 400
    assert request("GET", url, headers={"Authorization": f"Bearer {key}"}).status == 405


def test_the_image_build_has_what_embeds_the_console() -> None:
    """The Dockerfile copies only what the build reads: the console's assets come with Sources/, and the
    build-tool plugin that embeds them lives in Plugins/."""
    from harness import ROOT
    text = (ROOT / "Dockerfile").read_text()
    assert "COPY Plugins/ Plugins/" in text
    assert (ROOT / "Plugins" / "ConsoleAssetsPlugin" / "plugin.swift").exists()
