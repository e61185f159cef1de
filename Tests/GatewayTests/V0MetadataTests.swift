import HTTPServer
import PortcullisCore
import Rules
import Storage
import Testing

@testable import Gateway
@testable import Service

@Suite struct V0MetadataTests {
    func patch(
        _ h: V0Harness, _ name: String, _ json: String, method: String = "PATCH",
        headers: [(String, String)] = [], query: String = ""
    ) async throws -> TestResponse {
        try await h.send(
            method, V0Harness.objectPath(name) + query,
            headers: [("Content-Type", "application/json; charset=utf-8")] + headers, body: Array(json.utf8))
    }

    @Test func patchMergesAndDeletes() async throws {
        let h = try V0Harness()
        try await h.send(
            "POST", "/v0/b/\(V0Harness.bucket)/o?name=p.txt", headers: [("Content-Type", "text/plain")],
            body: Array("x".utf8))
        var r = try await patch(
            h, "p.txt", #"{"contentType":"text/csv","cacheControl":"max-age=60","metadata":{"a":"1","b":"2"}}"#)
        #expect(r.status == 200)
        #expect(r.json?["contentType"] == .string("text/csv"))
        #expect(r.json?["cacheControl"] == .string("max-age=60"))
        #expect(r.json?["metadata"] == .object(["a": .string("1"), "b": .string("2")]))
        #expect(r.json?["metageneration"] == .string("2"))

        // Per-key merge: null deletes one key, numbers are stringified, other keys stay.
        r = try await patch(
            h, "p.txt", #"{"metadata":{"a":null,"c":7},"cacheControl":null,"bucket":"","name":"ignored"}"#)
        #expect(r.status == 200)
        #expect(r.json?["metadata"] == .object(["b": .string("2"), "c": .string("7")]))
        #expect(r.json?["cacheControl"] == nil)
        #expect(r.json?["name"] == .string("p.txt"))
        #expect(r.json?["metageneration"] == .string("3"))

        // metadata: null clears everything; contentEncoding null reports identity.
        r = try await patch(h, "p.txt", #"{"metadata":null,"contentEncoding":null}"#)
        #expect(r.json?["metadata"] == nil)
        #expect(r.json?["contentEncoding"] == .string("identity"))

        // PUT + X-HTTP-Method-Override: PATCH (Android).
        r = try await patch(
            h, "p.txt", #"{"contentLanguage":"en"}"#, method: "PUT", headers: [("X-HTTP-Method-Override", "PATCH")])
        #expect(r.status == 200)
        #expect(r.json?["contentLanguage"] == .string("en"))

        // An empty patch still bumps metageneration.
        let before = try #require(r.json?["metageneration"]?.stringValue)
        r = try await patch(h, "p.txt", "{}")
        #expect(r.json?["metageneration"] == .string(String(Int(before)! + 1)))
    }

    @Test func patchPreconditionsAndErrors() async throws {
        let h = try V0Harness()
        try await h.put("q.txt", Array("x".utf8))
        #expect(try await patch(h, "q.txt", "{}", query: "?ifMetagenerationMatch=5").status == 412)
        #expect(try await patch(h, "q.txt", "{}", headers: [("If-Match", "\"1/9\"")]).status == 412)
        #expect(try await patch(h, "q.txt", "{}", query: "?ifMetagenerationMatch=1").status == 200)
        #expect(try await patch(h, "q.txt", "{bad").status == 400)
        #expect(try await patch(h, "q.txt", #"{"contentType":5}"#).status == 400)
        #expect(try await patch(h, "q.txt", #"{"contentType":"a\r\nInjected: yes"}"#).status == 400)
        #expect(try await patch(h, "missing.txt", "{}").status == 404)
        let big = "{\"metadata\":{\"k\":\"" + String(repeating: "x", count: 2 << 20) + "\"}}"
        #expect(try await patch(h, "q.txt", big).status == 413)
    }

    @Test func firebaseStorageDownloadTokensMergeIntoTokensForTheAdmin() async throws {
        let h = try V0Harness()
        let m = try await h.put("t.txt", Array("x".utf8))
        let original = try #require(m["downloadTokens"]?.stringValue)
        let body = #"{"metadata":{"firebaseStorageDownloadTokens":"tok-a, tok-b","k":"v"}}"#
        let r = try await h.send(
            "PATCH", V0Harness.objectPath("t.txt"), body: Array(body.utf8), principal: operatorAdmin)
        #expect(r.json?["downloadTokens"] == .string("\(original),tok-a,tok-b"))
        #expect(r.json?["metadata"] == .object(["k": .string("v")]))
        let download = try await h.send("GET", V0Harness.objectPath("t.txt") + "?alt=media&token=tok-b")
        #expect(download.status == 200)
    }

    @Test func anEndUsersPatchNeverSetsTokens() async throws {
        let h = try V0Harness()
        let m = try await h.put("t.txt", Array("x".utf8))
        let original = try #require(m["downloadTokens"]?.stringValue)
        // The token key in the patch is ignored; so is a spelling that differs only in letter case (S3 folds
        // metadata keys to lower case, where it would become the token list).
        let body =
            #"{"metadata":{"firebaseStorageDownloadTokens":"tok-a","#
            + #""FirebaseStorageDownloadTokens":"tok-b","k":"v"}}"#
        let r = try await patch(h, "t.txt", body)
        #expect(r.status == 200)
        #expect(r.json?["downloadTokens"] == .string(original))
        #expect(r.json?["metadata"] == .object(["k": .string("v")]))
        // Judged where only a token opens the object: the one that was planted does not.
        let locked = h.sibling(rules: DenyAllRules())
        for token in ["tok-a", "tok-b"] {
            let download = try await h.send(
                "GET", V0Harness.objectPath("t.txt") + "?alt=media&token=\(token)", api: locked)
            #expect(download.status == 403)
        }
        let minted = try await h.send(
            "GET", V0Harness.objectPath("t.txt") + "?alt=media&token=\(original)", api: locked)
        #expect(minted.status == 200)
    }

    @Test func deleteIs204ThenGone() async throws {
        let h = try V0Harness()
        try await h.put("d.txt", Array("x".utf8))
        #expect(try await h.send("DELETE", V0Harness.objectPath("d.txt"), query: "?ifGenerationMatch=1").status == 412)
        let r = try await h.send("DELETE", V0Harness.objectPath("d.txt"))
        #expect(r.status == 204)
        #expect(r.body.isEmpty)
        #expect(try await h.send("GET", V0Harness.objectPath("d.txt")).status == 404)
        #expect(try await h.send("DELETE", V0Harness.objectPath("d.txt")).status == 404)
        // pyrebase4 deletes with DELETE /o?name=.
        try await h.put("py/x.txt", Array("x".utf8))
        #expect(try await h.send("DELETE", "/v0/b/\(V0Harness.bucket)/o?name=py/x.txt").status == 204)
    }

    @Test func tokenAdministrationNeedsAdmin() async throws {
        let h = try V0Harness()
        let m = try await h.put("a.txt", Array("x".utf8))
        let first = try #require(m["downloadTokens"]?.stringValue)
        let path = V0Harness.objectPath("a.txt")
        let denied = try await h.send("POST", path + "?create_token=true", principal: alice)
        #expect(denied.status == 403)
        #expect(denied.json?["error"]?["message"] == .string("Missing admin credentials."))
        #expect(try await h.send("POST", path + "?create_token=yes", principal: .admin).status == 400)
        #expect(
            try await h.send("POST", V0Harness.objectPath("none") + "?create_token=true", principal: .admin).status
                == 404)

        let created = try await h.send("POST", path + "?create_token=true", principal: .admin)
        #expect(created.status == 200)
        let tokens = try #require(created.json?["downloadTokens"]?.stringValue).split(separator: ",").map(String.init)
        #expect(tokens.count == 2 && tokens[0] == first)
        #expect(created.json?["metageneration"] == .string("2"))

        let afterDelete = try await h.send("PUT", path + "?delete_token=\(first)", principal: .admin)
        #expect(afterDelete.json?["downloadTokens"] == .string(tokens[1]))
        // Deleting the last token replaces it.
        let replaced = try await h.send("POST", path + "?delete_token=\(tokens[1])", principal: .admin)
        let last = try #require(replaced.json?["downloadTokens"]?.stringValue)
        #expect(!last.isEmpty && last != tokens[1] && !last.contains(","))
        // With rules denying reads, only current tokens open the object.
        let locked = h.sibling(rules: DenyAllRules())
        #expect(try await h.send("GET", path + "?alt=media&token=\(first)", api: locked).status == 403)
        #expect(try await h.send("GET", path + "?alt=media&token=\(last)", api: locked).status == 200)
    }

    @Test func downloadURLMintsAndUsesFirstToken() async throws {
        let h = try V0Harness()
        let m = try await h.put("folder/pic 1.png", Array("x".utf8))
        let token = try #require(m["downloadTokens"]?.stringValue)
        let r = try await h.send("GET", V0Harness.objectPath("folder/pic 1.png") + "?alt=downloadUrl")
        #expect(r.status == 200)
        #expect(
            r.json?["downloadUrl"]
                == .string(
                    "http://gateway.test/v0/b/default-bucket/o/folder%2Fpic%201.png?alt=media&token=\(token)"))
    }

    @Test func firstReadMintsATokenForObjectsWrittenWithout() async throws {
        let h = try V0Harness()
        let object = try ObjectPath(bucket: V0Harness.bucket, name: "admin-written")
        _ = try await h.backend.write(
            object, body: BufferByteStream("x"), attributes: ObjectAttributes(),
            options: WriteOptions())
        let r = try await h.send("GET", V0Harness.objectPath("admin-written"))
        #expect(r.status == 200)
        #expect(r.json?["downloadTokens"]?.stringValue?.count == 36)
        #expect(r.json?["metageneration"] == .string("2"))
        let again = try await h.send("GET", V0Harness.objectPath("admin-written"))
        #expect(again.json?["downloadTokens"] == r.json?["downloadTokens"])
        #expect(again.json?["metageneration"] == .string("2"))
    }
}

extension V0Harness {
    @discardableResult
    func send(_ method: String, _ target: String, query: String, principal: Principal? = nil) async throws
        -> TestResponse
    {
        try await send(method, target + query, principal: principal)
    }
}

@Suite struct V0PyrebaseShapeTests {
    /// The request shapes pyrebase4's Storage class sends: raw POST with an unencoded name and no
    /// Content-Type, metadata for the token, `alt=media&token=`, `DELETE /o?name=`.
    @Test func pyrebaseFlow() async throws {
        let h = try V0Harness(rules: ScriptedRules { $0.auth != nil })
        let put = try await h.send(
            "POST", "/v0/b/default-bucket/o?name=images/cat%20photo.jpg", body: [9, 8, 7],
            principal: alice)
        #expect(put.status == 200)
        #expect(put.json?["contentType"] == .string("application/octet-stream"))
        let token = try #require(put.json?["downloadTokens"]?.stringValue)
        let url = "/v0/b/default-bucket/o/images%2Fcat%20photo.jpg?alt=media&token=\(token)"
        let get = try await h.send("GET", url)
        #expect(get.status == 200)
        #expect(get.body == [9, 8, 7])
        #expect(try await h.send("DELETE", "/v0/b/default-bucket/o?name=images/cat%20photo.jpg").status == 403)
        #expect(
            try await h.send("DELETE", "/v0/b/default-bucket/o?name=images/cat%20photo.jpg", principal: alice).status
                == 204)
        #expect(try await h.send("GET", url).status == 403)
    }

    @Test(arguments: ["null", "[]", "\"x\"", "42", "true"])
    func patchBodyThatIsNotAnObjectIs400AndChangesNothing(_ body: String) async throws {
        let h = try V0Harness()
        try await h.put("p.txt", Array("x".utf8))
        let r = try await h.send("PATCH", V0Harness.objectPath("p.txt"), body: Array(body.utf8))
        #expect(r.status == 400)
        #expect(try await h.send("GET", V0Harness.objectPath("p.txt")).json?["metageneration"] == .string("1"))
    }
}
