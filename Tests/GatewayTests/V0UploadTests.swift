import HTTPServer
import PortcullisCore
import Rules
import Storage
import Testing

@testable import Gateway
@testable import Service

/// A JS-SDK-shaped multipart body.
func multipartBody(boundary: String, json: String, contentType: String, data: [UInt8]) -> [UInt8] {
    var body = Array("--\(boundary)\r\nContent-Type: application/json; charset=utf-8\r\n\r\n\(json)\r\n".utf8)
    body += Array("--\(boundary)\r\nContent-Type: \(contentType)\r\n\r\n".utf8)
    body += data
    body += Array("\r\n--\(boundary)--".utf8)
    return body
}

@Suite struct V0UploadTests {
    static let base = "/v0/b/\(V0Harness.bucket)/o"

    @Test func mediaUpload() async throws {
        let h = try V0Harness()
        let data = randomBytes(70_000)
        let r = try await h.send(
            "POST", Self.base + "?name=media%2Ffile.bin&uploadType=media",
            headers: [("Content-Type", "application/x-test")], body: data)
        #expect(r.status == 200)
        #expect(r.json?["name"] == .string("media/file.bin"))
        #expect(r.json?["size"] == .string("70000"))
        #expect(r.json?["contentType"] == .string("application/x-test"))
        #expect(r.json?["contentDisposition"] == .string("inline"))
        let back = try await h.send("GET", V0Harness.objectPath("media/file.bin") + "?alt=media")
        #expect(back.body == data)
        // Without Content-Type: application/octet-stream. Name from the path works too.
        let r2 = try await h.send("POST", Self.base + "/path%2Fnamed", body: [1, 2, 3])
        #expect(r2.json?["name"] == .string("path/named"))
        #expect(r2.json?["contentType"] == .string("application/octet-stream"))
        #expect(try await h.send("POST", Self.base, body: [1]).status == 400)
    }

    @Test(arguments: [1, 2, 3, 7, 41, 1000, 65536])
    func multipartWithBoundarySplitAcrossChunks(piece: Int) async throws {
        let h = try V0Harness()
        let boundary = "4417203916521953028930174385"
        // Data that contains near-boundary lookalikes must come through intact.
        let lookalike = "--" + boundary + "x\r\n--" + boundary.dropLast() + "X"
        let data = Array(lookalike.utf8) + randomBytes(5000) + Array(("\r\n--" + boundary.prefix(10)).utf8)
        let json =
            #"{"name":"mp/a.bin","contentType":"image/png","metadata":{"owner":"u1","n":5,"z":null},"bucket":""}"#
        let body = multipartBody(boundary: boundary, json: json, contentType: "image/png", data: data)
        let r = try await h.send(
            "POST", Self.base + "?name=mp%2Fa.bin",
            headers: [
                ("X-Goog-Upload-Protocol", "multipart"),
                ("Content-Type", "multipart/related; boundary=\(boundary)"),
            ],
            stream: ChunkedStream(body, piece: piece, announceLength: piece % 2 == 0))
        #expect(r.status == 200, "\(r.text)")
        #expect(r.json?["size"] == .string(String(data.count)))
        #expect(r.json?["contentType"] == .string("image/png"))
        #expect(r.json?["metadata"] == .object(["owner": .string("u1"), "n": .string("5")]))
        let back = try await h.send("GET", V0Harness.objectPath("mp/a.bin") + "?alt=media")
        #expect(back.body == data)
    }

    @Test func multipartErrors() async throws {
        let h = try V0Harness()
        let headers = [("X-Goog-Upload-Protocol", "multipart"), ("Content-Type", "multipart/related; boundary=BB")]
        // One part only.
        let one = Array("--BB\r\nContent-Type: application/json\r\n\r\n{}\r\n--BB--".utf8)
        #expect(try await h.send("POST", Self.base + "?name=x", headers: headers, body: one).status == 400)
        // Three parts: refused before anything is committed.
        let three =
            multipartBody(boundary: "BB", json: "{}", contentType: "text/plain", data: Array("abc".utf8)).dropLast(2)
            + Array("\r\nContent-Type: text/plain\r\n\r\nmore\r\n--BB--".utf8)
        #expect(try await h.send("POST", Self.base + "?name=three", headers: headers, body: Array(three)).status == 400)
        #expect(try await h.send("GET", V0Harness.objectPath("three")).status == 404)
        // No closing delimiter.
        let open = Array(multipartBody(boundary: "BB", json: "{}", contentType: "text/plain", data: [1]).dropLast(6))
        #expect(try await h.send("POST", Self.base + "?name=open", headers: headers, body: open).status == 400)
        #expect(try await h.send("GET", V0Harness.objectPath("open")).status == 404)
        // Bad JSON part, missing boundary.
        let badJSON = multipartBody(boundary: "BB", json: "{nope", contentType: "text/plain", data: [1])
        #expect(try await h.send("POST", Self.base + "?name=j", headers: headers, body: badJSON).status == 400)
        #expect(
            try await h.send(
                "POST", Self.base + "?name=j",
                headers: [
                    ("X-Goog-Upload-Protocol", "multipart"),
                    ("Content-Type", "multipart/related"),
                ],
                body: badJSON
            ).status == 400)
        // The name comes from the path or ?name=, never from the JSON part (as in the emulator).
        let named = multipartBody(
            boundary: "BB", json: #"{"name":"from-json.txt"}"#, contentType: "text/plain", data: [65])
        #expect(try await h.send("POST", Self.base, headers: headers, body: named).status == 400)
        let r = try await h.send("POST", Self.base + "/from-path.txt", headers: headers, body: named)
        #expect(r.json?["name"] == .string("from-path.txt"))
        #expect(r.json?["contentType"] == .string("text/plain"))
    }

    @Test func md5MismatchIs400AndStoresNothing() async throws {
        let h = try V0Harness()
        let json = #"{"name":"sum.txt","md5Hash":"XrY7u+Ae7tCTyyK7j1rNww=="}"#
        let headers = [("X-Goog-Upload-Protocol", "multipart"), ("Content-Type", "multipart/related; boundary=ZZ")]
        let wrong = multipartBody(
            boundary: "ZZ", json: json, contentType: "text/plain", data: Array("hello there".utf8))
        #expect(try await h.send("POST", Self.base + "?name=sum.txt", headers: headers, body: wrong).status == 400)
        #expect(try await h.send("GET", V0Harness.objectPath("sum.txt")).status == 404)
        let right = multipartBody(
            boundary: "ZZ", json: json, contentType: "text/plain", data: Array("hello world".utf8))
        #expect(try await h.send("POST", Self.base + "?name=sum.txt", headers: headers, body: right).status == 200)
    }

    @Test func bodiesOverTheCeilingAre413() async throws {
        let h = try V0Harness(configuration: V0Configuration(), service: ServiceConfiguration(maxObjectBytes: 1000))
        // Content-Length says so: refused before the body is read.
        let declared = try await h.send(
            "POST", Self.base + "?name=big", stream: ChunkedStream(randomBytes(1001), piece: 100))
        #expect(declared.status == 413)
        // No Content-Length: the limit trips while streaming, nothing is stored.
        let streamed = try await h.send(
            "POST", Self.base + "?name=big",
            stream: ChunkedStream(randomBytes(5000), piece: 100, announceLength: false))
        #expect(streamed.status == 413)
        #expect(try await h.send("GET", V0Harness.objectPath("big")).status == 404)
        let boundary = "QQ"
        let body = multipartBody(boundary: boundary, json: "{}", contentType: "text/plain", data: randomBytes(2000))
        let mp = try await h.send(
            "POST", Self.base + "?name=big",
            headers: [("Content-Type", "multipart/related; boundary=\(boundary)")],
            stream: ChunkedStream(body, piece: 300, announceLength: false))
        #expect(mp.status == 413)
        #expect(try await h.send("POST", Self.base + "?name=ok", body: randomBytes(1000)).status == 200)
    }

    @Test func overwriteCreatesNewGenerationAndToken() async throws {
        let h = try V0Harness()
        let first = try await h.put("o.txt", Array("one".utf8))
        let second = try await h.put("o.txt", Array("two!".utf8))
        #expect(first["generation"] != second["generation"])
        #expect(first["downloadTokens"] != second["downloadTokens"])
        #expect(second["size"] == .string("4"))
        // ifGenerationMatch=0: only when absent.
        #expect(try await h.send("POST", Self.base + "?name=o.txt&ifGenerationMatch=0", body: [1]).status == 412)
        #expect(try await h.send("POST", Self.base + "?name=fresh.txt&ifGenerationMatch=0", body: [1]).status == 200)
    }

    @Test func onlyTheAdminChoosesTokensInUploadMetadata() async throws {
        let h = try V0Harness()
        let json = #"{"metadata":{"firebaseStorageDownloadTokens":"my-token"}}"#
        let body = multipartBody(boundary: "TT", json: json, contentType: "text/plain", data: [1])
        let headers = [("Content-Type", "multipart/related; boundary=TT")]
        let admin = try await h.send(
            "POST", Self.base + "?name=tok.txt", headers: headers, body: body, principal: operatorAdmin)
        #expect(admin.json?["downloadTokens"] == .string("my-token"))
        #expect(admin.json?["metadata"] == nil)
        // An end user's choice is ignored: the server mints the token, so nobody can plant one.
        let user = try await h.send("POST", Self.base + "?name=mine.txt", headers: headers, body: body)
        let minted = try #require(user.json?["downloadTokens"]?.stringValue)
        #expect(minted != "my-token")
        #expect(user.json?["metadata"] == nil)
        let locked = h.sibling(rules: DenyAllRules())
        let planted = try await h.send(
            "GET", V0Harness.objectPath("mine.txt") + "?alt=media&token=my-token", api: locked)
        #expect(planted.status == 403)
    }
}
