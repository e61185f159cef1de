"""Shared pieces of the S3 client suites (test_s3_*.py): a gateway with its S3 listener, access keys and a JWT
secret, and checks through the other surfaces (v0, JSON API) that what an S3 client wrote is the same object.

Each suite runs once per backend (`file`, and `gcs` on fake-gcs-server; see conftest.py). The gateway serves
one bucket on its ordinary listener (v0, JSON API, admin key) and the same bucket on `--s3-listen`, with two
access keys in `--s3-keys`: the admin's (bypasses the rules) and alice's (`uid` alice, judged by the rules), and
an HS256 secret so a test can mint alice's Firebase-style JWT for the session-token path.
"""
from __future__ import annotations

import json
import re
import secrets
import subprocess
import time
import urllib.parse
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from clientkit import BUCKET, start_gateway
from harness import Server, free_port, portcullis_bin, request

REGION = "us-east-1"
#: `--s3-domain` of every suite's gateway: `BUCKET.S3_DOMAIN` addresses BUCKET (virtual-host style). The name does
#: not resolve; the virtual-host test maps it to 127.0.0.1 inside the test process.
S3_DOMAIN = "s3.portcullis.test"
RULES = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /users/{uid}/{file=**} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
  }
}
"""


@cache
def s3_unsupported() -> str | None:
    """Why this binary cannot run the S3 suites (its `serve` has no `--s3-listen`), or None."""
    out = subprocess.run([portcullis_bin(), "serve", "--help"], capture_output=True, text=True, timeout=30)
    if "--s3-listen" in out.stdout + out.stderr:
        return None
    return "this portcullis has no S3 surface (`serve --help` lists no --s3-listen)"


def require_s3() -> None:
    if reason := s3_unsupported():
        pytest.skip(reason)


@dataclass
class Key:
    id: str
    secret: str


@dataclass
class S3Gateway:
    """A running gateway with its S3 endpoint, keys and the secrets to reach it through the other surfaces."""

    server: Server
    endpoint: str
    admin: Key
    alice: Key
    admin_token: str
    jwt_secret: bytes
    workdir: Path
    multipart_served: bool | None = None

    def v0_media(self, name: str) -> tuple[int, bytes]:
        """The object's bytes as v0 serves them to the admin."""
        got = request("GET", self.v0_url(name) + "?alt=media", headers=self.bearer)
        return got.status, got.body

    def v0_metadata(self, name: str) -> dict:
        got = request("GET", self.v0_url(name), headers=self.bearer)
        assert got.status == 200, (name, got.status, got.body[:300])
        return got.json()

    def json_api_metadata(self, name: str) -> tuple[int, dict]:
        """The object resource the Cloud Storage JSON API answers (status, body)."""
        got = request("GET", f"{self.server.url}/storage/v1/b/{BUCKET}/o/{urllib.parse.quote(name, safe='')}",
                      headers=self.bearer)
        return got.status, (got.json() if got.body else {})

    def v0_upload(self, name: str, body: bytes, content_type: str = "application/octet-stream") -> dict:
        got = request("POST", f"{self.server.url}/v0/b/{BUCKET}/o?" + urllib.parse.urlencode({"name": name}),
                      body=body, headers={**self.bearer, "Content-Type": content_type})
        assert got.status == 200, (name, got.status, got.body[:300])
        return got.json()

    def v0_url(self, name: str) -> str:
        return f"{self.server.url}/v0/b/{BUCKET}/o/{urllib.parse.quote(name, safe='')}"

    @property
    def bearer(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.admin_token}"}

    def alice_jwt(self, lifetime: int = 600) -> str:
        import jwt

        now = int(time.time())
        return jwt.encode({"sub": "alice", "iat": now, "exp": now + lifetime}, self.jwt_secret, algorithm="HS256")

    def require_multipart(self) -> None:
        """Skip, saying why, when this gateway answers multipart uploads `501 NotImplemented` (a surface that
        does not serve them yet); any other answer lets the test run and judge it."""
        if self.multipart_served is None:
            import boto3
            import botocore.config
            from botocore.exceptions import ClientError

            admin = boto3.client("s3", endpoint_url=self.endpoint, region_name=REGION,
                                 aws_access_key_id=self.admin.id, aws_secret_access_key=self.admin.secret,
                                 config=botocore.config.Config(s3={"addressing_style": "path"},
                                                               retries={"max_attempts": 1}))
            try:
                upload = admin.create_multipart_upload(Bucket=BUCKET, Key="multipart-probe")
            except ClientError as error:
                if error.response["Error"]["Code"] != "NotImplemented":
                    raise
                self.multipart_served = False
            else:
                admin.abort_multipart_upload(Bucket=BUCKET, Key="multipart-probe", UploadId=upload["UploadId"])
                self.multipart_served = True
        if not self.multipart_served:
            pytest.skip("multipart uploads are not served by this gateway (501 NotImplemented to ?uploads)")

    def stop(self) -> None:
        self.server.stop(timeout=10)
        self.server.kill()


def start_s3_gateway(workdir: Path, backend: str, rules: str = RULES) -> S3Gateway:
    """A gateway serving BUCKET on `backend` with its S3 listener on a free port (skips when unsupported)."""
    require_s3()
    admin = Key("PCADMIN" + secrets.token_hex(6).upper(), secrets.token_urlsafe(30))
    alice = Key("PCALICE" + secrets.token_hex(6).upper(), secrets.token_urlsafe(30))
    workdir.mkdir(parents=True, exist_ok=True)
    keys = workdir / "s3-keys.json"
    keys.write_text(json.dumps({"keys": [{"id": admin.id, "secret": admin.secret, "admin": True},
                                         {"id": alice.id, "secret": alice.secret, "uid": "alice", "claims": {}}]}))
    admin_token = secrets.token_urlsafe(24)
    (workdir / "admin.key").write_text(admin_token)
    jwt_secret = secrets.token_hex(32).encode()
    (workdir / "hmac.secret").write_bytes(jwt_secret)
    port = free_port()
    server = start_gateway(workdir, backend, rules=rules, name="s3",
                           extra=["--admin-key", str(workdir / "admin.key"),
                                  "--jwt-hmac-secret", str(workdir / "hmac.secret"),
                                  "--s3-listen", f"127.0.0.1:{port}", "--s3-keys", str(keys),
                                  "--s3-domain", S3_DOMAIN])
    return S3Gateway(server, f"http://127.0.0.1:{port}", admin, alice, admin_token, jwt_secret, workdir)


def readme_block(marker: str) -> str:
    """The fenced block that follows `<!-- marker -->` in README.md: the snippets the suites run verbatim, so the
    README cannot drift from what works."""
    text = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    found = re.search(rf"<!-- {re.escape(marker)} -->\s*```[a-z]*\n(.*?)```", text, re.DOTALL)
    assert found, f"README.md has no fenced block after <!-- {marker} -->"
    return found[1]


def fill_readme(block: str, values: dict[str, str]) -> str:
    """The README block with its placeholders (`<endpoint>`, `<access-key-id>`, …) replaced; every
    placeholder must be known, so a new one in the README fails here rather than silently staying literal."""
    for name, value in values.items():
        block = block.replace(f"<{name}>", value)
    left = re.findall(r"<[a-z-]+>", block)
    assert not left, f"README block has placeholders the test does not fill: {left}"
    return block


#: The access key id and secret a client pairs with a user's JWT in `X-Amz-Security-Token` (docs/s3-api.md): the
#: signature then only binds the request, the JWT says who is asking.
SESSION_KEY_ID = "portcullis-session"
SESSION_SECRET = "portcullis-session"
