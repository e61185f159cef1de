public import HTTPServer
import PortcullisCore
public import Service

/// GCS's XML API error: `<?xml version='1.0' encoding='UTF-8'?><Error><Code>…</Code><Message>…</Message>
/// </Error>`, the codes chosen from the status as GCS chooses them (`NoSuchKey`, `AccessDenied`, …); signature
/// failures carry their own code (`SignatureDoesNotMatch`, `ExpiredToken`) through `response(code:…)`, and a
/// multipart upload's failures theirs (`NoSuchUpload`, `InvalidPart`, `InvalidPartOrder`, `EntityTooSmall`).
public struct XMLErrorShape: ErrorShape {
    public init() {}

    public func response(for error: ServiceError, requestID: String?) -> HTTPResponse {
        var code: String
        switch error.status {
        case 400: code = "InvalidArgument"
        case 401, 403: code = "AccessDenied"
        case 404: code = "NoSuchKey"
        case 405: code = "MethodNotAllowed"
        case 412: code = "PreconditionFailed"
        case 413: code = "EntityTooLarge"
        case 416: code = "InvalidRange"
        case 503: code = "ServiceUnavailable"
        default: code = error.status >= 500 ? "InternalError" : "InvalidRequest"
        }
        switch error.details.multipart {
        case .noSuchUpload: code = "NoSuchUpload"
        case .invalidPart: code = "InvalidPart"
        case .invalidPartOrder: code = "InvalidPartOrder"
        case .entityTooSmall: code = "EntityTooSmall"
        case nil: break
        }
        var response = Self.response(status: error.status, code: code, message: error.message, requestID: requestID)
        if let methods = error.details.allowedMethods { response.headers.add("Allow", methods.joined(separator: ", ")) }
        if let seconds = error.details.retryAfterSeconds { response.headers.add("Retry-After", String(seconds)) }
        return response
    }

    static func response(status: Int, code: String, message: String, requestID: String?) -> HTTPResponse {
        let body =
            "<?xml version='1.0' encoding='UTF-8'?><Error><Code>\(code)</Code><Message>"
            + MarkupEscaping.escaped(message) + "</Message></Error>"
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/xml; charset=UTF-8")
        headers.add("X-Content-Type-Options", "nosniff")
        if let requestID { headers.add("X-Request-Id", requestID) }
        return HTTPResponse(status: status, headers: headers, body: .bytes(Array(body.utf8)))
    }
}
