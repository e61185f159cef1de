import HTTPServer
import PortcullisCore
import Rules
import Storage
import Testing

@testable import Gateway
@testable import Service

@Suite struct V0ReadTests {
    @Test func metadataHasTheExactWireShape() async throws {
        let h = try V0Harness()
        let uploaded = try await h.put("notes/hello.txt", Array("hello world".utf8))
        let r = try await h.send("GET", V0Harness.objectPath("notes/hello.txt"))
        #expect(r.status == 200)
        #expect(r["Content-Type"] == "application/json; charset=utf-8")
        let m = try #require(r.json)
        #expect(m["name"] == .string("notes/hello.txt"))
        #expect(m["bucket"] == .string(V0Harness.bucket))
        #expect(m["size"] == .string("11"))
        #expect(m["metageneration"] == .string("1"))
        #expect(m["md5Hash"] == .string("XrY7u+Ae7tCTyyK7j1rNww=="))
        #expect(m["crc32c"] == .string("yZRlqg=="))
        #expect(m["contentType"] == .string("text/plain"))
        #expect(m["contentEncoding"] == .string("identity"))
        #expect(m["contentDisposition"] == .string("inline"))
        #expect(m["storageClass"] == .string("STANDARD"))
        #expect(m["metadata"] == nil)
        #expect(m["etag"]?.stringValue != nil)
        let generation = try #require(m["generation"]?.stringValue)
        #expect(Int64(generation) != nil)
        for key in ["timeCreated", "updated"] {
            let text = try #require(m[key]?.stringValue)
            #expect(text.count == 24 && text.hasSuffix("Z") && Array(text)[19] == ".", "\(key)=\(text)")
        }
        let tokens = try #require(m["downloadTokens"]?.stringValue)
        #expect(tokens.count == 36)
        #expect(uploaded["downloadTokens"] == m["downloadTokens"])
        #expect(r["ETag"] == "\"\(generation)/1\"")
    }

    @Test func downloadServesBytesWithHeaders() async throws {
        let h = try V0Harness()
        let data = randomBytes(100_000)
        try await h.put("dir/photo 1.png", data, contentType: "image/png")
        let r = try await h.send("GET", V0Harness.objectPath("dir/photo 1.png") + "?alt=media")
        #expect(r.status == 200)
        #expect(r.body == data)
        #expect(r["Content-Type"] == "image/png")
        #expect(r["Accept-Ranges"] == "bytes")
        #expect(r["Content-Disposition"] == "inline; filename*=UTF-8''photo%201.png")
        #expect(r["ETag"]?.hasPrefix("\"") == true)
        #expect(r["x-goog-hash"]?.contains("md5=") == true)
        #expect(r["x-goog-hash"]?.contains("crc32c=") == true)
        #expect(r["x-goog-generation"] != nil)
        #expect(r["x-goog-metageneration"] == "1")
        #expect(r["Last-Modified"]?.hasSuffix("GMT") == true)
    }

    @Test(arguments: [
        ("bytes=0-9", 206, "bytes 0-9/100", 0, 10),
        ("bytes=90-", 206, "bytes 90-99/100", 90, 10),
        ("bytes=-5", 206, "bytes 95-99/100", 95, 5),
        ("bytes=50-1000", 206, "bytes 50-99/100", 50, 50),
    ])
    func rangeRequests(range: String, status: Int, contentRange: String, offset: Int, length: Int) async throws {
        let h = try V0Harness()
        let data = randomBytes(100)
        try await h.put("r.bin", data)
        let r = try await h.send("GET", V0Harness.objectPath("r.bin") + "?alt=media", headers: [("Range", range)])
        #expect(r.status == status)
        #expect(r["Content-Range"] == contentRange)
        #expect(r.body == Array(data[offset..<(offset + length)]))
    }

    @Test func unsatisfiableRangeIs416WithSize() async throws {
        let h = try V0Harness()
        try await h.put("r.bin", randomBytes(100))
        let r = try await h.send(
            "GET", V0Harness.objectPath("r.bin") + "?alt=media", headers: [("Range", "bytes=100-")])
        #expect(r.status == 416)
        #expect(r["Content-Range"] == "bytes */100")
        #expect(r.json?["error"]?["code"] == .int(416))
    }

    @Test func zeroToNOnAnEmptyObjectIsTheWholeObject() async throws {
        let h = try V0Harness()
        try await h.put("empty", [])
        let r = try await h.send(
            "GET", V0Harness.objectPath("empty") + "?alt=media", headers: [("Range", "bytes=0-100")])
        #expect(r.status == 200)
        #expect(r.body.isEmpty)
    }

    @Test func malformedRangeServesWholeObject() async throws {
        let h = try V0Harness()
        let data = randomBytes(20)
        try await h.put("r.bin", data)
        let r = try await h.send(
            "GET", V0Harness.objectPath("r.bin") + "?alt=media", headers: [("Range", "bytes=5-1,7-9")])
        #expect(r.status == 200)
        #expect(r.body == data)
    }

    @Test func conditionalRequests() async throws {
        let h = try V0Harness()
        try await h.put("c.txt", Array("abc".utf8))
        let first = try await h.send("GET", V0Harness.objectPath("c.txt") + "?alt=media")
        let etag = try #require(first["ETag"])
        let lastModified = try #require(first["Last-Modified"])
        let path = V0Harness.objectPath("c.txt") + "?alt=media"

        #expect(try await h.send("GET", path, headers: [("If-None-Match", etag)]).status == 304)
        #expect(try await h.send("GET", path, headers: [("If-None-Match", "W/\(etag)")]).status == 304)
        #expect(try await h.send("GET", path, headers: [("If-None-Match", "\"other\"")]).status == 200)
        #expect(try await h.send("GET", path, headers: [("If-Modified-Since", lastModified)]).status == 304)
        #expect(
            try await h.send("GET", path, headers: [("If-Modified-Since", "Sat, 01 Jan 2000 00:00:00 GMT")]).status
                == 200)
        #expect(try await h.send("GET", path, headers: [("If-Match", "\"nope\"")]).status == 412)
        #expect(try await h.send("GET", path, headers: [("If-Match", etag)]).status == 200)
        #expect(try await h.send("GET", path + "&ifGenerationMatch=1").status == 412)
        #expect(try await h.send("GET", path + "&ifMetagenerationMatch=1").status == 200)
        #expect(try await h.send("GET", path + "&ifMetagenerationMatch=7").status == 412)

        // If-Range: a matching validator honours Range, a stale one serves the whole object.
        let partial = try await h.send("GET", path, headers: [("Range", "bytes=1-"), ("If-Range", etag)])
        #expect(partial.status == 206)
        #expect(partial.text == "bc")
        let whole = try await h.send("GET", path, headers: [("Range", "bytes=1-"), ("If-Range", "\"stale\"")])
        #expect(whole.status == 200)
        #expect(whole.text == "abc")
        let byDate = try await h.send("GET", path, headers: [("Range", "bytes=2-"), ("If-Range", lastModified)])
        #expect(byDate.status == 206)
    }

    @Test func headHasHeadersButNoBody() async throws {
        let h = try V0Harness()
        try await h.put("h.txt", Array("12345".utf8))
        let r = try await h.send("HEAD", V0Harness.objectPath("h.txt") + "?alt=media")
        #expect(r.status == 200)
        #expect(r.body.isEmpty)
        #expect(r["Content-Length"] == "5")
        let ranged = try await h.send(
            "HEAD", V0Harness.objectPath("h.txt") + "?alt=media", headers: [("Range", "bytes=1-2")])
        #expect(ranged.status == 206)
        #expect(ranged["Content-Length"] == "2")
        let missing = try await h.send("HEAD", V0Harness.objectPath("nope") + "?alt=media")
        #expect(missing.status == 404)
        #expect(missing.body.isEmpty)
    }

    @Test func missingObjectIs404JSON() async throws {
        let h = try V0Harness()
        let r = try await h.send("GET", V0Harness.objectPath("absent"))
        #expect(r.status == 404)
        #expect(r.json?["error"]?["code"] == .int(404))
        #expect(r.json?["error"]?["message"]?.stringValue != nil)
    }

    @Test func objectNamesAreDecodedExactlyOnce() async throws {
        let h = try V0Harness()
        // A literal `%41` in a name must stay `%41` (the emulator's double decoding turns it into `A`).
        try await h.put("weird/%41 + ü", Array("x".utf8))
        let r = try await h.send("GET", "/v0/b/\(V0Harness.bucket)/o/weird%2F%2541%20+%20%C3%BC")
        #expect(r.status == 200)
        #expect(r.json?["name"] == .string("weird/%41 + ü"))
        // Raw slashes after /o/ are accepted too.
        let raw = try await h.send("GET", "/v0/b/\(V0Harness.bucket)/o/weird/%2541%20+%20%C3%BC")
        #expect(raw.status == 200)
    }
}

@Suite struct V0ContextTests {
    @Test func downloadsAreFileRegionsAndTheContextIsFilled() async throws {
        let h = try V0Harness()
        try await h.put("ctx/a.bin", randomBytes(1000))
        let record = AccessRecord(requestID: "ctx")
        let request = HTTPRequest(
            method: .get, target: "/v0/b/default-bucket/o/ctx%2Fa.bin?alt=media",
            headers: ["Range": "bytes=10-19"])
        let response = await h.api.handle(request, principal: nil, record: record)
        #expect(response.status == 206)
        guard case .file(let region) = response.body else {
            Issue.record("expected a sendfile region, got \(response.body)")
            return
        }
        #expect(region.offset == 10 && region.length == 10)
        #expect(record.routeTemplate == V0Router.objectTemplate)
        #expect(record.bucket == "default-bucket")
        #expect(record.objectName == "ctx/a.bin")
        #expect(record.decision == .allow)
        #expect(record.range == "10-19")

        let list = AccessRecord(requestID: "l")
        _ = await h.api.handle(
            HTTPRequest(method: .get, target: "/v0/b/default-bucket/o?prefix=ctx%2F"),
            principal: nil, record: list)
        #expect(list.routeTemplate == V0Router.collectionTemplate)
        let unknown = AccessRecord(requestID: "u")
        let r = await h.api.handle(HTTPRequest(method: .get, target: "/v0/nothing"), principal: nil, record: unknown)
        #expect(r.status == 404)
        #expect(unknown.routeTemplate == "/v0/unmatched")
        #expect(h.api.answers(HTTPRequest(method: .get, target: "/v0/b/x/o")))
        #expect(!h.api.answers(HTTPRequest(method: .get, target: "/v01/b")))
    }
}

@Suite struct V0NotMatchConditionTests {
    @Test func notMatchPreconditionsAre304OnReadsAnd412OnWrites() async throws {
        let h = try V0Harness()
        let meta = try await h.put("nm.txt", Array("x".utf8))
        let generation = try #require(meta["generation"]?.stringValue)
        let path = V0Harness.objectPath("nm.txt")
        // Reads: a failed …NotMatch is 304 (as GCS answers), a met one serves.
        #expect(try await h.send("GET", path + "?ifGenerationNotMatch=\(generation)").status == 304)
        #expect(try await h.send("GET", path + "?alt=media&ifGenerationNotMatch=\(generation)").status == 304)
        #expect(try await h.send("GET", path + "?ifMetagenerationNotMatch=1").status == 304)
        #expect(try await h.send("GET", path + "?alt=media&ifGenerationNotMatch=1").status == 200)
        #expect(try await h.send("GET", path + "?ifMetagenerationNotMatch=7").status == 200)
        // Writes: 412, and nothing changes.
        let patch = try await h.send(
            "PATCH", path + "?ifGenerationNotMatch=\(generation)",
            body: Array(#"{"contentType":"a/b"}"#.utf8))
        #expect(patch.status == 412)
        #expect(try await h.send("DELETE", path + "?ifMetagenerationNotMatch=1").status == 412)
        let upload = try await h.send(
            "POST", "/v0/b/default-bucket/o?name=nm.txt&ifGenerationNotMatch=\(generation)",
            headers: [("Content-Type", "text/plain")], body: Array("y".utf8))
        #expect(upload.status == 412)
        let after = try await h.send("GET", path)
        #expect(after.json?["generation"]?.stringValue == generation)
        #expect(after.json?["contentType"] == .string("text/plain"))
        // …NotMatch=0 means "must exist": a new name fails it.
        #expect(
            try await h.send(
                "POST", "/v0/b/default-bucket/o?name=new.txt&ifGenerationNotMatch=0",
                body: Array("y".utf8)
            ).status == 412)
        #expect(try await h.send("GET", V0Harness.objectPath("new.txt")).status == 404)
        #expect(try await h.send("GET", path + "?ifGenerationNotMatch=x").status == 400)
    }

    @Test(arguments: [
        "name", "alt", "upload_id", "pageToken", "maxResults", "prefix", "delimiter", "token",
        "signature", "ifGenerationMatch", "ifMetagenerationNotMatch",
    ])
    func repeatedSingleValuedParametersAre400(_ name: String) async throws {
        let h = try V0Harness()
        try await h.put("dup.txt", Array("x".utf8))
        let target =
            name == "name" || name == "upload_id"
            ? "/v0/b/default-bucket/o?\(name)=a&\(name)=b"
            : V0Harness.objectPath("dup.txt") + "?\(name)=1&\(name)=2"
        let r = try await h.send(name == "name" ? "POST" : "GET", target, body: [1])
        #expect(r.status == 400)
        #expect(r.json?["error"]?["message"]?.stringValue?.contains(name) == true)
    }
}

@Suite struct V0TranscodingTests {
    /// "hello, gzip" as Python's `gzip.compress(mtime=0)` writes it.
    static let gz: [UInt8] = [
        31, 139, 8, 0, 0, 0, 0, 0, 2, 3, 203, 72, 205, 201, 201, 215, 81, 72, 175, 202, 44, 0, 0, 74, 155, 177, 92,
        11, 0, 0, 0,
    ]

    @Test func gzipObjectsAreDecompressedUnlessTheClientAcceptsGzip() async throws {
        let h = try V0Harness()
        let boundary = "b0undary"
        let body =
            Array(
                "--\(boundary)\r\nContent-Type: application/json\r\n\r\n{\"contentEncoding\":\"gzip\"}\r\n--\(boundary)\r\nContent-Type: text/plain\r\n\r\n"
                    .utf8)
            + Self.gz + Array("\r\n--\(boundary)--".utf8)
        let up = try await h.send(
            "POST", "/v0/b/default-bucket/o?name=g.txt",
            headers: [("Content-Type", "multipart/related; boundary=\(boundary)")], body: body)
        #expect(up.status == 200)
        let plain = try await h.send("GET", V0Harness.objectPath("g.txt") + "?alt=media")
        #expect(plain.text == "hello, gzip")
        #expect(plain["Content-Encoding"] == nil && plain["Content-Length"] == nil)
        #expect(plain["X-Goog-Stored-Content-Encoding"] == "gzip")
        let stored = try await h.send(
            "GET", V0Harness.objectPath("g.txt") + "?alt=media",
            headers: [("Accept-Encoding", "br, gzip;q=0.5")])
        #expect(stored.body == Self.gz && stored["Content-Encoding"] == "gzip")
        let refused = try await h.send(
            "GET", V0Harness.objectPath("g.txt") + "?alt=media",
            headers: [("Accept-Encoding", "gzip;q=0, identity")])
        #expect(refused.text == "hello, gzip")
    }

    @Test(arguments: [
        ("gzip", true), ("x-gzip;q=1", true), ("*", true), ("gzip;q=0", false), ("deflate, br", false),
        ("", false), ("GZIP", true),
    ])
    func acceptEncoding(_ header: String, _ accepted: Bool) {
        #expect(AcceptEncoding.acceptsGzip(header) == accepted)
    }
}
