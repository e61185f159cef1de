import HTTPServer
import PortcullisCore
import Service
import Testing

@testable import Gateway

/// Object bytes never run with the gateway's authority (docs/security.md): every answer that carries them or stands
/// for them — on both surfaces, whole, ranged, HEAD and 304 — is `sandbox`ed and `nosniff`; errors are `nosniff`.
@Suite struct UserContentIsolationTests {
    static let page = Array("<!doctype html><script>document.title = sessionStorage.length</script>".utf8)

    func expectIsolated(_ r: TestResponse, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(r["Content-Security-Policy"] == "sandbox", "\(what)", sourceLocation: sourceLocation)
        #expect(r["X-Content-Type-Options"] == "nosniff", "\(what)", sourceLocation: sourceLocation)
    }

    @Test func everyV0MediaAnswerIsSandboxed() async throws {
        let h = try V0Harness()
        let meta = try await h.put("a/page.html", Self.page, contentType: "text/html")
        let token = try #require(meta["downloadTokens"]?.stringValue)
        let target = V0Harness.objectPath("a/page.html") + "?alt=media&token=\(token)"
        let whole = try await h.send("GET", target)
        #expect(whole.status == 200 && whole.body == Self.page)
        expectIsolated(whole, "GET")
        let head = try await h.send("HEAD", target)
        #expect(head.status == 200)
        expectIsolated(head, "HEAD")
        let part = try await h.send("GET", target, headers: [("Range", "bytes=0-3")])
        #expect(part.status == 206)
        expectIsolated(part, "206")
        let same = try await h.send("GET", target, headers: [("If-None-Match", try #require(whole["ETag"]))])
        #expect(same.status == 304)
        expectIsolated(same, "304")
    }

    @Test func everyJSONAPIMediaAnswerIsSandboxed() async throws {
        let h = try JSONHarness()
        let meta = try await h.put("b/pic.svg", Self.page, attributes: ObjectAttributes(contentType: "image/svg+xml"))
        for target in [
            JSONHarness.objectPath("b/pic.svg") + "?alt=media",
            "/download/storage/v1/b/default-bucket/o/b%2Fpic.svg?alt=media",
        ] {
            let whole = try await h.send("GET", target)
            #expect(whole.status == 200 && whole.body == Self.page)
            expectIsolated(whole, "GET \(target)")
            expectIsolated(try await h.send("HEAD", target), "HEAD \(target)")
            expectIsolated(try await h.send("GET", target, headers: [("Range", "bytes=1-2")]), "206 \(target)")
            let same = try await h.send("GET", target, headers: [("If-None-Match", "\"\(meta.generation)/1\"")])
            #expect(same.status == 304)
            expectIsolated(same, "304 \(target)")
        }
    }

    @Test func errorsAreJSONThatIsNeverSniffed() async throws {
        let v0 = try V0Harness()
        let missing = try await v0.send("GET", V0Harness.objectPath("<script>x</script>.html") + "?alt=media")
        #expect(missing.status == 404)
        #expect(missing["Content-Type"]?.hasPrefix("application/json") == true)
        #expect(missing["X-Content-Type-Options"] == "nosniff")
        let json = try JSONHarness()
        let gone = try await json.send("GET", JSONHarness.objectPath("<b>x</b>") + "?alt=media")
        #expect(gone.status == 404)
        #expect(gone["X-Content-Type-Options"] == "nosniff")
    }
}
