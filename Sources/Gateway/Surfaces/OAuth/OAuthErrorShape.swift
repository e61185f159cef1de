public import HTTPServer
import PortcullisCore
public import Service

/// OAuth 2.0's error body (RFC 6749 §5.2), as Google's token endpoint writes it:
/// `{"error":"invalid_request","error_description":"…"}`. Client errors are `invalid_request`, a wrong method
/// or path keeps its status; the libraries read `error` and `error_description`.
public struct OAuthErrorShape: ErrorShape {
    public init() {}

    public func response(for error: ServiceError, requestID: String?) -> HTTPResponse {
        let code: String
        switch error.status {
        case 401: code = "invalid_client"
        case 400..<500: code = "invalid_request"
        default: code = "server_error"
        }
        return Self.response(status: error.status, error: code, description: error.message, requestID: requestID) {
            error.httpResponse(body: $0, requestID: requestID)
        }
    }

    /// The body for `error`/`description`, handed to `finish` to become a response with the right headers.
    static func response(
        status: Int, error: String, description: String, requestID: String?,
        finish: ([UInt8]) -> HTTPResponse
    ) -> HTTPResponse {
        var out = Array(#"{"error":"#.utf8)
        JSONValue.encodeString(error, into: &out)
        out.append(contentsOf: #","error_description":"#.utf8)
        JSONValue.encodeString(description, into: &out)
        out.append(UInt8(ascii: "}"))
        var response = finish(out)
        response.headers.add("Cache-Control", "no-store")
        return response
    }
}
