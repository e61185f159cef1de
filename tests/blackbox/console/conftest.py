"""The console's browser suite runs in its own venv (.venv-browser: Selenium) with the shared harness."""
from collections.abc import Iterator

import pytest
from selenium.webdriver.remote.webdriver import WebDriver

from chromium import start_chromium


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "expect_http(*statuses_or_texts): HTTP statuses and network errors the browser may log in this test")


@pytest.fixture(scope="module")
def driver() -> Iterator[WebDriver]:
    """One headless Chromium per test module."""
    browser = start_chromium()
    yield browser
    browser.quit()
