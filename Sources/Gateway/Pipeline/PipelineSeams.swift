public import Auth
import HTTPServer
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
