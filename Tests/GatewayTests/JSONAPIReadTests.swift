import Foundation
import HTTPServer
import PortcullisCore
import Rules
import Storage
import Testing

@testable import Gateway
@testable import Service

/// The JSON API's object resource and reads (`alt=json`, `alt=media`, `/download/…`), in-process.
@Suite struct JSONAPIReadTests {
    @Test func objectResourceIsRenderedAsGCSDoes() async throws {
        let h = try JSONHarness()
        var attributes = ObjectAttributes(
            contentType: "text/plain", cacheControl: "no-cache",
            customMetadata: ["k": "v"])
        attributes.downloadTokens = ["t1", "t2"]
        let meta = try await h.put("a/b c.txt", Array("hello world".utf8), attributes: attributes)
        let r = try await h.send("GET", JSONHarness.objectPath("a/b c.txt"))
        #expect(r.status == 200)
        #expect(r["Content-Type"] == "application/json; charset=UTF-8")
        let o = try #require(r.json)
        #expect(o["kind"]?.stringValue == "storage#object")
        #expect(o["id"]?.stringValue == "default-bucket/a/b c.txt/\(meta.generation)")
        #expect(o["selfLink"]?.stringValue == "http://gateway.test/storage/v1/b/default-bucket/o/a%2Fb%20c.txt")
        #expect(
            o["mediaLink"]?.stringValue
                == "http://gateway.test/download/storage/v1/b/default-bucket/o/a%2Fb%20c.txt?generation=\(meta.generation)&alt=media"
        )
        #expect(o["name"]?.stringValue == "a/b c.txt" && o["bucket"]?.stringValue == "default-bucket")
        #expect(o["generation"]?.stringValue == String(meta.generation))
        #expect(o["metageneration"]?.stringValue == "1" && o["size"]?.stringValue == "11")
        #expect(o["md5Hash"]?.stringValue == "XrY7u+Ae7tCTyyK7j1rNww==" && o["crc32c"]?.stringValue == "yZRlqg==")
        #expect(o["storageClass"]?.stringValue == "STANDARD" && o["cacheControl"]?.stringValue == "no-cache")
        #expect(o["metadata"]?["k"]?.stringValue == "v")
        #expect(o["metadata"]?["firebaseStorageDownloadTokens"]?.stringValue == "t1,t2")
        let created = try #require(o["timeCreated"]?.stringValue)
        #expect(created.count == 24 && created.hasSuffix("Z"), "RFC 3339 with milliseconds: \(created)")
        #expect(o["contentEncoding"] == nil, "absent fields are left out")
    }

    @Test func fieldsSelectTopLevelMembers() async throws {
        let h = try JSONHarness()
        try await h.put("x", [1, 2, 3])
        let r = try await h.send(
            "GET", JSONHarness.objectPath("x") + "?fields=name,size&prettyPrint=false&projection=noAcl")
        #expect(r.status == 200)
        #expect(r.json == .object(["name": .string("x"), "size": .string("3")]))
        let list = try await h.send("GET", "/storage/v1/b/default-bucket/o?fields=items(name),nextPageToken")
        #expect(list.json == .object(["items": .array([.object(["name": .string("x")])])]))
    }

    /// gsutil rsync lists with `fields=items/name,…,items/metadata/goog-reserved-file-mtime,nextPageToken`: a
    /// member path may name a key inside `metadata` (which holds `-` and `.`), and selects that key only.
    @Test func fieldsSelectKeysInsideMetadata() async throws {
        let h = try JSONHarness()
        try await h.put(
            "m",
            [1],
            attributes: ObjectAttributes(
                contentType: "text/plain",
                customMetadata: ["goog-reserved-file-mtime": "1700000000", "other.key": "x", "third": "y"]))
        let list = try await h.send(
            "GET",
            "/storage/v1/b/default-bucket/o?fields=items/name,items/metadata/goog-reserved-file-mtime,nextPageToken")
        #expect(list.status == 200)
        #expect(
            list.json
                == .object([
                    "items": .array([
                        .object([
                            "name": .string("m"),
                            "metadata": .object(["goog-reserved-file-mtime": .string("1700000000")]),
                        ])
                    ])
                ]))
        let one = try await h.send("GET", JSONHarness.objectPath("m") + "?fields=metadata(other.key,third)")
        #expect(one.json == .object(["metadata": .object(["other.key": .string("x"), "third": .string("y")])]))
        let whole = try await h.send("GET", JSONHarness.objectPath("m") + "?fields=metadata")
        #expect(whole.json?["metadata"]?["third"]?.stringValue == "y")
        let bad = try await h.send("GET", JSONHarness.objectPath("m") + "?fields=metadata/a%3Bb")
        #expect(bad.status == 400)
    }

    @Test func generationSelectsTheLiveGenerationOnly() async throws {
        let h = try JSONHarness()
        let meta = try await h.put("g", [1])
        #expect(try await h.send("GET", JSONHarness.objectPath("g") + "?generation=\(meta.generation)").status == 200)
        #expect(
            try await h.send("GET", JSONHarness.objectPath("g") + "?generation=\(meta.generation - 1)").status == 404)
        let notModified = try await h.send(
            "GET", JSONHarness.objectPath("g") + "?ifGenerationNotMatch=\(meta.generation)")
        #expect(notModified.status == 304)
        let failed = try await h.send("GET", JSONHarness.objectPath("g") + "?ifGenerationMatch=1")
        #expect(failed.status == 412 && failed.reason == "conditionNotMet")
    }

    @Test func mediaReadsWithRangesAndGCSHeaders() async throws {
        let h = try JSONHarness()
        let meta = try await h.put("m.bin", Array("0123456789".utf8))
        for target in [
            JSONHarness.objectPath("m.bin") + "?alt=media",
            "/download/storage/v1/b/default-bucket/o/m.bin?alt=media&generation=\(meta.generation)",
        ] {
            let whole = try await h.send("GET", target)
            #expect(whole.status == 200 && whole.text == "0123456789")
            #expect(whole["X-Goog-Generation"] == String(meta.generation))
            #expect(whole["X-Goog-Metageneration"] == "1")
            #expect(whole["X-Goog-Hash"] == "crc32c=\(meta.crc32c!),md5=\(meta.md5Hash!)")
            #expect(whole["X-Goog-Stored-Content-Length"] == "10")
            #expect(whole["X-Goog-Stored-Content-Encoding"] == "identity")
            let part = try await h.send("GET", target, headers: [("Range", "bytes=2-4")])
            #expect(part.status == 206 && part.text == "234" && part["Content-Range"] == "bytes 2-4/10")
        }
        let unsatisfiable = try await h.send(
            "GET", JSONHarness.objectPath("m.bin") + "?alt=media",
            headers: [("Range", "bytes=50-")])
        #expect(unsatisfiable.status == 416 && unsatisfiable.reason == "requestedRangeNotSatisfiable")
    }

    @Test func missingObjectIsNotFoundInGCSShape() async throws {
        let h = try JSONHarness()
        let r = try await h.send("GET", JSONHarness.objectPath("nope"))
        #expect(r.status == 404)
        #expect(r.reason == "notFound")
        #expect(r.json?["error"]?["code"]?.int64Value == 404)
        #expect(r.json?["error"]?["errors"]?.arrayValue?.first?["domain"]?.stringValue == "global")
        // Cloud Storage's words, not Firebase's.
        #expect(r.json?["error"]?["message"]?.stringValue == "No such object: default-bucket/nope")
        #expect(
            r.json?["error"]?["errors"]?.arrayValue?.first?["message"]?.stringValue
                == "No such object: default-bucket/nope")
    }

    @Test func authorizationComesBeforeExistence() async throws {
        let h = try JSONHarness(rules: DenyAllRules())
        let missing = try await h.send("GET", JSONHarness.objectPath("nope"), principal: alice)
        #expect(missing.status == 403 && missing.reason == "forbidden")
        #expect(
            missing.json?["error"]?["message"]?.stringValue
                == "The caller does not have storage.objects.get access to the Google Cloud Storage object.")
        let list = try await h.send("GET", "/storage/v1/b/default-bucket/o", principal: alice)
        #expect(
            list.json?["error"]?["message"]?.stringValue
                == "The caller does not have storage.objects.list access to the Google Cloud Storage bucket.")
        let bucket = try await h.send("GET", "/storage/v1/b/other-bucket/o/x", principal: alice)
        #expect(bucket.status == 404)
    }
}
