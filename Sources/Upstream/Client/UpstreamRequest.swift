public import PortcullisCore

/// One HTTP request to an upstream (GCS, S3, a JWKS endpoint).
///
/// `backend` and `operation` are metric labels and `backend` also keys the circuit breaker: give every call to
/// one storage bucket the same `backend` (e.g. `"gcs"`), and a small fixed set of operation names. They are
/// never raw paths.
public struct UpstreamRequest: Sendable {
    public var method: String
    /// Absolute `http(s)://` URL, already percent-encoded (sent verbatim: a signature over it stays valid).
    public var url: String
    /// Request headers in order. `Host`, `Content-Length` and `Transfer-Encoding` are set by the client.
    /// Trace headers come from `trace`, not from here.
    public var headers: [(String, String)]
    public var body: UpstreamRequestBody
    public var timeouts: UpstreamTimeouts
    /// Safe to send twice (GET, HEAD, PUT of a whole object, DELETE): only such requests are retried, and
    /// only when they failed before any response byte reached the caller.
    public var idempotent: Bool
    /// Metric label and circuit-breaker key. Defaults to the URL's host.
    public var backend: String
    /// Metric label: a short fixed operation name (`"get"`, `"list"`, `"jwks"`).
    public var operation: String
    /// The trace this call belongs to: each attempt sends `traceparent` (and the caller's `tracestate`) naming
    /// the attempt's client span as the parent when the trace is recorded, else the trace's current span, and
    /// records that span (method, server, status, resend count). Nil: no trace headers, no span.
    public var trace: Trace?
    /// The response body's size when the caller knows it beforehand (a download of an object whose metadata it
    /// has read): one of at least `UpstreamConfiguration.bulkThresholdBytes` may be read in larger pieces. A hint
    /// only: the body is whatever the upstream sends.
    public var expectedBodyBytes: Int64?

    public init(
        method: String = "GET", url: String, headers: [(String, String)] = [], body: UpstreamRequestBody = .none,
        timeouts: UpstreamTimeouts = .init(), idempotent: Bool? = nil,
        backend: String? = nil, operation: String = "request", trace: Trace? = nil, expectedBodyBytes: Int64? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeouts = timeouts
        self.idempotent = idempotent ?? ["GET", "HEAD", "PUT", "DELETE", "OPTIONS"].contains(method)
        self.backend = backend ?? UpstreamRequest.host(of: url)
        self.operation = operation
        self.trace = trace
        self.expectedBodyBytes = expectedBodyBytes
    }

    /// `host[:port]` of an absolute URL (empty when the URL has none).
    static func host(of url: String) -> String {
        let bytes = Array(url.utf8)
        var start = 0
        while start + 2 < bytes.count, !(bytes[start] == 58 && bytes[start + 1] == 47 && bytes[start + 2] == 47) {
            start += 1
        }
        guard start + 2 < bytes.count else { return "" }
        let hostStart = start + 3
        var end = hostStart
        while end < bytes.count, bytes[end] != 47, bytes[end] != 63, bytes[end] != 35 { end += 1 }
        return String(decoding: bytes[hostStart..<end], as: UTF8.self)
    }
}

/// A request body: none, bytes in memory (replayable, so retries are possible), or a stream pulled as the
/// upstream accepts bytes (never replayed: a request with a stream body is not retried).
public enum UpstreamRequestBody: Sendable {
    case none
    case bytes([UInt8])
    /// `length` nil → sent with chunked transfer encoding (HTTP/1.1).
    case stream(any ByteStream, length: Int64?)

    var isReplayable: Bool {
        if case .stream = self { return false }
        return true
    }
}

/// Timeouts for one attempt, in seconds; nil disables one.
public struct UpstreamTimeouts: Sendable, Equatable {
    /// TCP (and TLS) connection establishment.
    public var connect: Double?
    /// From the moment the request (with its body) is sent until the response head arrives.
    public var firstByte: Double?
    /// No byte moved in either direction for this long while the transfer was not paused by us.
    public var idle: Double?

    public init(connect: Double? = 5, firstByte: Double? = 30, idle: Double? = 30) {
        self.connect = connect
        self.firstByte = firstByte
        self.idle = idle
    }
}
