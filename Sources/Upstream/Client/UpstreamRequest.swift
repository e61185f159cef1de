public import PortcullisCore

/// One HTTP request to an upstream (GCS, S3, a JWKS endpoint).
///
/// `backend` and `operation` are metric labels and `backend` also keys the circuit breaker: give every call to
/// one storage bucket the same `backend` (e.g. `"gcs"`), and a small fixed set of operation names. They are
/// never raw paths.
public struct UpstreamRequest: Sendable {
    public var method: String
    /// Absolute `http(s)://` URL, already percent-encoded (sent verbatim; SigV4 signs it verbatim too).
    public var url: String
    /// Request headers in order. `Host`, `Content-Length` and `Transfer-Encoding` are set by the client.
    /// Pass a W3C `traceparent` here to forward it.
    public var headers: [(String, String)]
    public var body: UpstreamRequestBody
    public var timeouts: UpstreamTimeouts
    /// Safe to send twice (GET, HEAD, PUT of a whole object, DELETE): only such requests are retried, and
    /// only when they failed before any response byte reached the caller.
    public var idempotent: Bool
    /// Sign with AWS Signature V4 (libcurl's `CURLOPT_AWS_SIGV4`). See `AWSSigV4` for what the caller must do.
    public var awsSigV4: AWSSigV4?
    /// Metric label and circuit-breaker key. Defaults to the URL's host.
    public var backend: String
    /// Metric label: a short fixed operation name (`"get"`, `"list"`, `"jwks"`).
    public var operation: String

    public init(
        method: String = "GET", url: String, headers: [(String, String)] = [], body: UpstreamRequestBody = .none,
        timeouts: UpstreamTimeouts = .init(), idempotent: Bool? = nil, awsSigV4: AWSSigV4? = nil,
        backend: String? = nil, operation: String = "request"
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeouts = timeouts
        self.idempotent = idempotent ?? ["GET", "HEAD", "PUT", "DELETE", "OPTIONS"].contains(method)
        self.awsSigV4 = awsSigV4
        self.backend = backend ?? UpstreamRequest.host(of: url)
        self.operation = operation
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

/// AWS Signature V4 parameters, applied by libcurl (`CURLOPT_AWS_SIGV4` + `CURLOPT_USERPWD`).
///
/// libcurl 7.88 signs the URL's query string verbatim, so the caller must build it canonical
/// (`canonicalQuery`). The client adds `x-amz-content-sha256: UNSIGNED-PAYLOAD` when the caller did not pass
/// that header, and `x-amz-security-token` when a session token is set. Never pass header-removal entries.
public struct AWSSigV4: Sendable, Equatable {
    public var accessKeyID: String
    public var secretAccessKey: String
    public var sessionToken: String?
    public var region: String
    public var service: String

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, region: String,
                service: String = "s3") {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.region = region
        self.service = service
    }

    /// The canonical query string SigV4 expects: keys sorted bytewise, keys and values RFC 3986-encoded with
    /// upper-case hex, and `=` always present (`uploads=`).
    public static func canonicalQuery(_ items: [(String, String)]) -> String {
        items.map { (percentEncode($0.0), percentEncode($0.1)) }
            .sorted { $0.0 == $1.0 ? Array($0.1.utf8).lexicographicallyPrecedes(Array($1.1.utf8))
                                    : Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8)) }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }

    /// RFC 3986 percent-encoding of everything but unreserved characters (`A-Z a-z 0-9 - . _ ~`), upper-case hex;
    /// with `keepSlash`, `/` is kept (S3 object keys in paths).
    public static func percentEncode(_ text: String, keepSlash: Bool = false) -> String {
        (keepSlash ? PercentEncoding.unreservedAndSlash : PercentEncoding.unreserved).encode(text)
    }
}
