"""S19's pieces: SigV4 presigned URLs (standard library only, as bench.py is) and the Ceph RGW peer.

wrk cannot sign each request, so S19 loads one presigned GET URL with a long expiry on both servers: each request
is still authenticated in full (the server recomputes the signature from its secret) and, on the gateway, judged
by the rules as the access key's principal. The RGW peer is the one `make test` uses (scripts/rgw.sh): an RGW
already running (PC_RGW_URL, PC_RGW_ACCESS_KEY, PC_RGW_SECRET_KEY) is reused; otherwise one is started under the
bench's work directory when Ceph's packages are installed, and stopped at the end.
"""
from __future__ import annotations

import datetime
import hashlib
import hmac
import os
import shutil
import subprocess
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: S3's longest presigned expiry (seven days): the URL outlives any bench run.
MAX_EXPIRY = 7 * 24 * 3600


def _quote(value: str, safe: str = "-_.~") -> str:
    """RFC 3986 encoding with upper-case hex, as SigV4's canonical request wants it."""
    return urllib.parse.quote(value, safe=safe)


def presign(method: str, endpoint: str, bucket: str, key: str, access_key: str, secret_key: str,
            region: str = "us-east-1", expires: int = MAX_EXPIRY, now: datetime.datetime | None = None) -> str:
    """A path-style SigV4 presigned URL (query-string authentication, `UNSIGNED-PAYLOAD`) for
    `method endpoint/bucket/key`."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    stamp, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    scope = f"{day}/{region}/s3/aws4_request"
    parts = urllib.parse.urlsplit(endpoint)
    path = "/" + _quote(bucket) + ("/" + _quote(key, safe="-_.~/") if key else "")
    query = {"X-Amz-Algorithm": "AWS4-HMAC-SHA256", "X-Amz-Credential": f"{access_key}/{scope}",
             "X-Amz-Date": stamp, "X-Amz-Expires": str(expires), "X-Amz-SignedHeaders": "host"}
    canonical_query = "&".join(f"{_quote(k)}={_quote(v)}" for k, v in sorted(query.items()))
    canonical = "\n".join([method, path, canonical_query, f"host:{parts.netloc}", "", "host", "UNSIGNED-PAYLOAD"])
    to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    signing = ("AWS4" + secret_key).encode()
    for part in (day, region, "s3", "aws4_request"):
        signing = hmac.new(signing, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(signing, to_sign.encode(), hashlib.sha256).hexdigest()
    return f"{parts.scheme}://{parts.netloc}{path}?{canonical_query}&X-Amz-Signature={signature}"


@dataclass
class RGW:
    """Ceph's RADOS Gateway as S19's peer: reused from the environment, or started and owned by the bench."""

    url: str
    access_key: str
    secret_key: str
    region: str
    state: Path | None = None  # set when this bench started it (and so stops it)

    @classmethod
    def find_or_start(cls, workdir: Path) -> "RGW | None":
        """The RGW to measure, or None when there is none and Ceph's packages are not installed."""
        env = os.environ
        if all(env.get(f"PC_RGW_{name}") for name in ("URL", "ACCESS_KEY", "SECRET_KEY")):
            return cls(env["PC_RGW_URL"], env["PC_RGW_ACCESS_KEY"], env["PC_RGW_SECRET_KEY"],
                       env.get("PC_RGW_REGION", "us-east-1"))
        if not all(shutil.which(tool) for tool in ("ceph-mon", "ceph-osd", "radosgw")):
            return None
        state = workdir / "rgw"
        out = subprocess.run([str(ROOT / "scripts" / "rgw.sh"), "start"], capture_output=True, text=True,
                             timeout=180, env={**env, "PC_RGW_STATE": str(state)})
        if out.returncode != 0:
            raise RuntimeError(f"scripts/rgw.sh start exited {out.returncode}: {out.stderr[-400:]}")
        values = dict(line.removeprefix("export ").split("=", 1) for line in out.stdout.splitlines()
                      if line.startswith("export "))
        return cls(values["PC_RGW_URL"], values["PC_RGW_ACCESS_KEY"], values["PC_RGW_SECRET_KEY"],
                   values.get("PC_RGW_REGION", "us-east-1"), state)

    def presign(self, method: str, bucket: str, key: str = "") -> str:
        return presign(method, self.url, bucket, key, self.access_key, self.secret_key, self.region)

    def stop(self) -> None:
        if self.state is not None:
            subprocess.run([str(ROOT / "scripts" / "rgw.sh"), "stop"], capture_output=True, timeout=60,
                           env={**os.environ, "PC_RGW_STATE": str(self.state)})
