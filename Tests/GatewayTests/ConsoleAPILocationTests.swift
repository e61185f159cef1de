import HTTPServer
import PortcullisCore
import Service
import Testing

@testable import Gateway

/// The console on its own listener (`--console-listen`): the page names the API's base URL and its policy
/// allows that origin, and nothing a caller puts in `Host` reaches the page or the policy unchecked.
@Suite struct ConsoleAPILocationTests {
    func page(_ api: ConsoleAPILocation, host: String?) async throws -> TestResponse {
        var headers = HTTPHeaders()
        if let host { headers.add("Host", host) }
        let request = HTTPRequest(method: .get, target: "/console/", headers: headers, body: BufferByteStream([]))
        let response = await ConsoleSurface(api: api).handle(
            request, principal: nil, record: AccessRecord(requestID: "test"))
        return TestResponse(status: response.status, headers: response.headers, body: try await readBody(response.body))
    }

    @Test func theSameOriginPageNamesNoAPI() async throws {
        let r = try await page(.sameOrigin, host: "gateway.test")
        #expect(r.body == ConsoleAssetCatalog.embedded.index.body)
        #expect(r.text.contains(#"<meta name="portcullis-api" content="">"#))
        #expect(r["Content-Security-Policy"] == ConsoleHeaders.contentSecurityPolicy)
    }

    /// With TLS on the listeners the page calls the main port over HTTPS.
    @Test func aSeparatePageBehindTLSCallsHTTPS() async throws {
        let r = try await page(.separate(publicURL: nil, port: 8443, secure: true), host: "console.test:9443")
        #expect(r.text.contains(#"<meta name="portcullis-api" content="https://console.test:8443">"#))
        #expect(try #require(r["Content-Security-Policy"]).contains("connect-src 'self' https://console.test:8443;"))
    }

    @Test func aSeparatePageCallsTheMainPortOnTheHostItWasLoadedFrom() async throws {
        let r = try await page(.separate(publicURL: nil, port: 8080), host: "console.test:9001")
        #expect(r.status == 200)
        #expect(r.text.contains(#"<meta name="portcullis-api" content="http://console.test:8080">"#))
        let csp = try #require(r["Content-Security-Policy"])
        #expect(csp.contains("connect-src 'self' http://console.test:8080;"))
        #expect(csp.contains("img-src 'self' http://console.test:8080;"))
        #expect(csp.contains("script-src 'self';") && csp.contains("frame-ancestors 'none'"))
        #expect(r["ETag"] != ConsoleAssetCatalog.embedded.index.etag)
        let v6 = try await page(.separate(publicURL: nil, port: 8080), host: "[::1]:9001")
        #expect(v6.text.contains(#"content="http://[::1]:8080""#))
    }

    @Test func aPublicURLIsUsedAsItIs() async throws {
        let r = try await page(.separate(publicURL: "https://files.example.com/store", port: 8080), host: "x:1")
        #expect(r.text.contains(#"<meta name="portcullis-api" content="https://files.example.com/store">"#))
        #expect(try #require(r["Content-Security-Policy"]).contains("connect-src 'self' https://files.example.com;"))
    }

    @Test(arguments: [nil, "", "evil\"><script>:1", "a b", "x;script-src *", "[::1", "[zz]:1"])
    func anOddHostFallsBackToLocalhost(_ host: String?) async throws {
        let r = try await page(.separate(publicURL: nil, port: 8080), host: host)
        #expect(r.text.contains(#"content="http://localhost:8080""#))
        #expect(!r.text.contains("<script>:1") && !(r["Content-Security-Policy"] ?? "").contains("*"))
    }
}
