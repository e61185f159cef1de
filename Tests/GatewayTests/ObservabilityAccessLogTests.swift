import HTTPServer
import PortcullisCore
import Service
import Synchronization
import Testing

@testable import Gateway

/// Collects access-log lines in memory.
final class CapturedLines: Sendable {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    var joined: String { all.joined() }
    func append(_ bytes: [UInt8]) { lines.withLock { $0.append(String(decoding: bytes, as: UTF8.self)) } }
}

@Suite struct ObservabilityAccessLogTests {
    private func sampleEntry() -> AccessLogEntry {
        AccessLogEntry(
            time: Timestamp(millisecondsSinceEpoch: 1_700_000_000_123), requestID: "req-1",
            remoteAddress: "127.0.0.1:5000",
            method: "GET", route: "/v0/b/{bucket}/o/{object}", target: "/v0/b/b/o/a%2Fb.txt?alt=media&token=REDACTED",
            bucket: "b", object: "a/b.txt", status: 206, bytesIn: 0, bytesOut: 100, durationNanos: 1_234_567,
            timeToFirstByteNanos: 456_000, upstreamNanos: 0, principalUID: "alice", decision: "allow",
            range: "0-99", userAgent: "curl/8 \"x\"", traceID: "4bf92f3577b34da6a3ce929d0e0e4736")
    }

    @Test func jsonLineHasEveryField() throws {
        let line = String(decoding: sampleEntry().rendered(.json), as: UTF8.self)
        #expect(line.hasSuffix("}\n"))
        #expect(line.filter { $0 == "\n" }.count == 1)
        let object = try #require(try JSONValue.parse(String(line.dropLast())).objectValue)
        for key in [
            "time", "request_id", "remote_addr", "method", "route", "path", "bucket", "object", "status",
            "bytes_in", "bytes_out", "duration_ms", "ttfb_ms", "upstream_ms", "uid", "decision", "range",
            "user_agent", "trace_id",
        ] {
            #expect(object[key] != nil, "missing \(key)")
        }
        #expect(object["status"]?.int64Value == 206)
        #expect(object["duration_ms"] == .double(1.234) || object["duration_ms"]?.int64Value == nil)
        #expect(object["user_agent"]?.stringValue == "curl/8 \"x\"")
        #expect(object["time"]?.stringValue == "2023-11-14T22:13:20.123Z")
    }

    /// Numbers are rendered digit for digit (no Foundation formatting): milliseconds with three decimals.
    @Test func jsonNumbersAreExact() {
        var entry = sampleEntry()
        entry.durationNanos = 12_345_678_901
        entry.timeToFirstByteNanos = 999
        entry.upstreamNanos = 5_000_000
        entry.bytesIn = 0
        entry.bytesOut = 9_876_543_210
        let line = String(decoding: entry.rendered(.json), as: UTF8.self)
        #expect(line.contains(#""duration_ms":12345.678,"ttfb_ms":0.000,"upstream_ms":5.000,"#))
        #expect(line.contains(#""status":206,"bytes_in":0,"bytes_out":9876543210,"#))
    }

    @Test func absentFieldsAreNull() throws {
        let entry = AccessLogEntry(
            time: .now(), requestID: "r", remoteAddress: "", method: "GET", route: "unmatched",
            target: "/x", status: 404)
        let object = try #require(
            try JSONValue.parse(String(decoding: entry.rendered(.json).dropLast(), as: UTF8.self)).objectValue)
        #expect(object["uid"] == .null && object["ttfb_ms"] == .null && object["trace_id"] == .null)
    }

    @Test func textLineIsOneLine() {
        var entry = sampleEntry()
        entry.userAgent = "evil\nagent"
        let line = String(decoding: entry.rendered(.text), as: UTF8.self)
        #expect(line.hasSuffix("\n"))
        #expect(line.dropLast().contains("\n") == false)
        #expect(line.contains(" 206 GET "))
        #expect(line.contains("rid=req-1") && line.contains("uid=alice") && line.contains("decision=allow"))
        #expect(line.contains("1.234ms"))
    }

    /// The whole text line, byte for byte: positional fields, `key=value` pairs, the always-quoted `ua`.
    @Test func textLineHasEveryField() {
        var entry = sampleEntry()
        entry.upstreamNanos = 2_500_000
        entry.object = "a b/c.txt"
        let line = String(decoding: entry.rendered(.text), as: UTF8.self)
        #expect(
            line
                == "2023-11-14T22:13:20.123Z 206 GET /v0/b/b/o/a%2Fb.txt?alt=media&token=REDACTED 1.234ms in=0 out=100"
                + #" route=/v0/b/{bucket}/o/{object} rid=req-1 remote=127.0.0.1:5000 bucket=b object="a b/c.txt""#
                + #" ttfb=0.456ms upstream=2.500ms uid=alice decision=allow range=0-99"#
                + #" trace=4bf92f3577b34da6a3ce929d0e0e4736 ua="curl/8 \"x\"""# + "\n")
    }

    /// Every string field of both formats is escaped: an object name (or header) carrying any line break a
    /// splitter knows and a forged record after it stays inside one line, and reads back exactly.
    @Test(arguments: [LogFormat.json, .text])
    func noFieldCanSplitOrForgeALine(_ format: LogFormat) throws {
        let forged = "2023-11-14T22:13:20.123Z 200 GET /forged 0.001ms in=0 out=0 rid=forged"
        let breaks: [Character] = [
            "\u{0B}", "\u{0C}", "\u{1C}", "\u{1D}", "\u{1E}", "\u{85}", "\u{2028}", "\u{2029}", "\r\n", "\n", "\r",
        ]
        let hostile = breaks.map { "x\($0)\(forged)" }.joined() + "\u{1B}[2J\u{9B}\u{7F}\u{202E}\u{2066}\u{FEFF}"
        var entry = sampleEntry()
        entry.object = hostile
        entry.bucket = hostile
        entry.principalUID = hostile
        entry.requestID = hostile
        entry.remoteAddress = hostile
        entry.method = hostile
        entry.target = hostile
        entry.route = hostile
        entry.decision = hostile
        entry.range = hostile
        entry.userAgent = hostile
        entry.traceID = hostile
        let bytes = entry.rendered(format)
        let line = String(decoding: bytes.dropLast(), as: UTF8.self)
        #expect(bytes.last == 0x0A)
        #expect(line.unicodeScalars.allSatisfy { (0x20..<0x7F).contains($0.value) }, "\(line)")
        if format == .json {
            let object = try #require(try JSONValue.parse(line).objectValue)
            for key in [
                "request_id", "remote_addr", "method", "route", "path", "bucket", "object", "uid", "decision", "range",
                "user_agent", "trace_id",
            ] {
                #expect(object[key] == .string(hostile), "\(key)")
            }
        } else {
            let start = try #require(line.firstRange(of: " object=")).upperBound
            let end = try #require(line[start...].firstRange(of: "\" ")).lowerBound
            #expect(try JSONValue.parse(String(line[start...end])) == .string(hostile))
        }
    }

    @Test func redactionKeepsOnlyHarmlessQueryValues() {
        #expect(AccessLog.redactedTarget("/v0/b/x/o/y") == "/v0/b/x/o/y")
        #expect(
            AccessLog.redactedTarget("/v0/b/x/o/y?alt=media&token=secret") == "/v0/b/x/o/y?alt=media&token=REDACTED")
        #expect(
            AccessLog.redactedTarget("/o?signature=abc&expires=1&uploadType=resumable&upload_id=zz")
                == "/o?signature=REDACTED&expires=REDACTED&uploadType=resumable&upload_id=REDACTED")
        #expect(AccessLog.redactedTarget("/o?secret&delete_token=t1") == "/o?REDACTED&delete_token=REDACTED")
        #expect(!AccessLog.redactedTarget("/o?Token=secret&x=secret").contains("secret"))
        // Only loggable keys: the target as it came, values with `=` and a key without a value included.
        #expect(AccessLog.redactedTarget("/o/y?alt=media") == "/o/y?alt=media")
        #expect(AccessLog.redactedTarget("/o?name=a=b&prefix=p&alt") == "/o?name=a=b&prefix=p&alt")
        #expect(AccessLog.redactedTarget("/o?name=a&&alt") == "/o?name=a&REDACTED&alt")
        // One unknown key anywhere — first, last, empty-keyed, or a key that only starts like a loggable one.
        #expect(AccessLog.redactedTarget("/o?alt=media&token=t") == "/o?alt=media&token=REDACTED")
        #expect(AccessLog.redactedTarget("/o?token=t&alt=media") == "/o?token=REDACTED&alt=media")
        #expect(AccessLog.redactedTarget("/o?alt=media&=t") == "/o?alt=media&=REDACTED")
        #expect(AccessLog.redactedTarget("/o?altx=t") == "/o?altx=REDACTED")
        #expect(AccessLog.redactedTarget("/o?al=t") == "/o?al=REDACTED")
    }

    @Test func secretsNeverReachTheLog() async throws {
        let captured = CapturedLines()
        let log = AccessLog(format: .json, output: captured.append)
        let registry = MetricsRegistry()
        let responder = try GatewayResponder(
            ops: OpsEndpoints(readiness: Readiness(), registry: registry), surfaces: [EchoAPI()],
            authentication: PermissiveAuthentication(), metrics: HTTPMetrics(registry: registry), accessLog: log)
        for format in [LogFormat.json, .text] {
            let textLog = AccessLog(format: format, output: captured.append)
            let r = try GatewayResponder(
                ops: responder.ops, surfaces: [EchoAPI()], authentication: PermissiveAuthentication(),
                metrics: responder.metrics, accessLog: textLog)
            for auth in ["Bearer secret", "Firebase secret", "Bearer bad-secret"] {
                let request = HTTPRequest(
                    method: .get, target: "/v0/b/bkt/o/file?alt=media&token=secret&sig=secret",
                    headers: ["Authorization": auth, "User-Agent": "ua"])
                let response = await r.respond(to: request)
                response.onComplete?(
                    ExchangeSummary(
                        status: response.status, bytesIn: 0, bytesOut: 10,
                        completed: true, durationNanos: 1000, timeToFirstByteNanos: 10))
            }
        }
        let output = captured.joined
        #expect(captured.all.count == 6)
        #expect(!output.contains("secret"))
        #expect(output.contains("token=REDACTED"))
    }
}

/// Accepts `Bearer secret`/`Firebase secret` as user `u1`, rejects other credentials.
struct PermissiveAuthentication: RequestAuthenticating {
    func authenticate(authorization: String?) async throws(ServiceError) -> Principal? {
        guard let authorization else { return nil }
        if authorization.hasSuffix(" secret") { return Principal(uid: "u1", claims: [:]) }
        var details = ServiceError.Details()
        details.challenge = #"Bearer error="invalid_token""#
        throw ServiceError(.unauthenticated, "Invalid token.", details: details)
    }
}

/// Answers every `/v0/` request with 200 and the principal's uid, filling the access record like the real API.
struct EchoAPI: APISurface {
    let traits = SurfaceTraits(
        errorShape: PlainErrorShape(), prefixes: ["/v0"], loggableQueryKeys: AccessLog.storageQueryKeys)

    var routes: [Route<RouteHandler>] {
        let all: [HTTPMethod] = [.get, .post, .put, .patch, .delete]
        return [
            Route(all, RouteTemplate(static: "/v0/b/{bucket}/o/{object...}")) { await Self.echo($0) },
            Route(all, RouteTemplate(static: "/v0/{rest...}")) { await Self.echo($0) },
        ]
    }

    static func echo(_ matched: MatchedRequest) async -> HTTPResponse {
        matched.record.bucket = "bkt"
        matched.record.objectName = "file"
        matched.record.decision = .allow
        return HTTPResponse(status: 200, body: .bytes(Array((matched.principal?.uid ?? "anonymous").utf8)))
    }
}
