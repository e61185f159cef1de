public import Auth
public import HTTPServer
public import PortcullisCore

/// Turns an `Authorization` header into a principal for `GatewayResponder`.
///
/// Contract: a nil header is anonymous (returns nil, not an error); a header that is present but invalid throws
/// a `GatewayError` (401 with `WWW-Authenticate`). Implemented by `Authenticator` (JWTs and the admin key) and
/// by fakes in tests.
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

/// The Auth module's authenticator as the responder's seam: its `AuthError`s become 401 `GatewayError`s.
public struct GatewayAuthentication: RequestAuthenticating {
    public let authenticator: Authenticator

    public init(_ authenticator: Authenticator) { self.authenticator = authenticator }

    public func authenticate(authorization: String?) async throws(GatewayError) -> Principal? {
        do {
            return try await authenticator.authenticate(authorization: authorization)
        } catch {
            throw GatewayError(error)
        }
    }
}
