public import Auth
public import HTTPServer
public import PortcullisCore
public import Service

/// Turns an `Authorization` header into a principal for `GatewayResponder`.
///
/// Contract: a nil header is anonymous (returns nil, not an error); a header that is present but invalid throws
/// a 401 `ServiceError` with its challenge. Implemented by `Authenticator` (JWTs and the admin key) and by
/// fakes in tests.
public protocol RequestAuthenticating: Sendable {
    func authenticate(authorization: String?) async throws(ServiceError) -> Principal?
    /// The same for the header's bytes as received (what the pipeline calls); the default makes a `String`.
    func authenticate(authorizationBytes: ArraySlice<UInt8>?) async throws(ServiceError) -> Principal?
}

extension RequestAuthenticating {
    public func authenticate(authorizationBytes: ArraySlice<UInt8>?) async throws(ServiceError) -> Principal? {
        try await authenticate(authorization: authorizationBytes.map { String(decoding: $0, as: UTF8.self) })
    }
}

/// One API surface (v0, the Cloud Storage JSON API, …): a codec between its wire format and the
/// `StorageService`. The pipeline finds the surface a request belongs to, authenticates the caller, and hands
/// it over; it never names a surface. A surface writes its route template on the context, renders its own
/// errors, and never decides access, existence or preconditions (the service does).
public protocol APISurface: Sendable {
    /// Whether the request is for this surface at all (by path prefix).
    func matches(_ request: HTTPRequest) -> Bool
    /// The route template for labelling, even for requests that fail before routing.
    func routeTemplate(for request: HTTPRequest) -> String
    /// The methods the request's route serves, for OPTIONS and CORS preflights; throws when the target names
    /// no such bucket or an invalid object.
    func allowedMethods(for request: HTTPRequest) throws(ServiceError) -> [String]
    /// Handles an authenticated request end to end (never throws: failures are rendered in `errorShape`).
    func handle(_ request: HTTPRequest, principal: Principal?, context: RequestContext) async -> HTTPResponse
    var errorShape: any ErrorShape { get }
}

/// The Auth module's authenticator as the responder's seam: its `AuthError`s become 401 `ServiceError`s.
public struct GatewayAuthentication: RequestAuthenticating {
    public let authenticator: Authenticator

    public init(_ authenticator: Authenticator) { self.authenticator = authenticator }

    public func authenticate(authorization: String?) async throws(ServiceError) -> Principal? {
        do {
            return try await authenticator.authenticate(authorization: authorization)
        } catch {
            throw ServiceError(error)
        }
    }

    public func authenticate(authorizationBytes: ArraySlice<UInt8>?) async throws(ServiceError) -> Principal? {
        do {
            return try await authenticator.authenticate(authorizationBytes: authorizationBytes)
        } catch {
            throw ServiceError(error)
        }
    }
}

extension APISurface {
    /// The response for a failure that reached the top of `handle`, in this surface's shape; server-side
    /// failures (5xx) are also logged with the request id, so the client's error and the log line meet.
    public func failureResponse(for error: any Error, context: RequestContext, logger: Logger) -> HTTPResponse {
        let failure = ServiceError(any: error)
        if failure.status >= 500 {
            logger.error(
                "request failed",
                [
                    ("requestId", .string(context.requestID)),
                    ("route", .string(context.routeTemplate)),
                    ("status", .int(Int64(failure.status))), ("error", .string("\(error)")),
                ])
        }
        return errorShape.response(for: failure, requestID: context.requestID)
    }
}
