"""portcullis-cli as ops people use gsutil and aws-cli: the real CLI binary against a running gateway.

Content type guessed from the name, `cp -r` both ways, `rm -r` (a line per object), `ls -r`, `-` as
stdin/stdout, global options after the command, the wording of 403 / missing bucket / missing object, short and
long help, and `mirror` between a gs:// bucket on fake-gcs-server and an embedded bucket with metadata and
download tokens kept and a second run skipping everything."""
from __future__ import annotations

import gzip
import json
import os
import pty
import subprocess
from pathlib import Path

import pytest

import backends
from harness import ROOT, Server, object_url, portcullis_bin, request, upload_url

RULES = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /{all=**} {
      allow read, write: if request.auth != null;
    }
  }
}
"""


def cli_bin() -> str:
    """$PORTCULLIS_CLI_BIN, else portcullis-cli next to the server binary, else the debug build's (`make test`
    builds the server alone in release mode and everything in debug mode)."""
    candidates = [os.environ.get("PORTCULLIS_CLI_BIN", ""), str(Path(portcullis_bin()).with_name("portcullis-cli")),
                  str(ROOT / ".build" / "debug" / "portcullis-cli")]
    for candidate in filter(None, candidates):
        if Path(candidate).exists():
            return candidate
    raise AssertionError("no portcullis-cli binary: swift build --product portcullis-cli")


def run(*args: str, stdin: bytes | None = None, server: Server | None = None,
        key: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PORTCULLIS_")}
    env["PORTCULLIS_RETRY_TIME"] = "0"
    if server:
        env["PORTCULLIS_URL"] = server.url
    command = [cli_bin(), *(["--admin-key", str(key)] if key else []), *args]
    return subprocess.run(command, input=stdin, capture_output=True, timeout=120, env=env)


def ok(result: subprocess.CompletedProcess[bytes]) -> str:
    assert result.returncode == 0, (result.returncode, result.stdout[-2000:], result.stderr[-2000:])
    return result.stdout.decode()


def metadata(server: Server, key: str, bucket: str, name: str) -> dict[str, object]:
    answer = request("GET", object_url(server.url, bucket, name), headers={"Authorization": f"Bearer {key}"})
    assert answer.status == 200, (answer.status, answer.body[:300])
    return answer.json()  # type: ignore[return-value]


@pytest.fixture
def gateway(start_server, tmp_path: Path, admin_key: tuple[Path, str]) -> tuple[Server, Path, str]:
    rules = tmp_path / "signed-in.rules"
    rules.write_text(RULES)
    key_path, key = admin_key
    return start_server(rules=rules, extra=["--admin-key", str(key_path)]), key_path, key


def test_upload_guesses_the_content_type_and_headers_win(gateway, tmp_path: Path) -> None:
    server, key_path, key = gateway
    for name in ("notes.txt", "data.JSON", "photo.png", "blob.unknownext", "noext"):
        (tmp_path / name).write_bytes(b"x")
        ok(run("cp", str(tmp_path / name), f"gs://test-bucket/guess/{name}", server=server, key=key_path))
    expected = {"notes.txt": "text/plain", "data.JSON": "application/json", "photo.png": "image/png",
                "blob.unknownext": "application/octet-stream", "noext": "application/octet-stream"}
    for name, content_type in expected.items():
        assert metadata(server, key, "test-bucket", f"guess/{name}")["contentType"] == content_type, name
    # Options after the operands (aws-cli habit), a global one among them; the header beats the guess.
    ok(run("cp", str(tmp_path / "notes.txt"), "gs://test-bucket/guess/h.txt", "--header",
           "Content-Type: text/x-special", "-H", "Cache-Control: no-cache", "-H", "x-goog-meta-Team: ops",
           "--admin-key", str(key_path), server=server))
    stored = metadata(server, key, "test-bucket", "guess/h.txt")
    assert (stored["contentType"], stored["cacheControl"]) == ("text/x-special", "no-cache")
    assert stored["metadata"] == {"Team": "ops"}
    bad = run("cp", str(tmp_path / "noext"), "gs://test-bucket/x", "-H", "X-Nope: 1", server=server, key=key_path)
    assert bad.returncode == 2 and b"X-Nope" in bad.stderr


def test_recursive_copy_list_and_remove(gateway, tmp_path: Path) -> None:
    server, key_path, _ = gateway
    tree = tmp_path / "album"
    files = {"a.txt": b"alpha", "sub/b.json": b"{}", "sub/deeper/c.bin": os.urandom(300_000)}
    for relative, body in files.items():
        (tree / relative).parent.mkdir(parents=True, exist_ok=True)
        (tree / relative).write_bytes(body)
    out = ok(run("cp", "-r", str(tree), "gs://test-bucket/photos/album", server=server, key=key_path))
    assert len(out.splitlines()) == 3
    listed = ok(run("ls", "gs://test-bucket/photos/", "-r", server=server, key=key_path)).splitlines()
    assert sorted(listed) == sorted(f"gs://test-bucket/photos/album/{r}" for r in files)
    shallow = ok(run("ls", "gs://test-bucket/photos/album/", server=server, key=key_path)).splitlines()
    assert shallow == ["gs://test-bucket/photos/album/sub/", "gs://test-bucket/photos/album/a.txt"]

    back = tmp_path / "back"
    out = ok(run("cp", "--recursive", "gs://test-bucket/photos/album", str(back), server=server, key=key_path))
    assert len(out.splitlines()) == 3
    for relative, body in files.items():
        assert (back / relative).read_bytes() == body, relative

    removed = ok(run("rm", "-r", "gs://test-bucket/photos/album", server=server, key=key_path)).splitlines()
    assert sorted(removed) == sorted(f"removed gs://test-bucket/photos/album/{r}" for r in files)
    assert ok(run("ls", "-r", "gs://test-bucket/photos/", server=server, key=key_path)) == ""
    again = run("rm", "-r", "gs://test-bucket/photos/album", server=server, key=key_path)
    assert again.returncode == 1 and b"not found: gs://test-bucket/photos/album/" in again.stderr


def test_recursive_download_never_writes_outside_its_directory(gateway, tmp_path: Path) -> None:
    """Names whose segments are `..` are refused, also when a combining mark follows the `/` after `..` (one Swift
    `Character` with it: split by Character, `../\u0301x` was one harmless segment, and the file landed in the
    parent of the target directory)."""
    server, key_path, key = gateway
    auth = {"Authorization": f"Bearer {key}"}
    for name in ("trap/../\u0301escaped", "trap/../plain"):
        up = request("POST", upload_url(server.url, "test-bucket", name), b"x", auth)
        assert up.status == 200, (name, up.body[:300])
        into = tmp_path / "into"
        result = run("cp", "-r", "gs://test-bucket/trap", str(into), server=server, key=key_path)
        assert result.returncode != 0 and b"refusing to write" in result.stderr, result.stderr
        assert not any(p.name.endswith("escaped") or p.name == "plain" for p in tmp_path.rglob("*"))
        assert request("DELETE", object_url(server.url, "test-bucket", name), headers=auth).status == 204


def test_dash_is_stdin_and_stdout(gateway) -> None:
    server, key_path, key = gateway
    body = os.urandom(2_500_000)
    out = ok(run("cp", "-", "gs://test-bucket/pipe/blob.json", stdin=body, server=server, key=key_path))
    assert out.startswith("gs://test-bucket/pipe/blob.json 2500000 bytes md5=")
    assert metadata(server, key, "test-bucket", "pipe/blob.json")["contentType"] == "application/json"
    down = run("cp", "gs://test-bucket/pipe/blob.json", "-", server=server, key=key_path)
    assert down.returncode == 0, down.stderr
    assert down.stdout == body


def test_failure_wording(gateway, tmp_path: Path) -> None:
    server, key_path, _ = gateway
    (tmp_path / "f.txt").write_bytes(b"x")
    denied = run("cp", str(tmp_path / "f.txt"), "gs://test-bucket/d/f.txt", server=server)
    assert denied.returncode == 1
    assert denied.stderr.decode().strip() == "portcullis-cli: permission denied: gs://test-bucket/d/f.txt"
    missing_bucket = run("stat", "gs://no-such-bucket/x.txt", server=server, key=key_path)
    assert missing_bucket.returncode == 1
    assert missing_bucket.stderr.decode().strip() == "portcullis-cli: bucket not found: no-such-bucket"
    missing = run("stat", "gs://test-bucket/nothing-here.txt", server=server, key=key_path)
    assert missing.returncode == 1
    assert missing.stderr.decode().strip() == "portcullis-cli: not found: gs://test-bucket/nothing-here.txt"
    gone = run("rm", "gs://test-bucket/nothing-here.txt", server=server, key=key_path)
    assert gone.stderr.decode().strip() == "portcullis-cli: not found: gs://test-bucket/nothing-here.txt"


def test_help_is_short_overall_and_long_per_command() -> None:
    overview = ok(run("--help"))
    commands = overview.split("Commands:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [line.split()[0] for line in commands] == [
        "ls", "stat", "cp", "rm", "mirror", "url", "set-meta", "completion", "help"]
    long_cp = ok(run("help", "cp"))
    assert long_cp == ok(run("cp", "--help"))
    assert "usage: portcullis-cli [GLOBAL OPTIONS] cp" in long_cp and "--header" in long_cp
    assert len(long_cp.splitlines()) > len(commands)
    assert "download tokens" in ok(run("mirror", "--help"))


def test_server_help_is_short_with_long_help_per_command() -> None:
    short = subprocess.run([portcullis_bin(), "--help"], capture_output=True, timeout=30)
    assert short.returncode == 0
    text = short.stdout.decode()
    assert "portcullis serve" in text and "--max-connections" not in text and len(text.splitlines()) < 30
    serve = subprocess.run([portcullis_bin(), "serve", "--help"], capture_output=True, timeout=30)
    assert b"--max-connections" in serve.stdout
    for command in (["help", "serve"], ["help", "token"], ["rules", "--help"]):
        long = subprocess.run([portcullis_bin(), *command], capture_output=True, timeout=30)
        assert long.returncode == 0 and len(long.stdout.splitlines()) > 3, (command, long.stdout, long.stderr)


def test_rules_check_hints_double_equals(tmp_path: Path) -> None:
    rules = tmp_path / "eq.rules"
    rules.write_text(RULES.replace("request.auth != null", "request.auth.uid = 'ops'"))
    checked = subprocess.run([portcullis_bin(), "rules", "check", str(rules)], capture_output=True, timeout=30)
    assert checked.returncode == 1
    assert b"==" in checked.stderr + checked.stdout and b"hint" in checked.stderr + checked.stdout


@pytest.mark.skipif(backends.unavailable("gcs") is not None, reason=str(backends.unavailable("gcs")))
@pytest.mark.parametrize("target", backends.params(("file", "s3")))
def test_mirror_gs_bucket_keeps_metadata_and_tokens(
        start_server, tmp_path: Path, admin_key: tuple[Path, str], target: str) -> None:
    """From a gs:// bucket on fake-gcs-server into an embedded bucket and into an s3:// bucket on moto."""
    key_path, key = admin_key
    rules = tmp_path / "signed-in.rules"
    rules.write_text(RULES)
    source_bucket = backends.bucket_url("gcs", tmp_path)
    target_bucket = backends.bucket_url(target, tmp_path)
    server = start_server(bucket="scratch", rules=rules,
                          extra=["--admin-key", str(key_path), "--bucket", f"firebase={source_bucket}",
                                 "--bucket", f"local={target_bucket}"])
    auth = {"Authorization": f"Bearer {key}"}
    objects = {"top.txt": b"top", "photos/cat.png": os.urandom(70_000), "photos/2024/dog.json": b"{\"d\":1}"}
    for name, body in objects.items():
        made = request("POST", f"{server.url}/v0/b/firebase/o?name={name}", body=body,
                       headers={**auth, "Content-Type": "application/x-test"})
        assert made.status == 200, made.body[:300]
    patched = request("PATCH", object_url(server.url, "firebase", "photos/cat.png"),
                      body=json.dumps({"cacheControl": "public, max-age=60", "metadata": {"owner": "ops"}}).encode(),
                      headers={**auth, "Content-Type": "application/json"})
    assert patched.status == 200, patched.body[:300]
    source = {name: metadata(server, key, "firebase", name) for name in objects}
    assert all(meta.get("downloadTokens") for meta in source.values())

    first = run("mirror", "gs://firebase", "gs://local/copy", server=server, key=key_path)
    out = ok(first).splitlines()
    assert sum(line.startswith("copied ") for line in out) == 3
    assert out[-1].startswith("mirror: 3 copied, 0 skipped, 0 failed, ")
    for name, body in objects.items():
        copy = metadata(server, key, "local", f"copy/{name}")
        for field in ("md5Hash", "contentType", "downloadTokens", "cacheControl", "metadata"):
            assert copy.get(field) == source[name].get(field), (name, field)
        token = str(source[name]["downloadTokens"]).split(",")[0]
        media = request("GET", object_url(server.url, "local", f"copy/{name}", alt="media", token=token))
        assert media.status == 200 and media.body == body, name

    second = ok(run("mirror", "gs://firebase", "gs://local/copy", server=server, key=key_path)).splitlines()
    assert sum(line.startswith("skipped ") for line in second) == 3
    assert second[-1].startswith("mirror: 0 copied, 3 skipped, 0 failed, 0 bytes, ")

    # A changed source object is copied again; the rest stay skipped.
    request("POST", f"{server.url}/v0/b/firebase/o?name=top.txt", body=b"changed", headers=auth)
    third = ok(run("mirror", "gs://firebase", "gs://local/copy", server=server, key=key_path)).splitlines()
    assert third[-1].startswith("mirror: 1 copied, 2 skipped, 0 failed, 7 bytes, ")

    # On a terminal (stderr a pty): a progress bar redrawn in place, no per-object lines, the same summary.
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PORTCULLIS_")}
    with subprocess.Popen([cli_bin(), "--server", server.url, "--admin-key", str(key_path), "mirror",
                           "gs://firebase/photos", "gs://local/tty"], stdout=subprocess.PIPE, stderr=slave,
                          env=env) as process:
        os.close(slave)
        drawn = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            drawn += chunk
        stdout = process.stdout.read() if process.stdout else b""
        assert process.wait(timeout=60) == 0
    os.close(master)
    assert b"\r[" in drawn and b"] 100% 2/2 objects" in drawn, drawn
    lines = stdout.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mirror: 2 copied, 0 skipped, 0 failed, "), lines


def test_mirror_copies_bytes_as_stored_and_refuses_overlap(start_server, tmp_path: Path,
                                                          admin_key: tuple[Path, str]) -> None:
    """A gzip-encoded object is copied compressed (same MD5), not decompressed on the way as a download is."""
    key_path, key = admin_key
    server = start_server(bucket="src", extra=["--admin-key", str(key_path), "--bucket",
                                               f"dst=file:{tmp_path / 'dst-data'}"])
    plain = "\n".join(str(i) for i in range(5000)).encode()
    (tmp_path / "log.txt").write_bytes(gzip.compress(plain))
    ok(run("cp", str(tmp_path / "log.txt"), "gs://src/logs/log.txt", "-H", "Content-Encoding: gzip",
           server=server, key=key_path))
    out = ok(run("mirror", "gs://src/logs", "gs://dst", server=server, key=key_path)).splitlines()
    assert out[-1].startswith("mirror: 1 copied, 0 skipped, 0 failed, "), out
    source, copy = metadata(server, key, "src", "logs/log.txt"), metadata(server, key, "dst", "log.txt")
    assert (copy["md5Hash"], copy["contentEncoding"], copy["size"]) == (
        source["md5Hash"], "gzip", source["size"])
    overlap = run("mirror", "gs://src", "gs://src/logs/again", server=server, key=key_path)
    assert overlap.returncode == 2 and b"overlap" in overlap.stderr
