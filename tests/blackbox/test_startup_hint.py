"""The start-up hint: the `try: curl …` line a newcomer copies must work under the rules in force, and when the
rules deny it, the advice must name a rule (or credential) that really lets it through.

Each test starts a real `portcullis serve`, reads the hint from its log, and runs what it says with bash and curl
against that server."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from harness import ALLOW_ALL_RULES, Server

DENY_ANONYMOUS_LIST = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /{allPaths=**} {
      allow read: if request.auth != null;
    }
  }
}
"""


def messages(server: Server) -> list[str]:
    out = []
    for line in server.log_text().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("msg"), str):
            out.append(entry["msg"])
    return out


def hint(server: Server) -> list[str]:
    """The hint lines: everything logged after `portcullis ready` up to the console line."""
    msgs = messages(server)
    start = msgs.index("portcullis ready") + 1
    return [m for m in msgs[start:] if not m.startswith("console: ")]


def run_curl(command: str, cwd: Path) -> tuple[int, str]:
    """Runs the advised command with bash, adding only `-s -o /dev/null -w %{http_code}` to read the status."""
    assert command.startswith("curl "), command
    out = subprocess.run(["bash", "-c", command.replace("curl ", "curl -s -o /dev/null -w '%{http_code}' ", 1)],
                         cwd=cwd, capture_output=True, text=True, timeout=30)
    return out.returncode, out.stdout


def start(tmp_path: Path, servers: list[Server], rules: str | None, *extra: str) -> Server:
    args = ["--bucket", f"photos=file:{tmp_path / 'data'}", *extra]
    if rules is not None:
        (tmp_path / "storage.rules").write_text(rules)
        args += ["--rules", str(tmp_path / "storage.rules")]
    server = Server(workdir=tmp_path, args=args, name="hint")
    servers.append(server)
    return server.start()


def tried_command(lines: list[str]) -> str:
    assert len(lines) == 1 and lines[0].startswith("try: "), lines
    return lines[0].removeprefix("try: ").split("   (")[0]


def test_allow_all_hint_runs_and_lists(tmp_path: Path, servers: list[Server]) -> None:
    server = start(tmp_path, servers, ALLOW_ALL_RULES)
    command = tried_command(hint(server))
    assert command == f"curl '{server.url}/v0/b/photos/o'"
    assert run_curl(command, tmp_path) == (0, "200")


def test_denied_list_names_the_rule_that_allows_it(tmp_path: Path, servers: list[Server]) -> None:
    server = start(tmp_path, servers, DENY_ANONYMOUS_LIST)
    lines = hint(server)
    assert not any(line.startswith("try: ") for line in lines), "no curl line that would be a 403 is offered as a try"
    assert lines[0] == f"the rules in force deny an anonymous list of bucket photos's root: " \
                       f"curl '{server.url}/v0/b/photos/o' answers 403"
    command = lines[0].split(": ", 1)[1].removesuffix(" answers 403")
    assert run_curl(command, tmp_path) == (0, "403"), "the advice says what the server does"

    rule = re.search(r"to allow it: `([^`]+)` inside `match /b/\{bucket\}/o`", lines[1])
    assert rule, lines[1]
    server.stop(timeout=10)
    allowed = DENY_ANONYMOUS_LIST.replace("    match /{allPaths=**} {", f"    {rule.group(1)}\n    match /{{allPaths=**}} {{")
    again = start(tmp_path, servers, allowed)
    assert run_curl(tried_command(hint(again)), tmp_path) == (0, "200"), "the named rule allows the listing"


def test_denied_list_with_admin_key_advises_the_key(tmp_path: Path, servers: list[Server]) -> None:
    (tmp_path / "admin key").write_text("a-long-random-admin-key-for-tests\n")
    server = start(tmp_path, servers, DENY_ANONYMOUS_LIST, "--admin-key", str(tmp_path / "admin key"))
    lines = hint(server)
    assert "deny an anonymous list" in lines[0] and "the admin key bypasses the rules" in lines[0]
    command = tried_command(lines)
    assert "a-long-random" not in command, "the key itself is never logged"
    assert run_curl(command, tmp_path) == (0, "200")


def test_no_rules_file_says_so(tmp_path: Path, servers: list[Server]) -> None:
    server = start(tmp_path, servers, None)
    lines = hint(server)
    assert lines[0].startswith("no rules file is loaded (--rules)"), lines
    assert lines[0].endswith(f"curl '{server.url}/v0/b/photos/o' answers 403")
