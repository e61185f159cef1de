public import HTTPServer
public import PortcullisCore

/// `GET /healthz`, `GET /readyz`, `GET /metrics` (docs/configuration.md).
///
/// `/healthz` is the benchmark route: its response is rendered once and returned as is (plus the caller's
/// `X-Request-Id`, when one was sent). Each ops route accepts GET and HEAD; any other method is 405 with `Allow`.
public struct OpsEndpoints: Sendable {
    public static let healthPath = "/healthz"
    public static let readyPath = "/readyz"
    public static let metricsPath = "/metrics"

    public let readiness: Readiness
    public let registry: MetricsRegistry
    private let healthy: HTTPResponse

    public init(readiness: Readiness, registry: MetricsRegistry) {
        self.readiness = readiness
        self.registry = registry
        healthy = Self.json(status: 200, #"{"status":"ok"}"#)
    }

    /// The ops route a raw path names, if any (the path must match exactly; no query matters).
    public static func route(for path: Substring) -> String? {
        switch path {
        case "/healthz": healthPath
        case "/readyz": readyPath
        case "/metrics": metricsPath
        default: nil
        }
    }

    public static let allowedMethods = ["GET", "HEAD"]

    public func isAllowed(_ method: HTTPMethod) -> Bool { method == .get || method == .head }

    /// The pre-rendered `/healthz` answer.
    public var healthResponse: HTTPResponse { healthy }

    public func readyResponse() async -> HTTPResponse {
        let (ready, reason) = await readiness.check()
        if ready { return Self.json(status: 200, #"{"status":"ready"}"#) }
        var body = Array(#"{"status":"not ready","reason":"#.utf8)
        JSONValue.encodeString(reason ?? "unknown", into: &body)
        body.append(UInt8(ascii: "}"))
        var response = HTTPResponse(status: 503, body: .bytes(body))
        response.headers.add("Content-Type", "application/json")
        response.headers.add("Cache-Control", "no-store")
        return response
    }

    public func metricsResponse() -> HTTPResponse {
        var response = HTTPResponse(status: 200, body: .bytes(Array(registry.render().utf8)))
        response.headers.add("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        response.headers.add("Cache-Control", "no-store")
        return response
    }

    private static func json(status: Int, _ text: String) -> HTTPResponse {
        var response = HTTPResponse(status: status, body: .bytes(Array(text.utf8)))
        response.headers.add("Content-Type", "application/json")
        response.headers.add("Cache-Control", "no-store")
        return response
    }
}
