import HTTPServer
import PortcullisCore
import Rules
import Storage
import Testing

@testable import Gateway
@testable import Service

@Suite struct V0ResumableTests {
    static let base = "/v0/b/\(V0Harness.bucket)/o"

    /// Starts an upload the way the JS SDK does; returns the upload URL's target (path and query).
    func start(
        _ h: V0Harness, name: String, size: Int, principal: Principal? = alice, iosSpelling: Bool = false,
        json: String? = nil
    ) async throws -> String {
        let sizeHeader = iosSpelling ? "X-Goog-Upload-Content-Length" : "X-Goog-Upload-Header-Content-Length"
        let typeHeader = iosSpelling ? "X-Goog-Upload-Content-Type" : "X-Goog-Upload-Header-Content-Type"
        let query =
            iosSpelling
            ? "?uploadType=resumable&name=\(PercentEncoding.uriComponent.encode(name))"
            : "?name=\(PercentEncoding.uriComponent.encode(name))"
        var headers = [
            (sizeHeader, String(size)), (typeHeader, "application/x-test"), ("X-Goog-Upload-Command", "start"),
            ("Content-Type", "application/json; charset=utf-8"),
        ]
        if !iosSpelling { headers.append(("X-Goog-Upload-Protocol", "resumable")) }
        let r = try await h.send(
            "POST", Self.base + query, headers: headers,
            body: Array((json ?? #"{"name":"\#(name)","contentType":"application/x-test"}"#).utf8),
            principal: principal)
        #expect(r.status == 200, "\(r.text)")
        #expect(r["X-Goog-Upload-Status"] == "active")
        #expect(r["X-Goog-Upload-Chunk-Granularity"] == "262144")
        let url = try #require(r["X-Goog-Upload-URL"])
        #expect(url.hasPrefix("http://gateway.test/v0/b/default-bucket/o?name="))
        return String(url.dropFirst("http://gateway.test".count))
    }

    func command(
        _ h: V0Harness, _ target: String, _ command: String, offset: Int? = nil, body: [UInt8] = [],
        method: String = "POST", api: V0API? = nil
    ) async throws -> TestResponse {
        var headers = [("X-Goog-Upload-Command", command)]
        if let offset { headers.append(("X-Goog-Upload-Offset", String(offset))) }
        return try await h.send(method, target, headers: headers, body: body, api: api)
    }

    @Test func fullFlowAcrossInstancesWithoutAuthorization() async throws {
        let authorizer = ScriptedRules { $0.auth?.uid == "alice" }
        let h = try V0Harness(rules: authorizer)
        let other = h.sibling(rules: authorizer)
        let data = randomBytes(3 * 262_144 + 1000)
        let url = try await start(h, name: "big/file.bin", size: data.count)
        let chunk = 262_144

        var r = try await command(h, url, "upload", offset: 0, body: Array(data[0..<chunk]))
        #expect(r.status == 200)
        #expect(r["X-Goog-Upload-Status"] == "active")
        #expect(r["X-Goog-Upload-Size-Received"] == String(chunk))
        // iOS sends PUT, to any instance, with no Authorization.
        r = try await command(
            h, url, "upload", offset: chunk, body: Array(data[chunk..<(2 * chunk)]), method: "PUT", api: other)
        #expect(r.status == 200)
        r = try await command(h, url, "query", api: other)
        #expect(r["X-Goog-Upload-Size-Received"] == String(2 * chunk))
        #expect(r["X-Goog-Upload-Status"] == "active")

        // Wrong offset: nothing appended, answered with the current size.
        r = try await command(h, url, "upload", offset: chunk, body: Array(data[chunk..<(2 * chunk)]))
        #expect(r.status == 400)
        #expect(r["X-Goog-Upload-Status"] == "active")
        #expect(r["X-Goog-Upload-Size-Received"] == String(2 * chunk))
        r = try await command(h, url, "query")
        #expect(r["X-Goog-Upload-Size-Received"] == String(2 * chunk))

        r = try await command(h, url, "upload, finalize", offset: 2 * chunk, body: Array(data[(2 * chunk)...]))
        #expect(r.status == 200, "\(r.text)")
        #expect(r["X-Goog-Upload-Status"] == "final")
        let meta = try #require(r.json)
        #expect(meta["name"] == .string("big/file.bin"))
        #expect(meta["size"] == .string(String(data.count)))
        #expect(meta["contentType"] == .string("application/x-test"))
        #expect(meta["downloadTokens"]?.stringValue?.count == 36)
        // Rules at finalize judged the starter (alice), though no chunk carried a principal.
        let create = try #require(authorizer.requests.last { $0.method == .create })
        #expect(create.auth?.uid == "alice")
        #expect(create.requestResource?.size == Int64(data.count))
        #expect(create.requestResource?.md5Hash != nil)

        let back = try await h.send("GET", V0Harness.objectPath("big/file.bin") + "?alt=media", principal: alice)
        #expect(back.body == data)

        // Finalize twice: the result is replayed; query says final; cancel is refused; more chunks are refused.
        r = try await command(h, url, "finalize", api: other)
        #expect(r.status == 200)
        #expect(r["X-Goog-Upload-Status"] == "final")
        #expect(r.json?["generation"] == meta["generation"])
        r = try await command(h, url, "query")
        #expect(r["X-Goog-Upload-Status"] == "final")
        #expect(r["X-Goog-Upload-Size-Received"] == String(data.count))
        #expect(try await command(h, url, "cancel").status == 400)
        r = try await command(h, url, "upload", offset: data.count, body: [1])
        #expect(r.status == 400)
        #expect(r["X-Goog-Upload-Status"] == "final")
    }

    @Test func iosHeaderSpellingAndSeparateFinalize() async throws {
        let h = try V0Harness()
        let data = randomBytes(1000)
        let url = try await start(h, name: "ios.bin", size: data.count, iosSpelling: true)
        #expect(try await command(h, url, "upload", offset: 0, body: data, method: "PUT").status == 200)
        let r = try await command(h, url, "finalize", method: "PUT")
        #expect(r.status == 200)
        #expect(r.json?["size"] == .string("1000"))
    }

    @Test func cancelThenEverythingIsRefused() async throws {
        let h = try V0Harness()
        let url = try await start(h, name: "c.bin", size: 10)
        #expect(try await command(h, url, "upload", offset: 0, body: [1, 2, 3]).status == 200)
        var r = try await command(h, url, "cancel")
        #expect(r.status == 200)
        #expect(try await command(h, url, "cancel").status == 200)
        r = try await command(h, url, "query")
        #expect(r["X-Goog-Upload-Status"] == "cancelled")
        r = try await command(h, url, "upload", offset: 3, body: [4])
        #expect(r.status == 400)
        r = try await command(h, url, "finalize")
        #expect(r.status == 400)
        #expect(try await h.send("GET", V0Harness.objectPath("c.bin")).status == 404)
    }

    @Test func sizeChecks() async throws {
        let h = try V0Harness()
        let url = try await start(h, name: "s.bin", size: 10)
        // Finalize before all bytes: refused, the upload stays active.
        #expect(try await command(h, url, "upload", offset: 0, body: randomBytes(4)).status == 200)
        var r = try await command(h, url, "finalize")
        #expect(r.status == 400)
        #expect(r["X-Goog-Upload-Status"] == "active")
        // More bytes than declared: refused, nothing appended.
        r = try await command(h, url, "upload", offset: 4, body: randomBytes(7))
        #expect(r.status == 400)
        #expect(try await command(h, url, "query", api: nil)["X-Goog-Upload-Size-Received"] == "4")
        r = try await command(h, url, "upload, finalize", offset: 4, body: randomBytes(6))
        #expect(r.status == 200)
        // Declared size above the ceiling: 413 at start.
        let small = try V0Harness(
            configuration: V0Configuration(publicURL: "http://gateway.test"),
            service: ServiceConfiguration(maxObjectBytes: 100))
        let big = try await small.send(
            "POST", Self.base + "?name=x",
            headers: [
                ("X-Goog-Upload-Protocol", "resumable"), ("X-Goog-Upload-Command", "start"),
                ("X-Goog-Upload-Header-Content-Length", "101"),
            ])
        #expect(big.status == 413)
    }

    @Test func md5MismatchAtFinalizeIs400AndNoObject() async throws {
        let h = try V0Harness()
        let url = try await start(h, name: "m.txt", size: 11, json: #"{"md5Hash":"XrY7u+Ae7tCTyyK7j1rNww=="}"#)
        let r = try await command(h, url, "upload, finalize", offset: 0, body: Array("hello there".utf8))
        #expect(r.status == 400)
        #expect(try await h.send("GET", V0Harness.objectPath("m.txt")).status == 404)
        let ok = try await start(h, name: "m.txt", size: 11, json: #"{"md5Hash":"XrY7u+Ae7tCTyyK7j1rNww=="}"#)
        #expect(try await command(h, ok, "upload, finalize", offset: 0, body: Array("hello world".utf8)).status == 200)
    }

    @Test func protocolErrors() async throws {
        let h = try V0Harness()
        let url = try await start(h, name: "e.bin", size: 5)
        #expect(try await h.send("POST", url).status == 400)  // no command
        #expect(try await command(h, url, "upload", body: [1]).status == 400)  // no offset
        #expect(try await command(h, url, "explode").status == 400)
        // A tampered upload id.
        var tampered = url
        let index = tampered.index(tampered.endIndex, offsetBy: -30)
        tampered.replaceSubrange(index...index, with: tampered[index] == "A" ? "B" : "A")
        #expect(try await command(h, tampered, "query").status == 404)
        #expect(try await command(h, Self.base + "?upload_id=nonsense", "query").status == 404)
        #expect(try await h.send("PUT", Self.base).status == 400)  // missing upload_id
        // A resumable command other than start without an upload_id names no upload.
        #expect(
            try await h.send(
                "POST", Self.base + "?name=x",
                headers: [
                    ("X-Goog-Upload-Protocol", "resumable"),
                    ("X-Goog-Upload-Command", "upload"),
                ]
            ).status == 404)
    }

    @Test func rulesDenialAtStartAndAtFinalize() async throws {
        // Deny creates larger than 100 bytes: the declared size is judged at start...
        let authorizer = ScriptedRules { $0.method != .create || ($0.requestResource?.size ?? 0) <= 100 }
        let h = try V0Harness(rules: authorizer)
        let big = try await h.send(
            "POST", Self.base + "?name=big",
            headers: [
                ("X-Goog-Upload-Protocol", "resumable"), ("X-Goog-Upload-Command", "start"),
                ("X-Goog-Upload-Header-Content-Length", "101"),
            ])
        #expect(big.status == 403)
        // ...and the true size at finalize (no declared size here).
        let r = try await h.send(
            "POST", Self.base + "?name=sneaky",
            headers: [
                ("X-Goog-Upload-Protocol", "resumable"), ("X-Goog-Upload-Command", "start"),
            ])
        let url = String(try #require(r["X-Goog-Upload-URL"]).dropFirst("http://gateway.test".count))
        let fin = try await command(h, url, "upload, finalize", offset: 0, body: randomBytes(200))
        #expect(fin.status == 403)
        #expect(fin["X-Goog-Upload-Status"] == "final")
        #expect(try await h.send("GET", V0Harness.objectPath("sneaky")).status == 404)
    }

    @Test func hostHeaderBuildsTheUploadURLWithoutPublicURL() async throws {
        let h = try V0Harness(configuration: V0Configuration())
        let r = try await h.send(
            "POST", Self.base + "?name=x",
            headers: [
                ("X-Goog-Upload-Protocol", "resumable"), ("X-Goog-Upload-Command", "start"),
            ])
        #expect(
            r["X-Goog-Upload-URL"]?.hasPrefix("http://gateway.test/v0/b/default-bucket/o?name=x&upload_id=") == true)
    }
}
