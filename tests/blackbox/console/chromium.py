"""Headless Chromium (Debian's `chromium` + `chromium-driver`) driven by Selenium, for the console's end-to-end
tests and the large-bucket measurement. Loopback only: every network feature Chromium would otherwise use
(updates, sync, safe browsing) is switched off."""
from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement

T = TypeVar("T")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
# Chromium reports every HTTP error a page's fetch receives as a SEVERE console entry, worded like this.
HTTP_ERROR = re.compile(r"Failed to load resource: the server responded with a status of (\d{3})")


def start_chromium(width: int = 1280, height: int = 800) -> WebDriver:
    """A headless Chromium whose page area is `width` × `height` CSS pixels (device scale 1)."""
    os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium Manager look for drivers online
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--force-device-scale-factor=1", "--lang=en-US", "--no-first-run", "--disable-sync",
                     "--disable-background-networking", "--disable-component-update", "--disable-default-apps",
                     "--disable-extensions", "--disable-features=Translate,OptimizationHints,MediaRouter",
                     "--safebrowsing-disable-auto-update", "--password-store=basic",
                     f"--window-size={width},{height}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    set_viewport(driver, width, height)
    return driver


def set_viewport(driver: WebDriver, width: int, height: int) -> None:
    """Makes the page area exactly `width` × `height` (window chrome excluded)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})


def wait_for(condition: Callable[[], T], timeout: float = 20, message: str = "condition") -> T:
    """Polls `condition` until it returns something truthy (stale elements count as not yet)."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = condition()
            if value:
                return value
        except StaleElementReferenceException as error:
            last_error = error
        time.sleep(0.05)
    raise TimeoutException(f"timed out after {timeout} s waiting for {message}" + (f" ({last_error})" if last_error else ""))


def by_testid(driver: WebDriver | WebElement, testid: str, **data: str) -> list[WebElement]:
    selector = f'[data-testid="{testid}"]' + "".join(f'[data-{k}="{css_string(v)}"]' for k, v in data.items())
    return driver.find_elements(By.CSS_SELECTOR, selector)


def one(driver: WebDriver | WebElement, testid: str, timeout: float = 20, **data: str) -> WebElement:
    """The single visible element with this test id (and data attributes), waiting for it."""
    def find() -> WebElement | None:
        found = [e for e in by_testid(driver, testid, **data) if e.is_displayed()]
        return found[0] if len(found) == 1 else None
    return wait_for(find, timeout, f'one visible [data-testid="{testid}"] {data or ""}')


def css_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def console_problems(driver: WebDriver, expected: Iterable[int | str] = ()) -> list[str]:
    """Browser console entries at WARNING or SEVERE since the last call, less those the test provokes: HTTP
    error statuses (ints) and network errors (strings such as `net::ERR_INTERNET_DISCONNECTED`)."""
    statuses = {e for e in expected if isinstance(e, int)}
    texts = [e for e in expected if isinstance(e, str)]
    problems = []
    for entry in driver.get_log("browser"):
        if entry.get("level") not in ("SEVERE", "WARNING"):
            continue
        message = entry.get("message", "")
        match = HTTP_ERROR.search(message)
        if match and int(match.group(1)) in statuses:
            continue
        if any(text in message for text in texts):
            continue
        problems.append(f"{entry.get('level')}: {message}")
    return problems


def screenshot(driver: WebDriver, name: str) -> Path:
    """Saves a PNG of the page: into docs/console/ when PC_UPDATE_SCREENSHOTS=1 (refreshing the README's
    pictures), else next to the test results, so every run still exercises the views it shows."""
    root = Path(__file__).resolve().parents[3]
    if os.environ.get("PC_UPDATE_SCREENSHOTS") == "1":
        directory = root / "docs" / "console"
    else:
        directory = root / ".build" / "test-results" / "console-screenshots"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.png"
    # Passing notices (toasts) from earlier steps would only clutter the picture.
    driver.execute_script("document.querySelectorAll('.toast').forEach((t) => t.remove())")
    driver.save_screenshot(str(path))
    return path
