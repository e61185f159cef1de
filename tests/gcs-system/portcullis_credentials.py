"""A pytest plugin for Google's system tests: their `storage.Client()` gets the service-account key file made by
`portcullis service-account create` (`PC_GCS_SYSTEM_KEY_FILE`) instead of the anonymous credential an emulator
host implies. The key file's `token_uri` is the gateway's token endpoint, so the tests authenticate exactly as
production server code does, and the signing tests (V2/V4 URLs, POST policies) sign with a key the gateway
trusts (`--signed-url-accounts`)."""
from __future__ import annotations

import os

import pytest


def pytest_configure(config: pytest.Config) -> None:
    from google.cloud.storage import client as storage_client
    from google.oauth2 import service_account

    key_file = os.environ["PC_GCS_SYSTEM_KEY_FILE"]
    original_init = storage_client.Client.__init__

    def init_with_key_file(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003 — the library's signature
        if kwargs.get("credentials") is None and len(args) < 2:
            kwargs["credentials"] = service_account.Credentials.from_service_account_file(
                key_file, scopes=["https://www.googleapis.com/auth/devstorage.full_control"])
        original_init(self, *args, **kwargs)

    storage_client.Client.__init__ = init_with_key_file
