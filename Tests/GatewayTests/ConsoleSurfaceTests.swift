import Foundation
import HTTPServer
import PortcullisCore
import Service
import Testing

@testable import Gateway

/// The console's static files through the gateway pipeline: routes, caching validators, the security headers
/// on every answer, and the page's promises to its Content-Security-Policy.
@Suite struct ConsoleSurfaceTests {
    let catalog = ConsoleAssetCatalog.embedded

    func send(
        _ method: String, _ target: String, headers: [(String, String)] = [],
        surfaces: [any APISurface] = [ConsoleSurface()]
    ) async throws -> TestResponse {
        var h = HTTPHeaders()
        h.add("Host", "gateway.test")
        for (name, value) in headers { h.add(name, value) }
        let request = HTTPRequest(method: HTTPMethod(method), target: target, headers: h, body: BufferByteStream([]))
        let registry = MetricsRegistry()
        let responder = try GatewayResponder(
            ops: OpsEndpoints(readiness: Readiness(), registry: registry), surfaces: surfaces,
            authentication: FixedAuthentication(principal: nil), metrics: HTTPMetrics(registry: registry),
            accessLog: .disabled)
        let response = await responder.respond(to: request, record: AccessRecord(requestID: "test"))
        return TestResponse(status: response.status, headers: response.headers, body: try await readBody(response.body))
    }

    func expectSecurityHeaders(_ response: TestResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        let csp = response["Content-Security-Policy"] ?? ""
        #expect(csp.contains("script-src 'self'"), sourceLocation: sourceLocation)
        #expect(csp.contains("default-src 'none'"), sourceLocation: sourceLocation)
        #expect(csp.contains("frame-ancestors 'none'"), sourceLocation: sourceLocation)
        #expect(!csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"), sourceLocation: sourceLocation)
        #expect(response["X-Frame-Options"] == "DENY", sourceLocation: sourceLocation)
        #expect(response["X-Content-Type-Options"] == "nosniff", sourceLocation: sourceLocation)
    }

    @Test func thePageIsRevalidatedAndPointsAtTheCurrentVersion() async throws {
        let page = try await send("GET", "/console/")
        #expect(page.status == 200)
        #expect(page["Content-Type"] == "text/html; charset=utf-8")
        #expect(page["Cache-Control"] == "no-cache")
        #expect(page["ETag"] == catalog.index.etag)
        expectSecurityHeaders(page)
        #expect(page.text.contains("static/\(catalog.version)/app.js"))
        #expect(!page.text.contains("{{version}}"))
        #expect(try await send("GET", "/console/index.html").body == page.body)
    }

    @Test func theBarePathRedirectsRelatively() async throws {
        let response = try await send("GET", "/console")
        #expect(response.status == 308)
        #expect(response["Location"] == "console/")
        expectSecurityHeaders(response)
    }

    @Test func versionedFilesAreImmutableAndOthersRevalidated() async throws {
        let current = try await send("GET", "/console/static/\(catalog.version)/app.js")
        #expect(current.status == 200)
        #expect(current["Content-Type"] == "text/javascript; charset=utf-8")
        #expect(current["Cache-Control"] == "public, max-age=31536000, immutable")
        #expect(current["ETag"]?.hasPrefix("\"") == true)
        expectSecurityHeaders(current)
        // A page from an instance with other files still loads, but nothing is pinned under a foreign version.
        let other = try await send("GET", "/console/static/0123456789abcdef/app.js")
        #expect(other.status == 200 && other.body == current.body)
        #expect(other["Cache-Control"] == "no-cache")
        let css = try await send("GET", "/console/static/\(catalog.version)/console.css")
        #expect(css["Content-Type"] == "text/css; charset=utf-8")
    }

    @Test func aMatchingValidatorGets304WithTheSameHeaders() async throws {
        let first = try await send("GET", "/console/static/\(catalog.version)/api.js")
        let etag = try #require(first["ETag"])
        for header in [etag, "W/\(etag)", "\"nope\", \(etag)", "*"] {
            let again = try await send(
                "GET", "/console/static/\(catalog.version)/api.js", headers: [("If-None-Match", header)])
            #expect(again.status == 304, "If-None-Match: \(header)")
            #expect(again.body.isEmpty)
            #expect(again["ETag"] == etag)
            #expect(again["Cache-Control"] == first["Cache-Control"])
            expectSecurityHeaders(again)
        }
        let changed = try await send("GET", "/console/", headers: [("If-None-Match", "\"stale\"")])
        #expect(changed.status == 200 && !changed.body.isEmpty)
    }

    @Test(arguments: [
        "/console/nope", "/console/static/\(ConsoleAssetCatalog.embedded.version)/missing.js",
        "/console/static/\(ConsoleAssetCatalog.embedded.version)/index.html",
        "/console/static/\(ConsoleAssetCatalog.embedded.version)/../app.js", "/console/static//app.js",
        "/console/static/\(ConsoleAssetCatalog.embedded.version)/",
    ])
    func unknownPathsAre404(_ target: String) async throws {
        let response = try await send("GET", target)
        #expect(response.status == 404, "\(target)")
        expectSecurityHeaders(response)
        #expect(response["Cache-Control"] == "no-store")
    }

    @Test func onlyReadsAreServed() async throws {
        let post = try await send("POST", "/console/")
        #expect(post.status == 405)
        #expect(post["Allow"] == "GET, HEAD, OPTIONS")
        let head = try await send("HEAD", "/console/static/\(catalog.version)/app.js")
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(head["Content-Length"] == String(try #require(catalog.asset(named: "app.js")).body.count))
    }

    @Test func otherPathsAreNotTheConsoles() async throws {
        let surface = ConsoleSurface()
        for path in ["/consoles", "/console-x/", "/v0/b/x/o", "/"] {
            let request = HTTPRequest(method: .get, target: path, headers: [:], body: BufferByteStream([]))
            #expect(!surface.answers(request), "\(path)")
        }
        #expect(try await send("GET", "/consoles").status == 404)
    }

    @Test func routeTemplatesNameNoFile() async {
        let surface = ConsoleSurface()
        func template(_ path: String) async -> String {
            let record = AccessRecord(requestID: "t")
            _ = await surface.handle(
                HTTPRequest(method: .get, target: path, headers: [:], body: BufferByteStream([])), principal: nil,
                record: record)
            return record.routeTemplate ?? "(not routed)"
        }
        #expect(await template("/console/") == "/console/")
        #expect(await template("/console/static/abc/app.js") == "/console/static/{version}/{file}")
        #expect(await template("/console/anything/else") == "/console/unmatched")
    }
}

/// The files in Sources/Gateway/Console/Assets are what the binary serves, and they keep the promises the
/// page's Content-Security-Policy depends on.
@Suite struct ConsoleAssetsTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/Gateway/Console/Assets")

    static func filesOnDisk() throws -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        let walker = try #require(FileManager.default.enumerator(atPath: directory.path))
        for case let name as String in walker where !name.hasPrefix(".") {
            var isDirectory: ObjCBool = false
            let path = directory.appendingPathComponent(name).path
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
                continue
            }
            out[name] = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        }
        return out
    }

    @Test func theBinaryServesExactlyTheFilesInTheSourceTree() throws {
        let disk = try Self.filesOnDisk()
        let catalog = ConsoleAssetCatalog.embedded
        #expect(Set(catalog.names) == Set(disk.keys))
        for (name, bytes) in disk where name != ConsoleAssetCatalog.indexName {
            #expect(catalog.asset(named: Substring(name))?.body == bytes, "\(name)")
        }
        let index = try #require(disk[ConsoleAssetCatalog.indexName])
        #expect(catalog.index.body == ConsoleAssetCatalog.replacing("{{version}}", with: catalog.version, in: index))
    }

    @Test func theVersionChangesWithAnyFile() {
        let a = ConsoleAssetCatalog(files: [("index.html", Array("x".utf8)), ("a.js", Array("1".utf8))])
        let b = ConsoleAssetCatalog(files: [("index.html", Array("x".utf8)), ("a.js", Array("2".utf8))])
        let c = ConsoleAssetCatalog(files: [("index.html", Array("x".utf8)), ("b.js", Array("1".utf8))])
        #expect(a.version != b.version && a.version != c.version && b.version != c.version)
        #expect(
            a.version
                == ConsoleAssetCatalog(files: [("a.js", Array("1".utf8)), ("index.html", Array("x".utf8))]).version)
    }

    @Test func thePageHasNoInlineScriptOrStyle() throws {
        let page = String(decoding: try #require(try Self.filesOnDisk()[ConsoleAssetCatalog.indexName]), as: UTF8.self)
        // Every <script> loads a file and has no body; no style element or attribute; no inline handlers.
        let scripts = page.components(separatedBy: "<script").dropFirst()
        #expect(!scripts.isEmpty)
        for script in scripts {
            let tag = script.prefix { $0 != ">" }
            #expect(tag.contains("src=\"static/{{version}}/"), "\(tag)")
            #expect(script.dropFirst(tag.count + 1).hasPrefix("</script>"), "inline script: \(script.prefix(80))")
        }
        #expect(!page.contains("<style"))
        #expect(page.range(of: #"\sstyle\s*="#, options: .regularExpression) == nil)
        #expect(page.range(of: #"\son[a-z]+\s*="#, options: .regularExpression) == nil)
        #expect(!page.contains("javascript:"))
    }

    @Test func theScriptsUseNoEvalAndNoMarkupFromStrings() throws {
        for (name, bytes) in try Self.filesOnDisk() where name.hasSuffix(".js") {
            let text = String(decoding: bytes, as: UTF8.self)
            for banned in [
                "eval(", "new Function", ".innerHTML", ".outerHTML", "insertAdjacentHTML", "document.write",
                "setAttribute('style'", "setTimeout('", "setTimeout(\"",
            ] {
                #expect(!text.contains(banned), "\(name) uses \(banned)")
            }
        }
    }

    @Test func everyReferenceResolves() throws {
        let disk = try Self.filesOnDisk()
        let page = String(decoding: try #require(disk[ConsoleAssetCatalog.indexName]), as: UTF8.self)
        let pattern = try NSRegularExpression(pattern: #"static/\{\{version\}\}/([A-Za-z0-9._/-]+)"#)
        let references = pattern.matches(in: page, range: NSRange(page.startIndex..., in: page))
            .compactMap { Range($0.range(at: 1), in: page).map { String(page[$0]) } }
        #expect(!references.isEmpty)
        for name in references { #expect(disk[name] != nil, "index.html names \(name)") }
        let imports = try NSRegularExpression(pattern: #"from '\./([A-Za-z0-9._-]+)'"#)
        for (name, bytes) in disk where name.hasSuffix(".js") {
            let text = String(decoding: bytes, as: UTF8.self)
            for match in imports.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let target = String(text[Range(match.range(at: 1), in: text)!])
                #expect(disk[target] != nil, "\(name) imports \(target)")
            }
        }
    }
}
