import Foundation
import HTTPServer
import PortcullisCore
import Rules
import Storage
import Testing
import Upstream

@testable import Gateway
@testable import Service

/// The v0 resumable protocol end to end on a `gs://` bucket (fake-gcs-server from `scripts/emulators.sh`):
/// two gateway instances, each with its own `GCSBackend`, share nothing but the signing key and the GCS bucket.
@Suite(
    .enabled(
        if: ProcessInfo.processInfo.environment["PORTCULLIS_TEST_GCS_ENDPOINT"] != nil,
        "PORTCULLIS_TEST_GCS_ENDPOINT is not set (run scripts/emulators.sh start)"))
struct GCSResumableGatewayTests {
    static let client = UpstreamClient()
    static let bucket = "photos"

    /// Two API instances over one fresh emulator bucket.
    func instances() async throws -> (V0API, V0API) {
        let endpoint = try #require(ProcessInfo.processInfo.environment["PORTCULLIS_TEST_GCS_ENDPOINT"])
        let gcsBucket = "gw-\(UUID().uuidString.lowercased().prefix(18))"
        let created = try await Self.client.fetch(
            UpstreamRequest(
                method: "POST", url: "\(endpoint)/storage/v1/b?project=test",
                headers: [("Content-Type", "application/json")],
                body: .bytes(Array("{\"name\":\"\(gcsBucket)\"}".utf8))), maxBytes: 1 << 20)
        try #require(created.status == 200)
        let signer = CapabilitySealer(keys: [SigningKey(id: "k1", secret: Array("secret-1".utf8))])
        func api() throws -> V0API {
            let backend = try GCSBackend(
                configuration: GCSBackendConfiguration(bucket: gcsBucket, endpoint: endpoint),
                client: Self.client)
            let service = StorageService(
                configuration: ServiceConfiguration(), backends: [Self.bucket: backend],
                sealer: signer, rules: RulesStore(fixed: AllowAllRules()),
                metrics: MetricsRegistry(), logger: .disabled)
            return V0API(
                service: service, configuration: V0Configuration(publicURL: "http://gateway.test"),
                logger: .disabled)
        }
        return (try api(), try api())
    }

    func send(
        _ api: V0API, _ method: String, _ target: String, headers: [(String, String)] = [],
        body: [UInt8] = []
    ) async throws -> TestResponse {
        var h = HTTPHeaders()
        h.add("Host", "gateway.test")
        for (name, value) in headers { h.add(name, value) }
        let request = HTTPRequest(method: HTTPMethod(method), target: target, headers: h, body: BufferByteStream(body))
        let response = await api.handle(request, principal: alice, record: AccessRecord(requestID: "test"))
        return TestResponse(status: response.status, headers: response.headers, body: try await readBody(response.body))
    }

    func start(_ api: V0API, name: String, size: Int) async throws -> String {
        let r = try await send(
            api, "POST", "/v0/b/\(Self.bucket)/o?name=\(PercentEncoding.uriComponent.encode(name))",
            headers: [
                ("X-Goog-Upload-Protocol", "resumable"), ("X-Goog-Upload-Command", "start"),
                ("X-Goog-Upload-Header-Content-Length", String(size)),
                ("X-Goog-Upload-Header-Content-Type", "video/mp4"), ("Content-Type", "application/json; charset=utf-8"),
            ], body: Array(#"{"name":"\#(name)","contentType":"video/mp4","metadata":{"camera":"x100"}}"#.utf8))
        #expect(r.status == 200, "start: \(r.status) \(r.text)")
        #expect(r["X-Goog-Upload-Status"] == "active")
        let url = try #require(r["X-Goog-Upload-URL"])
        return String(url.dropFirst("http://gateway.test".count))
    }

    func command(
        _ api: V0API, _ target: String, _ command: String, offset: Int? = nil,
        body: [UInt8] = []
    ) async throws -> TestResponse {
        var headers = [("X-Goog-Upload-Command", command)]
        if let offset { headers.append(("X-Goog-Upload-Offset", String(offset))) }
        return try await send(api, "POST", target, headers: headers, body: body)
    }

    /// A few MiB in 1 MiB chunks (a 256 KiB multiple, as the JS SDK sends them), alternating instances, then
    /// `upload, finalize` with the unaligned rest; a misplaced chunk is refused with the persisted size.
    @Test func resumableUploadOfSeveralMiBAcrossInstances() async throws {
        let (one, two) = try await instances()
        let data = randomBytes(4 * (1 << 20) + 1000)
        let url = try await start(one, name: "videos/clip.mp4", size: data.count)
        let chunk = 1 << 20
        var offset = 0
        for index in 0..<4 {
            let r = try await command(
                index % 2 == 0 ? one : two, url, "upload", offset: offset,
                body: Array(data[offset..<(offset + chunk)]))
            offset += chunk
            #expect(r.status == 200, "chunk \(index): \(r.status) \(r.text)")
            #expect(r["X-Goog-Upload-Size-Received"] == String(offset))
        }
        var r = try await command(two, url, "upload", offset: chunk, body: Array(data[chunk..<(2 * chunk)]))
        #expect(r.status == 400)
        #expect(r["X-Goog-Upload-Status"] == "active")
        #expect(r["X-Goog-Upload-Size-Received"] == String(offset))
        r = try await command(one, url, "query")
        #expect(r["X-Goog-Upload-Status"] == "active")
        #expect(r["X-Goog-Upload-Size-Received"] == String(offset))

        r = try await command(two, url, "upload, finalize", offset: offset, body: Array(data[offset...]))
        #expect(r.status == 200, "\(r.text)")
        #expect(r["X-Goog-Upload-Status"] == "final")
        let meta = try #require(r.json)
        #expect(meta["size"] == .string(String(data.count)))
        #expect(meta["contentType"] == .string("video/mp4"))
        #expect(meta["metadata"]?["camera"] == .string("x100"))
        #expect(meta["downloadTokens"]?.stringValue?.count == 36)
        // A repeated finalize replays the result; the object reads back whole.
        r = try await command(one, url, "finalize")
        #expect(r.status == 200 && r["X-Goog-Upload-Status"] == "final", "\(r.status) \(r.text)")
        let back = try await send(
            one, "GET", "/v0/b/\(Self.bucket)/o/\(PercentEncoding.uriComponent.encode("videos/clip.mp4"))?alt=media")
        #expect(back.status == 200)
        #expect(back.body == data)
        // The upload's record is not listed.
        let list = try await send(two, "GET", "/v0/b/\(Self.bucket)/o?prefix=&delimiter=%2F")
        #expect(list.json?["prefixes"]?.arrayValue == [.string("videos/")])
        #expect(list.json?["items"]?.arrayValue?.isEmpty ?? true)
    }

    @Test func cancelledUploadRefusesChunks() async throws {
        let (one, two) = try await instances()
        let url = try await start(one, name: "gone.bin", size: 600_000)
        var r = try await command(one, url, "upload", offset: 0, body: randomBytes(262_144))
        #expect(r.status == 200)
        r = try await command(two, url, "cancel")
        #expect(r.status == 200 && r["X-Goog-Upload-Status"] == "cancelled", "\(r.status) \(r.text)")
        r = try await command(one, url, "query")
        #expect(r["X-Goog-Upload-Status"] == "cancelled")
        r = try await command(two, url, "upload", offset: 262_144, body: randomBytes(1000))
        #expect(r.status == 400)
        #expect(r["X-Goog-Upload-Status"] == "cancelled")
        let head = try await send(one, "GET", "/v0/b/\(Self.bucket)/o/gone.bin")
        #expect(head.status == 404)
    }
}
