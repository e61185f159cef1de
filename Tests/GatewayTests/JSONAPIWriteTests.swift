import Foundation
import HTTPServer
import PortcullisCore
import Rules
import Storage
import Testing

@testable import Gateway
@testable import Service

/// The JSON API's writes in-process: uploads (media, multipart, resumable), patch, update, delete, copy,
/// rewrite, compose — and objects crossing between the two surfaces.
@Suite struct JSONAPIWriteTests {
    static let upload = "/upload/storage/v1/b/default-bucket/o"

    @Test func mediaUploadAndMultipartUpload() async throws {
        let h = try JSONHarness()
        let media = try await h.send(
            "POST", Self.upload + "?uploadType=media&name=a%2Fb.txt&ifGenerationMatch=0",
            headers: [("Content-Type", "text/plain")], body: Array("hello".utf8))
        #expect(media.status == 200, "\(media.text)")
        #expect(media.json?["name"]?.stringValue == "a/b.txt" && media.json?["size"]?.stringValue == "5")
        #expect(media.json?["contentType"]?.stringValue == "text/plain")
        #expect(media.json?["metadata"] == nil, "no download token minted on the JSON API")
        let again = try await h.send(
            "POST", Self.upload + "?uploadType=media&name=a%2Fb.txt&ifGenerationMatch=0",
            body: [1])
        #expect(again.status == 412 && again.reason == "conditionNotMet")
        #expect(try await h.send("POST", Self.upload + "?uploadType=media", body: [1]).status == 400)

        let body =
            "--B\r\nContent-Type: application/json\r\n\r\n{\"name\":\"m.bin\",\"metadata\":{\"k\":\"v\"}}\r\n--B\r\n"
            + "Content-Type: image/png\r\n\r\nPNGDATA\r\n--B--"
        let multi = try await h.send(
            "POST", Self.upload + "?uploadType=multipart",
            headers: [("Content-Type", "multipart/related; boundary=B")], body: Array(body.utf8))
        #expect(multi.status == 200, "\(multi.text)")
        #expect(multi.json?["contentType"]?.stringValue == "image/png" && multi.json?["size"]?.stringValue == "7")
        #expect(multi.json?["metadata"]?["k"]?.stringValue == "v")
        let bytes = try await h.send("GET", JSONHarness.objectPath("m.bin") + "?alt=media")
        #expect(bytes.text == "PNGDATA")
    }

    /// gcsfs writes its multipart body with bare LF line ends, which GCS accepts.
    @Test func multipartWithBareLineFeeds() async throws {
        let h = try JSONHarness()
        let body =
            "--==0==\nContent-Type: application/json; charset=UTF-8\n\n{\"name\": \"lf.txt\"}\n--==0==\n"
            + "Content-Type: text/plain\n\nline one\r\nline two\n--==0==--"
        let r = try await h.send(
            "POST", Self.upload + "?uploadType=multipart",
            headers: [("Content-Type", #"multipart/related; boundary="==0==""#)], body: Array(body.utf8))
        #expect(r.status == 200, "\(r.text)")
        #expect(try await h.send("GET", JSONHarness.objectPath("lf.txt") + "?alt=media").text == "line one\r\nline two")
    }

    @Test func resumableSessionInChunksWithStatusQueriesAndResync() async throws {
        let h = try JSONHarness()
        let data = randomBytes(600_000)
        let start = try await h.send(
            "POST", Self.upload + "?uploadType=resumable",
            headers: [("Content-Type", "application/json"), ("X-Upload-Content-Type", "video/mp4")],
            body: Array(#"{"name":"big/video.mp4"}"#.utf8))
        #expect(start.status == 200)
        let location = try #require(start["Location"])
        #expect(
            location.hasPrefix(
                "http://gateway.test/upload/storage/v1/b/default-bucket/o?uploadType=resumable&name=big%2Fvideo.mp4&upload_id="
            ))
        let session = String(location.dropFirst("http://gateway.test".count))
        // Any instance continues the session (and needs no credentials).
        let first = try await h.send(
            "PUT", session, headers: [("Content-Range", "bytes 0-262143/*")],
            body: Array(data[0..<262_144]), principal: nil)
        #expect(first.status == 308 && first["Range"] == "bytes=0-262143")
        let query = try await h.send("PUT", session, headers: [("Content-Range", "bytes */*")], principal: nil)
        #expect(query.status == 308 && query["Range"] == "bytes=0-262143")
        // A chunk at the wrong offset stores nothing and tells where the upload stands.
        let wrong = try await h.send(
            "PUT", session, headers: [("Content-Range", "bytes 300000-300009/*")],
            body: Array(data[300_000..<300_010]), principal: nil)
        #expect(wrong.status == 308 && wrong["Range"] == "bytes=0-262143")
        let last = try await h.send(
            "PUT", session, headers: [("Content-Range", "bytes 262144-599999/600000")],
            body: Array(data[262_144...]), principal: nil)
        #expect(last.status == 200, "\(last.text)")
        #expect(last.json?["size"]?.stringValue == "600000" && last.json?["contentType"]?.stringValue == "video/mp4")
        let done = try await h.send("PUT", session, headers: [("Content-Range", "bytes */600000")], principal: nil)
        #expect(done.status == 200 && done.json?["name"]?.stringValue == "big/video.mp4")
        #expect(try await h.send("GET", JSONHarness.objectPath("big/video.mp4") + "?alt=media").body == data)
    }

    /// The session id is the service's sealed ticket: another instance (its own service over the same storage
    /// and signing key) continues and finishes the session.
    @Test func anotherInstanceContinuesASession() async throws {
        let h = try JSONHarness()
        let otherService = StorageService(
            configuration: h.v0.service.configuration,
            backends: [JSONHarness.bucket: h.v0.backend], sealer: h.v0.sealer,
            rules: RulesStore(fixed: AllowAllRules()), metrics: MetricsRegistry(),
            logger: .disabled)
        let other = JSONAPI(
            service: otherService, configuration: JSONAPIConfiguration(publicURL: "http://gateway.test"),
            logger: .disabled)
        let start = try await h.send(
            "POST", Self.upload + "?uploadType=resumable&name=moved",
            headers: [("X-Upload-Content-Length", "6")])
        let session = String(try #require(start["Location"]).dropFirst("http://gateway.test".count))
        #expect(
            try await h.send("PUT", session, headers: [("Content-Range", "bytes 0-2/6")], body: Array("abc".utf8))
                .status == 308)
        let last = try await respond(
            through: [other], cors: h.v0.cors, "PUT", session,
            headers: [("Content-Range", "bytes 3-5/6")], body: Array("def".utf8), stream: nil,
            principal: nil, record: AccessRecord(requestID: "other"))
        #expect(last.status == 200 && last.json?["size"]?.stringValue == "6")
        #expect(try await h.send("GET", JSONHarness.objectPath("moved") + "?alt=media").text == "abcdef")
    }

    @Test func resumableEmptyObjectAndCancel() async throws {
        let h = try JSONHarness()
        func start(_ name: String) async throws -> String {
            let r = try await h.send("POST", Self.upload + "?uploadType=resumable&name=\(name)")
            return String(try #require(r["Location"]).dropFirst("http://gateway.test".count))
        }
        let empty = try await h.send("PUT", try await start("empty"), headers: [("Content-Range", "bytes */0")])
        #expect(empty.status == 200 && empty.json?["size"]?.stringValue == "0")
        let session = try await start("cancelled")
        #expect(
            try await h.send(
                "PUT", session, headers: [("Content-Range", "bytes 0-9/*")], body: Array(repeating: 1, count: 10)
            ).status == 308)
        #expect(try await h.send("DELETE", session).status == 499)
        #expect(try await h.send("GET", JSONHarness.objectPath("cancelled")).status == 404)
    }

    @Test func patchMergesAndNullClearsAndPutReplaces() async throws {
        let h = try JSONHarness()
        var attributes = ObjectAttributes(
            contentType: "text/plain", cacheControl: "no-cache",
            customMetadata: ["a": "1", "b": "2"])
        attributes.downloadTokens = ["tok"]
        try await h.put("p", [1], attributes: attributes)
        let patched = try await h.send(
            "PATCH", JSONHarness.objectPath("p"),
            body: Array(#"{"cacheControl":null,"metadata":{"a":null,"c":"3"}}"#.utf8))
        #expect(patched.status == 200)
        let o = try #require(patched.json)
        #expect(o["cacheControl"] == nil && o["contentType"]?.stringValue == "text/plain")
        #expect(
            o["metadata"]
                == .object([
                    "b": .string("2"), "c": .string("3"),
                    "firebaseStorageDownloadTokens": .string("tok"),
                ]))
        #expect(o["metageneration"]?.stringValue == "2")
        let replaced = try await h.send(
            "PUT", JSONHarness.objectPath("p"),
            body: Array(#"{"contentType":"application/json","metadata":{"z":"9"}}"#.utf8))
        #expect(
            replaced.json?["metadata"] == .object(["z": .string("9"), "firebaseStorageDownloadTokens": .string("tok")]))
        #expect(replaced.json?["contentType"]?.stringValue == "application/json")
        let revoked = try await h.send(
            "PATCH", JSONHarness.objectPath("p"),
            body: Array(#"{"metadata":{"firebaseStorageDownloadTokens":null}}"#.utf8))
        #expect(revoked.json?["metadata"] == .object(["z": .string("9")]))
        let stale = try await h.send(
            "PATCH", JSONHarness.objectPath("p") + "?ifMetagenerationMatch=1", body: Array("{}".utf8))
        #expect(stale.status == 412)
    }

    /// PUT and PATCH with a body that is JSON but not an object: 400, and the object is as it was.
    @Test(arguments: ["PUT", "PATCH"], ["null", "[]", "\"x\"", "42", "true"])
    func resourceBodyThatIsNotAnObjectIs400AndChangesNothing(_ method: String, _ body: String) async throws {
        let h = try JSONHarness()
        try await h.put(
            "p", [1], attributes: ObjectAttributes(contentType: "text/plain", customMetadata: ["a": "1"]))
        let r = try await h.send(method, JSONHarness.objectPath("p"), body: Array(body.utf8))
        #expect(r.status == 400)
        #expect(r.json?["error"]?["code"]?.int64Value == 400)
        let o = try #require(try await h.send("GET", JSONHarness.objectPath("p")).json)
        #expect(o["metageneration"]?.stringValue == "1" && o["contentType"]?.stringValue == "text/plain")
        #expect(o["metadata"] == .object(["a": .string("1")]))
    }

    @Test func deleteIs204AndHonoursPreconditions() async throws {
        let h = try JSONHarness()
        let meta = try await h.put("d", [1])
        #expect(
            try await h.send("DELETE", JSONHarness.objectPath("d") + "?ifGenerationMatch=\(meta.generation + 1)").status
                == 412)
        #expect(
            try await h.send("DELETE", JSONHarness.objectPath("d") + "?generation=\(meta.generation + 1)").status == 404
        )
        let deleted = try await h.send("DELETE", JSONHarness.objectPath("d") + "?generation=\(meta.generation)")
        #expect(deleted.status == 204 && deleted.body.isEmpty)
        #expect(try await h.send("DELETE", JSONHarness.objectPath("d")).status == 404)
    }

    @Test func copyRewriteAndCompose() async throws {
        let h = try JSONHarness()
        var attributes = ObjectAttributes(contentType: "text/plain", customMetadata: ["k": "v"])
        attributes.downloadTokens = ["tok"]
        let source = try await h.put("src", Array("abc".utf8), attributes: attributes)
        let copied = try await h.send("POST", JSONHarness.objectPath("src") + "/copyTo/b/default-bucket/o/dst%2Fcopy")
        #expect(copied.status == 200, "\(copied.text)")
        #expect(
            copied.json?["name"]?.stringValue == "dst/copy" && copied.json?["md5Hash"]?.stringValue == source.md5Hash)
        #expect(copied.json?["metadata"]?["k"]?.stringValue == "v")
        let rewritten = try await h.send(
            "POST", JSONHarness.objectPath("src") + "/rewriteTo/b/default-bucket/o/rw",
            body: Array(#"{"contentType":"text/csv"}"#.utf8))
        #expect(rewritten.json?["kind"]?.stringValue == "storage#rewriteResponse")
        #expect(rewritten.json?["done"] == .bool(true) && rewritten.json?["totalBytesRewritten"]?.stringValue == "3")
        #expect(rewritten.json?["resource"]?["contentType"]?.stringValue == "text/csv")
        let stale = try await h.send(
            "POST",
            JSONHarness.objectPath("src")
                + "/copyTo/b/default-bucket/o/x?ifSourceGenerationMatch=\(source.generation + 1)")
        #expect(stale.status == 412)
        #expect(try await h.send("POST", JSONHarness.objectPath("nope") + "/copyTo/b/default-bucket/o/x").status == 404)

        try await h.put("part2", Array("DEF".utf8))
        let compose =
            #"{"sourceObjects":[{"name":"src","generation":"\#(source.generation)"},{"name":"part2"}],"destination":{"contentType":"text/x"}}"#
        let composed = try await h.send("POST", JSONHarness.objectPath("whole") + "/compose", body: Array(compose.utf8))
        #expect(composed.status == 200, "\(composed.text)")
        #expect(composed.json?["size"]?.stringValue == "6" && composed.json?["contentType"]?.stringValue == "text/x")
        #expect(try await h.send("GET", JSONHarness.objectPath("whole") + "?alt=media").text == "abcDEF")
        let tooMany =
            #"{"sourceObjects":["# + Array(repeating: #"{"name":"src"}"#, count: 33).joined(separator: ",") + "]}"
        #expect(
            try await h.send("POST", JSONHarness.objectPath("w2") + "/compose", body: Array(tooMany.utf8)).status == 400
        )
    }

    @Test func copyNeedsReadOnTheSourceAndCreateOnTheDestination() async throws {
        let rules = ScriptedRules { r in
            switch r.method {
            case .get: r.path.hasPrefix("open/")
            case .create: r.path.hasPrefix("mine/")
            default: false
            }
        }
        let h = try JSONHarness(rules: rules)
        try await h.put("open/a", [1])
        try await h.put("closed/b", [1])
        #expect(
            try await h.send(
                "POST", JSONHarness.objectPath("open/a") + "/copyTo/b/default-bucket/o/mine%2Fa",
                principal: alice
            ).status == 200)
        #expect(
            try await h.send(
                "POST", JSONHarness.objectPath("closed/b") + "/copyTo/b/default-bucket/o/mine%2Fb",
                principal: alice
            ).status == 403)
        #expect(
            try await h.send(
                "POST", JSONHarness.objectPath("open/a") + "/copyTo/b/default-bucket/o/theirs%2Fa",
                principal: alice
            ).status == 403)
        #expect(
            try await h.send(
                "POST", JSONHarness.objectPath("closed/missing") + "/copyTo/b/default-bucket/o/mine%2Fc",
                principal: alice
            ).status == 403, "denied before existence is revealed")
    }

    @Test func objectsCrossBetweenSurfacesUnchanged() async throws {
        let h = try JSONHarness()
        // v0 upload (mints a download token) → JSON API read.
        let v0 = try await h.v0.put("x/from-v0.txt", Array("v0 bytes".utf8))
        let json = try #require(try await h.send("GET", JSONHarness.objectPath("x/from-v0.txt")).json)
        #expect(json["generation"]?.stringValue == v0["generation"]?.stringValue)
        #expect(json["md5Hash"] == v0["md5Hash"] && json["size"] == v0["size"])
        #expect(json["metadata"]?["firebaseStorageDownloadTokens"]?.stringValue == v0["downloadTokens"]?.stringValue)
        // JSON API upload with a token and metadata → v0 read, download with the token.
        let up = try await h.send(
            "POST", Self.upload + "?uploadType=multipart", headers: [("Content-Type", "multipart/related; boundary=Z")],
            body: Array(
                ("--Z\r\nContent-Type: application/json\r\n\r\n{\"name\":\"x/from-json\",\"metadata\":{\"firebaseStorageDownloadTokens\":\"tk1\",\"m\":\"1\"}}\r\n--Z\r\nContent-Type: text/plain\r\n\r\njson bytes\r\n--Z--")
                    .utf8))
        #expect(up.status == 200)
        let v0Meta = try #require(try await h.v0.send("GET", V0Harness.objectPath("x/from-json")).json)
        #expect(v0Meta["generation"] == up.json?["generation"] && v0Meta["downloadTokens"]?.stringValue == "tk1")
        #expect(v0Meta["metadata"] == .object(["m": .string("1")]))
        let viaToken = try await h.v0.send("GET", V0Harness.objectPath("x/from-json") + "?alt=media&token=tk1")
        #expect(viaToken.text == "json bytes")
        // A JSON API patch is seen by v0; a v0 delete by the JSON API.
        _ = try await h.send(
            "PATCH", JSONHarness.objectPath("x/from-json"), body: Array(#"{"metadata":{"m":"2"}}"#.utf8))
        #expect(
            try await h.v0.send("GET", V0Harness.objectPath("x/from-json")).json?["metadata"]?["m"]?.stringValue == "2")
        #expect(try await h.v0.send("DELETE", V0Harness.objectPath("x/from-json")).status == 204)
        #expect(try await h.send("GET", JSONHarness.objectPath("x/from-json")).status == 404)
    }
}
