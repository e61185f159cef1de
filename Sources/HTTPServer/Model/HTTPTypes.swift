public import PortcullisCore

/// An HTTP method token, compared case-sensitively as RFC 9110 requires.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let get = HTTPMethod("GET")
    public static let head = HTTPMethod("HEAD")
    public static let post = HTTPMethod("POST")
    public static let put = HTTPMethod("PUT")
    public static let patch = HTTPMethod("PATCH")
    public static let delete = HTTPMethod("DELETE")
    public static let options = HTTPMethod("OPTIONS")
}

/// A parsed request as handed to a responder. The body is a stream the responder pulls; the server does not
/// read the socket for body bytes until it does (and sends `100 Continue` then, when the client asked for it).
public struct HTTPRequest: Sendable {
    public var method: HTTPMethod
    /// The request-target exactly as sent (origin form: path plus optional `?query`).
    public var target: String
    public var versionMajor: Int
    public var versionMinor: Int
    public var headers: HTTPHeaders
    /// The body; an empty stream when the request has none. Always consumed or cancelled by the server after
    /// the response is written, so a responder may ignore it.
    public var body: any ByteStream
    /// Peer address as `ip:port` (or `[ip]:port`).
    public var remoteAddress: String
    /// Monotonic time (`MonotonicClock`) when the request head was complete.
    public var receivedAt: UInt64

    /// A HEAD: answered as its GET, without the body.
    public var isHead: Bool { method == .head }
    /// The event loop the request arrived on; nil for a request made outside a server (tests).
    public var loop: ExchangeLoop?

    public init(
        method: HTTPMethod, target: String, versionMajor: Int = 1, versionMinor: Int = 1,
        headers: HTTPHeaders = [:], body: any ByteStream = BufferByteStream.empty(),
        remoteAddress: String = "", receivedAt: UInt64 = MonotonicClock.nanoseconds(), loop: ExchangeLoop? = nil
    ) {
        self.loop = loop
        self.method = method
        self.target = target
        self.versionMajor = versionMajor
        self.versionMinor = versionMinor
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
        self.receivedAt = receivedAt
    }

    /// The raw (still percent-encoded) path part of the target.
    public var path: Substring {
        if let q = queryMark { return target[..<q] }
        return target[...]
    }

    /// The raw query string after `?`, if any.
    public var query: Substring? {
        guard let q = queryMark else { return nil }
        return target[target.utf8.index(after: q)...]
    }

    /// The first `?` of the target. Asked several times per request (routing, labels, logs), so it is searched
    /// in the contiguous UTF-8 bytes: `Character` iteration, and even the generic `UTF8View.firstIndex`, cost
    /// whole per cents of a request's CPU.
    private var queryMark: String.Index? {
        let offset = target.utf8.withContiguousStorageIfAvailable { bytes in
            bytes.firstIndex(of: UInt8(ascii: "?")) ?? -1
        }
        guard let offset else { return target.utf8.firstIndex(of: UInt8(ascii: "?")) }
        return offset < 0 ? nil : target.utf8.index(target.utf8.startIndex, offsetBy: offset)
    }
}

/// What a response carries after its head.
public enum ResponseBody: Sendable {
    case empty
    case bytes([UInt8])
    /// Written as the stream produces it, with `Content-Length` when `length` is known, else chunked
    /// (HTTP/1.1) or close-delimited (HTTP/1.0). The server pulls only as fast as the socket drains.
    case stream(any ByteStream, length: Int64?)
    /// Sent with `sendfile`.
    case file(FileRegion)
}

/// What happened to one exchange, reported once when the last byte was written or the connection dropped.
public struct ExchangeSummary: Sendable {
    public var status: Int
    public var bytesIn: Int64
    public var bytesOut: Int64
    /// False when the client went away (or the body failed) before the response was fully written (log as 499).
    public var completed: Bool
    public var durationNanos: UInt64
    /// Time from the complete request head to the first response byte written.
    public var timeToFirstByteNanos: UInt64?
    /// The loop the summary is reported on (nil outside a server).
    public var loop: ExchangeLoop?

    public init(
        status: Int, bytesIn: Int64, bytesOut: Int64, completed: Bool, durationNanos: UInt64,
        timeToFirstByteNanos: UInt64?, loop: ExchangeLoop? = nil
    ) {
        self.loop = loop
        self.status = status
        self.bytesIn = bytesIn
        self.bytesOut = bytesOut
        self.completed = completed
        self.durationNanos = durationNanos
        self.timeToFirstByteNanos = timeToFirstByteNanos
    }
}

public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: ResponseBody
    /// The status line's reason phrase when not the standard one (nil): a protocol may give a code its own
    /// meaning, as Google's resumable uploads do with `308 Resume Incomplete`.
    public var reason: String?
    /// Called exactly once, on the connection's event loop, when the exchange ends either way (access log, metrics).
    public var onComplete: (@Sendable (ExchangeSummary) -> Void)?

    public init(
        status: Int, headers: HTTPHeaders = [:], body: ResponseBody = .empty, reason: String? = nil,
        onComplete: (@Sendable (ExchangeSummary) -> Void)? = nil
    ) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
        self.onComplete = onComplete
    }

    /// The standard reason phrase of `status` (what the status line says when `reason` is nil).
    public static func standardReason(_ status: Int) -> String { ResponseHead.reasonPhrase(status) }
}

/// The one-method seam between the server and the application.
public protocol HTTPResponder: Sendable {
    func respond(to request: HTTPRequest) async -> HTTPResponse

    /// Optional synchronous fast path, asked first on the connection's event loop before `respond(to:)`.
    /// Return a response only for work that is trivially cheap and never blocks or awaits (canned ops
    /// endpoints such as `/healthz`); return nil (the default) to go through `respond(to:)`. It skips the
    /// task `respond(to:)` needs (a small saving; `respond(to:)` already starts without a thread hop).
    func immediateResponse(to request: HTTPRequest) -> HTTPResponse?
}

extension HTTPResponder {
    public func immediateResponse(to request: HTTPRequest) -> HTTPResponse? { nil }
}
