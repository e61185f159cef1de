/// How the body of a request is delimited, decided once from its head.
public enum HTTPBodyFraming: Sendable, Hashable {
    /// No body (no `Content-Length`, no `Transfer-Encoding`, or `Content-Length: 0`).
    case none
    /// Exactly this many bytes follow the head.
    case length(Int64)
    /// `Transfer-Encoding: chunked`.
    case chunked
}

/// A validated request head: what the parser emits before any body bytes.
public struct HTTPRequestHead: Sendable {
    public var method: HTTPMethod
    /// The target in origin form (`/path?query`), or `*` for `OPTIONS *`. An absolute-form target
    /// (`http://host/path`) is reduced to its origin form.
    public var target: String
    public var versionMajor: Int
    public var versionMinor: Int
    public var headers: HTTPHeaders
    public var framing: HTTPBodyFraming
    /// Whether the connection may carry another request after this one (HTTP/1.1 unless `Connection: close`;
    /// HTTP/1.0 only with `Connection: keep-alive`).
    public var keepAlive: Bool
    /// `Expect: 100-continue` on an HTTP/1.1 request with a body.
    public var expectsContinue: Bool
    /// Bytes of the head on the wire, request line through the final CRLF.
    public var headBytes: Int
}
