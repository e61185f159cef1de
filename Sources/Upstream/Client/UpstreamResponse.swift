public import PortcullisCore

/// A response head plus its body as a stream.
///
/// The body must be consumed to its end or cancelled: until then the transfer holds a connection (paused
/// when its buffer is full). Cancelling it aborts the upstream transfer at once.
public struct UpstreamResponse: Sendable {
    public let status: Int
    /// Headers of the final response, in order, names as the server sent them.
    public let headers: [(String, String)]
    /// Response bytes as they arrive; `expectedLength` is the upstream `Content-Length` when given. Ends with
    /// `ByteStreamError.truncated` (or an `UpstreamError`) when the upstream cuts the transfer short.
    public let body: any ByteStream
    /// Time from the start of the (last) attempt to the response head, in nanoseconds (access-log upstream time).
    public let timeToHeadNanoseconds: UInt64

    public init(status: Int, headers: [(String, String)], body: any ByteStream, timeToHeadNanoseconds: UInt64 = 0) {
        self.status = status
        self.headers = headers
        self.body = body
        self.timeToHeadNanoseconds = timeToHeadNanoseconds
    }

    /// The first value of header `name`, compared case-insensitively.
    public func header(_ name: String) -> String? { headers.first(ignoringCase: name) }
}

extension Array where Element == (String, String) {
    /// The first value whose name equals `name` ignoring ASCII case.
    public func first(ignoringCase name: String) -> String? {
        first(where: { $0.0.bytesEqualIgnoringASCIICase(name) })?.1
    }
}
