#!/usr/bin/env python3
"""What a 100,000-object folder feels like in the web console: time to the first page of rows, and
time to scroll to the end, in headless Chromium against a release gateway. Never part of `make test`.

The bucket is filled as bench/list_scaling.py fills it: one object uploaded through the gateway, then its
index row cloned N times with sqlite3 (names `big/n0000000…`, one shared blob). The browser signs in with the
admin key, opens `big/`, and then scrolls the list to its bottom as fast as pages arrive (the way a person
holding End, or dragging the scroll bar down, would), until the console says everything is loaded. It also
reports how many row elements the page holds at the end and the page's JavaScript heap.

    .venv-browser/bin/python bench/console_scaling.py --binary .build/release/portcullis --objects 100000
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "blackbox" / "console"))
sys.path.insert(0, str(ROOT / "tests" / "blackbox"))

from chromium import start_chromium, wait_for  # noqa: E402
from harness import free_port  # noqa: E402
from list_scaling import clone_index_row  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

RULES = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /{all=**} { allow read, write: if true; }
  }
}
"""


def wait_ready(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/readyz")
            if c.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError("gateway did not become ready")


def serve(binary: str, work: Path, port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [binary, "serve", "--listen", f"127.0.0.1:{port}", "--bucket", f"b=file:{work / 'data'}",
         "--rules", str(work / "allow.rules"), "--admin-key", str(work / "admin.key")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_ready(port)
    return process


def fill(binary: str, work: Path, count: int) -> None:
    port = free_port()
    process = serve(binary, work, port)
    try:
        c = http.client.HTTPConnection("127.0.0.1", port)
        key = (work / "admin.key").read_text().strip()
        c.request("POST", "/v0/b/b/o?name=seed", body=b"x" * 1234,
                  headers={"Authorization": f"Bearer {key}", "Content-Type": "text/plain"})
        assert c.getresponse().status == 200
    finally:
        process.terminate()
        process.wait(30)
    clone_index_row(work / "data" / "index.sqlite", count)

def server_walk(port: int, key: str) -> tuple[float, int]:
    """The same listing the console makes (JSON API, prefix + delimiter, 1000 a page, the same fields), walked
    by a plain keep-alive client: what the gateway alone costs."""
    c = http.client.HTTPConnection("127.0.0.1", port)
    token, pages = None, 0
    started = time.perf_counter()
    while True:
        query = {"prefix": "big/", "delimiter": "/", "maxResults": "1000",
                 "fields": "nextPageToken,prefixes,items(name,size,contentType,updated)"}
        if token:
            query["pageToken"] = token
        c.request("GET", "/storage/v1/b/b/o?" + urllib.parse.urlencode(query), headers={"Authorization": f"Bearer {key}"})
        response = c.getresponse()
        body = json.loads(response.read())
        assert response.status == 200, body
        pages += 1
        token = body.get("nextPageToken")
        if not token:
            return time.perf_counter() - started, pages


def measure(port: int, key: str, count: int) -> dict[str, float]:
    driver = start_chromium(1280, 800)
    try:
        base = f"http://127.0.0.1:{port}/console/"
        driver.get(base)
        driver.execute_script("sessionStorage.setItem('portcullis.console.credential', arguments[0])", key)
        driver.get(base + "#/b/b/o/")
        driver.refresh()  # a fragment change alone does not reload the page that now has a credential
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, '[data-testid="folder-row"][data-prefix="big/"]'), 30)
        status = driver.find_element(By.ID, "list-status")
        driver.set_script_timeout(600)
        # Timed inside the page (no WebDriver round trips): open big/, note when its first row is drawn, then on
        # every frame jump to the bottom of what is loaded until the console says the folder is complete.
        first_page, to_end, jumps = driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            const viewport = document.getElementById('list-viewport');
            const status = document.getElementById('list-status');
            const started = performance.now();
            let first = null, jumps = 0;
            window.location.hash = '#/b/b/o/big/';
            function frame() {
              const now = performance.now();
              if (first === null && document.querySelector('[data-testid="file-row"][data-name="big/n0000000"]')) first = now;
              if (first !== null) {
                if (status.dataset.state === 'complete') { done([first - started, now - first, jumps]); return; }
                if (viewport.scrollTop + viewport.clientHeight < viewport.scrollHeight) { viewport.scrollTop = viewport.scrollHeight; jumps += 1; }
              }
              requestAnimationFrame(frame);
            }
            requestAnimationFrame(frame);""")
        first_page /= 1000
        to_end /= 1000
        scrolls = jumps
        last = f"big/n{count - 1:07d}"
        driver.execute_script("const v = document.getElementById('list-viewport'); v.scrollTop = v.scrollHeight;")
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, f'[data-testid="file-row"][data-name="{last}"]'), 30)

        # Scrolling back up through everything loaded: frames drawn per second while jumping 40 rows at a time.
        frames = driver.execute_script("""
            const v = document.getElementById('list-viewport');
            return new Promise((resolve) => {
              const start = performance.now(); let n = 0;
              function step() {
                v.scrollTop = Math.max(0, v.scrollTop - 40 * 44); n += 1;
                if (v.scrollTop > 0 && performance.now() - start < 3000) requestAnimationFrame(step);
                else resolve([n, performance.now() - start]);
              }
              requestAnimationFrame(step);
            });""")
        rows = driver.execute_script("return document.querySelectorAll('#list-rows .row').length")
        loaded = int(status.get_attribute("data-count"))
        driver.execute_cdp_cmd("Performance.enable", {})
        heap = {m["name"]: m["value"] for m in driver.execute_cdp_cmd("Performance.getMetrics", {})["metrics"]}
        return {"first_page_s": first_page, "to_end_s": to_end, "scroll_steps": scrolls, "rows_in_dom": rows,
                "loaded": loaded, "heap_mib": heap.get("JSHeapUsedSize", 0) / 2**20,
                "scroll_fps": frames[0] / (frames[1] / 1000) if frames[1] else 0}
    finally:
        driver.quit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=str(ROOT / ".build/release/portcullis"))
    parser.add_argument("--objects", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="portcullis-console-scaling-") as tmp:
        work = Path(tmp)
        (work / "allow.rules").write_text(RULES)
        (work / "admin.key").write_text(os.urandom(24).hex())
        fill(args.binary, work, args.objects)
        port = free_port()
        process = serve(args.binary, work, port)
        try:
            key = (work / "admin.key").read_text().strip()
            for run in range(args.runs):
                walk, pages = server_walk(port, key)
                print(f"run {run + 1}: the gateway alone serves the {pages} pages in {walk:.1f} s "
                      f"({walk / pages * 1000:.0f} ms a page)", flush=True)
                r = measure(port, key, args.objects)
                load = open("/proc/loadavg").read().split()[0]
                print(f"run {run + 1}: {r['loaded']:,} entries | first page {r['first_page_s'] * 1000:.0f} ms | "
                      f"scrolled to the end in {r['to_end_s']:.1f} s ({r['scroll_steps']} scroll steps) | "
                      f"{r['rows_in_dom']} row elements in the page | JS heap {r['heap_mib']:.0f} MiB | "
                      f"scrolling back {r['scroll_fps']:.0f} frames/s | load {load}", flush=True)
        finally:
            process.terminate()
            process.wait(30)


if __name__ == "__main__":
    main()
