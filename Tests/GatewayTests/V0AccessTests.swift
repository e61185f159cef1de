import HTTPServer
import PortcullisCore
import Rules
import Storage
import Testing

@testable import Gateway
@testable import Service

@Suite struct V0AccessTests {
    static let base = "/v0/b/\(V0Harness.bucket)/o"

    @Test func denialMasksExistence() async throws {
        let h = try V0Harness(rules: DenyAllRules())
        let record = AccessRecord(requestID: "r1")
        for (method, target) in [
            ("GET", V0Harness.objectPath("missing")),
            ("GET", V0Harness.objectPath("missing") + "?alt=media"),
            ("PATCH", V0Harness.objectPath("missing")),
            ("DELETE", V0Harness.objectPath("missing")),
            ("GET", Self.base + "?prefix=&delimiter=%2F"),
            ("POST", Self.base + "?name=new"),
        ] {
            let r = try await h.send(method, target, body: method == "PATCH" ? Array("{}".utf8) : [1], record: record)
            #expect(r.status == 403, "\(method) \(target)")
            #expect(r.json?["error"]?["code"] == .int(403))
        }
        #expect(record.decision == .deny)
        let r = try await h.send("GET", V0Harness.objectPath("missing"))
        #expect(r.json?["error"]?["message"] == .string("Permission denied. No READ permission."))
        let list = try await h.send("GET", Self.base)
        #expect(list.json?["error"]?["message"] == .string("Permission denied. No LIST permission."))
    }

    @Test func rulesSeeTheRightResources() async throws {
        let authorizer = ScriptedRules { _ in true }
        let h = try V0Harness(rules: authorizer)
        // A write's answer shows download tokens only to a reader: each write ends with a `get` judged on
        // what it committed. The write's own judgment is the last one of another method.
        func lastWriteJudgment() -> RulesRequest? { authorizer.requests.last { $0.method != .get } }
        try await h.put("x/y.txt", Array("hello".utf8), principal: alice)
        #expect(authorizer.requests.last?.method == .get)
        #expect(authorizer.requests.last?.resource?.size == 5)
        let create = try #require(lastWriteJudgment())
        #expect(create.method == .create)
        #expect(create.resource == nil)
        #expect(create.requestResource?.size == 5)
        #expect(create.requestResource?.md5Hash != nil)
        #expect(create.auth == alice)
        #expect(create.path == "x/y.txt")

        try await h.put("x/y.txt", Array("again".utf8), principal: alice)
        #expect(lastWriteJudgment()?.method == .create)
        #expect(lastWriteJudgment()?.resource?.size == 5)

        _ = try await h.send("PATCH", V0Harness.objectPath("x/y.txt"), body: Array(#"{"contentType":"a/b"}"#.utf8))
        let update = try #require(lastWriteJudgment())
        #expect(update.method == .update)
        #expect(update.resource?.contentType == "text/plain")
        #expect(update.requestResource?.contentType == "a/b")

        _ = try await h.send("DELETE", V0Harness.objectPath("x/y.txt"))
        #expect(authorizer.requests.last?.method == .delete)
        #expect(authorizer.requests.last?.resource?.name == "x/y.txt")
    }

    @Test func tokenAndAdminBypassRules() async throws {
        let h = try V0Harness()
        let m = try await h.put("t.bin", [1, 2, 3])
        let token = try #require(m["downloadTokens"]?.stringValue)
        let locked = h.sibling(rules: DenyAllRules())
        let record = AccessRecord(requestID: "t")
        let r = try await h.send(
            "GET", V0Harness.objectPath("t.bin") + "?alt=media&token=\(token)", api: locked, record: record)
        #expect(r.status == 200)
        #expect(r.body == [1, 2, 3])
        #expect(record.decision == .token)
        #expect(try await h.send("GET", V0Harness.objectPath("t.bin") + "?token=\(token)", api: locked).status == 200)
        #expect(
            try await h.send("GET", V0Harness.objectPath("t.bin") + "?alt=media&token=wrong", api: locked).status == 403
        )
        let adminRecord = AccessRecord(requestID: "a")
        #expect(
            try await h.send(
                "DELETE", V0Harness.objectPath("t.bin"), principal: .admin, api: locked,
                record: adminRecord
            ).status == 204)
        #expect(adminRecord.decision == .admin)
    }

    @Test func signedURLs() async throws {
        let h = try V0Harness()
        try await h.put("s/doc.txt", Array("signed!".utf8))
        let locked = h.sibling(rules: DenyAllRules())
        // Signing needs the permission it grants.
        #expect(
            try await h.send(
                "POST", V0Harness.objectPath("s/doc.txt") + "?signedUrl",
                body: Array(#"{"method":"GET"}"#.utf8), api: locked
            ).status == 403)
        let r = try await h.send(
            "POST", V0Harness.objectPath("s/doc.txt") + "?signedUrl",
            body: Array(#"{"method":"GET","expiresIn":60}"#.utf8))
        #expect(r.status == 200)
        let url = try #require(r.json?["url"]?.stringValue)
        let expiresAt = try #require(r.json?["expiresAt"]?.stringValue)
        #expect(Timestamp(rfc3339: expiresAt) != nil)
        #expect(url.hasPrefix("http://gateway.test/v0/b/default-bucket/o/s%2Fdoc.txt?alt=media&signature="))
        let target = String(url.dropFirst("http://gateway.test".count))

        // The signature bypasses rules for GET/HEAD only.
        let got = try await h.send("GET", target, api: locked)
        #expect(got.status == 200)
        #expect(got.text == "signed!")
        #expect(try await h.send("HEAD", target, api: locked).status == 200)
        #expect(try await h.send("DELETE", target, api: locked).status == 403)
        // Another object, tampered, or malformed → refused.
        let other = target.replacingOccurrences(of: "s%2Fdoc.txt", with: "s%2Fother.txt")
        #expect(try await h.send("GET", other, api: locked).status == 403)
        var bytes = Array(target.utf8)
        bytes[bytes.count - 5] = bytes[bytes.count - 5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(try await h.send("GET", String(decoding: bytes, as: UTF8.self), api: locked).status == 403)
        #expect(
            try await h.send("GET", V0Harness.objectPath("s/doc.txt") + "?alt=media&signature=x", api: locked).status
                == 400)

        // Expired: a grant sealed in the past.
        let expired = SignedURLGrant(
            method: .read, bucket: V0Harness.bucket, name: "s/doc.txt", generation: 1,
            expiresAtSeconds: Timestamp.now().secondsSinceEpoch - 1
        ).seal(h.sealer)
        let old = try await h.send(
            "GET", V0Harness.objectPath("s/doc.txt") + "?alt=media&signature=\(expired)", api: locked)
        #expect(old.status == 403)
        #expect(old.json?["error"]?["message"] == .string("The signed URL has expired."))

        // DELETE grants.
        let d = try await h.send(
            "POST", V0Harness.objectPath("s/doc.txt") + "?signedUrl",
            body: Array(#"{"method":"DELETE"}"#.utf8))
        let deleteTarget = String(try #require(d.json?["url"]?.stringValue).dropFirst("http://gateway.test".count))
        #expect(try await h.send("GET", deleteTarget + "&alt=media", api: locked).status == 403)
        #expect(try await h.send("DELETE", deleteTarget, api: locked).status == 204)

        // Bad requests.
        #expect(
            try await h.send("POST", V0Harness.objectPath("x") + "?signedUrl", body: Array(#"{"method":"PUT"}"#.utf8))
                .status == 400)
        #expect(
            try await h.send("POST", V0Harness.objectPath("x") + "?signedUrl", body: Array(#"{"expiresIn":0}"#.utf8))
                .status == 400)
        #expect(
            try await h.send("POST", V0Harness.objectPath("x") + "?signedUrl", body: Array("{}".utf8)).status == 404)
    }
}

@Suite struct V0CORSTests {
    @Test func preflightAllowsTheSDKHeaders() async throws {
        let h = try V0Harness()
        let r = try await h.send(
            "OPTIONS", "/v0/b/default-bucket/o?name=x",
            headers: [
                ("Origin", "http://app.example"), ("Access-Control-Request-Method", "POST"),
                (
                    "Access-Control-Request-Headers",
                    "authorization,x-goog-upload-protocol,x-goog-upload-command,x-goog-upload-new-thing"
                ),
                ("Access-Control-Request-Private-Network", "true"),
            ])
        #expect(r.status == 204)
        #expect(r["Access-Control-Allow-Origin"] == "http://app.example")
        let methods = try #require(r["Access-Control-Allow-Methods"])
        for m in ["GET", "POST", "PUT", "DELETE"] { #expect(methods.contains(m)) }
        let object = try await h.send(
            "OPTIONS", "/v0/b/default-bucket/o/a%2Fb",
            headers: [
                ("Origin", "http://app.example"), ("Access-Control-Request-Method", "PATCH"),
            ])
        #expect(object.status == 204)
        for m in ["GET", "POST", "PUT", "PATCH", "DELETE"] {
            #expect(object["Access-Control-Allow-Methods"]?.contains(m) == true)
        }
        // A method the route does not serve, an unknown bucket: refused.
        #expect(
            try await h.send(
                "OPTIONS", "/v0/b/default-bucket/o",
                headers: [
                    ("Origin", "http://app.example"), ("Access-Control-Request-Method", "PATCH"),
                ]
            ).status == 403)
        #expect(
            try await h.send(
                "OPTIONS", "/v0/b/nope/o",
                headers: [
                    ("Origin", "http://app.example"), ("Access-Control-Request-Method", "GET"),
                ]
            ).status == 404)
        let allowed = try #require(r["Access-Control-Allow-Headers"]).lowercased()
        for header in [
            "authorization", "x-firebase-appcheck", "x-firebase-storage-version", "x-firebase-gmpid",
            "x-goog-upload-protocol", "x-goog-upload-command", "x-goog-upload-offset", "range",
            "content-type", "if-none-match", "x-http-method-override", "x-request-id", "x-goog-upload-new-thing",
        ] {
            #expect(allowed.contains(header), "\(header)")
        }
        #expect(r["Access-Control-Allow-Private-Network"] == "true")
    }

    @Test func responsesExposeUploadHeaders() async throws {
        let h = try V0Harness()
        let r = try await h.send(
            "POST", "/v0/b/default-bucket/o?name=x",
            headers: [
                ("Origin", "http://app.example"), ("X-Goog-Upload-Protocol", "resumable"),
                ("X-Goog-Upload-Command", "start"),
            ])
        #expect(r["Access-Control-Allow-Origin"] == "http://app.example")
        let exposed = try #require(r["Access-Control-Expose-Headers"]).lowercased()
        for header in [
            "x-goog-upload-status", "x-goog-upload-url", "x-goog-upload-size-received",
            "x-goog-upload-chunk-granularity",
        ] {
            #expect(exposed.contains(header))
        }
        // Errors carry CORS headers too (or the browser hides the status).
        let e = try await h.send("GET", "/v0/b/default-bucket/o/none", headers: [("Origin", "http://app.example")])
        #expect(e.status == 404)
        #expect(e["Access-Control-Allow-Origin"] == "http://app.example")
    }

    @Test func configuredOriginsOnly() async throws {
        let h = try V0Harness(
            configuration: V0Configuration(publicURL: "http://gateway.test"), corsOrigins: ["https://good.example"])
        let good = try await h.send(
            "OPTIONS", "/v0/b/default-bucket/o",
            headers: [
                ("Origin", "https://good.example"), ("Access-Control-Request-Method", "GET"),
            ])
        #expect(good.status == 204)
        #expect(good["Access-Control-Allow-Origin"] == "https://good.example")
        let bad = try await h.send(
            "OPTIONS", "/v0/b/default-bucket/o",
            headers: [
                ("Origin", "https://evil.example"), ("Access-Control-Request-Method", "GET"),
            ])
        #expect(bad["Access-Control-Allow-Origin"] == nil)
        let plain = try await h.send("GET", "/v0/b/default-bucket/o", headers: [("Origin", "https://evil.example")])
        #expect(plain["Access-Control-Allow-Origin"] == nil)
    }
}
