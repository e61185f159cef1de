import Foundation
import HTTPServer
import PortcullisCore
import Rules
import Storage
import Synchronization
import Testing

@testable import Gateway
@testable import Service

/// Rules driven by a closure, recording every request they judged.
final class ScriptedRules: RulesEngine {
    private let decide: @Sendable (RulesRequest) -> Bool
    private let seen = Mutex<[RulesRequest]>([])

    init(_ decide: @escaping @Sendable (RulesRequest) -> Bool) { self.decide = decide }

    func evaluate(_ request: RulesRequest) -> RulesDecision {
        seen.withLock { $0.append(request) }
        return RulesDecision(allowed: decide(request))
    }

    func explain(_ request: RulesRequest) -> RulesDecision { evaluate(request) }

    var requests: [RulesRequest] { seen.withLock { $0 } }
}

/// Denies everything (the server's stance with no rules file).
struct DenyAllRules: RulesEngine {
    func evaluate(_ request: RulesRequest) -> RulesDecision { RulesDecision(allowed: false) }
    func explain(_ request: RulesRequest) -> RulesDecision { RulesDecision(allowed: false, explanation: "deny-all") }
}

/// Authentication that trusts the test: every request is `principal`'s.
struct FixedAuthentication: RequestAuthenticating {
    let principal: Principal?
    func authenticate(authorization: String?) async throws(ServiceError) -> Principal? { principal }
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

/// The v0 surface over a `StorageService` on a fresh EmbeddedBackend directory, driven in-process through the
/// gateway pipeline (CORS, HEAD handling, error shapes), with the principal each request names.
struct V0Harness {
    static let bucket = "default-bucket"
    let api: V0API
    let service: StorageService
    let backend: EmbeddedBackend
    let sealer: CapabilitySealer
    let directory: String
    let cors: CORSPolicy

    init(
        rules: any RulesEngine = AllowAllRules(),
        configuration: V0Configuration = V0Configuration(publicURL: "http://gateway.test"),
        service serviceConfiguration: ServiceConfiguration = ServiceConfiguration(),
        corsOrigins: [String] = ["*"],
        sealer: CapabilitySealer = CapabilitySealer(keys: [SigningKey(id: "k1", secret: Array("secret-1".utf8))]),
        directory: String? = nil
    ) throws {
        let dir = directory ?? (NSTemporaryDirectory() + "v0tests-" + UUID().uuidString)
        self.directory = dir
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        backend = try EmbeddedBackend.open(directory: dir, bucket: Self.bucket)
        self.sealer = sealer
        self.cors = CORSPolicy(origins: corsOrigins)
        service = StorageService(
            configuration: serviceConfiguration, backends: [Self.bucket: backend], sealer: sealer,
            rules: RulesStore(fixed: rules), metrics: MetricsRegistry(), logger: .disabled)
        api = V0API(service: service, configuration: configuration, logger: .disabled)
    }

    /// Another surface over the same storage and signing key, judged by other rules (scale-out tests).
    func sibling(rules: any RulesEngine = AllowAllRules()) -> V0API {
        V0API(
            service: StorageService(
                configuration: service.configuration, backends: [Self.bucket: backend],
                sealer: sealer, rules: RulesStore(fixed: rules), metrics: MetricsRegistry(),
                logger: .disabled),
            configuration: V0Configuration(publicURL: "http://gateway.test"), logger: .disabled)
    }

    @discardableResult
    func send(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [],
        stream: (any ByteStream)? = nil, principal: Principal? = nil, api: V0API? = nil,
        record: AccessRecord = AccessRecord(requestID: "test")
    ) async throws -> TestResponse {
        try await respond(
            through: [api ?? self.api], cors: cors, method, target, headers: headers, body: body,
            stream: stream, principal: principal, record: record)
    }

    /// Uploads `data` with a media upload and returns the metadata JSON.
    @discardableResult
    func put(
        _ name: String, _ data: [UInt8], contentType: String = "text/plain",
        principal: Principal? = nil
    ) async throws -> JSONValue {
        let r = try await send(
            "POST", "/v0/b/\(Self.bucket)/o?name=\(PercentEncoding.uriComponent.encode(name))",
            headers: [("Content-Type", contentType)], body: data, principal: principal)
        #expect(r.status == 200, "upload of \(name): \(r.status) \(r.text)")
        return try #require(r.json)
    }

    static func objectPath(_ name: String) -> String {
        "/v0/b/\(bucket)/o/\(PercentEncoding.uriComponent.encode(name))"
    }
}

/// One request through a gateway pipeline over `surfaces` (CORS, HEAD handling, error shapes), as `principal`.
func respond(
    through surfaces: [any APISurface], cors: CORSPolicy, _ method: String, _ target: String,
    headers: [(String, String)], body: [UInt8], stream: (any ByteStream)?, principal: Principal?,
    record: AccessRecord
) async throws -> TestResponse {
    var h = HTTPHeaders()
    h.add("Host", "gateway.test")
    for (name, value) in headers { h.add(name, value) }
    let request = HTTPRequest(
        method: HTTPMethod(method), target: target, headers: h, body: stream ?? BufferByteStream(body))
    let registry = MetricsRegistry()
    let responder = try GatewayResponder(
        ops: OpsEndpoints(readiness: Readiness(), registry: registry), surfaces: surfaces,
        authentication: FixedAuthentication(principal: principal), metrics: HTTPMetrics(registry: registry),
        accessLog: .disabled, cors: cors)
    let response = await responder.respond(to: request, record: record)
    return TestResponse(status: response.status, headers: response.headers, body: try await readBody(response.body))
}

let alice = Principal(uid: "alice", claims: ["sub": .string("alice"), "email": .string("a@example.com")])
let operatorAdmin = Principal(uid: "admin", claims: [:], isAdmin: true)

func randomBytes(_ count: Int) -> [UInt8] {
    var g = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: 0...255, using: &g) }
}
