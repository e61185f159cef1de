import PortcullisCore
public import Rules

/// Every client-visible failure of the storage service, in wire-neutral form.
///
/// A surface renders it in its own shape (v0: `{"error":{"code","message"}}`; the JSON API adds `errors[]`
/// with a `reason`) — each in exactly one place. The HTTP status belongs to the kind (both surfaces are HTTP and
/// agree on statuses); module errors become `ServiceError`s through the conversions in this folder, so no
/// operation picks a status itself.
public struct ServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// 400: the request is malformed or names something invalid.
        case badRequest
        /// 401: credentials were presented and refused (never for anonymous callers: the rules decide those).
        case unauthenticated
        /// 403: the rules (or a capability) do not allow it.
        case forbidden
        /// 404: no such object, bucket, route or upload.
        case notFound
        /// 405: the route does not serve the method.
        case methodNotAllowed
        /// 408: the request body stalled.
        case requestTimeout
        /// 412: a precondition does not hold.
        case preconditionFailed
        /// The request conflicts with what exists (a bucket that exists already, or is not empty).
        case conflict
        /// 413: the body is larger than allowed.
        case payloadTooLarge
        /// 416: the range lies outside the object.
        case rangeNotSatisfiable
        /// 499: the client went away (only the access log sees it).
        case clientClosed
        /// 500.
        case internalError
        /// 501: the bucket's storage cannot do this.
        case notImplemented
        /// 502: the storage upstream answered nonsense or refused our credentials.
        case badGateway
        /// 503: storage unreachable or overloaded; retry later.
        case unavailable
        /// 504: storage did not answer in time.
        case gatewayTimeout

        /// The HTTP status of this kind.
        public var status: Int {
            switch self {
            case .badRequest: 400
            case .unauthenticated: 401
            case .forbidden: 403
            case .notFound: 404
            case .methodNotAllowed: 405
            case .requestTimeout: 408
            case .preconditionFailed: 412
            case .conflict: 409
            case .payloadTooLarge: 413
            case .rangeNotSatisfiable: 416
            case .clientClosed: 499
            case .internalError: 500
            case .notImplemented: 501
            case .badGateway: 502
            case .unavailable: 503
            case .gatewayTimeout: 504
            }
        }
    }

    /// Facts a surface may render as headers or fields besides the message.
    public struct Details: Sendable, Equatable {
        /// Seconds the client should wait before retrying (`Retry-After`).
        public var retryAfterSeconds: Int?
        /// The object's size, for an unsatisfiable range (`Content-Range: bytes */N`).
        public var objectSize: Int64?
        /// The authentication challenge (`WWW-Authenticate`), for 401.
        public var challenge: String?
        /// The methods the route serves (`Allow`), for 405.
        public var allowedMethods: [String]?
        /// What the failure is about, for the surfaces that word it themselves.
        public var subject: Subject?
        /// Which multipart-upload rule failed, for surfaces with codes of their own for each.
        public var multipart: MultipartError?

        public init() {}
    }

    /// What a failure is about, as facts: each surface's error shape chooses its own words for it (v0 speaks
    /// Firebase's, the JSON API Cloud Storage's). `message` is the wording for shapes that choose none.
    public enum Subject: Sendable, Equatable {
        /// The rules (or the grant presented) do not allow `method` here.
        case denied(RulesMethod)
        /// No object `name` in `bucket` (or not the generation asked for).
        case noSuchObject(bucket: String, name: String)
    }

    public let kind: Kind
    /// The default wording; a surface's error shape may word `details.subject` its own way instead.
    public let message: String
    public var details: Details

    public init(_ kind: Kind, _ message: String, details: Details = Details()) {
        self.kind = kind
        self.message = message
        self.details = details
    }

    public var status: Int { kind.status }

    public var description: String { "\(kind.status) \(message)" }

    public static func == (a: ServiceError, b: ServiceError) -> Bool {
        a.kind == b.kind && a.message == b.message
    }

    public static func badRequest(_ message: String) -> ServiceError { .init(.badRequest, message) }
    public static func forbidden(_ message: String = "Permission denied.") -> ServiceError {
        .init(.forbidden, message)
    }
    public static func notFound(_ message: String = "Not Found.") -> ServiceError { .init(.notFound, message) }
    /// 403: the rules do not allow `method`.
    public static func denied(_ method: RulesMethod) -> ServiceError {
        var details = Details()
        details.subject = .denied(method)
        return .init(.forbidden, "Permission denied.", details: details)
    }
    /// 404: no such object (or generation).
    public static func noSuchObject(bucket: String, name: String) -> ServiceError {
        var details = Details()
        details.subject = .noSuchObject(bucket: bucket, name: name)
        return .init(.notFound, "Not Found.", details: details)
    }
    public static func preconditionFailed(_ message: String = "Precondition failed.") -> ServiceError {
        .init(.preconditionFailed, message)
    }
    public static func payloadTooLarge(limit: Int64) -> ServiceError {
        .init(.payloadTooLarge, "Request body exceeds the limit of \(limit) bytes.")
    }
    public static func unavailable(_ message: String, retryAfter: Int) -> ServiceError {
        var details = Details()
        details.retryAfterSeconds = retryAfter
        return .init(.unavailable, message, details: details)
    }
    public static func methodNotAllowed(allow: [String]) -> ServiceError {
        var details = Details()
        details.allowedMethods = allow
        return .init(.methodNotAllowed, "Method not allowed.", details: details)
    }
    public static func internalError(_ message: String = "Internal error.") -> ServiceError {
        .init(.internalError, message)
    }
}
