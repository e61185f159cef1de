/// Why a request was rejected by the parser: the status the server answers with (always in 400…505) and a
/// short message for the JSON error body. After any parse error the connection is closed: the framing of
/// whatever follows can no longer be trusted.
public struct HTTPParseError: Error, Sendable, Hashable, CustomStringConvertible {
    public let status: Int
    public let message: String

    public init(status: Int, message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { "\(status) \(message)" }

    static func badRequest(_ message: String) -> HTTPParseError { HTTPParseError(status: 400, message: message) }
    static let uriTooLong = HTTPParseError(status: 414, message: "request line too long")
    static let headersTooLarge = HTTPParseError(status: 431, message: "header block too large")
    static let tooManyHeaders = HTTPParseError(status: 431, message: "too many header fields")
    static let trailersTooLarge = HTTPParseError(status: 431, message: "trailer section too large")
    static let bodyTooLarge = HTTPParseError(status: 413, message: "request body too large")
    static let versionNotSupported = HTTPParseError(status: 505, message: "HTTP version not supported")
    static let codingNotImplemented = HTTPParseError(status: 501, message: "transfer coding not implemented")
}
