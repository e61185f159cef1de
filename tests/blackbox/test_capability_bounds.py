"""Capabilities bound to what they were issued for, and listings as narrow as the rules — tried from the outside
on every backend (file, gs://, s3://, s3:// with SigV4).

- Download tokens are read capabilities: a caller the rules let write but not read an object never sees its
  token in a write's answer (v0 PATCH and upload, JSON API PATCH, PUT, media, multipart and resumable uploads),
  and an end user's write never sets one (`metadata.firebaseStorageDownloadTokens`, in any letter case) — only
  the server mints them and only the admin chooses them.
- An upload URL whose staging record is gone (swept after `--upload-idle-timeout`, or removed by the bucket's
  lifecycle rule) answers that the upload is unknown — never with whatever object was stored under its name
  since. A signed URL opens only the generation it was signed for.
- A listing shows a name only when the rules let the caller list the folder holding it: a recursive listing,
  another delimiter or a glob reaching below a folder the caller may list hides what lies in folders it may not.
"""
from __future__ import annotations

import base64
import json
import re
import sqlite3
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from backends import emulator, signed_s3

from test_v0_conformance import (  # noqa: F401  (fixtures and the backend parametrization hook)
    BUCKET, RulesServer, _backend_quirk, _start, assert_error, backend, coll, enc,
    js_start, obj, pytest_generate_tests,
)

RULES = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    // A drop box: signed-in users may write, nobody but the admin may read.
    match /drop/{name} {
      allow create, update: if request.auth != null;
    }
    // Everyone signed in may list the folder of all users; each user reads, writes and lists only their own.
    match /users {
      allow list: if request.auth != null;
    }
    match /users/{uid}/{rest=**} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
  }
}
"""

JSON_API = f"/storage/v1/b/{BUCKET}/o"
TOKEN_KEY = "firebaseStorageDownloadTokens"


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Iterator[RulesServer]:
    tmp = tmp_path_factory.mktemp(f"bounds-{backend}")
    secret = tmp / "hs.key"
    secret.write_text(base64.b64encode(b"k" * 32).decode() + "\n")
    admin_key = "admin-" + tmp.name
    (tmp / "admin.key").write_text(admin_key + "\n")
    server = _start(tmp, RULES, ["--jwt-hmac-secret", str(secret), "--admin-key", str(tmp / "admin.key")], backend)
    yield RulesServer(server, secret, admin_key)
    server.stop(timeout=10)
    server.kill()


def admin(gw: RulesServer) -> dict[str, str]:
    return {"Authorization": f"Bearer {gw.admin_key}"}


def json_obj(gw: RulesServer, name: str) -> str:
    return f"{gw.url}{JSON_API}/{urllib.parse.quote(name, safe='')}"


def put_as(gw: RulesServer, name: str, data: bytes, headers: dict[str, str]) -> dict[str, object]:
    r = requests.post(coll(gw.url), params={"name": name}, data=data, headers={"Content-Type": "text/plain", **headers})
    assert r.status_code == 200, r.text
    return r.json()


def tokens_of(gw: RulesServer, name: str) -> list[str]:
    r = requests.get(obj(gw.url, name), headers=admin(gw))
    assert r.status_code == 200, r.text
    return [t for t in r.json().get("downloadTokens", "").split(",") if t]


def shows_a_token(body: dict[str, object]) -> bool:
    """Whether a v0 metadata document or a JSON API object resource carries a download token."""
    if body.get("downloadTokens"):
        return True
    metadata = body.get("metadata")
    return isinstance(metadata, dict) and any(k.lower() == TOKEN_KEY.lower() for k in metadata)


# ---------------------------------------------------------------------------------------------------------------
# Download tokens: shown only to readers, chosen only by the server and the admin.
# ---------------------------------------------------------------------------------------------------------------

def test_a_writer_who_may_not_read_never_sees_the_token(gw: RulesServer) -> None:
    name = "drop/report.txt"
    put_as(gw, name, b"secret", admin(gw))
    (token,) = tokens_of(gw, name)
    writer = gw.auth("writer")
    answers = {
        "v0 PATCH {}": requests.patch(obj(gw.url, name), json={}, headers=writer),
        "JSON PATCH {}": requests.patch(json_obj(gw, name), json={}, headers=writer),
        "JSON PUT": requests.put(json_obj(gw, name), json={"contentType": "text/plain"}, headers=writer),
        "v0 upload": requests.post(coll(gw.url), params={"name": name}, data=b"again", headers=writer),
        "JSON media upload": requests.post(f"{gw.url}/upload{JSON_API}", params={"uploadType": "media", "name": name},
                                           data=b"again", headers={"Content-Type": "text/plain", **writer}),
    }
    for what, answer in answers.items():
        assert answer.status_code == 200, (what, answer.status_code, answer.text)
        assert token not in answer.text, what
        assert not shows_a_token(answer.json()), (what, answer.text)
    # The object still has a token (the admin sees it): it was hidden, not removed.
    assert tokens_of(gw, name)
    # A reader gets it in the same answer.
    own = put_as(gw, "users/owner/mine.txt", b"x", gw.auth("owner"))
    assert own.get("downloadTokens")
    patched = requests.patch(json_obj(gw, "users/owner/mine.txt"), json={}, headers=gw.auth("owner"))
    assert patched.status_code == 200 and shows_a_token(patched.json()), patched.text


def test_a_writer_never_sees_the_token_at_the_end_of_a_resumable_upload(gw: RulesServer) -> None:
    writer = gw.auth("writer")
    start = requests.post(f"{gw.url}/upload{JSON_API}", params={"uploadType": "resumable", "name": "drop/big.bin"},
                          json={"contentType": "application/octet-stream"}, headers=writer)
    assert start.status_code == 200, start.text
    location = start.headers["Location"]
    done = requests.put(location, data=b"payload", headers={"Content-Range": "bytes 0-6/7"})
    assert done.status_code == 200, done.text
    assert not shows_a_token(done.json()), done.text
    status = requests.put(location, data=b"", headers={"Content-Range": "bytes */*"})
    assert status.status_code == 200 and not shows_a_token(status.json()), status.text
    v0 = js_start(gw.url, "drop/v0.bin", 3, headers=writer)
    assert v0.status_code == 200, v0.text
    final = requests.put(v0.headers["X-Goog-Upload-URL"], data=b"abc",
                         headers={"X-Goog-Upload-Command": "upload, finalize", "X-Goog-Upload-Offset": "0"})
    assert final.status_code == 200, final.text
    assert not shows_a_token(final.json()), final.text
    assert tokens_of(gw, "drop/v0.bin"), "the server still mints the object's token"


@pytest.mark.parametrize("key", [TOKEN_KEY, "FirebaseStorageDownloadTokens", "FIREBASESTORAGEDOWNLOADTOKENS"])
def test_an_end_user_cannot_plant_a_token(gw: RulesServer, key: str) -> None:
    owner = gw.auth("owner")
    name = f"users/owner/planted-{key}.txt"
    put_as(gw, name, b"private", owner)
    before = tokens_of(gw, name)
    planted = "planted-" + key.lower()
    for method, url, body in (
        ("PATCH", obj(gw.url, name), {"metadata": {key: planted}}),
        ("PATCH", json_obj(gw, name), {"metadata": {key: planted}}),
        ("PUT", json_obj(gw, name), {"metadata": {key: planted}}),
    ):
        r = requests.request(method, url, json=body, headers=owner)
        assert r.status_code == 200, (method, url, r.text)
    # A multipart upload's metadata cannot choose one either.
    boundary = "b0undary"
    meta = json.dumps({"name": name + ".new", "metadata": {key: planted}})
    multipart = (f"--{boundary}\r\nContent-Type: application/json\r\n\r\n{meta}\r\n--{boundary}\r\n"
                 f"Content-Type: text/plain\r\n\r\nbytes\r\n--{boundary}--\r\n").encode()
    up = requests.post(f"{gw.url}/upload{JSON_API}", params={"uploadType": "multipart"}, data=multipart,
                       headers={"Content-Type": f"multipart/related; boundary={boundary}", **owner})
    assert up.status_code == 200, up.text
    assert tokens_of(gw, name) == before
    assert planted not in tokens_of(gw, name + ".new")
    for target in (name, name + ".new"):
        opened = requests.get(obj(gw.url, target), params={"alt": "media", "token": planted})
        assert_error(opened, 403)
    # The admin still chooses tokens (server code mints download URLs that way).
    r = requests.patch(json_obj(gw, name), json={"metadata": {TOKEN_KEY: "chosen-by-admin"}}, headers=admin(gw))
    assert r.status_code == 200, r.text
    assert requests.get(obj(gw.url, name), params={"alt": "media", "token": "chosen-by-admin"}).content == b"private"


def test_an_end_users_copy_does_not_take_the_sources_token(gw: RulesServer) -> None:
    owner = gw.auth("owner")
    put_as(gw, "users/owner/original.txt", b"original", owner)
    (token,) = tokens_of(gw, "users/owner/original.txt")
    source = urllib.parse.quote("users/owner/original.txt", safe="")
    target = urllib.parse.quote("users/owner/copy.txt", safe="")
    copied = requests.post(f"{gw.url}{JSON_API}/{source}/copyTo/b/{BUCKET}/o/{target}", headers=owner)
    assert copied.status_code == 200, copied.text
    assert token not in tokens_of(gw, "users/owner/copy.txt")
    assert_error(requests.get(obj(gw.url, "users/owner/copy.txt"), params={"alt": "media", "token": token}), 403)


# ---------------------------------------------------------------------------------------------------------------
# Upload URLs and signed URLs resolve only to what they were issued for.
# ---------------------------------------------------------------------------------------------------------------

def forget_staging_records(gw: RulesServer, backend: str) -> None:
    """What `--upload-idle-timeout` (embedded) or the documented lifecycle rule on `.portcullis-staging/` (gs://,
    s3://) does to an upload's record: it is gone."""
    bucket_url = gw.server.args[gw.server.args.index("--bucket") + 1].split("=", 1)[1]
    if backend == "file":
        index = Path(bucket_url.removeprefix("file:")) / "index.sqlite"
        with sqlite3.connect(index, timeout=10) as db:
            db.execute("DELETE FROM staging")
        return
    name = bucket_url.split("://", 1)[1]
    if backend == "gcs":
        base = emulator("PC_FAKE_GCS_URL", "STORAGE_EMULATOR_HOST")
        listed = requests.get(f"{base}/storage/v1/b/{name}/o", params={"prefix": ".portcullis-staging/"}).json()
        for item in listed.get("items", []):
            gone = requests.delete(f"{base}/storage/v1/b/{name}/o/{urllib.parse.quote(item['name'], safe='')}")
            assert gone.status_code in (200, 204), (item["name"], gone.status_code, gone.text)
        return
    if backend == "s3":
        base = emulator("PC_MOTO_URL", "AWS_ENDPOINT_URL")
        # This moto checks no signature, but answers an anonymous DELETE with 403: any SigV4-shaped header will do.
        auth = {"Authorization": "AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/s3/aws4_request, "
                                 "SignedHeaders=host, Signature=0"}
        listing = requests.get(f"{base}/{name}", params={"list-type": "2", "prefix": ".portcullis-staging/"},
                               headers=auth).text
        for key in re.findall(r"<Key>([^<]*)</Key>", listing):
            gone = requests.delete(f"{base}/{name}/{urllib.parse.quote(key, safe='/')}", headers=auth)
            assert gone.status_code == 204, (key, gone.status_code, gone.text)
        return
    # rgw: a real engine, so every request is signed (curl signs them).
    status, listing = signed_s3(backend, "GET", f"/{name}?list-type=2&prefix=.portcullis-staging%2F")
    assert status == 200, listing[:300]
    keys = re.findall(r"<Key>([^<]*)</Key>", listing.decode())
    assert keys, listing
    for key in keys:
        assert signed_s3(backend, "DELETE", f"/{name}/{urllib.parse.quote(key, safe='/')}")[0] == 204, key


def test_an_upload_url_whose_session_is_gone_reveals_nothing(gw: RulesServer, backend: str) -> None:
    owner = gw.auth("owner")
    name = "users/owner/reused-name.txt"
    # A finished JSON API upload and a v0 upload left open, both for the same name.
    start = requests.post(f"{gw.url}/upload{JSON_API}", params={"uploadType": "resumable", "name": name},
                          json={"contentType": "text/plain"}, headers=owner)
    assert start.status_code == 200, start.text
    json_url = start.headers["Location"]
    assert requests.put(json_url, data=b"first", headers={"Content-Range": "bytes 0-4/5"}).status_code == 200
    v0 = js_start(gw.url, name, 5, headers=owner)
    assert v0.status_code == 200, v0.text
    v0_url = v0.headers["X-Goog-Upload-URL"]
    forget_staging_records(gw, backend)
    # Someone else's object now carries the name (the admin's here), of the same size.
    later = put_as(gw, name, b"later", admin(gw))
    token = later["downloadTokens"]
    answers = [
        requests.put(json_url, data=b"", headers={"Content-Range": "bytes */*"}),
        requests.put(json_url, data=b"", headers={"Content-Range": "bytes */5"}),
        requests.put(v0_url, data=b"", headers={"X-Goog-Upload-Command": "finalize", "X-Goog-Upload-Offset": "5"}),
        requests.put(v0_url, data=b"", headers={"X-Goog-Upload-Command": "query"}),
    ]
    for answer in answers:
        assert answer.status_code == 404, (answer.request.headers, answer.status_code, answer.text)
        assert token not in answer.text and "reused-name" not in answer.text, answer.text
        assert answer.json()["error"]["code"] == 404
    # The later object is untouched.
    assert requests.get(obj(gw.url, name), params={"alt": "media", "token": token}).content == b"later"


def test_a_signed_url_opens_only_the_generation_it_was_signed_for(gw: RulesServer) -> None:
    name = "users/owner/shared.txt"
    put_as(gw, name, b"shared once", gw.auth("owner"))
    read = requests.post(obj(gw.url, name) + "?signedUrl", json={"method": "GET"}, headers=gw.auth("owner"))
    delete = requests.post(obj(gw.url, name) + "?signedUrl", json={"method": "DELETE"}, headers=gw.auth("owner"))
    assert read.status_code == 200 and delete.status_code == 200, (read.text, delete.text)
    assert requests.get(read.json()["url"]).content == b"shared once"
    put_as(gw, name, b"written later", gw.auth("owner"))
    assert_error(requests.get(read.json()["url"]), 404)
    assert_error(requests.delete(delete.json()["url"]), 404)
    assert requests.get(obj(gw.url, name), params={"alt": "media"}, headers=gw.auth("owner")).content \
        == b"written later"


# ---------------------------------------------------------------------------------------------------------------
# Listings show only what lies in folders the caller may list.
# ---------------------------------------------------------------------------------------------------------------

NAMES = ["users/alice/a.txt", "users/alice/deep/b.txt", "users/bob/c.txt", "users/bob/deep/d.txt"]


@pytest.fixture(scope="module")
def listed(gw: RulesServer) -> RulesServer:
    for name in NAMES:
        put_as(gw, name, b"x", admin(gw))
    return gw


def listed_names(gw: RulesServer, surface: str, headers: dict[str, str], **params: str
                 ) -> tuple[list[str], list[str]]:
    """Every item name and prefix of a listing on `surface` (`v0` or `json`), page after page."""
    url = coll(gw.url) if surface == "v0" else f"{gw.url}{JSON_API}"
    items: list[str] = []
    prefixes: list[str] = []
    token = None
    while True:
        r = requests.get(url, params={**params, **({"pageToken": token} if token else {})}, headers=headers)
        assert r.status_code == 200, r.text
        body = r.json()
        items += [i["name"] for i in body.get("items", [])]
        prefixes += body.get("prefixes", [])
        token = body.get("nextPageToken")
        if not token:
            return items, prefixes


@pytest.mark.parametrize("surface, params", [
    ("v0", {"prefix": "users/"}),                           # recursive: no delimiter
    ("v0", {"prefix": "users/", "maxResults": "1"}),        # recursive, one name a page
    ("json", {"prefix": "users/"}),
    ("json", {"prefix": "users/", "maxResults": "1"}),
    ("json", {"prefix": "users/", "delimiter": "."}),       # another delimiter (v0 takes only `/`)
], ids=["v0-recursive", "v0-paged", "json-recursive", "json-paged", "json-dot-delimiter"])
def test_a_listing_hides_names_in_folders_the_caller_may_not_list(listed: RulesServer, surface: str,
                                                                  params: dict[str, str]) -> None:
    items, prefixes = listed_names(listed, surface, listed.auth("bob"), **params)
    everything = items + prefixes
    assert not [n for n in everything if n.startswith("users/alice/")], everything
    assert "users/bob/c.txt" in everything or "users/bob/c." in everything, everything
    # The admin still sees everything.
    admin_items, admin_prefixes = listed_names(listed, surface, admin(listed), **params)
    assert [n for n in admin_items + admin_prefixes if n.startswith("users/alice/")]


def test_a_glob_cannot_reach_below_a_listable_folder(listed: RulesServer) -> None:
    items, prefixes = listed_names(listed, "json", listed.auth("bob"), prefix="users/", matchGlob="users/**")
    assert sorted(items) == ["users/bob/c.txt", "users/bob/deep/d.txt"], items
    items, prefixes = listed_names(listed, "json", listed.auth("bob"), prefix="users/", matchGlob="users/*/a.txt")
    assert items == [], items


def test_a_firebase_listing_of_a_listable_folder_is_unchanged(listed: RulesServer) -> None:
    """`/` as the delimiter: every entry lies in the folder judged at the start, so nothing is hidden."""
    items, prefixes = listed_names(listed, "v0", listed.auth("bob"), prefix="users/", delimiter="/")
    assert {"users/alice/", "users/bob/"} <= set(prefixes) and items == [], (items, prefixes)
    assert_error(requests.get(coll(listed.url), params={"prefix": "users/alice/", "delimiter": "/"},
                              headers=listed.auth("bob")), 403)
