"""The web console end to end, in a real browser: headless Chromium driven by Selenium against a started
gateway. Every step goes through the page as a person would (clicks, keys, file pickers) and is then checked
through the gateway's API. The browser console must stay free of errors and warnings throughout; the only
entries allowed are Chromium's reports of HTTP statuses a test provokes on purpose (a denial, a conflict).

Screenshots of the main views are written by these tests (docs/console/ with PC_UPDATE_SCREENSHOTS=1)."""
from __future__ import annotations

import hashlib
import json
import os
import struct
import subprocess
import urllib.parse
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select

from chromium import by_testid, console_problems, one, screenshot, set_viewport, wait_for
from harness import Server, object_url, portcullis_bin, request, signing_key_file, upload_url

BUCKET = "console-bucket"
RULES = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    // Signed-in users may list the bucket root (only the root: `all` is empty there) and read its files,
    // except the ledger.
    match /{all=**} {
      allow list: if request.auth != null && string(all) == '';
    }
    match /{name} {
      allow get: if request.auth != null && name != 'ledger.csv';
    }
    match /shared/{path=**} {
      allow read, write: if request.auth != null;
    }
    match /users/{uid}/{path=**} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
    // Nothing grants anything under secret/.
  }
}
"""


def png(width: int, height: int, seed: int) -> bytes:
    """A small real PNG (a soft gradient with a disc), for previews that look like photos in screenshots."""
    rows = []
    for y in range(height):
        row = bytearray([0])
        for x in range(width):
            dx, dy = x - width * 0.68, y - height * 0.38
            sun = dx * dx + dy * dy < (height * 0.16) ** 2
            t = y / height
            r, g, b = (255, 214, 120) if sun else (int(40 + 200 * t), int(70 + 90 * t * (seed % 3 + 1) / 3), int(150 - 60 * t))
            row += bytes((r, g, b))
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"".join(rows), 9)) + chunk(b"IEND", b"")


SEED = {
    "welcome.txt": (b"Welcome to the team bucket.\nEverything here is served by Portcullis.\n", "text/plain"),
    "data.json": (json.dumps({"service": "portcullis", "regions": ["eu-west", "us-east"], "replicas": 3}).encode(), "application/json"),
    "ledger.csv": (b"date,amount\n2026-11-01,1200\n", "text/csv"),
    "photos/sunset.png": (png(320, 200, 1), "image/png"),
    "photos/harbour.png": (png(320, 200, 2), "image/png"),
    "photos/2026/team.png": (png(240, 160, 0), "image/png"),
    "reports/q3-summary.txt": (b"Q3: uploads up 40%, p99 latency down 12%.\n", "text/plain"),
    "shared/readme.md": (b"# Shared\nFiles everyone signed in may read and write.\n", "text/markdown"),
    "users/alice/notes.txt": (b"alice's notes\n", "text/plain"),
    "secret/keys.txt": (b"not for you\n", "text/plain"),
}


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    workdir = tmp_path_factory.mktemp("console")
    (workdir / "storage.rules").write_text(RULES)
    signing_key_file(workdir / "signing.key", "k1")
    admin_key = os.urandom(24).hex()
    (workdir / "admin.key").write_text(admin_key + "\n")
    (workdir / "hs.key").write_text(os.urandom(32).hex() + "\n")
    server = Server(workdir=workdir, name="console", args=[
        "--bucket", f"{BUCKET}=file:{workdir / 'data'}", "--bucket", f"archive=file:{workdir / 'archive'}",
        "--rules", "storage.rules", "--signing-key", str(workdir / "signing.key"),
        "--admin-key", str(workdir / "admin.key"), "--jwt-hmac-secret", str(workdir / "hs.key")])
    server.start()
    admin = {"Authorization": f"Bearer {admin_key}"}
    for name, (body, content_type) in SEED.items():
        response = request("POST", upload_url(server.url, BUCKET, name), body=body,
                           headers={**admin, "Content-Type": content_type})
        assert response.status == 200, response.body
    yield {"server": server, "admin_key": admin_key, "admin": admin, "workdir": workdir}
    server.stop(timeout=10)
    server.kill()


@pytest.fixture
def page(driver: WebDriver, request: pytest.FixtureRequest) -> Iterator[WebDriver]:
    """The browser, checked after the test for console errors (less what @pytest.mark.expect_http names)."""
    console_problems(driver)  # drop what earlier tests left
    yield driver
    marker = request.node.get_closest_marker("expect_http")
    problems = console_problems(driver, marker.args if marker else ())
    assert not problems, "browser console:\n" + "\n".join(problems)


def console_url(gateway: dict[str, object], fragment: str = "") -> str:
    return f"{gateway['server'].url}/console/{fragment}"  # type: ignore[attr-defined]


def folder_fragment(prefix: str, bucket: str = BUCKET) -> str:
    return f"#/b/{bucket}/o/" + "/".join(urllib.parse.quote(s, safe="") for s in prefix.split("/"))


def sign_in(page: WebDriver, credential: str) -> None:
    field = one(page, "signin-key")
    field.clear()
    field.send_keys(credential)
    one(page, "signin-submit").click()
    wait_for(lambda: page.find_element(By.ID, "app").is_displayed(), message="the signed-in console")


def ensure_admin(page: WebDriver, gateway: dict[str, object], fragment: str = "") -> None:
    """Opens the console at `fragment`, signed in with the admin key."""
    page.get(console_url(gateway, fragment))
    wait_for(lambda: page.find_element(By.ID, "app").is_displayed() or page.find_element(By.ID, "signin").is_displayed())
    if page.find_element(By.ID, "signin").is_displayed():
        sign_in(page, str(gateway["admin_key"]))
    wait_for(lambda: one(page, "identity").text == "Admin", message="the admin identity")


def wait_listed(page: WebDriver) -> None:
    wait_for(lambda: one(page, "list-status").get_attribute("data-state") in ("complete", "more"), message="the listing")


def file_row(page: WebDriver, name: str):
    return one(page, "file-row", name=name)


def api_object(gateway: dict[str, object], name: str) -> dict[str, object] | None:
    url = f"{gateway['server'].url}/storage/v1/b/{BUCKET}/o/{urllib.parse.quote(name, safe='')}"  # type: ignore[attr-defined]
    response = request("GET", url, headers=gateway["admin"])  # type: ignore[arg-type]
    if response.status == 404:
        return None
    assert response.status == 200, response.body
    return response.json()  # type: ignore[return-value]


def user_token(gateway: dict[str, object], uid: str) -> str:
    out = subprocess.run([portcullis_bin(), "token", "--hmac-secret", str(gateway["workdir"] / "hs.key"),  # type: ignore[operator]
                          "--uid", uid, "--claims", json.dumps({"email": f"{uid}@example.com"})],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


# The admin's tour.

def test_sign_in_with_the_admin_key_and_browse(page: WebDriver, gateway: dict[str, object]) -> None:
    page.get(console_url(gateway))
    page.execute_script("sessionStorage.clear()")
    page.get(console_url(gateway))
    one(page, "signin-key")
    screenshot(page, "sign-in")
    sign_in(page, str(gateway["admin_key"]))
    wait_listed(page)
    # The admin sees every bucket (byte order: the empty archive first) and picks one.
    select = Select(one(page, "bucket-select"))
    assert [o.text for o in select.options][:2] == ["archive", BUCKET]
    assert select.first_selected_option.text == "archive"
    one(page, "list-empty")
    select.select_by_visible_text(BUCKET)
    wait_for(lambda: by_testid(page, "file-row", name="welcome.txt"), message=f"{BUCKET} listed")
    folders = {e.get_attribute("data-prefix") for e in by_testid(page, "folder-row")}
    assert folders == {"photos/", "reports/", "shared/", "users/", "secret/"}
    files = {e.get_attribute("data-name") for e in by_testid(page, "file-row")}
    assert files == {"welcome.txt", "data.json", "ledger.csv"}
    row = file_row(page, "welcome.txt")
    assert "text/plain" in row.text and "B" in row.text
    screenshot(page, "browse")


def test_navigate_into_a_folder_and_back(page: WebDriver, gateway: dict[str, object]) -> None:
    ensure_admin(page, gateway, folder_fragment(""))
    wait_listed(page)
    one(page, "folder-row", prefix="photos/").click()
    wait_for(lambda: by_testid(page, "file-row", name="photos/sunset.png"), message="photos/ listed")
    crumbs = one(page, "breadcrumb").find_elements(By.TAG_NAME, "a")
    assert [c.text for c in crumbs] == [BUCKET, "photos"]
    assert one(page, "folder-row", prefix="photos/2026/")
    # Deeper with the keyboard: focus the folder row, Enter opens it, Backspace comes back up.
    row = one(page, "folder-row", prefix="photos/2026/")
    page.execute_script("arguments[0].focus()", row)
    row.send_keys(Keys.ENTER)
    wait_for(lambda: by_testid(page, "file-row", name="photos/2026/team.png"), message="photos/2026/ listed")
    one(page, "file-row", name="photos/2026/team.png").send_keys(Keys.BACKSPACE)
    wait_for(lambda: by_testid(page, "file-row", name="photos/sunset.png"), message="back in photos/")
    # And back to the root through the breadcrumb.
    one(page, "breadcrumb").find_element(By.LINK_TEXT, BUCKET).click()
    wait_for(lambda: by_testid(page, "file-row", name="welcome.txt"), message="back at the root")
    assert not by_testid(page, "file-row", name="photos/sunset.png")


def test_filter_asks_the_server_for_a_prefix(page: WebDriver, gateway: dict[str, object]) -> None:
    ensure_admin(page, gateway, folder_fragment(""))
    wait_listed(page)
    server: Server = gateway["server"]  # type: ignore[assignment]
    before = len(server.access_log())
    one(page, "filter").send_keys("we")
    wait_for(lambda: [e.get_attribute("data-name") for e in by_testid(page, "file-row")] == ["welcome.txt"]
             and not by_testid(page, "folder-row"), message="the filtered listing")
    lists = [e for e in server.access_log()[before:] if e.get("route") == "/storage/v1/b/{bucket}/o"]
    assert any("prefix=we&" in str(e.get("path")) or str(e.get("path")).endswith("prefix=we") for e in lists), lists
    one(page, "filter").send_keys(Keys.ESCAPE)
    wait_for(lambda: len(by_testid(page, "folder-row")) == 5, message="the unfiltered listing")


def test_upload_three_files_with_progress(page: WebDriver, gateway: dict[str, object], tmp_path: Path) -> None:
    ensure_admin(page, gateway, folder_fragment(""))
    wait_listed(page)
    # A new folder first: it exists in the console until a file lands in it.
    page.find_element(By.ID, "new-folder").click()
    one(page, "prompt-input").send_keys("incoming")
    one(page, "prompt-ok").click()
    wait_for(lambda: [c.text for c in one(page, "breadcrumb").find_elements(By.TAG_NAME, "a")] == [BUCKET, "incoming"])
    one(page, "list-empty")

    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(20 * 1024 * 1024))
    notes = tmp_path / "notes.txt"
    notes.write_text("uploaded from the console\n")
    photo = tmp_path / "lighthouse.png"
    photo.write_bytes(png(320, 200, 2))
    server: Server = gateway["server"]  # type: ignore[assignment]
    before = len(server.access_log())
    by_testid(page, "upload-input")[0].send_keys("\n".join(str(p) for p in (big, notes, photo)))

    bar = one(page, "upload-progress")
    wait_for(lambda: len(by_testid(page, "upload-item")) == 3, message="three upload rows")
    seen = set()

    def finished() -> bool:
        seen.add(int(bar.get_attribute("data-percent")))
        return all(i.get_attribute("data-state") == "done" for i in by_testid(page, "upload-item"))
    wait_for(finished, timeout=120, message="every upload done")
    assert bar.get_attribute("data-percent") == "100"
    assert bar.get_attribute("value") == "100"
    assert all(p.get_attribute("data-percent") == "100" for p in by_testid(page, "upload-item-progress"))
    assert "3 of 3 files uploaded" in one(page, "upload-progress").find_element(By.XPATH, "..").text
    screenshot(page, "upload")
    # The new files are in the list without a reload, and on the server byte for byte.
    for path in (big, notes, photo):
        name = f"incoming/{path.name}"
        wait_for(lambda: by_testid(page, "file-row", name=name), message=f"{name} listed")
        meta = api_object(gateway, name)
        assert meta is not None and int(meta["size"]) == path.stat().st_size
        body = request("GET", object_url(server.url, BUCKET, name, alt="media"), headers=gateway["admin"]).body  # type: ignore[arg-type]
        assert hashlib.sha256(body).digest() == hashlib.sha256(path.read_bytes()).digest()
    assert api_object(gateway, "incoming/lighthouse.png")["contentType"] == "image/png"  # type: ignore[index]
    # The 20 MiB file went up through the resumable protocol in several chunks, none above 4 MiB (bytes_in
    # counts the request head too).
    chunks = [e for e in server.access_log()[before:]
              if e.get("method") == "POST" and "upload_id=" in str(e.get("path")) and int(e.get("bytes_in") or 0) > 0]
    big_chunks = [e for e in chunks if int(e["bytes_in"]) > 64 * 1024]
    assert len(big_chunks) >= 5, chunks
    assert max(int(e["bytes_in"]) for e in big_chunks) <= 4 * 1024 * 1024 + 16 * 1024
    assert sum(int(e["bytes_in"]) for e in big_chunks) >= 20 * 1024 * 1024
    one(page, "uploads-clear").click()
    wait_for(lambda: not page.find_element(By.ID, "uploads").is_displayed(), message="the finished uploads to clear")


def throttle(page: WebDriver, *, offline: bool = False, upload_bytes_per_second: int = -1) -> None:
    """Chromium's network emulation: slow uploads down (or cut the network) for this page."""
    page.execute_cdp_cmd("Network.enable", {})
    page.execute_cdp_cmd("Network.emulateNetworkConditions", {
        "offline": offline, "latency": 0, "downloadThroughput": -1, "uploadThroughput": upload_bytes_per_second})


@pytest.mark.expect_http("net::ERR_INTERNET_DISCONNECTED")
def test_pause_resume_cancel_and_recover_from_a_dropped_network(page: WebDriver, gateway: dict[str, object],
                                                                  tmp_path: Path) -> None:
    ensure_admin(page, gateway, folder_fragment("shared/"))
    wait_listed(page)
    slow = tmp_path / "slow.bin"
    slow.write_bytes(os.urandom(12 * 1024 * 1024))
    dropped = tmp_path / "dropped.bin"
    dropped.write_bytes(os.urandom(6 * 1024 * 1024))
    doomed = tmp_path / "doomed.bin"
    doomed.write_bytes(os.urandom(6 * 1024 * 1024))
    try:
        throttle(page, upload_bytes_per_second=3 * 1024 * 1024)
        by_testid(page, "upload-input")[0].send_keys("\n".join(str(p) for p in (slow, doomed)))
        item = one(page, "upload-item", name="shared/slow.bin")
        other = one(page, "upload-item", name="shared/doomed.bin")
        # Cancel one while it runs: it leaves the total and never becomes an object.
        wait_for(lambda: other.get_attribute("data-state") == "uploading", message="the second upload to start")
        other.find_element(By.CSS_SELECTOR, "button[aria-label^='Cancel']").click()
        wait_for(lambda: other.get_attribute("data-state") == "cancelled", message="the cancel")
        # Pause the other part-way; it stays where it is until resumed.
        wait_for(lambda: 0 < int(item.find_element(By.TAG_NAME, "progress").get_attribute("data-percent")) < 60,
                 message="the upload under way")
        item.find_element(By.CSS_SELECTOR, "button[aria-label^='Pause']").click()
        wait_for(lambda: item.get_attribute("data-state") == "paused", message="the pause")
        paused_at = int(item.find_element(By.TAG_NAME, "progress").get_attribute("data-percent"))
        assert "Paused at" in item.text
        assert api_object(gateway, "shared/slow.bin") is None
        throttle(page)
        item.find_element(By.CSS_SELECTOR, "button[aria-label^='Resume']").click()
        wait_for(lambda: item.get_attribute("data-state") == "done", timeout=60, message="the resumed upload")
        assert paused_at < 100
        meta = api_object(gateway, "shared/slow.bin")
        assert meta is not None and int(meta["size"]) == slow.stat().st_size
        body = request("GET", object_url(gateway["server"].url, BUCKET, "shared/slow.bin", alt="media"),  # type: ignore[attr-defined]
                       headers=gateway["admin"]).body  # type: ignore[arg-type]
        assert body == slow.read_bytes()
        assert api_object(gateway, "shared/doomed.bin") is None
        # The network drops mid-upload: the upload waits and retries by itself, and finishes once it is back.
        throttle(page, upload_bytes_per_second=2 * 1024 * 1024)
        by_testid(page, "upload-input")[0].send_keys(str(dropped))
        third = one(page, "upload-item", name="shared/dropped.bin")
        wait_for(lambda: int(third.find_element(By.TAG_NAME, "progress").get_attribute("data-percent")) > 0,
                 message="the third upload under way")
        throttle(page, offline=True)
        wait_for(lambda: "retrying" in third.text, message="a retry to be scheduled")
        throttle(page)
        wait_for(lambda: third.get_attribute("data-state") == "done", timeout=60, message="the upload after the drop")
        body = request("GET", object_url(gateway["server"].url, BUCKET, "shared/dropped.bin", alt="media"),  # type: ignore[attr-defined]
                       headers=gateway["admin"]).body  # type: ignore[arg-type]
        assert body == dropped.read_bytes()
        assert one(page, "upload-progress").get_attribute("data-percent") == "100"
    finally:
        throttle(page)
        page.execute_cdp_cmd("Network.disable", {})
    one(page, "uploads-clear").click()


def test_edit_metadata_as_one_patch(page: WebDriver, gateway: dict[str, object]) -> None:
    ensure_admin(page, gateway, folder_fragment("photos/"))
    wait_listed(page)
    file_row(page, "photos/sunset.png").click()
    panel = one(page, "metadata-panel")
    wait_for(lambda: by_testid(panel, "metadata-save"), message="the metadata editor")
    wait_for(lambda: page.execute_script(
        "const i = document.querySelector('[data-testid=image-preview]'); return i && i.complete && i.naturalWidth > 0"),
        message="the image preview")
    assert "image/png" in panel.text and "Metageneration" in panel.text
    screenshot(page, "file")
    before = api_object(gateway, "photos/sunset.png")
    one(panel, "metadata-add").click()
    key = [e for e in by_testid(panel, "metadata-key") if e.is_displayed()][-1]
    key.send_keys("team")
    [e for e in by_testid(panel, "metadata-value") if e.is_displayed()][-1].send_keys("console")
    cache = one(panel, "metadata-cacheControl")
    cache.clear()
    cache.send_keys("public, max-age=600")
    one(panel, "metadata-save").click()
    wait_for(lambda: "Saved" in one(page, "metadata-status").text, message="the save to finish")
    after = api_object(gateway, "photos/sunset.png")
    assert after["metadata"]["team"] == "console"  # type: ignore[index]
    assert after["cacheControl"] == "public, max-age=600"  # type: ignore[index]
    assert int(after["metageneration"]) == int(before["metageneration"]) + 1  # type: ignore[index]
    # The panel shows what the server now holds.
    assert f"Metageneration is now {after['metageneration']}" in one(page, "metadata-status").text  # type: ignore[index]


@pytest.mark.expect_http(412)
def test_a_concurrent_edit_is_reported_not_overwritten(page: WebDriver, gateway: dict[str, object]) -> None:
    ensure_admin(page, gateway, folder_fragment("reports/"))
    wait_listed(page)
    file_row(page, "reports/q3-summary.txt").click()
    panel = one(page, "metadata-panel")
    wait_for(lambda: "Q3: uploads up" in one(panel, "text-preview").text, message="the text preview")
    # Someone else changes the metadata after the panel loaded it.
    server: Server = gateway["server"]  # type: ignore[assignment]
    response = request("PATCH", object_url(server.url, BUCKET, "reports/q3-summary.txt"),
                       body=json.dumps({"metadata": {"owner": "bob"}}).encode(),
                       headers={**gateway["admin"], "Content-Type": "application/json"})  # type: ignore[dict-item]
    assert response.status == 200
    disposition = api_object(gateway, "reports/q3-summary.txt").get("contentDisposition")  # type: ignore[union-attr]
    field = one(panel, "metadata-contentDisposition")
    field.clear()
    field.send_keys("attachment")
    one(panel, "metadata-save").click()
    notice = one(page, "metadata-conflict")
    assert "someone else changed" in notice.text.lower()
    meta = api_object(gateway, "reports/q3-summary.txt")
    assert meta["metadata"]["owner"] == "bob"  # type: ignore[index]
    assert meta.get("contentDisposition") == disposition != "attachment"  # type: ignore[union-attr]
    # Reloading shows their change; saving again then works.
    one(page, "metadata-reload").click()
    wait_for(lambda: "owner" in one(page, "metadata-panel").text, message="the reloaded panel")


def test_delete_a_file_and_then_two_at_once(page: WebDriver, gateway: dict[str, object]) -> None:
    ensure_admin(page, gateway, folder_fragment(""))
    wait_listed(page)
    file_row(page, "data.json").click()
    panel = one(page, "metadata-panel")
    wait_for(lambda: '"replicas": 3' in one(panel, "text-preview").text, message="the JSON preview")
    one(panel, "delete-button").click()
    one(page, "confirm-delete").click()
    wait_for(lambda: not by_testid(page, "file-row", name="data.json"), message="the row to go")
    assert api_object(gateway, "data.json") is None
    assert not page.find_element(By.ID, "details").is_displayed()

    page.get(console_url(gateway, folder_fragment("incoming/")))
    wait_listed(page)
    for name in ("incoming/notes.txt", "incoming/lighthouse.png"):
        file_row(page, name).find_element(By.CSS_SELECTOR, "input[type=checkbox]").click()
    one(page, "delete-selected").click()
    one(page, "confirm-delete").click()
    wait_for(lambda: [e.get_attribute("data-name") for e in by_testid(page, "file-row")] == ["incoming/big.bin"],
             message="the two rows to go")
    assert api_object(gateway, "incoming/notes.txt") is None and api_object(gateway, "incoming/lighthouse.png") is None
    assert api_object(gateway, "incoming/big.bin") is not None


def run_playground(page: WebDriver, method: str, path: str, auth: str) -> str:
    Select(one(page, "playground-method")).select_by_value(method)
    field = one(page, "playground-path")
    field.clear()
    field.send_keys(path)
    claims = one(page, "playground-auth")
    claims.clear()
    claims.send_keys(auth)
    one(page, "playground-run").click()
    result = one(page, "playground-result")
    return wait_for(lambda: result.text if result.text.startswith(("allow", "deny")) else None, message="a verdict")


def test_rules_playground_explains_allow_and_deny(page: WebDriver, gateway: dict[str, object]) -> None:
    ensure_admin(page, gateway, "#/playground")
    one(page, "playground-run")
    verdict = run_playground(page, "get", "users/alice/notes.txt", '{"sub": "alice"}')
    assert verdict.startswith("allow")
    assert "users/{uid}" in verdict and "evaluated to true" in verdict
    screenshot(page, "playground")
    verdict = run_playground(page, "get", "users/alice/notes.txt", '{"sub": "bob"}')
    assert verdict.startswith("deny")
    assert "evaluated to false" in verdict
    verdict = run_playground(page, "list", "secret", '{"sub": "alice"}')
    assert verdict.startswith("deny") and "string(all) == ''" in verdict and "evaluated to false" in verdict


def test_narrow_screen_layout(page: WebDriver, gateway: dict[str, object]) -> None:
    try:
        set_viewport(page, 360, 740)
        ensure_admin(page, gateway, folder_fragment("photos/"))
        wait_listed(page)
        assert page.execute_script("return document.documentElement.scrollWidth") <= 360
        screenshot(page, "mobile-browse")
        file_row(page, "photos/harbour.png").click()
        panel = one(page, "metadata-panel")
        wait_for(lambda: by_testid(panel, "metadata-save"), message="the file panel")
        wait_for(lambda: page.execute_script(
            "const i = document.querySelector('[data-testid=image-preview]'); return i && i.complete && i.naturalWidth > 0"),
            message="the image preview")
        assert panel.size["width"] <= 360
        assert page.execute_script("return document.documentElement.scrollWidth") <= 360
        screenshot(page, "mobile-file")
        page.find_element(By.ID, "details-close").send_keys(Keys.ESCAPE)
        wait_for(lambda: not page.find_element(By.ID, "details").is_displayed(), message="Escape to close the panel")
    finally:
        set_viewport(page, 1280, 800)


def test_the_upload_tray_leaves_every_row_reachable(page: WebDriver, gateway: dict[str, object], tmp_path: Path
                                                    ) -> None:
    """With the upload tray open over the list's bottom corner, the list scrolls far enough that its last row
    shows above the tray, and the tray's room goes away with it."""
    server: Server = gateway["server"]  # type: ignore[assignment]
    for i in range(60):
        made = request("POST", upload_url(server.url, BUCKET, f"many/row-{i:02d}.txt"), body=b"x",
                       headers={**gateway["admin"], "Content-Type": "text/plain"})  # type: ignore[dict-item]
        assert made.status == 200, made.body
    ensure_admin(page, gateway, folder_fragment("many"))
    wait_listed(page)
    wait_for(lambda: by_testid(page, "file-row", name="many/row-00.txt"), message="the folder listed")
    files = [tmp_path / f"tray-{i}.txt" for i in range(3)]
    for f in files:
        f.write_text("tray\n")
    by_testid(page, "upload-input")[0].send_keys("\n".join(str(f) for f in files))
    wait_for(lambda: all(i.get_attribute("data-state") == "done" for i in by_testid(page, "upload-item"))
             and len(by_testid(page, "upload-item")) == 3, timeout=60, message="the uploads done")
    tray = page.find_element(By.ID, "uploads")
    assert tray.is_displayed()
    page.execute_script("document.querySelector('.viewport').scrollTop = 1e9")
    last = "many/tray-2.txt" if by_testid(page, "file-row", name="many/tray-2.txt") else "many/row-59.txt"
    wait_for(lambda: by_testid(page, "file-row", name=last), message="the last row drawn")
    row_bottom = page.execute_script("return arguments[0].getBoundingClientRect().bottom", file_row(page, last))
    tray_top = page.execute_script("return arguments[0].getBoundingClientRect().top", tray)
    assert row_bottom <= tray_top, (row_bottom, tray_top)
    one(page, "uploads-clear").click()
    wait_for(lambda: not tray.is_displayed(), message="the tray cleared")
    assert page.execute_script(
        "return getComputedStyle(document.body).getPropertyValue('--uploads-room').trim()") == "0px"


# A signed-in user: exactly what the rules let alice see and do.

@pytest.mark.expect_http(403)
def test_a_users_token_sees_denials_as_denials(page: WebDriver, gateway: dict[str, object], tmp_path: Path) -> None:
    page.get(console_url(gateway))
    page.execute_script("sessionStorage.clear()")
    page.get(console_url(gateway))
    sign_in(page, user_token(gateway, "alice"))
    assert one(page, "identity").text == "alice@example.com"
    # alice cannot list the buckets: she opens one by name.
    Select(one(page, "bucket-select")).select_by_visible_text("Open a bucket by name…")
    one(page, "prompt-input").send_keys(BUCKET)
    one(page, "prompt-ok").click()
    wait_listed(page)
    assert {e.get_attribute("data-prefix") for e in by_testid(page, "folder-row")} >= {"secret/", "users/"}
    # A file she may list but not read says so, and so does its panel.
    ledger = file_row(page, "ledger.csv")
    assert "No read access" in ledger.text
    ledger.click()
    assert "rules do not let you read" in one(page, "details-denied").text
    page.find_element(By.ID, "details-close").click()
    # A folder the rules do not let her list: a denial, not an error.
    one(page, "folder-row", prefix="secret/").click()
    denied = one(page, "list-denied")
    assert "do not have permission" in denied.text
    assert not by_testid(page, "list-error")
    screenshot(page, "denied")
    # Her own folder works.
    page.get(console_url(gateway, folder_fragment("users/alice/")))
    wait_for(lambda: by_testid(page, "file-row", name="users/alice/notes.txt"), message="alice's folder")
    # An upload where the rules say no ends as a denial, and nothing reaches the bucket.
    page.get(console_url(gateway, folder_fragment("")))
    wait_listed(page)
    attempt = tmp_path / "attempt.txt"
    attempt.write_text("alice tries the root\n")
    by_testid(page, "upload-input")[0].send_keys(str(attempt))
    item = one(page, "upload-item", name="attempt.txt")
    wait_for(lambda: item.get_attribute("data-state") == "failed", message="the upload to be refused")
    assert "rules do not let you upload" in item.text
    assert api_object(gateway, "attempt.txt") is None


def test_the_playground_is_for_admins_only(page: WebDriver, gateway: dict[str, object]) -> None:
    # Still signed in as alice from the previous test (same tab).
    page.get(console_url(gateway, "#/playground"))
    wait_for(lambda: page.find_element(By.ID, "playground-view").is_displayed())
    assert page.find_element(By.ID, "playground-admin-note").is_displayed()

