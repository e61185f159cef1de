import Foundation
import HTTPServer
import PortcullisCore
import Rules
import Storage
import Testing

@testable import Gateway
@testable import Service

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The v0 API behind the real HTTP server on 127.0.0.1:0, driven by a real client (URLSession).
@Suite struct V0SocketTests {
    /// Maps `Authorization: Firebase alice` to a principal, so tests can exercise rules without the Auth target.
    struct Responder: HTTPResponder {
        let api: V0API
        func respond(to request: HTTPRequest) async -> HTTPResponse {
            let principal: Principal? = request.headers["Authorization"] == "Firebase alice" ? alice : nil
            let registry = MetricsRegistry()
            let responder = try! GatewayResponder(
                ops: OpsEndpoints(readiness: Readiness(), registry: registry), surfaces: [api],
                authentication: FixedAuthentication(principal: principal), metrics: HTTPMetrics(registry: registry),
                accessLog: .disabled)
            return await responder.respond(to: request)
        }
    }

    final class Live: Sendable {
        let harness: V0Harness
        let server: HTTPServer
        let base: String
        let session: URLSession

        init(authorizer: any RulesEngine = AllowAllRules()) throws {
            harness = try V0Harness(rules: authorizer, configuration: V0Configuration())
            server = HTTPServer(
                configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0),
                responder: Responder(api: harness.api), logger: .disabled)
            let port = try server.start()
            base = "http://127.0.0.1:\(port)"
            let configuration = URLSessionConfiguration.ephemeral
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            configuration.urlCache = nil
            session = URLSession(configuration: configuration)
        }

        deinit { server.stop() }

        func request(
            _ method: String, _ path: String, headers: [String: String] = [:],
            body: [UInt8]? = nil
        ) async throws -> (Int, HTTPURLResponse, [UInt8]) {
            let url = path.hasPrefix("http") ? path : base + path
            var request = URLRequest(url: URL(string: url)!)
            request.httpMethod = method
            for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            let (data, response): (Data, URLResponse)
            if let body {
                (data, response) = try await session.upload(for: request, from: Data(body))
            } else {
                (data, response) = try await session.data(for: request)
            }
            let http = response as! HTTPURLResponse
            return (http.statusCode, http, Array(data))
        }
    }

    @Test func uploadDownloadRangesOverTheWire() async throws {
        let live = try Live()
        let data = randomBytes(2 << 20)
        let boundary = "9431149156168"
        let body = multipartBody(
            boundary: boundary, json: #"{"name":"wire/big.bin","contentType":"application/x-big"}"#,
            contentType: "application/x-big", data: data)
        let (status, _, reply) = try await live.request(
            "POST", "/v0/b/default-bucket/o?name=wire%2Fbig.bin",
            headers: [
                "X-Goog-Upload-Protocol": "multipart", "Content-Type": "multipart/related; boundary=\(boundary)",
            ], body: body)
        #expect(status == 200)
        let meta = try JSONValue.parse(reply)
        #expect(meta["size"] == .string(String(data.count)))

        let (s1, r1, b1) = try await live.request("GET", "/v0/b/default-bucket/o/wire%2Fbig.bin?alt=media")
        #expect(s1 == 200)
        #expect(b1 == data)
        #expect(r1.value(forHTTPHeaderField: "Content-Length") == String(data.count))
        #expect(r1.value(forHTTPHeaderField: "Accept-Ranges") == "bytes")

        let (s2, r2, b2) = try await live.request(
            "GET", "/v0/b/default-bucket/o/wire%2Fbig.bin?alt=media",
            headers: ["Range": "bytes=-1000"])
        #expect(s2 == 206)
        #expect(b2 == Array(data.suffix(1000)))
        #expect(
            r2.value(forHTTPHeaderField: "Content-Range")
                == "bytes \(data.count - 1000)-\(data.count - 1)/\(data.count)")

        let (s3, r3, _) = try await live.request(
            "GET", "/v0/b/default-bucket/o/wire%2Fbig.bin?alt=media",
            headers: ["Range": "bytes=\(data.count)-"])
        #expect(s3 == 416)
        #expect(r3.value(forHTTPHeaderField: "Content-Range") == "bytes */\(data.count)")

        let (s4, r4, b4) = try await live.request("HEAD", "/v0/b/default-bucket/o/wire%2Fbig.bin?alt=media")
        #expect(s4 == 200)
        #expect(b4.isEmpty)
        #expect(r4.value(forHTTPHeaderField: "Content-Length") == String(data.count))

        let (s5, _, b5) = try await live.request("GET", "/v0/b/default-bucket/o?prefix=wire%2F&delimiter=%2F")
        #expect(s5 == 200)
        #expect(try JSONValue.parse(b5)["items"]?.arrayValue?.count == 1)

        let (s6, _, _) = try await live.request("DELETE", "/v0/b/default-bucket/o/wire%2Fbig.bin")
        #expect(s6 == 204)
    }

    @Test func resumableUploadOverTheWireUsesTheAbsoluteURL() async throws {
        let authorizer = ScriptedRules { $0.auth?.uid == "alice" }
        let live = try Live(authorizer: authorizer)
        let data = randomBytes(600_000)
        let (status, start, _) = try await live.request(
            "POST", "/v0/b/default-bucket/o?name=r%2Ffile.bin",
            headers: [
                "Authorization": "Firebase alice", "X-Goog-Upload-Protocol": "resumable",
                "X-Goog-Upload-Command": "start",
                "X-Goog-Upload-Header-Content-Length": String(data.count), "X-Goog-Upload-Header-Content-Type": "x/y",
                "Content-Type": "application/json; charset=utf-8",
            ], body: Array(#"{"name":"r/file.bin"}"#.utf8))
        #expect(status == 200)
        let url = try #require(start.value(forHTTPHeaderField: "X-Goog-Upload-URL"))
        #expect(url.hasPrefix(live.base + "/v0/b/default-bucket/o?name=r%2Ffile.bin&upload_id="))
        let chunk = 262_144
        var offset = 0
        while offset < data.count {
            let end = min(data.count, offset + chunk)
            let last = end == data.count
            let (s, r, b) = try await live.request(
                "PUT", url,
                headers: [
                    "X-Goog-Upload-Command": last ? "upload, finalize" : "upload",
                    "X-Goog-Upload-Offset": String(offset),
                ],
                body: Array(data[offset..<end]))
            #expect(s == 200)
            if last {
                #expect(r.value(forHTTPHeaderField: "X-Goog-Upload-Status") == "final")
                #expect(try JSONValue.parse(b)["size"] == .string(String(data.count)))
            } else {
                #expect(r.value(forHTTPHeaderField: "X-Goog-Upload-Size-Received") == String(end))
            }
            offset = end
        }
        let (s, _, body) = try await live.request(
            "GET", "/v0/b/default-bucket/o/r%2Ffile.bin?alt=media",
            headers: ["Authorization": "Firebase alice"])
        #expect(s == 200)
        #expect(body == data)
        let (denied, _, _) = try await live.request("GET", "/v0/b/default-bucket/o/r%2Ffile.bin?alt=media")
        #expect(denied == 403)
    }

    @Test func corsPreflightOverTheWire() async throws {
        let live = try Live()
        let (status, r, _) = try await live.request(
            "OPTIONS", "/v0/b/default-bucket/o",
            headers: [
                "Origin": "http://localhost:3000", "Access-Control-Request-Method": "PUT",
                "Access-Control-Request-Headers": "x-goog-upload-command,x-goog-upload-offset",
            ])
        #expect(status == 204)
        #expect(r.value(forHTTPHeaderField: "Access-Control-Allow-Origin") == "http://localhost:3000")
        #expect(r.value(forHTTPHeaderField: "Access-Control-Allow-Methods")?.contains("PUT") == true)
    }
}
