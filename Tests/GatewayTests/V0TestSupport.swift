import Foundation
import Synchronization
import Testing
@testable import Gateway
import HTTPServer
import PortcullisCore
import Storage

/// An authorizer driven by a closure, recording every request it judged.
final class ScriptedAuthorizer: Authorizer {
    private let decide: @Sendable (AccessRequest) -> Bool
    private let seen = Mutex<[AccessRequest]>([])

    init(_ decide: @escaping @Sendable (AccessRequest) -> Bool) { self.decide = decide }

    func authorize(_ request: AccessRequest) -> AccessDecision {
        seen.withLock { $0.append(request) }
        return AccessDecision(allowed: decide(request))
    }

    var requests: [AccessRequest] { seen.withLock { $0 } }
}

/// A body stream that hands out its bytes in fixed-size pieces (to split multipart boundaries across chunk
/// edges) and may hide its length (no Content-Length).
final class ChunkedStream: ByteStream {
    private let state: Mutex<(bytes: [UInt8], offset: Int)>
    private let piece: Int
    let expectedLength: Int64?

    init(_ bytes: [UInt8], piece: Int, announceLength: Bool = true) {
        state = Mutex((bytes, 0))
        self.piece = piece
        expectedLength = announceLength ? Int64(bytes.count) : nil
    }

    func next(maxLength: Int) async throws -> [UInt8]? {
        state.withLock { s in
            guard s.offset < s.bytes.count else { return nil }
            let end = min(s.bytes.count, s.offset + min(piece, maxLength))
            defer { s.offset = end }
            return Array(s.bytes[s.offset..<end])
        }
    }

    func cancel() {}
}

struct TestResponse {
    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }
    var json: JSONValue? { try? JSONValue.parse(body) }
    subscript(header: String) -> String? { headers[header] }
}

/// Reads a response body completely (bytes, stream, or a file region via `pread`).
func readBody(_ body: ResponseBody) async throws -> [UInt8] {
    switch body {
    case .empty: return []
    case .bytes(let bytes): return bytes
    case .stream(let stream, _): return try await stream.collect(limit: 64 << 20)
    case .file(let region):
        var out = [UInt8](repeating: 0, count: Int(region.length))
        var done = 0
        while done < out.count {
            let total = out.count
            let n = out.withUnsafeMutableBytes { buffer in
                pread(region.descriptor, buffer.baseAddress! + done, total - done, off_t(region.offset) + off_t(done))
            }
            guard n > 0 else { break }
            done += n
        }
        return Array(out[..<done])
    }
}

/// A V0API over a fresh EmbeddedBackend directory, driven in-process.
struct V0Harness {
    static let bucket = "default-bucket"
    let api: V0API
    let backend: EmbeddedBackend
    let signer: CapabilitySigner
    let directory: String

    init(authorizer: any Authorizer = AllowAllAuthorizer(),
         configuration: V0Configuration = V0Configuration(publicURL: "http://gateway.test"),
         signer: CapabilitySigner = CapabilitySigner(keys: [SigningKey(id: "k1", secret: Array("secret-1".utf8))]),
         directory: String? = nil) throws {
        let dir = directory ?? (NSTemporaryDirectory() + "v0tests-" + UUID().uuidString)
        self.directory = dir
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        backend = try EmbeddedBackend.open(directory: dir, bucket: Self.bucket)
        self.signer = signer
        api = V0API(configuration: configuration, backends: [Self.bucket: backend], signer: signer,
                    authorizer: { authorizer }, metrics: MetricsRegistry(), logger: .disabled)
    }

    /// Another API instance over the same storage and signing key (scale-out tests).
    func sibling(authorizer: any Authorizer = AllowAllAuthorizer()) -> V0API {
        V0API(configuration: V0Configuration(publicURL: "http://gateway.test"), backends: [Self.bucket: backend],
              signer: signer, authorizer: { authorizer }, metrics: MetricsRegistry(), logger: .disabled)
    }

    @discardableResult
    func send(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [],
              stream: (any ByteStream)? = nil, principal: Principal? = nil, api: V0API? = nil,
              context: RequestContext = RequestContext(requestID: "test")) async throws -> TestResponse {
        var h = HTTPHeaders()
        h.add("Host", "gateway.test")
        for (name, value) in headers { h.add(name, value) }
        let request = HTTPRequest(method: HTTPMethod(method), target: target, headers: h,
                                  body: stream ?? BufferByteStream(body))
        let response = await (api ?? self.api).handle(request, principal: principal, context: context)
        return TestResponse(status: response.status, headers: response.headers, body: try await readBody(response.body))
    }

    /// Uploads `data` with a media upload and returns the metadata JSON.
    @discardableResult
    func put(_ name: String, _ data: [UInt8], contentType: String = "text/plain",
             principal: Principal? = nil) async throws -> JSONValue {
        let r = try await send("POST", "/v0/b/\(Self.bucket)/o?name=\(PercentDecoding.encodeComponent(name))",
                               headers: [("Content-Type", contentType)], body: data, principal: principal)
        #expect(r.status == 200, "upload of \(name): \(r.status) \(r.text)")
        return try #require(r.json)
    }

    static func objectPath(_ name: String) -> String {
        "/v0/b/\(bucket)/o/\(PercentDecoding.encodeComponent(name))"
    }
}

let alice = Principal(uid: "alice", claims: ["sub": .string("alice"), "email": .string("a@example.com")])

func randomBytes(_ count: Int) -> [UInt8] {
    var g = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: 0...255, using: &g) }
}
