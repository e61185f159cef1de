public import HTTPServer
import PortcullisCore
public import Service

/// How a surface writes a `ServiceError` as an HTTP response: the one place per surface where failures get
/// their wire shape (docs/operations.md). The pipeline asks the surface a request belongs to, so even failures that
/// happen before the surface runs (authentication, CORS preflight) come out in its shape.
public protocol ErrorShape: Sendable {
    func response(for error: ServiceError, requestID: String?) -> HTTPResponse
    /// A failed request against a resumable upload: the error, plus where the upload stands if the surface's
    /// protocol says so on errors. By default only the error.
    func response(for failure: ResumableFailure, requestID: String?) -> HTTPResponse
}

extension ErrorShape {
    public func response(for failure: ResumableFailure, requestID: String?) -> HTTPResponse {
        response(for: failure.error, requestID: requestID)
    }
}

/// `{"error":{"code":<status>,"message":"…"}}` — the Firebase v0 shape, and the gateway's own for requests
/// that belong to no surface (unknown routes, ops endpoints).
public struct PlainErrorShape: ErrorShape {
    public init() {}

    public func response(for error: ServiceError, requestID: String?) -> HTTPResponse {
        response(for: error, wording: nil, requestID: requestID)
    }

    /// The shape with the message a surface chose (nil: `error.message`).
    func response(for error: ServiceError, wording: String?, requestID: String?) -> HTTPResponse {
        var out = error.jsonErrorOpening(wording: wording)
        out.append(contentsOf: "}}".utf8)
        return error.httpResponse(body: out, requestID: requestID)
    }
}

extension ServiceError {
    /// `{"error":{"code":<status>,"message":"…"` — what every JSON error shape starts with; the shape adds its
    /// own members and closes both objects.
    /// `wording` is the message the shape chose (default: `message`).
    public func jsonErrorOpening(wording: String? = nil) -> [UInt8] {
        var out = Array(#"{"error":{"code":"#.utf8)
        DecimalText.append(Int64(status), to: &out)
        out.append(contentsOf: #","message":"#.utf8)
        JSONValue.encodeString(wording ?? message, into: &out)
        return out
    }

    /// The response carrying `body` (JSON), the request id, and the headers HTTP gives this error's details:
    /// `Retry-After`, `Content-Range: bytes */N`, `WWW-Authenticate`, `Allow`. `nosniff`: a message echoes
    /// caller-chosen text (object names), and no browser may read it as anything but JSON.
    public func httpResponse(body: [UInt8], requestID: String?) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/json; charset=utf-8")
        headers.add("X-Content-Type-Options", "nosniff")
        if let requestID { headers.add("X-Request-Id", requestID) }
        if let seconds = details.retryAfterSeconds { headers.add("Retry-After", String(seconds)) }
        if let size = details.objectSize, kind == .rangeNotSatisfiable {
            headers.add("Content-Range", "bytes */\(size)")
        }
        if let challenge = details.challenge { headers.add("WWW-Authenticate", challenge) }
        if let methods = details.allowedMethods { headers.add("Allow", methods.joined(separator: ", ")) }
        return HTTPResponse(status: status, headers: headers, body: .bytes(body))
    }
}
