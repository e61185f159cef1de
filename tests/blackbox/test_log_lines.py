"""Log lines cannot be split or forged: an object name carrying every character a common line splitter breaks
on, the C0/C1 controls and the bidirectional controls reaches the access log escaped, in both `--log-format`s.

Python's `str.splitlines()` breaks on LF, CR, VT, FF, FS, GS, RS, NEL (U+0085), LS (U+2028) and PS (U+2029),
so it is the strictest common splitter. Each name below carries one of those characters followed by a
well-formed access record of the other format's shape; read with `splitlines()`, the log must hold exactly
one access record per request, none of them the forged one, and no escaped character raw. The server's
stdout (access log) and stderr (event log) both go to its log file (harness.Server).
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from harness import Server, object_url, request, upload_url

BUCKET = "logs"
# Every character `str.splitlines()` breaks on other than CR and LF (which object names cannot hold).
BREAKS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
# Never raw in a log line either: the other C0 and C1 controls (ESC starts a terminal escape, U+009B is CSI),
# DEL, the bidirectional controls (they reorder what a terminal shows) and the byte-order mark.
OTHER_ESCAPED = ["\x01", "\x1b", "\x1f", "\x7f", "\x80", "\x9b", "\x9f", "\u061c", "\u200e", "\u200f", "\u202a",
                 "\u202e", "\u2066", "\u2069", "\ufeff"]
FORGED_TEXT = ("2030-01-01T00:00:00.000Z 200 GET /v0/b/logs/o/forged 0.001ms in=0 out=0 "
               "route=/v0/b/{bucket}/o/{object} rid=forged remote=127.0.0.1:1 bucket=logs object=forged")
FORGED_JSON = ('{"time":"2030-01-01T00:00:00.000Z","level":"info","msg":"access","request_id":"forged",'
               '"bucket":"logs","object":"forged","status":200}')
NAMES = ([f"split/{i}{ch}{FORGED_TEXT}" for i, ch in enumerate(BREAKS)]
         + [f"split/j{i}{ch}{FORGED_JSON}" for i, ch in enumerate(BREAKS)]
         + ["other/" + "x".join(OTHER_ESCAPED) + "\\u0085 \"quoted\" a=b"])

TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"
TEXT_ACCESS = re.compile(TIME + r" \d{3} [A-Z]+ ")
TEXT_EVENT = re.compile(TIME + r" (debug|info|warning|error) ")
TEXT_OBJECT = re.compile(r' object=("(?:[^"\\]|\\.)*"|[^ ]*)')


def _exercise(server: Server) -> int:
    """Uploads and reads every name; returns the number of access records that name the bucket."""
    for name in NAMES:
        up = request("POST", upload_url(server.url, BUCKET, name), b"x", {"Content-Type": "text/plain"})
        assert up.status == 200, (name, up.body[:300])
        assert request("GET", object_url(server.url, BUCKET, name)).status == 200, name
    return 2 * len(NAMES)


def _text_records(lines: list[str]) -> list[str]:
    for line in lines:
        assert TEXT_ACCESS.match(line) or TEXT_EVENT.match(line), f"not a whole record: {line[:200]!r}"
    return [line for line in lines if TEXT_ACCESS.match(line) and f" bucket={BUCKET} " in line]


def _text_object(record: str) -> str:
    """The `object=` value; a quoted value is a JSON string literal (the text format uses JSON's escapes)."""
    match = TEXT_OBJECT.search(record)
    assert match, record
    value = match.group(1)
    return json.loads(value) if value.startswith('"') else json.loads(f'"{value}"')


def _json_records(lines: list[str]) -> list[dict[str, object]]:
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            pytest.fail(f"not a whole record: {line[:200]!r}")
        assert isinstance(record, dict), line
        if record.get("msg") == "access" and record.get("bucket") == BUCKET:
            records.append(record)
    return records


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_object_names_cannot_split_or_forge_log_lines(start_server: Callable[..., Server], log_format: str) -> None:
    server = start_server(bucket=BUCKET, extra=["--log-format", log_format])
    expected = _exercise(server)
    server.stop(timeout=10)  # SIGTERM flushes the per-loop access-log buffers
    raw = server.log_path.read_bytes()
    text = raw.decode("utf-8")  # strict: the log is valid UTF-8
    lines = text.splitlines()
    assert text.count("\n") == len(lines), "a line break other than LF reached the log"
    for ch in BREAKS + OTHER_ESCAPED:
        assert ch not in text, f"U+{ord(ch):04X} reached the log raw"
    if log_format == "text":
        records = _text_records(lines)
        objects = [_text_object(record) for record in records]
    else:
        json_records = _json_records(lines)
        objects = [str(record["object"]) for record in json_records]
    assert not [line for line in lines if line.startswith(("2030-", '{"time":"2030-'))], "a forged record"
    assert len(objects) == expected, f"{len(objects)} access records for {expected} requests"
    assert sorted(objects) == sorted(NAMES * 2), "the escaped names do not decode to the names sent"
