public import HTTPServer
import PortcullisCore

/// Every client-visible failure of the gateway, and the one place where failures become HTTP responses in the
/// protocol's error shape `{"error":{"code":<status>,"message":"..."}}` (v0 §6.1).
///
/// Module errors (StorageError, auth errors, body stream errors) are converted into a `GatewayError` by the
/// `init(_:)` conversions in this folder, so handlers never pick status codes themselves.
public struct GatewayError: Error, Sendable, Equatable, CustomStringConvertible {
    public let status: Int
    public let message: String
    /// Extra response headers (`Allow`, `Retry-After`, `WWW-Authenticate`, `Content-Range`, upload status).
    public var headers: [(String, String)]

    public init(status: Int, message: String, headers: [(String, String)] = []) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    public static func == (a: GatewayError, b: GatewayError) -> Bool {
        a.status == b.status && a.message == b.message
    }

    public var description: String { "\(status) \(message)" }

    public static func badRequest(_ message: String) -> GatewayError { .init(status: 400, message: message) }
    public static func forbidden(_ message: String = "Permission denied.") -> GatewayError {
        .init(status: 403, message: message)
    }
    public static func notFound(_ message: String = "Not Found.") -> GatewayError { .init(status: 404, message: message) }
    public static func methodNotAllowed(allow: [String]) -> GatewayError {
        .init(status: 405, message: "Method not allowed.", headers: [("Allow", allow.joined(separator: ", "))])
    }
    public static func preconditionFailed(_ message: String = "Precondition failed.") -> GatewayError {
        .init(status: 412, message: message)
    }
    public static func payloadTooLarge(limit: Int64) -> GatewayError {
        .init(status: 413, message: "Request body exceeds the limit of \(limit) bytes.")
    }
    public static func unavailable(_ message: String, retryAfter: Int) -> GatewayError {
        .init(status: 503, message: message, headers: [("Retry-After", String(retryAfter))])
    }
    public static func internalError(_ message: String = "Internal error.") -> GatewayError {
        .init(status: 500, message: message)
    }

    /// The JSON error body.
    public var body: [UInt8] {
        var out = Array(#"{"error":{"code":"#.utf8)
        out.append(contentsOf: String(status).utf8)
        out.append(contentsOf: #","message":"#.utf8)
        JSONValue.encodeString(message, into: &out)
        out.append(contentsOf: "}}".utf8)
        return out
    }

    /// The complete response; `requestID` is echoed so a client report can be matched to the log line.
    public func response(requestID: String?) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/json; charset=utf-8")
        if let requestID { headers.add("X-Request-Id", requestID) }
        for (name, value) in self.headers { headers.add(name, value) }
        return HTTPResponse(status: status, headers: headers, body: .bytes(body))
    }
}
