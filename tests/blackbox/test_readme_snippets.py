"""The README's "Using it from …" section, run: every snippet there is executed against a gateway started exactly
as the section's first block says, so a newcomer who copies one gets what it shows.

Snippets are fenced blocks after an HTML comment `<!-- snippet: NAME -->`; SNIPPETS lists the names this test
knows, and a snippet it does not know (or a name it misses) fails it. Substitutions are the port (`8080` → a free
one) and absolute paths for the files a snippet names; nothing else in a snippet is changed.

- shell blocks run with bash (`set -euo pipefail`) with the binary under test on PATH as `portcullis`;
- Python blocks run in the venv of their library: `.venv-clients` (google-cloud-storage, firebase-admin, gcsfs
  and pandas), `.venv-pyrebase` (pyrebase4, which pins urllib3<2);
- the Firebase Web, iOS and Android SDKs cannot run here (no npm registry, no mobile toolchains), so their
  snippets are NOT executed: the test reads their host, port, bucket and path, checks those match the gateway
  block, and sends the requests those SDKs build from them (the JS SDK's multipart upload, the mobile SDKs'
  resumable upload, `alt=media` reads, `Authorization: Firebase <ID token>`);
- rclone's remote and gsutil's boto file are parsed, and the endpoint, key file and token endpoint they name are
  checked against the gateway (the JSON API answers at the rclone endpoint with a token the key file obtains;
  gsutil's host, port and token endpoint are the TLS listener the README describes). Where `rclone` and
  `gsutil` are installed they also run with those files (`rclone sync`/`ls`; `gsutil cp`/`ls` over TLS); where
  not, those two tests skip, naming the missing program.
"""
from __future__ import annotations

import configparser
import json
import os
import re
import secrets
import shlex
import shutil
import subprocess
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from harness import Server, free_port, portcullis_bin

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SNIPPETS = {"gateway", "firebase-web", "firebase-ios", "firebase-android", "google-cloud-storage", "firebase-admin",
            "gcsfs-pandas", "pyrebase4", "curl-v0", "curl-json", "rclone", "gsutil"}
PYTHON_VENV = {"google-cloud-storage": "clients", "firebase-admin": "clients", "gcsfs-pandas": "clients",
               "pyrebase4": "pyrebase"}
DOC_PORT = "8080"


def readme_snippets() -> dict[str, tuple[str, str]]:
    """name → (language, code) of the fenced blocks in the README's "Using it from …" section."""
    text = README.read_text()
    start = text.index("\n## Using it from")
    end = text.index("\n## ", start + 1)
    section = text[start:end]
    found: dict[str, tuple[str, str]] = {}
    for match in re.finditer(r"<!-- snippet: ([\w-]+) -->\n```(\w+)\n(.*?)```", section, re.S):
        assert match.group(1) not in found, f"snippet {match.group(1)} appears twice"
        found[match.group(1)] = (match.group(2), match.group(3))
    return found


SNIPPET = readme_snippets()


def test_section_has_every_snippet_and_only_known_ones() -> None:
    assert set(SNIPPET) == SNIPPETS
    assert all(SNIPPET[name][0] == "python" for name in PYTHON_VENV)


def joined_lines(code: str) -> list[str]:
    """Shell lines with backslash continuations joined and comments dropped."""
    out, current = [], ""
    for line in code.splitlines():
        line = re.sub(r"\s+#.*$", "", line) if not line.lstrip().startswith("#") else ""
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        current += line
        if current.strip():
            out.append(current.strip())
        current = ""
    return out


def gateway_block() -> tuple[list[str], list[str]]:
    """The gateway block split into its set-up commands and the `portcullis serve` arguments."""
    lines = joined_lines(SNIPPET["gateway"][1])
    serve = [i for i, line in enumerate(lines) if line.startswith("portcullis serve ")]
    assert len(serve) == 1 and serve[0] == len(lines) - 1, "the gateway block ends with one `portcullis serve`"
    return lines[:-1], shlex.split(lines[-1])[2:]


def option(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


class Gateway:
    def __init__(self, server: Server, workdir: Path, port: int) -> None:
        self.server, self.workdir, self.port = server, workdir, port

    @property
    def url(self) -> str:
        return self.server.url

    def env(self) -> dict[str, str]:
        bindir = self.workdir / "bin"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PORTCULLIS_", "STORAGE_EMULATOR_HOST"))}
        env["PATH"] = f"{bindir}:{env.get('PATH', '')}"
        return env

    def substitute(self, code: str) -> str:
        code = code.replace(f"127.0.0.1:{DOC_PORT}", f"127.0.0.1:{self.port}")
        code = code.replace("deploy/dev/storage.rules", str(ROOT / "deploy/dev/storage.rules"))
        return code.replace("/path/to/", f"{self.workdir}/")

    def admin(self) -> dict[str, str]:
        return {"Authorization": "Bearer " + (self.workdir / "admin.key").read_text().strip()}

    def id_token(self, uid: str) -> str:
        return subprocess.run([portcullis_bin(), "token", "--hmac-secret", "hs.key", "--uid", uid], cwd=self.workdir,
                              capture_output=True, text=True, check=True).stdout.strip()

    def run(self, argv: list[str], timeout: float = 180) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, cwd=self.workdir, env=self.env(), capture_output=True, text=True,
                              timeout=timeout)

    def read(self, bucket: str, name: str) -> requests.Response:
        return requests.get(f"{self.url}/v0/b/{bucket}/o/{urllib.parse.quote(name, safe='')}",
                            params={"alt": "media"}, headers=self.admin(), timeout=30)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """The gateway block, run: its set-up commands with bash, then its `portcullis serve` line."""
    workdir = tmp_path_factory.mktemp("readme")
    (workdir / "bin").mkdir()
    (workdir / "bin" / "portcullis").symlink_to(portcullis_bin())
    port = free_port()
    gw = Gateway(Server(workdir=workdir, args=[], name="readme"), workdir, port)
    setup, serve = gateway_block()
    script = gw.substitute("\n".join(setup))
    done = gw.run(["bash", "-euo", "pipefail", "-c", script], timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    serve = [gw.substitute(arg) for arg in serve]
    assert option(serve, "--listen") == f"127.0.0.1:{port}"
    listen = serve.index("--listen")
    gw.server.args = serve[:listen] + serve[listen + 2:]
    gw.server.start(port=port)
    yield gw
    gw.server.stop(timeout=10)
    gw.server.kill()


def served_bucket() -> str:
    return option(gateway_block()[1], "--bucket").split("=", 1)[0]


def doc_listen() -> tuple[str, str]:
    host, port = option(gateway_block()[1], "--listen").rsplit(":", 1)
    return host, port


# Python and shell snippets, executed

EXPECTED_OUTPUT = {
    "google-cloud-storage": ["day,visits\nmon,3", "reports/today.csv"],
    "firebase-admin": ["hello from firebase-admin"],
    "gcsfs-pandas": ["8 ", "reports/week-x2.csv"],
    "pyrebase4": ["hello from pyrebase4"],
    "curl-v0": ["hello", '"users/alice/hello.txt"'],
    "curl-json": ['"name": "notes/hello.txt"', "hello"],
}


@pytest.mark.parametrize("name", sorted(PYTHON_VENV))
def test_python_snippet_runs(gateway: Gateway, name: str) -> None:
    python = ROOT / f".venv-{PYTHON_VENV[name]}" / "bin" / "python"
    assert python.exists(), f"{python} missing: make test builds it from requirements/{PYTHON_VENV[name]}.txt"
    script = gateway.workdir / f"{name}.py"
    script.write_text(gateway.substitute(SNIPPET[name][1]))
    done = gateway.run([str(python), str(script)])
    assert done.returncode == 0, done.stdout + done.stderr
    for expected in EXPECTED_OUTPUT[name]:
        assert expected in done.stdout, (expected, done.stdout)


def test_gcsfs_pandas_snippet_wrote_the_frame(gateway: Gateway) -> None:
    """What pandas wrote through gcsfs is the frame the snippet computed, as any other client reads it."""
    if not (gateway.workdir / "gcsfs-pandas.py").exists():
        test_python_snippet_runs(gateway, "gcsfs-pandas")
    written = gateway.read(served_bucket(), "reports/week-x2.csv")
    assert written.status_code == 200 and written.text == "day,visits,double\nmon,3,6\ntue,5,10\n"


@pytest.mark.parametrize("name", ["curl-v0", "curl-json"])
def test_curl_snippet_runs(gateway: Gateway, name: str) -> None:
    done = gateway.run(["bash", "-euo", "pipefail", "-c", gateway.substitute(SNIPPET[name][1])], timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    for expected in EXPECTED_OUTPUT[name]:
        assert expected in done.stdout.replace('":"', '": "'), (expected, done.stdout)


def test_curl_v0_snippet_needs_its_token(gateway: Gateway) -> None:
    """The rules in force are real: the snippet's upload without its ID token is refused."""
    r = requests.post(f"{gateway.url}/v0/b/{served_bucket()}/o", params={"name": "users/alice/anon.txt"}, data=b"x",
                      timeout=30)
    assert r.status_code == 403, r.text


# Firebase SDK snippets: not executed (no SDK runtime here); their parameters checked and their requests sent

SDK_PATTERNS = {
    "firebase-web": (r'connectStorageEmulator\(storage, "([^"]+)", (\d+)\)', r'storageBucket: "([^"]+)"',
                     r'ref\(storage, "([^"]+)"\)', r'uploadString\(note, "([^"]+)"\)'),
    "firebase-ios": (r'useEmulator\(withHost: "([^"]+)", port: (\d+)\)', r'Storage\.storage\(url: "gs://([^"]+)"\)',
                     r'reference\(withPath: "([^"]+)"\)', r'Data\("([^"]+)"\.utf8\)'),
    "firebase-android": (r'useEmulator\("([^"]+)", (\d+)\)', r'Firebase\.storage\("gs://([^"]+)"\)',
                         r'child\("([^"]+)"\)', r'putBytes\("([^"]+)"\.toByteArray\(\)\)'),
}
#: Hosts that reach the documented listener: itself, and the Android emulator's alias for its host's loopback.
HOST_ALIASES = {"10.0.2.2": "127.0.0.1"}


def sdk_parameters(name: str) -> tuple[str, int, str, str, bytes]:
    code = SNIPPET[name][1]
    found = [re.search(pattern, code) for pattern in SDK_PATTERNS[name]]
    assert all(found), (name, [p for p, m in zip(SDK_PATTERNS[name], found) if not m])
    emulator, bucket, path, data = found
    return emulator[1], int(emulator[2]), bucket[1], path[1], data[1].encode()


@pytest.mark.parametrize("name", sorted(SDK_PATTERNS))
def test_sdk_snippet_points_at_the_gateway_block(name: str) -> None:
    host, port, bucket, path, _ = sdk_parameters(name)
    listen_host, listen_port = doc_listen()
    assert HOST_ALIASES.get(host, host) == listen_host, f"{name} connects to {host}, the gateway listens on {listen_host}"
    assert str(port) == listen_port
    assert bucket == served_bucket(), "the SDK's bucket is the one `--bucket` serves (no gs:// prefix there)"
    assert path.startswith("users/alice/"), "the snippet writes where the dev rules let the signed-in user write"


def sdk_base(gateway: Gateway, name: str) -> tuple[str, str, str, bytes]:
    """The SDK's base URL, as it builds it from the emulator host and port, moved to the test's port."""
    host, port, bucket, path, data = sdk_parameters(name)
    base = f"http://{HOST_ALIASES.get(host, host)}:{port}"
    return gateway.substitute(base), bucket, path, data


def js_multipart_upload(base: str, bucket: str, path: str, data: bytes, token: str) -> requests.Response:
    """`uploadString`/`uploadBytes`: the JS SDK's multipart body (digits-only boundary, JSON part, bytes part)."""
    boundary = str(secrets.randbelow(10**18))
    meta = {"name": path, "fullPath": path, "contentType": "text/plain"}
    body = (f"--{boundary}\r\nContent-Type: application/json; charset=utf-8\r\n\r\n{json.dumps(meta)}\r\n"
            f"--{boundary}\r\nContent-Type: text/plain\r\n\r\n").encode() + data + f"\r\n--{boundary}--".encode()
    return requests.post(f"{base}/v0/b/{bucket}/o", params={"name": path}, data=body, timeout=30, headers={
        "X-Goog-Upload-Protocol": "multipart", "Content-Type": f"multipart/related; boundary={boundary}",
        "Authorization": f"Firebase {token}", "X-Firebase-Storage-Version": "webjs/11.0.0"})


def mobile_resumable_upload(base: str, bucket: str, path: str, data: bytes, token: str) -> requests.Response:
    """`putDataAsync` / `putBytes`: the mobile SDKs' resumable upload — start, then one `upload, finalize`."""
    auth = {"Authorization": f"Firebase {token}"}
    start = requests.post(f"{base}/v0/b/{bucket}/o", params={"name": path}, timeout=30,
                          data=json.dumps({"name": path, "contentType": "application/octet-stream"}).encode(),
                          headers={**auth, "X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start",
                                   "X-Goog-Upload-Header-Content-Length": str(len(data)),
                                   "Content-Type": "application/json; charset=utf-8"})
    assert start.status_code == 200, start.text
    session = start.headers["X-Goog-Upload-URL"]
    assert session.startswith(f"{base}/v0/b/{bucket}/o"), "the session URL is on the host the SDK was pointed at"
    return requests.post(session, data=data, timeout=30, headers={
        **auth, "X-Goog-Upload-Command": "upload, finalize", "X-Goog-Upload-Offset": "0"})


@pytest.mark.parametrize("name", sorted(SDK_PATTERNS))
def test_sdk_snippet_requests_succeed(gateway: Gateway, name: str) -> None:
    base, bucket, path, data = sdk_base(gateway, name)
    token = gateway.id_token("alice")
    upload = js_multipart_upload if name == "firebase-web" else mobile_resumable_upload
    done = upload(base, bucket, path, data, token)
    assert done.status_code == 200, done.text
    assert done.json()["name"] == path and done.json()["bucket"] == bucket
    url = f"{base}/v0/b/{bucket}/o/{urllib.parse.quote(path, safe='')}"
    got = requests.get(url, params={"alt": "media"}, headers={"Authorization": f"Firebase {token}"}, timeout=30)
    assert got.status_code == 200 and got.content == data
    anonymous = requests.get(url, params={"alt": "media"}, timeout=30)
    assert anonymous.status_code == 403, "without the signed-in user's token the dev rules deny the read"


# rclone and gsutil: their config files, parsed and checked against the gateway

def ini(name: str, gateway: Gateway) -> configparser.ConfigParser:
    parser = configparser.ConfigParser()
    parser.read_string(gateway.substitute(SNIPPET[name][1]))
    return parser


def key_file_token(gateway: Gateway, key_file: str) -> str:
    """An access token from the key file's `token_uri`, obtained as google-auth does (the clients venv)."""
    python = ROOT / ".venv-clients" / "bin" / "python"
    code = ("import sys, google.auth.transport.requests as t, google.oauth2.service_account as s\n"
            "c = s.Credentials.from_service_account_file(sys.argv[1], "
            "scopes=['https://www.googleapis.com/auth/devstorage.full_control'])\n"
            "c.refresh(t.Request()); print(c.token)\n")
    done = gateway.run([str(python), "-c", code, key_file], timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_rclone_remote_names_the_gateway(gateway: Gateway) -> None:
    remote = ini("rclone", gateway)["portcullis"]
    assert remote["type"] == "google cloud storage"
    assert remote["bucket_policy_only"] == "true"
    key_file = remote["service_account_file"]
    assert key_file == str(gateway.workdir / "portcullis-sa.json") and Path(key_file).exists(), \
        "the remote uses the key file the gateway block creates"
    endpoint = remote["endpoint"]
    assert endpoint == f"{gateway.url}/storage/v1/"
    token = key_file_token(gateway, key_file)
    # What google-api-go-client builds from the endpoint: list under BasePath, uploads at /upload/storage/v1/.
    listed = requests.get(endpoint + f"b/{served_bucket()}/o", headers={"Authorization": f"Bearer {token}"},
                          timeout=30)
    assert listed.status_code == 200 and listed.json()["kind"] == "storage#objects", listed.text
    up = requests.post(urllib.parse.urljoin(endpoint, f"/upload/storage/v1/b/{served_bucket()}/o"),
                       params={"uploadType": "media", "name": "rclone/probe.txt"}, data=b"rclone",
                       headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert up.status_code == 200, up.text


def test_gsutil_boto_file_names_the_gateway(gateway: Gateway) -> None:
    boto = ini("gsutil", gateway)
    key_file = boto["Credentials"]["gs_service_key_file"]
    assert key_file == str(gateway.workdir / "portcullis-sa.json") and Path(key_file).exists()
    host, port = boto["Credentials"]["gs_json_host"], boto["Credentials"]["gs_json_port"]
    assert host == doc_listen()[0], "the TLS listener runs on the gateway block's host"
    token_uri = urllib.parse.urlsplit(boto["OAuth2"]["provider_token_uri"])
    assert (token_uri.scheme, token_uri.hostname, str(token_uri.port), token_uri.path) == \
        ("https", host, port, "/oauth2/v4/token"), "gsutil takes its token endpoint from here, not the key file"
    assert boto["Boto"]["ca_certificates_file"].endswith("cert.pem")
    assert boto["GSUtil"]["default_project_id"] == json.loads(Path(key_file).read_text())["project_id"]


# rclone and gsutil themselves, where they are installed (the suites of real ops tools install them; here they
# are optional, and a missing one is reported as a skip naming it)

def test_rclone_runs_with_the_remote(gateway: Gateway) -> None:
    rclone = shutil.which("rclone")
    if not rclone:
        pytest.skip("rclone is not installed: the remote was only parsed and its endpoint checked")
    conf = gateway.workdir / "rclone.conf"
    conf.write_text(gateway.substitute(SNIPPET["rclone"][1]))
    site = gateway.workdir / "site"
    (site / "a").mkdir(parents=True)
    (site / "a" / "one.txt").write_text("one")
    (site / "two.txt").write_text("two")
    bucket = served_bucket()
    synced = gateway.run([rclone, "--config", str(conf), "sync", str(site), f"portcullis:{bucket}/site"], timeout=120)
    assert synced.returncode == 0, synced.stderr
    listed = gateway.run([rclone, "--config", str(conf), "ls", f"portcullis:{bucket}/site"], timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert sorted(line.split()[-1] for line in listed.stdout.splitlines()) == ["a/one.txt", "two.txt"]
    assert gateway.read(bucket, "site/a/one.txt").text == "one"


def test_gsutil_runs_with_the_boto_file(gateway: Gateway, tmp_path: Path) -> None:
    gsutil = shutil.which("gsutil")
    if not gsutil:
        pytest.skip("gsutil is not installed: the boto file was only parsed")
    cert, key = gateway.workdir / "cert.pem", gateway.workdir / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    # The TLS listener the README describes: the gateway block's options plus the certificate pair.
    tls_port = free_port()
    boto = gateway.workdir / "portcullis.boto"
    boto.write_text(gateway.substitute(SNIPPET["gsutil"][1]).replace("8443", str(tls_port)))
    _, serve = gateway_block()
    serve = [gateway.substitute(arg) for arg in serve]
    listen = serve.index("--listen")
    tls = Server(workdir=gateway.workdir, args=serve[:listen] + serve[listen + 2:] + [
        "--tls-cert", str(cert), "--tls-key", str(key)], name="readme-tls", scheme="https")
    tls.start(port=tls_port)
    try:
        env = {**gateway.env(), "BOTO_CONFIG": str(boto), "HOME": str(tmp_path),
               "CLOUDSDK_CONFIG": str(tmp_path / "gcloud")}
        (gateway.workdir / "gsutil.txt").write_text("hello from gsutil")
        # The Cloud SDK's wrapper passes its own CA bundle on the command line; the README says to add this.
        base = [gsutil, "-o", f"Boto:ca_certificates_file={cert}", "-o", "Boto:num_retries=0"]
        bucket = served_bucket()
        for args in (["cp", "gsutil.txt", f"gs://{bucket}/gsutil/hello.txt"], ["ls", f"gs://{bucket}/gsutil/"]):
            done = subprocess.run(base + args, cwd=gateway.workdir, env=env, capture_output=True, text=True,
                                  timeout=120)
            assert done.returncode == 0, done.stderr[-3000:]
        assert done.stdout.split() == [f"gs://{bucket}/gsutil/hello.txt"]
        assert gateway.read(bucket, "gsutil/hello.txt").text == "hello from gsutil"
    finally:
        tls.stop(timeout=10)
        tls.kill()
