"""The console's browser suite runs in its own venv (.venv-browser: Selenium) with the shared harness."""
import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "expect_http(*statuses_or_texts): HTTP statuses and network errors the browser may log in this test")
