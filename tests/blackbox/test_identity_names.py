"""Byte-exact names and identities from the outside, on every backend (file, gs://, s3://, s3:// with SigV4 checked):
identities are byte strings (a canonically equivalent uid is another user, equivalent names are two objects),
and one object-name policy holds everywhere (README "Object names"; docs/configuration.md).

Reuses test_v0_conformance's backend matrix, servers and helpers.
"""
from __future__ import annotations

import requests

from test_v0_conformance import (  # noqa: F401  (fixtures and the backend parametrization hook)
    BUCKET, _backend_quirk, assert_error, backend, coll, enc, obj, put_media, pytest_generate_tests, read, rsrv,
    srv,
)
from harness import Server

COMPOSED, DECOMPOSED = "caf\u00e9", "cafe\u0301"
KELVIN_KIM = "\u212aim"  # canonically equivalent to "Kim"


def list_names(base: str, prefix: str, page: int = 1000, headers: dict[str, str] | None = None) -> list[str]:
    """Every item under `prefix` (v0 list with delimiter '/'), page by page."""
    names: list[str] = []
    token = None
    while True:
        params = {"prefix": prefix, "delimiter": "/", "maxResults": str(page)}
        if token:
            params["pageToken"] = token
        r = requests.get(coll(base), params=params, headers=headers)
        assert r.status_code == 200, r.text
        body = r.json()
        names += [item["name"] for item in body.get("items", [])]
        token = body.get("nextPageToken")
        if not token:
            return names


def test_equivalent_uid_is_another_user(rsrv) -> None:
    """The issue's critical finding: uid "cafe\\u0301" passed `request.auth.uid == uid` for the folder of
    "caf\\u00e9" and could read and overwrite its files."""
    for owner, intruder in ((COMPOSED, DECOMPOSED), ("Kim", KELVIN_KIM)):
        name = f"users/{owner}/secret.txt"
        up = put_media(rsrv.url, name, b"mine", headers=rsrv.auth(owner))
        assert up.status_code == 200, up.text
        assert read(rsrv.url, name, headers=rsrv.auth(owner)).content == b"mine"
        assert_error(read(rsrv.url, name, headers=rsrv.auth(intruder)), 403)
        assert_error(requests.get(obj(rsrv.url, name), headers=rsrv.auth(intruder)), 403)
        assert_error(put_media(rsrv.url, name, b"theirs", headers=rsrv.auth(intruder)), 403)
        assert_error(requests.delete(obj(rsrv.url, name), headers=rsrv.auth(intruder)), 403)
        assert read(rsrv.url, name, headers=rsrv.auth(owner)).content == b"mine"


def test_equivalent_names_are_two_objects(srv: Server) -> None:
    """Canonically equivalent spellings are different objects; a name may even start with a combining mark right
    after its folder's '/' (one grapheme cluster with it: Swift's `hasPrefix("eq/")` said no, and listings of
    gs:// and s3:// buckets ended there)."""
    pairs = [f"eq/{COMPOSED}", f"eq/{DECOMPOSED}", "eq/K", "eq/\u212a", "eq/\u00c5", "eq/A\u030a", "eq/\u212b",
             "eq/\u0301"]
    for index, name in enumerate(pairs):
        up = put_media(srv.url, name, f"#{index}".encode())
        assert up.status_code == 200, up.text
        assert up.json()["name"] == name
    for index, name in enumerate(pairs):
        assert read(srv.url, name).content == f"#{index}".encode(), name
        assert requests.get(obj(srv.url, name)).json()["name"] == name
    assert list_names(srv.url, "eq/") == sorted(pairs, key=lambda n: n.encode())
    assert requests.delete(obj(srv.url, f"eq/{DECOMPOSED}")).status_code == 204
    assert requests.delete(obj(srv.url, "eq/\u212a")).status_code == 204
    assert read(srv.url, f"eq/{COMPOSED}").content == b"#0"
    assert read(srv.url, "eq/K").content == b"#2"
    assert_error(read(srv.url, f"eq/{DECOMPOSED}"), 404)
    assert len(list_names(srv.url, "eq/")) == len(pairs) - 2


def test_names_with_control_characters_do_not_break_listing(srv: Server) -> None:
    """On s3:// one key holding a character XML 1.0 cannot carry made every listing of the bucket 500
    ("S3 sent malformed XML"): anyone allowed to write one object could deny listing to everyone."""
    names = ([f"ctl/{chr(c)}-{c}" for c in range(1, 32) if c not in (10, 13)]
             + ["ctl/\x7f", "ctl/\u0085", "ctl/\ufffe", "ctl/\uffff", "ctl/\U0001f600", "ctl/a/\u0301b"])
    for index, name in enumerate(names):
        up = put_media(srv.url, name, f"#{index}".encode())
        assert up.status_code == 200, (name, up.text)
    expected = sorted((n for n in names if n.count("/") == 1), key=lambda n: n.encode())
    for page in (1000, 5):
        assert list_names(srv.url, "ctl/", page) == expected
    r = requests.get(coll(srv.url), params={"prefix": "ctl/a/", "delimiter": "/"})
    assert [item["name"] for item in r.json().get("items", [])] == ["ctl/a/\u0301b"]
    for index, name in enumerate(names):
        assert read(srv.url, name).content == f"#{index}".encode(), name
        assert requests.delete(obj(srv.url, name)).status_code == 204, name
    assert list_names(srv.url, "ctl/") == []


def test_one_name_policy_on_every_backend(srv: Server) -> None:
    """Refused before any backend is called: NUL, CR/LF, '.', '..', GCS's ACME path, the gateway's own prefix,
    more than 1024 bytes. Every other name is an ordinary name (see the control-character test)."""
    for name in ["a\x00b", "a\rb", "a\nb", ".", "..", ".well-known/acme-challenge/t", ".portcullis-staging/x",
                 "x" * 1025]:
        assert_error(put_media(srv.url, name, b"x"), 400)
        url = f"{srv.url}/v0/b/{BUCKET}/o/" + enc(name).replace(".", "%2E")
        assert_error(requests.get(url, params={"alt": "media"}), 400)
        assert_error(requests.delete(url), 400)
    for name in ["./..", "...", ".well-known/acme-challenge", ".portcullis-staging", "n" * 1024]:
        assert put_media(srv.url, name, b"ok").status_code == 200, name
