"""The Cloud Storage JSON API as clients beyond Google's Python libraries speak it: Go's google-api-go-client
(`X-GUploader-No-308`), google-apitools/gsutil (single-quoted multipart boundaries, the `/resumable/upload` alias,
listing a folder by its name first), rclone (`copyTo`/`rewriteTo` with the body `null`), Google's system tests
(compose without a content type, entity tags sent bare) — each answered as Cloud Storage answers — and what the
gateway does not serve answering 501 `notImplemented` in the JSON API's error shape, never a 404."""
from __future__ import annotations

import http.client
import json
import secrets
import time
import urllib.parse
from pathlib import Path

import jwt
import pytest

from events_receiver import Receiver
from harness import Server, request, signing_key_file
from test_events import BUCKET as EVENTS_BUCKET
from test_events import gateway as events_gateway
from test_events import write_secret

BUCKET = "test-bucket"
CHUNK = 256 * 1024


def api(server: Server) -> str:
    return f"{server.url}/storage/v1/b/{BUCKET}/o"


def upload(server: Server, name: str, body: bytes, content_type: str = "text/plain") -> dict:
    resp = request("POST", f"{server.url}/upload/storage/v1/b/{BUCKET}/o?uploadType=media&name="
                   + urllib.parse.quote(name, safe=""), body, {"Content-Type": content_type})
    assert resp.status == 200, resp.body
    return resp.json()


def start_resumable(server: Server, name: str, root: str = "/upload") -> str:
    resp = request("POST", f"{server.url}{root}/storage/v1/b/{BUCKET}/o?uploadType=resumable&name={name}", b"{}",
                   {"Content-Type": "application/json"})
    assert resp.status == 200, resp.body
    return resp.header("Location")


def put_with_reason(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, str, dict[str, str]]:
    """A PUT whose status line's reason phrase is kept (harness.request drops it)."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.request("PUT", f"{parts.path}?{parts.query}", body=body, headers=headers)
        resp = conn.getresponse()
        resp.read()
        return resp.status, resp.reason, {k.lower(): v for k, v in resp.getheaders()}
    finally:
        conn.close()


def assert_json_error(resp, status: int, reason: str) -> dict:
    assert resp.status == status, resp.body
    assert resp.header("Content-Type").startswith("application/json")
    error = resp.json()["error"]
    assert error["code"] == status and error["errors"][0]["reason"] == reason, error
    return error


def test_no_308_chunks_answer_200_with_the_override(module_gateway: Server) -> None:
    data = secrets.token_bytes(3 * CHUNK)
    session = start_resumable(module_gateway, "go-client.bin")
    no308 = {"X-GUploader-No-308": "yes"}
    for first in (0, CHUNK):
        status, _, headers = put_with_reason(
            session, data[first:first + CHUNK],
            {**no308, "Content-Range": f"bytes {first}-{first + CHUNK - 1}/{len(data)}"})
        assert status == 200
        assert headers["x-http-status-code-override"] == "308"
        assert headers["range"] == f"bytes=0-{first + CHUNK - 1}"
    # A status query with the header gets the same form; without it, a bare 308 "Resume Incomplete".
    status, _, headers = put_with_reason(session, b"", {**no308, "Content-Range": f"bytes */{len(data)}"})
    assert (status, headers["x-http-status-code-override"], headers["range"]) == (200, "308", f"bytes=0-{2 * CHUNK - 1}")
    status, reason, headers = put_with_reason(session, b"", {"Content-Range": f"bytes */{len(data)}"})
    assert (status, reason, headers["range"]) == (308, "Resume Incomplete", f"bytes=0-{2 * CHUNK - 1}")
    assert "x-http-status-code-override" not in headers
    status, _, headers = put_with_reason(session, data[2 * CHUNK:],
                                         {**no308, "Content-Range": f"bytes {2 * CHUNK}-{len(data) - 1}/{len(data)}"})
    assert status == 200 and "x-http-status-code-override" not in headers
    assert request("GET", f"{api(module_gateway)}/go-client.bin?alt=media").body == data


def test_single_quoted_multipart_boundary_is_accepted(module_gateway: Server) -> None:
    boundary = "===============1234567890=="
    body = (f"--{boundary}\r\nContent-Type: application/json\r\n\r\n"
            + json.dumps({"name": "apitools.txt", "contentType": "text/csv"})
            + f"\r\n--{boundary}\r\nContent-Type: text/csv\r\n\r\na,b\r\n--{boundary}--\r\n").encode()
    resp = request("POST", f"{module_gateway.url}/upload/storage/v1/b/{BUCKET}/o?uploadType=multipart", body,
                   {"Content-Type": f"multipart/related; boundary='{boundary}'"})
    assert resp.status == 200, resp.body
    assert resp.json()["contentType"] == "text/csv"
    assert request("GET", f"{api(module_gateway)}/apitools.txt?alt=media").body == b"a,b"


def test_resumable_upload_alias_and_its_session_urls(module_gateway: Server) -> None:
    session = start_resumable(module_gateway, "gsutil.bin", root="/resumable/upload")
    assert session.startswith(f"{module_gateway.url}/resumable/upload/storage/v1/b/{BUCKET}/o?")
    data = secrets.token_bytes(CHUNK + 5)
    status, _, _ = put_with_reason(session, data[:CHUNK], {"Content-Range": f"bytes 0-{CHUNK - 1}/*"})
    assert status == 308
    status, _, _ = put_with_reason(session, data[CHUNK:], {"Content-Range": f"bytes {CHUNK}-{len(data) - 1}/{len(data)}"})
    assert status == 200
    assert request("GET", f"{api(module_gateway)}/gsutil.bin?alt=media").body == data
    # A path under the alias that no route serves answers in the JSON API's shape.
    assert_json_error(request("GET", f"{module_gateway.url}/resumable/upload/storage/v1/nothing"), 404, "notFound")


@pytest.mark.parametrize("verb", ["copyTo", "rewriteTo"])
def test_copy_and_rewrite_take_a_null_body_as_none(module_gateway: Server, verb: str) -> None:
    source = upload(module_gateway, f"null-src-{verb}", b"copied", "text/x-source")
    resp = request("POST", f"{api(module_gateway)}/null-src-{verb}/{verb}/b/{BUCKET}/o/null-dst-{verb}", b"null",
                   {"Content-Type": "application/json"})
    assert resp.status == 200, resp.body
    copied = resp.json()["resource"] if verb == "rewriteTo" else resp.json()
    assert copied["name"] == f"null-dst-{verb}" and copied["contentType"] == source["contentType"]
    assert request("GET", f"{api(module_gateway)}/null-dst-{verb}?alt=media").body == b"copied"


UNSERVED = [
    ("GET", "/storage/v1/b/test-bucket/o/exists.txt/acl", "Object ACLs"),
    ("POST", "/storage/v1/b/test-bucket/o/exists.txt/acl", "Object ACLs"),
    ("GET", "/storage/v1/b/test-bucket/o/exists.txt/acl/allUsers", "Object ACLs"),
    ("PUT", "/storage/v1/b/test-bucket/o/exists.txt/acl/allUsers", "Object ACLs"),
    ("GET", "/storage/v1/b/test-bucket/acl", "Bucket ACLs"),
    ("GET", "/storage/v1/b/test-bucket/defaultObjectAcl", "Default object ACLs"),
    ("GET", "/storage/v1/b/test-bucket/iam", "IAM"),
    ("GET", "/storage/v1/b/test-bucket/iam/testPermissions?permissions=storage.objects.get", "IAM"),
    ("GET", "/storage/v1/b/test-bucket/notificationConfigs", "notifications"),
    ("GET", "/storage/v1/projects/p/hmacKeys", "HMAC keys"),
    ("POST", "/storage/v1/projects/p/hmacKeys?serviceAccountEmail=a@b", "HMAC keys"),
    ("GET", "/storage/v1/projects/p/serviceAccount", "service accounts"),
]


@pytest.mark.parametrize("method,path,feature", UNSERVED, ids=[f"{m} {p}" for m, p, _ in UNSERVED])
def test_unserved_features_answer_501_naming_them(module_gateway: Server, method: str, path: str,
                                                   feature: str) -> None:
    upload(module_gateway, "exists.txt", b"here")
    body = b"{}" if method in ("POST", "PUT") else None
    error = assert_json_error(request(method, module_gateway.url + path, body, {"Content-Type": "application/json"}),
                              501, "notImplemented")
    assert feature.lower() in error["message"].lower()
    # The object is still there, and an object whose name merely ends in /acl is an object.
    assert request("GET", f"{api(module_gateway)}/exists.txt").status == 200


def test_unmatched_json_api_paths_answer_in_its_error_shape(module_gateway: Server) -> None:
    for path in ("/storage/v1/nothing", "/storage/v1/b/test-bucket/o/a/compose/x", "/download/storage/v1/x"):
        assert_json_error(request("GET", module_gateway.url + path), 404, "notFound")


def test_compose_without_a_content_type_leaves_none(module_gateway: Server) -> None:
    upload(module_gateway, "part-1", b"AAA\n", "text/plain")
    upload(module_gateway, "part-2", b"BBB\n", "text/plain")
    resp = request("POST", f"{api(module_gateway)}/composed/compose",
                   json.dumps({"sourceObjects": [{"name": "part-1"}, {"name": "part-2"}]}).encode(),
                   {"Content-Type": "application/json"})
    assert resp.status == 200, resp.body
    assert "contentType" not in resp.json()
    assert "contentType" not in request("GET", f"{api(module_gateway)}/composed").json()


def test_media_etag_and_bare_entity_tags(module_gateway: Server) -> None:
    resource = upload(module_gateway, "tagged.txt", b"tagged")
    etag = resource["etag"]
    # The JSON API's ETag header is the resource's etag as it reads (Cloud Storage's JSON API sends it bare, and
    # google-cloud-storage compares a download's ETag with the resource's etag): on the resource, the bytes, a 304.
    media = request("GET", f"{api(module_gateway)}/tagged.txt?alt=media")
    assert media.header("ETag") == etag
    assert request("GET", f"{api(module_gateway)}/tagged.txt").header("ETag") == etag
    ranged = request("GET", f"{api(module_gateway)}/tagged.txt?alt=media", headers={"Range": "bytes=0-1"})
    assert ranged.status == 206 and ranged.header("ETag") == etag
    assert request("GET", f"{api(module_gateway)}/tagged.txt?alt=media",
                   headers={"If-None-Match": etag}).header("ETag") == etag
    for url in (f"{api(module_gateway)}/tagged.txt", f"{api(module_gateway)}/tagged.txt?alt=media"):
        # The bare `etag` (as google-cloud-storage's if_etag_match / if_etag_not_match send it) and the quoted one.
        for tag in (etag, f'"{etag}"'):
            assert request("GET", url, headers={"If-None-Match": tag}).status == 304
            assert request("GET", url, headers={"If-Match": tag}).status == 200
        assert request("GET", url, headers={"If-Match": "1/1"}).status == 412
        assert request("GET", url, headers={"If-None-Match": "1/1"}).status == 200


FOLDER_RULES = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /shared/{file=**} {
      allow read, list: if request.auth != null;
    }
  }
}
"""


def test_listing_a_folder_by_its_name_is_judged_as_the_playground_judges_it(tmp_path: Path,
                                                                            servers: list[Server]) -> None:
    hmac_secret = secrets.token_hex(32)
    (tmp_path / "hmac.secret").write_text(hmac_secret)
    admin = secrets.token_urlsafe(24)
    (tmp_path / "admin.key").write_text(admin)
    (tmp_path / "folder.rules").write_text(FOLDER_RULES)
    signing_key_file(tmp_path / "signing.key", "k1")
    server = Server(workdir=tmp_path, name="folder", args=[
        "--bucket", f"{BUCKET}=file:{tmp_path / 'data'}", "--rules", str(tmp_path / "folder.rules"),
        "--signing-key", str(tmp_path / "signing.key"), "--jwt-hmac-secret", str(tmp_path / "hmac.secret"),
        "--admin-key", str(tmp_path / "admin.key")])
    servers.append(server)
    server.start()
    as_admin = {"Authorization": f"Bearer {admin}"}
    for name in ("shared/a.txt", "shared/deep/b.txt", "shared-secret/c.txt", "sharedfile", "top.txt"):
        resp = request("POST", f"{server.url}/upload/storage/v1/b/{BUCKET}/o?uploadType=media&name="
                       + urllib.parse.quote(name, safe=""), b"x", {**as_admin, "Content-Type": "text/plain"})
        assert resp.status == 200, resp.body
    now = int(time.time())
    token = jwt.encode({"sub": "alice", "iat": now, "exp": now + 600}, hmac_secret, algorithm="HS256")
    as_alice = {"Authorization": f"Bearer {token}"}

    def listing(prefix: str) -> tuple[int, dict]:
        resp = request("GET", f"{api(server)}?delimiter=/&prefix={urllib.parse.quote(prefix, safe='')}",
                       headers=as_alice)
        return resp.status, (resp.json() if resp.status == 200 else {})

    def explained(prefix: str) -> dict:
        body = {"method": "list", "bucket": BUCKET, "path": "", "prefix": prefix, "delimiter": "/",
                "auth": {"sub": "alice"}}
        resp = request("POST", f"{server.url}/admin/v1/rules/explain", json.dumps(body).encode(),
                       {**as_admin, "Content-Type": "application/json"})
        assert resp.status == 200, resp.body
        return resp.json()

    # gsutil ls gs://b/shared/ asks for prefix "shared" first: allowed as a listing of the folder it names, and
    # it shows only what lies inside that folder (not "shared-secret/" nor "sharedfile" of the root).
    status, page = listing("shared")
    assert status == 200 and page.get("prefixes") == ["shared/"] and "items" not in page
    assert explained("shared")["allowed"] is True
    assert "'shared'" in explained("shared")["explanation"]
    status, page = listing("shared/")
    assert status == 200 and [i["name"] for i in page["items"]] == ["shared/a.txt"]
    assert page["prefixes"] == ["shared/deep/"]
    # Folders the rules do not open stay closed, and the playground says so for the same request.
    for prefix in ("", "top", "shared-secret", "shared-secret/"):
        assert listing(prefix)[0] == 403, prefix
        assert explained(prefix)["allowed"] is False, prefix


def test_change_events_carry_self_and_media_links(tmp_path: Path, servers: list[Server]) -> None:
    secret = write_secret(tmp_path / "events.secret")
    receiver = Receiver(tmp_path / "receiver", secret=secret).start()
    try:
        server = events_gateway(tmp_path / "gw", [receiver.url], secret=secret)
        servers.append(server)
        server.start()
        resp = request("POST", f"{server.url}/upload/storage/v1/b/{EVENTS_BUCKET}/o?uploadType=media&name=a%20b.txt",
                       b"linked", {"Content-Type": "text/plain"})
        assert resp.status == 200, resp.body
        resource = resp.json()
        data = receiver.wait_for(lambda rs: len(rs) >= 1, what="1 event")[0]["data"]
        assert data["selfLink"] == resource["selfLink"] == f"{server.url}/storage/v1/b/{EVENTS_BUCKET}/o/a%20b.txt"
        assert data["mediaLink"] == resource["mediaLink"]
        assert request("GET", data["mediaLink"]).body == b"linked"
        assert request("GET", data["selfLink"]).json()["name"] == "a b.txt"
        # A move is announced as Cloud Storage announces it: the source deleted, the destination finalized.
        resp = request("POST", f"{server.url}/storage/v1/b/{EVENTS_BUCKET}/o/a%20b.txt/moveTo/o/moved.txt")
        assert resp.status == 200, resp.body
        records = receiver.wait_for(lambda rs: len(rs) >= 3, what="3 events")
        kinds = sorted((r["attributes"]["type"].rsplit(".", 1)[1], r["data"]["name"]) for r in records[1:])
        assert kinds == [("deleted", "a b.txt"), ("finalized", "moved.txt")]
        finalized = next(r["data"] for r in records[1:] if r["data"]["name"] == "moved.txt")
        assert request("GET", finalized["mediaLink"]).body == b"linked"
    finally:
        receiver.stop()


def test_move_renames_within_the_bucket(module_gateway: Server) -> None:
    source = upload(module_gateway, "move/from.txt", b"moving", "text/x-moved")
    src = urllib.parse.quote("move/from.txt", safe="")
    dst = urllib.parse.quote("move/to.txt", safe="")
    # A source condition that fails moves nothing.
    resp = request("POST", f"{api(module_gateway)}/{src}/moveTo/o/{dst}?ifSourceGenerationMatch=1")
    assert_json_error(resp, 412, "conditionNotMet")
    assert request("GET", f"{api(module_gateway)}/{dst}").status == 404
    resp = request("POST", f"{api(module_gateway)}/{src}/moveTo/o/{dst}"
                   f"?ifSourceGenerationMatch={source['generation']}&ifGenerationMatch=0")
    assert resp.status == 200, resp.body
    moved = resp.json()
    assert moved["name"] == "move/to.txt" and moved["contentType"] == "text/x-moved"
    assert request("GET", f"{api(module_gateway)}/{dst}?alt=media").body == b"moving"
    assert_json_error(request("GET", f"{api(module_gateway)}/{src}"), 404, "notFound")
    # Moving an object onto its own name changes nothing.
    resp = request("POST", f"{api(module_gateway)}/{dst}/moveTo/o/{dst}")
    assert resp.status == 200 and resp.json()["generation"] == moved["generation"]
    assert request("GET", f"{api(module_gateway)}/{dst}?alt=media").body == b"moving"
    # Moving a missing object is 404; onto an existing name with ifGenerationMatch=0 is 412.
    assert_json_error(request("POST", f"{api(module_gateway)}/{src}/moveTo/o/{dst}"), 404, "notFound")
    upload(module_gateway, "move/other.txt", b"other")
    resp = request("POST", f"{api(module_gateway)}/{urllib.parse.quote('move/other.txt', safe='')}/moveTo/o/{dst}"
                   "?ifGenerationMatch=0")
    assert_json_error(resp, 412, "conditionNotMet")
    assert request("GET", f"{api(module_gateway)}/{dst}?alt=media").body == b"moving"


MOVE_RULES = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /from/{f} { allow read, delete: if request.auth != null; }
    match /keep/{f} { allow read: if request.auth != null; }
    match /to/{f} { allow read, create: if request.auth != null; }
  }
}
"""


def test_move_needs_read_and_delete_on_the_source_and_create_on_the_destination(tmp_path: Path,
                                                                              servers: list[Server]) -> None:
    hmac_secret = secrets.token_hex(32)
    (tmp_path / "hmac.secret").write_text(hmac_secret)
    (tmp_path / "move.rules").write_text(MOVE_RULES)
    signing_key_file(tmp_path / "signing.key", "k1")
    admin = secrets.token_urlsafe(24)
    (tmp_path / "admin.key").write_text(admin)
    server = Server(workdir=tmp_path, name="move", args=[
        "--bucket", f"{BUCKET}=file:{tmp_path / 'data'}", "--rules", str(tmp_path / "move.rules"),
        "--signing-key", str(tmp_path / "signing.key"), "--jwt-hmac-secret", str(tmp_path / "hmac.secret"),
        "--admin-key", str(tmp_path / "admin.key")])
    servers.append(server)
    server.start()
    for name in ("from/a", "from/c", "keep/b"):
        resp = request("POST", f"{server.url}/upload/storage/v1/b/{BUCKET}/o?uploadType=media&name={name}", b"x",
                       {"Authorization": f"Bearer {admin}", "Content-Type": "text/plain"})
        assert resp.status == 200, resp.body
    now = int(time.time())
    alice = {"Authorization": "Bearer " + jwt.encode({"sub": "alice", "iat": now, "exp": now + 600}, hmac_secret,
                                                     algorithm="HS256")}

    def move(src: str, dst: str):
        return request("POST", f"{api(server)}/{urllib.parse.quote(src, safe='')}/moveTo/o/"
                       f"{urllib.parse.quote(dst, safe='')}", headers=alice)

    def exists(name: str) -> bool:
        return request("GET", f"{api(server)}/{urllib.parse.quote(name, safe='')}", headers=alice).status == 200

    assert_json_error(move("keep/b", "to/b"), 403, "forbidden")  # no delete on the source
    assert exists("keep/b") and not exists("to/b")
    assert_json_error(move("from/c", "keep/c"), 403, "forbidden")  # no create on the destination
    assert exists("from/c") and not exists("keep/c")
    assert move("from/a", "to/a").status == 200
    assert exists("to/a") and not exists("from/a")
    # In a batch, each part is judged for the caller on its own.
    parts = [f"DELETE /storage/v1/b/{BUCKET}/o/keep%2Fb HTTP/1.1", f"DELETE /storage/v1/b/{BUCKET}/o/from%2Fc HTTP/1.1"]
    resp = request("POST", f"{server.url}/batch/storage/v1", batch_body(parts),
                   {**alice, "Content-Type": "multipart/mixed; boundary=b"})
    assert [status for _, status, _ in batch_answers(resp)] == [403, 204]
    assert exists("keep/b") and not exists("from/c")


def batch_body(requests: list[str], boundary: str = "b") -> bytes:
    parts = "".join(f"--{boundary}\r\nContent-Type: application/http\r\nContent-ID: <{n}>\r\n\r\n{r}\r\n\r\n"
                    for n, r in enumerate(requests, 1))
    return (parts + f"--{boundary}--\r\n").encode()


def batch_answers(resp) -> list[tuple[str, int, bytes]]:
    """(Content-ID, status, body) of each part of a multipart/mixed batch answer."""
    assert resp.status == 200, resp.body
    boundary = resp.header("Content-Type").split("boundary=", 1)[1]
    out = []
    for chunk in resp.body.split(f"--{boundary}".encode())[1:-1]:
        mime, http = chunk.removeprefix(b"\r\n").split(b"\r\n\r\n", 1)
        content_id = next(line.split(b":", 1)[1].strip().decode() for line in mime.split(b"\r\n")
                          if line.lower().startswith(b"content-id:"))
        head, body = http.split(b"\r\n\r\n", 1)
        out.append((content_id, int(head.split(b" ")[1]), body.removesuffix(b"\r\n")))
    return out


def test_batch_runs_each_part_and_answers_multipart_mixed(module_gateway: Server) -> None:
    upload(module_gateway, "batch-a", b"a")
    upload(module_gateway, "batch-b", b"b")
    parts = [
        f"DELETE /storage/v1/b/{BUCKET}/o/batch-a HTTP/1.1",
        f"PATCH {module_gateway.url}/storage/v1/b/{BUCKET}/o/batch-b?fields=metadata HTTP/1.1\r\n"
        'Content-Type: application/json\r\nContent-Length: 24\r\n\r\n{"metadata":{"k":"v"}}  ',
        f"DELETE /storage/v1/b/{BUCKET}/o/never-was HTTP/1.1",
        f"GET /v0/b/{BUCKET}/o/batch-b HTTP/1.1",
        f"GET /storage/v1/b/{BUCKET}/o/batch-b?alt=media HTTP/1.1",
        # Other spellings of a media download: percent-encoded, or with a combining mark glued to the next `&`
        # (one Swift `Character`, which a Character-wise split did not split at).
        f"GET /storage/v1/b/{BUCKET}/o/batch-b?alt=%6Dedia HTTP/1.1",
        f"GET /storage/v1/b/{BUCKET}/o/batch-b?%61lt=media HTTP/1.1",
        f"GET /storage/v1/b/{BUCKET}/o/batch-b?alt=media&\u0301x=1 HTTP/1.1",
    ]
    resp = request("POST", f"{module_gateway.url}/batch/storage/v1", batch_body(parts),
                   {"Content-Type": 'multipart/mixed; boundary="b"'})
    answers = batch_answers(resp)
    assert [(cid, status) for cid, status, _ in answers] == [
        ("<response-1>", 204), ("<response-2>", 200), ("<response-3>", 404), ("<response-4>", 400),
        ("<response-5>", 400), ("<response-6>", 400), ("<response-7>", 400), ("<response-8>", 400)]
    assert all(b"must be a JSON API call" in body for _, _, body in answers[4:]), answers[4:]
    assert json.loads(answers[1][2]) == {"metadata": {"k": "v"}}
    assert json.loads(answers[2][2])["error"]["errors"][0]["reason"] == "notFound"
    assert request("GET", f"{api(module_gateway)}/batch-a").status == 404
    assert request("GET", f"{api(module_gateway)}/batch-b").json()["metadata"] == {"k": "v"}
    # Not a batch: 400 in the JSON API's shape; more than 100 parts: 400, nothing run.
    assert_json_error(request("POST", f"{module_gateway.url}/batch/storage/v1", b"{}",
                              {"Content-Type": "application/json"}), 400, "invalid")
    many = [f"DELETE /storage/v1/b/{BUCKET}/o/batch-b HTTP/1.1"] * 101
    assert_json_error(request("POST", f"{module_gateway.url}/batch/storage/v1", batch_body(many),
                              {"Content-Type": "multipart/mixed; boundary=b"}), 400, "invalid")
    assert request("GET", f"{api(module_gateway)}/batch-b").status == 200


def test_storage_class_is_stored_and_changed_by_rewrite(module_gateway: Server) -> None:
    boundary = "sc"
    body = (f"--{boundary}\r\nContent-Type: application/json\r\n\r\n"
            + json.dumps({"name": "classed.txt", "storageClass": "NEARLINE"})
            + f"\r\n--{boundary}\r\nContent-Type: text/plain\r\n\r\ncold\r\n--{boundary}--\r\n").encode()
    resp = request("POST", f"{module_gateway.url}/upload/storage/v1/b/{BUCKET}/o?uploadType=multipart", body,
                   {"Content-Type": f"multipart/related; boundary={boundary}"})
    assert resp.status == 200, resp.body
    assert resp.json()["storageClass"] == "NEARLINE"
    assert request("GET", f"{api(module_gateway)}/classed.txt").json()["storageClass"] == "NEARLINE"
    resp = request("POST", f"{api(module_gateway)}/classed.txt/rewriteTo/b/{BUCKET}/o/colder.txt"
                   "?destinationStorageClass=COLDLINE")
    assert resp.status == 200, resp.body
    assert resp.json()["resource"]["storageClass"] == "COLDLINE"
    assert request("GET", f"{api(module_gateway)}/colder.txt").json()["storageClass"] == "COLDLINE"
    # The destination resource's storageClass does the same (google-cloud-storage's update_storage_class rewrites
    # the object onto itself with it); the query parameter wins over it.
    for query, expected in (("", "NEARLINE"), ("?destinationStorageClass=ARCHIVE", "ARCHIVE")):
        resp = request("POST", f"{api(module_gateway)}/colder.txt/rewriteTo/b/{BUCKET}/o/colder.txt{query}",
                       json.dumps({"storageClass": "NEARLINE"}).encode(), {"Content-Type": "application/json"})
        assert resp.status == 200 and resp.json()["resource"]["storageClass"] == expected, resp.body
        assert request("GET", f"{api(module_gateway)}/colder.txt").json()["storageClass"] == expected
    assert_json_error(request("POST", f"{api(module_gateway)}/colder.txt/rewriteTo/b/{BUCKET}/o/colder.txt",
                              json.dumps({"storageClass": 3}).encode(), {"Content-Type": "application/json"}),
                      400, "invalid")
    resp = request("POST", f"{api(module_gateway)}/colder.txt/rewriteTo/b/{BUCKET}/o/colder.txt",
                   json.dumps({"storageClass": "COLDLINE"}).encode(), {"Content-Type": "application/json"})
    assert resp.status == 200 and resp.json()["resource"]["storageClass"] == "COLDLINE", resp.body
    # A plain copy takes the default class; a move keeps the object's.
    resp = request("POST", f"{api(module_gateway)}/classed.txt/copyTo/b/{BUCKET}/o/copied-class.txt")
    assert resp.json()["storageClass"] == "STANDARD"
    resp = request("POST", f"{api(module_gateway)}/colder.txt/moveTo/o/moved-class.txt")
    assert resp.status == 200 and resp.json()["storageClass"] == "COLDLINE"
    # A resumable upload keeps it across its session; an unknown class is 400.
    resp = request("POST", f"{module_gateway.url}/upload/storage/v1/b/{BUCKET}/o?uploadType=resumable&name=arch.bin",
                   json.dumps({"storageClass": "ARCHIVE"}).encode(), {"Content-Type": "application/json"})
    status, _, _ = put_with_reason(resp.header("Location"), b"abc", {"Content-Range": "bytes 0-2/3"})
    assert status == 200
    assert request("GET", f"{api(module_gateway)}/arch.bin").json()["storageClass"] == "ARCHIVE"
    assert_json_error(request("POST", f"{api(module_gateway)}/classed.txt/rewriteTo/b/{BUCKET}/o/x"
                              "?destinationStorageClass=FROZEN"), 400, "invalid")


def test_custom_time_is_settable_and_only_moves_forward(module_gateway: Server) -> None:
    url = f"{api(module_gateway)}/timed.txt"
    upload(module_gateway, "timed.txt", b"t")
    assert "customTime" not in request("GET", url).json()

    def patch(value) -> object:
        return request("PATCH", url, json.dumps({"customTime": value}).encode(), {"Content-Type": "application/json"})

    resp = patch("2030-01-02T03:04:05.678Z")
    assert resp.status == 200, resp.body
    assert resp.json()["customTime"] == "2030-01-02T03:04:05.678Z"
    assert request("GET", url).json()["customTime"] == "2030-01-02T03:04:05.678Z"
    # Back in time, or away: 400, nothing changed.
    assert_json_error(patch("2029-12-31T00:00:00Z"), 400, "invalid")
    assert_json_error(patch(None), 400, "invalid")
    assert_json_error(patch("yesterday"), 400, "invalid")
    assert request("GET", url).json()["metageneration"] == "2"
    resp = patch("2031-01-01T00:00:00Z")
    assert resp.status == 200 and resp.json()["customTime"] == "2031-01-01T00:00:00.000Z"
    # Finer than milliseconds is given back as set (google-cloud-storage sends datetime's microseconds).
    for value in ("2031-01-01T00:00:00.932208Z", "2031-01-01T00:00:01.000000001Z"):
        resp = patch(value)
        assert resp.status == 200 and resp.json()["customTime"] == value, resp.body
        assert request("GET", url).json()["customTime"] == value
    resp = patch("2031-01-02T00:00:00Z")
    assert resp.status == 200 and resp.json()["customTime"] == "2031-01-02T00:00:00.000Z"
    # A PUT without it keeps it; an upload's resource sets it.
    resp = request("PUT", url, json.dumps({"contentType": "text/x-put"}).encode(), {"Content-Type": "application/json"})
    assert resp.status == 200 and resp.json()["customTime"] == "2031-01-02T00:00:00.000Z"
    boundary = "ct"
    body = (f"--{boundary}\r\nContent-Type: application/json\r\n\r\n"
            + json.dumps({"name": "timed-upload.txt", "customTime": "2024-05-06T07:08:09Z"})
            + f"\r\n--{boundary}\r\nContent-Type: text/plain\r\n\r\nx\r\n--{boundary}--\r\n").encode()
    resp = request("POST", f"{module_gateway.url}/upload/storage/v1/b/{BUCKET}/o?uploadType=multipart", body,
                   {"Content-Type": f"multipart/related; boundary={boundary}"})
    assert resp.status == 200 and resp.json()["customTime"] == "2024-05-06T07:08:09.000Z"
