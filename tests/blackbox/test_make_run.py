"""`make run` (the README's first command) on a prepared machine: quiet dependency check, release build, the
gateway listening where it says, and the printed curl lines working — including the bearer-token line when this
build has `portcullis token` — and the README's CLI section minting its token against it as printed."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import time
import urllib.parse

from harness import ROOT, free_port, request


def readme_token_command() -> str:
    """The `portcullis token …` command the README's CLI section runs (inside `PORTCULLIS_TOKEN="$(…)"`)."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Swift client SDK and ops CLI", 1)[1].split("\n## ", 1)[0]
    match = re.search(r'PORTCULLIS_TOKEN="\$\((portcullis token[^)]*)\)"', section)
    assert match, "the README's CLI section no longer mints a token with portcullis token"
    return match[1]


def test_make_run_serves_and_prints_working_curl_lines(tmp_path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PORTCULLIS_")}
    env.update({"PORT": str(port), "PORTCULLIS_BUCKETS": f"default-bucket=file:{tmp_path / 'data'}"})
    log = tmp_path / "run.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(["make", "--no-print-directory", "run"], cwd=ROOT, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            assert process.poll() is None, log.read_text()
            try:
                if request("GET", f"http://127.0.0.1:{port}/readyz", timeout=1).status == 200:
                    break
            except OSError:
                time.sleep(0.1)
        text = log.read_text()
        assert f"listening on http://127.0.0.1:{port}" in text, text
        assert "installing apt packages" not in text, "dependency check is not quiet on a prepared machine"
        assert request("GET", f"http://127.0.0.1:{port}/healthz").status == 200
        # Run the printed upload line (token or admin key) through a shell, exactly as a user would.
        lines = text.replace("\\\n", " ").splitlines()
        upload = next(line.strip() for line in lines if "name=public/hello.txt" in line)
        # /readyz may answer before the JWT key file has been loaded (the authenticator starts in a background
        # task); a person typing the line never sees that, so allow a short bounded wait for a 401 only.
        deadline = time.monotonic() + 5
        while True:
            result = subprocess.run(["bash", "-c", upload + " -o /dev/null -w '%{http_code}'"], cwd=ROOT,
                                    capture_output=True, text=True, timeout=60)
            if result.stdout != "401" or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        token_available = "has no 'portcullis token'" not in text
        if token_available:
            assert result.stdout == "200", (upload, result.stdout, result.stderr)
            download = next(line.strip() for line in lines if "alt=media" in line)
            body = subprocess.run(["bash", "-c", download], cwd=ROOT, capture_output=True, text=True, timeout=60)
            assert body.stdout == "hello from portcullis"
            # The README's CLI section, from the repository directory with .build/release on PATH as it says.
            command = readme_token_command()
            path_env = {**env, "PATH": f"{ROOT / '.build' / 'release'}:{env.get('PATH', '')}"}
            minted = subprocess.run(["bash", "-c", command], cwd=ROOT, env=path_env, capture_output=True, text=True,
                                    timeout=60)
            assert minted.returncode == 0, (command, minted.stderr)
            name = urllib.parse.quote("photos/cli/readme-token.txt", safe="")
            upload_with_token = request(
                "POST", f"http://127.0.0.1:{port}/v0/b/default-bucket/o?name={name}", body=b"from the README token",
                headers={"Authorization": f"Firebase {minted.stdout.strip()}", "Content-Type": "text/plain"})
            assert upload_with_token.status == 200, (command, upload_with_token.body[:300])
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(40)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
