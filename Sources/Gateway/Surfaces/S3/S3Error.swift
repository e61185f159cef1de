public import HTTPServer
import PortcullisCore
public import Service

/// An S3 error as the wire says it: its code (`NoSuchKey`, `SignatureDoesNotMatch`, …), status and message.
struct S3Error: Error, Sendable {
    let status: Int
    let code: String
    let message: String

    init(_ status: Int, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    static func notImplemented(_ what: String) -> S3Error {
        S3Error(501, "NotImplemented", "\(what) is not implemented by this gateway.")
    }
    static func noSuchBucket(_ name: String) -> S3Error {
        S3Error(404, "NoSuchBucket", "The specified bucket does not exist.")
    }
    static let malformedXML = S3Error(400, "MalformedXML", "The XML you provided was not well-formed.")

    /// A refused signature, worded as S3 words it.
    init(_ failure: S3AuthFailure) {
        switch failure {
        case .malformed(let message): self.init(400, "AuthorizationHeaderMalformed", message)
        case .unknownKey:
            self.init(403, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.")
        case .mismatch:
            self.init(
                403, "SignatureDoesNotMatch",
                "The request signature we calculated does not match the signature you provided.")
        case .skewed:
            self.init(
                403, "RequestTimeTooSkewed",
                "The difference between the request time and the current time is too large.")
        case .expired: self.init(403, "AccessDenied", "Request has expired")
        case .missingSessionToken:
            self.init(403, "InvalidToken", "The session access key needs X-Amz-Security-Token.")
        case .invalidSessionToken:
            self.init(400, "InvalidToken", "The provided token is malformed or otherwise invalid.")
        }
    }
}

/// S3's error body, `<Error><Code>…</Code><Message>…</Message><RequestId>…</RequestId></Error>`, and the one
/// place service failures get S3's codes.
public struct S3ErrorShape: ErrorShape {
    public init() {}

    public func response(for error: ServiceError, requestID: String?) -> HTTPResponse {
        Self.response(Self.s3Error(error), requestID: requestID)
    }

    /// The S3 code of a service failure: what it is about first (a missing object, a denial), then its kind.
    static func s3Error(_ error: ServiceError) -> S3Error {
        switch error.details.multipart {
        case .noSuchUpload?: return S3Error(404, "NoSuchUpload", error.message)
        case .invalidPart?: return S3Error(400, "InvalidPart", error.message)
        case .invalidPartOrder?: return S3Error(400, "InvalidPartOrder", error.message)
        case .entityTooSmall?: return S3Error(400, "EntityTooSmall", error.message)
        case nil: break
        }
        switch error.details.subject {
        case .noSuchObject?: return S3Error(404, "NoSuchKey", "The specified key does not exist.")
        case .denied?: return S3Error(403, "AccessDenied", "Access Denied")
        case nil: break
        }
        let code: String
        switch error.kind {
        case .badRequest: code = "InvalidArgument"
        case .unauthenticated, .forbidden: code = "AccessDenied"
        case .notFound: code = "NoSuchKey"
        case .methodNotAllowed: code = "MethodNotAllowed"
        case .requestTimeout: code = "RequestTimeout"
        case .preconditionFailed: code = "PreconditionFailed"
        case .conflict: code = "OperationAborted"
        case .payloadTooLarge: code = "EntityTooLarge"
        case .rangeNotSatisfiable: code = "InvalidRange"
        case .notImplemented: code = "NotImplemented"
        case .unavailable: code = "ServiceUnavailable"
        case .gatewayTimeout, .badGateway, .internalError, .clientClosed: code = "InternalError"
        }
        return S3Error(error.status, code, error.message)
    }

    static func response(_ error: S3Error, requestID: String?) -> HTTPResponse {
        var body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>\(error.code)</Code><Message>"
        body += MarkupEscaping.escaped(error.message) + "</Message>"
        if let requestID { body += "<RequestId>" + MarkupEscaping.escaped(requestID) + "</RequestId>" }
        body += "</Error>"
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/xml")
        if let requestID {
            headers.add("X-Request-Id", requestID)
            headers.add("x-amz-request-id", requestID)
        }
        return HTTPResponse(status: error.status, headers: headers, body: .bytes(Array(body.utf8)))
    }
}
