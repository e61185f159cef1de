public import HTTPServer
public import PortcullisCore

/// Turns an `Authorization` header into a principal for `GatewayResponder`.
///
/// Contract: a nil header is anonymous (returns nil, not an error); a header that is present but invalid throws
/// a `GatewayError` (401 with `WWW-Authenticate`). Implemented by `GatewayAuthentication` over the Auth module's
/// `Authenticator`, and by fakes in tests.
public protocol RequestAuthenticating: Sendable {
    func authenticate(authorization: String?) async throws(GatewayError) -> Principal?
}

/// The application routes behind authentication (the v0 API). Implemented by `V0API`.
public protocol APIHandling: Sendable {
    /// Whether the request is for this API at all (else the responder answers 404).
    func matches(_ request: HTTPRequest) -> Bool
    /// Handles a matched request; fills `context` (route template, bucket, object, decision, range).
    func handle(_ request: HTTPRequest, principal: Principal?, context: RequestContext) async -> HTTPResponse
}

/// Authenticates nobody: every request is anonymous, any credential is refused. Used when the server is
/// started without any JWT key source or admin key.
public struct AnonymousOnlyAuthentication: RequestAuthenticating {
    public init() {}
    public func authenticate(authorization: String?) async throws(GatewayError) -> Principal? {
        guard authorization != nil else { return nil }
        throw GatewayError(status: 401, message: "No token verification is configured on this server.",
                           headers: [("WWW-Authenticate", #"Bearer error="invalid_token", error_description="no token verification configured""#)])
    }
}
