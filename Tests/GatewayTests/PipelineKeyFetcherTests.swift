import Gateway
import HTTPServer
import PortcullisCore
import Testing
import Upstream

/// UpstreamKeyFetcher against a loopback HTTPServer serving a key document.
@Suite struct PipelineKeyFetcherTests {
    struct KeyDocument: HTTPResponder {
        func respond(to request: HTTPRequest) async -> HTTPResponse {
            switch request.path {
            case "/keys.json":
                return HTTPResponse(status: 200, headers: ["Cache-Control": "public, max-age=120, must-revalidate"],
                                    body: .bytes(Array(#"{"keys":[]}"#.utf8)))
            case "/huge":
                return HTTPResponse(status: 200, body: .bytes([UInt8](repeating: 0x20, count: 2 << 20)))
            default:
                return HTTPResponse(status: 404, body: .bytes(Array("nope".utf8)))
            }
        }
    }

    @Test func fetchesBodyAndMaxAgeAndRefusesFailures() async throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0),
                                responder: KeyDocument(), logger: .disabled)
        let port = try server.start()
        defer { server.stop() }
        let fetcher = UpstreamKeyFetcher(client: UpstreamClient())
        let (body, maxAge) = try await fetcher.fetch("http://127.0.0.1:\(port)/keys.json")
        #expect(body == Array(#"{"keys":[]}"#.utf8))
        #expect(maxAge == 120)
        await #expect(throws: (any Error).self) { _ = try await fetcher.fetch("http://127.0.0.1:\(port)/missing") }
        await #expect(throws: (any Error).self) { _ = try await fetcher.fetch("http://127.0.0.1:\(port)/huge") }
    }
}
